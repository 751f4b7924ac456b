"""Embedding throughput of indexing, next to plain ONNX loops over the same chunk texts.

The texts are what indexing embeds (``store.embed_text``: heading path + chunk,
Chinese translated) for chunks of synthetic runbook variants grown from
``runbooks/``. Rows:

1. chromadb's ``ONNXMiniLM_L6_V2`` as shipped (every input padded to 256 tokens);
2. a plain ONNX loop: batches of 32 in input order, padded to each batch's longest;
3. :class:`~opsmate.knowledge.embeddings.OnnxEmbedder` (dynamic padding, batches of
   similar length under a token budget, 2 intra-op threads);
4. the same with the per-channel int8 model (:mod:`opsmate.knowledge.quantize`; needs
   the ``onnx`` package to write it);
5. a full ``KnowledgeIndex.update`` with an empty embedding cache (parse, tokenize,
   embed, build BM25 / BM25F, publish) with the default model (its int8 copy) and with
   float32 selected by ``embedding.model_path``, side by side with chromadb's function
   over exactly the texts that pipeline embeds (the goal: the default pipeline at least
   4x chromadb's function), and with the code of an earlier commit (``--before REF``,
   default :data:`before.BEFORE_REF`; ``before.py``; float32 there).

Each row prints wall-clock chunks/s, CPU ms per chunk, and ``2 cores`` = 2000 / CPU ms:
the rate on two otherwise idle cores. On a shared machine the wall rate is what other
processes leave; the CPU figure is what the work costs.

    .venv/bin/python benchmarks/bench_index_throughput.py [--chunks 600] [--quick] [--variants 2]

Writes ``benchmarks/results/index_throughput.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from before import BEFORE_REF, WORKER_FLAG, run_worker, source_tree
from synthetic import base_runbooks, variant, vocabulary, write_corpus

RESULTS = Path(__file__).resolve().parent / "results"
SCRIPT = Path(__file__).resolve()
CHROMA_SAME = "chromadb ONNXMiniLM_L6_V2, the pipeline's texts"
PIPELINE = "opsmate index default (int8 copy; full pipeline)"
PIPELINE_FP32 = "opsmate index float32 (model_path; full pipeline)"
BEFORE_ROW = "opsmate index float32, before"


def corpus_embed_texts(root: Path) -> list[str]:
    """Exactly what indexing ``root`` embeds: every chunk's ``embed_text``, file order."""
    from opsmate.knowledge.markdown import load_runbook
    from opsmate.knowledge.store import embed_text

    return [
        embed_text(c.heading_path, c.text)
        for p in sorted(root.rglob("*.md"))
        for c in load_runbook(p, root).chunks
    ]


def chunk_embed_texts(n: int) -> list[str]:
    from opsmate.knowledge.markdown import parse_runbook
    from opsmate.knowledge.store import embed_text

    base = base_runbooks()
    vocab = vocabulary([t for _, t in base])
    out: list[str] = []
    k = 1
    while len(out) < n:
        for rel, text in base:
            doc = parse_runbook(variant(text, k, vocab), f"v{k}/{rel}")
            out.extend(embed_text(c.heading_path, c.text) for c in doc.chunks)
        k += 1
    return out[:n]


