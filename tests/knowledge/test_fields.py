"""BM25F field scoring: weights, no double counting, persistence, use by the index."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from index_helpers import SMALL_CORPUS, write_runbooks

from opsmate.config import EmbeddingConfig, Settings
from opsmate.knowledge.fields import (
    FIELDS_DIR,
    FieldIndex,
    chunk_fields,
    is_symptom_heading,
)
from opsmate.knowledge.index import KnowledgeIndex
from opsmate.knowledge.retrieve import open_retriever
from opsmate.knowledge.sources import discover

NO_VECTORS = EmbeddingConfig(backend="none")


def _docs() -> list[dict[str, list[str]]]:
    filler = ["alpha", "beta", "gamma", "delta"] * 5
    return [
        {"body": ["zircon", *filler], "heading": ["zircon"], "meta": [], "symptom": []},
        {"body": ["zircon", *filler], "heading": ["other"], "meta": [], "symptom": []},
        {"body": ["quartz", *filler], "heading": [], "meta": ["quartz"], "symptom": []},
    ]


def test_heading_and_metadata_weigh_more_than_body() -> None:
    idx = FieldIndex.build(_docs())
    s = idx.scores(["zircon"])
    assert s[0] > s[1] > 0 and s[2] == 0  # same body; the heading decides
    plain = FieldIndex.build(_docs(), {"body": 1.0})
    p = plain.scores(["zircon"])
    assert p[0] == pytest.approx(p[1])  # body only: no difference


def test_a_term_in_two_fields_saturates_once() -> None:
    """BM25F adds frequencies before saturation, so body + heading < 2 x one field alone."""
    idx = FieldIndex.build(_docs(), {"body": 1.0, "heading": 1.0}, {"body": 0.0, "heading": 0.0})
    both, body_only = idx.scores(["zircon"])[:2]
    assert body_only < both < 2 * body_only


def test_query_term_weights_and_doc_freq() -> None:
    idx = FieldIndex.build(_docs())
    full = idx.scores([("quartz", 1.0)])
    half = idx.scores([("quartz", 0.5)])
    np.testing.assert_allclose(half, full / 2, rtol=1e-6)
    assert idx.doc_freq("zircon") == 2 and idx.doc_freq("nothing") == 0
    assert idx.scores(["unknown", ""]).sum() == 0


def test_save_and_load_roundtrip(tmp_path: Path) -> None:
    idx = FieldIndex.build(_docs())
    idx.save(tmp_path / "f")
    back = FieldIndex.load(tmp_path / "f")
    assert back is not None and back.n_docs == 3
    np.testing.assert_allclose(back.scores(["zircon", "quartz"]), idx.scores(["zircon", "quartz"]))
    meta = json.loads((tmp_path / "f" / "fields.json").read_text())
    meta["version"] = "bm25f-0"
    (tmp_path / "f" / "fields.json").write_text(json.dumps(meta))
    assert FieldIndex.load(tmp_path / "f") is None  # another version: not used
    assert FieldIndex.load(tmp_path / "missing") is None


def test_chunk_fields_split_alert_names_and_find_symptom_sections() -> None:
    meta = {"title": "Pool exhaustion", "alerts": ["OrderServiceDBPoolSaturated"], "tags": ["db"]}
    f = chunk_fields(["checkout", "hang"], ["Pool exhaustion", "Symptoms"], meta)
    assert {"orderservicedbpoolsaturated", "saturated", "pool", "db"} <= set(f["meta"])
    assert f["symptom"] == ["checkout", "hang"] and "symptom" in f["heading"]
    assert is_symptom_heading(["t", "现象"]) and is_symptom_heading(["t", "What it looks like"])
    assert not is_symptom_heading(["Symptoms of doom"])  # the title is not a section
    assert chunk_fields(["x"], ["T", "Mitigation"], {})["symptom"] == []


def test_the_index_publishes_and_uses_a_field_index(tmp_path: Path) -> None:
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    idx_dir = tmp_path / "idx"
    files, _ = discover([root])
    KnowledgeIndex(idx_dir).update(files, embedding=NO_VECTORS)
    gen = max((idx_dir / "gens").iterdir(), key=lambda p: int(p.name))
    assert (gen / FIELDS_DIR / "fields.json").is_file()
    settings = Settings(embedding=NO_VECTORS)
    r = open_retriever(idx_dir, settings)
    assert r.corpus.fields is not None and r.corpus.fields.n_docs == r.corpus.size
    resp = r.search("OrderServiceDBPoolSaturated", explain=True)
    assert resp.hits[0].source == "order-service/pool.md"
    assert resp.explain is not None and resp.explain["lexical"] == "bm25f (fields)"
    # a generation without the field index (built before it existed) still searches
    import shutil

    shutil.rmtree(gen / FIELDS_DIR)
    r2 = open_retriever(idx_dir, settings)
    assert r2.corpus.fields is None
    assert r2.search("OrderServiceDBPoolSaturated").hits[0].source == "order-service/pool.md"
