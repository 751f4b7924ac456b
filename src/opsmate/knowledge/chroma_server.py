"""The team runbook index on a Chroma server (``knowledge.backend: chroma-server``).

On the server (``knowledge.tenant`` / ``knowledge.database``):

    <collection>          the pointer: an empty collection whose metadata names the
                          published generation (number, collection id, embedding model,
                          analyzer, content digest, chunk count)
    <collection>-g<N>     generation N: one record per chunk - its vector, its text, and
                          metadata with everything a reader needs (:mod:`.records`):
                          heading path, parent section, front matter, domains, BM25 terms

A generation is written once by ``opsmate index --to URL`` (:mod:`.chroma_publish`) and
never changed; publishing is a new generation followed by one metadata write on the
pointer, so a reader sees the old generation or the new one, never a mix.

Where each side of the hybrid search runs:

- **vectors**: on the server. kNN over the generation's collection, with the domain
  clause and the metadata filters in the ``where`` pre-filter, so the nearest neighbours
  are chosen among allowed chunks only.
- **BM25 / BM25F**: on the reader. Chroma's server has no BM25 (its sparse "Search API"
  answers 501 on a local server, and could not reproduce BM25F fields and the query
  weights anyway), so the reader downloads the records of its domains once per
  generation, builds the same BM25 and BM25F the embedded index builds from the same
  terms, and keeps them in the local cache (:mod:`.team_cache`) under a key naming the
  generation, its collection id and content digest, its domains and the analyzer. The
  reader re-reads the pointer at most every ``knowledge.refresh_seconds``; when it moved,
  the next query runs on the new generation (downloaded and built first) - the lexical
  index and the vectors it is searched with always belong to the same generation.
- **rerank features**: their section and runbook cosines need the vectors of the
  candidates' runbooks; those are fetched from the server by id on first use and kept
  for the generation, so the feature stage scores exactly as the embedded index's does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from opsmate.errors import KnowledgeIndexError, OpsmateError
from opsmate.knowledge.chroma_http import ChromaHTTP, NotFound
from opsmate.knowledge.corpus import DocInfo, chroma_metadata
from opsmate.knowledge.domains import allowed_domains
from opsmate.knowledge.manifest import TERM_SEP
from opsmate.knowledge.records import ChunkRecord, meta_json
from opsmate.knowledge.vectors import ChromaVectors

if TYPE_CHECKING:
    from opsmate.config import Settings
    from opsmate.knowledge.corpus import Corpus

POINTER_KIND = "opsmate-runbook-index"
GENERATION_KIND = "opsmate-runbook-generation"
FORMAT = 1
PAGE = 500  # records per get / add request
STALE_NOTE = "the team index's pointer could not be re-read"


@dataclass(frozen=True)
class Pointer:
    """The published generation, as the pointer's metadata names it."""

    collection_id: str  # of the pointer collection itself
    generation: int
    name: str  # <collection>-g<N>
    generation_id: str
    model_id: str
    embedding_spec: str
    strategy: str
    digest: str
    chunks: int
    documents: int
    published_at: float

    @classmethod
    def from_metadata(cls, collection_id: str, md: dict[str, Any]) -> Pointer:
        return cls(
            collection_id=collection_id,
            generation=int(md["generation"]),
            name=str(md["name"]),
            generation_id=str(md["generation_id"]),
            model_id=str(md["model_id"]),
            embedding_spec=str(md["embedding_spec"]),
            strategy=str(md["strategy"]),
            digest=str(md["digest"]),
            chunks=int(md["chunks"]),
            documents=int(md["documents"]),
            published_at=float(md["published_at"]),
        )

    def metadata(self) -> dict[str, Any]:
        md: dict[str, Any] = {"opsmate": POINTER_KIND, "format": FORMAT}
        md.update({k: v for k, v in self.__dict__.items() if k != "collection_id"})
        return md


