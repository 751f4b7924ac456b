"""What is indexed for a chunk, and where a corpus fetches chunk texts from.

``index_text`` is the one definition of the text that BM25 tokenizes and the
embedding model embeds: the heading path (document title › H1 › H2 ...) in front of
the chunk text, then the English equivalents of the Chinese ops terms it contains
(``analyzers.expand_query``), so an English question reaches a Chinese runbook the
same way a Chinese question reaches an English one. Displayed text never has them.

``embed_text`` is what the embedding model embeds: the same text with Chinese runs
translated in place into the English of their glossary terms (MiniLM reads English only).

``strategy_version`` changes whenever chunking, the analyzer or ``index_text``
changes; documents indexed under another strategy are re-indexed.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from opsmate.knowledge.corpus import ChunkText
from opsmate.knowledge.manifest import split_terms

if TYPE_CHECKING:
    from opsmate.knowledge.manifest import Manifest

INDEX_TEXT_VERSION = "it-2"


def index_text(heading_path: list[str], text: str) -> str:
    """Heading-path header + chunk text (+ English glossary terms for CJK text)."""
    from opsmate.knowledge.analyzers import expand_query

    header = " › ".join(h for h in heading_path if h)
    full = f"{header}\n{text}" if header else text
    return expand_query(full)


def embed_text(heading_path: list[str], text: str) -> str:
    """What the embedding model embeds: :func:`index_text`, Chinese translated in place.

    MiniLM reads English only, so a Chinese chunk is embedded as the English of its
    glossary terms in their order (``analyzers.translate_cjk``), identifiers and
    commands kept. English chunks embed exactly their index text.
    """
    from opsmate.knowledge.analyzers import translate_cjk

    header = " › ".join(h for h in heading_path if h)
    full = f"{header}\n{text}" if header else text
    return translate_cjk(full)


@lru_cache(maxsize=1)
def strategy_version() -> str:
    """Chunking version + a digest of the analyzer (code and dictionaries) + index text."""
    from opsmate.knowledge import analyzers
    from opsmate.knowledge.markdown import CHUNKING_VERSION

    h = hashlib.sha256()
    for p in (Path(analyzers.__file__), analyzers.JIEBA_DICT_PATH, analyzers.GLOSSARY_PATH):
        try:
            h.update(p.read_bytes())
        except OSError:
            h.update(str(p).encode())
    return f"{CHUNKING_VERSION}+an-{h.hexdigest()[:12]}+{INDEX_TEXT_VERSION}"


class ManifestStore:
    """Chunk texts of a published generation, read from the manifest on demand."""

    def __init__(self, manifest: Manifest, rowids: np.ndarray) -> None:
        self._m = manifest
        self._rowids = rowids

    def texts(self, positions: list[int]) -> dict[int, ChunkText]:
        out: dict[int, ChunkText] = {}
        with self._m.lock:
            rows = [(p, self._row(p)) for p in positions]
        for p, row in rows:
            if row is not None:
                out[p] = ChunkText(json.loads(row[0]), row[1], row[2] or row[1])
        return out

    def _row(self, p: int) -> Any:
        return self._m.conn.execute(
            "SELECT c.heading_path, c.text, p.text FROM chunks c "
            "LEFT JOIN parents p ON p.doc_id = c.doc_id AND p.id = c.parent_id "
            "WHERE c.rowid = ?",
            (int(self._rowids[p]),),
        ).fetchone()

    def terms(self, position: int) -> list[str]:
        with self._m.lock:
            row = self._m.conn.execute(
                "SELECT terms FROM chunks WHERE rowid = ?", (int(self._rowids[position]),)
            ).fetchone()
        return [] if row is None else split_terms(row[0])

    def heads_and_terms(self, positions: list[int]) -> dict[int, tuple[list[str], list[str]]]:
        pos_of = {int(self._rowids[p]): p for p in positions}
        if not pos_of:
            return {}
        marks = ",".join("?" * len(pos_of))
        with self._m.lock:
            rows = self._m.conn.execute(
                f"SELECT rowid, heading_path, terms FROM chunks WHERE rowid IN ({marks})",
                list(pos_of),
            ).fetchall()
        return {pos_of[r[0]]: (json.loads(r[1]), split_terms(r[2])) for r in rows}

    def heading_paths(self, positions: list[int]) -> dict[int, list[str]]:
        pos_of = {int(self._rowids[p]): p for p in positions}
        if not pos_of:
            return {}
        marks = ",".join("?" * len(pos_of))
        with self._m.lock:
            rows = self._m.conn.execute(
                f"SELECT rowid, heading_path FROM chunks WHERE rowid IN ({marks})", list(pos_of)
            ).fetchall()
        return {pos_of[r[0]]: json.loads(r[1]) for r in rows}


class MemoryStore:
    """Chunk texts held in memory (the bundle retriever)."""

    def __init__(self, texts: list[ChunkText], terms: list[list[str]]) -> None:
        self._texts = texts
        self._terms = terms

    def texts(self, positions: list[int]) -> dict[int, ChunkText]:
        return {p: self._texts[p] for p in positions}

    def terms(self, position: int) -> list[str]:
        return self._terms[position]

    def heads_and_terms(self, positions: list[int]) -> dict[int, tuple[list[str], list[str]]]:
        return {p: (self._texts[p].heading_path, self._terms[p]) for p in positions}

    def heading_paths(self, positions: list[int]) -> dict[int, list[str]]:
        return {p: self._texts[p].heading_path for p in positions}
