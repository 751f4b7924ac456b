"""``opsmate doctor`` against a tiny local HTTP server standing in for the sources."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from opsmate.cli import main

TOKEN = "prom-t0ken-for-doctor"


class StandIn(BaseHTTPRequestHandler):
    """Prometheus buildinfo, Elasticsearch root, Kubernetes /version, OpenAI /models."""

    require_token = False
    es_product_header = True

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self) -> None:
        path = self.path.split("?")[0].rstrip("/") or "/"
        if path == "/api/v1/status/buildinfo":
            if self.require_token and self.headers.get("Authorization") != f"Bearer {TOKEN}":
                self._send(401, {"status": "error", "error": "unauthorized"})
                return
            self._send(200, {"status": "success", "data": {"version": "2.42.0", "revision": "x"}})
        elif path == "/":
            headers = {"X-Elastic-Product": "Elasticsearch"} if self.es_product_header else {}
            body = {"name": "n1", "cluster_name": "c", "version": {"number": "8.15.0"}}
            self._send(200, body, headers)
        elif path == "/version":
            self._send(
                200,
                {"major": "1", "minor": "30", "gitVersion": "v1.30.2", "platform": "linux/amd64"},
            )
        elif path == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": "qwen2.5-7b"}]})
        else:
            self._send(404, {"error": "not found"})


@pytest.fixture
def server() -> Iterator[str]:
    StandIn.require_token = False
    StandIn.es_product_header = True
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def kubeconfig(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: dev-1\n"
        f"clusters:\n- name: dev\n  cluster: {{server: '{url}'}}\n"
        "users:\n- name: me\n  user: {token: kube-token}\n"
        "contexts:\n- name: dev-1\n  context: {cluster: dev, user: me}\n"
    )
    return path


def write_config(tmp_path: Path, body: str) -> Path:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(body)
    return cfg


def run_doctor(
    cfg: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, dict[str, dict[str, str]], str]:
    with pytest.raises(SystemExit) as exc:
        main(["doctor", "--json", "--config", str(cfg)])
    out, err = capsys.readouterr()
    checks = json.loads(out)
    for c in checks:
        assert set(c) == {"check", "status", "detail", "fix"}
        assert c["status"] in ("ok", "warn", "fail")
    return int(exc.value.code or 0), {c["check"]: c for c in checks}, out + err


def test_all_sources_healthy(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = kubeconfig(tmp_path, server)
    cfg = write_config(
        tmp_path,
        f"model: 'openai:{server}/v1#qwen2.5-7b'\n"
        "default_environment: test\nenvironments:\n  test:\n"
        f"    prometheus: {{url: '{server}'}}\n"
        f"    elasticsearch: {{url: '{server}'}}\n"
        f"    kubernetes: {{context: dev-1, kubeconfig: '{kc}'}}\n",
    )
    code, checks, _ = run_doctor(cfg, capsys)
    assert code == 0
    assert checks["config"]["status"] == "ok"
    assert checks["prometheus[test]"]["status"] == "ok"
    assert "2.42.0" in checks["prometheus[test]"]["detail"]
    assert checks["elasticsearch[test]"]["status"] == "ok"
    assert "8.15.0" in checks["elasticsearch[test]"]["detail"]
    assert checks["kubernetes[test]"]["status"] == "ok"
    assert "v1.30.2" in checks["kubernetes[test]"]["detail"]
    assert checks["model"]["status"] == "ok" and "qwen2.5-7b" in checks["model"]["detail"]
    assert checks["index"]["status"] == "warn" and "opsmate index" in checks["index"]["fix"]
    assert checks["keyring"]["status"] == "warn"  # the tests' keyring is the null backend


def test_unreachable_source_exits_3(
    server: str, dead_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = write_config(
        tmp_path,
        "environments:\n"
        f"  test:\n    prometheus: {{url: '{server}'}}\n"
        f"  prod:\n    prometheus: {{url: '{dead_url}'}}\n"
        f"    kubernetes: {{kubeconfig: '{kubeconfig(tmp_path, dead_url)}'}}\n",
    )
    code, checks, _ = run_doctor(cfg, capsys)
    assert code == 3
    assert checks["prometheus[test]"]["status"] == "ok"
    dead = checks["prometheus[prod]"]
    assert dead["status"] == "fail" and "unreachable" in dead["detail"]
    assert "environments.prod.prometheus.url" in dead["fix"]
    assert checks["kubernetes[prod]"]["status"] == "fail"
    assert "unreachable" in checks["kubernetes[prod]"]["detail"]


def test_authentication(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    StandIn.require_token = True
    cfg = write_config(tmp_path, f"environments:\n  test:\n    prometheus: {{url: '{server}'}}\n")
    code, checks, _ = run_doctor(cfg, capsys)
    assert code == 2
    prom = checks["prometheus[test]"]
    assert prom["status"] == "fail" and "401" in prom["detail"]
    assert "opsmate auth set prometheus --env test" in prom["fix"]
    monkeypatch.setenv("OPSMATE_PROMETHEUS_TOKEN", TOKEN)
    code, checks, text = run_doctor(cfg, capsys)
    assert code == 0 and checks["prometheus[test]"]["status"] == "ok"
    assert "token from env" in checks["credentials prometheus[test]"]["detail"]
    assert TOKEN not in text


def test_elasticsearch_without_product_header_warns(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    StandIn.es_product_header = False
    cfg = write_config(
        tmp_path, f"environments:\n  test:\n    elasticsearch: {{url: '{server}'}}\n"
    )
    code, checks, _ = run_doctor(cfg, capsys)
    assert code == 0
    es = checks["elasticsearch[test]"]
    assert es["status"] == "warn" and "X-Elastic-Product" in es["detail"]


def test_config_error_names_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = write_config(tmp_path, "environments:\n  test:\n    promethues: {url: 'http://x'}\n")
    code, checks, _ = run_doctor(cfg, capsys)
    assert code == 2
    assert checks["config"]["status"] == "fail"
    assert "environments.test.promethues" in checks["config"]["detail"]
    assert list(checks) == ["config"]


def test_missing_model_file_and_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = write_config(
        tmp_path, f"model: 'gguf:{tmp_path}/nope.gguf'\nembedding: {{backend: none}}\n"
    )
    code, checks, _ = run_doctor(cfg, capsys)
    assert code == 2
    assert checks["model"]["status"] == "fail" and "nope.gguf" in checks["model"]["detail"]
    assert checks["embeddings"]["status"] == "ok"
    assert checks["environments"]["status"] == "warn"
    with pytest.raises(SystemExit) as exc:
        main(["doctor", "--config", str(cfg)])
    out, err = capsys.readouterr()
    assert exc.value.code == 2
    assert "model" in out and "fail" in out and "1 check(s) failed: model" in err


def test_embedding_model_cache_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], minilm_available: bool
) -> None:
    cfg = write_config(tmp_path, "model: none\n")
    code, checks, _ = run_doctor(cfg, capsys)
    assert code == 0
    expected = "ok" if minilm_available else "warn"
    assert checks["embeddings"]["status"] == expected
    empty = tmp_path / "empty-model"
    empty.mkdir()
    cfg = write_config(tmp_path, f"embedding: {{backend: onnx, model_path: '{empty}'}}\n")
    code, checks, _ = run_doctor(cfg, capsys)
    assert checks["embeddings"]["status"] == "warn" and str(empty) in checks["embeddings"]["detail"]
