"""ResourceQuotas and LimitRanges: refusals, explained with the quota's numbers.

- a refusal the API server reported (a ``FailedCreate`` event or a ``ReplicaFailure``
  condition: ``exceeded quota: q, requested: ..., used: ..., limited: ...``, ``failed
  quota: q: must specify limits.cpu``, ``maximum cpu usage per Container is ...``) ->
  QUOTA_REFUSAL naming the quota and the resource, with its hard and used values and,
  for "must specify", the containers of the workload's template that lack the field;
- a workload short of replicas whose template cannot pass a quota of its namespace —
  a container without a field the quota limits (``limits.cpu``) and no LimitRange
  default for it, or a pod request that no longer fits (used + request > hard) ->
  QUOTA_REFUSAL (inferred from the objects, said so);
- a template container beyond a LimitRange's max / below its min -> QUOTA_REFUSAL;
- a quota used up (used >= hard) -> SATURATION (warning).
"""

from __future__ import annotations

from typing import Any

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, quoted, ref
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.observe.k8s_messages import read_message
from opsmate.agent.observe.registry import over_graph
from opsmate.records.k8s import Pod
from opsmate.records.k8s_objects import LimitRange, ResourceQuota, Workload
from opsmate.records.quantity import parse_quantity

_WORKLOADS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")


def _field(resource: str) -> tuple[str, str]:
    """``limits.cpu`` -> (limits, cpu); ``cpu`` / ``requests.cpu`` -> (requests, cpu)."""
    if "." in resource:
        head, _, name = resource.partition(".")
        if head in ("limits", "requests"):
            return head, name
    return "requests", resource


def _compute(resource: str) -> bool:
    return _field(resource)[1] in ("cpu", "memory", "ephemeral-storage") or resource.startswith(
        "requests.nvidia.com"
    )


def _lacking(pod: Pod, resource: str, defaults: set[str]) -> list[str]:
    """Containers of ``pod`` that do not set ``resource`` (a LimitRange default counts)."""
    part, name = _field(resource)
    if f"{part}.{name}" in defaults:
        return []
    out = []
    for c in pod.containers:
        values = (
            (c.resources.limits if part == "limits" else c.resources.requests)
            if c.resources
            else {}
        )
        has_limit = bool(c.resources and name in c.resources.limits)
        if name not in values and not (
            part == "requests" and has_limit
        ):  # a limit implies a request
            out.append(str(c.name))
    return out


def _defaults(g: ObjectGraph, ns: str | None) -> set[str]:
    out = set()
    for lr in g.all("LimitRange", ns):
        if isinstance(lr, LimitRange):
            for item in lr.limits:
                if item.type in (None, "Container"):
                    out |= {f"limits.{k}" for k in item.default}
                    out |= {f"requests.{k}" for k in item.default_request}
                    out |= {f"requests.{k}" for k in item.default}  # a default limit implies one
    return out


def _per_pod(pod: Pod, resource: str) -> float:
    part, name = _field(resource)
    total = 0.0
    for c in pod.containers:
        if c.resources is None:
            continue
        src = (
            c.resources.limits if part == "limits" else (c.resources.requests or c.resources.limits)
        )
        total += parse_quantity(src.get(name)) or 0.0
    return total


@over_graph
@graph_cached
def quotas(ctx: ObserveContext) -> list[Fact]:
    """Quota and LimitRange refusals, reported or inferred, and quotas used up."""
    g = ctx.graph
    facts = _reported(ctx)
    seen = {f.key for f in facts}
    for q in g.all("ResourceQuota"):
        if not isinstance(q, ResourceQuota) or not q.name:
            continue
        facts += [f for f in _inferred(ctx, q) if f.key not in seen]
        facts += _used_up(ctx, q)
    facts += _limit_ranges(ctx)
    return facts


def _short(w: Workload) -> bool:
    return (w.replicas.desired or 0) > (w.replicas.current or 0)


def _templates(g: ObjectGraph, ns: str | None) -> list[tuple[str, Workload]]:
    out = []
    for kind in _WORKLOADS:
        for w in g.all(kind, ns):
            if isinstance(w, Workload) and w.template is not None and w.name and _short(w):
                out.append((kind, w))
    return out


