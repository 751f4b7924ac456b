"""The default ``onnx`` model is MiniLM's int8 copy; float32 stays selectable and readable.

- indexing writes the int8 copy once, next to chromadb's float32 files, and uses it;
- an index built with float32 (``embedding.model_path``) is searched with float32, and
  one built with the int8 copy with the int8 copy, whatever the default is now;
- the copy goes to the next folder (opsmate's cache dir) when the first cannot be made;
- the numpy-built BM25 matrix scores like bm25s's own build and loads with bm25s.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from index_helpers import SMALL_CORPUS, write_runbooks

from opsmate.config import EmbeddingConfig
from opsmate.knowledge.embeddings import (
    OnnxEmbedder,
    chroma_onnx_dir,
    default_onnx_dir,
    int8_onnx_dirs,
    make_embedder,
    onnx_folder_for,
)
from opsmate.knowledge.index import KnowledgeIndex
from opsmate.knowledge.lexical import K1, B, Bm25sIndex, load_lexical
from opsmate.knowledge.quantize import ensure_int8
from opsmate.knowledge.retrieve import open_retriever
from opsmate.knowledge.sources import discover

pytest.importorskip("onnx")


@pytest.mark.needs_minilm
def test_indexing_uses_the_int8_copy_and_search_loads_the_index_model(tmp_path: Path) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    files, _ = discover([root])
    emb = make_embedder(EmbeddingConfig(), allow_download=True)
    assert isinstance(emb, OnnxEmbedder)
    assert emb.folder == int8_onnx_dirs()[0] == default_onnx_dir()
    assert emb.model_id.startswith("onnx:all-MiniLM-L6-v2-int8:")
    fp32 = OnnxEmbedder(chroma_onnx_dir())
    assert fp32.model_id.startswith("onnx:all-MiniLM-L6-v2:")
    assert onnx_folder_for(fp32.model_id) == chroma_onnx_dir()
    assert onnx_folder_for(emb.model_id) == emb.folder

    for name, config, model_id in (
        ("int8", EmbeddingConfig(), emb.model_id),
        ("fp32", EmbeddingConfig(model_path=str(chroma_onnx_dir())), fp32.model_id),
    ):
        s = KnowledgeIndex(tmp_path / name).update(files, embedding=config)
        assert s.embedding_model == model_id
        r = open_retriever(tmp_path / name)
        resp = r.search("PoolTimeout connection pool exhausted", mode="vector")
        assert resp.hits and not any("BM25 only" in w for w in resp.warnings)
        loaded = r.embedder()
        assert loaded is not None and loaded.model_id == model_id
    # a float32 index searched under the int8 default: still float32 queries
    default = make_embedder(EmbeddingConfig(), model_id=fp32.model_id)
    assert default is not None and default.model_id == fp32.model_id


@pytest.mark.needs_minilm
def test_int8_copy_falls_back_to_the_next_writable_folder(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")  # a folder cannot be made under a file, even by root
    out = ensure_int8([blocker / "onnx-int8", tmp_path / "cache" / "m-int8"], chroma_onnx_dir())
    assert out == tmp_path / "cache" / "m-int8"
    assert (out / "model.onnx").is_file() and (out / "tokenizer.json").is_file()
    assert not list((tmp_path / "cache").glob(".m-int8-*"))  # no temporary folder left
    assert ensure_int8([blocker / "x", out], chroma_onnx_dir()) == out  # found, not rewritten
    vec = OnnxEmbedder(out).embed(["connection pool exhausted"])
    ref = OnnxEmbedder(chroma_onnx_dir()).embed(["connection pool exhausted"])
    assert float(vec[0] @ ref[0]) > 0.95  # int8 stays close to float32


def test_numpy_bm25_matrix_scores_like_bm25s(tmp_path: Path) -> None:
    import bm25s

    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(60)]
    docs = [[str(w) for w in rng.choice(words, int(rng.integers(1, 40)))] for _ in range(300)]
    docs.append([])
    ours = Bm25sIndex.build(docs)
    model = bm25s.BM25(k1=K1, b=B, method="lucene")
    model.index([d or [""] for d in docs], show_progress=False)
    theirs = Bm25sIndex(model)
    ours.save(tmp_path / "lex")
    loaded = load_lexical(tmp_path / "lex")
    for q in (["w1"], ["w2", "w7", "w7"], ["w59", "nope"], ["nope"]):
        np.testing.assert_allclose(ours.scores(q), theirs.scores(q), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(loaded.scores(q), theirs.scores(q), rtol=1e-5, atol=1e-6)
    assert ours.doc_freq("w3") == theirs.doc_freq("w3") == loaded.doc_freq("w3")
    assert sorted(ours.postings("w3").tolist()) == sorted(theirs.postings("w3").tolist())
    assert ours.n_docs == loaded.n_docs == len(docs)
