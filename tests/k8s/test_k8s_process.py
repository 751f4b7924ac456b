"""The process around a Kubernetes call that does not end: ``opsmate diagnose`` against a
server that drips bytes forever or never answers.

- the time budget ends while a call is in flight: the report is printed and the process
  exits 1, cleanly (before: SIGABRT, "Fatal Python error: Aborted", exit 134, when the
  abandoned request woke up during interpreter shutdown);
- Ctrl-C during a hung call: the process exits 130 within 2 s (before: ~44 s, waiting for
  the call's time-out and its retry).
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from k8s_build import shop_objects

sys.path.insert(0, str(Path(__file__).parents[1] / "sources"))
from k8s_fixture import K8sFixture, write_kubeconfig

OPSMATE = Path(sys.executable).parent / "opsmate"


class DripServer:
    """Answers every request with a status line, then one header byte every 10 ms."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.stop = threading.Event()
        self.requests = 0

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                conn.recv(65536)
                self.requests += 1
                conn.sendall(b"HTTP/1.1 200 OK\r\nX-Drip: ")
                while not self.stop.is_set():
                    conn.sendall(b"a")
                    time.sleep(0.01)
            except OSError:
                return

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def __enter__(self) -> DripServer:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.sock.close()


def config_for(url: str, tmp_path: Path) -> Path:
    kube = write_kubeconfig(tmp_path / "kubeconfig", {"fx": url}, current="fx")
    cfg = {
        "model": "none",
        "default_environment": "test",
        "environments": {
            "test": {
                "kubernetes": {
                    "kubeconfig": str(kube),
                    "context": "fx",
                    "namespaces": ["shop"],
                    "timeout": 30,
                }
            }
        },
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def diagnose(config: Path, timeout: int) -> list[str]:
    return [
        str(OPSMATE),
        "--config",
        str(config),
        "diagnose",
        "why is cart crashing",
        "--env",
        "test",
        "--model",
        "none",
        "--json",
        "--timeout",
        str(timeout),
    ]


@pytest.fixture
def drip() -> Iterator[DripServer]:
    with DripServer() as d:
        yield d


def test_a_call_alive_at_the_deadline_does_not_abort_the_process(
    drip: DripServer, tmp_path: Path
) -> None:
    out = subprocess.run(
        diagnose(config_for(drip.url, tmp_path), 3), capture_output=True, text=True, timeout=60
    )
    assert drip.requests >= 1  # a call was in flight when the budget ended
    assert "Fatal Python error" not in out.stderr, out.stderr[-2000:]
    assert out.returncode == 1, (out.returncode, out.stderr[-2000:])
    report = json.loads(out.stdout)
    assert report["status"] == "partial" and report["budget"]["stopped_by"] == "timeout"


def test_ctrl_c_during_a_hung_call_exits_within_two_seconds(tmp_path: Path) -> None:
    with K8sFixture(shop_objects()) as fx:
        fx.mode = "hang"
        proc = subprocess.Popen(
            diagnose(config_for(fx.url, tmp_path), 120),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        deadline = time.monotonic() + 30
        while not fx.requests and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert fx.requests, "the call never reached the server"
        time.sleep(0.3)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=20)
        finally:
            proc.kill()
        took = time.monotonic() - started
    assert took < 2.0, (took, err[-2000:])
    assert proc.returncode == 130, (proc.returncode, err[-2000:])
    assert "Fatal Python error" not in err
    assert json.loads(out)["status"] in ("partial", "refused")
