"""Runbook chunks as self-contained records: what a shared backend stores and reads back.

The embedded index keeps chunks in a SQLite manifest beside BM25 files. A shared server
(Chroma, Elasticsearch) holds one record per chunk instead, carrying everything a reader
needs to search it exactly as the embedded index does: the chunk text, its heading path,
its parent section, its runbook's front matter and version, its domains, its BM25 terms
(tokenized by the publisher) and its position ``seq`` in the publisher's order (the order
an embedded index built from the same files would give, so ties break alike).

- :func:`read_records`: runbook files -> records (parsed and tokenized like
  ``opsmate index``; a file that cannot be read is reported, the others kept).
- :func:`embed_records`: their vectors, reused from the published generation when the
  chunk is unchanged (same chunk id, same model), else from the embedding cache, else
  from the model.
- :func:`corpus_from_records`: records -> a :class:`~opsmate.knowledge.corpus.Corpus`
  (BM25 and BM25F built here, from the stored terms), the lexical side of a reader.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from opsmate.config import EmbeddingConfig
from opsmate.errors import InputError, OpsmateError
from opsmate.knowledge.domains import doc_domains
from opsmate.knowledge.sources import SourceFile, read_checked

Progress = Callable[[str, int, int], None]


@dataclass
class ChunkRecord:
    """One chunk with everything a reader needs (see the module docstring)."""

    id: str
    seq: int
    source: str
    doc_version: str
    title: str
    meta: dict[str, Any]
    heading_path: list[str]
    text: str
    parent_id: str
    parent_text: str
    terms: list[str]

    @property
    def domains(self) -> list[str]:
        return sorted(doc_domains(self.source, self.meta))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RecordSet:
    """What :func:`read_records` found: records, documents, rejected files, warnings."""

    records: list[ChunkRecord] = field(default_factory=list)
    documents: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read_records(files: list[SourceFile], progress: Progress | None = None) -> RecordSet:
    """Parse and tokenize ``files`` into records, in order (``seq`` = position)."""
    from opsmate.knowledge.analyzers import tokenize
    from opsmate.knowledge.markdown import load_runbook
    from opsmate.knowledge.store import index_text

    out = RecordSet()
    for i, f in enumerate(files):
        if progress:
            progress("read", i, len(files))
        try:
            read_checked(f)
            try:
                doc = load_runbook(f.path, f.root)
            except (OpsmateError, OSError, MemoryError):
                raise
            except Exception as exc:  # a file the parser chokes on: that file, not the run
                raise InputError(
                    f"{f.source}: could not be read as a runbook ({type(exc).__name__}: "
                    f"{str(exc)[:200]}); not published"
                ) from exc
        except OpsmateError as exc:
            out.errors.append({"source": f.source, "message": exc.message})
            continue
        out.documents += 1
        out.warnings.extend(doc.warnings)
        meta = doc.meta.model_dump(mode="json")
        meta["title"] = doc.title
        parents = {s.id: s.text for s in doc.sections}
        for c in doc.chunks:
            out.records.append(
                ChunkRecord(
                    id=c.id,
                    seq=len(out.records),
                    source=doc.source,
                    doc_version=doc.doc_version,
                    title=doc.title,
                    meta=meta,
                    heading_path=list(c.heading_path),
                    text=c.text,
                    parent_id=c.parent_id,
                    parent_text=parents.get(c.parent_id, c.text),
                    terms=tokenize(index_text(c.heading_path, c.text)),
                )
            )
    if progress:
        progress("read", len(files), len(files))
    return out


def records_digest(records: list[ChunkRecord], model_id: str, strategy: str) -> str:
    """What identifies a generation's content: chunk ids (each a hash of path, version,
    position and chunking strategy) in order, the domains, the model and the analyzer."""
    h = hashlib.sha256(f"{model_id}\n{strategy}\n".encode())
    for r in records:
        h.update(f"{r.id}\t{','.join(r.domains)}\n".encode())
    return h.hexdigest()


@dataclass
class EmbeddedRecords:
    """The vectors of a record set (rows in record order) and where they came from."""

    matrix: np.ndarray
    model_id: str
    reused: int = 0
    embedded: int = 0


def embed_records(
    records: list[ChunkRecord],
    embedding: EmbeddingConfig,
    reuse: Callable[[str, list[str]], dict[str, np.ndarray]],
    progress: Progress | None = None,
) -> EmbeddedRecords:
    """Vectors of ``records``: ``reuse(model_id, ids)`` gives those the published
    generation already holds; the rest come from the embedding cache or the model.
    Raises EmbeddingUnavailable (exit 2) when there is no model: a shared index has vectors."""
    from opsmate.knowledge.embeddings import EmbeddingUnavailable, make_embedder
    from opsmate.knowledge.generation import vectors_in_order
    from opsmate.knowledge.store import embed_text

    embedder = make_embedder(embedding, allow_download=True)
    if embedder is None:
        raise EmbeddingUnavailable(
            "a shared runbook index needs vectors: embedding backend none cannot publish",
            hint="publish with --embedding onnx (the default), gguf or openai",
        )
    have = reuse(embedder.model_id, [r.id for r in records]) if records else {}
    by_id = {r.id: r for r in records}
    out, embedded = vectors_in_order(
        [r.id for r in records],
        have,
        lambda ids: [embed_text(by_id[i].heading_path, by_id[i].text) for i in ids],
        embedder,
        embedding.batch_size,
        progress,
    )
    missing = [r for r in records if r.id not in have]
    return EmbeddedRecords(out, embedder.model_id, reused=len(records) - len(missing),
                           embedded=embedded)  # fmt: skip


def corpus_from_records(
    records: list[ChunkRecord],
    *,
    model_id: str | None,
    retokenize: bool,
    bm25_backend: str,
    prebuilt: tuple[Any, Any] | None = None,
) -> Any:
    """A :class:`~opsmate.knowledge.corpus.Corpus` over ``records`` (sorted by ``seq``):
    documents in order of first appearance, BM25 and BM25F over the stored terms (or,
    ``retokenize``, terms from this opsmate's analyzer when the publisher's differed),
    texts in memory. ``prebuilt``: (BM25, BM25F) loaded from the reader's cache, built
    from these very records. Vectors are attached by the caller."""
    from opsmate.knowledge.analyzers import tokenize
    from opsmate.knowledge.corpus import ChunkText, Corpus, DocInfo
    from opsmate.knowledge.fields import FieldIndex, chunk_fields
    from opsmate.knowledge.lexical import build_lexical
    from opsmate.knowledge.store import MemoryStore, index_text

    records = sorted(records, key=lambda r: r.seq)
    docs: list[DocInfo] = []
    doc_index: dict[tuple[str, str], int] = {}
    doc_of: list[int] = []
    terms: list[list[str]] = []
    texts: list[ChunkText] = []
    field_docs: list[dict[str, list[str]]] = []
    memo: dict[str, list[str]] = {}
    for r in records:
        key = (r.source, r.doc_version)
        if key not in doc_index:
            doc_index[key] = len(docs)
            docs.append(DocInfo(r.source, r.doc_version, r.title, r.meta))
        d = doc_index[key]
        doc_of.append(d)
        t = tokenize(index_text(r.heading_path, r.text)) if retokenize else r.terms
        terms.append(t)
        texts.append(ChunkText(r.heading_path, r.text, r.parent_text))
        if prebuilt is None:
            field_docs.append(chunk_fields(t, r.heading_path, docs[d].meta, memo))
    if prebuilt is not None:
        lexical, fields = prebuilt
    else:
        lexical = build_lexical(terms, bm25_backend)  # type: ignore[arg-type]
        fields = FieldIndex.build(field_docs)
    return Corpus(
        chunk_ids=[r.id for r in records],
        parent_ids=[r.parent_id for r in records],
        doc_of=np.asarray(doc_of, dtype=np.int64),
        docs=docs,
        visible=np.ones(len(records), dtype=bool),
        lexical=lexical,
        store=MemoryStore(texts, terms),
        model_id=model_id,
        keys=[r.id for r in records],
        fields=fields,
    )


def record_from_json(raw: dict[str, Any]) -> ChunkRecord:
    """A record from :meth:`ChunkRecord.to_json` output (the reader's local cache)."""
    return ChunkRecord(**{k: raw[k] for k in ChunkRecord.__dataclass_fields__})


def meta_json(meta: dict[str, Any]) -> str:
    """A runbook's front matter as stored in a record (compact, stable key order)."""
    return json.dumps(meta, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def query_embedder(spec: str, model_id: str, notes: list[str]) -> Any:
    """The embedder of the vector space ``model_id`` on this machine, or None (with a note):
    never downloads; the default model's int8 copy is written from its float32 files when
    the index was built with it and this machine has only those."""
    from opsmate.knowledge.embeddings import (
        default_onnx_dir,
        make_embedder,
        onnx_folder_for,
        spec_to_config,
    )

    config = spec_to_config(spec)
    try:
        if config.backend == "onnx" and not config.model_path and onnx_folder_for(model_id) is None:
            default_onnx_dir(quantize="-int8:" in model_id)
        emb = make_embedder(config, allow_download=False, model_id=model_id)
    except OpsmateError as exc:
        notes.append(f"embedding model unavailable ({exc.message}): BM25 only")
        return None
    if emb is not None and emb.model_id != model_id:
        notes.append(
            f"this machine's embedding model ({emb.model_id}) is not the team index's "
            f"({model_id}): BM25 only"
        )
        return None
    return emb