def read_pointer(api: ChromaHTTP, name: str) -> tuple[str | None, Pointer | None]:
    """(pointer collection id, published pointer); (None, None) when there is no index,
    (id, None) when the pointer exists but nothing was published yet."""
    try:
        col = api.get_collection(name)
    except NotFound:
        return None, None
    md = col.metadata
    if md.get("opsmate") != POINTER_KIND:
        raise KnowledgeIndexError(
            f"collection {name!r} on {api.url} is not an opsmate runbook index",
            hint="choose another knowledge.collection",
        )
    if int(md.get("format", FORMAT)) > FORMAT:
        raise KnowledgeIndexError(
            f"the runbook index {name!r} on {api.url} was published by a newer opsmate "
            f"(format {md.get('format')})",
            hint="upgrade opsmate",
        )
    if "generation" not in md:
        return col.id, None
    try:
        return col.id, Pointer.from_metadata(col.id, md)
    except (KeyError, ValueError) as exc:
        raise KnowledgeIndexError(
            f"the pointer of {name!r} on {api.url} is damaged: {exc}"
        ) from exc


# -- records <-> Chroma metadata --------------------------------------------------------
def record_metadata(r: ChunkRecord) -> dict[str, Any]:
    """The flat Chroma metadata of a record: the filter keys of the embedded chromadb
    backend (service, status, environments) plus what a reader needs to rebuild it."""
    md = chroma_metadata(DocInfo(r.source, r.doc_version, r.title, r.meta))
    md.update(
        seq=r.seq,
        doc_version=r.doc_version,
        title=r.title,
        heading_path=json.dumps(r.heading_path, ensure_ascii=False),
        parent_id=r.parent_id,
        parent_text=r.parent_text,
        terms=TERM_SEP.join(r.terms),
        meta_json=meta_json(r.meta),
        domains=r.domains,
    )
    return md


def record_from_chroma(cid: str, document: str | None, md: dict[str, Any]) -> ChunkRecord:
    terms = str(md.get("terms") or "")
    return ChunkRecord(
        id=cid,
        seq=int(md["seq"]),
        source=str(md["source"]),
        doc_version=str(md["doc_version"]),
        title=str(md.get("title") or ""),
        meta=json.loads(str(md.get("meta_json") or "{}")),
        heading_path=list(json.loads(str(md.get("heading_path") or "[]"))),
        text=document or "",
        parent_id=str(md.get("parent_id") or ""),
        parent_text=str(md.get("parent_text") or document or ""),
        terms=terms.split(TERM_SEP) if terms else [],
    )


def domain_where(allowed: frozenset[str] | None) -> dict[str, Any] | None:
    """The ``where`` clause of a domain set (a record lists its domains in ``domains``)."""
    if allowed is None:
        return None
    clauses: list[dict[str, Any]] = [{"domains": {"$contains": d}} for d in sorted(allowed)]
    return clauses[0] if len(clauses) == 1 else {"$or": clauses}


def and_where(*clauses: dict[str, Any] | None) -> dict[str, Any] | None:
    parts: list[dict[str, Any]] = []
    for c in clauses:
        if c is None:
            continue
        parts.extend(c["$and"] if set(c) == {"$and"} else [c])
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else {"$and": parts}


