"""``opsmate watch`` fed by a REAL Alertmanager (its webhook receiver points at it):
one report per group, resolved notifications logged, a burst of 50 handled without
loss or duplicate work, and Ctrl-C draining and exiting 0."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

from am_fixture import am_time, free_port, http, post_alerts, run_alertmanager, wait_for

OPSMATE = str(Path(sys.executable).parent / "opsmate")
REPO = Path(__file__).resolve().parents[2]
BUNDLE = REPO / "src" / "opsmate" / "data" / "demo" / "01-pool-exhaustion"
TOKEN = "watch-token-for-tests"
WITH_BUNDLE = ["--bundle", str(BUNDLE), "--model", "none"]


def reports(out: Path) -> list[Path]:
    return sorted(out.glob("*.json"))


def burst_body(group: str) -> dict:
    return {
        "version": "4",
        "groupKey": f'{{}}:{{alertname="{group}"}}',
        "status": "firing",
        "receiver": "opsmate",
        "groupLabels": {"alertname": group},
        "alerts": [
            {
                "status": "firing",
                "labels": {"alertname": group, "service": "order-service", "namespace": "shop"},
                "annotations": {"summary": "order-service error rate rose"},
                "startsAt": "2026-10-21T02:02:00Z",
                "fingerprint": f"burst-{group}",
            }
        ],
    }


def test_watch_with_a_real_alertmanager(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    port = free_port()
    cfg = tmp_path / "config.yaml"
    cfg.write_text("alerting: {require_token: true, queue_size: 2, workers: 1}\n", encoding="utf-8")
    env = {**os.environ, "OPSMATE_CONFIG": str(cfg), "OPSMATE_WATCH_TOKEN": TOKEN}
    log = (tmp_path / "watch.log").open("w+")
    proc = subprocess.Popen(
        [OPSMATE, "watch", "--listen", f"127.0.0.1:{port}", "--out", str(out), *WITH_BUNDLE],
        stdout=subprocess.PIPE,
        stderr=log,
        env=env,
        text=True,
        # a runner started in the background inherits SIGINT ignored; Ctrl-C in a terminal
        # reaches a process whose SIGINT is at its default
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_for(lambda: http("GET", url + "-/healthy")[0] == 200, "watch to listen")
        with run_alertmanager(tmp_path / "am", webhook_url=url, token=TOKEN) as am:
            now = datetime.now(UTC)
            post_alerts(
                am.url,
                [
                    {
                        "labels": {
                            "alertname": "OrderServiceHigh5xxRate",
                            "service": "order-service",
                            "namespace": "shop",
                            "severity": "critical",
                        },
                        "annotations": {"summary": "order-service error rate rose"},
                    },
                    {
                        "labels": {
                            "alertname": "OrderServiceDBPoolSaturated",
                            "service": "order-service",
                            "namespace": "shop",
                            "pool": "orders-db",
                        },
                        "annotations": {"summary": "the orders-db pool is saturated"},
                    },
                ],
            )
            wait_for(lambda: len(reports(out)) == 2, "one report per group", timeout=120)
            names = sorted(p.name.split("-", 1)[1] for p in reports(out))
            assert names == ["OrderServiceDBPoolSaturated.json", "OrderServiceHigh5xxRate.json"]
            for p in reports(out):
                report = json.loads(p.read_text(encoding="utf-8"))
                assert report["status"] in ("complete", "partial")
                assert report["question"].startswith("Investigate this alert: OrderService")
                assert report["alert_group"]["receiver"] == "opsmate"
                assert report["alert_group"]["fingerprints"]
                md = p.with_suffix(".md")
                assert md.is_file() and md.read_text(encoding="utf-8").strip()
            # resolved: Alertmanager sends the group again as resolved; it is only logged
            post_alerts(
                am.url,
                [
                    {
                        "labels": {
                            "alertname": "OrderServiceDBPoolSaturated",
                            "service": "order-service",
                            "namespace": "shop",
                            "pool": "orders-db",
                        },
                        "startsAt": am_time(now - timedelta(minutes=1)),
                        "endsAt": am_time(datetime.now(UTC) - timedelta(seconds=1)),
                    }
                ],
            )
            wait_for(
                lambda: "resolved: OrderServiceDBPoolSaturated" in log_text(log),
                "the resolved notification",
            )
        assert len(reports(out)) == 2

        # a burst of 50 straight to the receiver: 5 groups x 10, retried on 503 as
        # Alertmanager does; every group investigated exactly once
        refused = [0]
        lock = threading.Lock()

        def send(group: str) -> None:
            auth = {"Authorization": f"Bearer {TOKEN}"}
            while (status := http("POST", url, burst_body(group), auth)[0]) == 503:
                with lock:
                    refused[0] += 1
                threading.Event().wait(0.1)
            assert status == 200

        with ThreadPoolExecutor(max_workers=10) as pool:
            list(pool.map(send, [f"Burst{i % 5}" for i in range(50)]))
        assert http("POST", url, burst_body("Burst0"))[0] == 401  # no token: refused
        proc.send_signal(signal.SIGINT)  # drains what is queued or running, exits 0
        proc.wait(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log_text(log)
    assert proc.returncode == 0, text[-3000:]
    burst = [p for p in reports(out) if "-Burst" in p.name]
    assert sorted(p.name.split("-", 1)[1] for p in burst) == [f"Burst{i}.json" for i in range(5)]
    assert "stopped: 7 investigated" in text
    print(f"burst: {refused[0]} notifications answered 503 and retried")


def log_text(log: object) -> str:
    log.flush()  # type: ignore[attr-defined]
    log.seek(0)  # type: ignore[attr-defined]
    return log.read()  # type: ignore[attr-defined, no-any-return]
