"""Follow-up answers built from the question's intent over what the session has read.

:func:`answer_question` answers a follow-up from the task state and the stored results
(no call): a question about a change from the change facts' template diffs (every
edited setting that touches what was asked, including those the evidence ties to it:
"pool settings" names DB_POOL_SIZE and DB_MAX_OVERFLOW when a read line shows
``pool_size=10 max_overflow=0``); a value question with the value ("was '20'"); a
"which" question with the list; "is X healthy" with the problems seen for X, or what was
read of it. Objects ("which pods restarted", health) are in :mod:`.answers_objects`.

An :class:`Answer` is ``settled`` when the state answers it, so no call is needed;
with ``final`` (after an investigation) an answer is always given, saying when nothing
read answers it. Every answer ends with what was not read, in the question's language
(:mod:`.frames`); the evidence text is quoted as is. Deterministic, no model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.session.answers_objects import health_answer, which_answer
from opsmate.agent.session.frames import clock, ids, not_read, say, word
from opsmate.agent.session.intent import Intent, Lang, stem, words
from opsmate.agent.session.reads import (
    CHANGE_TOOLS,
    POD_TOOLS,
    VALUE_TOOLS,
    Answer,
    Body,
    Reads,
)

__all__ = ["Answer", "Reads", "answer_question", "edits_of", "fact_text"]

_KEY_NOISE = frozenset({"db", "app", "env", "svc", "cfg", "config", "k8s", "the", "spring"})
_EDITS = (
    (re.compile(r"^env (?P<key>\S+) added \((?P<new>.*)\)$"), "env"),
    (re.compile(r"^env (?P<key>\S+) removed \(was (?P<old>.*)\)$"), "env"),
    (re.compile(r"^env (?P<key>\S+) (?P<old>.*?) -> (?P<new>.*)$"), "env"),
    (re.compile(r"^(?P<key>image) (?P<old>\S+) -> (?P<new>\S+)$"), "image"),
    (re.compile(r"^(?P<key>\S+ (?:limit|request)) (?P<old>\S+) -> (?P<new>\S+)$"), "resource"),
    (re.compile(r"^(?P<key>command|args|ports) (?P<old>.*?) -> (?P<new>.*)$"), "other"),
)


@dataclass
class Edit:
    """One edit of a change's pod template: ``env DB_POOL_SIZE '20' -> '10'``."""

    fact: Fact
    key: str
    kind: str
    old: str | None
    new: str | None
    text: str


def answer_question(question: str, intent: Intent, reads: Reads, *, final: bool) -> Answer | None:
    """The answer to ``question`` from what was read (see the module docstring)."""
    lang = intent.lang
    body: Body | None = None
    if intent.kind == "value":
        body = _value(intent, reads)
    elif intent.kind == "health" and (intent.names or reads.state.subject.names):
        body = health_answer(intent, reads)
    elif intent.about_change or intent.predicate == "change":
        body = _change(intent, reads)
    elif intent.kind in ("which", "yes_no") and intent.predicate:
        body = which_answer(intent, reads)
    if body is None:
        body = _open(intent, reads)
    if body is None or (not body.settled and not final):
        if not final:
            return None
        body = body or Body(say("nothing", lang), [], False, _relevant(intent))
    text = reads.clean(body.text, 1600)
    text += not_read(reads.state, lang, reads.tools, body.relevant, body.extra)
    return Answer(text=text, evidence=list(dict.fromkeys(body.cited)), settled=body.settled)


def _relevant(intent: Intent) -> tuple[str, ...]:
    if intent.about_change or intent.predicate == "change":
        return CHANGE_TOOLS
    if intent.predicate in ("restart", "unready", "pending", "evicted"):
        return POD_TOOLS
    if intent.kind == "value":
        return VALUE_TOOLS
    return ()


# ----------------------------------------------------------------------------- changes


def edits_of(f: Fact) -> list[Edit]:
    """The template edits of a change fact, parsed (unknown forms kept as text)."""
    out: list[Edit] = []
    for raw in (f.detail or {}).get("template_changes") or []:
        text = re.sub(r"^container [^:]+: ", "", str(raw)).strip()
        for pat, kind in _EDITS:
            m = pat.match(text)
            if m:
                d = m.groupdict()
                out.append(Edit(f, d["key"], kind, d.get("old"), d.get("new"), text))
                break
        else:
            out.append(Edit(f, text, "other", None, None, text))
    return out


# what an edited value is about, when its key does not say it (-Xmx480m: memory)
_VALUE_HINTS = (
    (re.compile(r"-Xm[xs]\d|MaxRAM|heap|GOMEMLIMIT|\bmemory\b|\d(?:Mi|Gi)\b", re.I), "memory"),
    (re.compile(r"pool|max_?overflow|max_?connections", re.I), "pool"),
    (re.compile(r"timeout", re.I), "timeout"),
    (re.compile(r"GOMAXPROCS|\bcpu\b", re.I), "cpu"),
)


