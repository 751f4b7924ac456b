"""Sentences rendered from the structured judgement (never the other way round).

The root cause is read in ten seconds: one or two sentences, at most :data:`MAX_WORDS`
words, what failed and why (the cause, its verbatim message or key values), then what
triggered it when a change is known, each clause citing its evidence ids::

    ledger-worker is crash-looping (CrashLoopBackOff) because container app ended with
    "LEDGER_REGION is undefined" (E4). Triggered by rollout revision 7 of ledger-worker:
    env LEDGER_REGION removed (E5).

The path from the symptom to the cause is :func:`chain_steps` (symptom first, then the
links the candidate holds in ``chain``, then the cause and its trigger); supporting facts
stay facts. Nothing here repeats a sentence another part of the report says.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from opsmate.agent.judge.candidates import same_thread
from opsmate.agent.kinds import Card, Role, Trait, base, card_for
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.text import clip, reason_words

if TYPE_CHECKING:
    from opsmate.agent.judge.candidates import Candidate


def symptom_phrase(kind: K | None) -> str | None:
    """How a symptom kind is said of its subject (``is crash-looping``), from its card."""
    if kind is None:
        return None
    card = base(kind)
    return card.phrase if card.role == Role.SYMPTOM and card.phrase else None


MAX_WORDS = 50  # the whole root-cause statement
TRIGGER_WORDS = 18  # the trigger sentence at most
THEN_WORDS = 8  # the verbatim error that followed the cause
NODE_THEN_WORDS = 26  # the scheduler's account of a pod a node's state keeps off it
MIN_CAUSE_WORDS = 14  # the cause keeps at least this many words when a clause is added
STEP_CHARS = 240  # one step of the chain
CLAUSE = 260  # characters of a clause (kept for callers of :func:`clause`)


def cite(f: Fact) -> str:
    return f"({', '.join(f.evidence)})" if f.evidence else ""


def clause(f: Fact, limit: int = CLAUSE) -> str:
    return f"{clip(f.statement, limit)} {cite(f)}".rstrip()


def words(text: str) -> int:
    """How many words a text has (whitespace separated)."""
    return len(text.split())


def clip_cause(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` words; a wrapped error (``a: b: No space left on
    device``) keeps its innermost clause, the words a person greps for, after the cut."""
    if words(text) <= limit or ": " not in text:
        return clip_words(text, limit)
    head, tail = text.rsplit(": ", 1)
    if words(tail) > limit // 2:
        return clip_words(text, limit)
    return clip_words(head, limit - words(tail)).removesuffix(" …") + " … " + tail


