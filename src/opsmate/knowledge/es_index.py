"""The team runbook index in Elasticsearch (``knowledge.backend: elasticsearch``).

The scale path for large organisations: BM25 and ``dense_vector`` kNN in one index, so
nothing but the question and the hits crosses the network (the Chroma backend copies its
domains' chunks to every reader). Layout:

    <collection>          an alias naming the published generation's index
    <collection>-g<N>     generation N: one document per chunk; its ``_meta`` mapping
                          holds the generation's model, analyzer and digest

Fields of a chunk: ``body``, ``heading``, ``meta``, ``symptom`` - opsmate's own tokens
(the analyzer of the embedded index: jieba, glossary, identifiers) joined by spaces and
indexed with the ``whitespace`` analyzer, so Elasticsearch scores the same terms;
``domains``, ``service``, ``status``, ``environments``, ``env_all`` (keywords, filters);
``embedding`` (``dense_vector``, cosine, indexed for kNN); ``stored`` (not indexed: the
texts and front matter a hit shows).

One search is one ``_msearch`` on the generation's index (not the alias, so both halves
read the same generation): a lexical query - ``combined_fields`` (Elasticsearch's BM25F)
over the four fields with opsmate's field weights, one clause per query-term weight - and
a ``knn`` query. **The domain clause is inside both, before scoring**: in the lexical
query's ``bool.filter`` and in the kNN's ``filter`` (a pre-filter: the k nearest are
chosen among allowed chunks), with the metadata filters beside it. The two lists are
fused with the same RRF as the embedded index; one hit per parent section.

What differs from the embedded index: Elasticsearch computes BM25 statistics (IDF,
average lengths) over the whole index, filters excluded, so other domains' term
statistics shape lexical scores (never the hits or their count); a team that must not
share even that publishes one index per domain group (``knowledge.collection``). No
feature rerank (it needs every chunk's terms on the reader); ``low_evidence`` is the best
kNN cosine against the calibrated threshold (no lexical coverage).
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, get_args

import numpy as np

from opsmate.errors import (
    ConfigError,
    KnowledgeIndexError,
    OpsmateError,
    SourceUnreachableError,
    UsageError,
)
from opsmate.knowledge.corpus import Filters, normalize_filters
from opsmate.knowledge.domains import allowed_domains
from opsmate.knowledge.fields import FIELD_WEIGHTS
from opsmate.knowledge.types import SearchHit, SearchMode, SearchResponse

if TYPE_CHECKING:
    from opsmate.config import KnowledgeConfig, Settings
    from opsmate.knowledge.query import QueryContext, QueryPlan

GENERATION_KIND = "opsmate-runbook-generation"
FORMAT = 1
SOURCE_FIELDS = ["source", "doc_version", "seq", "parent_id", "stored"]
TEXT = {"type": "text", "analyzer": "whitespace"}
KEYWORD = {"type": "keyword"}


def mappings(dims: int, meta: dict[str, Any]) -> dict[str, Any]:
    """The mapping of a generation's index (``_meta``: the generation's description)."""
    return {
        "dynamic": "strict",
        "_meta": meta,
        "properties": {
            "body": TEXT, "heading": TEXT, "meta": TEXT, "symptom": TEXT,
            "domains": KEYWORD, "service": KEYWORD, "status": KEYWORD,
            "environments": KEYWORD, "env_all": {"type": "boolean"},
            "source": KEYWORD, "doc_version": KEYWORD, "parent_id": KEYWORD,
            "seq": {"type": "integer"},
            "embedding": {"type": "dense_vector", "dims": dims, "index": True,
                          "similarity": "cosine"},
            "stored": {"type": "object", "enabled": False},
        },
    }  # fmt: skip


def es_client(knowledge: KnowledgeConfig, url: str | None = None) -> Any:
    """An ``elasticsearch`` client for the team index (API key from ``token_env``)."""
    url = url or knowledge.url
    if not url:
        raise ConfigError(
            "knowledge.url is not set: the Elasticsearch of the team index is unknown",
            hint="set knowledge.url, or pass --to URL",
        )
    from elasticsearch import Elasticsearch

    auth: dict[str, Any] = {}
    if knowledge.token_env:
        key = os.environ.get(knowledge.token_env)
        if not key:
            raise ConfigError(f"knowledge.token_env names {knowledge.token_env}, which is not set")
        auth["api_key"] = key
    return Elasticsearch(
        url,
        request_timeout=knowledge.timeout,
        verify_certs=knowledge.verify_tls,
        max_retries=0,
        **auth,
    )


def es_call(url: str, fn: Any, *args: Any, **kw: Any) -> Any:
    """``fn(*args, **kw)`` with the client's failures mapped onto opsmate's errors
    (unreachable: exit 3; refused or malformed: KnowledgeIndexError naming the reason)."""
    import elastic_transport as et
    import elasticsearch as es

    try:
        return fn(*args, **kw)
    except es.NotFoundError:
        raise
    except es.ApiError as exc:
        err = exc.body.get("error") if isinstance(exc.body, dict) else None
        why = err.get("reason") if isinstance(err, dict) else str(exc.body)[:200]
        raise KnowledgeIndexError(
            f"Elasticsearch at {url} answered {exc.meta.status}: {why}"
        ) from exc
    except (et.ConnectionError, et.ConnectionTimeout) as exc:
        raise SourceUnreachableError(
            f"Elasticsearch at {url} cannot be reached ({type(exc).__name__})",
            hint="check knowledge.url",
        ) from exc
    except es.UnsupportedProductError as exc:
        raise KnowledgeIndexError(f"the server at {url} is not Elasticsearch: {exc}") from exc


def published_index(client: Any, url: str, alias: str) -> tuple[str, dict[str, Any]] | None:
    """(index name, its ``_meta``) the alias points at; None when nothing is published."""
    import elasticsearch as es

    try:
        got = es_call(url, client.indices.get_alias, name=alias)
    except es.NotFoundError:
        return None
    names = sorted(got.body if hasattr(got, "body") else got)
    if len(names) != 1:
        raise KnowledgeIndexError(f"alias {alias} on {url} names {len(names)} indices, not one")
    mapping = es_call(url, client.indices.get_mapping, index=names[0])
    meta = dict(mapping[names[0]]["mappings"].get("_meta") or {})
    if meta.get("opsmate") != GENERATION_KIND:
        raise KnowledgeIndexError(f"index {names[0]} on {url} is not an opsmate runbook index")
    return names[0], meta


def filter_clauses(
    allowed: frozenset[str] | None, filters: Filters, include_deprecated: bool
) -> list[dict[str, Any]]:
    """The ``bool.filter`` / kNN ``filter`` clauses: domains first, then the filters."""
    out: list[dict[str, Any]] = []
    if allowed is not None:
        out.append({"terms": {"domains": sorted(allowed)}})
    if "status" in filters:
        out.append({"terms": {"status": sorted(filters["status"])}})
    elif not include_deprecated:
        out.append({"bool": {"must_not": [{"term": {"status": "deprecated"}}]}})
    if "service" in filters:
        out.append({"terms": {"service": sorted(filters["service"])}})
    if "environment" in filters:
        envs = {"terms": {"environments": sorted(filters["environment"])}}
        out.append({"bool": {"should": [{"term": {"env_all": True}}, envs],
                             "minimum_should_match": 1}})  # fmt: skip
    return out


def lexical_query(plan: QueryPlan, flt: list[dict[str, Any]]) -> dict[str, Any]:
    """BM25F (``combined_fields``) over opsmate's tokens: one clause per term weight."""
    fields = [f"{f}^{w:g}" for f, w in FIELD_WEIGHTS.items()]
    groups: dict[float, list[str]] = {}
    for t, w in plan.lexical:
        if t and t.strip() and w > 0:
            groups.setdefault(round(float(w), 4), []).append(t)
    should = [
        {"combined_fields": {"query": " ".join(terms), "fields": fields, "boost": w}}
        for w, terms in sorted(groups.items(), reverse=True)
    ]
    return {"bool": {"filter": flt, "should": should, "minimum_should_match": 1}}


