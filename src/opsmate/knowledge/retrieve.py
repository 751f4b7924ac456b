"""Hybrid runbook retrieval: understand, BM25F + vectors, RRF, rerank, parent expansion.

One query:

1. **Understanding** (:mod:`.query`): glossary expansions (Chinese, jargon, aliases),
   error signature, identifiers split, environment / service / time / version hints,
   intents, follow-up completion. The plan gives weighted BM25 terms and the text the
   embedding model sees.
2. **Lexical**: BM25F over body, headings, runbook metadata and symptom sections
   (:mod:`.fields`) when the index has it, else plain BM25 over the indexed text; and
   **vectors**: the cosine with every chunk. Top-N each (N = ``retrieval.candidates``),
   the metadata filters applied *inside* both (a mask before the top-N is chosen).
3. **Fusion**: reciprocal rank fusion by chunk (k = ``retrieval.rrf_k``, 60); the BM25
   list is weighted by how much of the query it explains (:func:`lexical_weight`).
   A multi-intent question is searched once per intent and the lists are fused again.
4. **Rerank** (hybrid mode): the feature stage (:mod:`.rerank`) re-scores the top
   ``retrieval.rerank_depth``; with ``retrieval.rerank_model`` a model reorders the top
   few under a time budget (:mod:`.rerank_model`); then the :class:`Reranker` hook
   (default pass-through).
5. **Parent expansion**: each hit carries its enclosing section; two children of one
   section are one hit.
6. **low_evidence** (:mod:`.evidence`): true when the best evidence is weak or the
   question is about a product no runbook mentions.

In ``bm25`` / ``vector`` mode the score is the BM25(F) score / the cosine and no rerank
runs: those modes show one side alone. A hybrid search over an index without vectors (or
without its embedding model) is BM25 only, and its answer says ``mode: bm25`` (with a
warning saying why).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from opsmate.config import RetrievalConfig
from opsmate.errors import UsageError
from opsmate.knowledge.corpus import Corpus, Filters, normalize_filters
from opsmate.knowledge.domains import allowed_domains
from opsmate.knowledge.embeddings import Embedder
from opsmate.knowledge.evidence import LEXICAL_EVIDENCE_SCALE, judge
from opsmate.knowledge.fusion import rrf_fuse
from opsmate.knowledge.hits import build_hits, one_per_parent
from opsmate.knowledge.lexical import lucene_idf, top_n
from opsmate.knowledge.rerank import Candidate, FeatureReranker
from opsmate.knowledge.types import SearchMode, SearchResponse
from opsmate.knowledge.vocabulary import corpus_vocabulary

if TYPE_CHECKING:
    from opsmate.config import Settings
    from opsmate.knowledge.query import QueryContext, QueryPlan, Vocabulary
    from opsmate.knowledge.rerank_model import ModelReranker

__all__ = [
    "LEXICAL_EVIDENCE_SCALE",
    "Candidate",
    "HybridRetriever",
    "open_retriever",
    "rrf_fuse",
]

LEXICAL_COVERAGE_FLOOR = 0.15
LEXICAL_COVERAGE_FULL = 0.45
INTENT_WEIGHT = 0.8  # weight of each intent's list against the whole question's
MODES = ("hybrid", "bm25", "vector")


class Reranker(Protocol):
    """Reorders fused candidates (a cross-encoder, an LLM ...); may drop some."""

    def rerank(
        self, query: str, candidates: list[Candidate], corpus: Corpus
    ) -> list[Candidate]: ...


class PassThroughReranker:
    """The default hook: keeps the order."""

    def rerank(self, query: str, candidates: list[Candidate], corpus: Corpus) -> list[Candidate]:
        return candidates


def lexical_weight(coverage: float) -> float:
    """Weight of the BM25 list in the fusion, from how much of the query it explains.

    0 below :data:`LEXICAL_COVERAGE_FLOOR`, 1 from :data:`LEXICAL_COVERAGE_FULL`, linear
    between. A best lexical match holding under ~15% of the query's IDF mass is word
    noise (paraphrases, symptom descriptions), and plain RRF would let it push the
    vector side's right answer down; keyword and error-code queries keep full weight.
    """
    span = LEXICAL_COVERAGE_FULL - LEXICAL_COVERAGE_FLOOR
    return float(min(1.0, max(0.0, (coverage - LEXICAL_COVERAGE_FLOOR) / span)))


@dataclass
class Side:
    """What one plan (the question, or one of its intents) retrieved."""

    bm25: list[tuple[int, float]]
    vec: list[tuple[int, float]]
    fused: list[tuple[int, float]]
    coverage: float
    sims: np.ndarray | None  # cosine with every chunk (numpy vector store)


class HybridRetriever:
    """The :class:`~opsmate.knowledge.types.Retriever` over a :class:`Corpus`."""

    def __init__(
        self,
        corpus: Corpus | Callable[[], Corpus],
        embedder: Embedder | Callable[[], Embedder | None] | None = None,
        *,
        config: RetrievalConfig | None = None,
        reranker: Reranker | None = None,
        warnings: list[str] | None = None,
        model_reranker: ModelReranker | None = None,
    ) -> None:
        self._corpus = corpus
        self._embedder = embedder
        self._embedder_ready = not callable(embedder) or hasattr(embedder, "embed")
        self.config = config or RetrievalConfig()
        self.reranker: Reranker = reranker or PassThroughReranker()
        self.feature_reranker = FeatureReranker(depth=self.config.rerank_depth)
        self.model_reranker = model_reranker
        self.warnings = warnings if warnings is not None else []
        self._qcache: dict[str, np.ndarray] = {}
        self.understanding = "full"  # "basic": no query understanding (for comparisons)

    @property
    def corpus(self) -> Corpus:
        return self._corpus() if callable(self._corpus) else self._corpus

    def embedder(self) -> Embedder | None:
        if not self._embedder_ready:
            factory = self._embedder
            self._embedder = factory() if callable(factory) else None
            self._embedder_ready = True
        return self._embedder  # type: ignore[return-value]

    def _embed(self, texts: list[str]) -> list[np.ndarray] | None:
        """Query vectors for ``texts`` (one model call for the ones not cached)."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._qcache]
        if missing:
            emb = self.embedder()
            if emb is None:
                return None
            if len(self._qcache) > 256:
                self._qcache.clear()
            self._qcache.update(zip(missing, emb.embed(missing), strict=True))
        return [self._qcache[t] for t in texts]

    def query_vectors(self, plans: list[QueryPlan]) -> list[np.ndarray] | None:
        """One vector per plan: the normalised mean of its ``embed_texts`` (one model call)."""
        groups = [p.embed_texts or [p.embed_text] for p in plans]
        vecs = self._embed([t for g in groups for t in g])
        if vecs is None:
            return None
        out, i = [], 0
        for g in groups:
            v = np.sum(vecs[i : i + len(g)], axis=0)
            out.append((v / max(float(np.linalg.norm(v)), 1e-12)).astype(np.float32))
            i += len(g)
        return out

    # -- understanding ----------------------------------------------------------------
    def vocabulary(self, corpus: Corpus) -> Vocabulary:
        """Service and environment names and the terms of ``corpus`` (memoised per snapshot)."""
        return corpus_vocabulary(corpus)

    def understand(self, query: str, context: QueryContext | None = None) -> QueryPlan:
        """The :class:`~opsmate.knowledge.query.QueryPlan` of ``query`` over this corpus."""
        from opsmate.knowledge.glossary import load_glossary
        from opsmate.knowledge.query import understand, understand_basic

        if self.understanding == "basic":
            return understand_basic(query)
        glossary = load_glossary(tuple(self.config.glossary))
        return understand(
            query.strip(),
            glossary=glossary,
            vocabulary=corpus_vocabulary(self.corpus),
            context=context,
        )

    # -- search -----------------------------------------------------------------------
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
        """Ranked chunks for ``query`` (see the module docstring for the steps).

        ``context`` (previous question, task-state terms) completes follow-up questions;
        ``explain`` adds how the query was understood and why each hit ranked where it did.
        """
        if mode not in MODES:
            raise UsageError(f"unknown search mode '{mode}'", hint="use hybrid, bm25 or vector")
        corpus = self.corpus
        notes: list[str] = []
        plan = self.understand(query, context)
        flt = normalize_filters(filters)
        old_ok = include_deprecated or (plan.wants_old and "status" not in flt)
        mask = corpus.mask(flt, old_ok)
        n = max(self.config.candidates, top_k)
        use_vectors = mode in ("hybrid", "vector") and self._vectors_usable(corpus, mode, notes)
        plans = [plan, *(self.understand(i) for i in plan.intents)]
        qvecs: list[np.ndarray] | None = None
        if use_vectors:
            qvecs = self.query_vectors(plans)
            if qvecs is None:
                if mode == "vector":
                    raise UsageError("the embedding model of this index is not available")
                notes.append("embedding model unavailable: BM25 only")
        sides = [
            self._side(corpus, p, None if qvecs is None else qvecs[i], mode, n, flt, old_ok, mask)
            for i, p in enumerate(plans)
        ]
        main = sides[0]
        fused = main.fused
        if len(sides) > 1:
            weights = [1.0] + [INTENT_WEIGHT] * (len(sides) - 1)
            fused = rrf_fuse([s.fused for s in sides], self.config.rrf_k, weights)
        b_rank = {p: (i + 1, s) for i, (p, s) in enumerate(main.bm25)}
        v_rank = {p: (i + 1, s) for i, (p, s) in enumerate(main.vec)}
        cands = [
            Candidate(
                pos=p,
                score=score,
                bm25_rank=b_rank[p][0] if p in b_rank else None,
                bm25_score=b_rank[p][1] if p in b_rank else None,
                vector_rank=v_rank[p][0] if p in v_rank else None,
                vector_similarity=v_rank[p][1] if p in v_rank else None,
            )
            for p, score in fused
        ]
        stages = ["fusion"]
        model_info: dict[str, Any] | None = None
        if mode == "hybrid" and self.config.rerank == "features":
            sims = main.sims
            if sims is None and qvecs is not None:  # remote vectors: the candidates' runbooks
                head = [c.pos for c in cands[: self.feature_reranker.depth]]
                sims = corpus.candidate_similarities(qvecs[0], head)
            cands = self.feature_reranker.rerank(plan, cands, corpus, sims)
            stages.append("features")
        if mode == "hybrid" and self.model_reranker is not None and cands:
            cands, model_info = self.model_reranker.rerank(plan, cands, corpus)
            stages.append("model" if model_info.get("applied") else "model (not applied)")
        cands = self.reranker.rerank(query, cands, corpus)

        chosen = one_per_parent(corpus, cands, top_k)
        ev = judge(plan, main.coverage, main.vec[0][1] if main.vec else None, cands, self.config)
        resp = SearchResponse(
            query=query,
            hits=build_hits(corpus, chosen, self.feature_reranker.weights if explain else None),
            low_evidence=ev.low,
            mode="bm25" if mode == "hybrid" and qvecs is None else mode,  # what really ran
            warnings=list(dict.fromkeys([*self.warnings, *corpus.warnings, *notes])),
        )
        if explain:
            resp.explain = {
                "understanding": plan.to_json(),
                "lexical": "bm25f (fields)" if corpus.fields is not None else "bm25",
                "stages": stages,
                "rerank_weights": self.feature_reranker.weights if "features" in stages else None,
                "model_rerank": model_info,
                "deprecated_included_for_old_version": old_ok and not include_deprecated,
                "evidence": ev.to_json(),
            }
        return resp

    def _vectors_usable(self, corpus: Corpus, mode: str, notes: list[str]) -> bool:
        if corpus.model_id is not None and corpus.vector_store() is not None:
            return True
        if mode == "vector":
            raise UsageError(
                "this index has no vectors (built with embedding backend none)",
                hint="use --mode bm25, or re-index with --embedding onnx",
            )
        notes.append("no embedding vectors in this index: BM25 only")
        return False

    def lexical_scores(self, corpus: Corpus, plan: QueryPlan) -> np.ndarray:
        """BM25F scores (or plain BM25 when the index has no field index) of weighted terms."""
        if corpus.fields is not None:
            return corpus.fields.scores(plan.lexical)
        out = np.zeros(corpus.lexical.n_docs, dtype=np.float32)
        by_weight: dict[float, list[str]] = {}
        for t, w in plan.lexical:
            by_weight.setdefault(w, []).append(t)
        for w, terms in by_weight.items():
            out += np.float32(w) * corpus.lexical.scores(terms)
        return out

    def lexical_ranking(
        self, corpus: Corpus, plan: QueryPlan, n: int, mask: np.ndarray
    ) -> list[tuple[int, float]]:
        """The lexical side's top ``n`` (position, score) allowed by ``mask``."""
        return top_n(self.lexical_scores(corpus, plan), n, mask)

    def _side(
        self,
        corpus: Corpus,
        plan: QueryPlan,
        qv: np.ndarray | None,
        mode: str,
        n: int,
        flt: Filters,
        old_ok: bool,
        mask: np.ndarray,
    ) -> Side:
        bm25: list[tuple[int, float]] = []
        if mode in ("hybrid", "bm25"):
            bm25 = self.lexical_ranking(corpus, plan, n, mask)
        vec: list[tuple[int, float]] = []
        sims: np.ndarray | None = None
        if qv is not None:
            store = corpus.vector_store()
            from opsmate.knowledge.vectors import NumpyVectors

            if isinstance(store, NumpyVectors):
                sims = store.similarities(qv)
                vec = store.search(qv, n, mask, sims=sims)
            else:
                vec = corpus.vector_search(qv, n, flt, old_ok, mask)
        coverage = self._coverage(corpus, plan, bm25)
        if mode == "bm25" or not vec:
            fused = bm25
        elif mode == "vector" or not bm25:
            fused = vec
        else:
            fused = rrf_fuse([bm25, vec], self.config.rrf_k, [lexical_weight(coverage), 1.0])
        return Side(bm25, vec, fused, coverage, sims)

    @staticmethod
    def _coverage(corpus: Corpus, plan: QueryPlan, bm25: list[tuple[int, float]]) -> float:
        """Best share of the query's own IDF mass held by one of the top 3 BM25 chunks."""
        if not bm25:
            return 0.0
        # what lexical.query_coverage computes per chunk, for the 3 chunks at once from
        # the index's postings (no chunk row is read)
        own = list(dict.fromkeys(t for t, w in plan.lexical if w >= 1.0 and t and t.strip()))
        if not own:
            return 0.0
        n = max(corpus.lexical.n_docs, 1)
        idf = np.array([lucene_idf(n, corpus.lexical.doc_freq(t)) for t in own])
        total = float(idf.sum())
        if not total:
            return 0.0
        top = np.array([p for p, _ in bm25[:3]], dtype=np.int64)
        return float((idf @ corpus.term_presence(own, top)).max() / total)


