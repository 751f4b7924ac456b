"""The structured task state: the investigation's memory.

Goal, constraints, facts citing evidence ids, hypotheses with status, actions
tried and their outcome, pending checks. Conversation history may be trimmed;
this state never is. :meth:`TaskState.render` gives the compact text a model
sees every turn (the constraints and goal always; the rest newest/strongest
first within a size limit).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from opsmate.agent.intake.subject import Subject
from opsmate.agent.observe.facts import Fact, Severity
from opsmate.textsafe import fence, neutralise_fences
from opsmate.timeparse import format_time
from opsmate.tools.base import Constraints

__all__ = ["ActionTried", "Fact", "Hypothesis", "NextStep", "PendingCheck", "Severity", "TaskState"]
HypothesisStatus = Literal["open", "confirmed", "refuted"]
CheckSource = Literal["runbook_check", "runbook_command", "rule", "model", "user"]


class Hypothesis(BaseModel):
    key: str
    statement: str
    status: HypothesisStatus = "open"
    evidence: list[str] = Field(default_factory=list)
    score: float = 0.0
    runbooks: list[str] = Field(default_factory=list)  # R ids that match it
    why: str = ""
    failure_mode: str | None = None  # the id of its failure-mode card (docs/failure-modes.md)


class ActionTried(BaseModel):
    step: int
    call_id: str
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    status: str
    outcome: str = ""
    evidence_id: str | None = None
    source: CheckSource = "rule"
    reason: str = ""
    rejected_reason: str | None = None


class PendingCheck(BaseModel):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    reason: str = ""
    source: CheckSource = "rule"
    runbook: str | None = None  # R id the check came from
    priority: int = 50  # lower runs first
    essential: bool = False  # baseline survey: steps are kept in reserve for it
    trigger: str | None = None  # E id that prompted a reactive rule
    trigger_fact: str | None = None  # key of the fact that prompted it
    rule: str | None = None  # the rule that proposed it (a fact's card reads: "card_reads")
    held_from: int | None = None  # its own priority, while held back (a fact unrelated to
    # the subject prompted it); restored once that fact turns out to be linked


class NextStep(BaseModel):
    action: str
    kind: Literal["check", "mitigation"] = "check"
    requires_human: bool = True
    evidence: list[str] = Field(default_factory=list)


class TaskState(BaseModel):
    """Everything the investigation knows; serialisable (sessions are saved as JSON)."""

    goal: str
    questions: list[str] = Field(default_factory=list)
    constraints: Constraints = Field(default_factory=Constraints)
    identifiers: list[str] = Field(default_factory=list)  # error codes, exception names
    onset: datetime | None = None  # when the problem started (hint from the question)
    subject: Subject = Field(default_factory=Subject)  # what the question is about
    mentioned_nodes: list[str] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    hypotheses: list[Hypothesis] = Field(default_factory=list)
    actions: list[ActionTried] = Field(default_factory=list)
    pending: list[PendingCheck] = Field(default_factory=list)
    mitigations: list[NextStep] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    # what depends on what, as the data shows it (observe/depgraph.py): edges as JSON
    dependencies: list[dict[str, Any]] = Field(default_factory=list)
    walk: list[dict[str, Any]] = Field(default_factory=list)  # subject -> root cause's component

    # -- updates -----------------------------------------------------------------
    def upsert_fact(self, fact: Fact) -> bool:
        """Add a fact, or merge evidence into the one with the same key; True when new."""
        for f in self.facts:
            if f.key == fact.key:
                for e in fact.evidence:
                    if e not in f.evidence:
                        f.evidence.append(e)
                if fact.detail.get("fuller_view") and fact.statement != f.statement:
                    # the same finding read again with more of it (an object read after its
                    # events): its words and details replace the first view's
                    f.statement, f.quote, f.detail = fact.statement, fact.quote, fact.detail
                    more = [o for o in [fact.subject, *fact.objects] if o and o != f.subject]
                    f.objects = [*f.objects, *(o for o in more if o not in f.objects)]
                    f.service = f.service or fact.service
                    f.terms = list(dict.fromkeys([*f.terms, *fact.terms]))
                elif fact.count > f.count:  # a fuller view of the same finding
                    f.statement, f.count, f.quote = fact.statement, fact.count, fact.quote
                    f.time = (
                        min(t for t in (f.time, fact.time) if t) if (f.time or fact.time) else None
                    )
                return False
        self.facts.append(fact)
        return True

    def add_pending(self, check: PendingCheck) -> None:
        self.pending.append(check)
        self.pending.sort(key=lambda c: c.priority)

    def add_mitigation(self, step: NextStep) -> None:
        if all(m.action != step.action for m in self.mitigations):
            self.mitigations.append(step)

    def confirmed(self) -> list[Hypothesis]:
        return [h for h in self.hypotheses if h.status == "confirmed"]

    # -- rendering -----------------------------------------------------------------
    def render_constraints(self) -> str:
        c = self.constraints
        env = f"{c.environment} ONLY (calls to any other environment are rejected)"
        parts = [f"environment: {env if c.environment else 'not set'}"]
        if c.services:
            parts.append("services in focus: " + ", ".join(c.services))
        if c.namespaces:
            parts.append("namespaces: " + ", ".join(c.namespaces))
        if c.window_from or c.window_to:
            wf = format_time(c.window_from) if c.window_from else "?"
            wt = format_time(c.window_to) if c.window_to else "now"
            parts.append(f"time window: {wf} .. {wt}")
        if self.onset:
            parts.append(f"reported onset: {format_time(self.onset)}")
        if self.identifiers:
            parts.append("identifiers: " + ", ".join(self.identifiers[:8]))
        return "\n".join(f"- {p}" for p in parts)

    def render(self, *, max_chars: int = 4000, max_actions: int = 8) -> str:
        """Compact text for a model turn; goal and constraints are always included."""
        head = [f"GOAL: {self.goal}"]
        if len(self.questions) > 1:
            head.append("LATEST QUESTION: " + self.questions[-1])
        head.append("CONSTRAINTS (enforced by the executor):")
        head.append(self.render_constraints())
        out = neutralise_fences("\n".join(head))  # a question cannot open or close a fence
        findings = ""  # quoted from tool output: fenced as data at the end
        sections: list[tuple[str, list[str]]] = []
        hyps = sorted(self.hypotheses, key=lambda h: (h.status != "confirmed", -h.score))
        sections.append(
            (
                "HYPOTHESES:",
                [
                    f"- ({h.status}, score {h.score:.1f}) {h.statement} [{', '.join(h.evidence)}]"
                    for h in hyps
                ],
            )
        )
        facts = sorted(
            self.facts,
            key=lambda f: ({"error": 0, "warning": 1, "info": 2}[f.severity], not f.focus),
        )
        sections.append(("FACTS:", [f"- {f.statement} [{', '.join(f.evidence)}]" for f in facts]))
        sections.append(
            (
                f"ACTIONS TRIED ({len(self.actions)} in all, latest last):",
                [
                    f"- {a.call_id} {a.tool} {_short_args(a.args)} -> {a.status}"
                    + (f" ({a.evidence_id})" if a.evidence_id else "")
                    + (f": {a.outcome}" if a.outcome else "")
                    for a in self.actions[-max_actions:]
                ],
            )
        )
        sections.append(
            (
                "PENDING CHECKS:",
                [f"- {p.tool} {_short_args(p.args)} ({p.reason})" for p in self.pending[:6]],
            )
        )
        for title, lines in sections:
            if not lines:
                continue
            block = title
            for line in lines:
                candidate = block + "\n" + line[:300]
                if len(out) + len(findings) + len(candidate) + _FENCE_COST > max_chars:
                    block += "\n- ..."
                    break
                block = candidate
            if len(out) + len(findings) + len(block) + _FENCE_COST > max_chars:
                break
            findings += "\n" + block
        if findings:
            out += "\n" + fence("task findings, quoted from tool output", findings.lstrip("\n"))
        return out


_FENCE_COST = 100  # characters the data fence around the findings adds


def _short_args(args: dict[str, Any]) -> str:
    text = ", ".join(f"{k}={v}" for k, v in args.items() if v not in (None, ""))
    return "{" + (text if len(text) <= 160 else text[:157] + "...") + "}"
