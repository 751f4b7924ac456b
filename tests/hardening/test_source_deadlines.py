"""Sources down, slow or hanging (issue 24 §2), against real loopback servers: one that
refuses, one that accepts and never answers, one that drips a byte every 0.5 s, one that
answers HTTP 500, and the Loki / Prometheus protocol fixtures for the healthy ones.

- the report names exactly the sources whose calls failed (never the configured ones
  that were not called, never a tool name), and goes on with the others (``partial``,
  exit 1) when one of several is down; a Kubernetes API configured by kubeconfig is named
  with its context and server;
- every source call ends within its configured ``timeout`` of wall-clock time, answer
  included (each client on its own, and ``alerts`` / ``diagnose`` end to end), measured
  here against that time-out + 2 s;
- Ctrl-C (SIGINT) ends ``opsmate diagnose`` with exit 130 within 2 s while a call hangs.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hardening_util import OPSMATE, REPO, drip_server, run_cli

sys.path.insert(0, str(REPO / "tests" / "sources"))
from loki_fixture import loki_server
from prom_fixture import FaultServer

GRACE_S = 2.0  # past a source's time-out, the most a run may take (issue 24)
QUESTION = "order-service 5xx errors since 05:38"


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()  # nothing listens here now: connections are refused
    return port


@contextlib.contextmanager
def _silent_server() -> Iterator[tuple[int, threading.Event]]:
    """A port that accepts connections and never says a word; the event is set once a
    client has connected (so a test knows a call is in flight)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.settimeout(0.1)
    held: list[socket.socket] = []
    connected, stop = threading.Event(), threading.Event()

    def accept() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                conn, _ = sock.accept()
                held.append(conn)
                connected.set()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(sock.getsockname()[1]), connected
    finally:
        stop.set()
        thread.join(1)
        for conn in held:
            conn.close()
        sock.close()


class _Error500(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        body = b"internal error\n"
        self.send_response(500)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextlib.contextmanager
def _error_500_server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Error500)
    httpd.daemon_threads = True
    threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _config(tmp_path: Path, blocks: dict[str, Any]) -> Path:
    cfg = tmp_path / "config.yaml"
    body = {"model": "none", "default_environment": "test", "embedding": {"backend": "none"},
            "environments": {"test": blocks}}  # fmt: skip
    cfg.write_text(json.dumps(body), encoding="utf-8")
    return cfg


def _diagnose(
    cfg: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, dict[str, Any], float]:
    began = time.monotonic()
    code, out, err = run_cli(["--config", str(cfg), "diagnose", QUESTION, "--json", *extra], capsys)
    elapsed = time.monotonic() - began
    assert "Traceback" not in err, err[-2000:]
    return code, json.loads(out), elapsed


def _first_sentence(report: dict[str, Any]) -> str:
    return str(report["summary"]).split("; nothing is concluded")[0]


def _failed_urls(report: dict[str, Any], urls: list[str]) -> set[str]:
    """The configured URLs that some failed call's error names."""
    errors = [c.get("error") or "" for c in report["tool_calls"] if c["status"] == "error"]
    return {u for u in urls if any(u in e for e in errors)}


# -- naming exactly the sources whose calls failed ------------------------------------------
def test_one_source_down_is_named_alone_and_the_others_go_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    am = f"http://127.0.0.1:{_closed_port()}"
    with FaultServer("ok") as prom, loki_server([]) as lk:
        cfg = _config(tmp_path, {"prometheus": {"url": prom.url}, "loki": {"url": lk.url},
                                 "alertmanager": {"url": am}})  # fmt: skip
        code, report, _ = _diagnose(cfg, capsys, "--service", "order-service")
    called = {c["tool"] for c in report["tool_calls"]}
    assert "list_alerts" in called and called & {"log_stats", "search_logs"}, called
    first = _first_sentence(report)
    assert first.startswith("Could not read Alertmanager (test, " + am), report["summary"]
    assert prom.url not in report["summary"] and lk.url not in report["summary"]
    assert "Prometheus" not in first and "Loki" not in first
    assert report["status"] == "partial" and code == 1, (code, report["summary"])


