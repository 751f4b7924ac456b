"""Retrieval quality on a golden set: Recall@5, MRR@10 and nDCG@10 per search mode.

Usage::

    python -m opsmate.knowledge.evaluate --golden tests/golden/retrieval.yaml --runbooks runbooks/
    python -m opsmate.knowledge.evaluate ... --calibrate \
        --negatives tests/knowledge/out_of_scope.yaml

The golden file is a YAML list of ``{id, query, relevant: [source, ...], lang, kind}``
(sources relative to the runbooks folder). The runbooks are indexed into a temporary
directory (or ``--index-dir``), each query is searched in ``bm25``, ``vector`` and
``hybrid`` mode, and relevance is judged per runbook (see :mod:`.metrics`).

``--calibrate`` prints the evidence value (see :mod:`.evidence`) of the golden
queries and of out-of-scope queries (``--negatives``), the share of each the current
threshold flags ``low_evidence``, and the threshold that would flag at most 4% of the
answerable queries.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from opsmate.config import EmbeddingConfig, Settings
from opsmate.knowledge.metrics import dedupe_sources, mean, mrr_at_k, ndcg_at_k, recall_at_k
from opsmate.knowledge.retrieve import MODES, HybridRetriever, open_retriever

DEPTH = 30  # hits asked per query; enough distinct runbooks for @10


def load_golden(path: Path) -> list[dict[str, Any]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    if not isinstance(data, list):
        raise SystemExit(f"{path}: expected a YAML list of queries")
    for i, item in enumerate(data):
        if not isinstance(item, dict) or "query" not in item or "relevant" not in item:
            raise SystemExit(f"{path}: entry {i + 1} needs query and relevant")
    return data


def build_index(runbooks: Path, index_dir: Path, embedding: str, settings: Settings) -> None:
    from opsmate.knowledge.index import KnowledgeIndex
    from opsmate.knowledge.sources import discover

    files, errors = discover([runbooks])
    emb = EmbeddingConfig(**{**settings.embedding.model_dump(), "backend": embedding})
    summary = KnowledgeIndex(index_dir).update(
        files,
        embedding=emb,
        lexical_backend=settings.retrieval.bm25_backend,
        vector_backend=settings.retrieval.vector_backend,
    )
    for err in errors + summary.errors:
        print(f"warning: {err['source']}: {err['message']}", file=sys.stderr)


def evaluate(
    retriever: HybridRetriever, golden: list[dict[str, Any]], modes: tuple[str, ...] = MODES
) -> dict[str, Any]:
    """Per mode: mean metrics, per-group (lang, kind) Recall@5, per-query ranks, timings."""
    report: dict[str, Any] = {}
    for mode in modes:
        rows = []
        t0 = time.perf_counter()
        for item in golden:
            resp = retriever.search(str(item["query"]), top_k=DEPTH, mode=mode)  # type: ignore[arg-type]
            ranked = dedupe_sources(h.source for h in resp.hits)
            rel = set(item["relevant"])
            rows.append(
                {
                    "id": item.get("id"),
                    "lang": item.get("lang", "?"),
                    "kind": item.get("kind", "?"),
                    "recall@5": recall_at_k(ranked, rel, 5),
                    "mrr@10": mrr_at_k(ranked, rel, 10),
                    "ndcg@10": ndcg_at_k(ranked, rel, 10),
                    "low_evidence": resp.low_evidence,
                    "top": ranked[:5],
                }
            )
        elapsed = time.perf_counter() - t0
        groups: dict[str, list[float]] = {}
        for r in rows:
            for g in (f"lang={r['lang']}", f"kind={r['kind']}"):
                groups.setdefault(g, []).append(r["recall@5"])
        report[mode] = {
            "queries": len(rows),
            "recall@5": mean(r["recall@5"] for r in rows),
            "mrr@10": mean(r["mrr@10"] for r in rows),
            "ndcg@10": mean(r["ndcg@10"] for r in rows),
            "low_evidence": mean(float(r["low_evidence"]) for r in rows),
            "ms_per_query": 1000 * elapsed / max(len(rows), 1),
            "groups": {g: mean(v) for g, v in sorted(groups.items())},
            "per_query": rows,
        }
    return report


def calibrate(
    retriever: HybridRetriever, golden: list[dict[str, Any]], negatives: list[str]
) -> dict[str, Any]:
    """Evidence of answerable vs out-of-scope queries under the rule of :mod:`.evidence`.

    For each scale (``vectors``: hybrid search; ``bm25``: BM25 alone) the evidence value
    of every query (after the unknown-product penalty), the share flagged by the current
    threshold, and the threshold that would flag at most 4% of the answerable queries
    (a margin under the 5% goal).
    """
    out: dict[str, Any] = {}
    has_vectors = retriever.corpus.model_id is not None
    for name, mode in (("vectors", "hybrid"), ("bm25", "bm25")):
        if name == "vectors" and not has_vectors:
            continue
        ev_pos = [_evidence(retriever, str(g["query"]), mode) for g in golden]
        ev_neg = [_evidence(retriever, q, mode) for q in negatives]
        pos = sorted(v for v, _ in ev_pos)
        neg = sorted(v for v, _ in ev_neg)
        thr = ev_pos[0][1] if ev_pos else 0.0
        suggested = pos[int(0.04 * len(pos))] if pos else 0.0
        out[name] = {
            "threshold": thr,
            "flagged_answerable": sum(p < thr for p in pos) / max(len(pos), 1),
            "flagged_out_of_scope": sum(n < thr for n in neg) / max(len(neg), 1),
            "suggested_threshold": round(suggested, 3),
            "answerable": [round(p, 3) for p in pos],
            "out_of_scope": [round(n, 3) for n in neg],
        }
    return out


def _evidence(retriever: HybridRetriever, query: str, mode: str) -> tuple[float, float]:
    resp = retriever.search(query, mode=mode, explain=True)  # type: ignore[arg-type]
    ev = (resp.explain or {}).get("evidence") or {}
    return float(ev.get("value", 0.0)), float(ev.get("threshold", 0.0))


def format_table(report: dict[str, Any]) -> str:
    lines = [
        f"{'mode':<8} {'Recall@5':>9} {'MRR@10':>8} {'nDCG@10':>8} {'queries':>8} {'ms/query':>9}",
    ]
    for mode, r in report.items():
        lines.append(
            f"{mode:<8} {r['recall@5']:>9.3f} {r['mrr@10']:>8.3f} {r['ndcg@10']:>8.3f} "
            f"{r['queries']:>8} {r['ms_per_query']:>9.1f}"
        )
    groups = sorted({g for r in report.values() for g in r["groups"]})
    if groups:
        lines.append("")
        lines.append(f"{'Recall@5 by group':<22}" + "".join(f"{m:>9}" for m in report))
        for g in groups:
            vals = "".join(f"{report[m]['groups'].get(g, 0.0):>9.3f}" for m in report)
            lines.append(f"{g:<22}{vals}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m opsmate.knowledge.evaluate", description=__doc__)
    ap.add_argument("--golden", type=Path, required=True)
    ap.add_argument("--runbooks", type=Path, required=True)
    ap.add_argument("--index-dir", type=Path, help="reuse/build the index here (default: temp)")
    ap.add_argument("--embedding", default="onnx", help="onnx | gguf | openai | none")
    ap.add_argument("--json", action="store_true", help="print the full report as JSON")
    ap.add_argument("--misses", action="store_true", help="list hybrid queries with Recall@5 < 1")
    ap.add_argument("--calibrate", action="store_true", help="calibrate the low_evidence threshold")
    ap.add_argument("--negatives", type=Path, help="YAML list of out-of-scope queries")
    args = ap.parse_args(argv)

    settings = Settings()
    golden = load_golden(args.golden)
    with tempfile.TemporaryDirectory(prefix="opsmate-eval-") as tmp:
        index_dir = args.index_dir or Path(tmp) / "index"
        build_index(args.runbooks, index_dir, args.embedding, settings)
        retriever = open_retriever(index_dir, settings)
        modes = MODES if args.embedding != "none" else ("bm25",)
        report = evaluate(retriever, golden, modes)
        cal = None
        if args.calibrate:
            negs = yaml.safe_load(args.negatives.read_text("utf-8")) if args.negatives else []
            cal = calibrate(retriever, golden, [str(q) for q in negs or []])
    if args.json:
        print(json.dumps({"modes": report, "calibration": cal}, ensure_ascii=False, indent=1))
        return 0
    print(format_table(report))
    if args.misses and "hybrid" in report:
        print("\nhybrid misses (Recall@5 < 1):")
        for r in report["hybrid"]["per_query"]:
            if r["recall@5"] < 1:
                print(
                    f"  {r['id']} [{r['kind']}/{r['lang']}] recall={r['recall@5']:.2f} {r['top']}"
                )
    for name, c in (cal or {}).items():
        print(
            f"\nlow_evidence ({name}): threshold {c['threshold']} flags "
            f"{c['flagged_answerable']:.1%} of answerable and "
            f"{c['flagged_out_of_scope']:.0%} of out-of-scope queries "
            f"(threshold flagging at most 4% of answerable: {c['suggested_threshold']})"
        )
        print("  answerable, lowest :", " ".join(f"{v:.2f}" for v in c["answerable"][:12]))
        print("  out-of-scope       :", " ".join(f"{v:.2f}" for v in c["out_of_scope"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
