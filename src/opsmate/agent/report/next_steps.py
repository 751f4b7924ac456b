"""Next steps for a confirmed cause: the read-only check that would confirm it further and
the mitigation a person decides on (``kind: mitigation``, ``requires_human: true``).

They come from the cause model — :data:`STEPS`, a table keyed by the cause's
:class:`~opsmate.agent.observe.facts.FactKind` — and from the runbook about the cause
when one matched (its own commands, cited by its R id). A report with a root cause never
has an empty list: every cause kind has a row, and an unknown kind falls back to
:data:`GENERIC`. Nothing here runs anything: these are suggestions for a person.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

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


STEPS: dict[K, StepRow] = {
    K.OOM_KILLED: StepRow(
        "compare memory use with the limit: `kubectl -n {ns} top pod` and "
        "`kubectl -n {ns} get {obj} -o jsonpath='{{.spec.containers[*].resources}}'`",
        "raise the memory limit of {workload} or fix what grows (a person decides; "
        "the change goes through the usual release)",
    ),
    K.LAST_WORDS: StepRow(
        "read the container's last lines before it exited: "
        "`kubectl -n {ns} logs {obj} --previous --tail=50`",
        "fix the configuration or code the message names, then roll out {workload} again",
    ),
    K.CONFIG_ERROR: StepRow(
        "compare the configuration the pods started with against the last good revision: "
        "`kubectl -n {ns} rollout history deployment/{workload} --revision=N`",
        "restore the previous value (or roll back: `kubectl -n {ns} rollout undo "
        "deployment/{workload}`)",
    ),
    K.IMAGE_PULL: StepRow(
        "check the image reference and the registry's answer: "
        "`kubectl -n {ns} describe {obj}` (Events)",
        "correct the image tag or the pull secret of {workload}, or roll back",
    ),
    K.SCHEDULING: StepRow(
        "see why the scheduler cannot place it: `kubectl -n {ns} describe {obj}` and "
        "`kubectl describe nodes | grep -A5 Allocated`",
        "free or add capacity, or correct the requests / tolerations / affinity of {workload}",
    ),
    K.MISSING_REFERENCE: StepRow(
        "confirm the referenced object is missing: `kubectl -n {ns} get {target}`",
        "create the missing {target} (or correct the reference in {workload})",
    ),
    K.PROBE_FAILURE: StepRow(
        "see the probe and its failures: `kubectl -n {ns} describe {obj}` (Liveness / "
        "Readiness, Events)",
        "correct the probe (path, port, timeout) of {workload} or what makes it slow",
    ),
    K.QUOTA_REFUSAL: StepRow(
        "compare usage with the quota: `kubectl -n {ns} describe resourcequota`",
        "raise the quota or lower the requests of {workload} (a person decides)",
    ),
    K.DEPENDENCY_FAILURE: StepRow(
        "check the dependency the errors name: `kubectl -n {ns} get pods,svc,endpoints` "
        "and its own logs",
        "restore {target} (or fail over); then watch the error rate of {workload}",
    ),
    K.SELECTOR_MISMATCH: StepRow(
        "compare the selector with the pods' labels: `kubectl -n {ns} get endpoints` and "
        "`kubectl -n {ns} get pods --show-labels`",
        "correct the selector or the labels so they match",
    ),
    K.NETWORK_POLICY: StepRow(
        "list the policies that select the pods: `kubectl -n {ns} get networkpolicy -o yaml`",
        "allow the traffic in the NetworkPolicy (a reviewed change), or revert the policy",
    ),
    K.RBAC_DENIED: StepRow(
        "confirm the permission: `kubectl auth can-i --as=system:serviceaccount:{ns}:NAME "
        "VERB RESOURCE -n {ns}`",
        "grant the missing permission with a Role/RoleBinding (a reviewed change)",
    ),
    K.MISCONFIGURATION: StepRow(
        "inspect the object the finding names: `kubectl -n {ns} get {obj} -o yaml`",
        "correct the setting on {workload} (a reviewed change)",
    ),
    K.SATURATION: StepRow(
        "compare use with capacity over the window (in use pinned at the maximum means "
        "exhausted; a capacity that changed points at a release)",
        "restore the previous capacity or roll back {workload}; scale only within what the "
        "backend can take",
    ),
    K.NODE_PROBLEM: StepRow(
        "check the node's conditions: `kubectl describe node {target}`",
        "cordon and drain the node, then fix or replace it (a person decides)",
    ),
    K.LOG_ERROR: StepRow(
        "read the error in context: the log lines around its first occurrence for {workload}",
        "fix what the error names, or roll back {workload} if it began with a release",
    ),
    K.CHANGE: StepRow(
        "compare the revision with the previous one: "
        "`kubectl -n {ns} rollout history deployment/{workload}`",
        "roll back: `kubectl -n {ns} rollout undo deployment/{workload}` (or fix forward)",
    ),
}
GENERIC = StepRow(
    "re-read the cited evidence for {workload} over a wider window to confirm the cause",
    "decide on a fix for {workload} with its owners; nothing was changed by opsmate",
)


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
    row = STEPS.get(lead.kind, GENERIC)
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
                action=STEPS[K.CHANGE].mitigation.format(**_values(change, change)),
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
