"""`opsmate search` through the console script: JSON contract, batch, filters, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from index_helpers import SMALL_CORPUS, cli_json, run_cli, write_runbooks

pytestmark = pytest.mark.needs_minilm  # its index is built with the MiniLM vectors

HIT_KEYS = {
    "rank", "score", "chunk_id", "source", "heading_path", "text", "parent_text",
    "doc_version", "metadata",
}  # fmt: skip


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory, session_home: Path) -> Path:
    """One index for the module (built before the per-test user dirs exist: isolate here)."""
    base = tmp_path_factory.mktemp("search")
    root = write_runbooks(base / "rb", SMALL_CORPUS)
    env = {
        "HOME": str(session_home),
        "OPSMATE_CACHE_DIR": str(session_home / ".cache" / "opsmate"),
        "OPSMATE_DATA_DIR": str(base / "data"),
        "OPSMATE_CONFIG_DIR": str(base / "config"),
    }
    proc = run_cli("index", str(root), "--index-dir", str(base / "idx"), env=env)
    assert proc.returncode == 0 and "BM25 only" not in proc.stderr, proc.stderr
    return base / "idx"


def test_json_output_follows_the_contract(index_dir: Path) -> None:
    rc, out, err = cli_json(
        "search", "PoolTimeout checkout hangs", "--index-dir", str(index_dir), "--json"
    )
    assert rc == 0, err
    assert {"query", "hits", "low_evidence"} <= set(out)
    assert out["query"] == "PoolTimeout checkout hangs" and out["low_evidence"] is False
    hit = out["hits"][0]
    assert set(hit) >= HIT_KEYS
    assert hit["rank"] == 1 and hit["source"] == "order-service/pool.md"
    assert hit["heading_path"][0] == "Order service connection pool exhaustion"
    assert hit["metadata"]["service"] == "order-service"
    assert hit["text"] in hit["parent_text"]
    assert [h["rank"] for h in out["hits"]] == list(range(1, len(out["hits"]) + 1))
    # without --explain the JSON keeps exactly the keys it had before issue 13
    assert set(out) == {"query", "hits", "low_evidence", "mode", "warnings"}
    assert "explain" not in hit


def test_modes_top_k_and_filters(index_dir: Path) -> None:
    for mode in ("bm25", "vector", "hybrid"):
        rc, out, err = cli_json(
            "search", "restart redis", "--index-dir", str(index_dir), "--json",
            "--mode", mode, "--top-k", "1", "--filter", "environment=prod",
        )  # fmt: skip
        assert rc == 0, err
        assert [h["source"] for h in out["hits"]] == ["redis/restart-prod.md"], mode
    proc = run_cli("search", "x", "--index-dir", str(index_dir), "--filter", "colour=red")
    assert proc.returncode == 2 and "colour" in proc.stderr
    proc = run_cli("search", "x", "--index-dir", str(index_dir), "--filter", "service")
    assert proc.returncode == 2 and "key=value" in proc.stderr


def test_explain_shows_understanding_and_why_each_hit_ranked(index_dir: Path) -> None:
    q = "线上 redis 连接打满了能重启吗，从 10:00 开始"
    rc, out, err = cli_json("search", q, "--index-dir", str(index_dir), "--json", "--explain")
    assert rc == 0, err
    assert {"query", "hits", "low_evidence", "explain"} <= set(out)
    u = out["explain"]["understanding"]
    assert u["hints"]["environment"] == "prod" and u["hints"]["times"] == ["10:00"]
    assert {"source": "重启", "added": ["restart"], "kind": "translation"} in u["expansions"]
    assert out["explain"]["evidence"]["threshold"] > 0
    hit = out["hits"][0]
    assert hit["source"] == "redis/restart-prod.md"
    assert set(hit["explain"]) >= {"fused_rank", "features", "contributions", "final_score"}
    proc = run_cli("search", q, "--index-dir", str(index_dir), "--explain")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "how the query was understood" in text and "why each hit ranked" in text
    assert "environment prod" in text and "translation" in text and "redis/restart-prod.md" in text


def test_human_output_is_a_table_on_stdout(index_dir: Path) -> None:
    proc = run_cli("search", "DiskPressure", "--index-dir", str(index_dir))
    assert proc.returncode == 0, proc.stderr
    assert "kubernetes/disk.md" in proc.stdout


def test_out_of_scope_query_is_low_evidence(index_dir: Path) -> None:
    rc, out, _ = cli_json(
        "search", "how to bake sourdough bread", "--index-dir", str(index_dir), "--json"
    )
    assert rc == 0 and out["low_evidence"] is True


def test_batch_keeps_input_order_and_ids(index_dir: Path, tmp_path: Path) -> None:
    batch = tmp_path / "q.jsonl"
    lines = [
        {"id": "a", "query": "DiskPressure evicted"},
        {"id": 2, "query": "PoolTimeout", "top_k": 1},
        {"id": "c", "query": "restart redis", "filters": {"environment": "test"}, "extra": 1},
    ]
    batch.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n", "utf-8")
    proc = run_cli("search", "--batch", str(batch), "--index-dir", str(index_dir))
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["id"] for o in out] == ["a", 2, "c"]
    assert out[0]["hits"][0]["source"] == "kubernetes/disk.md"
    assert len(out[1]["hits"]) == 1 and out[1]["query"] == "PoolTimeout"
    assert "redis/restart-prod.md" not in {h["source"] for h in out[2]["hits"]}


def test_bad_batch_line_is_named(index_dir: Path, tmp_path: Path) -> None:
    batch = tmp_path / "bad.jsonl"
    batch.write_text('{"id": 1, "query": "ok"}\n{"id": 2}\n', "utf-8")
    proc = run_cli("search", "--batch", str(batch), "--index-dir", str(index_dir))
    assert proc.returncode == 2 and f"{batch}:2" in proc.stderr and proc.stdout == ""
    batch.write_text('{"id": 1, "query": "ok"}\nnot json\n', "utf-8")
    proc = run_cli("search", "--batch", str(batch), "--index-dir", str(index_dir))
    assert proc.returncode == 2 and f"{batch}:2" in proc.stderr


def test_missing_index_tells_to_run_index(tmp_path: Path) -> None:
    proc = run_cli("search", "anything", "--index-dir", str(tmp_path / "none"))
    assert proc.returncode == 2 and "opsmate index" in proc.stderr
    proc = run_cli("search", "--index-dir", str(tmp_path / "none"))
    assert proc.returncode == 2 and "QUERY" in proc.stderr


def test_vector_mode_on_a_bm25_only_index_is_a_clear_error(tmp_path: Path) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    run_cli("index", str(root), "--index-dir", str(tmp_path / "i"), "--embedding", "none")
    proc = run_cli("search", "pool", "--index-dir", str(tmp_path / "i"), "--mode", "vector")
    assert proc.returncode == 2 and "no vectors" in proc.stderr
    rc, out, err = cli_json("search", "pool", "--index-dir", str(tmp_path / "i"), "--json")
    assert rc == 0 and "BM25 only" in err and out["hits"]
