"""A derived fact: the calls that fail all go to one node.

When a caller's calls to two or more of its dependencies time out or are reset, and every
pod of those dependencies runs on one node while other workloads of the same namespaces run
on other nodes, the common node is the most specific place the evidence points to: its
network (packet loss, a full conntrack table, a bad NIC) or its kernel, rather than each
dependency on its own. The fact is an inference from placement and is said as one.
"""

from __future__ import annotations

from opsmate.agent.judge.links import LOST_CALLS
from opsmate.agent.observe import depgraph
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.state import TaskState

__all__ = ["derive_shared_node"]


def derive_shared_node(state: TaskState, graph: ObjectGraph) -> None:
    """Add a ``NODE_PROBLEM`` fact (reason ``SharedNode``) when the failing calls' targets
    all live on one node (see module doc)."""
    fails = [
        f
        for f in state.facts
        if f.kind == FactKind.DEPENDENCY_FAILURE
        and f.severity in ("error", "warning")
        and f.reason in LOST_CALLS
        and not f.background
    ]
    if len(fails) < 2:
        return
    dg = depgraph.build(graph)
    pods = [p for p in graph.pods() if p.node]
    by_comp: dict[str, set[str]] = {}
    spaces: dict[str, str | None] = {}
    for p in pods:
        comp = depgraph.workload_of(p)
        by_comp.setdefault(comp, set()).add(str(p.node))
        spaces[comp] = p.namespace
    targets: dict[str, list[Fact]] = {}
    for f in fails:
        for o in f.objects:
            if o.kind in ("host", "Service", "app"):
                hit = dg.resolve(o.name)
                if hit and hit in by_comp:
                    targets.setdefault(hit, []).append(f)
    if len(targets) < 2:
        return
    nodes = set().union(*(by_comp[c] for c in targets))
    if len(nodes) != 1:
        return
    [node] = nodes
    namespaces = {spaces[c] for c in targets}
    elsewhere = sorted(
        c
        for c, where in by_comp.items()
        if c not in targets and spaces.get(c) in namespaces and node not in where
    )
    if not elsewhere:
        return  # nothing runs anywhere else: placement says nothing
    names = sorted(targets)
    used = [f for c in names for f in targets[c]]
    evidence = list(dict.fromkeys(e for f in used for e in f.evidence))
    pod_eids = [
        eid
        for p in pods
        if depgraph.workload_of(p) in targets
        and (eid := graph.source_of("Pod", p.namespace, p.name or ""))
    ]
    evidence += [e for e in dict.fromkeys(pod_eids) if e not in evidence]
    quote = (
        f"the calls that fail ({', '.join(names)}) all go to pods on node {node}; "
        f"{', '.join(elsewhere[:3])} on other nodes are not among them"
    )
    state.upsert_fact(
        Fact(
            key=f"shared-node:{node}",
            statement=f"{quote}: a fault of node {node} itself (its network or kernel: packet "
            "loss, a full conntrack table, a failing NIC) is the common cause the placement "
            "points to",
            evidence=evidence,
            kind=FactKind.NODE_PROBLEM,
            severity="error",
            quote=quote,
            subject=ObjRef(kind="Node", name=node),
            objects=[ObjRef(kind="app", name=c, namespace=spaces.get(c)) for c in names],
            time=min((f.time for f in used if f.time), default=None),
            last_time=max((f.last_time or f.time for f in used if f.time), default=None),
            count=len(used),
            focus=any(f.focus for f in used),
            reason="SharedNode",
            terms=["node", node.lower(), *names],
            detail={"node": node, "targets": names, "elsewhere": elsewhere[:5]},
        )
    )