def clip_words(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` words (an ellipsis marks the cut)."""
    parts = text.split()
    if len(parts) <= limit:
        return " ".join(parts)
    return " ".join(parts[: max(limit - 1, 1)]) + " …"


_WORKLOAD_KINDS = frozenset({"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"})


def _who(c: Candidate, subject_label: str | None) -> str:
    s = c.explains
    if c.lead.kind == K.CHANGE and c.lead.service and s is not None and same_thread(c.lead, s):
        return c.lead.service  # the workload that changed is the one that shows it
    if subject_label and s is not None and s.subject is not None and " " not in subject_label:
        # the symptom shown by another object than the one asked about: name that one (a
        # database's pod crash-looping is not the UI crash-looping)
        own = subject_label.lower()
        names = s.names()
        if (
            s.subject.kind in _WORKLOAD_KINDS
            and names
            and not any(n == own or n.startswith(own + "-") for n in names)
        ):
            return s.subject.label()
    if subject_label:
        return subject_label
    if s is not None and s.subject is not None:
        return s.subject.label()
    if c.lead.subject is not None:
        return c.lead.subject.label()
    return c.lead.service or "the system"


_CONTAINER = re.compile(r"^container [^:]+: ")
_EXCEPTION = re.compile(
    r"\b[A-Z][A-Za-z0-9_.]*(?:Error|Exception|Timeout|Exhausted|Refused|Failure|Fault)\b"
)


def change_phrase(change: Fact, limit: int | None = None) -> str:
    """What a change did, compactly: ``rollout revision 7 of web: env POOL '20' -> '10'``.

    Configuration edits (env, args, limits) come before image changes: they are what a
    person checks first; the verbatim key values are kept."""
    d = change.detail or {}
    edits = [str(t) for t in d.get("template_changes") or [] if str(t).strip()]
    edits = sorted(edits, key=lambda t: " image " in f" {_CONTAINER.sub('', t)} ")
    what = d.get("change") or "change"
    name = change.subject.name if change.subject is not None else (change.service or "")
    head = f"{what} revision {d['revision']}" if d.get("revision") is not None else str(what)
    if name:
        head += f" of {name}"
    if edits:
        shown: list[str] = []
        for t in (_CONTAINER.sub("", t) for t in edits[:3]):  # whole edits: values verbatim
            if shown and limit is not None and words(f"{head}: " + "; ".join([*shown, t])) > limit:
                break
            shown.append(t)
        images = [t for t in edits if " image " in f" {_CONTAINER.sub('', t)} " and t not in shown]
        if images and all(" image " not in f" {_CONTAINER.sub('', t)} " for t in shown):
            tag = _CONTAINER.sub("", images[0]).rsplit("->", 1)[-1].strip().strip("'")
            short = f"image -> {tag.rsplit('/', 1)[-1]}"  # the new build, in short
            if limit is None or words(f"{head}: " + "; ".join([*shown, short])) <= limit - 8:
                shown.append(short)
        return f"{head}: " + "; ".join(shown)
    text = clip(change.quote or change.statement, 220)
    return text if limit is None else clip_words(text, limit)


# reasons a log classifier gives in general words, said better by the card that matched
_VAGUE = frozenset({"resource_exhausted", "unavailable", "auth", "certificate", "not_yet_valid"})


_VERBATIM = (K.LAST_WORDS, K.CONTAINER_EXIT)  # facts that quote, and classify nothing


def _cause_text(lead: Fact, served_by: tuple[str, str] | None = None) -> str:
    """The cause as said by the evidence: the statement, else its verbatim quote. A verbatim
    account (last words, a refusal quoted from a log) is preceded by the failure mode its card
    recognised. Where the
    statement gives the reason in general words ("reports that a resource is exhausted")
    and a specific card recognised the failure mode, the card's name for it stands there
    instead ("reports a full disk: ... No space left on device")."""
    text = lead.statement or lead.quote or ""
    general = reason_words(lead.reason) if lead.reason in _VAGUE else None
    card = card_for(lead)
    if served_by is not None and card.phrase:
        # a client quoting the error of the software it talks to: which workload runs it
        return f"{card.phrase} ({served_by[0]}, image {served_by[1]}): {text}"
    # last words, a refusal quoted, events or log lines counted as they were written ("14
    # FailedScheduling events on Pod x: <message>", 'db logged 14 warnings "<line>"')
    verbatim = lead.kind in _VERBATIM or lead.detail.get("verbatim")
    specific = not card.base or card.fact not in _VERBATIM  # not "last words" in general
    if verbatim and specific and card.phrase and card.role == Role.CAUSE:
        # what a container said or ended with, as it said it: the failure mode the card
        # recognised in it goes first ("a container command that cannot start: ...")
        if card.phrase.lower() not in text.lower():
            return f"{card.phrase}: {text}"
        return text
    if general is None or card.base or not card.phrase:
        return text
    for said, better in (
        (f"that {general}:", f"{card.phrase}:"),
        (f"({general})", f"({card.phrase})"),
        (f", {general}:", f", {card.phrase}:"),  # "reports a configuration error, <reason>:"
    ):
        if said in text:
            return text.replace(said, better, 1)
    return text


def root_statement(
    c: Candidate, subject_label: str | None, reported: K | None
) -> tuple[str, list[str]]:
    """The root-cause statement for candidate ``c`` and the evidence ids it cites.

    At most :data:`MAX_WORDS` words: what failed and why, then the trigger when known.
    The ids are the cause's and the trigger's, then those of the symptom, the chain, the
    errors that followed, the support and the impact (as before), and the runbook's."""
    lead = c.lead
    evidence = list(lead.evidence)

    def add(facts: Sequence[Fact | None]) -> None:
        evidence.extend(e for f in facts if f for e in f.evidence if e not in evidence)

    symptom = c.explains
    head = c.reaches or (symptom if c.explains_subject else None)
    kind = head.kind if head is not None else reported
    who = _who(c, subject_label)
    change = c.change if c.change is not None and c.change is not lead else None
    trigger = ""
    if change is not None:
        ids = cite(change)
        budget = TRIGGER_WORDS - words(ids) - 2
        trigger = f"Triggered by {change_phrase(change, budget)} {ids}"
        trigger = trigger.rstrip() + "."
        add([change])
    if lead.kind == K.CHANGE and head is not None:
        opening = f"{who} {symptom_phrase(head.kind) or 'has a problem'} since"
        cause = change_phrase(lead)
    elif (phrase := symptom_phrase(kind)) is not None:
        reason = head.reason if head is not None and head.reason else None
        cause = _cause_text(lead, c.served_by)
        said = f" ({reason})" if reason and reason.lower() not in cause.lower() else ""
        opening = f"{who} {phrase}{said} because"  # the verbatim reason
    else:
        opening = ""
        cause = _cause_text(lead, c.served_by)
    ids = cite(lead)
    room = MAX_WORDS - words(trigger) - words(opening) - words(ids)
    # a stuck state (a CronJob suspended) makes nothing happen: no error followed from it
    then = None if card_for(lead).has(Trait.STUCK) else _then_clause(c, symptom, lead)
    # the verbatim error that followed, room allowing (its quote decides; the name of its
    # failure mode, a few words, comes with it)
    if then is not None and _fits(then[2], room, cause):
        room -= words(then[2]) + 1
    else:
        then = None
    first = " ".join(p for p in (opening, clip_cause(cause, max(room, 8)), ids) if p)
    if then is not None:
        first = f"{first.rstrip().rstrip('.')}; then {then[0]}"
        add([then[1]])
    first = first.rstrip().rstrip(".") + "."
    text = f"{first} {trigger}".strip()
    if words(text) > MAX_WORDS:  # a long subject label: the cause keeps its ids, words go
        first = clip_words(first, MAX_WORDS - words(trigger) - words(ids)) + f" {ids}."
        text = f"{first} {trigger}".strip()
    # the ids behind the cause (cited where the report shows those facts), runbook last
    add([head or symptom, *c.chain[:2], *c.followers[:3], c.reaches])
    add([f for f in c.support if f is not symptom and f not in c.followers][:2])
    add(c.impact)
    if c.rid:
        evidence.append(c.rid)
    return text, evidence


def _fits(clause: str, room: int, cause: str) -> bool:
    return room - words(clause) - 1 >= min(words(cause), MIN_CAUSE_WORDS)


def _then_clause(c: Candidate, symptom: Fact | None, lead: Fact) -> tuple[str, Fact, str] | None:
    """The first verbatim error that followed the cause or corroborates it (a log line
    the cause does not already quote), as a short clause: ``"pool exhausted" (E4)``, with
    its failure mode named first when a specific card recognised it; the fact; and the
    clause without the name (for a statement with less room)."""
    if lead.subject is not None and lead.subject.kind == "Node":
        # a node's state keeps a pod off it: the scheduler's account of that pod (which
        # nodes it may go to, why none takes it) is what followed
        for f in [*c.support, *c.chain]:
            if f.kind == K.SCHEDULING and f.detail.get("alone_on"):
                plain = f"{clip_words(f.statement, NODE_THEN_WORDS)} {cite(f)}".rstrip()
                return plain, f, plain
    seen = " ".join(x.lower() for x in (lead.statement, symptom.quote if symptom else "") if x)
    errors = [
        f
        for f in c.chain
        if f.kind in (K.LOG_ERROR, K.DEPENDENCY_FAILURE, K.SATURATION, K.CONFIG_ERROR)
    ]
    errors.sort(key=lambda f: not f.focus)  # the subject's own error first
    errors += [f for f in c.impact if f.severity == "error"][:1]  # its consumers' error
    for f in [
        *errors[:3],  # the first of them a person can grep for (a template, verbatim)
        *sorted([*c.followers, *c.support], key=lambda f: f.severity != "error"),
    ]:
        quote = (f.quote or "").strip()
        if f is symptom or f.kind == K.CHANGE or not quote or quote.lower() in seen:
            continue
        if not (f.detail or {}).get("pattern") or re.search(r"\d\s*->\s*\d", quote):
            continue  # a metric's numbers are not what a person greps for
        m = _EXCEPTION.search(quote)
        said = _said_at(quote, card_for(f))
        if m is not None and m.start() > 0:
            quote = quote[m.start() :]  # from the error's own name, verbatim
        elif said is not None and words(quote) > THEN_WORDS:
            quote = quote[said:]  # from what its failure mode was recognised by
        elif words(quote) > THEN_WORDS and ": " in quote:
            # "doing X: calling Y: context deadline exceeded": the innermost error is last
            quote = ": ".join(quote.split(": ")[-2:])
        if clip_words(quote, THEN_WORDS).removesuffix(" …").lower() in seen:
            continue  # the same error under another message: the cause already quotes it
        card = card_for(f)
        named = (
            f"{card.phrase}: "
            if not card.base
            and card.role == Role.CAUSE
            and card.phrase
            and card.phrase.lower() not in seen
            else ""
        )  # what the failure mode of the error that followed is, before its words
        plain = f'"{clip_words(quote, THEN_WORDS)}" {cite(f)}'.rstrip()
        return f"{named}{plain}", f, plain
    for f in c.chain:
        # an object's own account of what followed (the Certificate that then expired):
        # said in its own words, the object named
        if (
            f.kind == K.CONFIG_ERROR
            and f.subject is not None
            and f.subject.kind not in ("app", "Pod", "host")
            and f.statement.lower() not in seen
        ):
            plain = f"{clip_words(f.statement, NODE_THEN_WORDS)} {cite(f)}".rstrip()
            return plain, f, plain
    return None


def _said_at(quote: str, card: Card) -> int | None:
    """Where, in a wrapped error (``a: b: x509: certificate has expired``), the clause its
    card recognised begins, with the short name that prefixes it (``x509:``, ``pq:``)."""
    if card.base or not card.words:
        return None
    m = re.search(card.words, quote, re.I)
    if m is None:
        return None
    start = quote.rfind(": ", 0, m.start())
    if start < 0:
        return None
    before = quote.rfind(": ", 0, start)
    prefix = quote[before + 2 : start] if before >= 0 else ""
    return before + 2 if prefix and len(prefix) <= 8 and " " not in prefix else start + 2


def chain_steps(c: Candidate) -> list[tuple[str, list[str]]]:
    """The path from the symptom asked about to the cause, symptom first: the symptom the
    cause reaches, the links of ``c.chain`` in their order, the cause, then the change
    that triggered it. Each step is ``(statement, evidence ids)``; a fact appears once."""
    symptom = c.reaches or c.explains
    facts: list[Fact] = []
    for f in [symptom, *c.chain, c.lead, c.change]:
        if f is not None and all(f is not g for g in facts):
            facts.append(f)
    out = [
        (  # the trigger as what it changed (its full statement is a fact or hypothesis)
            change_phrase(f) if f is c.change and f is not c.lead else _link(f),
            list(f.evidence),
        )
        for f in facts
    ]
    return out if len(out) > 1 else []


def _link(f: Fact) -> str:
    """One link of the path, short: the component, then what it shows in the evidence's
    own words (the full sentence is among the facts or hypotheses)."""
    who = f.service or (f.subject.name if f.subject is not None else "")
    what = f.quote or f.statement
    if who and what.lower().startswith(who.lower()):
        what = what[len(who) :].lstrip(" :")
    text = clip_words(what, 16).rstrip(".")
    return f"{who} — {text}" if who else f"— {text}"


def cause_noun(f: Fact) -> str:
    """A short noun phrase for a fact's failure mode (``resource exhaustion``)."""
    card = card_for(f)
    return card.phrase if card.role in (Role.CAUSE, Role.CHANGE) and card.phrase else "a failure"