def _inferred(ctx: ObserveContext, q: ResourceQuota) -> list[Fact]:
    g, ns = ctx.graph, q.namespace
    out = []
    defaults = _defaults(g, ns)
    lr_note = "" if g.listed("LimitRange", ns) else " (no LimitRange of the namespace was read)"
    for kind, w in _templates(g, ns):
        assert w.template is not None
        for resource, hard in sorted(q.hard.items()):
            if not _compute(resource):
                continue
            lacking = _lacking(w.template, resource, defaults)
            if lacking:
                out.append(
                    k8s_fact(
                        ctx,
                        K.QUOTA_REFUSAL,
                        f"quota-must:{ns}:{q.name}:{resource}:{w.name}",
                        f"ResourceQuota `{q.name}` limits `{resource}` (hard {hard}), "
                        "so every pod in "
                        f"{ns} must specify `{resource}`; container(s) {quoted(lacking)} of {kind} "
                        f"`{w.name}` do not{lr_note}, so its pods are refused "
                        f"({w.replicas.current or 0} of {w.replicas.desired} created)",
                        subject=ref("ResourceQuota", q.name, ns),
                        evidence=evidence(g, ("ResourceQuota", ns, q.name), (kind, ns, w.name)),
                        objects=[ref(kind, w.name, ns)],
                        reason="QuotaFieldMissing",
                        detail={
                            "quota": q.name,
                            "resource": resource,
                            "containers": lacking,
                            "hard": hard,
                            "inferred": True,
                        },
                    )
                )
                continue
            need, cap = _per_pod(w.template, resource), parse_quantity(hard)
            used = parse_quantity(q.used.get(resource)) or 0.0
            if need and cap is not None and used + need > cap:
                out.append(
                    k8s_fact(
                        ctx,
                        K.QUOTA_REFUSAL,
                        f"quota-exceeded:{ns}:{q.name}:{resource}:{w.name}",
                        f"ResourceQuota `{q.name}` would be exceeded: each pod of "
                        f"{kind} `{w.name}` "
                        f"needs {resource} {_fmt(need, hard)}, and {q.used.get(resource, '0')} of "
                        f"{hard} is already used, so its pods are refused "
                        f"({w.replicas.current or 0} of {w.replicas.desired} created)",
                        subject=ref("ResourceQuota", q.name, ns),
                        evidence=evidence(g, ("ResourceQuota", ns, q.name), (kind, ns, w.name)),
                        objects=[ref(kind, w.name, ns)],
                        reason="QuotaExceeded",
                        detail={
                            "quota": q.name,
                            "resource": resource,
                            "hard": hard,
                            "used": q.used.get(resource),
                            "inferred": True,
                        },
                    )
                )
    return out


def _fmt(value: float, like: str) -> str:
    from opsmate.records.quantity import format_quantity

    return format_quantity(value, like)


def _used_up(ctx: ObserveContext, q: ResourceQuota) -> list[Fact]:
    full = []
    for resource, hard in sorted(q.hard.items()):
        cap, used = parse_quantity(hard), parse_quantity(q.used.get(resource))
        if cap is not None and used is not None and used >= cap:
            full.append(f"{resource} {q.used.get(resource)} of {hard}")
    if not full:
        return []
    return [
        k8s_fact(
            ctx,
            K.SATURATION,
            f"quota-full:{q.namespace}:{q.name}",
            f"ResourceQuota `{q.name}` in {q.namespace} is used up: {'; '.join(full)}",
            subject=ref("ResourceQuota", q.name, q.namespace),
            severity="warning",
            evidence=evidence(ctx.graph, ("ResourceQuota", q.namespace, q.name)),
            reason="QuotaUsedUp",
            detail={"quota": q.name, "full": full},
        )
    ]


