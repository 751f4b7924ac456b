"""`opsmate index` through the console script: summary, bad input, lock, exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from filelock import FileLock
from index_helpers import SMALL_CORPUS, cli_json, run_cli, write_runbooks

from opsmate.knowledge.index import LOCK_NAME

SUMMARY_KEYS = {"documents", "chunks", "added", "updated", "removed", "unchanged", "seconds"}


@pytest.mark.needs_minilm
def test_index_json_summary_and_incremental_rerun(tmp_path: Path) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    idx = tmp_path / "idx"
    rc, out, err = cli_json("index", str(root), "--index-dir", str(idx), "--json")
    assert rc == 0, err
    assert set(out) >= SUMMARY_KEYS
    assert out["documents"] == 6 and out["added"] == 6 and out["errors"] == []
    assert out["embedding_model"].startswith("onnx:")
    assert "reading runbooks" not in err  # no progress bar when stderr is not a terminal
    rc, again, err = cli_json("index", str(root), "--index-dir", str(idx), "--json")
    assert rc == 0 and again["unchanged"] == 6 and again["chunks_touched"] == 0


def test_human_summary_and_embedding_none_warns(tmp_path: Path) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    proc = run_cli("index", str(root), "--index-dir", str(tmp_path / "i"), "--embedding", "none")
    assert proc.returncode == 0, proc.stderr
    assert "indexed 6 runbooks" in proc.stdout
    assert "BM25 only" in proc.stderr


def test_bad_files_are_named_and_the_rest_is_indexed(tmp_path: Path) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    (root / "latin1.md").write_bytes("# Caf\xe9 runbook\n\nna\xefve text\n".encode("latin-1"))
    (root / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (root / "empty.md").write_text("", "utf-8")
    (root / "huge.md").write_text("# Huge\n\n" + ("word " * 1_100_000), "utf-8")  # ~5.5 MB
    (root / "broken.md").write_text("---\ntitle: [unclosed\n---\n\n# Broken\n\ntext\n", "utf-8")
    rc, out, err = cli_json(
        "index", str(root), "--index-dir", str(tmp_path / "idx"), "--json", "--embedding", "none"
    )
    assert rc == 2
    rejected = {e["source"] for e in out["errors"]}
    assert rejected == {"latin1.md", "binary.md", "huge.md", "broken.md"}
    for name in rejected:
        assert name in err
    assert "UTF-8" in err and "binary" in err and "MiB" in err
    assert any("empty.md" in w for w in out["warnings"])  # a warning, not an error
    assert out["documents"] == 7  # the six good runbooks and the empty one
    rc, hits, err = cli_json(
        "search", "PoolTimeout", "--index-dir", str(tmp_path / "idx"), "--json"
    )
    assert rc == 0 and hits["hits"][0]["source"] == "order-service/pool.md"


def test_folder_without_markdown_and_missing_path(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("hello", "utf-8")
    proc = run_cli("index", str(tmp_path / "notes"), "--index-dir", str(tmp_path / "idx"))
    assert proc.returncode == 2
    assert "no Markdown files" in proc.stderr and str(tmp_path / "notes") in proc.stderr
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    rc, out, err = cli_json(
        "index",
        str(root),
        str(tmp_path / "nope"),
        "--index-dir",
        str(tmp_path / "idx"),
        "--json",
        "--embedding",
        "none",
    )
    assert rc == 2 and out["documents"] == 6
    assert "no such file or folder" in err


def test_locked_index_fails_fast_with_the_lock_named(tmp_path: Path) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    idx = tmp_path / "idx"
    idx.mkdir()
    with FileLock(str(idx / LOCK_NAME)):
        proc = run_cli("index", str(root), "--index-dir", str(idx), "--embedding", "none")
    assert proc.returncode == 2
    assert str(idx / LOCK_NAME) in proc.stderr and "locked" in proc.stderr


def test_unknown_embedding_backend_is_a_usage_error(tmp_path: Path) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    proc = run_cli("index", str(root), "--index-dir", str(tmp_path / "i"), "--embedding", "bert")
    assert proc.returncode == 2 and "bert" in proc.stderr


def test_default_paths_come_from_the_config(tmp_path: Path) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    config = tmp_path / "config.yaml"
    config.write_text(
        f"runbooks: [{str(root)!r}]\nindex_dir: {str(tmp_path / 'idx')!r}\n"
        "embedding: {backend: none}\n",
        "utf-8",
    )
    rc, out, err = cli_json("--config", str(config), "index", "--json")
    assert rc == 0 and out["documents"] == 6 and out["index_dir"] == str(tmp_path / "idx"), err
    proc = run_cli("index", "--config", str(tmp_path / "missing.yaml"))
    assert proc.returncode == 2
    empty = tmp_path / "empty.yaml"
    empty.write_text("model: none\n", "utf-8")
    proc = run_cli("index", "--config", str(empty))
    assert proc.returncode == 2 and "no runbook folder" in proc.stderr
