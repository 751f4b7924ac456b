"""The subject of a question: the objects, namespace, hosts and symptom it names.

"What is the issue with job nightly-export in namespace batch-7" -> Job
``nightly-export`` in namespace ``batch-7``; "Why can't the frontend pod connect to the
backend service" -> ``frontend`` (a Pod) and ``backend``; "unable to reach
app.example.com" -> host ``app.example.com``. "the production namespace" and "namespace
prod" name a namespace, never the environment. The symptom the question reports
(errors, slow, crashing, pending, not ready, failed) is kept so the root-cause sentence
answers it. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from opsmate.agent.intake.subject import Subject
from opsmate.agent.observe.facts import FactKind

_NAME = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9-]+)*"
_NS_PATTERNS = (
    re.compile(r"(?<![\w-])((?:namespace|ns)-[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)(?![\w-])", re.I),
    re.compile(rf"\b(?:in|from|of)\s+(?:the\s+)?[\"'`]?({_NAME})[\"'`]?\s+namespace\b", re.I),
    re.compile(rf"[\"'`]?({_NAME})[\"'`]?\s+namespace\b", re.I),
    re.compile(rf"\bnamespaces?\s*[:=]?\s*[\"'`]?({_NAME})", re.I),
    re.compile(rf"(?:^|\s)-n\s+({_NAME})\b"),
    re.compile(rf"\b(?:in|from|of|under)\s+ns\s+[\"'`]?({_NAME})", re.I),
    re.compile(rf"(?:命名空间|名字空间)\s*[:：]?\s*({_NAME})", re.I),
    re.compile(rf"({_NAME})\s*(?:命名空间|名字空间)"),
)
_KINDS = {
    "pod": "Pod",
    "pods": "Pod",
    "deployment": "Deployment",
    "deploy": "Deployment",
    "job": "Job",
    "cronjob": "CronJob",
    "statefulset": "StatefulSet",
    "daemonset": "DaemonSet",
    "service": "Service",
    "svc": "Service",
    "ingress": "Ingress",
    "workload": "Deployment",
    "replicaset": "ReplicaSet",
    "pvc": "PersistentVolumeClaim",
    "node": "Node",
}
_KIND_WORDS = "|".join(sorted(_KINDS, key=len, reverse=True))
_KIND_THEN_NAME = re.compile(rf"(?<![\w-])({_KIND_WORDS})\s+[\"'`]?({_NAME})", re.I)
_NAME_THEN_KIND = re.compile(rf"(?<![\w-])({_NAME})[\"'`]?\s+({_KIND_WORDS})\b", re.I)
_HYPHENATED = re.compile(r"(?<![\w./-])([a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?![\w/-])")
_HOST = re.compile(r"\b((?:[a-z0-9-]+\.)+(?:com|net|org|io|dev|local|internal|cloud|app|co|svc))\b")
_NOT_NAMES = {
    "the", "a", "an", "this", "that", "my", "our", "their", "its", "which", "what", "some",
    "any", "each", "every", "all", "new", "old", "same", "other", "to", "is", "are", "in",
    "on", "of", "for", "with", "and", "or", "not", "no", "one", "two", "k8s", "kubernetes",
    "running", "pending", "failing", "failed", "crashing", "broken", "unhealthy", "healthy",
    "be", "was", "were", "has", "have", "had", "can", "cannot", "can't", "could", "should",
    "will", "would", "keeps", "keep", "connect", "connects", "reach", "talk", "logs", "log",
    "status", "state", "restarts", "restarting", "crashes", "fails", "errors", "error",
    "issue", "issues", "problem", "problems", "seems", "looks", "get", "gets", "from", "at",
    "by", "as", "it", "there", "here", "now", "still", "again", "also", "then", "so",
    "because", "when", "why", "how", "where", "who", "please", "names", "name", "called",
    "named", "itself", "behind", "inside", "outside", "into", "via", "using", "show", "shows",
    "fail", "die", "dies", "died", "hang", "hangs", "stop", "stops", "stopped", "start",
    "starts", "started", "run", "runs", "work", "works", "respond", "responds", "return",
    "returns", "time", "times", "do", "does", "did", "never", "always", "just",
}  # fmt: skip
_COMMON_HYPHENATED = {
    "follow-up", "read-only", "up-to-date", "built-in", "out-of-memory", "anti-affinity",
    "non-root", "pre-prod", "cross-namespace", "real-time", "on-call", "long-running",
    "x-ray", "e-mail", "re-run", "self-signed", "well-known", "time-out", "log-in",
    "sign-in", "health-check", "rate-limit", "crash-loop", "crash-looping", "node-selector",
    "third-party", "multi-container", "high-latency", "dead-letter", "round-robin",
}  # fmt: skip
_SYMPTOMS: tuple[tuple[re.Pattern[str], FactKind], ...] = (
    (re.compile(r"crash|restart(?:s|ing|ed)\b|crashloop|backoff|一直在?重启|反复重启|崩溃", re.I),
     FactKind.CRASH_LOOP),
    (re.compile(r"pending|not (?:be )?scheduled|be scheduled|unschedul|调度", re.I),
     FactKind.POD_PENDING),
    (re.compile(r"\b(?:job|cronjob)\b.*\bfail|fail\w*.*\bjob\b", re.I), FactKind.JOB_FAILED),
    (re.compile(r"\b5\d\d\b|5xx|error rate|errors?\b|\bfail(?:s|ed|ing|ures?)?\b|can'?t (?:place|"
                r"log ?in|check ?out|buy|order|book)|报错|错误|失败", re.I),
     FactKind.ERROR_RATE),
    (re.compile(r"latency|slow|sluggish|laggy|takes? (?:\w+ )?(?:to \w+ )?seconds|timeouts?"
                r"|timing out|hang(?:s|ing)?\b|延迟|慢|超时", re.I), FactKind.LATENCY),
    (re.compile(r"not ready|unhealthy|not running|unavailable|can'?t reach|unable to reach"
                r"|can'?t connect|cannot connect|不可用|连不上", re.I), FactKind.NOT_READY),
)  # fmt: skip


def detect_namespace(text: str) -> str | None:
    """The namespace a question names ("in namespace batch-7", "the production namespace")."""
    found = namespace_candidates(text)
    return found[0] if found else None


def namespace_candidates(text: str) -> list[str]:
    """Every word the question's namespace phrases could mean, most likely first ("the pod
    client under namespace shop-3" gives ``under`` and ``shop-3``: grounding against the
    namespaces that exist chooses)."""
    out: list[str] = []
    for pat in _NS_PATTERNS:
        for m in pat.finditer(text):
            name = m.group(1).lower()
            if name not in _NOT_NAMES and name not in ("namespace", "namespaces", *out):
                out.append(name)
    return out


def detect_symptom(text: str) -> FactKind | None:
    """The symptom a question reports, if it says one."""
    said = _NEGATED.sub(" ", text)  # "no errors are reported" reports no errors
    # what a guess asks ("are the viewer pods crashing after the upgrade?") is not what was
    # seen, unless the question says nothing else
    for text_ in (_GUESS.sub(" ", said.lower()), said):
        for pat, kind in _SYMPTOMS:
            if pat.search(text_):
                return kind
    return None


_NEGATED = re.compile(
    r"\b(?:no|without|zero|not any|never any)\s+(?:\w+\s+)?(?:errors?|5xx|failures?|crash\w*"
    r"|restarts?)\b|\b(?:doesn'?t|does not|didn'?t|did not|isn'?t|is not)\s+(?:\w+\s+)?"
    r"(?:crash\w*|fail\w*|error\w*|restart\w*)",
    re.I,
)


# the reason phrases servers and proxies answer with (RFC 9110, nginx's and Envoy's words)
_REASON_PHRASE = re.compile(
    r"\b(?:[45]\d\d\s+)?(?:service (?:temporarily )?unavailable|bad gateway|gateway time-?out"
    r"|internal server error|upstream connect error)\b"
)


def detect_subject(
    text: str,
    *,
    services: Iterable[str] = (),
    namespace: str | None = None,
    exclude: Iterable[str] = (),
) -> Subject:
    """The objects a question is about (see module doc); ``exclude``: words that are not
    names (environment words)."""
    skip = {w.lower() for w in exclude} | _NOT_NAMES
    if namespace:
        skip.add(namespace)
    names: list[tuple[int, str]] = []
    kind: str | None = None
    kind_name: str | None = None  # the name the kind word was said with
    kind_pos = 10**9
    # an HTTP status's reason phrase names no object ("503 Service Temporarily Unavailable")
    low = _REASON_PHRASE.sub(lambda m: " " * len(m.group(0)), text.lower())
    for m in _KIND_THEN_NAME.finditer(low):
        name = m.group(2)
        if name in skip or name in _KINDS or _is_ns_phrase(low, m.end(2)):
            continue
        names.append((m.start(2), name))
        if m.start() < kind_pos:
            kind, kind_pos, kind_name = _KINDS[m.group(1).lower()], m.start(), name
    for m in _NAME_THEN_KIND.finditer(low):
        name = m.group(1)
        if name in skip or name in _KINDS:
            continue
        plain = not ("-" in name or any(ch.isdigit() for ch in name) or _known(name, services))
        if plain and len(name) < 4:
            continue
        names.append((m.start(1), name))
        if m.start() < kind_pos:
            kind, kind_pos, kind_name = _KINDS[m.group(2).lower()], m.start(), name
    hosts = [h for h in dict.fromkeys(_HOST.findall(low)) if not _product_name(h, text)]
    for m in _HYPHENATED.finditer(low):
        name = m.group(1)
        if name in skip or name in _COMMON_HYPHENATED or any(name in h for h in hosts):
            continue
        if re.match(r"\s+cluster\b", low[m.end(1) : m.end(1) + 9]) or name.startswith(
            ("namespace-", "ns-")
        ):
            continue
        if namespace and name == namespace:
            continue
        names.append((m.start(1), name))
    for s in services:
        pos = low.find(s.lower())
        names.append((pos if pos >= 0 else 10**8, s.lower()))
    kept = _without_guesses(low, names, hosts, namespace)
    guessed_hosts = _guessed_hosts(low, hosts) if (kept or namespace) else []
    hosts = [h for h in hosts if h not in guessed_hosts]
    if kind_name is not None and kind_name not in {n for _, n in kept}:
        kind, kind_name = None, None  # the kind word belonged to the suspect ("the backup job")
    suspects = sorted({n for _, n in names} - {n for _, n in kept} | set(guessed_hosts))
    names = kept
    ordered = [n for _, n in sorted(names)]
    unique: list[str] = []
    for n in ordered:
        if n not in unique and not any(n != u and u.startswith(n + "-") for u in unique):
            unique = [u for u in unique if not n.startswith(u + "-") or u == n]
            unique.append(n)
    return Subject(
        names=unique[:4], kind=kind, kind_name=kind_name, namespace=namespace, hosts=hosts[:3],
        symptom=detect_symptom(text), suspects=suspects, backlog=bool(_BACKLOG.search(low)),
    )  # fmt: skip


# a question put as a guess ("is the backup job hogging the database?", "could it be the
# cache?"): what it names is a suspect to check, not what has the symptom
_GUESS = re.compile(
    r"(?:^|[.!?;:]\s*|\s[-–—]\s*|\bor\s+)"
    r"((?:is|are|was|were|could|can|might|may|would|should)\s+(?:it\s+(?:be\s+)?)?"
    r"(?:the|a|our|this|that)\s(?:[^.!?]|\.(?=\S))*\?)"  # a dot inside a host name goes on
)


def _guess_spans(low: str) -> list[tuple[int, int]]:
    """Where the question guesses: a question put as a guess, and a change asked about after
    the symptom ("catalog 3.2 was deployed at 09:40 - should we roll it back?"). What it
    names is a suspect only when the question names what has the symptom otherwise (see
    :func:`_without_guesses`)."""
    spans = [m.span(1) for m in _GUESS.finditer(low)]
    return spans + [m.span(1) for m in _CHANGE_GUESS.finditer(low)]


def _inside(low: str, name: str, spans: list[tuple[int, int]], before: str = r"\w-") -> bool:
    """Whether every time ``name`` is said falls inside one of ``spans`` (``before``: the
    characters that may not precede it, a host's dot among them)."""
    at = [m.start() for m in re.finditer(rf"(?<![{before}]){re.escape(name)}(?![\w-])", low)]
    return bool(at) and all(any(a <= p < b for a, b in spans) for p in at)


def not_guessed(names: Iterable[str], suspects: Iterable[str]) -> list[str]:
    """Those of ``names`` none of whose parts is a suspect: ``photos-mariadb-0`` is what the
    guess "did the MariaDB update break it?" names, not the subject."""
    guessed = {s.lower() for s in suspects}
    return [n for n in names if not guessed & set(n.lower().split("-"))]


def guessed_only(text: str, names: Iterable[str], namespace: str | None) -> list[str]:
    """Those of ``names`` (services the question names in plain words) said only inside a
    guess or a change asked about ("SeaweedFS was upgraded last night - did that break S3?")
    while the question names the namespace: suspects, not the subject."""
    if not namespace:
        return []
    low = text.lower()
    spans = _guess_spans(low)
    return [n for n in names if spans and _inside(low, n.lower(), spans)]


def _guessed_hosts(low: str, hosts: list[str]) -> list[str]:
    """Hosts said only inside a guess that follows what the question reports ("npm install
    fails with 500s from our registry ... - is the uplink to registry.example.org broken?"),
    when the question names what has the symptom otherwise: suspects, not the subject. A
    question that opens with the guess ("is the site at shop.example.com down?") asks about
    that host."""
    spans = [m.span(1) for m in _GUESS.finditer(low) if low[: m.start(1)].strip()]
    return [h for h in hosts if _inside(low, h, spans, before=r"\w.-")]


# a change the question asks about after reporting the symptom ("SeaweedFS was upgraded
# last night - did that break S3?", "we shipped bookings-api 2.4 at 09:40 - should we roll
# it back?"): what changed is a suspect to check, not what has the symptom
_CHANGE_GUESS = re.compile(
    r"(?:[.!;]\s+)((?:[^.!?;]|\.(?=\S))*\b(?:released|upgraded|deployed|shipped|rolled out"
    r"|updated|bumped|migrated|pushed|changed|applied|switched)\b(?:[^.!?;]|\.(?=\S))*\?)"
)


def _without_guesses(
    low: str, names: list[tuple[int, str]], hosts: list[str], namespace: str | None = None
) -> list[tuple[int, str]]:
    """``names`` less those said only inside a guess, when the question names what has
    the symptom otherwise too (another name, a host, the namespace it lives in): the
    suspect is read, not the subject; a change asked about after the symptom is one too.
    Named alone, a suspect stays the subject (nothing else says where the symptom is)."""
    spans = _guess_spans(low)
    if not spans:
        return names
    kept = [(p, n) for p, n in names if not _inside(low, n, spans)]
    if len(kept) == len(names) or not (kept or hosts or namespace):
        return names
    return kept


_BACKLOG = re.compile(
    r"\bbacklog|\bqueue (?:alert|depth|length|size|is growing|grows|keeps growing)"
    r"|consumer lag|\blagging\b|piling up|pile up|(?:not|stopped|no longer) (?:being )?processed"
    r"|unprocessed|messages? (?:are )?(?:stuck|piling)"
    # data that does not arrive where it is read (dashboards, log search): what carries it
    # in the namespace (a collector, a writer, a queue, a store) may have stopped
    r"|\bno data\b|\bpatchy\b|\bhas a (?:hole|gap)|\b(?:a )?(?:hole|gap)s? (?:in|for|from)\b"
    r"|nothing newer than|data (?:is )?missing|missing (?:data|metrics|samples|logs)"
)


def _product_name(host: str, text: str) -> bool:
    """Whether a dotted name is written as a product's name ("Monday.com", "Booking.com" with a
    capital and one dot), not as an address: people type host names in lower case."""
    if host.count(".") != 1:
        return False
    return all(
        m.group(0)[:1].isupper()
        for m in re.finditer(rf"(?<![\w.-]){re.escape(host)}(?![\w-])", text, re.I)
    )


def _known(name: str, services: Iterable[str]) -> bool:
    return name in {s.lower() for s in services}


def _is_ns_phrase(low: str, end: int) -> bool:
    return bool(re.match(r"\s+namespace\b", low[end : end + 12]))