def edit_topics(e: Edit) -> set[str]:
    """What an edit is about: its key's words, and what its values show (``-Xmx``)."""
    out = {stem(w) for w in words(e.key)}
    values = f"{e.key} {e.old or ''} {e.new or ''}" if e.kind != "image" else e.key
    out |= {stem(t) for pat, t in _VALUE_HINTS if pat.search(values)}
    return out


def _direct(e: Edit, topic: set[str]) -> bool:
    return bool({stem(w) for w in words(e.key)} & topic)


def _link(e: Edit, topic: set[str], facts: list[Fact]) -> tuple[Fact, str] | None:
    """A read fact that names the edited key together with the topic ("pool_size=10
    max_overflow=0" ties DB_MAX_OVERFLOW to the pool), and the words that show it."""
    phrase = [w for w in words(e.key) if w not in _KEY_NOISE]
    if e.kind not in ("env", "resource") or not phrase:
        return None
    if len(phrase) == 1 and len(phrase[0]) < 5:
        return None  # "max" alone ties nothing
    pat = re.compile(r"(?<![a-z0-9])" + r"[_\s.-]?".join(map(re.escape, phrase)) + r"(?![a-z0-9])")
    for f in facts:
        if f.kind == K.CHANGE or not f.evidence:
            continue
        for text in (f.quote or "", f.message or "", f.statement):
            low = text.lower()
            m = pat.search(low)
            if m and topic & {stem(w) for w in words(low)}:
                return f, _snippet(text, m.start(), m.end())
    return None


def _snippet(text: str, start: int, end: int, before: int = 70, after: int = 40) -> str:
    """The words of ``text`` around ``start:end``, cut at spaces, marked with "…"."""
    a = max(0, start - before)
    b = min(len(text), end + after)
    if a > 0:
        space = text.find(" ", a, start)
        a = space + 1 if space >= 0 else a
    if b < len(text):
        space = text.rfind(" ", end, b)
        b = space if space >= 0 else b
    return ("…" if a else "") + text[a:b].strip() + ("…" if b < len(text) else "")


def _change(intent: Intent, reads: Reads) -> Body | None:
    lang, state = intent.lang, reads.state
    changes = [f for f in state.facts if f.kind == K.CHANGE]
    topic = set(intent.topic) | _stems(intent.keys)
    topic_text = intent.topic_text or word("topic_any", lang)
    sep = word("sep", lang)
    if not changes:
        read = [a.evidence_id for a in state.actions if a.tool == "rollout_history"]
        cited = [e for e in read if e]
        if not cited:
            return None
        return Body(say("no_changes", lang, ids=ids(cited)), cited, True, CHANGE_TOOLS)
    with_diff = [f for f in changes if edits_of(f)]
    if not with_diff:
        seen = sep.join(reads.clean(f.statement, 200) for f in changes[:2])
        cited = [e for f in changes[:2] for e in f.evidence]
        text = say("changes_no_diff", lang, seen=seen, ids=ids(cited))
        return Body(text, cited, True, CHANGE_TOOLS)
    every = [e for f in with_diff for e in edits_of(f)]
    if not topic:
        picked = [e for e in every if not intent.config or e.kind != "image"]
    else:
        picked = [e for e in every if _direct(e, topic)]
    links: list[tuple[Edit, Fact, str]] = []
    for e in every if topic else []:  # tied to the topic by what was read, quoted
        found = None if e in picked else _link(e, topic, state.facts)
        if found is not None:
            picked.append(e)
            links.append((e, *found))
    picked += [e for e in every if topic and e not in picked and edit_topics(e) & topic]
    if not picked:
        seen = sep.join(_change_item(f, edits_of(f), lang) for f in with_diff[:2])
        cited = [e for f in with_diff[:2] for e in f.evidence]
        frame = "no_change_match" if intent.kind == "yes_no" else "none_touch"
        text = say(frame, lang, topic=topic_text, seen=seen, ids=ids(cited))
        return Body(text, cited, True, CHANGE_TOOLS)
    groups: dict[str, list[Edit]] = {}
    for e in picked:
        groups.setdefault(e.fact.key, []).append(e)
    items = [
        _change_item(es[0].fact, es, lang) + say("cite", lang, ids=ids(es[0].fact.evidence))
        for es in groups.values()
    ]
    cited = [i for es in groups.values() for i in es[0].fact.evidence]
    text = say("yes" if intent.kind == "yes_no" else "list", lang, items=sep.join(items))
    for e, f, quote in links[:3]:
        text += say("linked", lang, key=e.key, topic=topic_text, eid=f.evidence[0], quote=quote)
        cited.append(f.evidence[0])
    return Body(text, cited, True, CHANGE_TOOLS)


