"""The rerank stage without a model: fused candidates re-scored from ranking features.

The fused list (BM25 + vectors, RRF) knows ranks, not *why* a chunk matched. Over its
top :data:`DEPTH` candidates this stage computes, per chunk:

==============  =====================================================================
``fused``       the RRF score, relative to the best candidate (0..1)
``cosine``      query-chunk cosine (0 when the chunk was not among the vector hits and
                the vector store cannot say)
``parent_cos``  mean cosine of the chunks of the chunk's parent section
``doc_cos``     best cosine of any chunk of the same runbook: evidence spread over a
                runbook counts, not only the one chunk
``coverage``    share of the query's IDF mass (glossary aliases at their weight) that
                the chunk contains
``heading``     the same share measured on the heading path and runbook title
``meta``        the same share on the runbook's alerts, tags, title and service, 1 when
                the question names one of the runbook's alerts exactly
``hints``       +1 per service the question names that is the runbook's, +1 when the
                runbook is for the environment the question names and -1 when it is for
                others only, +1 for the version asked for; a deprecated runbook gets -1
                unless an old version was asked for
``signature``   share of the pasted error's exception type and codes found in the chunk
==============  =====================================================================

and orders by ``sum(weight * feature)`` with :data:`WEIGHTS`, chosen on the golden set
(``benchmarks/bench_retrieval_stages.py`` prints each feature's contribution). Every
feature is 0..1 except ``hints`` (-2..3), so the weights read as importances. The
features travel with each hit into ``search --explain``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from opsmate.knowledge.lexical import lucene_idf

if TYPE_CHECKING:
    from opsmate.knowledge.corpus import Corpus
    from opsmate.knowledge.query import QueryPlan

DEPTH = 30  # fused candidates re-scored
WEIGHTS: dict[str, float] = {
    "fused": 1.0,
    "cosine": 0.6,
    "parent_cos": 0.3,
    "doc_cos": 0.8,
    "coverage": 0.3,
    "heading": 0.3,
    "meta": 0.3,
    "hints": 0.1,
    "signature": 0.3,
}


@dataclass
class Candidate:
    """A chunk position in the ranked list, with what each stage said about it."""

    pos: int
    score: float
    bm25_rank: int | None = None
    bm25_score: float | None = None
    vector_rank: int | None = None
    vector_similarity: float | None = None
    fused_rank: int | None = None
    features: dict[str, float] = field(default_factory=dict)
    model_rank: int | None = None
    model_bonus: float | None = None


def _doc_terms(corpus: Corpus, d: int) -> tuple[set[str], set[str], set[str]]:
    """(title terms, meta terms, lowercased alert names) of document ``d``, memoised."""
    memo: dict[int, tuple[set[str], set[str], set[str]]] = corpus.cache.setdefault("doc_terms", {})
    if d not in memo:
        from opsmate.knowledge.analyzers import tokenize
        from opsmate.knowledge.signature import split_identifier

        meta = corpus.docs[d].meta
        alerts = [str(a) for a in meta.get("alerts") or []]
        title = tokenize(str(meta.get("title") or corpus.docs[d].title or ""))
        tags = [str(t) for t in meta.get("tags") or []]
        words = [
            *alerts,
            *(split_identifier(a) for a in alerts),
            *tags,
            str(meta.get("service") or ""),
        ]
        text = " ".join(words)
        memo[d] = (set(title), set(title) | set(tokenize(text)), {a.lower() for a in alerts})
    return memo[d]


def _heading_terms(corpus: Corpus, pos: int, heading_path: list[str], d: int) -> frozenset[str]:
    """Terms of a chunk's heading path and its runbook's title, memoised per position."""
    memo: dict[int, frozenset[str]] = corpus.cache.setdefault("heading_terms", {})
    if pos not in memo:
        from opsmate.knowledge.analyzers import tokenize

        memo[pos] = frozenset(tokenize(" ".join(heading_path))) | _doc_terms(corpus, d)[0]
    return memo[pos]


def hint_score(plan: QueryPlan, doc_meta: dict[str, Any], source: str) -> float:
    """Environment, service and version hints of the question against one runbook."""
    score = 0.0
    service = str(doc_meta.get("service") or "").lower()
    folder = source.split("/", 1)[0].lower() if "/" in source else ""
    wanted = {s.lower() for s in plan.services}
    if wanted and (service in wanted or folder in wanted):
        score += 1.0
    envs = doc_meta.get("environment") or []
    envs = {str(e).lower() for e in ([envs] if isinstance(envs, str) else envs)}
    if plan.environment and envs:
        score += 1.0 if plan.environment in envs else -1.0
    version = str(doc_meta.get("version") or "")
    if plan.version and version and version == plan.version:
        score += 1.0
    if str(doc_meta.get("status") or "active").lower() == "deprecated":
        score += 1.0 if plan.wants_old else -1.0
    return score


class FeatureReranker:
    """Re-scores the top of a fused list from features (see the module docstring)."""

    def __init__(self, weights: dict[str, float] | None = None, depth: int = DEPTH) -> None:
        self.weights = dict(WEIGHTS if weights is None else weights)
        self.depth = depth

    def features(
        self,
        plan: QueryPlan,
        cands: list[Candidate],
        corpus: Corpus,
        sims: np.ndarray | None,
    ) -> None:
        """Fill ``c.features`` for every candidate (in place).

        Term shares come from the lexical index's postings (:meth:`Corpus.term_presence`),
        the parent and runbook cosines from one grouped reduction over ``sims``; only the
        heading paths of chunks not seen before in this snapshot are read from the store.
        """
        if not cands:
            return
        lex = corpus.fields if corpus.fields is not None else corpus.lexical
        n = max(corpus.lexical.n_docs, 1)
        mass = [(t, w * lucene_idf(n, lex.doc_freq(t))) for t, w in plan.lexical if t]
        total = sum(m for _, m in mass) or 1.0
        weights = np.array([m for _, m in mass], dtype=np.float64)

        def share(terms: set[str] | frozenset[str]) -> float:
            return sum(m for t, m in mass if t in terms) / total

        sig_terms = _signature_terms(plan)
        idents = {t.lower() for t, _ in plan.lexical}
        idents |= {e.source.lower() for e in plan.expansions if e.kind == "split"}
        top = max(c.score for c in cands) or 1.0
        positions = np.fromiter((c.pos for c in cands), dtype=np.int64, count=len(cands))
        terms = list(dict.fromkeys([t for t, _ in mass] + sig_terms))
        row = {t: i for i, t in enumerate(terms)}
        present = corpus.term_presence(terms, positions)
        coverage = (
            weights @ present[[row[t] for t, _ in mass]] / total if mass else np.zeros(len(cands))
        )
        signature = (
            present[[row[t] for t in sig_terms]].mean(axis=0) if sig_terms else np.zeros(len(cands))
        )
        heading_memo: dict[int, frozenset[str]] = corpus.cache.setdefault("heading_terms", {})
        missing = [c.pos for c in cands if c.pos not in heading_memo]
        heads = corpus.store.heading_paths(missing) if missing else {}
        doc_max = parent_mean = None
        if sims is not None:
            doc_max = corpus.group_reduce(sims, "doc", "max")
            parent_mean = corpus.group_reduce(sims, "parent", "mean")
        per_doc: dict[int, tuple[float, float]] = {}  # meta, hints
        for i, c in enumerate(cands):
            d = int(corpus.doc_of[c.pos])
            if d not in per_doc:
                _title, meta_terms, alerts = _doc_terms(corpus, d)
                doc = corpus.docs[d]
                per_doc[d] = (
                    1.0 if alerts & idents else share(meta_terms),
                    hint_score(plan, doc.meta, doc.source),
                )
            meta_share, hints = per_doc[d]
            f = c.features
            f["fused"] = float(c.score) / top
            cos = c.vector_similarity
            if sims is not None and doc_max is not None and parent_mean is not None:
                cos = float(sims[c.pos])
                f["parent_cos"] = max(0.0, float(parent_mean[c.pos]))
                f["doc_cos"] = max(0.0, float(doc_max[c.pos]))
            else:
                f["parent_cos"] = f["doc_cos"] = max(0.0, cos or 0.0)
            f["cosine"] = max(0.0, cos or 0.0)
            f["coverage"] = float(coverage[i])
            f["heading"] = share(_heading_terms(corpus, c.pos, heads.get(c.pos, []), d))
            f["meta"] = meta_share
            f["hints"] = hints
            f["signature"] = float(signature[i])

    def score(self, c: Candidate) -> float:
        return sum(self.weights.get(k, 0.0) * v for k, v in c.features.items())

    def rerank(
        self, plan: QueryPlan, cands: list[Candidate], corpus: Corpus, sims: np.ndarray | None
    ) -> list[Candidate]:
        """The top ``depth`` candidates re-scored and re-ordered, the rest after them."""
        head, tail = cands[: self.depth], cands[self.depth :]
        for i, c in enumerate(cands, start=1):
            c.fused_rank = i
        self.features(plan, head, corpus, sims)
        for c in head:
            c.score = self.score(c)
        head.sort(key=lambda c: (-c.score, c.fused_rank or 0))
        floor = min((c.score for c in head), default=0.0)
        for i, c in enumerate(tail):  # keep them below, in fused order
            c.score = floor - 1e-6 * (i + 1)
        return head + tail


def _signature_terms(plan: QueryPlan) -> list[str]:
    from opsmate.knowledge.analyzers import tokenize

    sig = plan.signature
    if sig is None:
        return []
    out = tokenize(sig.exception)[:1] if sig.exception else []
    for code in sig.codes:  # "SQLSTATE 55P03" -> 55p03, "exit code 137" -> 137
        out.extend(tokenize(code)[-1:])
    return list(dict.fromkeys(out))


def explain_hit(c: Candidate, weights: dict[str, float]) -> dict[str, Any]:
    """Why a candidate ranked where it did (the ``explain`` object of a hit)."""
    out: dict[str, Any] = {
        "fused_rank": c.fused_rank,
        "bm25_rank": c.bm25_rank,
        "vector_rank": c.vector_rank,
        "final_score": round(float(c.score), 6),
    }
    if c.features:
        out["features"] = {k: round(v, 4) for k, v in c.features.items()}
        out["contributions"] = {k: round(weights.get(k, 0.0) * v, 4) for k, v in c.features.items()}
    if c.model_rank is not None:
        out["model_rank"] = c.model_rank
    if c.model_bonus is not None:
        out["model_bonus"] = round(c.model_bonus, 4)
    return out