def _timed(fn: Callable[[], Any], n: int) -> dict[str, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {
        "chunks": n,
        "wall_s": round(wall, 2),
        "chunks_per_s": round(n / wall, 1),
        "cpu_ms_per_chunk": round(1000 * cpu / n, 1),
        "two_idle_cores_chunks_per_s": round(2000 / max(1000 * cpu / n, 1e-9), 1),
    }


def plain_loop(folder: Path, texts: list[str], batch: int = 32) -> np.ndarray:
    """Batches of ``batch`` in input order, each padded to its longest (no sorting)."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.enable_truncation(max_length=256)
    tok.enable_padding()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(str(folder / "model.onnx"), so, providers=["CPUExecutionProvider"])
    out = []
    for i in range(0, len(texts), batch):
        enc = tok.encode_batch(texts[i : i + batch])
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        h = sess.run(None, {"input_ids": ids, "attention_mask": mask,
                            "token_type_ids": np.zeros_like(ids)})[0]  # fmt: skip
        m = mask[:, :, None].astype(np.float32)
        v = (h * m).sum(1) / m.sum(1)
        out.append(v / np.linalg.norm(v, axis=1, keepdims=True))
    return np.concatenate(out)


def index_run(root: Path, work: Path, model_path: str | None, tag: str = "") -> dict[str, Any]:
    from opsmate.config import EmbeddingConfig
    from opsmate.knowledge.index import KnowledgeIndex
    from opsmate.knowledge.sources import discover

    os.environ["OPSMATE_CACHE_DIR"] = str(work / f"cache-{model_path is not None}{tag}")
    files, _ = discover([root])
    holder: dict[str, Any] = {}

    def run() -> None:
        holder["s"] = KnowledgeIndex(work / f"idx-{model_path is not None}{tag}").update(
            files, embedding=EmbeddingConfig(model_path=model_path)
        )

    res = _timed(run, 1)
    s = holder["s"]
    n = max(s.embedded, 1)
    res.update(
        chunks=s.embedded,
        chunks_per_s=round(n / res["wall_s"], 1),
        cpu_ms_per_chunk=round(res["cpu_ms_per_chunk"] / n, 1),
        two_idle_cores_chunks_per_s=round(2000 / max(res["cpu_ms_per_chunk"] / n, 1e-9), 1),
        index_seconds=s.seconds,
    )
    return res


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == WORKER_FLAG:  # the before column's process
        a = json.loads(sys.argv[3])
        print(json.dumps(index_run(Path(a["root"]), Path(a["work"]), None, a["tag"])))
        return 0
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--chunks", type=int, default=600)
    ap.add_argument("--quick", action="store_true", help="256 chunks, no full index runs")
    ap.add_argument("--variants", type=int, default=2, help="runbook variants indexed in full")
    ap.add_argument("--before", default=BEFORE_REF, help="commit for the before column, or none")
    args = ap.parse_args()
    n = 256 if args.quick else args.chunks
    from opsmate.knowledge.embeddings import OnnxEmbedder, chroma_onnx_dir

    fp32 = chroma_onnx_dir()
    texts = chunk_embed_texts(n)
    emb = OnnxEmbedder(fp32)
    lens = [len(e.ids) for e in emb._tok.encode_batch(texts)]
    results: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "loadavg_start": os.getloadavg(),
        "texts": n,
        "word_pieces_mean": round(float(np.mean(lens)), 1),
        "word_pieces_p90": float(np.percentile(lens, 90)),
        "rows": {},
    }
    rows = results["rows"]
    with tempfile.TemporaryDirectory(prefix="opsmate-tput-") as tmp:
        work = Path(tmp)
        sub = texts[: max(32, n // 8)]
        from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

        chroma = ONNXMiniLM_L6_V2()
        chroma(sub[:2])
        rows["chromadb ONNXMiniLM_L6_V2 (pad to 256)"] = _timed(lambda: chroma(sub), len(sub))
        plain_loop(fp32, texts[:8])
        rows["plain ONNX loop (batch 32, input order)"] = _timed(lambda: plain_loop(fp32, texts), n)
        emb.embed(texts[:4])
        rows["OnnxEmbedder float32 (length buckets)"] = _timed(lambda: emb.embed(texts), n)
        int8_dir: Path | None = work / "minilm-int8"
        try:
            from opsmate.knowledge.quantize import quantize_minilm

            quantize_minilm(int8_dir)  # type: ignore[arg-type]
        except Exception as exc:  # onnx missing: report and go on
            print(f"(int8 rows skipped: {exc})")
            int8_dir = None
        if int8_dir is not None:
            e8 = OnnxEmbedder(int8_dir)
            e8.embed(texts[:4])
            rows["OnnxEmbedder int8 per-channel"] = _timed(lambda: e8.embed(texts), n)
            v32, v8 = emb.embed(texts[:64]), e8.embed(texts[:64])
            results["int8_cosine_to_float32_min"] = round(float((v32 * v8).sum(1).min()), 4)
        if not args.quick:
            root = work / "rb"
            write_corpus(root, args.variants)
            same = corpus_embed_texts(root)
            results["pipeline_texts"] = len(same)
            chroma(same[:2])
            rows[CHROMA_SAME] = _timed(lambda: chroma(same), len(same))
            from opsmate.knowledge.embeddings import default_onnx_dir

            results["default_model_dir"] = str(default_onnx_dir(quantize=True))  # written once
            rows[PIPELINE] = index_run(root, work, None)
            rows[PIPELINE_FP32] = index_run(root, work, str(fp32), "-fp32")
            src = source_tree(args.before)
            if src is not None:
                results["before_ref"] = args.before
                rows[f"{BEFORE_ROW} ({args.before})"] = run_worker(
                    SCRIPT, src, "index", {"root": str(root), "work": str(work), "tag": "-b"}
                )
    results["loadavg_end"] = os.getloadavg()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "index_throughput.json").write_text(json.dumps(results, indent=1))
    print(f"{n} chunk texts, {results['word_pieces_mean']} word pieces on average "
          f"(p90 {results['word_pieces_p90']:.0f}); load {results['loadavg_start']}")  # fmt: skip
    print(f"{'':52}{'chunks/s':>10}{'CPU ms/chunk':>14}{'2 idle cores':>14}")
    for label, r in rows.items():
        print(f"{label:<52}{r['chunks_per_s']:>10.1f}{r['cpu_ms_per_chunk']:>14.1f}"
              f"{r['two_idle_cores_chunks_per_s']:>14.1f}")  # fmt: skip
    if PIPELINE in rows and CHROMA_SAME in rows:
        p, c = rows[PIPELINE], rows[CHROMA_SAME]
        print(
            f"full pipeline vs chromadb's function on the same {results['pipeline_texts']} "
            f"texts: {p['chunks_per_s'] / c['chunks_per_s']:.2f}x chunks/s, "
            f"{c['cpu_ms_per_chunk'] / p['cpu_ms_per_chunk']:.2f}x less CPU per chunk "
            "(goal >= 4x)"
        )
        f = rows.get(PIPELINE_FP32)
        if f:
            print(
                f"float32 pipeline (model_path): {f['chunks_per_s'] / c['chunks_per_s']:.2f}x "
                f"chunks/s, {c['cpu_ms_per_chunk'] / f['cpu_ms_per_chunk']:.2f}x less CPU"
            )
        b = next((v for k, v in rows.items() if k.startswith(BEFORE_ROW)), None)
        if b:
            print(
                f"before ({results['before_ref']}): {b['chunks_per_s'] / c['chunks_per_s']:.2f}x "
                f"chunks/s, {c['cpu_ms_per_chunk'] / b['cpu_ms_per_chunk']:.2f}x less CPU; "
                f"after / before: {p['chunks_per_s'] / b['chunks_per_s']:.2f}x chunks/s"
            )
    if "int8_cosine_to_float32_min" in results:
        print(
            f"int8 vs float32: lowest cosine over 64 chunks {results['int8_cosine_to_float32_min']}"
        )
    print(f"(results in {RESULTS / 'index_throughput.json'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
