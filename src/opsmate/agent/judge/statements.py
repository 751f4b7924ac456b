"""Sentences rendered from the structured judgement (never the other way round).

"ledger-worker is crash-looping because pod ledger-worker-7d9f-x2x1q: container app
ended with \"LEDGER_REGION is undefined\" (E4). Supporting: ... CrashLoopBackOff ... (E2)."
Every clause cites the evidence ids of the facts it renders; the cause comes first and
whole, the clauses after it are kept short so the sentence stays readable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.text import clip

if TYPE_CHECKING:
    from opsmate.agent.judge.candidates import Candidate

SYMPTOM_PHRASE: dict[K, str] = {
    K.CRASH_LOOP: "is crash-looping",
    K.CONTAINER_EXIT: "keeps exiting",
    K.POD_PENDING: "is stuck in Pending",
    K.NOT_READY: "is not ready",
    K.EVICTED: "was evicted",
    K.JOB_FAILED: "failed",
    K.ERROR_RATE: "returns errors",
    K.LATENCY: "is slow",
    K.ALERT: "is alerting",
    K.METRIC_SHIFT: "changed behaviour",
}
CLAUSE = 260  # characters of a supporting clause


def cite(f: Fact) -> str:
    return f"({', '.join(f.evidence)})" if f.evidence else ""


def clause(f: Fact, limit: int = CLAUSE) -> str:
    return f"{clip(f.statement, limit)} {cite(f)}".rstrip()


def _who(c: Candidate, subject_label: str | None) -> str:
    if subject_label:
        return subject_label
    s = c.explains
    if s is not None and s.subject is not None:
        return s.subject.label()
    if c.lead.subject is not None:
        return c.lead.subject.label()
    return c.lead.service or "the system"


def root_statement(
    c: Candidate, subject_label: str | None, reported: K | None
) -> tuple[str, list[str]]:
    """The root-cause sentence for candidate ``c`` and the evidence ids it cites."""
    lead = c.lead
    evidence = list(lead.evidence)

    def add(facts: list[Fact]) -> None:
        evidence.extend(e for f in facts for e in f.evidence if e not in evidence)

    symptom = c.explains
    head = c.reaches or (symptom if c.explains_subject else None)
    kind = head.kind if head is not None else reported
    who = _who(c, subject_label)
    if lead.kind == K.CHANGE and head is not None:
        text = f"{who} {SYMPTOM_PHRASE.get(head.kind, 'has a problem')} since a change: "
        text += clause(lead, 600)
    elif kind is not None and kind in SYMPTOM_PHRASE:
        text = f"{who} {SYMPTOM_PHRASE[kind]} because {clause(lead, 600)}"
    else:
        text = clause(lead, 600)
    if c.rid and c.doc is not None:
        text += f'. This matches the runbook "{c.doc.title}" ({c.rid})'
        evidence.append(c.rid)
    for f in c.chain[:2]:
        text += f". That is why {clause(f)}"
    add(c.chain[:2])
    if c.followers:
        text += ". It came first; then " + "; then ".join(clause(f, 160) for f in c.followers[:3])
        add(c.followers[:3])
    if c.reaches is not None and c.reaches is not symptom:
        text += f". Seen as: {clause(c.reaches)}"
        add([c.reaches])
    if symptom is not None:
        if not (symptom.quote and symptom.quote == lead.quote):  # not the same record again
            text += f". Supporting: {clause(symptom)}"
        add([symptom])
    extra = [f for f in c.support if f is not symptom and f not in c.followers][:2]
    if extra:
        text += "; also " + "; ".join(clause(f, 200) for f in extra)
        add(extra)
    if c.impact:
        text += ". Downstream: " + "; ".join(clause(f, 200) for f in c.impact)
        add(c.impact)
    if c.change is not None and c.change is not lead:
        when = "after"
        if c.change.time and lead.time:
            delta = int((lead.time - c.change.time).total_seconds() // 60)
            when = "within a minute of" if delta < 1 else f"{delta} min after"
        text += f". It began {when} {clip(c.change.quote or c.change.statement, 300)} "
        text += cite(c.change)
        add([c.change])
    return text.rstrip().rstrip(".") + ".", evidence
