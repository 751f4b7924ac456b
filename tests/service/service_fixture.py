"""A real ``opsmate watch`` process and a REAL Prometheus (Debian ``prometheus``) scraping it.

:func:`start_watch` runs the console script on a free loopback port with a config file
and an isolated HOME / data / cache (module-scoped fixtures run before the per-test
isolation, so the environment is built here), against the demo bundle with the
deterministic engine, and waits for ``/-/healthy``. :func:`run_prometheus` starts
``/usr/bin/prometheus`` with a 1 s scrape of the given target and waits for ``/-/ready``;
without the binary it FAILS (never skips): ``apt-get install -y prometheus``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
OPSMATE = str(Path(sys.executable).parent / "opsmate")
BUNDLE = REPO / "src" / "opsmate" / "data" / "demo" / "01-pool-exhaustion"
PROMETHEUS = "/usr/bin/prometheus"
TOKEN = "service-test-token"
WITH_BUNDLE = ["--bundle", str(BUNDLE), "--model", "none"]  # the deterministic engine


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http(
    method: str, url: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:
        return 0, b""


def wait_for(predicate: Any, what: str, timeout: float = 60.0, detail: Any = None) -> Any:
    """Poll until truthy (a readiness wait: the bound only turns a hang into a failure);
    ``detail()`` (a log tail) is added to the failure."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}" + (f"\n{detail()}" if detail else ""))
        time.sleep(0.1)


def notification(group: str, alertname: str, starts_at: str, **labels: str) -> dict[str, Any]:
    """An Alertmanager webhook body (version 4) with one firing alert."""
    return {
        "version": "4",
        "groupKey": f'{{}}:{{alertname="{group}"}}',
        "status": "firing",
        "receiver": "opsmate",
        "groupLabels": {"alertname": alertname},
        "alerts": [
            {
                "status": "firing",
                "labels": {"alertname": alertname, **labels},
                "annotations": {"summary": "order-service error rate rose"},
                "startsAt": starts_at,
                "fingerprint": f"fp-{group}",
            }
        ],
    }


@dataclass
class Watch:
    url: str
    out: Path
    env: dict[str, str]
    log: Path
    proc: subprocess.Popen[str] = field(repr=False)

    def post(self, body: dict[str, Any], token: str | None = TOKEN) -> int:
        auth = {"Authorization": f"Bearer {token}"} if token else {}
        return http("POST", self.url + "/", body, auth)[0]

    def tail(self) -> str:
        """The end of watch's log (for a failure message)."""
        return self.log.read_text(errors="replace")[-3000:]

    def reports(self) -> list[Path]:
        return sorted(self.out.glob("*.json"))

    def opsmate(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [OPSMATE, *args], capture_output=True, text=True, env=self.env, timeout=60
        )


def isolated_env(root: Path, home: Path, config: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPSMATE_")}
    env.update(
        HOME=str(home),
        OPSMATE_CONFIG=str(config),
        OPSMATE_CONFIG_DIR=str(root / "config"),
        OPSMATE_DATA_DIR=str(root / "data"),
        OPSMATE_CACHE_DIR=str(home / ".cache" / "opsmate"),
        OPSMATE_WATCH_TOKEN=TOKEN,
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
        ANONYMIZED_TELEMETRY="False",
    )
    return env


@contextlib.contextmanager
def start_watch(root: Path, home: Path, config_text: str) -> Iterator[Watch]:
    root.mkdir(parents=True, exist_ok=True)
    config = root / "config.yaml"
    config.write_text(config_text, encoding="utf-8")
    env = isolated_env(root, home, config)
    port = free_port()
    out = root / "reports"
    log = root / "watch.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [OPSMATE, "watch", "--listen", f"127.0.0.1:{port}", "--out", str(out), *WITH_BUNDLE],
            stdout=subprocess.DEVNULL,
            stderr=sink,
            env=env,
            text=True,
        )
    watch = Watch(url=f"http://127.0.0.1:{port}", out=out, env=env, log=log, proc=proc)
    try:
        wait_for(
            lambda: http("GET", watch.url + "/-/healthy")[0] == 200 or proc.poll() is not None,
            "watch to listen",
        )
        assert proc.poll() is None, log.read_text()
        yield watch
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)  # drains, exits 0
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@dataclass
class Prometheus:
    url: str
    log: Path

    def query(self, expr: str) -> list[dict[str, Any]]:
        q = urllib.parse.urlencode({"query": expr})
        status, raw = http("GET", f"{self.url}/api/v1/query?{q}")
        if status != 200:
            return []
        return list(json.loads(raw)["data"]["result"])

    def value(self, expr: str) -> float | None:
        result = self.query(expr)
        return float(result[0]["value"][1]) if result else None


@contextlib.contextmanager
def run_prometheus(root: Path, target: str) -> Iterator[Prometheus]:
    if shutil.which(PROMETHEUS) is None:
        pytest.fail(f"{PROMETHEUS} not found: install it with `apt-get install -y prometheus`")
    root.mkdir(parents=True, exist_ok=True)
    cfg = root / "prometheus.yml"
    cfg.write_text(
        json.dumps(
            {
                "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
                "scrape_configs": [
                    {
                        "job_name": "opsmate",
                        "metrics_path": "/metrics",
                        "static_configs": [{"targets": [target]}],
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    port = free_port()
    log = root / "prometheus.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [
                PROMETHEUS,
                f"--config.file={cfg}",
                f"--storage.tsdb.path={root / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    prom = Prometheus(url=f"http://127.0.0.1:{port}", log=log)
    try:
        wait_for(
            lambda: http("GET", prom.url + "/-/ready")[0] == 200 or proc.poll() is not None,
            "Prometheus to be ready",
        )
        assert proc.poll() is None, log.read_text(errors="replace")[-2000:]
        yield prom
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
