"""A killed `opsmate index` leaves the last published index fully usable."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

from index_helpers import OPSMATE, POOL, SMALL_CORPUS, cli_json, write_runbooks

from opsmate.knowledge.index import GENS, TEST_SLEEP_ENV


def _building_rows(idx: Path) -> int:
    db = sqlite3.connect(idx / "manifest.sqlite3", timeout=10)
    try:
        return int(
            db.execute("SELECT count(*) FROM documents WHERE status = 'building'").fetchone()[0]
        )
    finally:
        db.close()


def _search(idx: Path, query: str) -> list[dict[str, Any]]:
    rc, out, err = cli_json("search", query, "--index-dir", str(idx), "--json", "--top-k", "10")
    assert rc == 0, err
    return list(out["hits"])


def test_sigkill_mid_index_then_search_then_reindex(tmp_path: Path) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    idx = tmp_path / "idx"
    rc, _, err = cli_json("index", str(root), "--index-dir", str(idx), "--json")
    assert rc == 0, err
    old_version = _search(idx, "PoolTimeout")[0]["doc_version"]

    # change two runbooks, delete one, add one; then kill the indexer mid-way
    (root / "order-service/pool.md").write_text(POOL + "\nCheck PgBouncer first.\n", "utf-8")
    (root / "gateway/cert.md").write_text("# Gateway cert\n\nUse cert-manager v2.\n", "utf-8")
    (root / "kubernetes/disk.md").unlink()
    write_runbooks(root, {"kafka/lag.md": "# Kafka consumer lag\n\nThe projector falls behind.\n"})
    proc = subprocess.Popen(
        [str(OPSMATE), "index", str(root), "--index-dir", str(idx), "--json"],
        env={**os.environ, TEST_SLEEP_ENV: "60"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while _building_rows(idx) == 0:  # the first new version is stored, then it sleeps
            assert proc.poll() is None, "indexer ended before it could be killed"
            assert time.monotonic() < deadline, "indexer never stored a new version"
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    # the last published index answers: old versions, the deleted runbook already gone
    pool = _search(idx, "PoolTimeout")
    assert pool[0]["source"] == "order-service/pool.md"
    assert pool[0]["doc_version"] == old_version
    assert all("PgBouncer" not in h["text"] for h in pool)
    assert all(h["source"] != "kubernetes/disk.md" for h in _search(idx, "DiskPressure evicted"))
    assert all(h["source"] != "kafka/lag.md" for h in _search(idx, "Kafka consumer lag"))

    # a new run recovers and completes
    rc, done, err = cli_json("index", str(root), "--index-dir", str(idx), "--json")
    assert rc == 0, err
    assert done["documents"] == 6 and not done["errors"]
    assert _building_rows(idx) == 0
    new_pool = _search(idx, "PgBouncer")
    assert new_pool[0]["source"] == "order-service/pool.md"
    assert new_pool[0]["doc_version"] != old_version
    assert _search(idx, "Kafka consumer lag projector")[0]["source"] == "kafka/lag.md"
    assert len(list((idx / GENS).iterdir())) <= 2
