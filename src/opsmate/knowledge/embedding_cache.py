"""Persistent embedding cache: (model id, content hash) -> vector, in SQLite.

Shared by every index and by the in-memory bundle retriever (it lives in the user
cache dir), so an unchanged chunk is never embedded twice, whichever index it is in.
Losing the file only costs time.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from opsmate import paths

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model_id, content_hash)
) WITHOUT ROWID;
"""
_BATCH = 500


def content_hash(text: str) -> str:
    """The key of a text in the cache (sha256 of its UTF-8 bytes, hex)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def default_cache_path() -> Path:
    return paths.cache_dir() / "embeddings.sqlite3"


class EmbeddingCache:
    """A small key-value store of float32 vectors; safe for concurrent processes (WAL)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_cache_path()
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30.0)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(_SCHEMA)
            self._conn = conn
        return self._conn

    def get_many(self, model_id: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """Vectors found for ``hashes`` (missing ones are simply absent)."""
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, np.ndarray] = {}
        if not wanted or (self._conn is None and not self.path.exists()):
            return found
        db = self._db()
        for start in range(0, len(wanted), _BATCH):
            part = wanted[start : start + _BATCH]
            marks = ",".join("?" * len(part))
            rows = db.execute(
                f"SELECT content_hash, vector FROM embeddings "
                f"WHERE model_id = ? AND content_hash IN ({marks})",
                [model_id, *part],
            )
            for h, blob in rows:
                found[h] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model_id: str, items: Iterable[tuple[str, np.ndarray]]) -> None:
        rows = [
            (model_id, h, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes())
            for h, v in items
        ]
        if not rows:
            return
        db = self._db()
        with db:
            db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows)

    def embed_cached(
        self,
        model_id: str,
        texts: list[str],
        embed: Callable[[list[str]], np.ndarray] | None,
        on_batch: Callable[[int], None] | None = None,
        batch: int = 256,
    ) -> tuple[np.ndarray | None, int]:
        """Vectors for ``texts`` from the cache, embedding (and storing) only the misses.

        Returns (matrix or None when a miss cannot be embedded, number embedded now).
        ``embed=None`` means cache only: any miss gives None.
        """
        hashes = [content_hash(t) for t in texts]
        have = self.get_many(model_id, hashes)
        missing = [i for i, h in enumerate(hashes) if h not in have]
        missing_unique = list(dict.fromkeys(hashes[i] for i in missing))
        if missing_unique:
            if embed is None:
                return None, 0
            first_text = {hashes[i]: texts[i] for i in reversed(missing)}
            for start in range(0, len(missing_unique), batch):
                part = missing_unique[start : start + batch]
                vecs = embed([first_text[h] for h in part])
                self.put_many(model_id, zip(part, vecs, strict=True))
                have.update(zip(part, vecs, strict=True))
                if on_batch is not None:
                    on_batch(len(part))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32), 0
        return np.stack([have[h] for h in hashes]).astype(np.float32), len(missing_unique)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
