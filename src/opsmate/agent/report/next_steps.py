"""Next steps for a confirmed cause: the read-only check that would confirm it further and
the mitigation a person decides on (``kind: mitigation``, ``requires_human: true``).

They come from the failure-mode card of the cause (:mod:`opsmate.agent.kinds`: its
``check`` and ``mitigation``) and from the runbook about the cause when one matched (its
own commands, cited by its R id). A report with a root cause never has an empty list:
every cause card has both, and a card without them falls back to :data:`GENERIC`.
Nothing here runs anything: these are suggestions for a person.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from opsmate.agent.kinds import card_for
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.text import workload_of
from opsmate.agent.report.model import ReportNextStep

if TYPE_CHECKING:
    from opsmate.agent.judge.candidates import Candidate


@dataclass(frozen=True)
class StepRow:
    """What confirms a kind of cause (read-only) and what mitigates it (a person's call).
    Both are templates over ``{ns}`` (namespace), ``{obj}`` (the object, ``pod/x``),
    ``{workload}`` (its Deployment / controller name) and ``{target}`` (what it names)."""

    check: str
    mitigation: str


GENERIC = StepRow(
    "re-read the cited evidence for {workload} over a wider window to confirm the cause",
    "decide on a fix for {workload} with its owners; nothing was changed by opsmate",
)


def steps_for(f: Fact) -> StepRow:
    """The check and the mitigation of the fact's failure-mode card (:data:`GENERIC` when
    its card has none)."""
    card = card_for(f)
    if card.check and card.mitigation:
        return StepRow(card.check, card.mitigation)
    return GENERIC


def _values(lead: Fact, change: Fact | None) -> dict[str, str]:
    subj = lead.subject
    ns = (subj.namespace if subj else None) or "NAMESPACE"
    obj = f"{subj.kind.lower()}/{subj.name}" if subj and subj.kind not in ("app", "host") else ""
    name = subj.name if subj else (lead.service or "")
    if change is not None and change.subject is not None:
        workload = change.subject.name
    elif subj is not None and subj.kind == "Pod":
        workload = workload_of(subj.name) or subj.name
    else:
        workload = lead.service or name or "the workload"
    target = next((f"{o.kind.lower()}/{o.name}" for o in lead.objects), "") or obj or workload
    return {
        "ns": ns,
        "obj": obj or f"deployment/{workload}",
        "workload": workload,
        "target": target,
    }


def from_cause(root: Candidate) -> list[ReportNextStep]:
    """The check and the mitigation for the root cause's kind (and its trigger)."""
    lead = root.lead
    values = _values(lead, root.change)
    row = steps_for(lead)
    ev = [e for e in lead.evidence if e.startswith("E")] or list(lead.evidence)
    out = [
        ReportNextStep(
            action=row.check.format(**values), kind="check", requires_human=False, evidence=ev
        ),
        ReportNextStep(
            action=row.mitigation.format(**values),
            kind="mitigation",
            requires_human=True,
            evidence=ev,
        ),
    ]
    change = root.change
    if change is not None and change is not lead and lead.kind != K.CHANGE:
        cv = [e for e in change.evidence if e.startswith("E")] or list(change.evidence)
        out.append(
            ReportNextStep(
                action=steps_for(change).mitigation.format(**_values(change, change)),
                kind="mitigation",
                requires_human=True,
                evidence=cv,
            )
        )
    return out


def merge(
    runbook: list[ReportNextStep],
    model: list[ReportNextStep],
    limit: int = 8,
    key: Callable[[ReportNextStep], str] = lambda s: s.action.strip().lower(),
) -> list[ReportNextStep]:
    """The runbook's steps first, then the cause model's, without duplicates; at least one
    check and one mitigation survive the limit when either list has them."""
    out: list[ReportNextStep] = []
    seen: set[str] = set()
    for s in [*runbook, *model]:
        k = key(s)
        if k not in seen:
            seen.add(k)
            out.append(s)
    kept = out[:limit]
    for kind in ("check", "mitigation"):
        if not any(s.kind == kind for s in kept):
            extra = next((s for s in out if s.kind == kind), None)
            if extra is not None:
                kept = [*kept[: limit - 1], extra]
    return kept
