"""Query understanding: what a question means before it is searched.

:func:`understand` turns a question into a :class:`QueryPlan`:

1. **Follow-up completion** (:func:`complete_follow_up`): "what about prod?" after
   "redis restart in test" becomes "what about prod? redis restart", from the previous
   question and the task-state terms given in a :class:`QueryContext`.
2. **Error signature** (:mod:`.signature`): a pasted log line or stack trace is reduced to
   its exception type, error codes and message template; other questions only lose the
   ids, addresses and timestamps pasted into them.
3. **Identifiers** split into words (``KubePodCrashLooping`` -> kube pod crash looping)
   for the glossary and the embedding model; ``key=value`` alert labels are read.
4. **Glossary** (:mod:`.glossary`): Chinese terms get their English equivalents,
   jargon and slang their runbook vocabulary, environment words an environment, product
   names are noted (a product no runbook mentions makes the evidence weak).
5. **Context**: environment, services, time phrases and version, kept as *hints* for
   ranking (:mod:`.rerank`), never as filters or mandatory terms. Time phrases are removed
   from the searched text.
6. **Intents**: a question that asks two things ("redis evicts keys; also kafka lag")
   is split; the retriever searches each part and fuses the lists.

The plan carries the weighted BM25 terms (the question's own terms weigh 1, English
equivalents of Chinese terms 1, glossary aliases :data:`ALIAS_WEIGHT`) and the text for
the embedding model (Chinese text replaced by its English equivalents: MiniLM only
reads English).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from opsmate.knowledge.glossary import Glossary, load_glossary
from opsmate.knowledge.signature import (
    ErrorSignature,
    extract_signature,
    extract_times,
    extract_version,
    remove_phrases,
    scrub_ids,
    split_camel,
    split_identifiers,
)

ALIAS_WEIGHT = 0.5  # BM25 weight of a glossary alias (the question's own words weigh 1)
VARIANT_WEIGHT = 0.5  # BM25 weight of another inflection of a question word found in the index
_CJK_RE = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_CJK_PUNCT_RE = re.compile("[\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]")
_LABEL_RE = re.compile(r"\b([a-z_]+)=([\w.:/-]+)")
_SERVICE_LABELS = ("service", "app", "container", "upstream", "job", "deployment")
_ENV_LABELS = ("env", "environment")
_INTENT_SPLIT_RE = re.compile(
    r"(?:[?？!！;；。]\s*|\.\s+)(?:and\s+)?(?:also|besides|separately|another thing|"
    r"second(?:ly)?|plus|in addition|另外|还有|顺便问一下|顺便|同时|另一个问题)?[,，:：]?\s*"
    r"|\s*[,，]?\s*(?:and also|as well as|(?:and )?another thing(?: is)?|另外|还有就是|还有|"
    r"顺便问一下|顺便|另一个问题是?)\s*[,，:：]?\s*",
    re.I,
)
_ANAPHORA_RE = re.compile(
    r"^\s*(?:and\s+)?(?:it|its|it's|this|that|these|those|they|them|the same|same|then|"
    r"what about|how about|and in|and on|and for|what if|instead|also in)\b"
    r"|^\s*(?:那|那么|这个|那个|它|这|同样|还是|再|换成|那在)|(?:呢|吗)\s*[?？]?\s*$",
    re.I,
)
_QUESTION_WORDS_TEXT = """what how why when where who which can could should is are do does did
    may might i we you it its this that about and or the a an in on at for to of with"""
_QUESTION_WORDS = frozenset(_QUESTION_WORDS_TEXT.split())


@dataclass
class QueryContext:
    """What the session knows when a question is asked (for follow-up completion)."""

    previous_question: str | None = None
    state_terms: list[str] = field(default_factory=list)  # services, identifiers, symptoms


@dataclass
class Vocabulary:
    """What the index knows: service and environment names, and its lexical terms."""

    services: frozenset[str] = frozenset()
    environments: frozenset[str] = frozenset()
    known_term: Callable[[str], bool] = lambda _t: True
    # a term some runbook is about (its title, tags, service, alerts, folder), or that
    # several chunks mention: a product named only in passing is not covered
    topic_term: Callable[[str], bool] = lambda _t: True
    # index terms sharing a word's inflection key ("cancelled" -> canceling, canceled)
    variants: Callable[[str], list[str]] = lambda _t: []


@dataclass
class Expansion:
    """One thing query understanding added, and why."""

    source: str  # as written in the question
    added: list[str]
    kind: str  # alias | translation | env | product | split | signature | follow_up

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "added": self.added, "kind": self.kind}


@dataclass
class QueryPlan:
    """How a question was understood: what is searched, and the hints for ranking."""

    query: str
    text: str  # what is searched (completed, scrubbed, time phrases removed)
    lexical: list[tuple[str, float]] = field(default_factory=list)
    embed_text: str = ""
    # texts whose normalised mean vector is the query vector (today: ``embed_text``
    # alone; averaging it with the bare question measured worse once the glossary grew)
    embed_texts: list[str] = field(default_factory=list)
    expansions: list[Expansion] = field(default_factory=list)
    signature: ErrorSignature | None = None
    environment: str | None = None
    services: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    times: list[str] = field(default_factory=list)
    version: str | None = None
    wants_old: bool = False
    products: list[str] = field(default_factory=list)
    unknown_products: list[str] = field(default_factory=list)
    intents: list[str] = field(default_factory=list)
    follow_up: str | None = None  # the previous question this one was completed from

    @property
    def terms(self) -> list[str]:
        return [t for t, _ in self.lexical]

    def term_weights(self) -> dict[str, float]:
        return dict(self.lexical)

    def to_json(self) -> dict[str, Any]:
        """The ``understanding`` object of ``search --explain``."""
        return {
            "searched_text": self.text,
            "embedded_text": self.embed_texts or [self.embed_text],
            "expansions": [e.to_json() for e in self.expansions],
            "signature": self.signature.to_json() if self.signature else None,
            "hints": {
                "environment": self.environment,
                "services": self.services,
                "labels": self.labels,
                "times": self.times,
                "version": self.version,
                "wants_old_version": self.wants_old,
            },
            "products": self.products,
            "unknown_products": self.unknown_products,
            "intents": self.intents,
            "follow_up_of": self.follow_up,
        }


def understand_basic(query: str) -> QueryPlan:
    """The plan without understanding: the question and its Chinese terms' English only.

    What retrieval did before query understanding existed; kept for comparisons
    (``benchmarks/bench_retrieval_stages.py``) and as ``HybridRetriever.understanding``
    ``"basic"``.
    """
    from opsmate.knowledge.analyzers import expand_query, tokenize

    q = expand_query(" ".join(query.split()))
    terms = list(dict.fromkeys(tokenize(q)))
    return QueryPlan(query=query, text=q, lexical=[(t, 1.0) for t in terms], embed_text=q,
                     embed_texts=[q])  # fmt: skip


def complete_follow_up(
    question: str, previous_question: str | None = None, state_terms: Iterable[str] = ()
) -> str | None:
    """The question completed from the previous one when it is a follow-up, else None.

    A follow-up refers back ("what about prod?", "and in test?", "那生产环境呢", "how do
    I fix it") or is too short to stand alone (at most three content words). The
    completion appends the previous question's content words and the state terms
    (services, identifiers of the investigation) that the question does not repeat.
    """
    q = question.strip()
    extra = [t for t in state_terms if t and t.lower() not in q.lower()]
    if not q or (not previous_question and not extra):
        return None
    content = [w for w in re.findall(r"[A-Za-z][\w-]*|\d+", q) if w.lower() not in _QUESTION_WORDS]
    cjk_chars = len(_CJK_RE.findall(q))
    short = len(content) + cjk_chars // 2 <= 3
    if not (_ANAPHORA_RE.search(q) or short):
        return None
    prev_words: list[str] = []
    if previous_question:
        prev = scrub_ids(previous_question)
        envs = [m for m in load_glossary().match(prev) if m.entry.kind == "env"]
        if any(m.entry.kind == "env" for m in load_glossary().match(q)):
            prev = remove_phrases(prev, [m.surface for m in envs])  # the new one replaces it
        prev_words = [
            w
            for w in re.findall(r"[A-Za-z][\w.-]*|[\u4e00-\u9fff]+|\d+(?:\.\d+)*", prev)
            if w.lower() not in _QUESTION_WORDS and w.lower() not in q.lower()
        ]
    added = list(dict.fromkeys([*prev_words, *extra]))
    return f"{q} {' '.join(added)}" if added else None


def split_intents(text: str) -> list[str]:
    """The separate questions in ``text`` (two or more), or [] when it asks one thing.

    Splits at sentence ends and at "also" / "另外" / "还有"; a part that refers back
    ("it", "this", "那") or has fewer than two content words stays with the part before.
    """
    parts = [p.strip(" ,，.。") for p in _INTENT_SPLIT_RE.split(text) if p and p.strip(" ,，.。")]
    if len(parts) < 2:
        return []
    merged: list[str] = []
    for p in parts:
        words = [w for w in re.findall(r"[A-Za-z][\w-]*", p) if w.lower() not in _QUESTION_WORDS]
        substantive = len(words) + len(_CJK_RE.findall(p)) // 2 >= 2
        if merged and (not substantive or _ANAPHORA_RE.search(p)):
            merged[-1] = f"{merged[-1]} {p}"
        else:
            merged.append(p)
    return merged if len(merged) >= 2 else []


def _translate(text: str, g: Glossary) -> str:
    """CJK runs replaced in place by the English of their glossary terms (for the embedder)."""

    def run(m: re.Match[str]) -> str:
        words = [
            " ".join(x.entry.expansions) for x in g.match(m.group(0)) if x.entry.kind != "product"
        ]
        return f" {' '.join(words)} "

    return " ".join(_CJK_PUNCT_RE.sub(" ", re.sub(f"{_CJK_RE.pattern}+", run, text)).split())


def _labels(text: str) -> dict[str, str]:
    return {m.group(1).lower(): m.group(2) for m in _LABEL_RE.finditer(text)}


@lru_cache(maxsize=8)
def _service_keys(services: frozenset[str]) -> tuple[dict[str, str], int]:
    """(key -> service name, most parts in a name); keys are the name's lowercase parts
    joined by ``-``, and for a name of 8+ letters also run together (``orderservice``)."""
    keys: dict[str, str] = {}
    most = 1
    for s in sorted(services, key=len):
        parts = re.findall(r"[a-z0-9]+", s.lower())
        if not parts:
            continue
        most = max(most, len(parts))
        keys.setdefault("-".join(parts), s)
        if len(parts) > 1 and len("".join(parts)) >= 8:
            keys.setdefault("".join(parts), s)
    return keys, most


def _find_services(text: str, services: frozenset[str]) -> list[str]:
    """Service names written in ``text``: ``order-service``, ``order service``, ``OrderService``.

    Word n-grams of the text are looked up (no regex per service: a site may have
    hundreds of services).
    """
    keys, most = _service_keys(services)
    words = re.findall(r"[a-z0-9]+", split_camel(text).lower())
    found: dict[str, int] = {}
    for n in range(1, most + 1):
        for i in range(len(words) - n + 1):
            gram = words[i : i + n]
            for key in ("-".join(gram), "".join(gram)):
                name = keys.get(key)
                if name is not None and name not in found:
                    found[name] = i
    return sorted(found, key=lambda name: found[name])


def understand(
    query: str,
    *,
    glossary: Glossary | None = None,
    vocabulary: Vocabulary | None = None,
    context: QueryContext | None = None,
) -> QueryPlan:
    """The :class:`QueryPlan` of ``query`` (see the module docstring for the steps)."""
    from opsmate.knowledge.analyzers import tokenize

    g = glossary if glossary is not None else load_glossary()
    vocab = vocabulary or Vocabulary()
    original = " ".join(query.split())
    text, follow = original, None
    if context is not None:
        completed = complete_follow_up(original, context.previous_question, context.state_terms)
        if completed:
            text, follow = completed, context.previous_question or "(task state)"
    plan = QueryPlan(query=query, text=text, follow_up=follow)
    if follow:
        plan.expansions.append(Expansion(original, [text[len(original) :].strip()], "follow_up"))

    sig = extract_signature(query if follow is None else text)  # lines matter in a trace
    plan.signature = sig
    base = scrub_ids(text)
    if sig is not None and sig.is_log:
        base = sig.search_text()
    if sig is not None:
        missing = [c for c in sig.codes if c.lower() not in base.lower()]
        if missing:
            base = f"{base} {' '.join(missing)}"
            plan.expansions.append(Expansion("error codes", missing, "signature"))
    plan.times = extract_times(base)
    base = remove_phrases(base, plan.times)
    plan.version, plan.wants_old = extract_version(text)
    plan.labels = _labels(text)
    plan.text = base

    splits = split_identifiers(base)
    for ident, words in splits:
        plan.expansions.append(Expansion(ident, [words], "split"))
    analysis = " ".join([base, *(w for _, w in splits)])

    weights: dict[str, float] = {}

    def add_terms(s: str, w: float) -> None:
        for t in tokenize(s):
            if weights.get(t, 0.0) < w:
                weights[t] = w

    add_terms(base, 1.0)
    inflected: list[str] = []
    for t in list(weights):
        if t.isalpha() and len(t) >= 4:
            inflected += [v for v in vocab.variants(t) if v not in weights]
    for v in dict.fromkeys(inflected):
        weights[v] = VARIANT_WEIGHT
    english: list[str] = []  # what the embedding model gets besides the Latin text
    envs: list[str] = []
    for m in g.match(analysis):
        e = m.entry
        if e.kind == "env":
            envs.extend(e.expansions)
            plan.expansions.append(Expansion(m.surface, list(e.expansions), "env"))
            continue
        if e.kind == "product":
            plan.products.append(e.term.lower())
            names = [tokenize(e.term), *(tokenize(x) for x in e.expansions if " " not in x)]
            if not any(n and all(vocab.topic_term(t) for t in n) for n in names):
                plan.unknown_products.append(e.term.lower())
        cjk = bool(_CJK_RE.search(e.term))
        added = list(e.expansions)
        if not added:
            continue
        kind = "translation" if cjk else ("product" if e.kind == "product" else "alias")
        plan.expansions.append(Expansion(m.surface, added, kind))
        add_terms(" ".join(added), 1.0 if cjk else ALIAS_WEIGHT)
        english.extend(added)

    label_env = next((plan.labels[k] for k in _ENV_LABELS if k in plan.labels), None)
    env_candidates = [label_env.lower()] if label_env else []
    env_candidates += [e.lower() for e in envs]
    known_envs = vocab.environments  # an environment no runbook names is no hint
    plan.environment = next((e for e in env_candidates if not known_envs or e in known_envs), None)
    svc_text = " ".join([analysis, *english, *(plan.labels.get(k, "") for k in _SERVICE_LABELS)])
    plan.services = _find_services(svc_text, vocab.services)
    plan.lexical = sorted(weights.items(), key=lambda kv: -kv[1])

    latin = _translate(base, g) if _CJK_RE.search(base) else base
    for ident, words in splits:
        latin = latin.replace(ident, words)
    extra = [w for w in dict.fromkeys(english) if w.lower() not in latin.lower()]
    plan.embed_text = " ".join(" ".join([latin, *extra]).split()) or base
    plan.embed_texts = [plan.embed_text]
    plan.intents = split_intents(text)
    return plan
