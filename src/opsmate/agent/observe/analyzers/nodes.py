"""Nodes: conditions that are not as they should be (NotReady, memory/disk/PID pressure)."""

from __future__ import annotations

from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.registry import for_tools
from opsmate.agent.observe.text import clip, hm
from opsmate.agent.signals import match_terms
from opsmate.records.payloads import nodes_in
from opsmate.tools.base import ToolResult


@for_tools("node_conditions")
def nodes(result: ToolResult, ctx: ObserveContext) -> list[Fact]:
    """One fact per bad condition of each node (Ready=False/Unknown, any pressure=True)."""
    records = nodes_in(result.payload)
    ctx.graph.add_listing(
        "Node",
        records,
        ctx.eid,
        namespace=None,
        complete=result.complete and not result.args.get("name"),
    )
    facts = []
    for n in records:
        for c in n.conditions:
            bad = (c.type == "Ready") != (c.status == "True")
            if not bad:
                continue
            cond = f"{c.type}={c.status}"
            facts.append(
                Fact(
                    key=f"node:{n.name}:{c.type}",
                    statement=f"node {n.name} reports {cond} since {hm(c.last_transition_time)}: "
                    f"{c.reason}: {clip(c.message, 200)}",
                    evidence=[ctx.eid],
                    kind=FactKind.NODE_PROBLEM,
                    severity="error",
                    service=n.name,
                    time=c.last_transition_time,
                    quote=f"{c.type} ({c.reason}: {clip(c.message, 140)})",
                    terms=list(match_terms(f"{c.type} {c.reason} {c.message}"))[:20],
                    focus=ctx.is_focus(n.name),
                    subject=ObjRef(kind="Node", name=str(n.name)),
                    reason=c.reason or c.type,
                    message=c.message,
                    detail={"condition": c.type, "status": c.status},
                )
            )
        if n.unschedulable:
            facts.append(
                Fact(
                    key=f"node:{n.name}:unschedulable",
                    statement=f"node {n.name} is cordoned (unschedulable)",
                    evidence=[ctx.eid],
                    kind=FactKind.NODE_PROBLEM,
                    severity="warning",
                    service=n.name,
                    subject=ObjRef(kind="Node", name=str(n.name)),
                    reason="Unschedulable",
                    detail={"condition": "Unschedulable"},
                )
            )
    return facts
