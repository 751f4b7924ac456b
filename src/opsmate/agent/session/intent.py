"""What a follow-up question asks, read without a model: its intent and its language.

:func:`read_intent` turns "did the release change the pool settings?", "which pods
restarted?", "what was DB_POOL_SIZE before?", "is orders-db healthy?" (or the same in
Chinese) into an :class:`Intent`: the kind of answer wanted (``yes_no``, ``which``,
``value``, ``health``, ``open``), the language to answer in (``en`` or ``zh``), the topic
words (stemmed English; Chinese words go through a small glossary), whether it is
about a change, the kind of object asked about, the predicate (restarted, failed ...),
the identifiers it names and the names of known services and objects. Deterministic:
the same question gives the same intent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

IntentKind = Literal["yes_no", "which", "value", "health", "open"]
Lang = Literal["en", "zh"]

_HAN = re.compile(r"[\u4e00-\u9fff]")
_WORD = re.compile(r"[a-z0-9]+")
_KEY = re.compile(r"(?<![A-Za-z0-9_.])([A-Za-z][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)+)(?![A-Za-z0-9_])")

STOP = frozenset({
    "a", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can", "could",
    "did", "do", "does", "for", "from", "had", "has", "have", "how", "i", "in", "is", "it",
    "its", "me", "my", "of", "on", "or", "so", "that", "the", "their", "them", "then", "there",
    "these", "this", "to", "too", "was", "we", "were", "what", "when", "where", "which", "who",
    "why", "will", "with", "you", "your", "about", "again", "also", "just", "more", "than",
    "they", "since", "show", "tell", "see", "check", "look", "please", "anything",
    "all", "ever", "get", "got", "some", "still", "would", "should", "right", "here",
    "one",
})  # fmt: skip
CHANGE_WORDS = frozenset({
    "change", "changed", "changes", "changing", "release", "released", "releases", "rollout",
    "rolled", "rollouts", "deploy", "deployed", "deployment", "deploys", "upgrade", "upgraded",
    "revision", "rev", "helm", "version", "set", "alter", "altered", "modify", "modified",
    "update", "updated", "edit", "edited", "touch", "touched",
})  # fmt: skip
GENERIC = frozenset({
    "setting", "settings", "config", "configs", "configuration", "parameter", "parameters",
    "param", "params", "option", "options", "value", "values", "variable", "variables", "env",
    "environment", "before", "after", "now", "previously", "originally", "currently", "old",
    "new", "healthy", "health", "ok", "okay", "fine", "up", "running", "working", "down",
    "broken", "unhealthy", "alive", "degraded", "doing", "state", "status", "used",
})  # fmt: skip
_CONFIG_WORDS = frozenset(
    {"setting", "settings", "config", "configs", "configuration", "parameter", "parameters"}
    | {"env", "variable", "variables", "option", "options"}
)

# Chinese words -> English terms (longest first when matched)
GLOSSARY: dict[str, str] = {
    "连接池": "connection pool",
    "线程池": "thread pool",
    "数据库": "database db",
    "发布": "release",
    "上线": "release",
    "部署": "deploy",
    "升级": "upgrade",
    "回滚": "rollback",
    "变更": "change",
    "更改": "change",
    "修改": "change",
    "改变": "change",
    "改了": "change",
    "设置": "settings",
    "配置": "config",
    "参数": "parameter",
    "环境变量": "env variable",
    "重启": "restart",
    "崩溃": "crash",
    "内存": "memory",
    "内存溢出": "oom",
    "错误率": "error rate",
    "错误": "error",
    "报错": "error",
    "失败": "fail",
    "延迟": "latency",
    "延时": "latency",
    "超时": "timeout",
    "日志": "logs",
    "指标": "metrics",
    "事件": "events",
    "告警": "alert",
    "镜像": "image",
    "版本": "version",
    "副本": "replica",
    "探针": "probe",
    "磁盘": "disk",
    "节点": "node",
    "容器组": "pod",
    "容器": "container",
    "服务": "service",
    "连接": "connection",
    "大小": "size",
    "上限": "limit",
    "限制": "limit",
    "之前": "before",
    "以前": "before",
    "原来": "before",
    "原先": "before",
    "之后": "after",
    "现在": "now",
    "当前": "now",
    "健康": "healthy",
    "正常": "healthy",
    "未就绪": "unready",
    "驱逐": "evicted",
    "挂起": "pending",
}

ENTITIES: dict[str, tuple[str, ...]] = {
    "pod": ("pod", "pods", "容器组"),
    "container": ("container", "containers", "容器"),
    "service": ("service", "services", "app", "apps", "服务", "应用"),
    "node": ("node", "nodes", "节点"),
    "deployment": ("deployment", "deployments", "workload", "workloads"),
    "alert": ("alert", "alerts", "告警"),
}
PREDICATES: dict[str, tuple[str, ...]] = {
    "restart": ("restart", "crash", "crashloop", "crashloopbackoff", "oomkill", "oomkilled", "oom"),
    "fail": ("fail", "error", "erroring", "broken", "unhealthy"),
    "unready": ("unready", "notready"),
    "pending": ("pending", "unschedulable", "schedul"),
    "evicted": ("evict",),
    "change": tuple(sorted(CHANGE_WORDS)),
}

_WHICH_EN = re.compile(
    r"^\s*(?:which|list|name)\b|\bwhich\b|^\s*what\s+(?:pods?|services?|nodes?|containers?|"
    r"deployments?|workloads?|alerts?|apps?)\b",
    re.I,
)
_VALUE_EN = re.compile(
    r"\bwhat\s+(?:was|were|is|are|did)\b.*\b(?:before|after|now|previously|originally|"
    r"set to|value|size|limit|used to|currently|at)\b|^\s*what\s+(?:was|were)\b|\bhow\s+"
    r"(?:much|many|big|large|high|low)\b|\bvalue of\b",
    re.I,
)
_HEALTH_EN = re.compile(
    r"\b(?:is|are|was|were)\b.*\b(?:healthy|ok|okay|fine|up|running|working|down|broken|"
    r"unhealthy|alive|degraded)\b|\bhealth\b|\bhow\s+is\s+\S+\s+doing\b",
    re.I,
)
_YESNO_EN = re.compile(
    r"^\s*(?:did|does|do|is|are|was|were|has|have|had|can|could|will|should)\b", re.I
)
_WHICH_ZH = re.compile(r"哪些|哪个|哪几|哪一|有哪")
_VALUE_ZH = re.compile(r"多少|什么值|是什么|原值|值是|几个|多大")
_HEALTH_ZH = re.compile(r"健康|正常吗|是否正常|正常不|状态如何|怎么样|还好吗")
_YESNO_ZH = re.compile(r"是否|有没有|吗|是不是|了没|有无")
_BEFORE = re.compile(r"\b(?:before|previously|originally|used to|old)\b|之前|以前|原来|原先|变更前")
_NOW = re.compile(r"\b(?:after|now|currently|new|today)\b|之后|现在|当前|目前|变更后")


@dataclass
class Intent:
    """What a follow-up asks (see the module docstring)."""

    kind: IntentKind
    lang: Lang
    terms: list[str]  # stemmed English words, stop words removed
    topic: set[str]  # terms minus change words and generic words: what it is about
    topic_text: str  # the topic as the user wrote it (for the answer's wording)
    about_change: bool
    config: bool  # asks about settings / configuration in general
    entity: str | None = None
    predicate: str | None = None
    when: Literal["before", "now"] | None = None
    keys: list[str] = field(default_factory=list)  # identifiers: DB_POOL_SIZE, max_overflow
    names: list[str] = field(default_factory=list)  # known services / objects it names


def stem(word: str) -> str:
    """A crude English stem, the same on both sides of a match (changed/changes -> chang)."""
    w = word.lower()
    for suffix in ("ing", "ed", "es", "s"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix) and not w.endswith("ss"):
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def words(text: str) -> list[str]:
    """Lower-case words of ``text`` (``_`` and ``-`` split words)."""
    return _WORD.findall(text.lower().replace("_", " "))


def stems(text: str) -> list[str]:
    return [stem(w) for w in words(text)]


def language(question: str) -> Lang:
    """``zh`` when the question is written in Chinese, else ``en``."""
    return "zh" if _HAN.search(question) else "en"


def _glossed(question: str) -> tuple[str, list[str]]:
    """The question with its Chinese words replaced by English ones, and those words."""
    out = question
    found: list[str] = []
    for zh in sorted(GLOSSARY, key=len, reverse=True):
        if zh in out:
            found.append(zh)
            out = out.replace(zh, f" {GLOSSARY[zh]} ")
    return out, found


def read_intent(question: str, known: list[str] | None = None) -> Intent:
    """The intent of ``question``; ``known``: service and object names it may name."""
    lang = language(question)
    text, zh_words = _glossed(question) if lang == "zh" else (question, [])
    low = text.lower()
    raw = [w for w in words(text) if w not in STOP]
    about_change = any(w in CHANGE_WORDS for w in raw)
    config = any(w in _CONFIG_WORDS for w in raw)
    topic_words = [w for w in raw if w not in CHANGE_WORDS and w not in GENERIC]
    keys = [m.group(1) for m in _KEY.finditer(question)]
    names = _names(question, known or [])
    name_words = {w for n in names for w in words(n)}
    topic = {stem(w) for w in topic_words if w not in name_words}
    entity = next(
        (e for e, ws in ENTITIES.items() if any(w in ws for w in raw) or _has_zh(question, ws)),
        None,
    )
    predicate = _predicate(raw, low, question)
    if entity is not None:
        topic -= {stem(w) for w in ENTITIES[entity]}
    kind = _kind(question, lang, entity, predicate)
    when: Literal["before", "now"] | None = None
    if _BEFORE.search(question.lower()):
        when = "before"
    elif _NOW.search(question.lower()):
        when = "now"
    if lang == "zh":
        topic_text = "、".join(
            z
            for z in zh_words
            if not all(w in CHANGE_WORDS or w in GENERIC for w in words(GLOSSARY[z]))
        )
    else:
        topic_text = " ".join(w for w in topic_words if w not in name_words)
    return Intent(
        kind=kind,
        lang=lang,
        terms=[stem(w) for w in raw],
        topic=topic,
        topic_text=topic_text,
        about_change=about_change,
        config=config,
        entity=entity,
        predicate=predicate,
        when=when,
        keys=keys,
        names=names,
    )


def _kind(question: str, lang: Lang, entity: str | None, predicate: str | None) -> IntentKind:
    q = question.strip()
    if lang == "zh":
        if _WHICH_ZH.search(q):
            return "which"
        if _VALUE_ZH.search(q):
            return "value"
        if _HEALTH_ZH.search(q):
            return "health"
        if _YESNO_ZH.search(q):
            return "yes_no"
        return "open"
    if _WHICH_EN.search(q) and (entity or predicate):
        return "which"
    if _VALUE_EN.search(q):
        return "value"
    if _HEALTH_EN.search(q):
        return "health"
    if _YESNO_EN.search(q):
        return "yes_no"
    if re.match(r"^\s*what\s+(?:has\s+)?changed\b", q, re.I):
        return "which"
    return "open"


def _predicate(raw: list[str], low: str, question: str) -> str | None:
    if re.search(r"\bnot\s+ready\b|未就绪", low + question):
        return "unready"
    st = {stem(w) for w in raw}
    for name, ws in PREDICATES.items():
        if name == "change":
            continue
        if any(stem(w) in st or any(s.startswith(w) for s in st) for w in ws):
            return name
    if any(w in CHANGE_WORDS for w in raw):
        return "change"
    return None


def _has_zh(question: str, ws: tuple[str, ...]) -> bool:
    return any(_HAN.search(w) and w in question for w in ws)


def _names(question: str, known: list[str]) -> list[str]:
    """Known names the question mentions as whole words (longest first, in text order)."""
    low = question.lower()
    found: list[tuple[int, str]] = []
    for name in sorted({k.lower() for k in known if k}, key=len, reverse=True):
        pat = re.compile(r"(?<![a-z0-9_-])" + re.escape(name) + r"(?![a-z0-9_-])")
        m = pat.search(low)
        if m and not any(p <= m.start() < p + len(n) for p, n in found):
            found.append((m.start(), name))
    return [n for _, n in sorted(found)]