def test_everything_down_names_the_failed_calls_sources_not_the_configured_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    urls = {k: f"http://127.0.0.1:{_closed_port()}" for k in ("prometheus", "es", "am")}
    cfg = _config(tmp_path, {"prometheus": {"url": urls["prometheus"]},
                             "elasticsearch": {"url": urls["es"], "index": "logs-*"},
                             "alertmanager": {"url": urls["am"]}})  # fmt: skip
    code, report, _ = _diagnose(cfg, capsys)
    assert code == 3 and report["status"] == "refused", report["summary"]
    failed = _failed_urls(report, list(urls.values()))
    named = {u for u in urls.values() if u in _first_sentence(report)}
    assert failed and named == failed, (named, failed, report["tool_calls"])
    names = {"prometheus": "Prometheus (", "es": "Elasticsearch (", "am": "Alertmanager ("}
    for key, url in urls.items():
        assert (names[key] in _first_sentence(report)) == (url in failed), report["summary"]


def test_a_kubernetes_api_down_is_named_with_its_context_and_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    api = f"http://127.0.0.1:{_closed_port()}"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "dev-1",
        "clusters": [{"name": "c", "cluster": {"server": api}}],
        "contexts": [{"name": "dev-1",
                      "context": {"cluster": "c", "user": "u", "namespace": "shop"}}],
        "users": [{"name": "u", "user": {"token": "sekret-token-value"}}],
    }))  # fmt: skip
    with loki_server([]) as lk:
        cfg = _config(tmp_path, {"kubernetes": {"kubeconfig": str(kubeconfig)},
                                 "loki": {"url": lk.url}})  # fmt: skip
        code, report, _ = _diagnose(cfg, capsys, "--service", "order-service")
    first = _first_sentence(report)
    assert f"Kubernetes API (test, context dev-1, {api})" in first, report["summary"]
    assert "Loki" not in first and "sekret" not in json.dumps(report)
    k8s = [c for c in report["tool_calls"]
           if c["tool"] in ("list_pods", "get_events", "list_objects")]  # fmt: skip
    networked = [c for c in k8s if "down for this run" not in (c.get("error") or "")]
    assert len(networked) == 1, k8s  # the API server is called once, then known down
    assert report["status"] == "partial" and code == 1


def test_loki_answering_500_is_named_as_loki(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _error_500_server() as url:
        cfg = _config(tmp_path, {"loki": {"url": url}})
        code, report, _ = _diagnose(cfg, capsys, "--service", "order-service")
    assert f"Loki (test, {url})" in _first_sentence(report), report["summary"]
    assert "log_stats" not in report["summary"]
    assert "(answered with errors)" in _first_sentence(report)
    assert code == 3 and report["status"] == "refused"


def test_prometheus_read_and_alertmanager_down_is_partial_not_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Prometheus answered (its series discovered, none matching) while Alertmanager refused:
    something was read, so the run is partial (exit 1) and names only Alertmanager."""
    am = f"http://127.0.0.1:{_closed_port()}"
    with FaultServer("ok") as prom:
        cfg = _config(tmp_path, {"prometheus": {"url": prom.url}, "alertmanager": {"url": am}})
        code, report, _ = _diagnose(cfg, capsys, "--service", "order-service")
    answered = [c for c in report["tool_calls"] if c["status"] in ("success", "no_data")]
    assert answered, report["tool_calls"]
    assert _first_sentence(report).startswith("Could not read Alertmanager (test, " + am)
    assert "Prometheus" not in _first_sentence(report)
    assert report["status"] == "partial" and code == 1, (code, report["summary"])


# -- wall-clock deadlines -------------------------------------------------------------------
def _ctx() -> Any:
    from opsmate.tools.base import CallContext, Constraints

    return CallContext("c1", Constraints(environment="test"), datetime.now(UTC), deadline=None)


def _client_calls(url: str, tmp_path: Path) -> dict[str, Callable[[], Any]]:
    """One read of each live source's client against ``url`` (time-out 1 s), outside the
    executor: the client's own wall-clock limit is what is measured."""
    from opsmate.config import Settings
    from opsmate.tools import schemas as s
    from opsmate.tools.alertmanager.client import AlertmanagerClient
    from opsmate.tools.elasticsearch.tools import LogTools
    from opsmate.tools.loki.client import LokiClient
    from opsmate.tools.prometheus.tools import PrometheusTools
    from opsmate.tools.registry import live_registry

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "x",
        "clusters": [{"name": "c", "cluster": {"server": url}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
    }))  # fmt: skip
    one = {"url": url, "timeout": 1}
    a = Settings.model_validate({"default_environment": "test", "environments": {"test": {
        "prometheus": one, "alertmanager": one, "elasticsearch": one,
        "kubernetes": {"kubeconfig": str(kubeconfig), "timeout": 1}}}})  # fmt: skip
    b = Settings.model_validate({"environments": {"test": {"loki": one}}})
    env = a.environments["test"]
    list_pods = live_registry(a).get("list_pods")
    assert list_pods is not None
    return {
        "prometheus": lambda: PrometheusTools(a).query_metrics(
            s.QueryMetricsArgs(query="up", type="instant"), _ctx()
        ),
        "alertmanager": lambda: AlertmanagerClient.from_source(env.alertmanager, "test").alerts(),  # type: ignore[arg-type]
        "elasticsearch": lambda: LogTools(a).log_stats(s.LogStatsArgs(), _ctx()),
        "loki": lambda: LokiClient("test", b.environments["test"].loki).labels(_ctx()),  # type: ignore[arg-type]
        "kubernetes": lambda: list_pods.run(s.ListPodsArgs(), _ctx()),
    }