# -- the vector side ---------------------------------------------------------------------
class ServerVectors(ChromaVectors):
    """kNN over a generation's collection on the server, restricted to the reader's domains."""

    def __init__(
        self, api: ChromaHTTP, name: str, collection_id: str, scope: dict[str, Any] | None,
        keys: list[str],
    ) -> None:  # fmt: skip
        self.api = api
        self.name = name
        self.collection_id = collection_id
        self.scope = scope
        self._keys = keys
        self._vectors: dict[int, np.ndarray] = {}

    def search(
        self,
        query: np.ndarray,
        n: int,
        *,
        where: dict[str, Any] | None,
        pos_of: dict[str, int],
        mask: np.ndarray,
    ) -> list[tuple[int, float]]:
        """The top ``n`` allowed positions: domains and filters are in the server's
        ``where``; an answer outside ``mask`` (none expected) is dropped."""
        k = min(n, int(mask.sum()))
        if k <= 0:
            return []
        vec = np.asarray(query, dtype=np.float32).ravel().tolist()
        ids, dists = self.api.query(self.collection_id, vec, k, and_where(self.scope, where))
        out = []
        for cid, dist in zip(ids, dists, strict=True):
            p = pos_of.get(cid)
            if p is not None and mask[p]:
                out.append((p, 1.0 - dist))
        return out

    def vectors_of(self, positions: list[int]) -> np.ndarray:
        """Stored vectors of ``positions`` (fetched by id once per generation)."""
        missing = [p for p in dict.fromkeys(positions) if p not in self._vectors]
        for start in range(0, len(missing), PAGE):
            part = missing[start : start + PAGE]
            got = self.api.get(
                self.collection_id, ids=[self._keys[p] for p in part], include=["embeddings"]
            )
            pos = {self._keys[p]: p for p in part}
            for cid, emb in zip(got["ids"], got["embeddings"], strict=True):
                self._vectors[pos[cid]] = np.asarray(emb, dtype=np.float32)
        return np.stack([self._vectors[p] for p in positions])


