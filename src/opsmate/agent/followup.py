"""Follow-up questions answered as follow-ups.

In a session, a second question ("check the prod error rate too", "what about the
worker?") is answered by leading with what was asked: a request outside the session's
constraints is refused, naming the constraint (the environment never widens, a
restriction to some services never grows); then what changed in the task state since the
previous answer (new facts, a new or unchanged root cause). The full report stays
available beside it. Pure functions over the state and the reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from opsmate.agent.intake import detect_environment, detect_services
from opsmate.agent.report import FollowUp, Report, ReportFact
from opsmate.agent.state import TaskState


@dataclass
class FollowUpContext:
    """What a follow-up's answer is measured against: the refusals, the facts known
    before it, and the previous report."""

    refused: list[str]
    known_facts: set[str] = field(default_factory=set)
    previous: Report | None = None

    def answer(self, question: str, state: TaskState, report: Report, clean: Any) -> FollowUp:
        """The follow-up answer for ``report`` (``clean``: the store's redacting clipper)."""
        new = [
            ReportFact(statement=clean(f.statement, 500), evidence=list(f.evidence))
            for f in state.facts
            if f.key not in self.known_facts
        ]
        return compose(question, new, report, self.previous, self.refused)


def refusals(question: str, state: TaskState, known_envs: list[str], known: list[str]) -> list[str]:
    """What a follow-up asks for that the session's constraints do not allow."""
    out: list[str] = []
    c = state.constraints
    asked = detect_environment(question, known_envs)
    if asked and c.environment and asked != c.environment:
        out.append(
            f"'{asked}' is not read: this session is limited to '{c.environment}' (the "
            f"environment set by the first question); start a new session for {asked}"
        )
    if c.allowed_services:
        for svc in detect_services(question, known):
            if svc not in c.allowed_services:
                out.append(
                    f"'{svc}' is not read: this session is limited to "
                    f"{', '.join(c.allowed_services)}"
                )
    return out


def compose(
    question: str,
    new: list[ReportFact],
    report: Report,
    previous: Report | None,
    refused: list[str],
) -> FollowUp:
    """The follow-up answer: refusals first, then ``new`` facts and the root cause now."""
    new = new[:6]
    prev_root = previous.root_cause.statement if previous and previous.root_cause else None
    now_root = report.root_cause.statement if report.root_cause else None
    changed = _core(prev_root) != _core(now_root)
    parts: list[str] = []
    if refused:
        parts.append("Not done: " + "; ".join(refused) + ".")
    calls = report.budget.steps
    if new:
        parts.append(
            f"{calls} read-only call(s) for this question found {len(new)} new fact(s): "
            + "; ".join(f"{f.statement} [{', '.join(f.evidence)}]" for f in new[:3])
            + ("; ..." if len(new) > 3 else "")
            + "."
        )
    elif calls:
        parts.append(f"{calls} read-only call(s) for this question found nothing new.")
    if changed and now_root:
        parts.append(f"The root cause changed: {_core(now_root)}.")
    elif now_root:
        parts.append("The root cause is unchanged (the full report follows).")
    elif prev_root:
        parts.append("The earlier root cause no longer holds; see the report.")
    else:
        parts.append(f"Still no root cause: {report.summary}")
    return FollowUp(
        question=question,
        answer=" ".join(parts),
        refused=refused,
        new_facts=new,
        root_changed=changed,
        previous_root=prev_root,
    )


_IDS = re.compile(r"\s*\((?:[ER]\d+(?:,\s*)?)+\)")


def _core(statement: str | None) -> str:
    """The first sentence of a root-cause statement without its evidence ids."""
    if not statement:
        return ""
    return _IDS.sub("", statement).split(". ")[0].strip().rstrip(".")
