"""The searchable view of a set of chunks: positions, documents, filters, BM25, vectors.

A :class:`Corpus` is what :class:`~opsmate.knowledge.retrieve.HybridRetriever`
searches. It is built either from a published index generation (``index.py``: texts
are fetched from the manifest on demand) or in memory from a folder of runbooks
(``bundle_index.py``). Chunks are addressed by *position* (their order in the BM25
index and the vector matrix); each maps to a document, whose front matter drives the
metadata filters:

- ``service``: the runbook's ``service`` equals the value (case-insensitive);
- ``environment``: the runbook lists the value, or lists no environment at all
  (a runbook without ``environment`` applies to every environment);
- ``status``: equals the value. Deprecated runbooks are excluded unless asked for
  (``include_deprecated`` or an explicit ``status=deprecated`` filter).

Several values for one key (a list, or ``a,b``) match any of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from opsmate.errors import UsageError
from opsmate.knowledge.domains import doc_domains
from opsmate.knowledge.fields import FieldIndex
from opsmate.knowledge.lexical import LexicalIndex
from opsmate.knowledge.vectors import ChromaVectors, NumpyVectors

FILTER_KEYS = ("service", "environment", "status")
Filters = dict[str, frozenset[str]]


def normalize_filters(filters: dict[str, Any] | None) -> Filters:
    """Lower-cased value sets per key; unknown keys are a UsageError naming them."""
    out: Filters = {}
    for key, value in (filters or {}).items():
        k = key.strip().lower()
        if k == "env":
            k = "environment"
        if k not in FILTER_KEYS:
            raise UsageError(
                f"unknown filter key '{key}'", hint=f"use one of: {', '.join(FILTER_KEYS)}"
            )
        raw = value if isinstance(value, list | tuple | set | frozenset) else [value]
        vals = {
            str(v).strip().lower() for item in raw for v in str(item).split(",") if str(v).strip()
        }
        if vals:
            out[k] = frozenset(out.get(k, frozenset()) | vals)
    return out


@dataclass
class DocInfo:
    """What retrieval needs to know about one document version."""

    source: str
    version: str
    title: str
    meta: dict[str, Any]
    key: Any = None  # manifest doc id, or None in memory
    service: str = field(init=False)
    status: str = field(init=False)
    environments: frozenset[str] = field(init=False)
    domains: frozenset[str] = field(init=False)  # team domains (:mod:`.domains`)

    def __post_init__(self) -> None:
        self.service = str(self.meta.get("service") or "").strip().lower()
        self.status = str(self.meta.get("status") or "active").strip().lower()
        envs = self.meta.get("environment") or []
        if isinstance(envs, str):
            envs = [envs]
        self.environments = frozenset(str(e).strip().lower() for e in envs if str(e).strip())
        self.domains = doc_domains(self.source, self.meta)

    def allowed(self, filters: Filters, include_deprecated: bool) -> bool:
        statuses = filters.get("status")
        if statuses is not None:
            if self.status not in statuses:
                return False
        elif self.status == "deprecated" and not include_deprecated:
            return False
        services = filters.get("service")
        if services is not None and self.service not in services:
            return False
        envs = filters.get("environment")
        return envs is None or not self.environments or bool(self.environments & envs)


@dataclass
class ChunkText:
    heading_path: list[str]
    text: str
    parent_text: str


class ChunkStore(Protocol):
    """Where chunk texts, parents and terms come from (manifest or memory)."""

    def texts(self, positions: list[int]) -> dict[int, ChunkText]: ...

    def terms(self, position: int) -> list[str]: ...

    def heads_and_terms(self, positions: list[int]) -> dict[int, tuple[list[str], list[str]]]:
        """(heading path, BM25 terms) of several chunks at once (ranking features)."""
        ...

    def heading_paths(self, positions: list[int]) -> dict[int, list[str]]:
        """Heading paths of several chunks at once (ranking features)."""
        ...


@dataclass
class Corpus:
    """Chunks by position, with their documents, lexical index and (optional) vectors."""

    chunk_ids: list[str]
    parent_ids: list[str]
    doc_of: np.ndarray  # position -> index into ``docs``
    docs: list[DocInfo]
    visible: np.ndarray  # position -> published and not tombstoned
    lexical: LexicalIndex
    store: ChunkStore
    vectors: NumpyVectors | ChromaVectors | None = None
    model_id: str | None = None
    keys: list[str] = field(default_factory=list)  # chroma ids (rowids) by position
    vectors_loader: Callable[[], NumpyVectors | ChromaVectors | None] | None = None
    warnings: list[str] = field(default_factory=list)
    fields: FieldIndex | None = None  # BM25F over body, headings, metadata, symptoms
    _pos_of_key: dict[str, int] | None = None
    _masks: dict[Any, np.ndarray] = field(default_factory=dict)
    _groups: dict[str, dict[Any, np.ndarray]] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict)  # per-snapshot memo for ranking

    def positions_of(self, kind: str, key: Any) -> np.ndarray:
        """Positions of one document (``kind="doc"``, key = doc index) or one parent section
        (``kind="parent"``, key = (doc index, parent id)); grouped once per snapshot."""
        groups = self._groups.get(kind)
        if groups is None:
            buckets: dict[Any, list[int]] = {}
            for p in range(self.size):
                k = (
                    int(self.doc_of[p])
                    if kind == "doc"
                    else (int(self.doc_of[p]), self.parent_ids[p])
                )
                buckets.setdefault(k, []).append(p)
            groups = {k: np.asarray(v, dtype=np.int64) for k, v in buckets.items()}
            self._groups[kind] = groups
        return groups.get(key, np.zeros(0, dtype=np.int64))

    def group_of(self, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(group number of every position, positions sorted by group, group starts in it).

        ``kind`` is ``"doc"`` (a runbook) or ``"parent"`` (a parent section); computed
        once per snapshot so a query reduces over every group with one ``reduceat``.
        """
        memo = self.cache.setdefault("group_of", {})
        if kind not in memo:
            if kind == "doc":
                gid = np.asarray(self.doc_of, dtype=np.int64)
            else:
                numbers: dict[tuple[int, str], int] = {}
                gid = np.fromiter(
                    (
                        numbers.setdefault((int(d), pid), len(numbers))
                        for d, pid in zip(self.doc_of.tolist(), self.parent_ids, strict=True)
                    ),
                    dtype=np.int64,
                    count=self.size,
                )
            order = np.argsort(gid, kind="stable")
            sorted_gid = gid[order]
            starts = np.flatnonzero(np.r_[True, sorted_gid[1:] != sorted_gid[:-1]])
            dense = np.zeros(int(gid.max()) + 1 if gid.size else 0, dtype=np.int64)
            dense[sorted_gid[starts]] = np.arange(starts.size)
            memo[kind] = (dense[gid], order, starts)
        return memo[kind]

    def group_reduce(self, values: np.ndarray, kind: str, how: str) -> np.ndarray:
        """Per position: the ``how`` (``"max"`` or ``"mean"``) of ``values`` over its group."""
        group, order, starts = self.group_of(kind)
        if not self.size:
            return np.zeros(0, dtype=np.float32)
        ordered = values[order]
        if how == "max":
            return np.maximum.reduceat(ordered, starts)[group]
        counts = np.diff(np.r_[starts, ordered.size])
        return (np.add.reduceat(ordered, starts) / counts)[group]

    def term_presence(self, terms: list[str], positions: np.ndarray) -> np.ndarray:
        """Whether each of ``terms`` is a BM25 term of each of ``positions`` (terms x positions).

        Read from the lexical index's postings, not the manifest: no per-chunk row is
        fetched or split, so ranking features cost a few array slices per query term.
        """
        out = np.zeros((len(terms), len(positions)), dtype=bool)
        if not terms or not len(positions):
            return out
        mark = self.cache.get("presence_scratch")
        if mark is None or mark.shape[0] != self.size:
            mark = np.zeros(self.size, dtype=bool)
            self.cache["presence_scratch"] = mark
        for i, t in enumerate(terms):
            docs = self.lexical.postings(t)
            if docs.size:
                mark[docs] = True
                out[i] = mark[positions]
                mark[docs] = False
        return out

    @property
    def size(self) -> int:
        return len(self.chunk_ids)

    @property
    def visible_count(self) -> int:
        return int(self.visible.sum())

    def mask(self, filters: Filters, include_deprecated: bool) -> np.ndarray:
        """Positions allowed by the filters and visible (computed per document, memoised)."""
        key = (tuple(sorted(filters.items())), include_deprecated)
        cached = self._masks.get(key)
        if cached is not None:
            return cached
        doc_ok = np.array(
            [d.allowed(filters, include_deprecated) for d in self.docs] or [False], dtype=bool
        )
        mask = self.visible & doc_ok[self.doc_of] if self.size else np.zeros(0, dtype=bool)
        mask.setflags(write=False)
        if len(self._masks) > 64:
            self._masks.clear()
        self._masks[key] = mask
        return mask

    def vector_store(self) -> NumpyVectors | ChromaVectors | None:
        if self.vectors is None and self.vectors_loader is not None:
            self.vectors = self.vectors_loader()
            self.vectors_loader = None
        return self.vectors

    def candidate_similarities(self, query: np.ndarray, positions: list[int]) -> np.ndarray | None:
        """Cosines of ``query`` with every chunk of the runbooks holding ``positions`` (0
        elsewhere), for a vector store searched remotely that hands back stored vectors
        (``vectors_of``): the rerank stage's section and runbook cosines then equal the
        in-memory store's. None for any other store."""
        store = self.vector_store()
        fetch = getattr(store, "vectors_of", None)
        if fetch is None or not positions:
            return None
        docs = sorted({int(self.doc_of[p]) for p in positions})
        rows = np.concatenate([self.positions_of("doc", d) for d in docs])
        mat = np.asarray(fetch(rows.tolist()), dtype=np.float32)
        sims = np.zeros(self.size, dtype=np.float32)
        sims[rows] = np.einsum("ij,j->i", mat, np.asarray(query, dtype=np.float32).ravel())
        return sims

    def vector_search(
        self,
        query: np.ndarray,
        n: int,
        filters: Filters,
        include_deprecated: bool,
        mask: np.ndarray,
    ) -> list[tuple[int, float]]:
        store = self.vector_store()
        if store is None:
            return []
        if isinstance(store, NumpyVectors):
            return store.search(query, n, mask)
        if self._pos_of_key is None:
            self._pos_of_key = {k: i for i, k in enumerate(self.keys)}
        return store.search(
            query,
            n,
            where=chroma_where(filters, include_deprecated),
            pos_of=self._pos_of_key,
            mask=mask,
        )


def chroma_metadata(doc: DocInfo) -> dict[str, Any]:
    """Flat chromadb metadata for a chunk of ``doc`` (lists become ``env__<name>`` flags)."""
    meta: dict[str, Any] = {
        "source": doc.source,
        "service": doc.service,
        "status": doc.status,
        "env_all": not doc.environments,
    }
    for env in doc.environments:
        meta[f"env__{env}"] = True
    return meta


def chroma_where(filters: Filters, include_deprecated: bool) -> dict[str, Any] | None:
    """The same filters as :meth:`DocInfo.allowed`, as a chromadb ``where`` clause."""
    clauses: list[dict[str, Any]] = []
    if "status" in filters:
        clauses.append({"status": {"$in": sorted(filters["status"])}})
    elif not include_deprecated:
        clauses.append({"status": {"$ne": "deprecated"}})
    if "service" in filters:
        clauses.append({"service": {"$in": sorted(filters["service"])}})
    if "environment" in filters:
        ors: list[dict[str, Any]] = [{"env_all": True}]
        ors += [{f"env__{e}": True} for e in sorted(filters["environment"])]
        clauses.append({"$or": ors})
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}
