"""Vector stores for chunk embeddings: numpy brute force (default) and chromadb.

Both hold L2-normalised vectors (cosine similarity = dot product) and return
``(position, cosine)`` pairs, positions being the chunk order of the published
generation. Metadata filters are applied *inside* the search: numpy masks rows
before choosing the top N; chromadb gets a ``where`` clause (the visibility mask of
the published snapshot is applied to its answers, asking for more when needed).

- ``numpy``: one ``vectors.npy`` per generation folder, written with the BM25 files
  and published by the same manifest transaction. 10k x 384: about 2 ms a query,
  no start-up cost beyond numpy.
- ``chroma``: a ``PersistentClient`` in ``<index>/chroma`` (cosine space, telemetry
  off), one collection per embedding model so vector spaces never mix; chunk rowids
  are the ids. Importing chromadb costs ~0.8 s, so it is imported only here.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import numpy as np

VECTORS_FILE = "vectors.npy"
CHROMA_DIR = "chroma"
_ADD_BATCH = 4000


class NumpyVectors:
    """Exact cosine search over an in-memory matrix."""

    def __init__(self, matrix: np.ndarray) -> None:
        self.matrix = np.ascontiguousarray(matrix, dtype=np.float32)

    @classmethod
    def load(cls, folder: Path) -> NumpyVectors:
        return cls(np.load(folder / VECTORS_FILE))

    def save(self, folder: Path) -> None:
        np.save(folder / VECTORS_FILE, self.matrix)

    def similarities(self, query: np.ndarray) -> np.ndarray:
        """Cosine of ``query`` with every row (the rerank stage reuses it)."""
        if self.matrix.shape[0] == 0:
            return np.zeros(0, dtype=np.float32)
        # einsum runs single-threaded: a BLAS matvec wakes its thread pool, which on a
        # busy 2-core machine costs more than the product itself (0.3 ms at 10k x 384)
        return np.einsum("ij,j->i", self.matrix, np.asarray(query, dtype=np.float32).ravel())

    def search(
        self,
        query: np.ndarray,
        n: int,
        mask: np.ndarray | None = None,
        sims: np.ndarray | None = None,
    ) -> list[tuple[int, float]]:
        if self.matrix.shape[0] == 0:
            return []
        if sims is None:
            sims = self.similarities(query)
        if mask is not None:
            sims = np.where(mask, sims, -np.inf)
        k = min(n, sims.shape[0])
        top = np.argpartition(-sims, k - 1)[:k] if sims.shape[0] > k else np.arange(k)
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(int(p), float(sims[p])) for p in top if sims[p] != -np.inf]


def collection_name(model_id: str) -> str:
    """One chromadb collection per embedding model (names must be short and plain)."""
    return "opsmate_" + hashlib.sha256(model_id.encode()).hexdigest()[:16]


def chroma_client(index_dir: Path) -> Any:
    """A chromadb PersistentClient in ``<index>/chroma`` with telemetry off."""
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    return chromadb.PersistentClient(
        path=str(index_dir / CHROMA_DIR),
        settings=ChromaSettings(anonymized_telemetry=False, allow_reset=False),
    )


class ChromaVectors:
    """Chunk vectors of one embedding model in a chromadb collection (cosine)."""

    def __init__(self, index_dir: Path, model_id: str, *, create: bool = False) -> None:
        self.client = chroma_client(index_dir)
        self.name = collection_name(model_id)
        if create:
            self.col = self.client.get_or_create_collection(
                self.name, metadata={"hnsw:space": "cosine", "model_id": model_id}
            )
        else:
            self.col = self.client.get_collection(self.name)

    def upsert(self, ids: list[str], vectors: np.ndarray, metadatas: list[dict[str, Any]]) -> None:
        for start in range(0, len(ids), _ADD_BATCH):
            end = start + _ADD_BATCH
            self.col.upsert(
                ids=ids[start:end],
                embeddings=np.asarray(vectors[start:end], dtype=np.float32),
                metadatas=metadatas[start:end],
            )

    def existing(self, ids: list[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), _ADD_BATCH):
            got = self.col.get(ids=ids[start : start + _ADD_BATCH], include=[])
            found.update(got["ids"])
        return found

    def delete(self, ids: list[str]) -> None:
        for start in range(0, len(ids), _ADD_BATCH):
            self.col.delete(ids=ids[start : start + _ADD_BATCH])

    def drop_other_collections(self) -> None:
        """Remove collections of other embedding models (after a model change)."""
        for col in self.client.list_collections():
            name = col if isinstance(col, str) else col.name
            if name != self.name and name.startswith("opsmate_"):
                self.client.delete_collection(name)

    def search(
        self,
        query: np.ndarray,
        n: int,
        *,
        where: dict[str, Any] | None,
        pos_of: dict[str, int],
        mask: np.ndarray,
    ) -> list[tuple[int, float]]:
        """Top ``n`` visible positions; asks chromadb for more while answers are masked out."""
        total = self.col.count()
        want = min(n, total)
        ask = min(total, n + 8)
        q = np.asarray(query, dtype=np.float32).reshape(1, -1)
        while True:
            res = self.col.query(
                query_embeddings=q, n_results=max(ask, 1), where=where, include=["distances"]
            )
            out: list[tuple[int, float]] = []
            for cid, dist in zip(res["ids"][0], res["distances"][0], strict=True):
                p = pos_of.get(cid)
                if p is not None and mask[p]:
                    out.append((p, 1.0 - float(dist)))
            if len(out) >= want or ask >= total or len(res["ids"][0]) < ask:
                return out[:n]
            ask = min(total, ask * 4)
