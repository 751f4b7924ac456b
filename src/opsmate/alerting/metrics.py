"""``GET /metrics`` of ``opsmate watch``: the Prometheus text exposition format.

Built with ``prometheus_client`` in a registry of its own (never the process-global one).
Series (all prefixed ``opsmate_watch_``):

========================================  ===========  ==========================================
``notifications_received_total``          counter      notifications parsed and decided on
``notifications_queued_total``            counter      firing groups queued for investigation
``notifications_deduplicated_total``      counter      groups already queued, running or done
``notifications_resolved_total``          counter      resolved notifications (logged only)
``notifications_rejected_total{reason}``  counter      refused: ``unauthorized`` (401),
                                                       ``bad_request`` (400, 415),
                                                       ``queue_full`` (503), ``unwritable``
                                                       (503), ``timed_out``,
                                                       ``too_many_connections`` (503), and any
                                                       other ``rejected_<reason>`` counted
``queue_depth``                           gauge        firing groups waiting for a worker
``investigations_in_flight``              gauge        groups queued or being investigated
``diagnoses_total{status}``               counter      finished investigations by report status
                                                       (``complete``, ``partial``, ``refused``,
                                                       ``error``), ``failed`` when one raised
``diagnosis_duration_seconds``            histogram    wall time of one investigation
``source_calls_total{source,outcome}``    counter      tool calls by data source (``prometheus``,
                                                       ``kubernetes``, ``bundle`` ...) and
                                                       outcome (envelope status, or the error
                                                       code of a failed call: ``unreachable``,
                                                       ``timeout``, ``auth`` ...)
``sink_deliveries_total{sink,outcome}``   counter      reports ``delivered``, ``failed`` (given
                                                       up), ``dropped`` (sink queue full or
                                                       watch stopped)
``sink_retries_total{sink}``              counter      delivery attempts after the first
``history_writes_total{outcome}``         counter      incidents kept (``ok``) or not (``failed``)
========================================  ===========  ==========================================

The receiver's counts are read from its ``stats`` at scrape time (a custom collector), so
the receiver itself knows nothing about Prometheus.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

PREFIX = "opsmate_watch_"
# ReceiverStats field -> rejection reason (other ``rejected_<reason>`` fields: <reason>)
_REJECTED = {
    "unauthorized": "unauthorized",  # 401
    "rejected_bad": "bad_request",  # 400, 415
    "unwritable": "unwritable",  # 503: --out cannot take a report now
    "timed_out": "timed_out",  # headers or body too slow: the connection was shut
}
_REJECTED_RENAMED = {"rejected_full": "queue_full"}
_PLAIN = {
    "received": "notifications_received",
    "queued": "notifications_queued",
    "duplicates": "notifications_deduplicated",
    "resolved": "notifications_resolved",
}
DURATION_BUCKETS = (0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600)


class _ReceiverCollector:
    """Counters and gauges read from a :class:`~opsmate.alerting.receiver.WebhookReceiver`."""

    def __init__(self, receiver: Any) -> None:
        self.receiver = receiver

    def describe(self) -> list[Any]:
        return []  # unchecked collector: the series are only known at collect time

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        stats = self.receiver.stats
        values = {f.name: getattr(stats, f.name) for f in dataclasses.fields(stats)}
        for field, name in _PLAIN.items():
            fam = CounterMetricFamily(PREFIX + name, _HELP[name])
            fam.add_metric([], float(values.get(field, 0)))
            yield fam
        rejected = CounterMetricFamily(
            PREFIX + "notifications_rejected",
            "Notifications refused, by reason (401, 400, 503 ...).",
            labels=["reason"],
        )
        for field, value in sorted(values.items()):
            if not isinstance(value, int) or isinstance(value, bool):
                continue
            reason = _REJECTED.get(field) or _REJECTED_RENAMED.get(field)
            if reason is None and field.startswith("rejected_"):
                reason = field.removeprefix("rejected_")
            if reason is not None:
                rejected.add_metric([reason], float(value))
        busy = getattr(getattr(self.receiver, "_httpd", None), "refused_busy", None)
        if isinstance(busy, int):  # 503 before reading: too many connections at once
            rejected.add_metric(["too_many_connections"], float(busy))
        yield rejected
        depth = GaugeMetricFamily(PREFIX + "queue_depth", "Firing groups waiting for a worker.")
        depth.add_metric([], float(_queue_depth(self.receiver)))
        yield depth
        flying = GaugeMetricFamily(
            PREFIX + "investigations_in_flight", "Firing groups queued or being investigated."
        )
        flying.add_metric([], float(len(values.get("in_flight") or ())))
        yield flying


_HELP = {
    "notifications_received": "Webhook notifications parsed and decided on.",
    "notifications_queued": "Firing groups queued for investigation.",
    "notifications_deduplicated": "Firing groups not investigated again (queued, running or "
    "done within alerting.dedupe_seconds).",
    "notifications_resolved": "Resolved notifications (logged, not investigated).",
}


def _queue_depth(receiver: Any) -> int:
    depth = getattr(receiver, "queue_depth", None)
    if isinstance(depth, int):
        return depth
    q = getattr(receiver, "_queue", None)
    return int(q.qsize()) if q is not None else 0


class WatchMetrics:
    """The metrics of one ``watch`` process (module doc); thread-safe."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        try:  # no *_created series beside each counter: noise for this use
            from prometheus_client import disable_created_metrics

            disable_created_metrics()
        except ImportError:  # pragma: no cover - older prometheus_client
            pass
        self.registry = CollectorRegistry(auto_describe=False)
        r = self.registry
        self.diagnoses = Counter(
            PREFIX + "diagnoses",
            "Finished investigations by report status (failed: the investigation raised).",
            ["status"],
            registry=r,
        )
        self.duration = Histogram(
            PREFIX + "diagnosis_duration_seconds",
            "Wall time of one investigation.",
            buckets=DURATION_BUCKETS,
            registry=r,
        )
        self.source_calls = Counter(
            PREFIX + "source_calls",
            "Tool calls by data source and outcome (status, or the error code).",
            ["source", "outcome"],
            registry=r,
        )
        self.sink_deliveries = Counter(
            PREFIX + "sink_deliveries",
            "Reports sent to a sink: delivered, failed (given up) or dropped.",
            ["sink", "outcome"],
            registry=r,
        )
        self.sink_retries = Counter(
            PREFIX + "sink_retries", "Delivery attempts after the first.", ["sink"], registry=r
        )
        self.history_writes = Counter(
            PREFIX + "history_writes",
            "Incidents kept in the history (ok) or not (failed).",
            ["outcome"],
            registry=r,
        )
        for status in ("complete", "partial", "refused", "error", "failed"):
            self.diagnoses.labels(status=status)  # every status present from the start
        for outcome in ("ok", "failed"):
            self.history_writes.labels(outcome=outcome)

    def watch_receiver(self, receiver: Any) -> None:
        """Expose the receiver's counts and queue depth."""
        self.registry.register(_ReceiverCollector(receiver))

    def add_sink(self, name: str) -> None:
        """Make a sink's series present (at 0) before its first delivery."""
        for outcome in ("delivered", "failed", "dropped"):
            self.sink_deliveries.labels(sink=name, outcome=outcome)
        self.sink_retries.labels(sink=name)

    def observe_diagnosis(self, status: str, seconds: float, calls: list[tuple[str, str]]) -> None:
        """One investigation ended: its status, wall time and (source, outcome) per call."""
        self.diagnoses.labels(status=status).inc()
        self.duration.observe(max(0.0, seconds))
        for source, outcome in calls:
            self.source_calls.labels(source=source, outcome=outcome).inc()

    def exposition(self) -> tuple[str, bytes]:
        """(content type, body) of a scrape."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return CONTENT_TYPE_LATEST, generate_latest(self.registry)


def session_calls(session: Any) -> list[tuple[str, str]]:
    """(source, outcome) of each tool call a session made (rejected calls included)."""
    from opsmate.tools.executor import source_module

    executor = session.sources.executor
    out: list[tuple[str, str]] = []
    for call in executor.calls:
        spec = executor.registry.get(call.tool)
        source = source_module(spec) if spec is not None else "unknown"
        if source.startswith("replay"):  # a bundle's recorded reads
            source = "bundle"
        outcome = call.error.code if call.status == "error" and call.error else call.status
        out.append((source, str(outcome)))
    return out
