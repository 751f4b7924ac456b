"""A REAL Alertmanager (Debian ``prometheus-alertmanager``) on a free loopback port.

:func:`run_alertmanager` writes a config (one route grouping by ``alertname`` with short
``group_wait`` / ``group_interval``; a webhook receiver when ``webhook_url`` is given),
starts the binary with a temporary storage dir and clustering off, waits for
``/-/ready`` and always stops it. Without the binary it FAILS (never skips): install it
with ``apt-get install -y prometheus-alertmanager``. :func:`post_alerts` and
:func:`create_silence` are what Prometheus and an engineer would do to it (the tests
write; opsmate only reads).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

ALERTMANAGER = "/usr/bin/prometheus-alertmanager"
INSTALL_HINT = "apt-get install -y prometheus-alertmanager"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class AmServer:
    url: str
    log: Path
    proc: subprocess.Popen[bytes] = field(repr=False)


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


def am_time(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def post_alerts(am_url: str, alerts: list[dict[str, Any]]) -> None:
    """POST /api/v2/alerts as Prometheus does (startsAt defaults to a minute ago)."""
    now = datetime.now(UTC)
    body = []
    for a in alerts:
        item = {"labels": a["labels"], "annotations": a.get("annotations", {})}
        item["startsAt"] = a.get("startsAt") or am_time(now - timedelta(minutes=1))
        if a.get("endsAt"):
            item["endsAt"] = a["endsAt"]
        item["generatorURL"] = "http://prometheus.example:9090/graph"
        body.append(item)
    status, raw = http("POST", am_url + "/api/v2/alerts", body)
    if status != 200:
        pytest.fail(f"posting alerts failed: HTTP {status} {raw[:300]!r}")


def create_silence(am_url: str, matchers: dict[str, str], comment: str = "test") -> str:
    now = datetime.now(UTC)
    body = {
        "matchers": [
            {"name": k, "value": v, "isRegex": False, "isEqual": True} for k, v in matchers.items()
        ],
        "startsAt": am_time(now - timedelta(seconds=5)),
        "endsAt": am_time(now + timedelta(hours=1)),
        "createdBy": "tests",
        "comment": comment,
    }
    status, raw = http("POST", am_url + "/api/v2/silences", body)
    if status != 200:
        pytest.fail(f"creating a silence failed: HTTP {status} {raw[:300]!r}")
    return str(json.loads(raw)["silenceID"])


def wait_for(predicate: Any, what: str, timeout: float = 30.0) -> Any:
    """Poll ``predicate`` until it returns a truthy value (a readiness wait, not a
    timed assertion: the bound only turns a hang into a failure)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


def _config(webhook_url: str | None, token: str | None) -> dict[str, Any]:
    receiver: dict[str, Any] = {"name": "opsmate"}
    if webhook_url:
        hook: dict[str, Any] = {"url": webhook_url, "send_resolved": True, "max_alerts": 0}
        if token:
            hook["http_config"] = {"authorization": {"type": "Bearer", "credentials": token}}
        receiver["webhook_configs"] = [hook]
    return {
        "route": {
            "receiver": "opsmate",
            "group_by": ["alertname"],
            "group_wait": "1s",
            "group_interval": "1s",
            "repeat_interval": "1h",
        },
        "receivers": [receiver],
    }


@contextlib.contextmanager
def run_alertmanager(
    tmp: Path, *, webhook_url: str | None = None, token: str | None = None
) -> Iterator[AmServer]:
    """Start a real Alertmanager; stop it on exit."""
    if shutil.which(ALERTMANAGER) is None:
        pytest.fail(f"{ALERTMANAGER} not found: install it with `{INSTALL_HINT}`")
    tmp.mkdir(parents=True, exist_ok=True)
    port = free_port()
    cfg = tmp / "alertmanager.yml"
    cfg.write_text(json.dumps(_config(webhook_url, token)), encoding="utf-8")
    log = tmp / "alertmanager.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                ALERTMANAGER,
                f"--config.file={cfg}",
                f"--storage.path={tmp / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--cluster.listen-address=",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = AmServer(url=f"http://127.0.0.1:{port}", log=log, proc=proc)
    try:
        deadline = time.monotonic() + 15
        while http("GET", server.url + "/-/ready")[0] != 200:
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:]
                pytest.fail(f"Alertmanager did not become ready:\n{tail}")
            time.sleep(0.1)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
