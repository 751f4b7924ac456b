"""The fast paths of issue 19 give the same answers as the slow ones they replace.

- term presence from the BM25 postings == membership in each chunk's stored terms;
- grouped max / mean of the similarities == the per-group ``positions_of`` slices;
- the coverage of the top lexical hits == ``lexical.query_coverage`` per chunk;
- a re-index that reuses the previous generation's tokenized headings / metadata
  builds the same BM25F index as a build from nothing;
- batches embedded side by side == batches embedded one after another.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from index_helpers import POOL, SMALL_CORPUS, write_runbooks

from opsmate.config import EmbeddingConfig
from opsmate.knowledge.embeddings import OnnxEmbedder
from opsmate.knowledge.fields import FIELDS_DIR, FieldIndex
from opsmate.knowledge.index import FIELD_MEMO, GENS, KnowledgeIndex
from opsmate.knowledge.lexical import build_lexical, query_coverage
from opsmate.knowledge.retrieve import HybridRetriever, open_retriever
from opsmate.knowledge.sources import discover

NONE = EmbeddingConfig(backend="none")


def _index(tmp_path: Path) -> tuple[Path, Path]:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    idx = tmp_path / "idx"
    files, _ = discover([root])
    KnowledgeIndex(idx).update(files, embedding=NONE)
    return root, idx


def test_term_presence_matches_the_stored_terms(tmp_path: Path) -> None:
    _, idx = _index(tmp_path)
    corpus = open_retriever(idx).corpus
    positions = np.arange(corpus.size, dtype=np.int64)
    stored = [set(corpus.store.terms(p)) for p in range(corpus.size)]
    terms = [*sorted({t for s in stored for t in s})[:200], "zebra-not-indexed", ""]
    present = corpus.term_presence(terms, positions)
    expected = np.array([[t in s for s in stored] for t in terms])
    assert present.shape == (len(terms), corpus.size)
    assert (present == expected).all()
    assert present.any()  # the check is not vacuous
    # a subset of positions, out of order
    some = positions[::-2]
    assert (corpus.term_presence(terms, some) == expected[:, some]).all()


@pytest.mark.parametrize("backend", ["bm25s", "rank_bm25"])
def test_postings_of_both_backends(backend: str) -> None:
    docs = [["pool", "timeout"], ["redis", "restart", "pool"], ["disk"], []]
    lex = build_lexical(docs, backend)  # type: ignore[arg-type]
    assert sorted(lex.postings("pool").tolist()) == [0, 1]
    assert sorted(lex.postings("disk").tolist()) == [2]
    assert lex.postings("nothing").size == 0
    assert lex.postings("").size == 0


def test_group_reduce_matches_positions_of(tmp_path: Path) -> None:
    _, idx = _index(tmp_path)
    corpus = open_retriever(idx).corpus
    rng = np.random.default_rng(3)
    sims = rng.normal(size=corpus.size).astype(np.float32)
    dmax = corpus.group_reduce(sims, "doc", "max")
    pmean = corpus.group_reduce(sims, "parent", "mean")
    for p in range(corpus.size):
        d = int(corpus.doc_of[p])
        assert dmax[p] == sims[corpus.positions_of("doc", d)].max()
        parent = corpus.positions_of("parent", (d, corpus.parent_ids[p]))
        assert pmean[p] == pytest.approx(float(sims[parent].mean()), abs=1e-6)
    assert len({float(x) for x in dmax}) > 1  # several documents: not one group


def test_coverage_of_top_hits_equals_query_coverage(tmp_path: Path) -> None:
    _, idx = _index(tmp_path)
    r = open_retriever(idx)
    corpus = r.corpus
    for query in ("PoolTimeout connection pool", "restart redis in prod", "zebra unicorn disk"):
        plan = r.understand(query)
        top = r.lexical_ranking(corpus, plan, 5, corpus.mask({}, False))
        own = [t for t, w in plan.lexical if w >= 1.0]
        want = max(
            (query_coverage(corpus.lexical, own, corpus.store.terms(p)) for p, _ in top[:3]),
            default=0.0,
        )
        assert HybridRetriever._coverage(corpus, plan, top) == pytest.approx(want, abs=1e-9)


def test_reindex_reuses_tokenized_fields_and_builds_the_same_index(tmp_path: Path) -> None:
    root, idx = _index(tmp_path)
    gen1 = idx / GENS / "1" / FIELDS_DIR
    memo = json.loads((gen1 / FIELD_MEMO).read_text("utf-8"))
    assert memo["strategy"] and memo["memo"]
    (root / "order-service/pool.md").write_text(POOL + "\n## Extra\n\nCheck PgBouncer.\n", "utf-8")
    files, _ = discover([root])
    s = KnowledgeIndex(idx).update(files, embedding=NONE)
    assert s.updated == 1 and s.generation == 2
    # the same corpus indexed from nothing (no previous generation, no memo); chunk
    # positions and term ids differ (the edited runbook comes last), the scores must not
    fresh_dir = tmp_path / "fresh"
    KnowledgeIndex(fresh_dir).update(files, embedding=NONE)
    reused, fresh = _field_scores(idx), _field_scores(fresh_dir)
    assert reused.keys() == fresh.keys() and len(reused) > 100
    for key, score in fresh.items():
        assert reused[key] == pytest.approx(score, rel=1e-6), key
    new_memo = json.loads((idx / GENS / "2" / FIELDS_DIR / FIELD_MEMO).read_text("utf-8"))
    assert any("Extra" in text for text in new_memo["memo"])  # the edit's heading was added


def _field_scores(idx: Path) -> dict[tuple[str, str, str], float]:
    """(term, runbook, chunk id) -> BM25F score of the published generation."""
    corpus = open_retriever(idx).corpus
    fields = corpus.fields
    assert fields is not None
    out: dict[tuple[str, str, str], float] = {}
    for term, i in fields.vocab.items():
        for k in range(int(fields.indptr[i]), int(fields.indptr[i + 1])):
            p = int(fields.indices[k])
            source = corpus.docs[int(corpus.doc_of[p])].source
            out[(term, source, corpus.chunk_ids[p])] = float(fields.data[k])
    return out


def test_a_memo_of_another_analyzer_is_ignored(tmp_path: Path) -> None:
    root, idx = _index(tmp_path)
    path = idx / GENS / "1" / FIELDS_DIR / FIELD_MEMO
    data = json.loads(path.read_text("utf-8"))
    poisoned = {text: ["poisoned"] for text in data["memo"]}
    path.write_text(json.dumps({"strategy": "another-analyzer", "memo": poisoned}), "utf-8")
    (root / "order-service/pool.md").write_text(POOL + "\nAlso PgBouncer.\n", "utf-8")
    files, _ = discover([root])
    KnowledgeIndex(idx).update(files, embedding=NONE)
    fields = FieldIndex.load(idx / GENS / "2" / FIELDS_DIR)
    assert fields is not None and "poisoned" not in fields.vocab


@pytest.mark.needs_minilm
def test_batches_side_by_side_give_the_same_vectors(session_home: Path) -> None:
    folder = session_home / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"
    texts = [f"chunk {i}: " + "connection pool exhausted " * (i % 7 + 1) for i in range(40)]
    one = OnnxEmbedder(folder, batch_size=4, threads=1).embed(texts)
    two = OnnxEmbedder(folder, batch_size=4, threads=2).embed(texts)
    np.testing.assert_allclose(one, two, atol=1e-6)
    assert np.allclose(np.linalg.norm(two, axis=1), 1.0, atol=1e-5)