def _reported(ctx: ObserveContext) -> list[Fact]:
    """Refusals the API server reported, with the quota's numbers and the lacking containers."""
    g = ctx.graph
    out: dict[str, Fact] = {}
    for e, eid in g.events:
        ns = e.object.namespace or e.namespace
        reading = read_message(e.reason, e.message, ns)
        if reading is None or reading.kind != K.QUOTA_REFUSAL or not e.object.name:
            continue
        d: dict[str, Any] = reading.detail
        name = d.get("quota")
        q = g.get("ResourceQuota", ns, name) if name else None
        owner = (e.object.kind or "ReplicaSet", ns, e.object.name)
        w = g.get(owner[0], ns, owner[2])
        resources = list(d.get("resources") or [])
        extra = []
        if isinstance(q, ResourceQuota):
            extra = [
                f"{r}: used {q.used.get(r, '?')} of hard {q.hard.get(r, '?')}" for r in resources
            ]
        lacking = []
        if d.get("must_specify") and isinstance(w, Workload) and w.template is not None:
            for r in resources:
                lacking += [c for c in _lacking(w.template, r, set()) if c not in lacking]
        if not extra and not lacking:
            continue  # the event's own fact says all we know
        what = f"ResourceQuota `{name}`" if name else "a LimitRange"
        tail = f"; {'; '.join(extra)}" if extra else ""
        tail += (
            f"; container(s) {quoted(lacking)} specify no {', '.join(resources)}" if lacking else ""
        )
        key = f"quota-refused:{ns}:{name}:{','.join(resources)}:{e.object.name}"
        out[key] = k8s_fact(
            ctx,
            K.QUOTA_REFUSAL,
            key,
            f"{what} refuses pods of {e.object.kind} `{e.object.name}` "
            f"({', '.join(f'`{r}`' for r in resources)}): {e.message}{tail}",
            subject=ref("ResourceQuota", name, ns) if name else ref(owner[0], owner[2], ns),
            evidence=evidence(g, eid, ("ResourceQuota", ns, name), owner),
            objects=[ref(owner[0], owner[2], ns)],
            reason=e.reason,
            message=e.message,
            detail={**d, "containers": lacking},
        )
    return list(out.values())


def _limit_ranges(ctx: ObserveContext) -> list[Fact]:
    g = ctx.graph
    out = []
    for lr in g.all("LimitRange"):
        if not isinstance(lr, LimitRange) or not lr.name:
            continue
        for kind, w in _templates(g, lr.namespace):
            assert w.template is not None
            for item in lr.limits:
                if item.type not in (None, "Container"):
                    continue
                for c in w.template.containers:
                    res = c.resources
                    for name, top in item.max.items():
                        have = res.limits.get(name) if res else None
                        if have and (parse_quantity(have) or 0) > (parse_quantity(top) or 0):
                            out.append(
                                _lr_fact(
                                    ctx,
                                    lr,
                                    kind,
                                    w,
                                    str(c.name),
                                    f"limits.{name}",
                                    f"maximum {top}",
                                    have,
                                )
                            )
                    for name, low in item.min.items():
                        have = res.requests.get(name) if res else None
                        if have and (parse_quantity(have) or 0) < (parse_quantity(low) or 0):
                            out.append(
                                _lr_fact(
                                    ctx,
                                    lr,
                                    kind,
                                    w,
                                    str(c.name),
                                    f"requests.{name}",
                                    f"minimum {low}",
                                    have,
                                )
                            )
    return out


def _lr_fact(
    ctx: ObserveContext,
    lr: LimitRange,
    kind: str,
    w: Workload,
    container: str,
    resource: str,
    bound: str,
    have: str,
) -> Fact:
    ns = lr.namespace
    return k8s_fact(
        ctx,
        K.QUOTA_REFUSAL,
        f"limitrange:{ns}:{lr.name}:{w.name}:{container}:{resource}",
        f"LimitRange `{lr.name}` sets a per-container {bound} for `{resource}`, but container "
        f"`{container}` of {kind} `{w.name}` sets {have}, so its pods are refused",
        subject=ref("LimitRange", lr.name, ns),
        evidence=evidence(ctx.graph, ("LimitRange", ns, lr.name), (kind, ns, w.name)),
        objects=[ref(kind, w.name, ns)],
        reason="LimitRangeViolated",
        detail={
            "limit_range": lr.name,
            "resource": resource,
            "container": container,
            "value": have,
            "bound": bound,
        },
    )
