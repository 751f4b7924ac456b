"""Latency that appears between two services: the caller's view against the callee's own.

A request series measured on the client side (Istio ``reporter="source"``, gRPC client
interceptors, client spans) and one measured on the server side (``reporter="destination"``,
server handlers, server spans) of the same callee tell where the time goes. When calls to a
service got several times slower as its callers see them while the service itself answers
as fast as before, the time is lost between them: the network path to it (delay, packet
loss, retransmits) or its sidecar — not the service's code, not its database. A graph
analyzer over the latency series the metrics analyzer kept.
"""

from __future__ import annotations

import re
from datetime import datetime

from opsmate.agent.observe.analyzers.k8s_common import graph_cached
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.registry import over_graph
from opsmate.agent.observe.text import hm
from opsmate.records.base import Record
from opsmate.records.types import Text

_CLIENT = re.compile(r'reporter\s*=\s*"source"|grpc_client|span_kind_client|client_', re.I)
_SERVER = re.compile(r'reporter\s*=\s*"destination"|grpc_server|span_kind_server|http_server', re.I)


class LatencySeries(Record):
    """One latency series as read: which side measured it, of which callee, and its shift."""

    name: Text = None
    side: Text = None  # client | server
    server: Text = None  # the callee
    client: Text = None  # the caller, when the series names it
    ratio: float | None = None  # after / before when it rose; 1.0 when flat
    before: float | None = None
    after: float | None = None
    time: datetime | None = None
    what: Text = None


def side_of(query: str, labels: dict[str, str]) -> str | None:
    """``client`` or ``server``: who measured the series (labels first, then the query)."""
    reporter = (labels.get("reporter") or "").lower()
    if reporter in ("source", "client"):
        return "client"
    if reporter in ("destination", "server"):
        return "server"
    if _CLIENT.search(query):
        return "client"
    if _SERVER.search(query):
        return "server"
    return None


@over_graph
@graph_cached
def latency_between(ctx: ObserveContext) -> list[Fact]:
    """Callees whose callers see them much slower than they see themselves."""
    g = ctx.graph
    series = [s for s in g.all("LatencySeries") if isinstance(s, LatencySeries)]
    facts: list[Fact] = []
    for callee in sorted({s.server for s in series if s.server}):
        client = [s for s in series if s.server == callee and s.side == "client"]
        server = [s for s in series if s.server == callee and s.side == "server"]
        slow = [s for s in client if (s.ratio or 1.0) >= 3.0]
        if not slow or not server or any((s.ratio or 1.0) >= 1.5 for s in server):
            continue
        worst = max(slow, key=lambda s: s.ratio or 1.0)
        own = server[0]
        callers = sorted({s.client for s in slow if s.client})
        who = f" from {', '.join(callers[:3])}" if callers else ""
        own_ms = own.after if own.after is not None else own.before
        ev = [e for e in (g.source_of("LatencySeries", None, str(worst.name)),
                          g.source_of("LatencySeries", None, str(own.name))) if e]  # fmt: skip
        facts.append(
            Fact(
                key=f"metric-edge:{callee}",
                kind=FactKind.DEPENDENCY_FAILURE,
                severity="error",
                statement=(
                    f"calls to {callee}{who} got {worst.ratio:.0f}x slower as the callers measure "
                    f"them ({worst.before} -> {worst.after} at {hm(worst.time)}), while {callee} "
                    f"itself answers as fast as before ({own_ms} on the server side): the time is "
                    f"lost on the network path to {callee} "
                    "(delay or packet loss) or in its sidecar"
                ),
                evidence=list(dict.fromkeys(ev)) or [ctx.eid],
                service=callee,
                subject=ObjRef(kind="app", name=callee),
                objects=[ObjRef(kind="app", name=c) for c in callers[:3]],
                time=worst.time,
                reason="network",
                quote=f"network latency to {callee}",
                terms=["network", "latency", callee.lower()],
                focus=ctx.is_focus(callee),
                conclusive=True,
                detail={"client_ratio": worst.ratio, "callers": callers},
            )
        )
    return facts
