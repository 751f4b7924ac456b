"""Node-level network trouble read from node-exporter series: TCP retransmits, retransmit
timeouts, SYN retries, dropped or errored packets, per node.

Packets lost on one node's path (a NetworkChaos or netem ``loss``, a bad NIC, a saturated
link) leave no log line that says so; the kernel counts what it had to send again. A node
whose counter rose several times over while the other nodes' stayed where they were is
where the packets are lost: a ``NODE_PROBLEM`` fact (reason ``NodeNetworkLoss``) about that
Node, which the judge links to calls into the pods running there. A rise on every node at
once is load, not loss, and makes no fact.
"""

from __future__ import annotations

import re
from typing import Any

from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.depgraph import workload_of
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.text import hm
from opsmate.agent.signals import series_shift, to_time
from opsmate.records.metrics import Series

__all__ = ["node_network_loss"]

# what the kernel counts when packets are lost: resent segments, timeouts, SYN retries, drops
_LOSS = re.compile(
    r"node_netstat_(?:Tcp_RetransSegs|TcpExt_TCPTimeouts|TcpExt_TCPSynRetrans"
    r"|TcpExt_TCPLostRetransmit)"
    r"|node_network_(?:receive|transmit)_(?:drop|errs)_total",
    re.I,
)
_NODE_LABELS = ("node", "instance", "kubernetes_node", "nodename", "hostname")
RISE = 3.0  # the node's rate after the change, against before it and against the other nodes


def node_network_loss(query: str, series: list[Series], ctx: ObserveContext) -> list[Fact]:
    """``NODE_PROBLEM`` facts for the nodes whose loss counters stand out (see module doc)."""
    if not _LOSS.search(query):
        return []
    rows: list[tuple[Series, str, dict[str, Any] | None]] = []
    for s in series:
        where = next((s.labels[k] for k in _NODE_LABELS if s.labels.get(k)), None)
        if where:
            rows.append((s, where, series_shift(s.model_dump(mode="json", by_alias=True))))
    risen = [(s, w, sh) for s, w, sh in rows if sh and _rose(sh)]
    if not risen or (len(rows) > 2 and len(risen) > len(rows) // 2):
        return []  # nothing rose, or most nodes did: load, not a node losing packets
    calm = [_level(s) for s, _, sh in rows if not (sh and _rose(sh))]
    ceiling = max(calm, default=0.0)
    facts = []
    for s, where, sh in risen:
        assert sh is not None
        after = float(sh["after"])
        if ceiling and after < RISE * ceiling:
            continue  # no higher than the other nodes run anyway
        node = _node_name(where, ctx)
        others = f"; the other {len(calm)} node(s) stay at or below {ceiling:g}" if calm else ""
        label = _short(query)
        quote = (
            f"{label} on node {node} rose from {sh['before']:g} to {after:g}/s at "
            f"{hm(to_time(sh['time']))}"
        )
        runs = _runs(node, ctx)
        facts.append(
            Fact(
                key=f"node-loss:{node}:{label}",
                statement=f"{quote}{others}: packets are lost on node {node}'s network"
                + (f" (it runs {', '.join(runs)})" if runs else ""),
                evidence=[ctx.eid],
                kind=FactKind.NODE_PROBLEM,
                severity="error",
                time=to_time(sh["time"]),
                quote=quote,
                subject=ObjRef(kind="Node", name=node),
                reason="NodeNetworkLoss",
                terms=["node", node.lower(), "retransmit", "packet loss"],
                focus=False,
                detail={"query": query, "labels": s.labels, **sh},
            )
        )
    return facts


def _rose(shift: dict[str, Any]) -> bool:
    before, after = float(shift["before"]), float(shift["after"])
    if shift.get("direction") != "rose":
        return False
    return after >= RISE * before if before > 0 else after >= 1.0


def _level(s: Series) -> float:
    values = sorted(float(v) for _, v in s.samples if isinstance(v, int | float))
    return values[len(values) // 2] if values else 0.0


def _short(query: str) -> str:
    m = _LOSS.search(query)
    return m.group(0) if m else query[:60]


def _runs(node: str, ctx: ObserveContext, most: int = 4) -> list[str]:
    """The workloads with a pod on ``node`` (not the per-node agents every node runs)."""
    names = sorted(
        {
            workload_of(p)
            for p in ctx.graph.pods()
            if p.node == node and not str(p.owner or "").startswith("DaemonSet/")
        }
    )
    return names[:most] + ([f"{len(names) - most} more"] if len(names) > most else [])


def _node_name(where: str, ctx: ObserveContext) -> str:
    """The Node an ``instance`` label names: its name, or the node with that address (from
    the Nodes read, else from the pods' hostIP); the label without its port otherwise."""
    host = where.rsplit(":", 1)[0] if where.count(":") == 1 else where
    nodes = ctx.graph.nodes()
    for n in nodes:
        if n.name and (n.name == host or host in n.addresses):
            return n.name
    for p in ctx.graph.pods():
        if p.node and p.host_ip == host:
            return p.node
    return host
