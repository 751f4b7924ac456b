"""The index manifest: one SQLite file (WAL) that says what is indexed and what is visible.

Tables:

- ``meta``: key/value pairs. ``generation`` names the published generation folder
  (``gens/<n>/``: BM25 files, vectors, the chunk order); ``revision`` grows on every
  change of visibility (publish or tombstone) so long-lived readers know to reload;
  ``embedding_model`` / ``embedding_spec`` the vector space; ``lexical_backend``,
  ``vector_backend``.
- ``documents``: one row per (source, version, strategy) with the file hash, status
  (``building`` | ``published`` | ``superseded`` | ``tombstoned``) and a ``published``
  flag; at most one published row per source. Only published rows are visible.
- ``parents`` and ``chunks``: the parsed content of each document row; chunk rowids
  (AUTOINCREMENT, never reused) are what the generation folders refer to. A chunk's
  BM25 terms are stored (joined by ``TERM_SEP``) so a rebuild never re-tokenizes.

Queries see a consistent picture by reading inside one transaction. The file is created
with its tables beside its final name and renamed into place (:func:`create_atomically`),
so a reader never finds a manifest without them.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opsmate.errors import KnowledgeIndexError

SCHEMA_VERSION = "2"
TERM_SEP = "\x1f"  # terms are stored joined by the unit separator (fast to split)
MANIFEST_NAME = "manifest.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    source TEXT NOT NULL,
    version TEXT NOT NULL,
    file_hash TEXT NOT NULL,
    strategy TEXT NOT NULL,
    status TEXT NOT NULL,
    published INTEGER NOT NULL DEFAULT 0,
    title TEXT NOT NULL,
    meta_json TEXT NOT NULL,
    n_chunks INTEGER NOT NULL,
    created_at REAL NOT NULL,
    published_at REAL
);
CREATE UNIQUE INDEX IF NOT EXISTS documents_one_published
    ON documents(source) WHERE published = 1;
CREATE TABLE IF NOT EXISTS parents (
    doc_id INTEGER NOT NULL,
    id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    heading_path TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (doc_id, id)
);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_id INTEGER NOT NULL,
    id TEXT NOT NULL,
    parent_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    kind TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    heading_path TEXT NOT NULL,
    text TEXT NOT NULL,
    index_hash TEXT NOT NULL,
    terms TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE INDEX IF NOT EXISTS chunks_id ON chunks(id);
"""


@dataclass(frozen=True)
class DocRow:
    """A document row as the indexer needs it."""

    id: int
    source: str
    version: str
    file_hash: str
    strategy: str
    status: str
    published: bool


def split_terms(joined: str) -> list[str]:
    """The BM25 terms of a chunk as stored in the manifest."""
    return joined.split(TERM_SEP) if joined else []


def manifest_path(index_dir: Path) -> Path:
    return index_dir / MANIFEST_NAME


def _connect(path: Path, create: bool) -> sqlite3.Connection:
    """A connection to the manifest. A reader of an index in a directory it cannot write
    (a read-only mount: SQLite cannot create the WAL's ``-shm`` file there) falls back to
    opening the file ``immutable``, which is true of it: nobody can change it there."""
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    if create or os.access(path.parent, os.W_OK):
        return conn
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn.close()
    uri = path.resolve().as_uri() + "?immutable=1"
    return sqlite3.connect(
        uri, uri=True, timeout=30.0, isolation_level=None, check_same_thread=False
    )


NEW_SUFFIX = ".new-"  # manifest.sqlite3.new-<pid>: a manifest being created


def _has_schema(path: Path) -> bool:
    """Whether the database at ``path`` has the ``meta`` table (its WAL included)."""
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    try:
        row = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
        ).fetchone()
        return row is not None
    finally:
        conn.close()


