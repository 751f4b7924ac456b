"""The versioned index: incremental updates, atomic versions, tombstones, lock, model change."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from filelock import FileLock
from index_helpers import POOL, SMALL_CORPUS, write_runbooks

from opsmate.config import EmbeddingConfig
from opsmate.errors import IndexLockedError, KnowledgeIndexError
from opsmate.knowledge.index import GENS, LOCK_NAME, IndexSummary, KnowledgeIndex, index_stats
from opsmate.knowledge.manifest import Manifest
from opsmate.knowledge.retrieve import open_retriever
from opsmate.knowledge.sources import discover

NONE = EmbeddingConfig(backend="none")
ONNX = EmbeddingConfig(backend="onnx")


def _update(index_dir: Path, root: Path, emb: EmbeddingConfig = NONE) -> IndexSummary:
    files, errors = discover([root])
    assert not errors
    return KnowledgeIndex(index_dir).update(files, embedding=emb)


def _sources(index_dir: Path, query: str, **kw: object) -> list[str]:
    resp = open_retriever(index_dir).search(query, top_k=10, **kw)  # type: ignore[arg-type]
    return [h.source for h in resp.hits]


def test_first_index_then_unchanged_costs_nothing(tmp_path: Path) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    first = _update(tmp_path / "idx", root)
    assert (first.documents, first.added, first.updated, first.removed) == (6, 6, 0, 0)
    assert first.chunks > 0 and first.chunks_touched == first.chunks
    again = _update(tmp_path / "idx", root)
    assert (again.unchanged, again.added, again.updated, again.chunks_touched) == (6, 0, 0, 0)
    assert again.generation == first.generation  # nothing rebuilt
    assert again.chunks == first.chunks


def test_changed_document_gets_a_new_version_and_only_its_chunks_are_touched(
    tmp_path: Path,
) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    idx = tmp_path / "idx"
    _update(idx, root)
    old = {h.source: h.doc_version for h in open_retriever(idx).search("PoolTimeout").hits}
    (root / "order-service/pool.md").write_text(POOL + "\nAlso check PgBouncer.\n", "utf-8")
    s = _update(idx, root)
    assert (s.updated, s.unchanged, s.added, s.removed) == (1, 5, 0, 0)
    n_pool = sum(1 for _ in open_retriever(idx).corpus.chunk_ids)  # all chunks
    assert 0 < s.chunks_touched < n_pool
    hits = open_retriever(idx).search("PgBouncer").hits
    assert hits[0].source == "order-service/pool.md"
    assert hits[0].doc_version != old["order-service/pool.md"]
    # the old version is gone from the manifest (storage cleaned after publish)
    db = sqlite3.connect(idx / "manifest.sqlite3")
    versions = db.execute(
        "SELECT count(*) FROM documents WHERE source = 'order-service/pool.md'"
    ).fetchone()[0]
    assert versions == 1
    assert sorted(p.name for p in (idx / GENS).iterdir()) == ["1", "2"]  # current + previous


def test_deleted_document_disappears(tmp_path: Path) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    idx = tmp_path / "idx"
    _update(idx, root)
    assert "kubernetes/disk.md" in _sources(idx, "DiskPressure evicted")
    (root / "kubernetes/disk.md").unlink()
    s = _update(idx, root)
    assert s.removed == 1 and s.documents == 5
    assert "kubernetes/disk.md" not in _sources(idx, "DiskPressure evicted")


def test_tombstone_is_visible_to_an_open_reader_before_any_rebuild(tmp_path: Path) -> None:
    """A reader that loaded the index sees a deletion at its next query."""
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    idx = tmp_path / "idx"
    _update(idx, root)
    reader = open_retriever(idx)
    assert reader.search("DiskPressure").hits[0].source == "kubernetes/disk.md"
    # tombstone only (what `update` does first): no new generation yet
    m = Manifest(idx)
    with m.write() as db:
        db.execute(
            "UPDATE documents SET published = 0, status = 'tombstoned' "
            "WHERE source = 'kubernetes/disk.md'"
        )
        m.bump_revision()
    m.close()
    assert all(h.source != "kubernetes/disk.md" for h in reader.search("DiskPressure").hits)


def test_filters_deprecated_and_environment(tmp_path: Path) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    idx = tmp_path / "idx"
    _update(idx, root)
    assert "gateway/cert-old.md" not in _sources(idx, "renew gateway TLS certificate openssl")
    assert "gateway/cert-old.md" in _sources(
        idx, "renew gateway TLS certificate openssl", include_deprecated=True
    )
    prod = _sources(idx, "restart redis", filters={"environment": "prod"})
    assert "redis/restart-prod.md" in prod and "redis/restart-test.md" not in prod
    # a runbook without `environment` applies to every environment
    assert "kubernetes/disk.md" in _sources(idx, "DiskPressure", filters={"environment": "prod"})
    only = _sources(idx, "restart", filters={"service": "redis"})
    assert only and set(only) <= {"redis/restart-prod.md", "redis/restart-test.md"}


def test_second_indexer_fails_fast_naming_the_lock(tmp_path: Path) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    idx = tmp_path / "idx"
    idx.mkdir()
    with FileLock(str(idx / LOCK_NAME)), pytest.raises(IndexLockedError) as err:
        _update(idx, root)
    assert LOCK_NAME in str(err.value) and str(idx) in str(err.value)
    assert _update(idx, root).documents == 6  # released: works again


def test_missing_and_empty_index_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeIndexError, match="opsmate index"):
        open_retriever(tmp_path / "nothing")
    root = write_runbooks(tmp_path / "rb", {"empty.md": ""})
    _update(tmp_path / "idx", root)
    with pytest.raises(KnowledgeIndexError, match="opsmate index"):
        open_retriever(tmp_path / "idx")


@pytest.mark.needs_minilm
def test_embedding_model_change_rebuilds_the_vector_side(tmp_path: Path) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    idx = tmp_path / "idx"
    bm25_only = _update(idx, root, NONE)
    assert bm25_only.embedding_model is None
    resp = open_retriever(idx).search("PoolTimeout")
    assert any("BM25 only" in w for w in resp.warnings)
    with_vectors = _update(idx, root, ONNX)
    assert with_vectors.unchanged == 6  # documents unchanged ...
    assert with_vectors.embedding_model and with_vectors.embedding_model.startswith("onnx:")
    assert with_vectors.generation == bm25_only.generation + 1  # ... vectors rebuilt
    vec = open_retriever(idx).search("database connections exhausted", mode="vector")
    assert vec.hits[0].source == "order-service/pool.md" and not vec.warnings
    stats = index_stats(idx)
    assert stats["documents"] == 6 and stats["embedding_model"] == with_vectors.embedding_model
    # embeddings come from the cache the second time: nothing is embedded again
    again = _update(tmp_path / "idx2", root, ONNX)
    assert again.embedded == 0 and again.chunks == with_vectors.chunks


def test_a_retriever_opened_in_one_thread_searches_from_others(tmp_path: Path) -> None:
    """The TUI opens the index once and searches from worker threads."""
    from concurrent.futures import ThreadPoolExecutor

    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    _update(tmp_path / "idx", root)
    retriever = open_retriever(tmp_path / "idx")
    queries = ["PoolTimeout", "DiskPressure", "restart redis", "certificate"] * 5
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda q: retriever.search(q, mode="bm25").hits[0].source, queries))
    assert results[:4] == [
        "order-service/pool.md",
        "kubernetes/disk.md",
        results[2],
        "gateway/cert.md",
    ]
    assert results[2].startswith("redis/") and results[4:8] == results[:4]