def open_retriever(
    index_dir: Path | None = None,
    settings: Settings | None = None,
    *,
    reranker: Reranker | None = None,
) -> HybridRetriever:
    """A retriever over the published index in ``index_dir`` (default: the configured one).

    Raises KnowledgeIndexError (exit 2) when the index is missing or empty. The query
    embedder is the model the index was built with, loaded on the first vector query
    and never downloaded; when it is unavailable, search falls back to BM25 with a
    warning. ``retrieval.rerank_model`` (when not ``none``) is loaded on first use.

    ``knowledge.backend`` picks the index: ``embedded`` (``index_dir``), ``chroma-server``
    (the team's Chroma server, :mod:`.chroma_server`) or ``elasticsearch``
    (:mod:`.es_index`, whose retriever has the same ``search``). ``knowledge.domains``
    restricts every backend to the user's team domains before ranking (:mod:`.domains`).
    """
    from opsmate.config import Settings
    from opsmate.errors import KnowledgeIndexError, OpsmateError
    from opsmate.knowledge.embeddings import make_embedder
    from opsmate.knowledge.index import KnowledgeIndex
    from opsmate.knowledge.rerank_model import model_reranker_from_config

    settings = settings or Settings()
    if settings.knowledge.backend == "chroma-server":
        from opsmate.knowledge.chroma_server import open_server_index

        server, server_embedder, server_notes = open_server_index(settings)
        return HybridRetriever(
            server.corpus,
            server_embedder,
            config=settings.retrieval,
            reranker=reranker,
            warnings=server_notes,
            model_reranker=model_reranker_from_config(settings),
        )
    if settings.knowledge.backend == "elasticsearch":
        from opsmate.knowledge.es_index import open_es_retriever

        return open_es_retriever(settings)  # type: ignore[return-value]
    folder = settings.resolved_index_dir(index_dir)
    index = KnowledgeIndex(folder)
    corpus = index.corpus()
    if corpus.visible_count == 0:
        raise KnowledgeIndexError(
            f"the runbook index in {folder} has no chunks",
            hint=f"run `opsmate index RUNBOOK_DIR --index-dir {folder}`",
        )
    source: Callable[[], Corpus] = index.corpus
    allowed = allowed_domains(settings.knowledge.domains)
    if allowed is not None:
        from opsmate.knowledge.domain_view import domain_view

        source = domain_view(index.corpus, allowed)
        if source().visible_count == 0:
            raise KnowledgeIndexError(
                f"the runbook index in {folder} has no runbook in your domains "
                f"({', '.join(sorted(allowed))})",
                hint="knowledge.domains in the config names the domains you read; a "
                "runbook's domains are its front matter `domains:` or its top folder",
            )
    spec = index.embedding_spec()
    notes: list[str] = []

    def embedder() -> Embedder | None:
        if spec is None:
            return None
        try:
            emb = make_embedder(spec, allow_download=False, model_id=index.corpus().model_id)
        except OpsmateError as exc:
            notes.append(f"embedding model unavailable ({exc.message}): BM25 only")
            return None
        if emb is not None and emb.model_id != index.corpus().model_id:
            notes.append(
                f"embedding model changed since indexing ({emb.model_id}); re-run "
                "`opsmate index`: BM25 only"
            )
            return None
        return emb

    # ``notes`` is shared: what the lazy embedder factory reports shows up in responses
    return HybridRetriever(
        source,
        embedder,
        config=settings.retrieval,
        reranker=reranker,
        warnings=notes,
        model_reranker=model_reranker_from_config(settings),
    )