@pytest.mark.parametrize("server", ["drip", "silent"])
def test_every_client_ends_within_its_timeout_whatever_the_server_does(
    server: str, tmp_path: Path
) -> None:
    from opsmate.tools.base import ToolFailure

    with contextlib.ExitStack() as stack:
        if server == "drip":
            url = stack.enter_context(drip_server())
        else:
            port, _ = stack.enter_context(_silent_server())
            url = f"http://127.0.0.1:{port}"
        calls = _client_calls(url, tmp_path)
        with contextlib.suppress(ToolFailure):  # the client's first import is not the call
            calls["kubernetes"]()
        took: dict[str, float] = {}
        codes: dict[str, str] = {}

        def measure(name: str, call: Callable[[], Any]) -> None:
            began = time.monotonic()
            try:
                call()
                codes[name] = "answered"
            except ToolFailure as exc:
                codes[name] = exc.code
            took[name] = time.monotonic() - began

        threads = [threading.Thread(target=measure, args=kv) for kv in calls.items()]
        for th in threads:  # side by side: each client's own clock is what is measured
            th.start()
        for th in threads:
            th.join(30)
    assert codes == dict.fromkeys(calls, "timeout"), codes
    print(f"{server}: " + ", ".join(f"{k} {v:.2f} s" for k, v in took.items()))
    assert max(took.values()) <= 1 + GRACE_S, took


def test_a_dripping_alertmanager_ends_alerts_and_diagnose_alert_in_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with drip_server() as url:
        cfg = _config(tmp_path, {"alertmanager": {"url": url, "timeout": 1}})
        took = {}
        for argv in (["alerts"], ["alerts", "--json"], ["diagnose", "--alert", "X"]):
            began = time.monotonic()
            code, out, err = run_cli(["--config", str(cfg), *argv], capsys)
            took[" ".join(argv)] = time.monotonic() - began
            assert code == 3, (argv, code, err)
            assert f"Alertmanager at {url} did not answer within 1 s" in err
            assert "Traceback" not in err and not out.strip()
    print(", ".join(f"{k}: {v:.2f} s" for k, v in took.items()))
    assert max(took.values()) <= 1 + GRACE_S, took


