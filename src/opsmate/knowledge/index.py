"""The versioned runbook index: incremental updates, atomic publish, tombstones, lock.

Layout of an index directory::

    manifest.sqlite3     documents, versions, chunks, parents, the published pointer
    gens/<n>/            one published generation: rowids.npy (chunk order),
                         lexical/ (BM25 files), fields/ (BM25F over body, headings,
                         metadata, symptoms), vectors.npy (numpy backend), gen.json
    chroma/              chromadb collections (only with retrieval.vector_backend: chroma)
    index.lock           held by the one running `opsmate index`

How an update stays safe (``KnowledgeIndex.update``):

1. Take the lock (``index.lock``, non-blocking: a second indexer fails fast with
   :class:`IndexLockedError`). Readers never take it.
2. Recover from a killed run: drop ``building`` rows and unpublished generation folders.
3. Documents whose file is gone are tombstoned at once (one transaction): they leave
   search results immediately, before anything is rebuilt.
4. Unchanged files (same SHA-256, same chunking strategy) cost one hash. A changed or
   new file is parsed and stored as a complete new version, invisible (``building``).
5. The next generation is built beside the published one: BM25 over every visible
   chunk (bm25s rebuilds fully; ~0.3 s at 10k chunks) and the vectors (reused from the
   previous generation or the embedding cache; only new texts are embedded).
6. One transaction publishes: new versions become visible, their old versions
   ``superseded``, the generation pointer moves. Storage of old versions is cleaned after.

A kill at any point leaves the last published generation intact and searchable, and so
does a full disk or a runbook the parser chokes on (that file is reported, the others
are indexed). The manifest itself is created beside its name and renamed into place, so
a reader never finds one without its tables; the next run removes what a killed one left
(``building`` rows, ``gens/<n>.tmp`` and unpublished folders, ``manifest.sqlite3.new-*``).

Test hook: ``OPSMATE_TEST_INDEX_SLEEP=<seconds>`` sleeps after storing each new document
version, so a test can kill the indexer mid-way.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from opsmate.config import EmbeddingConfig
from opsmate.errors import IndexLockedError, InputError
from opsmate.knowledge.corpus import Corpus
from opsmate.knowledge.embedding_cache import content_hash
from opsmate.knowledge.embeddings import config_to_spec, onnx_model_dir
from opsmate.knowledge.fields import (
    FIELDS_DIR,
    FIELDS_VERSION,
    FieldIndex,
    chunk_fields,
    meta_field_text,
)
from opsmate.knowledge.generation import GENS, Progress, add_to_chroma, build_vectors
from opsmate.knowledge.lexical import build_lexical
from opsmate.knowledge.manifest import Manifest, remove_leftovers, split_terms
from opsmate.knowledge.published import index_stats, load_corpus
from opsmate.knowledge.sources import SourceFile, read_checked
from opsmate.knowledge.store import index_text, strategy_version
from opsmate.knowledge.vectors import ChromaVectors, NumpyVectors

__all__ = ["GENS", "LOCK_NAME", "IndexSummary", "KnowledgeIndex", "SourceFile", "index_stats"]

LOCK_NAME = "index.lock"
TEST_SLEEP_ENV = "OPSMATE_TEST_INDEX_SLEEP"


@dataclass
class IndexSummary:
    """What ``opsmate index --json`` prints."""

    documents: int = 0
    chunks: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    seconds: float = 0.0
    chunks_touched: int = 0
    embedded: int = 0
    generation: int = 0
    embedding_model: str | None = None
    lexical_backend: str = "bm25s"
    vector_backend: str = "numpy"
    index_dir: str = ""
    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _embedding_key(config: EmbeddingConfig) -> str:
    """What decides the vector space: the backend, its model, the model file's size.

    Cheap (a ``stat``), so an unchanged index costs nothing, yet replacing the model
    file triggers a rebuild of the vector side.
    """
    model_file: Path | None = None
    if config.backend == "onnx":  # the default model: its int8 copy, written now if need be
        model_file = onnx_model_dir(config, quantize=True) / "model.onnx"
    elif config.backend == "gguf" and config.model_path:
        model_file = Path(config.model_path).expanduser()
    size = model_file.stat().st_size if model_file and model_file.is_file() else None
    return json.dumps([config.backend, config.model_path, config.url, config.model, size])


FIELD_MEMO = "terms_memo.json"  # tokenized headings and metadata of a generation


def _load_field_memo(folder: Path) -> dict[str, list[str]]:
    """The tokenized heading / metadata texts saved with a generation (same analyzer)."""
    try:
        data = json.loads((folder / FIELDS_DIR / FIELD_MEMO).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("strategy") != strategy_version():
        return {}
    memo = data.get("memo")
    return memo if isinstance(memo, dict) else {}


def build_field_index(
    m: Manifest,
    rows: list[Any],
    terms: list[list[str]],
    prior: dict[str, list[str]] | None = None,
) -> tuple[FieldIndex, dict[str, list[str]]]:
    """The BM25F index of a generation (stored terms, heading paths, runbook metadata)
    and the memo of tokenized heading / metadata texts it used (``prior``: the previous
    generation's, reused so only new texts are tokenized: 2.4 s -> 0.1 s at 10k chunks)."""
    metas = {
        d: {**json.loads(meta), "title": title}
        for d, title, meta in m.conn.execute("SELECT id, title, meta_json FROM documents")
    }
    meta_texts = {d: meta_field_text(meta) for d, meta in metas.items()}
    memo: dict[str, list[str]] = {}
    fields = FieldIndex.build(
        [
            chunk_fields(
                t, json.loads(r[4]), metas.get(r[1], {}), memo, prior, meta_texts.get(r[1])
            )
            for r, t in zip(rows, terms, strict=True)
        ]
    )
    return fields, memo


def _parse(f: SourceFile) -> tuple[Any, list[dict[str, Any]]]:
    """A runbook file parsed and chunked for the manifest (pure: nothing is written)."""
    from opsmate.knowledge.analyzers import tokenize
    from opsmate.knowledge.markdown import load_runbook

    doc = load_runbook(f.path, f.root)
    chunks = []
    for c in doc.chunks:
        text = index_text(c.heading_path, c.text)
        chunks.append(
            {
                "id": c.id,
                "parent_id": c.parent_id,
                "ordinal": c.ordinal,
                "kind": c.kind,
                "tokens": c.tokens,
                "heading_path": c.heading_path,
                "text": c.text,
                "index_hash": content_hash(text),
                "terms": tokenize(text),
            }
        )
    return doc, chunks


class KnowledgeIndex:
    """One index directory: ``update`` writes (under the lock), ``corpus`` reads."""

    def __init__(self, index_dir: Path) -> None:
        self.dir = Path(index_dir).expanduser()
        self._reader: Manifest | None = None
        self._corpus: Corpus | None = None
        self._revision: str | None = None

    # -- lock ------------------------------------------------------------------
    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold ``index.lock``; fail fast (IndexLockedError) when another indexer has it."""
        from filelock import FileLock, Timeout

        self.dir.mkdir(parents=True, exist_ok=True)
        lock_path = self.dir / LOCK_NAME
        lock = FileLock(str(lock_path), blocking=False)
        try:
            lock.acquire()
        except Timeout as exc:
            raise IndexLockedError(
                f"index {self.dir} is locked by another running `opsmate index` "
                f"(lock file {lock_path})",
                hint="wait for that run to finish; the lock is released when it exits",
            ) from exc
        try:
            yield
        finally:
            lock.release()

    # -- writing -------------------------------------------------------------------
    def update(
        self,
        files: list[SourceFile],
        *,
        embedding: EmbeddingConfig,
        lexical_backend: str = "bm25s",
        vector_backend: str = "numpy",
        progress: Progress | None = None,
    ) -> IndexSummary:
        """Bring the index in line with ``files`` (the complete set of runbooks)."""
        t0 = time.perf_counter()
        s = IndexSummary(lexical_backend=lexical_backend, vector_backend=vector_backend)
        s.index_dir = str(self.dir)
        with self.locked():
            m = Manifest(self.dir, create=True)
            try:
                self._update(m, files, embedding, s, progress)
            finally:
                m.close()
        s.seconds = round(time.perf_counter() - t0, 3)
        return s

    def _update(
        self,
        m: Manifest,
        files: list[SourceFile],
        embedding: EmbeddingConfig,
        s: IndexSummary,
        progress: Progress | None,
    ) -> None:
        self._recover(m)
        strategy = strategy_version()
        published = {d.source: d for d in m.documents("published = 1")}
        wanted = {f.source for f in files}
        gone = [d for src, d in published.items() if src not in wanted]
        if gone:  # tombstone at once: invisible before anything is rebuilt
            with m.write() as db:
                db.executemany(
                    "UPDATE documents SET published = 0, status = 'tombstoned' WHERE id = ?",
                    [(d.id,) for d in gone],
                )
                m.bump_revision()
        s.removed = len(gone)
        new_ids: dict[str, int] = {}
        sleep = float(os.environ.get(TEST_SLEEP_ENV) or 0)
        for i, f in enumerate(files):
            if progress:
                progress("read", i, len(files))
            old = published.get(f.source)
            try:
                data = read_checked(f)
                file_hash = hashlib.sha256(data).hexdigest()
                if old and old.file_hash == file_hash and old.strategy == strategy:
                    s.unchanged += 1
                    continue
                doc_id = self._store_document(m, f, file_hash, strategy, s)
            except InputError as exc:
                keep = " (the previously indexed version is kept)" if old else ""
                s.errors.append({"source": f.source, "message": exc.message + keep})
                continue
            new_ids[f.source] = doc_id
            if old:
                s.updated += 1
            else:
                s.added += 1
            if sleep:
                time.sleep(sleep)
        if progress:
            progress("read", len(files), len(files))

        gen = int(m.get_meta("generation") or 0)
        key = _embedding_key(embedding)
        need = (
            bool(new_ids)
            or bool(m.documents("status = 'tombstoned'"))
            or gen == 0
            or not (self.dir / GENS / str(gen)).is_dir()
            or m.get_meta("embedding_key") != key
            or (embedding.backend != "none" and not m.get_meta("embedding_model"))  # retry
            or m.get_meta("lexical_backend") != s.lexical_backend
            or m.get_meta("vector_backend") != s.vector_backend
            or m.get_meta("fields_version") != FIELDS_VERSION
        )
        if need:
            self._build_and_publish(m, gen + 1, new_ids, embedding, s, progress)
        final = m.documents("published = 1")
        s.documents = len(final)
        s.generation = int(m.get_meta("generation") or 0)
        s.embedding_model = m.get_meta("embedding_model") or None
        if not need:
            s.chunks = int(
                m.conn.execute(
                    "SELECT count(*) FROM chunks c JOIN documents d ON c.doc_id = d.id "
                    "WHERE d.published = 1"
                ).fetchone()[0]
            )

    def _store_document(
        self, m: Manifest, f: SourceFile, file_hash: str, strategy: str, s: IndexSummary
    ) -> int:
        """Store ``f`` as a new, invisible version; InputError when it cannot be parsed."""
        try:
            doc, chunks = _parse(f)
        except (InputError, OSError, MemoryError):
            raise
        except Exception as exc:  # a file the parser chokes on: that file, not the run
            raise InputError(
                f"{f.source}: could not be read as a runbook ({type(exc).__name__}: "
                f"{str(exc)[:200]}); not indexed"
            ) from exc
        s.warnings.extend(doc.warnings)
        parents = [(p.id, p.ordinal, p.heading_path, p.text) for p in doc.sections]
        meta = doc.meta.model_dump(mode="json")
        meta["title"] = doc.title
        s.chunks_touched += len(chunks)
        return m.insert_document(
            source=f.source,
            version=doc.doc_version,
            file_hash=file_hash,
            strategy=strategy,
            title=doc.title,
            meta=meta,
            parents=parents,
            chunks=chunks,
        )

    def _build_and_publish(
        self,
        m: Manifest,
        gen: int,
        new_ids: dict[str, int],
        embedding: EmbeddingConfig,
        s: IndexSummary,
        progress: Progress | None,
    ) -> None:
        keep = [d for d in m.documents("published = 1") if d.source not in new_ids]
        doc_ids = sorted([d.id for d in keep] + list(new_ids.values()))
        rows = m.chunk_rows(doc_ids)
        s.chunks = len(rows)
        s.chunks_touched += sum(
            r[0]
            for r in m.conn.execute(
                "SELECT count(*) FROM chunks c JOIN documents d ON c.doc_id = d.id "
                "WHERE d.status = 'tombstoned'"
            )
        )
        rowids = np.array([r[0] for r in rows], dtype=np.int64)
        built = build_vectors(self.dir, m, rows, embedding, progress)
        vectors, model_id = built.matrix, built.model_id
        s.embedded = built.embedded
        s.warnings.extend(built.warnings)
        terms = [split_terms(r[3]) for r in rows]
        lexical = build_lexical(terms, s.lexical_backend)  # type: ignore[arg-type]
        previous = self.dir / GENS / str(gen - 1)
        fields, memo = build_field_index(m, rows, terms, _load_field_memo(previous))

        gens = self.dir / GENS
        tmp = gens / f"{gen}.tmp"
        final = gens / str(gen)
        for p in (tmp, final):
            shutil.rmtree(p, ignore_errors=True)
        tmp.mkdir(parents=True)
        np.save(tmp / "rowids.npy", rowids)
        lexical.save(tmp / "lexical")
        fields.save(tmp / FIELDS_DIR)
        (tmp / FIELDS_DIR / FIELD_MEMO).write_text(
            json.dumps({"strategy": strategy_version(), "memo": memo}, ensure_ascii=False),
            "utf-8",
        )
        if vectors is not None and s.vector_backend == "numpy":
            NumpyVectors(vectors).save(tmp)
        info = {"generation": gen, "model_id": model_id, "chunks": len(rows)}
        (tmp / "gen.json").write_text(json.dumps(info))
        os.replace(tmp, final)
        if vectors is not None and model_id and s.vector_backend == "chroma":
            add_to_chroma(self.dir, m, model_id, rows, vectors)

        with m.write() as db:
            for source, doc_id in new_ids.items():
                db.execute(
                    "UPDATE documents SET published = 0, status = 'superseded' "
                    "WHERE source = ? AND published = 1",
                    (source,),
                )
                db.execute(
                    "UPDATE documents SET published = 1, status = 'published', "
                    "published_at = ? WHERE id = ?",
                    (time.time(), doc_id),
                )
            m.set_meta("generation", str(gen))
            m.set_meta("embedding_model", model_id or "")
            m.set_meta("embedding_spec", config_to_spec(embedding) if model_id else "")
            m.set_meta("embedding_key", _embedding_key(embedding))
            m.set_meta("lexical_backend", s.lexical_backend)
            m.set_meta("vector_backend", s.vector_backend)
            m.set_meta("fields_version", FIELDS_VERSION)
            m.bump_revision()
        self._cleanup(m, gen, model_id if s.vector_backend == "chroma" else None)

    # -- recovery and cleanup ----------------------------------------------------------
    def _recover(self, m: Manifest) -> None:
        """Drop what a killed run left behind: building rows, unpublished folders (and
        ``<n>.tmp`` ones), a manifest it was creating."""
        remove_leftovers(self.dir)
        stale = [d.id for d in m.documents("status IN ('building', 'superseded')")]
        m.delete_documents(stale)
        current = m.get_meta("generation")
        gens = self.dir / GENS
        if gens.is_dir():
            for p in gens.iterdir():
                if not p.name.isdigit() or (current and int(p.name) > int(current)):
                    shutil.rmtree(p, ignore_errors=True)

    def _cleanup(self, m: Manifest, gen: int, chroma_model: str | None) -> None:
        old = [d.id for d in m.documents("status IN ('superseded', 'tombstoned')")]
        gone = m.delete_documents(old)
        if chroma_model:
            store = ChromaVectors(self.dir, chroma_model, create=True)
            if gone:
                store.delete([str(r) for r in gone])
            store.drop_other_collections()
        for p in (self.dir / GENS).iterdir():
            if p.name.isdigit() and int(p.name) < gen - 1:  # keep the previous one for readers
                shutil.rmtree(p, ignore_errors=True)

    # -- reading ------------------------------------------------------------------------
    def corpus(self) -> Corpus:
        """The published snapshot; reloaded when the manifest's revision changed."""
        if self._reader is None:
            self._reader = Manifest(self.dir)
        with self._reader.lock:
            rev = self._reader.get_meta("revision")
            if self._corpus is not None and rev == self._revision:
                return self._corpus
            for attempt in range(3):
                try:
                    self._corpus, self._revision = load_corpus(self.dir, self._reader)
                    return self._corpus
                except FileNotFoundError:  # a concurrent publish removed the folder we read
                    if attempt == 2:
                        raise
        raise AssertionError("unreachable")

    def embedding_spec(self) -> EmbeddingConfig | None:
        from opsmate.knowledge.embeddings import spec_to_config

        if self._reader is None:
            self._reader = Manifest(self.dir)
        spec = self._reader.get_meta("embedding_spec")
        return spec_to_config(spec) if spec else None

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