class ESRetriever:
    """The Retriever over the team index in Elasticsearch (same ``search`` signature)."""

    def __init__(self, settings: Settings, client: Any | None = None) -> None:
        self.settings = settings
        self.knowledge = settings.knowledge
        self.url = str(self.knowledge.url)
        self.client = client or es_client(self.knowledge)
        self.allowed = allowed_domains(self.knowledge.domains)
        self.warnings: list[str] = []
        self._index: tuple[str, dict[str, Any]] | None = None
        self._checked = 0.0
        self._embedder: Any = None
        self._vocab: Any = None

    def generation(self) -> tuple[str, dict[str, Any]]:
        """The published index and its ``_meta`` (re-read every refresh_seconds)."""
        now = time.monotonic()
        if self._index is None or now - self._checked >= self.knowledge.refresh_seconds:
            found = published_index(self.client, self.url, self.knowledge.collection)
            if found is None:
                raise KnowledgeIndexError(
                    f"no runbook index has been published to {self.url} "
                    f"(alias {self.knowledge.collection!r})",
                    hint=f"publish one: opsmate index RUNBOOK_DIR --to {self.url}",
                )
            if self._index is None or found[0] != self._index[0]:
                self._vocab = None
                if self._index is not None and found[1].get("model_id") != self._index[1].get(
                    "model_id"
                ):
                    self._embedder = None
            self._index, self._checked = found, now
        return self._index

    def _embed(self, plan: QueryPlan, meta: dict[str, Any]) -> np.ndarray | None:
        from opsmate.knowledge.records import query_embedder

        if self._embedder is None:
            self._embedder = (
                query_embedder(
                    str(meta.get("embedding_spec")), str(meta.get("model_id")), self.warnings
                )
                or False
            )
        if not self._embedder:
            return None
        vecs = self._embedder.embed(plan.embed_texts or [plan.embed_text])
        v = np.sum(vecs, axis=0)
        return (v / max(float(np.linalg.norm(v)), 1e-12)).astype(np.float32)

    def vocabulary(self, index: str) -> Any:
        """Services and environments of the allowed domains (one aggregation per generation)."""
        from opsmate.knowledge.query import Vocabulary

        if self._vocab is None:
            flt = filter_clauses(self.allowed, {}, True)
            res = es_call(
                self.url, self.client.search, index=index, size=0,
                query={"bool": {"filter": flt}},
                aggs={"services": {"terms": {"field": "service", "size": 1000}},
                      "environments": {"terms": {"field": "environments", "size": 1000}}},
            )  # fmt: skip
            aggs = res["aggregations"]
            self._vocab = Vocabulary(
                frozenset(b["key"] for b in aggs["services"]["buckets"] if b["key"]),
                frozenset(b["key"] for b in aggs["environments"]["buckets"]),
            )
        return self._vocab

    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        mode: SearchMode = "hybrid",
        filters: dict[str, Any] | None = None,
        include_deprecated: bool = False,
        explain: bool = False,
        context: QueryContext | None = None,
    ) -> SearchResponse:
        """Ranked chunks for ``query`` (see the module docstring)."""
        from opsmate.knowledge.evidence import judge
        from opsmate.knowledge.fusion import rrf_fuse
        from opsmate.knowledge.glossary import load_glossary
        from opsmate.knowledge.query import understand

        if mode not in get_args(SearchMode):
            raise UsageError(f"unknown search mode '{mode}'", hint="use hybrid, bm25 or vector")
        index, meta = self.generation()
        cfg = self.settings.retrieval
        plan = understand(
            query.strip(), glossary=load_glossary(tuple(cfg.glossary)),
            vocabulary=self.vocabulary(index), context=context,
        )  # fmt: skip
        flt = normalize_filters(filters)
        old_ok = include_deprecated or (plan.wants_old and "status" not in flt)
        clauses = filter_clauses(self.allowed, flt, old_ok)
        n = max(cfg.candidates, top_k)
        qv = self._embed(plan, meta) if mode in ("hybrid", "vector") else None
        if mode == "vector" and qv is None:
            raise UsageError("the embedding model of the team index is not available here")
        searches: list[dict[str, Any]] = []
        if mode in ("hybrid", "bm25"):
            searches += [{}, {"size": n, "query": lexical_query(plan, clauses),
                              "_source": SOURCE_FIELDS}]  # fmt: skip
        if qv is not None:
            knn = {"field": "embedding", "query_vector": qv.tolist(), "k": n,
                   "num_candidates": max(100, 2 * n), "filter": clauses}  # fmt: skip
            searches += [{}, {"size": n, "knn": knn, "_source": SOURCE_FIELDS}]
        res = es_call(self.url, self.client.msearch, index=index, searches=searches)
        lists: list[list[tuple[str, float]]] = []
        src: dict[str, dict[str, Any]] = {}
        for r in res["responses"]:
            if "error" in r:
                raise KnowledgeIndexError(f"Elasticsearch at {self.url}: {r['error']}")
            lists.append([(h["_id"], float(h["_score"])) for h in r["hits"]["hits"]])
            src.update({h["_id"]: h["_source"] for h in r["hits"]["hits"]})
        bm25 = lists[0] if mode in ("hybrid", "bm25") else []
        vec = lists[-1] if qv is not None else []
        order = {cid: i for i, cid in enumerate(src)}
        fused = _fuse(bm25, vec, order, cfg.rrf_k, rrf_fuse)
        b_rank = {c: i + 1 for i, (c, _) in enumerate(bm25)}
        v_rank = {c: (i + 1, 2.0 * s - 1.0) for i, (c, s) in enumerate(vec)}  # (1+cos)/2
        hits: list[SearchHit] = []
        seen: set[tuple[str, str]] = set()
        for fused_rank, (cid, score) in enumerate(fused, start=1):
            s = src[cid]
            key = (str(s["source"]), str(s.get("parent_id")))
            if key in seen:
                continue
            seen.add(key)
            st = s["stored"]
            hits.append(SearchHit(
                rank=len(hits) + 1, score=round(score, 6), chunk_id=cid, source=key[0],
                heading_path=list(st["heading_path"]), text=st["text"],
                parent_text=st["parent_text"], doc_version=str(s["doc_version"]),
                metadata=dict(st["meta"]), bm25_rank=b_rank.get(cid),
                vector_rank=v_rank[cid][0] if cid in v_rank else None,
                vector_similarity=round(v_rank[cid][1], 6) if cid in v_rank else None,
                explain={"fused_rank": fused_rank, "bm25_rank": b_rank.get(cid),
                         "vector_rank": v_rank[cid][0] if cid in v_rank else None,
                         "final_score": round(score, 6)} if explain else None,
            ))  # fmt: skip
            if len(hits) >= top_k:
                break
        best = vec[0][1] * 2.0 - 1.0 if vec else None
        ev = judge(plan, 0.0, best, [], cfg) if best is not None else None
        resp = SearchResponse(
            query=query, hits=hits, low_evidence=ev.low if ev is not None else not hits,
            mode="bm25" if mode == "hybrid" and qv is None else mode,
            warnings=list(dict.fromkeys(self.warnings)),
        )  # fmt: skip
        if explain:
            resp.explain = {
                "understanding": plan.to_json(),
                "lexical": "bm25f (elasticsearch combined_fields)",
                "stages": ["fusion"],
                "index": index,
                "evidence": ev.to_json() if ev is not None else {"low": not hits},
            }
        return resp


def _fuse(
    bm25: list[tuple[str, float]],
    vec: list[tuple[str, float]],
    order: dict[str, int],
    k: int,
    rrf_fuse: Any,
) -> list[tuple[str, float]]:
    """RRF of the two lists (ids mapped to numbers so ties break by first appearance)."""
    if not vec or not bm25:
        return list(bm25 or vec)
    ids = list(order)
    as_pos = [[(order[c], s) for c, s in lst] for lst in (bm25, vec)]
    return [(ids[p], s) for p, s in rrf_fuse(as_pos, k)]


def open_es_retriever(settings: Settings) -> ESRetriever:
    """The :class:`ESRetriever` of the configured team index (checked published)."""
    r = ESRetriever(settings)
    try:
        r.generation()
    except OpsmateError:
        r.client.close()
        raise
    return r