def _change_item(f: Fact, edits: list[Edit], lang: Lang) -> str:
    shown = word("and", lang).join(e.text for e in edits[:6])
    return say("changed_item", lang, head=_head(f), when=clock(f.time, lang), edits=shown)


# ----------------------------------------------------------------------------- values


def _value(intent: Intent, reads: Reads) -> Body | None:
    """A value asked for: an edited setting's old / new value, else a metric's level
    before / after its shift."""
    lang, state = intent.lang, reads.state
    keys = {k.lower() for k in intent.keys}
    wanted = [_stems({k}) for k in keys] or ([set(intent.topic)] if intent.topic else [])
    hits: list[Edit] = []
    for f in state.facts:
        if f.kind != K.CHANGE:
            continue
        for e in edits_of(f):
            have = {stem(w) for w in words(e.key)}
            if e.key.lower() in keys or any(w and w <= have for w in wanted):
                hits.append(e)
    if hits:
        parts, cited = [], []
        frame = "value_edit_before" if intent.when == "before" else "value_edit_now"
        for e in hits[:3]:
            parts.append(
                say(
                    frame,
                    lang,
                    key=e.key,
                    old=e.old if e.old is not None else _unset(lang),
                    new=e.new if e.new is not None else _unset(lang),
                    head=_head(e.fact),
                    when=clock(e.fact.time, lang),
                    ids=ids(e.fact.evidence),
                )
            )
            cited += e.fact.evidence
        return Body(" ".join(parts), cited, True, VALUE_TOOLS)
    topic = set(intent.topic)
    need = len(topic) if len(topic) <= 2 else 2
    shifts = [
        f
        for f in state.facts
        if f.evidence and f.detail.get("before") is not None and f.detail.get("after") is not None
    ]
    ranked = sorted(((f, _overlap(f, topic)) for f in shifts), key=lambda x: -x[1])
    found = [f for f, n in ranked if topic and n >= need][:2]
    if not found:
        return None
    parts, cited = [], []
    frame = "value_metric_now" if intent.when == "now" else "value_metric_before"
    for f in found:
        parts.append(
            say(
                frame,
                lang,
                time=f.time.strftime("%H:%M:%S") if f.time else "?",
                before=f.detail["before"],
                after=f.detail["after"],
                statement=reads.clean(f.statement, 300),
                ids=ids(f.evidence),
            )
        )
        cited += f.evidence
    return Body(" ".join(parts), cited, True, VALUE_TOOLS)


def _head(f: Fact) -> str:
    from opsmate.agent.judge.statements import change_phrase

    return change_phrase(f).split(":")[0]


def _unset(lang: Lang) -> str:
    return "(not set)" if lang == "en" else "（未设置）"


def _stems(keys: Iterable[str]) -> set[str]:
    return {stem(w) for k in keys for w in words(k)}


# ----------------------------------------------------------------------------- open questions


def fact_text(f: Fact) -> str:
    """Everything a fact says, for matching a question's words."""
    d = f.detail or {}
    extra = [str(t) for t in d.get("template_changes") or []]
    extra += [str(d.get(k) or "") for k in ("query", "change_cause", "output")]
    extra += [str(v) for v in (d.get("labels") or {}).values()]
    kind = str(f.kind.value).replace("_", " ")  # "error_rate": what the fact is about
    return " ".join([f.statement, f.quote or "", f.message or "", f.reason or "", kind, *extra])


def _overlap(f: Fact, topic: set[str]) -> int:
    have = {stem(w) for w in words(fact_text(f))}
    return len(topic & have)


def _open(intent: Intent, reads: Reads) -> Body | None:
    """The known facts that name what the question asks about (at least two of its
    words, or its one word), strongest first."""
    topic = set(intent.topic) | {stem(w) for n in intent.names for w in words(n)}
    if not topic:
        return None
    rank = {"error": 0, "warning": 1, "info": 2}
    scored = sorted(
        ((f, _overlap(f, topic)) for f in reads.state.facts if f.kind != K.NO_CHANGE),
        key=lambda x: (-x[1], rank.get(x[0].severity, 3)),
    )
    need = 1 if len(topic) == 1 else 2
    best = [f for f, n in scored if n >= need and f.evidence][:3]
    if not best:
        return None
    items = word("sep", intent.lang).join(
        f"{reads.clean(f.statement, 300)} ({ids(f.evidence)})" for f in best
    )
    cited = [e for f in best for e in f.evidence]
    return Body(say("open", intent.lang, items=items), cited, True)