def test_a_silent_source_ends_diagnose_within_its_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _silent_server() as (port, _), loki_server([]) as lk:
        url = f"http://127.0.0.1:{port}"
        cfg = _config(tmp_path, {"prometheus": {"url": url, "timeout": 2},
                                 "loki": {"url": lk.url}})  # fmt: skip
        code, report, elapsed = _diagnose(cfg, capsys, "--service", "order-service")
    assert _first_sentence(report).startswith(f"Could not read Prometheus (test, {url})")
    assert "(did not answer)" in report["summary"] and code == 1
    to_prom = [c for c in report["tool_calls"] if url in (c.get("error") or "")]
    # the call that timed out says its limit; calls after it say the source is down
    assert any("within 2.0 s" in c["error"] for c in to_prom), to_prom
    print(f"diagnose with a silent Prometheus (timeout 2 s): {elapsed:.2f} s")
    assert elapsed <= 2 + GRACE_S, elapsed


# -- Ctrl-C -----------------------------------------------------------------------------
def test_ctrl_c_ends_diagnose_within_2_s_while_a_call_hangs(tmp_path: Path) -> None:
    with _silent_server() as (port, connected):
        cfg = _config(tmp_path, {"prometheus": {"url": f"http://127.0.0.1:{port}",
                                                "timeout": 60}})  # fmt: skip
        proc = subprocess.Popen(
            [str(OPSMATE), "--config", str(cfg), "diagnose", QUESTION, "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ),
        )  # fmt: skip
        try:
            assert connected.wait(30), "the call never reached the server"
            time.sleep(0.3)  # the call is in flight, waiting for an answer
            sent = time.monotonic()
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
            took = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    print(f"SIGINT -> exit {proc.returncode} in {took:.2f} s")
    assert proc.returncode == 130, err[-2000:]
    assert took <= 2.0, f"{took:.2f} s after SIGINT"
    assert "Traceback" not in err and "Fatal Python error" not in err
    report = json.loads(out)  # the partial report is still printed
    assert report["status"] == "partial" and report["budget"]["stopped_by"] == "cancelled"


# -- the executor: one wall-clock limit per call, retries included; cancel -----------------
def _executor(run: Callable[..., Any], tmp_path: Path, limit_s: float | None) -> Any:
    from opsmate.config import ToolsConfig
    from opsmate.tools import schemas as s
    from opsmate.tools.audit import AuditLog
    from opsmate.tools.base import Constraints, SourceRoute, ToolSpec
    from opsmate.tools.executor import Executor
    from opsmate.tools.registry import ToolRegistry

    spec = ToolSpec(
        "list_alerts", "test", s.ListAlertsArgs, run,
        route=lambda args, env: SourceRoute("alertmanager", limit_s),
    )  # fmt: skip
    return Executor(
        ToolRegistry([spec]), Constraints(environment="test"),
        config=ToolsConfig(max_retries=5, timeout_seconds=30), audit=AuditLog(tmp_path / "a.jsonl"),
    )  # fmt: skip


def test_retries_stay_within_the_sources_timeout(tmp_path: Path) -> None:
    from opsmate.tools.base import ToolFailure

    attempts: list[float] = []

    def slow_then_fail(args: Any, ctx: Any) -> Any:
        attempts.append(time.monotonic())
        time.sleep(0.4)
        raise ToolFailure("server_error", "HTTP 503", retryable=True)

    ex = _executor(slow_then_fail, tmp_path, limit_s=1.0)
    began = time.monotonic()
    result = ex.call("list_alerts", {})
    took = time.monotonic() - began
    assert result.error is not None and result.error.code == "server_error"
    assert 1 <= len(attempts) <= 2, attempts  # 5 retries allowed; the time-out is not
    assert took <= 1.0 + 0.5, took
    assert [d.label for d in ex.down_sources()] == ["alertmanager (test)"]  # never answered


def test_a_cancel_ends_a_hung_call_at_once(tmp_path: Path) -> None:
    release = threading.Event()

    def hang(args: Any, ctx: Any) -> Any:
        release.wait(30)
        raise AssertionError("never reached")

    ex = _executor(hang, tmp_path, limit_s=30.0)
    ex.cancelled = threading.Event()
    threading.Timer(0.3, ex.cancelled.set).start()
    began = time.monotonic()
    result = ex.call("list_alerts", {})
    took = time.monotonic() - began
    release.set()
    assert result.error is not None and result.error.code == "interrupted", result.error
    assert took < 1.0, took
    assert not ex.down_sources()  # an interrupted call says nothing about the source
