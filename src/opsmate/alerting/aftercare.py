"""What ``watch`` does around each investigation besides writing ``--out``: the incident
history (``seen_before`` in the report, the incident kept), the sinks and ``/metrics``.

``watch`` calls, per firing group::

    report, rec = extras.before_write(report, session, msg, alerts)  # seen_before
    ...the report files are written to --out...
    extras.after_write(rec, data, json_path, md_path)   # history row, sinks (never blocks)
    extras.observe(status, seconds, session)            # metrics (also for a failed one)

and, for a resolved notification, ``extras.resolved(msg)`` (the incident's resolution time).

None of these raises for a history or sink problem: it is logged and counted, and the
report in ``--out`` stands. :meth:`close` gives the sinks ``alerting``'s drain time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from opsmate.agent.report.model import Report
from opsmate.config import Settings
from opsmate.history.record import IncidentRecord

Log = Callable[[str], None]
Route = Callable[[], tuple[str, bytes]]


class WatchExtras:
    """History, sinks and metrics of one ``watch`` process (module doc)."""

    def __init__(
        self,
        *,
        log: Log,
        metrics: Any = None,
        history: Any = None,
        dispatcher: Any = None,
    ) -> None:
        self.log = log
        self.metrics = metrics
        self.history = history
        self.dispatcher = dispatcher

    @classmethod
    def build(cls, settings: Settings, out: Path, log: Log) -> WatchExtras:
        """From the configuration; ConfigError (before listening) for a sink whose URL or
        token variable is unset."""
        from opsmate.alerting.delivery import SinkDispatcher
        from opsmate.alerting.metrics import WatchMetrics
        from opsmate.alerting.sinks import resolve_sinks
        from opsmate.history.keeper import History
        from opsmate.tools.redact import Redactor

        sinks = resolve_sinks(settings.sinks)
        metrics = WatchMetrics()
        dispatcher = None
        if sinks:
            dispatcher = SinkDispatcher(
                sinks,
                out=out,
                redactor=Redactor(settings.tools.redact_patterns),
                log=log,
                metrics=metrics,
            )
        return cls(log=log, metrics=metrics, history=History.open(settings), dispatcher=dispatcher)

    def routes(self) -> dict[str, Route]:
        """The extra GET paths of the receiver: ``/metrics``."""
        return {"/metrics": self.metrics.exposition} if self.metrics is not None else {}

    def watch_receiver(self, receiver: Any) -> None:
        if self.metrics is not None:
            self.metrics.watch_receiver(receiver)

    def resolved(self, msg: Any) -> None:
        """A resolved notification: its group's open incidents get their resolution time
        (the ``outcome`` a later ``seen_before`` shows). Runs off the HTTP thread."""
        if self.history is None or not msg.group_key:
            return
        ends = [a.ends_at for a in msg.alerts if a.ends_at is not None]
        when = max(ends) if ends else datetime.now(UTC)
        threading.Thread(
            target=self._mark_resolved, args=(msg.group_key, when), daemon=True
        ).start()

    def _mark_resolved(self, group_key: str, when: datetime) -> None:
        from opsmate.history.store import HistoryError

        try:
            self.history.store.mark_resolved(group_key, when)
        except HistoryError as exc:
            self.log(f"resolution not kept in the history: {exc.message}")

    # -- per investigation -------------------------------------------------------------
    def before_write(
        self, report: Report, session: Any, group_key: str, alerts: Sequence[Any]
    ) -> tuple[Report, IncidentRecord | None]:
        """The report naming what it has seen before, and its incident (not yet kept)."""
        if self.history is None:
            return report, None
        from opsmate.history.keeper import record_for
        from opsmate.history.store import HistoryError

        try:
            rec = record_for(report, session, origin="watch", alerts=alerts, group_key=group_key)
            return self.history.annotate(report, rec), rec
        except HistoryError as exc:
            self.log(f"incident history not read: {exc.message}")
            return report, None

    def after_write(
        self, rec: IncidentRecord | None, data: dict[str, Any], json_path: Path, md_path: Path
    ) -> None:
        """Keep the incident (with its report file) and hand the report to the sinks."""
        if self.history is not None and rec is not None:
            from opsmate.history.store import HistoryError

            rec.report_path = str(json_path)
            try:
                self.history.keep(rec)
                outcome = "ok"
            except HistoryError as exc:
                self.log(f"incident not kept in the history: {exc.message}")
                outcome = "failed"
            if self.metrics is not None:
                self.metrics.history_writes.labels(outcome=outcome).inc()
        if self.dispatcher is not None:
            self.dispatcher.submit(data, json_path, md_path)

    def observe(self, status: str, seconds: float, session: Any) -> None:
        """Count one investigation (``failed`` when it raised) and its source calls."""
        if self.metrics is None:
            return
        from opsmate.alerting.metrics import session_calls

        calls: list[tuple[str, str]] = []
        if session is not None:
            try:
                calls = session_calls(session)
            except Exception as exc:  # metrics never cost a report
                self.log(f"source calls not counted: {exc!r}")
        self.metrics.observe_diagnosis(status, seconds, calls)

    def close(self, timeout: float = 30.0) -> None:
        """Let queued sink deliveries finish for up to ``timeout`` s (the rest is listed in
        ``--out/undelivered.jsonl``)."""
        if self.dispatcher is not None:
            self.dispatcher.close(timeout)
