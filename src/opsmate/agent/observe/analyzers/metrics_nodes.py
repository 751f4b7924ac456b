"""Node-level trouble read from node-exporter series, per node: packets lost (TCP
retransmits, retransmit timeouts, SYN retries, dropped or errored packets) and a
connection-tracking table that fills or drops connections.

Packets lost on one node's path (a NetworkChaos or netem ``loss``, a bad NIC, a saturated
link) leave no log line that says so; the kernel counts what it had to send again. A node
whose counter rose several times over while the other nodes' stayed where they were is
where the trouble is: a fact about that Node (``NODE_PROBLEM`` reason ``NodeNetworkLoss``;
``SATURATION`` reason ``conntrack_full`` for conntrack drops, ``conntrack_filling`` for a
table filling), which the judge links to the pods running there and the calls into them. A
rise on every node at once is load, not one node's fault, and makes no fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.depgraph import workload_of
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.observe.text import hm
from opsmate.agent.signals import series_shift, to_time
from opsmate.records.metrics import Series

__all__ = ["NODE_LABELS", "node_name", "node_signals", "runs_on"]


@dataclass(frozen=True)
class _Signal:
    """A per-node series that, risen on one node only, says what is wrong there."""

    metric: re.Pattern[str]
    kind: FactKind
    reason: str
    says: str  # "{node}" is filled in


_SIGNALS = (
    # what the kernel counts when packets are lost: resent segments, timeouts, SYN retries
    _Signal(
        re.compile(
            r"node_netstat_(?:Tcp_RetransSegs|TcpExt_TCPTimeouts|TcpExt_TCPSynRetrans"
            r"|TcpExt_TCPLostRetransmit)|node_network_(?:receive|transmit)_(?:drop|errs)_total",
            re.I,
        ),
        FactKind.NODE_PROBLEM,
        "NodeNetworkLoss",
        "packets are lost on node {node}'s network",
    ),
    # connections the kernel could not track: the conntrack table is full
    _Signal(
        re.compile(r"node_nf_conntrack_stat_(?:drop|insert_failed|early_drop)", re.I),
        FactKind.SATURATION,
        "conntrack_full",
        "node {node}'s connection-tracking table drops new connections (table full)",
    ),
    # connections tracked: one node filling its table (its limit decides whether it is full)
    _Signal(
        re.compile(r"node_nf_conntrack_entries(?!_limit)\b", re.I),
        FactKind.SATURATION,
        "conntrack_filling",
        "node {node} tracks far more connections than the others",
    ),
)
NODE_LABELS = ("node", "instance", "kubernetes_node", "nodename", "hostname")
RISE = 3.0  # the node's rate after the change, against before it and against the other nodes


def node_signals(query: str, series: list[Series], ctx: ObserveContext) -> list[Fact]:
    """Facts for the nodes whose series stand out (see module doc)."""
    signal = next((x for x in _SIGNALS if x.metric.search(query)), None)
    if signal is None:
        return []
    rows: list[tuple[Series, str, dict[str, Any] | None]] = []
    for s in series:
        where = next((s.labels[k] for k in NODE_LABELS if s.labels.get(k)), None)
        if where:
            rows.append((s, where, series_shift(s.model_dump(mode="json", by_alias=True))))
    risen = [(s, w, sh) for s, w, sh in rows if sh and _rose(sh)]
    if not risen or (len(rows) > 2 and len(risen) > len(rows) // 2):
        return []  # nothing rose, or most nodes did: load, not one node's fault
    calm = [_level(s) for s, _, sh in rows if not (sh and _rose(sh))]
    ceiling = max(calm, default=0.0)
    facts = []
    for s, where, sh in risen:
        assert sh is not None
        after = float(sh["after"])
        if ceiling and after < RISE * ceiling:
            continue  # no higher than the other nodes run anyway
        node = node_name(where, ctx.graph)
        others = f"; the other {len(calm)} node(s) stay at or below {ceiling:g}" if calm else ""
        label = signal.metric.search(query).group(0)  # type: ignore[union-attr]
        quote = f"{label} on node {node} rose from {sh['before']:g} to {after:g} at " + hm(
            to_time(sh["time"])
        )
        runs = runs_on(node, ctx.graph)
        facts.append(
            Fact(
                key=f"node-signal:{node}:{label}",
                statement=f"{quote}{others}: {signal.says.format(node=node)}"
                + (f" (it runs {', '.join(runs)})" if runs else ""),
                evidence=[ctx.eid],
                kind=signal.kind,
                severity="error",
                time=to_time(sh["time"]),
                quote=quote,
                subject=ObjRef(kind="Node", name=node),
                reason=signal.reason,
                terms=["node", node.lower(), label.lower()],
                focus=False,
                detail={"query": query, "labels": s.labels, "node": node, **sh},
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


def runs_on(node: str, graph: ObjectGraph, most: int = 4) -> list[str]:
    """The workloads with a pod on ``node`` (not the per-node agents every node runs)."""
    names = sorted(
        {
            workload_of(p)
            for p in graph.pods()
            if p.node == node and not str(p.owner or "").startswith("DaemonSet/")
        }
    )
    return names[:most] + ([f"{len(names) - most} more"] if len(names) > most else [])


def node_name(where: str, graph: ObjectGraph) -> str:
    """The Node an ``instance`` label names: its name, or the node with that address (from
    the Nodes read, else from the pods' hostIP); the label without its port otherwise."""
    host = where.rsplit(":", 1)[0] if where.count(":") == 1 else where
    nodes = graph.nodes()
    for n in nodes:
        if n.name and (n.name == host or host in n.addresses):
            return n.name
    for p in graph.pods():
        if p.node and p.host_ip == host:
            return p.node
    return host
