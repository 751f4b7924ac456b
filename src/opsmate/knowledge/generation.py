"""The vector side of a new index generation.

Every chunk of the generation gets its vector from, in order: the published
generation (same embedding model, same chunk row: unchanged documents), the
persistent embedding cache (same model, same text), or the embedding model (only
texts never seen). Changing the model therefore re-embeds everything into a fresh
space instead of mixing two.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from opsmate.config import EmbeddingConfig
from opsmate.knowledge.corpus import DocInfo, chroma_metadata
from opsmate.knowledge.embedding_cache import EmbeddingCache
from opsmate.knowledge.embeddings import EmbeddingUnavailable, make_embedder
from opsmate.knowledge.manifest import Manifest
from opsmate.knowledge.store import embed_text
from opsmate.knowledge.vectors import VECTORS_FILE, ChromaVectors

GENS = "gens"
ChunkRow = tuple[int, int, str, str, str]  # rowid, doc_id, index_hash, terms, heading_path
Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass
class VectorBuild:
    """Vectors of a generation in chunk order (None: BM25 only) and how they were made."""

    matrix: np.ndarray | None = None
    model_id: str | None = None
    embedded: int = 0
    warnings: list[str] = field(default_factory=list)


def build_vectors(
    index_dir: Path,
    m: Manifest,
    rows: list[ChunkRow],
    embedding: EmbeddingConfig,
    progress: Progress | None = None,
) -> VectorBuild:
    """One vector per chunk row (see the module docstring for where each comes from)."""
    if embedding.backend == "none":
        return VectorBuild(warnings=["embedding backend none: no vectors, search is BM25 only"])
    try:
        embedder = make_embedder(embedding, allow_download=True)
    except EmbeddingUnavailable as exc:
        return VectorBuild(warnings=[f"{exc}; indexed for BM25 only"])
    assert embedder is not None
    prev = previous_vectors(index_dir, m, embedder.model_id)
    missing = [r for r in rows if r[0] not in prev]
    texts = m.chunk_texts([r[0] for r in missing])
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress("embed", done, len(missing))

    cache = EmbeddingCache()
    try:
        mat, embedded = cache.embed_cached(
            embedder.model_id,
            [embed_text(*texts[r[0]]) for r in missing],
            embedder.embed,
            on_batch=tick,
            batch=max(embedding.batch_size, 1) * 4,
        )
    finally:
        cache.close()
    fresh = {r[0]: mat[i] for i, r in enumerate(missing)} if mat is not None else {}
    some = next(iter(prev.values()), None) if prev else next(iter(fresh.values()), None)
    out = np.zeros((len(rows), 0 if some is None else some.shape[0]), dtype=np.float32)
    for i, r in enumerate(rows):
        out[i] = prev[r[0]] if r[0] in prev else fresh[r[0]]
    return VectorBuild(out, embedder.model_id, embedded)


def previous_vectors(index_dir: Path, m: Manifest, model_id: str) -> dict[int, np.ndarray]:
    """rowid -> vector of the published generation, when it used the same model."""
    gen = m.get_meta("generation")
    if not gen or m.get_meta("embedding_model") != model_id:
        return {}
    folder = index_dir / GENS / gen
    try:
        rowids = np.load(folder / "rowids.npy")
        mat = np.load(folder / VECTORS_FILE)
    except (OSError, ValueError):  # chroma backend, or a damaged folder: use the cache
        return {}
    return {int(r): mat[i] for i, r in enumerate(rowids)}


def add_to_chroma(
    index_dir: Path, m: Manifest, model_id: str, rows: list[ChunkRow], vectors: np.ndarray
) -> None:
    """Upsert the chunks the model's chromadb collection does not hold yet."""
    store = ChromaVectors(index_dir, model_id, create=True)
    ids = [str(r[0]) for r in rows]
    have = store.existing(ids)
    docs = {
        d: DocInfo(src, ver, title, json.loads(meta))
        for d, src, ver, title, meta in m.conn.execute(
            "SELECT id, source, version, title, meta_json FROM documents"
        )
    }
    todo = [i for i, cid in enumerate(ids) if cid not in have]
    store.upsert(
        [ids[i] for i in todo],
        vectors[todo],
        [chroma_metadata(docs[rows[i][1]]) for i in todo],
    )
