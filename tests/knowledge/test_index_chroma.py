"""The chromadb vector backend (real chromadb, real MiniLM): same answers as numpy."""

from __future__ import annotations

from pathlib import Path

import pytest
from index_helpers import POOL, SMALL_CORPUS, cli_json, write_runbooks

from opsmate.config import EmbeddingConfig
from opsmate.knowledge.index import KnowledgeIndex
from opsmate.knowledge.retrieve import open_retriever
from opsmate.knowledge.sources import discover
from opsmate.knowledge.vectors import ChromaVectors, chroma_client

QUERIES = ["database connections exhausted", "restart redis", "node disk almost full"]


def _index(idx: Path, root: Path, backend: str) -> None:
    files, _ = discover([root])
    KnowledgeIndex(idx).update(files, embedding=EmbeddingConfig(), vector_backend=backend)


@pytest.mark.needs_minilm
def test_chroma_and_numpy_give_the_same_ranking(tmp_path: Path) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    _index(tmp_path / "np", root, "numpy")
    _index(tmp_path / "ch", root, "chroma")
    a, b = open_retriever(tmp_path / "np"), open_retriever(tmp_path / "ch")
    for q in QUERIES:
        for flt in (None, {"environment": "prod"}, {"service": "redis"}):
            ra = a.search(q, mode="vector", top_k=4, filters=flt)
            rb = b.search(q, mode="vector", top_k=4, filters=flt)
            assert [h.chunk_id for h in ra.hits] == [h.chunk_id for h in rb.hits], (q, flt)
            assert ra.low_evidence == rb.low_evidence
    # deprecated runbooks stay out unless asked for, inside chromadb too
    dep = b.search("renew certificate openssl by hand", mode="vector", top_k=10)
    assert "gateway/cert-old.md" not in {h.source for h in dep.hits}
    dep = b.search(
        "renew certificate openssl by hand", mode="vector", top_k=10, include_deprecated=True
    )
    assert "gateway/cert-old.md" in {h.source for h in dep.hits}


@pytest.mark.needs_minilm
def test_chroma_collection_follows_versions_and_models(tmp_path: Path) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    idx = tmp_path / "idx"
    config = tmp_path / "config.yaml"
    config.write_text("retrieval:\n  vector_backend: chroma\n", "utf-8")
    rc, first, err = cli_json("index", str(root), "--index-dir", str(idx), "--json",
                              "--config", str(config))  # fmt: skip
    assert rc == 0 and first["vector_backend"] == "chroma", err
    store = ChromaVectors(idx, first["embedding_model"])
    assert store.col.count() == first["chunks"]

    (root / "order-service/pool.md").write_text(POOL + "\nCheck PgBouncer.\n", "utf-8")
    (root / "kubernetes/disk.md").unlink()
    rc, second, err = cli_json("index", str(root), "--index-dir", str(idx), "--json",
                               "--config", str(config))  # fmt: skip
    assert rc == 0, err
    store = ChromaVectors(idx, first["embedding_model"])
    assert store.col.count() == second["chunks"]  # old versions' vectors deleted
    rc, out, err = cli_json("search", "PgBouncer", "--index-dir", str(idx), "--json",
                            "--mode", "vector")  # fmt: skip
    assert rc == 0 and out["hits"][0]["source"] == "order-service/pool.md", err

    # a BM25-only rebuild drops the vector side rather than mixing spaces
    rc, third, err = cli_json("index", str(root), "--index-dir", str(idx), "--json",
                              "--config", str(config), "--embedding", "none")  # fmt: skip
    assert rc == 0 and third["embedding_model"] is None
    rc, again, err = cli_json("index", str(root), "--index-dir", str(idx), "--json",
                              "--config", str(config))  # fmt: skip
    assert rc == 0 and again["embedded"] == 0  # from the embedding cache
    names = [getattr(c, "name", c) for c in chroma_client(idx).list_collections()]
    assert names == [store.name]
