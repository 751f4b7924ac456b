"""What `watch` adds per report besides the diagnosis: the incident-history look-up and
write, and a `/metrics` scrape. Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/bench_watch_service.py [--incidents 10000]

A history of N incidents (subjects and cause kinds spread like a busy team's year) is
written to a temporary SQLite file; then, per operation, the median and p95 of repeated
runs: ``similar`` (the seen-before look-up), ``add`` (keeping one incident, one
connection and transaction each, as watch does), ``incidents(service=...)`` (what
``opsmate history --service`` reads), and the exposition of ``WatchMetrics`` with a
receiver's counters and a realistic number of label sets.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from opsmate.alerting.metrics import WatchMetrics
from opsmate.alerting.receiver import ReceiverStats
from opsmate.history.record import CAUSE_KINDS, IncidentRecord
from opsmate.history.store import _COLUMNS, HistoryStore, _row

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def incident(rng: random.Random, i: int) -> IncidentRecord:
    t = NOW - timedelta(minutes=rng.randrange(0, 365 * 24 * 60))
    return IncidentRecord(
        time=t,
        recorded_at=t,
        origin="watch",
        subject=f"service-{rng.randrange(60)}",
        status=rng.choice(["complete", "partial"]),
        summary="summary " * 10,
        question="Investigate this alert: X",
        namespace=f"ns-{rng.randrange(8)}",
        services=[f"service-{rng.randrange(60)}"],
        alertnames=[f"Alert{rng.randrange(40)}"],
        alert_labels=[{"alertname": "X", "service": "s", "namespace": "n"}],
        group_key=f"g{i}",
        content_key=f"k{i}",
        root_cause="root cause statement " * 8,
        chain=["symptom", "link", "cause"],
        cause_kind=rng.choice(sorted(CAUSE_KINDS)),
        cause_kind_source="facts",
        next_step="roll back",
    )


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--incidents", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        store = HistoryStore(Path(tmp) / "history.sqlite3")
        t0 = time.perf_counter()
        rows_in = [_row(incident(rng, i)) for i in range(args.incidents)]
        with store._connect() as conn:  # one transaction: the fill is not what is measured
            marks = ", ".join("?" for _ in _COLUMNS)
            conn.executemany(
                f"INSERT INTO incidents ({', '.join(_COLUMNS)}) VALUES ({marks})",
                [[r[c] for c in _COLUMNS] for r in rows_in],
            )
        fill = time.perf_counter() - t0
        size = (Path(tmp) / "history.sqlite3").stat().st_size
        print(f"history of {args.incidents} incidents: filled in {fill:.1f} s, {size / 1e6:.1f} MB")
        probe = incident(rng, -1)
        probe.time = NOW
        rows: list[tuple[str, tuple[float, float]]] = [
            (
                "similar (seen-before look-up)",
                timed(lambda: store.similar(probe, within=timedelta(days=365), limit=3), args.runs),
            ),
            ("add (keep one incident)", timed(lambda: store.add(incident(rng, 0)), args.runs)),
            (
                "incidents(service=..., limit=100)",
                timed(
                    lambda: store.incidents(service="service-3", limit=100),
                    max(10, args.runs // 10),
                ),
            ),
        ]
    metrics = WatchMetrics()
    receiver = type(
        "R", (), {"stats": ReceiverStats(received=1000, duplicates=50), "queue_depth": 3}
    )
    metrics.watch_receiver(receiver())
    for source in ("prometheus", "kubernetes", "elasticsearch", "alertmanager", "runbooks"):
        for outcome in ("success", "partial", "no_data", "timeout", "unreachable"):
            metrics.source_calls.labels(source=source, outcome=outcome).inc()
    for sink in ("slack1", "webhook2"):
        metrics.add_sink(sink)
    for _ in range(100):
        metrics.duration.observe(rng.uniform(0.5, 120))
    body = metrics.exposition()[1]
    rows.append(("/metrics exposition", timed(metrics.exposition, args.runs)))
    print(f"/metrics body: {len(body)} bytes")
    for name, (p50, p95) in rows:
        print(f"{name:40s} p50 {p50:7.2f} ms   p95 {p95:7.2f} ms")


if __name__ == "__main__":
    main()
