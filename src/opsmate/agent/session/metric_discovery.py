"""Live metric discovery for the planner: the PromQL worth asking about the subject.

A replayed bundle gives the planner its recorded queries; against a live Prometheus the
planner asks :func:`discoverer`'s function once, when the survey is planned. It calls the
``discover_metrics`` tool through the executor (read-only, in scope, audited, within the
run's deadline; it is no step of the investigation, as reading a bundle's list is none)
for the services of the question in its namespace, and turns the candidates into
:class:`~opsmate.agent.plan.planner.Recorded` queries. They also become the engine's
``recorded`` list, so the rules that pick resource series choose among the series that
exist, as they do in a replay. They are ranked by their text (a bundle saved from the run
records the queries, not discovery's descriptions, and ranks them the same way). What
discovery did not find is returned as notes for the report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opsmate.agent.plan.planner import Discoverer, Recorded
from opsmate.tools.prometheus.discovery import DiscoveredMetrics

if TYPE_CHECKING:
    from opsmate.agent.loop.engine import Engine
    from opsmate.agent.session.sources import Sources
    from opsmate.agent.state import TaskState

TOOL = "discover_metrics"


def subject_of(state: TaskState, default_namespace: str | None) -> dict[str, Any]:
    """The discovery's arguments: the services asked about and their namespace."""
    names = [*state.constraints.services, *state.subject.names]
    services = [n for n in dict.fromkeys(names) if n][:5]
    ns = state.subject.namespace or default_namespace
    if ns is None and len(state.constraints.namespaces) == 1:
        ns = state.constraints.namespaces[0]
    args: dict[str, Any] = {"services": services}
    if ns:
        args["namespace"] = ns
    return args


def discoverer(sources: Sources, engine: Engine) -> Discoverer | None:
    """The planner's discovery function for live sources with a Prometheus (None else)."""
    if sources.recorded is not None or TOOL not in sources.executor.registry:
        return None

    def run(state: TaskState) -> tuple[list[Recorded], list[str]]:
        args = subject_of(state, sources.namespace)
        result = sources.executor.call(TOOL, args)
        if result.status not in ("success", "partial", "no_data"):
            why = result.error.message if result.error else result.status
            return [], [f"metric discovery on Prometheus failed ({why}): no series surveyed"]
        data = result.full().payload_as(DiscoveredMetrics) or DiscoveredMetrics()
        # ranked by their query text alone, as a bundle saved from this run will rank them
        found = [Recorded(c.query, "range") for c in data.candidates if c.query]
        engine.recorded = found  # the rules choose among the series that exist
        who = ", ".join(args["services"]) or (
            f"namespace {args['namespace']}" if args.get("namespace") else "all services"
        )
        notes = [
            f"metrics discovered on Prometheus for {who}: {len(found)} candidate queries "
            f"from {data.series_total} series ({data.names_total} metric names in the window)"
        ]
        missing = list(data.not_found)
        if missing:
            notes.append("metrics not found: " + "; ".join(missing[:6]))
        return found, notes

    return run
