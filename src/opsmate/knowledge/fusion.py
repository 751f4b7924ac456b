"""Reciprocal rank fusion: the one way ranked lists are combined, on every backend."""

from __future__ import annotations


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
