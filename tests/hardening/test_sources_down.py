"""Sources that refuse or never answer: marked down after the first failure, named in the
summary, ``refused`` with exit 3; ``doctor`` against a server that accepts and never
answers exits 3 every time (never killed at exit while a probe is in flight)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from hardening_util import blackhole_port

OPSMATE = Path(sys.executable).parent / "opsmate"


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()  # nothing listens here now: connections are refused
    return port


def test_every_source_refusing_is_refused_exit_3_naming_them(tmp_path: Path) -> None:
    prom, es = _closed_port(), _closed_port()
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        "model: none\ndefault_environment: test\nembedding: {backend: none}\n"
        "environments:\n  test:\n"
        f"    prometheus: {{url: 'http://ops:hunter2@127.0.0.1:{prom}'}}\n"
        f"    elasticsearch: {{url: 'http://127.0.0.1:{es}', index: 'logs-*'}}\n",
        encoding="utf-8",
    )
    started = time.monotonic()
    proc = subprocess.run(
        [str(OPSMATE), "--config", str(cfg), "diagnose", "why is checkout failing", "--json"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert proc.returncode == 3, proc.stderr
    report = json.loads(proc.stdout)
    assert report["status"] == "refused" and report["root_cause"] is None
    first = report["summary"].split(". ")[0]
    assert f"127.0.0.1:{prom}" in first and f"127.0.0.1:{es}" in first
    assert "Prometheus (test" in first and "Elasticsearch (test" in first
    assert "hunter2" not in proc.stdout and "ops:" not in first
    assert "opsmate doctor" in first and "nothing is concluded" in first
    per_tool_source = Counter(
        "prometheus"
        if c["tool"] in ("query_metrics", "list_alerts", "discover_metrics")
        else "logs"
        for c in report["tool_calls"]
        if c["tool"] != "search_runbooks"
    )
    assert per_tool_source and max(per_tool_source.values()) <= 2, report["tool_calls"]
    failed = [c for c in report["tool_calls"] if c["status"] == "error"]
    assert failed and all(c["error"] and "unreachable" in c["error"] for c in failed)
    print(f"all sources refusing: exit 3 in {elapsed:.2f} s wall")


def test_a_source_down_is_not_called_again(tmp_path: Path) -> None:
    from opsmate.config import Settings
    from opsmate.tools.base import Constraints
    from opsmate.tools.executor import Executor
    from opsmate.tools.registry import live_registry

    port = _closed_port()
    settings = Settings.model_validate(
        {"environments": {"test": {"prometheus": {"url": f"http://127.0.0.1:{port}"}}}}
    )
    ex = Executor(live_registry(settings), Constraints(environment="test"), config=settings.tools)
    first = ex.call("query_metrics", {"query": "up"})
    assert first.status == "error" and first.error and first.error.code == "unreachable"
    t0 = time.monotonic()
    again = ex.call("list_alerts", {})
    assert again.status == "error" and again.error is not None
    assert "down for this run" in again.error.message and f"127.0.0.1:{port}" in again.error.message
    assert again.elapsed_ms < 1000 and time.monotonic() - t0 < 1.0
    assert [d.code for d in ex.down_sources()] == ["unreachable"]


def test_doctor_against_a_silent_server_exits_3_every_time(tmp_path: Path) -> None:
    with blackhole_port() as silent:
        cfg = tmp_path / "config.yaml"
        cfg.write_text(
            "embedding: {backend: none}\nenvironments:\n  test:\n"
            f"    prometheus: {{url: 'http://127.0.0.1:{silent}', timeout: 60}}\n"
            f"    elasticsearch: {{url: 'http://127.0.0.1:{silent}', timeout: 60}}\n",
            encoding="utf-8",
        )
        codes = []
        for _ in range(3):
            proc = subprocess.run(
                [str(OPSMATE), "--config", str(cfg), "doctor", "--json"],
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            codes.append(proc.returncode)
            checks = {c["check"]: c["status"] for c in json.loads(proc.stdout)}
            assert checks["prometheus[test]"] == "fail"
            assert "Fatal Python error" not in proc.stderr
    assert codes == [3, 3, 3]
