"""A derived fact: a resource in use reaching its capacity, across two metric results."""

from __future__ import annotations

import re
from collections.abc import Iterator

from opsmate.agent.evidence import EvidenceStore
from opsmate.agent.observe.analyzers.metrics_nodes import NODE_LABELS, node_name, runs_on
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.signals import metric_names
from opsmate.agent.state import TaskState
from opsmate.records.payloads import MetricsPayload

_CAP_WORDS = ("_max", "_limit", "_capacity", "_size", "_total_capacity")
_USE_WORDS = ("_in_use", "_used", "_usage", "_active", "_current", "_busy", "_open")


def _metric_answers(store: EvidenceStore) -> Iterator[tuple[str, MetricsPayload, str]]:
    """The metric answers read so far: (evidence id, payload, the query)."""
    for eid, res in store.results.items():
        if res.tool != "query_metrics" or res.status not in ("success", "partial"):
            continue
        m = res.payload_as(MetricsPayload)
        if m is not None:
            yield eid, m, m.query or str(res.args.get("query") or "")


def derive_saturation(store: EvidenceStore, state: TaskState) -> None:
    """``x_in_use`` reaching ``x_max`` (two recorded queries) -> a saturation fact."""
    seen: list[tuple[str, str, float, float]] = []  # (eid, name, max, last)
    for eid, m, query in _metric_answers(store):
        names = metric_names(query)
        if len(names) != 1 or not m.series:
            continue
        mx = max((s.max.value or 0.0) if s.max else 0.0 for s in m.series)
        last = max((s.last.value or 0.0) if s.last else 0.0 for s in m.series)
        seen.append((eid, names[0], float(mx), float(last)))
    for eu, nu, mxu, _ in seen:
        stem_u = next((nu[: -len(w)] for w in _USE_WORDS if nu.endswith(w)), None)
        if not stem_u:
            continue
        for ec, nc, _, lastc in seen:
            stem_c = next((nc[: -len(w)] for w in _CAP_WORDS if nc.endswith(w)), None)
            if stem_c != stem_u or lastc <= 0 or mxu < lastc:
                continue
            quote = f"{nu} reached {nc} ({mxu:g} of {lastc:g})"
            state.upsert_fact(
                Fact(
                    key=f"saturation:{stem_u}",
                    statement=f"{quote}: the resource is exhausted",
                    evidence=[eu, ec],
                    kind=FactKind.SATURATION,
                    severity="error",
                    quote=quote,
                    terms=[
                        nu.lower(),
                        nc.lower(),
                        *[p for p in stem_u.lower().split("_") if len(p) > 3],
                    ],
                    focus=True,
                    detail={"in_use": nu, "capacity": nc, "max": mxu, "limit": lastc},
                )
            )


def derive_node_limits(store: EvidenceStore, state: TaskState, graph: ObjectGraph) -> None:
    """A per-node series at its per-node limit (``x`` and ``x_limit``, two recorded queries):
    a node whose table is full. For the connection-tracking table (entries at
    ``node_nf_conntrack_entries_limit``) the kernel drops new connections there."""
    by_name: dict[str, tuple[str, dict[str, float]]] = {}
    for eid, m, query in _metric_answers(store):
        names = metric_names(query)
        if len(names) != 1:
            continue
        levels: dict[str, float] = {}
        for s in m.series:
            where = next((s.labels[k] for k in NODE_LABELS if s.labels.get(k)), None)
            if where and s.max and s.max.value is not None:
                levels[node_name(where, graph)] = float(s.max.value)
        if levels:
            by_name[names[0]] = (eid, levels)
    for name, (ec, limits) in by_name.items():
        if not name.endswith("_limit") or name[: -len("_limit")] not in by_name:
            continue
        used = name[: -len("_limit")]
        eu, levels = by_name[used]
        for node, top in sorted(levels.items()):
            cap = limits.get(node)
            if not cap or top < _NEAR * cap:
                continue
            full = "conntrack" in used
            says = "the node's conntrack table is full: new connections are dropped"
            quote = f"{used} on node {node} reached {name} ({top:g} of {cap:g})"
            runs = runs_on(node, graph)
            state.upsert_fact(
                Fact(
                    key=f"node-limit:{node}:{used}",
                    statement=f"{quote}: {says if full else 'the node is at its limit'}"
                    + (f" (it runs {', '.join(runs)})" if runs else ""),
                    evidence=[eu, ec],
                    kind=FactKind.SATURATION,
                    severity="error",
                    quote=quote,
                    subject=ObjRef(kind="Node", name=node),
                    reason="conntrack_full" if full else None,
                    terms=["node", node.lower(), used.lower()],
                    detail={"in_use": used, "capacity": name, "max": top, "limit": cap},
                )
            )


_LIMIT_Q = re.compile(r"resource_limits|spec_memory_limit|memory_limit", re.I)
_NEAR = 0.95  # a working set within 5% of the limit has reached it (the kernel kills there)


def derive_oom(store: EvidenceStore, state: TaskState) -> None:
    """A pod's memory that climbs to its container's memory limit and then drops (the leak
    pattern with resets) next to that limit (another recorded query): the kernel killed the
    container at the limit each time. The leak fact says so (its statement, the limit's
    evidence), for a cluster whose pod status no longer shows the kills (the instances
    were replaced) or was not read."""
    leaks = [
        f
        for f in state.facts
        if f.reason == "MemoryLeakPattern"
        and (f.detail or {}).get("resets")
        and not (f.detail or {}).get("limit")
    ]
    if not leaks:
        return  # nothing to read against a limit (most steps): no scan of the results
    limits: dict[str, tuple[str, float, str | None]] = {}  # pod -> (eid, limit, namespace)
    for eid, m, query in _metric_answers(store):
        if not _LIMIT_Q.search(query) or "cpu" in query.lower():
            continue
        for s in m.series:
            pod = s.labels.get("pod")
            if pod and s.last and s.last.value:
                limits[pod] = (eid, float(s.last.value), s.labels.get("namespace"))
    if not limits:
        return
    for f in leaks:
        pod = ((f.detail or {}).get("labels") or {}).get("pod")
        if pod not in limits:
            continue
        eid, limit, ns = limits[pod]
        ns = ns or (f.subject.namespace if f.subject else None) or _namespace_of(_query_of(f))
        high = float((f.detail or {}).get("high") or 0.0)
        if limit <= 0 or high < _NEAR * limit:
            continue
        resets = int(f.detail["resets"])
        head = f.statement.split(", dropping")[0].split(": a memory")[0]
        f.statement = (
            f"{head}, its limit ({_mib(limit)}), dropping {resets} time(s): a memory leak "
            "pattern, the container killed out of memory (OOM) at its limit each time"
        )
        f.quote = f"{f.quote or head}: at its {_mib(limit)} limit, OOM-killed"
        if eid not in f.evidence:
            f.evidence.append(eid)
        f.terms = [*f.terms, "oom", "limit"]
        f.detail = {**(f.detail or {}), "limit": limit, "oom_at_limit": True}
        if f.subject is None:
            f.subject = ObjRef(kind="Pod", name=pod, namespace=ns)


def _mib(n: float) -> str:
    return f"{n / 2**30:.1f}Gi" if n >= 2**30 else f"{n / 2**20:.0f}Mi"


_NS = re.compile(r'namespace="([^"]+)"')


def _query_of(f: Fact) -> str:
    return str((f.detail or {}).get("query") or "")


def _namespace_of(query: str) -> str | None:
    m = _NS.search(query)
    return m.group(1) if m else None
