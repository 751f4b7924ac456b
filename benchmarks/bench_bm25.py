"""BM25 backends compared: bm25s vs rank-bm25 at 1k, 10k and 50k chunks.

Same tokens (``opsmate.knowledge.analyzers.tokenize``), same k1 = 1.5 / b = 0.75, same
Lucene IDF. Reports build time, query latency (the golden queries, full score vector
+ masked top 30, as retrieval uses it), and how often both return the same top 5.

    .venv/bin/python benchmarks/bench_bm25.py [--sizes 1000 10000 50000]

Writes ``benchmarks/results/bm25.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import chunk_texts, golden_queries

from opsmate.knowledge.analyzers import expand_query, tokenize
from opsmate.knowledge.lexical import build_lexical, top_n

RESULTS = Path(__file__).resolve().parent / "results"


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) * 1000


def bench(size: int, queries: list[list[str]], max_queries: dict[str, int]) -> dict[str, Any]:
    texts = chunk_texts(size)
    t0 = time.perf_counter()
    corpus = [tokenize(t) for t in texts]
    tokenize_s = time.perf_counter() - t0
    row: dict[str, Any] = {"chunks": size, "tokenize_s": round(tokenize_s, 2)}
    tops: dict[str, list[list[int]]] = {}
    for backend in ("bm25s", "rank_bm25"):
        t0 = time.perf_counter()
        index = build_lexical(corpus, backend)
        build_s = time.perf_counter() - t0
        mask = np.ones(size, dtype=bool)
        qs = queries[: max_queries[backend]]
        top_n(index.scores(qs[0]), 30, mask)  # warm
        lat, results = [], []
        for q in qs:
            t0 = time.perf_counter()
            hits = top_n(index.scores(q), 30, mask)
            lat.append(time.perf_counter() - t0)
            results.append([p for p, _ in hits[:5]])
        tops[backend] = results
        row[backend] = {
            "build_s": round(build_s, 3),
            "queries": len(qs),
            "p50_ms": round(_pct(lat, 50), 3),
            "p95_ms": round(_pct(lat, 95), 3),
        }
    n = min(len(tops["bm25s"]), len(tops["rank_bm25"]))
    same = [tops["bm25s"][i] == tops["rank_bm25"][i] for i in range(n)]
    overlap = [
        len(set(tops["bm25s"][i]) & set(tops["rank_bm25"][i])) / max(len(tops["bm25s"][i]), 1)
        for i in range(n)
    ]
    row["top5_identical"] = round(sum(same) / max(n, 1), 3)
    row["top5_overlap"] = round(statistics.mean(overlap) if overlap else 0.0, 3)
    b, r = row["bm25s"], row["rank_bm25"]
    row["speedup_p50"] = round(r["p50_ms"] / max(b["p50_ms"], 1e-9), 1)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    args = ap.parse_args()
    queries = [tokenize(expand_query(q)) for q in golden_queries()]
    rows = []
    for size in args.sizes:
        # rank-bm25 scores every document in Python per query: fewer queries at 50k
        limit = {"bm25s": len(queries), "rank_bm25": len(queries) if size <= 10000 else 30}
        rows.append(bench(size, queries, limit))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bm25.json").write_text(json.dumps(rows, indent=1))
    print(
        f"{'chunks':>7} | {'bm25s build':>11} {'p50 ms':>7} {'p95 ms':>7} | "
        f"{'rank-bm25 build':>15} {'p50 ms':>7} {'p95 ms':>7} | {'speedup':>7} {'same top5':>9}"
    )
    for row in rows:
        b, r = row["bm25s"], row["rank_bm25"]
        print(
            f"{row['chunks']:>7} | {b['build_s']:>10.2f}s {b['p50_ms']:>7.2f} "
            f"{b['p95_ms']:>7.2f} | {r['build_s']:>14.2f}s {r['p50_ms']:>7.2f} "
            f"{r['p95_ms']:>7.2f} | "
            f"{row['speedup_p50']:>6}x {row['top5_identical']:>9.0%}"
        )
    print(f"(results in {RESULTS / 'bm25.json'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