def create_atomically(index_dir: Path) -> None:
    """Create the manifest with its schema beside its final name, then rename it there,
    so a manifest at its name always has its tables (a killed first run, or a disk that
    filled while the tables were written, leaves only a ``.new-<pid>`` file, removed by the
    next run). A manifest that is there without its tables (left by an older opsmate) is
    replaced. Called by the indexer, under the index lock."""
    path = manifest_path(index_dir)
    if path.exists():
        try:
            if _has_schema(path):
                return
        except sqlite3.DatabaseError:
            pass  # not a database at all: replaced like an empty one
        for leftover in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)
    tmp = path.with_name(f"{path.name}{NEW_SUFFIX}{os.getpid()}")
    tmp.unlink(missing_ok=True)
    conn = sqlite3.connect(tmp, timeout=30.0, isolation_level=None)
    try:
        conn.executescript(_SCHEMA)  # rollback journal here: nothing left beside it
        conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
    except BaseException:
        conn.close()
        tmp.unlink(missing_ok=True)
        raise
    conn.close()
    os.replace(tmp, path)


def remove_leftovers(index_dir: Path) -> list[Path]:
    """Remove the ``manifest.sqlite3.new-*`` files of killed runs; the paths removed."""
    gone = []
    for p in index_dir.glob(f"{MANIFEST_NAME}{NEW_SUFFIX}*"):
        p.unlink(missing_ok=True)
        gone.append(p)
    return gone


