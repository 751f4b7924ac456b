"""Delivering reports to the sinks without ever holding up an investigation.

:class:`SinkDispatcher` gives each sink its own bounded queue and thread. ``submit`` is
called once the report files are in ``--out``; it builds each sink's request and returns
at once (a full queue drops that delivery: logged, counted, listed). A delivery is
retried on a connection failure, a time-out, 408, 425, 429 or 5xx, waiting
``backoff_seconds``, then twice as long each time up to ``max_backoff_seconds`` (a
``Retry-After`` in seconds is honoured within that cap), at most ``attempts`` tries;
another 4xx is final. A delivery given up is logged (sink name and host, never its URL),
counted in ``opsmate_watch_sink_deliveries_total{outcome="failed"}`` and listed in
``--out/undelivered.jsonl`` (``time``, ``sink``, ``report``, ``attempts``, ``error``):
the report itself is already in ``--out``, so nothing is lost and it can be re-sent.

``close(timeout)`` lets queued deliveries finish for up to ``timeout`` seconds, then
abandons the rest (back-off waits end at once; a request still hanging gets
:data:`ABORT_GRACE_SECONDS`), listing each as undelivered (``outcome: dropped``).
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from opsmate.alerting.sinks import Sink, request_for
from opsmate.tools.redact import Redactor, clean

Log = Callable[[str], None]
RETRY_STATUS = frozenset({408, 425, 429})
UNDELIVERED = "undelivered.jsonl"
ABORT_GRACE_SECONDS = 1.0  # after the drain time: how long a request under way may still end


@dataclass
class _Item:
    report: str  # the JSON report's file name
    body: bytes = field(repr=False)
    headers: dict[str, str] = field(repr=False)


@dataclass
class _Lane:
    sink: Sink
    queue: queue.Queue[_Item | None]
    thread: threading.Thread | None = None
    current: _Item | None = None  # the delivery under way
    abandoned: bool = False  # given up at shutdown: its thread reports nothing more


class SinkDispatcher:
    """Per-sink queues and threads delivering reports (module doc)."""

    def __init__(
        self,
        sinks: list[Sink],
        *,
        out: Path,
        redactor: Redactor,
        log: Log,
        metrics: Any = None,
        queue_size: int = 64,
    ) -> None:
        self.out = out
        self.redactor = redactor
        self.log = log
        self.metrics = metrics
        self._abort = threading.Event()
        self._lock = threading.Lock()
        self._accepting = True
        self.lanes = [_Lane(s, queue.Queue(maxsize=queue_size)) for s in sinks]
        for lane in self.lanes:
            if metrics is not None:
                metrics.add_sink(lane.sink.name)
            lane.thread = threading.Thread(
                target=self._run, args=(lane,), name=f"opsmate-sink-{lane.sink.name}", daemon=True
            )
            lane.thread.start()

    # -- in --------------------------------------------------------------------------
    def submit(self, data: dict[str, Any], json_path: Path, md_path: Path) -> None:
        """Queue the report for every sink; never blocks."""
        for lane in self.lanes:
            try:
                body, headers = request_for(lane.sink, data, json_path, md_path, self.redactor)
                item = _Item(json_path.name, body, headers)
            except Exception as exc:  # a sink's message could not be built: said, not fatal
                self._give_up(lane, json_path.name, 0, f"cannot build: {exc!r}", "failed")
                continue
            if not self._accepting:
                self._give_up(lane, item.report, 0, "watch is stopping", "dropped")
                continue
            try:
                lane.queue.put_nowait(item)
            except queue.Full:
                self._give_up(lane, item.report, 0, "its queue is full", "dropped")

    # -- out -------------------------------------------------------------------------
    def _run(self, lane: _Lane) -> None:
        import httpx

        cfg = lane.sink.config
        with httpx.Client(
            timeout=cfg.timeout, verify=cfg.verify_tls, follow_redirects=False
        ) as client:
            while True:
                item = lane.queue.get()
                if item is None:
                    return
                if self._abort.is_set():
                    self._give_up(lane, item.report, 0, "watch stopped first", "dropped")
                    continue
                lane.current = item
                try:
                    self._deliver(lane, client, item)
                finally:
                    lane.current = None

    def _deliver(self, lane: _Lane, client: Any, item: _Item) -> None:
        import httpx

        sink = lane.sink
        cfg = sink.config
        wait = cfg.backoff_seconds
        error = ""
        attempt = 0
        for attempt in range(1, cfg.attempts + 1):
            if attempt > 1 and self.metrics is not None:
                self.metrics.sink_retries.labels(sink=sink.name).inc()
            retry_after: float | None = None
            try:
                resp = client.post(sink.url, content=item.body, headers=item.headers)
            except httpx.HTTPError as exc:
                error, retryable = _describe(exc, sink), True
            else:
                if 200 <= resp.status_code < 300:
                    if not lane.abandoned:
                        self._count(sink, "delivered")
                        self.log(f"sink {sink.describe()}: delivered {item.report}")
                    return
                error = f"HTTP {resp.status_code}"
                retryable = resp.status_code in RETRY_STATUS or resp.status_code >= 500
                retry_after = _retry_after(resp.headers.get("Retry-After"))
            if not retryable or attempt == cfg.attempts:
                break
            delay = min(cfg.max_backoff_seconds, retry_after if retry_after is not None else wait)
            wait = min(cfg.max_backoff_seconds, wait * 2)
            if self._abort.wait(delay):
                error += "; watch stopped before the next try"
                break
        self._give_up(lane, item.report, attempt, error, "failed")

    def _count(self, sink: Sink, outcome: str) -> None:
        if self.metrics is not None:
            self.metrics.sink_deliveries.labels(sink=sink.name, outcome=outcome).inc()

    def _give_up(
        self,
        lane: _Lane,
        report: str,
        attempts: int,
        error: str,
        outcome: str,
        *,
        last: bool = False,
    ) -> None:
        """Log, count and list a delivery that did not happen (the report stays in --out)."""
        if lane.abandoned and not last:
            return  # already listed when watch stopped
        sink = lane.sink
        self._count(sink, outcome)
        error = clean(error, self.redactor)
        self.log(
            f"sink {sink.describe()}: {report} not delivered ({outcome} after {attempts} "
            f"attempt(s): {error}); the report stays in {self.out}, listed in {UNDELIVERED}"
        )
        line = {
            "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "sink": sink.name,
            "report": report,
            "outcome": outcome,
            "attempts": attempts,
            "error": error,
        }
        raw = (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            try:
                fd = os.open(self.out / UNDELIVERED, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                try:
                    os.write(fd, raw)
                finally:
                    os.close(fd)
            except OSError as exc:
                self.log(f"cannot append to {self.out / UNDELIVERED}: {exc}")

    # -- shutdown --------------------------------------------------------------------
    def close(self, timeout: float) -> None:
        """Finish queued deliveries for up to ``timeout`` s; abandon (and list) the rest."""
        self._accepting = False
        for lane in self.lanes:
            lane.queue.put(None)  # after what is queued
        deadline = time.monotonic() + max(0.0, timeout)
        for lane in self.lanes:
            assert lane.thread is not None
            lane.thread.join(max(0.0, deadline - time.monotonic()))
        if any(lane.thread is not None and lane.thread.is_alive() for lane in self.lanes):
            self._abort.set()  # back-off waits end; what is left is listed as undelivered
            for lane in self.lanes:
                assert lane.thread is not None
                lane.thread.join(ABORT_GRACE_SECONDS)
                if lane.thread.is_alive():  # a request still hangs: give it and the rest up
                    self._abandon(lane)

    def _abandon(self, lane: _Lane) -> None:
        lane.abandoned = True
        left = [lane.current]
        while True:
            try:
                left.append(lane.queue.get_nowait())
            except queue.Empty:
                break
        for item in left:
            if item is not None:
                why = "watch stopped before it was delivered"
                self._give_up(lane, item.report, 0, why, "dropped", last=True)

    def pending(self) -> int:
        """Deliveries queued and not yet started."""
        return sum(lane.queue.qsize() for lane in self.lanes)


def _retry_after(value: str | None) -> float | None:
    try:
        seconds = float(value) if value else None
    except ValueError:
        return None  # an HTTP date: the exponential back-off applies
    return seconds if seconds is not None and seconds >= 0 else None


def _describe(exc: Exception, sink: Sink) -> str:
    """The failure without the sink's URL (which can hold a secret)."""
    text = f"{type(exc).__name__}: {exc}".replace(sink.url, sink.describe())
    return text[:300]
