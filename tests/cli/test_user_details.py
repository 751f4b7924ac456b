"""Details a user hit (issue 24 §6), through the real console script: ``doctor`` at 80
columns keeps every URL and variable name whole; ``search --json`` says ``bm25`` when the
index has no vectors; ``auth`` knows Loki."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

OPSMATE = str(Path(sys.executable).parent / "opsmate")


def _run(*args: str, cwd: Path, columns: int = 80) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "dumb"}
    return subprocess.run(
        [OPSMATE, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120
    )


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


def test_doctor_at_80_columns_never_cuts_a_url_or_a_variable_name(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/prometheus-behind-a-long-reverse-proxy-path"
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        "embedding: {backend: none}\n"
        f"environments:\n  test:\n    prometheus: {{url: '{url}', timeout: 2}}\n",
        encoding="utf-8",
    )
    r = _run("--config", str(cfg), "doctor", cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    lines = r.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    assert any(url in line for line in lines), r.stdout  # on one line, whole
    assert any("environments.test.prometheus.url" in line for line in lines), r.stdout
    words = {w.strip(",") for line in lines for w in line.split()}
    for name in ("OPSMATE_PROMETHEUS_TOKEN", "OPSMATE_ELASTICSEARCH_API_KEY"):
        if name in r.stdout.replace("\n", " "):  # the keyring check names the variables
            assert name in words, f"{name} was cut:\n{r.stdout}"


def test_search_json_says_bm25_over_an_index_without_vectors(tmp_path: Path) -> None:
    rb = tmp_path / "runbooks"
    rb.mkdir()
    (rb / "pool.md").write_text(
        "# order-service: connection pool exhausted\n\nRestart the consumers, then raise "
        "DB_POOL_SIZE.\n",
        encoding="utf-8",
    )
    ix = tmp_path / "index"
    r = _run("index", str(rb), "--index-dir", str(ix), "--embedding", "none", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _run("search", "connection pool exhausted", "--index-dir", str(ix), "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["mode"] == "bm25" and out["hits"], out
    assert any("BM25 only" in w for w in out["warnings"])
    r = _run("search", "pool", "--index-dir", str(ix), "--mode", "bm25", "--json", cwd=tmp_path)
    assert json.loads(r.stdout)["mode"] == "bm25"


def test_auth_knows_loki(tmp_path: Path) -> None:
    r = _run("auth", "delete", "loki", "--env", "test", cwd=tmp_path)
    assert "unknown source" not in r.stderr, r.stderr
    r = _run("auth", "delete", "lokii", cwd=tmp_path)
    assert r.returncode == 2 and "loki" in r.stderr and "unknown source 'lokii'" in r.stderr
    r = _run("auth", "set", "--help", cwd=tmp_path, columns=200)
    assert "loki" in r.stdout
