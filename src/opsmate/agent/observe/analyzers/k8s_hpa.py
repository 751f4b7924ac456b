"""HorizontalPodAutoscalers that cannot scale, and why.

- ``ScalingActive=False`` (FailedGetResourceMetric, FailedGetExternalMetric, InvalidSelector
  ...): the HPA cannot compute its metrics -> MISCONFIGURATION quoting the condition;
  for a resource metric (cpu / memory utilization) the target's containers that request
  no such resource are named (utilization is computed against the request);
- ``AbleToScale=False`` (FailedGetScale ...): the target cannot be read -> its target
  proven absent is a MISSING_REFERENCE, else a MISCONFIGURATION quoting the condition;
- ``ScalingLimited=True`` at ``maxReplicas`` with more replicas wanted -> SATURATION.
"""

from __future__ import annotations

import re

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, quoted, ref
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.registry import over_graph
from opsmate.records.k8s import Condition
from opsmate.records.k8s_objects import HorizontalPodAutoscaler, Workload

_RESOURCE_METRIC = re.compile(r"^(cpu|memory) (utilization|average)")


def _cond(h: HorizontalPodAutoscaler, ctype: str) -> Condition | None:
    return next((c for c in h.conditions if c.type == ctype), None)


@over_graph
@graph_cached
def autoscalers(ctx: ObserveContext) -> list[Fact]:
    """Each HPA's conditions, with its target from the graph."""
    g = ctx.graph
    facts: list[Fact] = []
    for h in g.all("HorizontalPodAutoscaler"):
        if not isinstance(h, HorizontalPodAutoscaler) or not h.name:
            continue
        ns = h.namespace
        me = ref("HorizontalPodAutoscaler", h.name, ns)
        tkind, tname = h.target.kind or "Deployment", h.target.name
        target = g.get(tkind, ns, tname) if tname else None
        tref = [ref(tkind, tname, ns)] if tname else []
        ev = evidence(g, ("HorizontalPodAutoscaler", ns, h.name), (tkind, ns, tname))
        who = f"HorizontalPodAutoscaler `{h.name}` (target {tkind} `{tname}`)"
        active, able, limited = (
            _cond(h, t) for t in ("ScalingActive", "AbleToScale", "ScalingLimited")
        )
        if able is not None and able.status == "False":
            proof = g.absent(tkind, ns, tname) if tname else None
            if proof:
                facts.append(
                    k8s_fact(
                        ctx,
                        K.MISSING_REFERENCE,
                        f"hpa-target:{ns}:{h.name}",
                        f"{who} cannot scale: its scaleTargetRef {tkind} `{tname}` does not exist "
                        f"({able.reason}: {able.message})",
                        subject=me,
                        evidence=evidence(g, ev[0] if ev else None, proof),
                        objects=tref,
                        reason=able.reason,
                        message=able.message,
                        detail={"target": f"{tkind}/{tname}"},
                    )
                )
            else:
                facts.append(_condition_fact(ctx, h, who, able, tref, ev, "hpa-unable"))
        if active is not None and active.status == "False":
            lacking = _no_request(h, target)
            extra = (
                (
                    f"; container(s) {quoted(lacking)} of {tkind} `{tname}` request no "
                    f"{_resources(h)}, and utilization is computed against the request"
                )
                if lacking
                else ""
            )
            facts.append(
                _condition_fact(ctx, h, who, active, tref, ev, "hpa-metrics", extra, lacking)
            )
        if (
            limited is not None
            and limited.status == "True"
            and h.max_replicas is not None
            and (h.desired_replicas or 0) >= h.max_replicas
        ):
            facts.append(
                k8s_fact(
                    ctx,
                    K.SATURATION,
                    f"hpa-max:{ns}:{h.name}",
                    f"{who} is held at maxReplicas {h.max_replicas} ({limited.reason}: "
                    f"{limited.message}); current metrics: "
                    f"{', '.join(h.current_metrics) or 'unknown'}",
                    subject=me,
                    evidence=ev,
                    objects=tref,
                    severity="warning",
                    reason=limited.reason,
                    message=limited.message,
                    detail={"max_replicas": h.max_replicas, "desired_replicas": h.desired_replicas},
                )
            )
    return facts


def _resources(h: HorizontalPodAutoscaler) -> str:
    names = sorted({m.split()[0] for m in h.metrics if _RESOURCE_METRIC.match(m)})
    return " / ".join(names) or "cpu"


def _no_request(h: HorizontalPodAutoscaler, target: object) -> list[str]:
    """Containers of the target's template that request none of the HPA's resources."""
    if not isinstance(target, Workload) or target.template is None:
        return []
    names = [m.split()[0] for m in h.metrics if _RESOURCE_METRIC.match(m) and "utilization" in m]
    out = []
    for c in target.template.containers:
        req = c.resources.requests if c.resources else {}
        if any(n not in req for n in names):
            out.append(str(c.name))
    return out


def _condition_fact(
    ctx: ObserveContext,
    h: HorizontalPodAutoscaler,
    who: str,
    c: Condition,
    tref: list,
    ev: list[str],
    key: str,
    extra: str = "",
    lacking: list[str] | None = None,
) -> Fact:
    what = "cannot compute its metrics" if c.type == "ScalingActive" else "cannot scale"
    return k8s_fact(
        ctx,
        K.MISCONFIGURATION,
        f"{key}:{h.namespace}:{h.name}",
        f"{who} {what} ({c.type}=False, {c.reason}): {c.message}{extra}",
        subject=ref("HorizontalPodAutoscaler", h.name, h.namespace),
        evidence=ev,
        objects=tref,
        reason=c.reason,
        message=c.message,
        detail={
            "condition": c.type,
            "metrics": h.metrics,
            "containers_without_request": lacking or [],
        },
    )