# -- the reader -------------------------------------------------------------------------
class ServerIndex:
    """A reader of the team index: the published generation of its domains as a Corpus."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.knowledge = settings.knowledge
        self.api = ChromaHTTP(self.knowledge)
        self.allowed = allowed_domains(self.knowledge.domains)
        self.pointer: Pointer | None = None
        self.first_model: str | None = None
        self.synced_from_cache = False
        self._corpus: Corpus | None = None
        self._checked = 0.0

    @property
    def server_key(self) -> dict[str, Any]:
        k = self.knowledge
        return {"url": self.api.url, "tenant": k.tenant, "database": k.database,
                "collection": k.collection}  # fmt: skip

    def corpus(self) -> Corpus:
        """The published generation (the pointer re-read at most every refresh_seconds)."""
        now = time.monotonic()
        if self._corpus is not None and now - self._checked < self.knowledge.refresh_seconds:
            return self._corpus
        try:
            _pid, ptr = read_pointer(self.api, self.knowledge.collection)
        except OpsmateError as exc:
            if self._corpus is None:
                raise
            self._checked = now  # not before every query: the server may hang each time
            kept = [w for w in self._corpus.warnings if not w.startswith(STALE_NOTE)]
            note = f"{STALE_NOTE} ({exc.message}); searching the generation loaded before"
            self._corpus.warnings[:] = [*kept, note]
            return self._corpus
        self._checked = now
        if self._corpus is not None:
            self._corpus.warnings[:] = [
                w for w in self._corpus.warnings if not w.startswith(STALE_NOTE)
            ]
        if ptr is None:
            raise KnowledgeIndexError(
                f"no runbook index has been published to {self.api.url} "
                f"(collection {self.knowledge.collection!r})",
                hint=f"publish one: opsmate index RUNBOOK_DIR --to {self.api.url}",
            )
        if self._corpus is None or ptr != self.pointer:
            self._corpus = self._load(ptr)
            self.pointer = ptr
        return self._corpus

    def _load(self, ptr: Pointer) -> Corpus:
        from opsmate.knowledge import team_cache
        from opsmate.knowledge.fields import FIELDS_VERSION
        from opsmate.knowledge.records import corpus_from_records
        from opsmate.knowledge.store import strategy_version

        backend = self.settings.retrieval.bm25_backend
        retokenize = ptr.strategy != strategy_version()
        key = {
            "generation": ptr.generation, "generation_id": ptr.generation_id,
            "digest": ptr.digest, "domains": sorted(self.allowed) if self.allowed else None,
            "strategy": strategy_version(), "fields": FIELDS_VERSION, "bm25": backend,
        }  # fmt: skip
        cached = team_cache.load(self.server_key, key)
        self.synced_from_cache = cached is not None
        if cached is not None:
            records, prebuilt = cached
        else:
            records, prebuilt = self._download(ptr), None
        corpus = corpus_from_records(
            records, model_id=ptr.model_id, retokenize=retokenize, bm25_backend=backend,
            prebuilt=prebuilt,
        )  # fmt: skip
        if cached is None:
            team_cache.save(self.server_key, key, records, corpus)
        if retokenize:
            corpus.warnings.append(
                "the team index was published by another opsmate version (its analyzer "
                "differs): its BM25 terms were re-tokenized here; re-publish to match"
            )
        self.first_model = self.first_model or ptr.model_id
        if ptr.model_id != self.first_model:
            corpus.model_id = None  # the query embedder was loaded for the other model
            corpus.warnings.append(
                f"the team index changed embedding model ({ptr.model_id}): BM25 only "
                "until opsmate is restarted"
            )
        corpus.vectors = ServerVectors(
            self.api, ptr.name, ptr.generation_id, domain_where(self.allowed), corpus.keys
        )
        return corpus

    def _download(self, ptr: Pointer) -> list[ChunkRecord]:
        """Every record of the allowed domains in generation ``ptr`` (checked complete)."""
        try:
            total = self.api.count(ptr.generation_id)
        except NotFound as exc:
            raise KnowledgeIndexError(
                f"generation {ptr.generation} of the team index on {self.api.url} is gone "
                "(a newer publish removed it)",
                hint="search again: the pointer is re-read",
            ) from exc
        if total != ptr.chunks:
            raise KnowledgeIndexError(
                f"generation {ptr.generation} on {self.api.url} holds {total} chunks, its "
                f"pointer says {ptr.chunks}: refusing an incomplete index",
                hint="re-publish with `opsmate index --to`",
            )
        where = domain_where(self.allowed)
        records: list[ChunkRecord] = []
        seen: set[str] = set()
        while True:
            page = self.api.get(
                ptr.generation_id, where=where, limit=PAGE, offset=len(records),
                include=["documents", "metadatas"],
            )  # fmt: skip
            for cid, doc, md in zip(page["ids"], page["documents"], page["metadatas"], strict=True):
                if cid in seen:
                    raise KnowledgeIndexError(f"duplicate chunk {cid} in {ptr.name}")
                seen.add(cid)
                records.append(record_from_chroma(cid, doc, md))
            if len(page["ids"]) < PAGE:
                break
        if where is None and len(records) != ptr.chunks:
            raise KnowledgeIndexError(
                f"read {len(records)} of the {ptr.chunks} chunks of {ptr.name}; refusing"
            )
        return records


def open_server_index(settings: Settings) -> tuple[ServerIndex, Callable[[], Any], list[str]]:
    """The team index on the configured Chroma server, its query embedder factory and the
    list its notes go to (what :func:`~opsmate.knowledge.retrieve.open_retriever` builds the
    retriever from). Raises SourceUnreachableError (exit 3) when the server cannot be
    reached, KnowledgeIndexError when nothing is published or none of the user's domains
    is in it."""
    from opsmate.knowledge.records import query_embedder

    index = ServerIndex(settings)
    corpus = index.corpus()
    if corpus.visible_count == 0:
        raise KnowledgeIndexError(
            f"the team index on {index.api.url} has no runbook in your domains "
            f"({', '.join(sorted(index.allowed or ()))})",
            hint="knowledge.domains in the config names the domains you read",
        )
    notes: list[str] = []
    assert index.pointer is not None
    spec, model_id = index.pointer.embedding_spec, index.pointer.model_id

    def embedder() -> Any:
        return query_embedder(spec, model_id, notes)

    return index, embedder, notes