class Manifest:
    """Thin wrapper over the manifest database (one connection, this thread)."""

    def __init__(self, index_dir: Path, *, create: bool = False) -> None:
        path = manifest_path(index_dir)
        if not create and not path.exists():
            raise KnowledgeIndexError(
                f"no runbook index in {index_dir}",
                hint=f"run `opsmate index PATH --index-dir {index_dir}` first",
            )
        if create:
            index_dir.mkdir(parents=True, exist_ok=True)
            try:
                create_atomically(index_dir)
            except sqlite3.DatabaseError as exc:
                raise KnowledgeIndexError(f"runbook index {path} cannot be written: {exc}") from exc
        try:
            # one connection may serve several threads (the TUI searches from workers);
            # ``lock`` serialises its use
            self.conn = _connect(path, create)
            self.lock = threading.RLock()
            self.conn.execute("PRAGMA busy_timeout=30000")
            if create:
                self.conn.execute("PRAGMA journal_mode=WAL")
                self.conn.executescript(_SCHEMA)
                if self.get_meta("schema_version") is None:
                    self.set_meta("schema_version", SCHEMA_VERSION)
            self.conn.execute("PRAGMA synchronous=NORMAL")
            version = self.get_meta("schema_version")
        except sqlite3.DatabaseError as exc:
            if not create and "no such table" in str(exc):  # a first run that did not finish
                self.conn.close()
                raise KnowledgeIndexError(
                    f"no runbook index in {index_dir} yet: the `opsmate index` run that "
                    "started it did not finish",
                    hint=f"run `opsmate index PATH --index-dir {index_dir}` again",
                ) from exc
            state = "cannot be written" if create else "is unreadable"
            raise KnowledgeIndexError(f"runbook index {path} {state}: {exc}") from exc
        if version != SCHEMA_VERSION:
            raise KnowledgeIndexError(
                f"runbook index {path} has schema {version!r}, this opsmate needs "
                f"{SCHEMA_VERSION!r}",
                hint="delete the index directory and run `opsmate index` again",
            )

    # -- transactions ----------------------------------------------------------
    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE ... COMMIT, rolled back on error)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: every SELECT inside sees the same snapshot."""
        self.conn.execute("BEGIN")
        try:
            yield self.conn
        finally:
            self.conn.execute("COMMIT")

    # -- meta --------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def bump_revision(self) -> None:
        self.set_meta("revision", str(int(self.get_meta("revision") or 0) + 1))

    # -- documents ---------------------------------------------------------------
    def documents(self, where: str = "1", params: tuple[Any, ...] = ()) -> list[DocRow]:
        rows = self.conn.execute(
            "SELECT id, source, version, file_hash, strategy, status, published "
            f"FROM documents WHERE {where} ORDER BY source, id",
            params,
        )
        return [DocRow(r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6])) for r in rows]

    def insert_document(
        self,
        *,
        source: str,
        version: str,
        file_hash: str,
        strategy: str,
        title: str,
        meta: dict[str, Any],
        parents: list[tuple[str, int, list[str], str]],
        chunks: list[dict[str, Any]],
    ) -> int:
        """Insert a complete, not yet visible (``building``) document version."""
        with self.write() as db:
            cur = db.execute(
                "INSERT INTO documents (source, version, file_hash, strategy, status, "
                "published, title, meta_json, n_chunks, created_at) "
                "VALUES (?, ?, ?, ?, 'building', 0, ?, ?, ?, ?)",
                (
                    source,
                    version,
                    file_hash,
                    strategy,
                    title,
                    json.dumps(meta, ensure_ascii=False),
                    len(chunks),
                    time.time(),
                ),
            )
            doc_id = int(cur.lastrowid or 0)
            db.executemany(
                "INSERT OR REPLACE INTO parents VALUES (?, ?, ?, ?, ?)",
                [
                    (doc_id, pid, ordinal, json.dumps(path, ensure_ascii=False), text)
                    for pid, ordinal, path, text in parents
                ],
            )
            db.executemany(
                "INSERT INTO chunks (doc_id, id, parent_id, ordinal, kind, tokens, "
                "heading_path, text, index_hash, terms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        doc_id,
                        c["id"],
                        c["parent_id"],
                        c["ordinal"],
                        c["kind"],
                        c["tokens"],
                        json.dumps(c["heading_path"], ensure_ascii=False),
                        c["text"],
                        c["index_hash"],
                        TERM_SEP.join(c["terms"]),
                    )
                    for c in chunks
                ],
            )
        return doc_id

    def delete_documents(self, doc_ids: list[int]) -> list[int]:
        """Delete document rows with their parents and chunks; returns the chunk rowids."""
        if not doc_ids:
            return []
        marks = ",".join("?" * len(doc_ids))
        with self.write() as db:
            gone = [
                int(r[0])
                for r in db.execute(f"SELECT rowid FROM chunks WHERE doc_id IN ({marks})", doc_ids)
            ]
            db.execute(f"DELETE FROM chunks WHERE doc_id IN ({marks})", doc_ids)
            db.execute(f"DELETE FROM parents WHERE doc_id IN ({marks})", doc_ids)
            db.execute(f"DELETE FROM documents WHERE id IN ({marks})", doc_ids)
        return gone

    def chunk_rows(self, doc_ids: list[int]) -> list[tuple[int, int, str, str, str]]:
        """(rowid, doc_id, index_hash, joined terms, heading_path JSON) in document order."""
        out: list[tuple[int, int, str, str, str]] = []
        for start in range(0, len(doc_ids), 500):
            part = doc_ids[start : start + 500]
            marks = ",".join("?" * len(part))
            out.extend(
                self.conn.execute(
                    "SELECT rowid, doc_id, index_hash, terms, heading_path FROM chunks "
                    f"WHERE doc_id IN ({marks})",
                    part,
                )
            )
        order = {d: i for i, d in enumerate(doc_ids)}
        out.sort(key=lambda r: (order[r[1]], r[0]))
        return out

    def chunk_texts(self, rowids: list[int]) -> dict[int, tuple[list[str], str]]:
        """rowid -> (heading_path, text) for the given chunks."""
        out: dict[int, tuple[list[str], str]] = {}
        for start in range(0, len(rowids), 500):
            part = rowids[start : start + 500]
            marks = ",".join("?" * len(part))
            for rid, hp, text in self.conn.execute(
                f"SELECT rowid, heading_path, text FROM chunks WHERE rowid IN ({marks})", part
            ):
                out[int(rid)] = (json.loads(hp), text)
        return out

    def close(self) -> None:
        self.conn.close()
