"""Ranking metrics for the retrieval evaluation (binary, document-level relevance).

A ranked list of hits is first reduced to its runbook sources, duplicates removed in
rank order (two chunks of one runbook count once, at the better rank); a source is
relevant when it is in the query's ``relevant`` list.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def dedupe_sources(sources: Iterable[str]) -> list[str]:
    """Sources in rank order, each kept at its first (best) position."""
    return list(dict.fromkeys(sources))


def recall_at_k(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    """Share of the relevant sources found in the top ``k``."""
    if not relevant:
        return 0.0
    return len(set(ranked[:k]) & relevant) / len(relevant)


def mrr_at_k(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    """1 / rank of the first relevant source in the top ``k`` (0 when none)."""
    for i, src in enumerate(ranked[:k], start=1):
        if src in relevant:
            return 1.0 / i
    return 0.0


def ndcg_at_k(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    """Normalised discounted cumulative gain with binary gains."""
    dcg = sum(1.0 / math.log2(i + 1) for i, s in enumerate(ranked[:k], start=1) if s in relevant)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(relevant), k) + 1))
    return dcg / ideal if ideal else 0.0


def mean(values: Iterable[float]) -> float:
    vals = list(values)
    return sum(vals) / len(vals) if vals else 0.0
