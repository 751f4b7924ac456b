"""``low_evidence``: whether the best runbook match is too weak to answer the question.

Two signals, both 0..1, from the search itself:

- ``cosine``: the best query-chunk cosine (the query vector is the understood question,
  :mod:`.query`);
- ``coverage``: the share of the question's own IDF mass held by the best of the top three
  BM25 chunks (query terms unknown to the whole index count with the highest IDF). It
  rescues exact error codes and identifiers, which MiniLM embeds poorly.

With vectors the evidence is ``max(cosine, 0.6 * coverage)``; BM25 alone uses
``coverage``. A question about a product that no runbook is about (:mod:`.glossary`
kind ``product``: "MongoDB", "RabbitMQ", "Jenkins" - not named in any runbook's title,
tags, service, alerts or folder, nor in several chunks) loses
:data:`UNKNOWN_PRODUCT_PENALTY` (BM25 alone: it is low evidence outright): the
runbooks may share its symptoms' words, but not its subject.

The thresholds were calibrated with ``python -m opsmate.knowledge.evaluate --calibrate``
on the 216 answerable golden queries against 100 out-of-scope questions
(``tests/knowledge/out_of_scope.yaml``: other products, other layers, office questions,
in English and Chinese), each in the middle of the range where the rates do not move:
with vectors 2.3% of answerable and 96% of out-of-scope questions are flagged (any
threshold from 0.36 to 0.40 gives the same); BM25 alone 2.8% and 83%. The flag is a
hint to say "not found" rather than a guarantee. ``retrieval.low_evidence_threshold``
overrides the vector threshold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opsmate.config import RetrievalConfig
    from opsmate.knowledge.query import QueryPlan
    from opsmate.knowledge.rerank import Candidate

LOW_EVIDENCE_THRESHOLD = 0.38  # with vectors
LOW_EVIDENCE_COVERAGE = 0.08  # BM25 alone
LEXICAL_EVIDENCE_SCALE = 0.6
UNKNOWN_PRODUCT_PENALTY = 0.2


@dataclass
class Evidence:
    """The evidence value, its threshold and what decided the flag (for ``--explain``)."""

    value: float
    threshold: float
    low: bool
    reasons: list[str] = field(default_factory=list)
    signals: dict[str, float | None] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "value": round(self.value, 4),
            "threshold": self.threshold,
            "low": self.low,
            "reasons": self.reasons,
            "signals": {k: (None if v is None else round(v, 4)) for k, v in self.signals.items()},
        }


def judge(
    plan: QueryPlan,
    coverage: float,
    cosine: float | None,
    cands: list[Candidate],
    config: RetrievalConfig,
) -> Evidence:
    """The :class:`Evidence` of one search (see the module docstring)."""
    signals: dict[str, float | None] = {"coverage": coverage, "cosine": cosine}
    if cands and cands[0].features:
        signals["top_rerank_score"] = float(cands[0].score)
    reasons: list[str] = []
    if cosine is None:
        value, thr = coverage, LOW_EVIDENCE_COVERAGE
        if plan.unknown_products:
            value = 0.0
    else:
        value = max(cosine, LEXICAL_EVIDENCE_SCALE * coverage)
        thr = (
            config.low_evidence_threshold
            if config.low_evidence_threshold is not None
            else LOW_EVIDENCE_THRESHOLD
        )
        if plan.unknown_products:
            value -= UNKNOWN_PRODUCT_PENALTY
    if plan.unknown_products:
        reasons.append(f"no runbook is about {', '.join(plan.unknown_products)}")
    if value < thr:
        reasons.append(f"best match weak ({value:.2f} < {thr:.2f})")
    return Evidence(value, thr, value < thr, reasons, signals)
