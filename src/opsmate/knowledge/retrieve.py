"""Hybrid runbook retrieval: filtered BM25 + filtered vectors, RRF, parent expansion, rerank.

One query:

1. Chinese ops terms are expanded with their English equivalents
   (``analyzers.expand_query``) before BM25 and before embedding.
2. BM25 top-N and vector top-N (N = ``retrieval.candidates``, 30), each with the
   metadata filters applied *inside* the search (a mask before the top-N is chosen;
   a ``where`` clause for chromadb), so a filter never empties a result list that
   had matching chunks further down.
3. Reciprocal rank fusion by chunk: ``score = sum(1 / (k + rank))`` with k = 60
   (``retrieval.rrf_k``). In ``bm25`` / ``vector`` mode the score is the BM25 score /
   the cosine similarity instead.
4. The rerank hook (:class:`Reranker`; default pass-through) reorders the fused list.
5. Parent expansion: each hit carries its enclosing section (``parent_text``); a
   chunk whose parent is already in the results is dropped, so two children of one
   section are one hit.
6. ``low_evidence``: true when the best evidence is weak. Two signals, both 0..1:
   the cosine similarity of the best vector match, and the *coverage* of the best
   of the top three BM25 chunks (the share of the query's IDF mass it contains;
   query terms unknown to the whole index count with the highest IDF). With vectors
   the evidence is ``max(cosine, 0.6 * coverage)`` (coverage rescues exact error
   codes and identifiers that MiniLM embeds poorly) and the threshold is
   :data:`LOW_EVIDENCE_THRESHOLD`; BM25 alone uses ``coverage`` against
   :data:`LOW_EVIDENCE_COVERAGE`. Both were calibrated with ``python -m
   opsmate.knowledge.evaluate --calibrate``: the value that flags at most 5% of the
   116 answerable golden queries (whose deliberately word-disjoint paraphrases score
   as low as cosine 0.24), which flags about half of 28 out-of-scope ops questions
   (``tests/knowledge/out_of_scope.yaml``: MongoDB, Vault, VPN, ...). The flag is a
   hint to say "not found" rather than a guarantee. ``retrieval.low_evidence_threshold``
   overrides the vector threshold.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from opsmate.config import RetrievalConfig
from opsmate.errors import UsageError
from opsmate.knowledge.corpus import Corpus, normalize_filters
from opsmate.knowledge.embeddings import Embedder
from opsmate.knowledge.lexical import query_coverage, top_n
from opsmate.knowledge.types import SearchHit, SearchMode, SearchResponse

if TYPE_CHECKING:
    from opsmate.config import Settings

LOW_EVIDENCE_THRESHOLD = 0.34
LOW_EVIDENCE_COVERAGE = 0.10
LEXICAL_EVIDENCE_SCALE = 0.6
LEXICAL_COVERAGE_FLOOR = 0.15
LEXICAL_COVERAGE_FULL = 0.45
MODES = ("hybrid", "bm25", "vector")


@dataclass
class Candidate:
    """A chunk position in the fused list, with what each side said about it."""

    pos: int
    score: float
    bm25_rank: int | None = None
    bm25_score: float | None = None
    vector_rank: int | None = None
    vector_similarity: float | None = None


class Reranker(Protocol):
    """Reorders fused candidates (a cross-encoder, an LLM ...); may drop some."""

    def rerank(
        self, query: str, candidates: list[Candidate], corpus: Corpus
    ) -> list[Candidate]: ...


class PassThroughReranker:
    """The default: keeps the fused order."""

    def rerank(self, query: str, candidates: list[Candidate], corpus: Corpus) -> list[Candidate]:
        return candidates


def rrf_fuse(
    lists: list[list[tuple[int, float]]], k: int = 60, weights: list[float] | None = None
) -> list[tuple[int, float]]:
    """Reciprocal rank fusion of ranked (position, score) lists; best first, ties by position.

    ``score(d) = sum_i w_i / (k + rank_i(d))``; every weight is 1 unless given.
    """
    fused: dict[int, float] = {}
    for i, ranked in enumerate(lists):
        w = 1.0 if weights is None else weights[i]
        if w <= 0:
            continue
        for rank, (pos, _score) in enumerate(ranked, start=1):
            fused[pos] = fused.get(pos, 0.0) + w / (k + rank)
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


def lexical_weight(coverage: float) -> float:
    """Weight of the BM25 list in the fusion, from how much of the query it explains.

    0 below :data:`LEXICAL_COVERAGE_FLOOR`, 1 from :data:`LEXICAL_COVERAGE_FULL`, linear
    between. A best lexical match holding under ~15% of the query's IDF mass is word
    noise (paraphrases, symptom descriptions), and plain RRF would let it push the
    vector side's right answer down; keyword and error-code queries keep full weight.
    """
    span = LEXICAL_COVERAGE_FULL - LEXICAL_COVERAGE_FLOOR
    return float(min(1.0, max(0.0, (coverage - LEXICAL_COVERAGE_FLOOR) / span)))


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
    ) -> None:
        self._corpus = corpus
        self._embedder = embedder
        self._embedder_ready = not callable(embedder) or hasattr(embedder, "embed")
        self.config = config or RetrievalConfig()
        self.reranker: Reranker = reranker or PassThroughReranker()
        self.warnings = warnings if warnings is not None else []
        self.threshold = (
            self.config.low_evidence_threshold
            if self.config.low_evidence_threshold is not None
            else LOW_EVIDENCE_THRESHOLD
        )
        self._qcache: dict[str, np.ndarray] = {}

    @property
    def corpus(self) -> Corpus:
        return self._corpus() if callable(self._corpus) else self._corpus

    def embedder(self) -> Embedder | None:
        if not self._embedder_ready:
            factory = self._embedder
            self._embedder = factory() if callable(factory) else None
            self._embedder_ready = True
        return self._embedder  # type: ignore[return-value]

    def _embed_query(self, text: str) -> np.ndarray | None:
        if text in self._qcache:
            return self._qcache[text]
        emb = self.embedder()
        if emb is None:
            return None
        vec = emb.embed([text])[0]
        if len(self._qcache) > 256:
            self._qcache.clear()
        self._qcache[text] = vec
        return vec

    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        mode: SearchMode = "hybrid",
        filters: dict[str, Any] | None = None,
        include_deprecated: bool = False,
    ) -> SearchResponse:
        """Ranked chunks for ``query`` (see the module docstring for the steps)."""
        from opsmate.knowledge.analyzers import expand_query, tokenize

        if mode not in MODES:
            raise UsageError(f"unknown search mode '{mode}'", hint="use hybrid, bm25 or vector")
        corpus = self.corpus
        notes: list[str] = []
        flt = normalize_filters(filters)
        mask = corpus.mask(flt, include_deprecated)
        n = max(self.config.candidates, top_k)
        q = expand_query(query.strip())

        bm25: list[tuple[int, float]] = []
        terms: list[str] = []
        if mode in ("hybrid", "bm25"):
            terms = tokenize(q)
            bm25 = top_n(corpus.lexical.scores(terms), n, mask)

        vec: list[tuple[int, float]] = []
        use_vectors = mode in ("hybrid", "vector")
        if use_vectors and (corpus.model_id is None or corpus.vector_store() is None):
            if mode == "vector":
                raise UsageError(
                    "this index has no vectors (built with embedding backend none)",
                    hint="use --mode bm25, or re-index with --embedding onnx",
                )
            notes.append("no embedding vectors in this index: BM25 only")
            use_vectors = False
        if use_vectors:
            qv = self._embed_query(q)
            if qv is None:
                if mode == "vector":
                    raise UsageError("the embedding model of this index is not available")
                notes.append("embedding model unavailable: BM25 only")
            else:
                vec = corpus.vector_search(qv, n, flt, include_deprecated, mask)

        coverage = self._coverage(corpus, terms, bm25)
        if mode == "bm25" or not vec:
            fused = bm25
        elif mode == "vector" or not bm25:
            fused = vec
        else:
            weights = [lexical_weight(coverage), 1.0]
            fused = rrf_fuse([bm25, vec], self.config.rrf_k, weights)
        b_rank = {p: (i + 1, s) for i, (p, s) in enumerate(bm25)}
        v_rank = {p: (i + 1, s) for i, (p, s) in enumerate(vec)}
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
        cands = self.reranker.rerank(query, cands, corpus)

        chosen: list[Candidate] = []
        seen_parents: set[tuple[int, str]] = set()
        for c in cands:
            key = (int(corpus.doc_of[c.pos]), corpus.parent_ids[c.pos])
            if key in seen_parents:
                continue
            seen_parents.add(key)
            chosen.append(c)
            if len(chosen) >= top_k:
                break

        evidence, threshold = self._evidence(coverage, vec[0][1] if vec else None)
        return SearchResponse(
            query=query,
            hits=self._hits(corpus, chosen),
            low_evidence=evidence < threshold,
            mode=mode,
            warnings=list(dict.fromkeys([*self.warnings, *corpus.warnings, *notes])),
        )

    @staticmethod
    def _coverage(corpus: Corpus, terms: list[str], bm25: list[tuple[int, float]]) -> float:
        """Best share of the query's IDF mass held by one of the top 3 BM25 chunks (0..1)."""
        if not bm25:
            return 0.0
        return max(
            query_coverage(corpus.lexical, terms, corpus.store.terms(p)) for p, _ in bm25[:3]
        )

    def _evidence(self, coverage: float, cosine: float | None) -> tuple[float, float]:
        """(evidence, threshold): see ``low_evidence`` in the module docstring."""
        if cosine is None:
            return coverage, LOW_EVIDENCE_COVERAGE
        return max(cosine, LEXICAL_EVIDENCE_SCALE * coverage), self.threshold

    def signals(self, query: str) -> tuple[float, float | None]:
        """(BM25 coverage, best cosine or None) of an unfiltered query (for calibration)."""
        from opsmate.knowledge.analyzers import expand_query, tokenize

        corpus = self.corpus
        q = expand_query(query.strip())
        terms = tokenize(q)
        mask = corpus.mask({}, False)
        bm25 = top_n(corpus.lexical.scores(terms), self.config.candidates, mask)
        cosine = None
        if corpus.model_id is not None and corpus.vector_store() is not None:
            qv = self._embed_query(q)
            if qv is not None:
                vec = corpus.vector_search(qv, 1, {}, False, mask)
                cosine = vec[0][1] if vec else 0.0
        return self._coverage(corpus, terms, bm25), cosine

    def _hits(self, corpus: Corpus, chosen: list[Candidate]) -> list[SearchHit]:
        texts = corpus.store.texts([c.pos for c in chosen])
        hits: list[SearchHit] = []
        for c in chosen:
            t = texts.get(c.pos)
            if t is None:  # removed by a concurrent cleanup
                continue
            doc = corpus.docs[int(corpus.doc_of[c.pos])]
            hits.append(
                SearchHit(
                    rank=len(hits) + 1,
                    score=round(float(c.score), 6),
                    chunk_id=corpus.chunk_ids[c.pos],
                    source=doc.source,
                    heading_path=t.heading_path,
                    text=t.text,
                    parent_text=t.parent_text,
                    doc_version=doc.version,
                    metadata=doc.meta,
                    bm25_rank=c.bm25_rank,
                    vector_rank=c.vector_rank,
                    vector_similarity=(
                        round(c.vector_similarity, 6) if c.vector_similarity is not None else None
                    ),
                )
            )
        return hits


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
    warning.
    """
    from opsmate.config import Settings
    from opsmate.errors import KnowledgeIndexError, OpsmateError
    from opsmate.knowledge.embeddings import make_embedder
    from opsmate.knowledge.index import KnowledgeIndex

    settings = settings or Settings()
    folder = settings.resolved_index_dir(index_dir)
    index = KnowledgeIndex(folder)
    corpus = index.corpus()
    if corpus.visible_count == 0:
        raise KnowledgeIndexError(
            f"the runbook index in {folder} has no chunks",
            hint=f"run `opsmate index RUNBOOK_DIR --index-dir {folder}`",
        )
    spec = index.embedding_spec()
    notes: list[str] = []

    def embedder() -> Embedder | None:
        if spec is None:
            return None
        try:
            emb = make_embedder(spec, allow_download=False)
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
        index.corpus, embedder, config=settings.retrieval, reranker=reranker, warnings=notes
    )
