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
from typing import Any

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

    def texts(ids: list[int]) -> list[str]:
        found = m.chunk_texts(ids)
        return [embed_text(*found[i]) for i in ids]

    out, embedded = vectors_in_order(
        [r[0] for r in rows], prev, texts, embedder, embedding.batch_size, progress
    )
    return VectorBuild(out, embedder.model_id, embedded)


def vectors_in_order(
    keys: list[Any],
    have: dict[Any, np.ndarray],
    texts: Callable[[list[Any]], list[str]],
    embedder: Any,
    batch_size: int,
    progress: Progress | None = None,
) -> tuple[np.ndarray, int]:
    """One vector per key, in order: ``have`` (a published generation's) where it holds
    the key, the embedding cache or ``embedder`` for the rest (``texts(missing keys)``, with
    progress per batch). Returns the matrix and how many texts were embedded now."""
    missing = [k for k in keys if k not in have]
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
            texts(missing),
            embedder.embed,
            on_batch=tick,
            batch=max(batch_size, 1) * 4,
        )
    finally:
        cache.close()
    fresh = {k: mat[i] for i, k in enumerate(missing)} if mat is not None else {}
    some = next(iter(have.values()), None) if have else next(iter(fresh.values()), None)
    dim = 0 if some is None else int(np.asarray(some).shape[0])
    out = np.zeros((len(keys), dim), dtype=np.float32)
    for i, k in enumerate(keys):
        out[i] = have[k] if k in have else fresh[k]
    return out, embedded


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
