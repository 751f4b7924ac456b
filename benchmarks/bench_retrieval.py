"""End-to-end index and search costs on synthetic corpora grown from ``runbooks/``.

Measures, on this machine:

1. indexing ~1k chunks including embeddings (real MiniLM, empty embedding cache),
   through the console script;
2. re-indexing after editing one runbook (console script wall time, chunks touched);
3. at 10k chunks: hybrid / bm25 / vector query latency, warm, with the query
   embedding included (every query embedded afresh), for the numpy and the chromadb
   vector backends, plus the re-index-one-runbook cost at that size. The 10k chunk
   vectors are the real vectors of the base runbooks' chunks plus noise, put in the
   embedding cache beforehand (embedding 10k chunks for real takes minutes and does not
   change search latency); the query embeddings are real;
4. the in-memory bundle retriever (``retriever_for_dir``) on the demo bundle.

    .venv/bin/python benchmarks/bench_retrieval.py [--skip-1k] [--skip-10k]

Writes ``benchmarks/results/retrieval.json`` and prints a table. Needs the MiniLM ONNX
files in ``~/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx/``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import REPO, golden_queries, write_corpus

RESULTS = Path(__file__).resolve().parent / "results"
OPSMATE = Path(sys.executable).parent / "opsmate"
CHUNKS_PER_VARIANT = 180  # about: the 25 base runbooks give ~180 chunks


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _cli(args: list[str], env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    """Run the console script; returns (wall seconds, stdout JSON + ``_cpu_s``)."""
    t0, c0 = time.perf_counter(), _children_cpu()
    proc = subprocess.run(
        [str(OPSMATE), *args], capture_output=True, text=True, env={**os.environ, **env}
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"opsmate {' '.join(args)} failed:\n{proc.stderr}")
    out = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {}
    out["_cpu_s"] = round(_children_cpu() - c0, 2)
    return wall, out


def _edit_one(root: Path) -> Path:
    target = sorted(root.rglob("db-connection-pool.md"))[0]
    target.write_text(target.read_text("utf-8") + "\n\nEdited: check PgBouncer first.\n", "utf-8")
    return target


def bench_index_1k(work: Path, env: dict[str, str]) -> dict[str, Any]:
    root = work / "rb1k"
    files = write_corpus(root, max(1, round(1000 / CHUNKS_PER_VARIANT)))
    idx = work / "idx1k"
    wall, s = _cli(["index", str(root), "--index-dir", str(idx), "--json"], env)
    _edit_one(root)
    wall2, s2 = _cli(["index", str(root), "--index-dir", str(idx), "--json"], env)
    return {
        "files": files,
        "chunks": s["chunks"],
        "index_wall_s": round(wall, 2),
        "index_cpu_s": s["_cpu_s"],
        "index_seconds": s["seconds"],
        "embedded": s["embedded"],
        "chunks_per_s": round(s["embedded"] / max(s["seconds"], 1e-9), 1),
        "reindex_one_wall_s": round(wall2, 2),
        "reindex_one_cpu_s": s2["_cpu_s"],
        "reindex_one_seconds": s2["seconds"],
        "reindex_one_chunks_touched": s2["chunks_touched"],
        "reindex_one_updated": s2["updated"],
    }


def _prefill_cache(root: Path) -> int:
    """Put noisy copies of real base-chunk vectors in the cache for every chunk text."""
    from opsmate.config import EmbeddingConfig
    from opsmate.knowledge.embedding_cache import EmbeddingCache, content_hash
    from opsmate.knowledge.embeddings import make_embedder
    from opsmate.knowledge.markdown import load_runbook
    from opsmate.knowledge.store import embed_text

    emb = make_embedder(EmbeddingConfig())
    assert emb is not None
    texts = [
        embed_text(c.heading_path, c.text)
        for p in sorted(root.rglob("*.md"))
        for c in load_runbook(p, root).chunks
    ]
    base = emb.embed(texts[:CHUNKS_PER_VARIANT])
    rng = np.random.default_rng(0)
    vecs = base[np.arange(len(texts)) % len(base)] + rng.normal(0, 0.02, (len(texts), emb.dim))
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    cache = EmbeddingCache()
    cache.put_many(emb.model_id, ((content_hash(t), v) for t, v in zip(texts, vecs, strict=True)))
    cache.close()
    return len(texts)


def _latency(index_dir: Path, queries: list[str]) -> dict[str, Any]:
    from opsmate.knowledge.retrieve import open_retriever

    t0 = time.perf_counter()
    r = open_retriever(index_dir)
    r.search("warm up the model and the index")
    load_s = time.perf_counter() - t0
    out: dict[str, Any] = {"open_and_first_query_s": round(load_s, 2)}
    for mode in ("hybrid", "bm25", "vector"):
        lat, cpu = [], []
        for q in queries:
            r._qcache.clear()  # every query pays its embedding
            t0, c0 = time.perf_counter(), time.process_time()
            r.search(q, mode=mode)
            lat.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        out[mode] = {
            "p50_ms": round(float(np.percentile(lat, 50)) * 1000, 2),
            "p95_ms": round(float(np.percentile(lat, 95)) * 1000, 2),
            "cpu_p50_ms": round(float(np.percentile(cpu, 50)) * 1000, 2),
        }
    return out


def bench_10k(work: Path, env: dict[str, str]) -> dict[str, Any]:
    from opsmate.config import EmbeddingConfig
    from opsmate.knowledge.index import KnowledgeIndex
    from opsmate.knowledge.sources import discover

    root = work / "rb10k"
    write_corpus(root, round(10000 / CHUNKS_PER_VARIANT))
    t0 = time.perf_counter()
    n = _prefill_cache(root)
    prefill_s = time.perf_counter() - t0
    queries = golden_queries()
    res: dict[str, Any] = {"chunks": n, "prefill_cache_s": round(prefill_s, 1)}
    for backend in ("numpy", "chroma"):
        idx = work / f"idx10k-{backend}"
        files, _ = discover([root])
        t0 = time.perf_counter()
        summary = KnowledgeIndex(idx).update(
            files, embedding=EmbeddingConfig(), vector_backend=backend
        )
        res[backend] = {
            "index_cached_vectors_s": round(time.perf_counter() - t0, 1),
            "embedded": summary.embedded,
            **_latency(idx, queries),
        }
    idx = work / "idx10k-numpy"
    wall, s = _cli(["search", "PoolTimeout", "--index-dir", str(idx), "--json"], env)
    res["cli_search_wall_s"] = round(wall, 2)
    res["cli_search_cpu_s"] = s["_cpu_s"]
    _edit_one(root)
    wall, s = _cli(["index", str(root), "--index-dir", str(idx), "--json"], env)
    res["reindex_one_wall_s"] = round(wall, 2)
    res["reindex_one_cpu_s"] = s["_cpu_s"]
    res["reindex_one_seconds"] = s["seconds"]
    res["reindex_one_chunks_touched"] = s["chunks_touched"]
    res["reindex_one_updated"] = s["updated"]
    return res


def bench_bundle() -> dict[str, Any]:
    from opsmate.knowledge.bundle_index import retriever_for_dir

    folder = REPO / "src" / "opsmate" / "data" / "demo" / "01-pool-exhaustion" / "runbooks"
    out: dict[str, Any] = {}
    for label in ("cold_cache", "warm_cache"):
        t0 = time.perf_counter()
        r = retriever_for_dir(folder)
        built = time.perf_counter() - t0
        r.search("order-service error rate rose after the release")
        first = time.perf_counter() - t0 - built
        t1 = time.perf_counter()
        r.search("PoolTimeout connection pool exhausted")
        out[label] = {
            "chunks": r.corpus.size,
            "build_s": round(built, 3),
            "first_query_s": round(first, 3),
            "next_query_ms": round((time.perf_counter() - t1) * 1000, 2),
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--skip-1k", action="store_true")
    ap.add_argument("--skip-10k", action="store_true")
    args = ap.parse_args()
    results: dict[str, Any] = {"cpus": os.cpu_count(), "loadavg_start": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="opsmate-bench-") as tmp:
        work = Path(tmp)
        env = {"OPSMATE_CACHE_DIR": str(work / "cache"), "OPSMATE_DATA_DIR": str(work / "data")}
        os.environ.update(env)  # in-process parts use the same empty cache
        if not args.skip_1k:
            results["index_1k"] = bench_index_1k(work, env)
        results["bundle"] = bench_bundle()
        if not args.skip_10k:
            results["10k"] = bench_10k(work, env)
    results["loadavg_end"] = os.getloadavg()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "retrieval.json").write_text(json.dumps(results, indent=1))
    _print(results)
    return 0


def _print(r: dict[str, Any]) -> None:
    if "index_1k" in r:
        a = r["index_1k"]
        print(f"index {a['chunks']} chunks ({a['files']} files) with embeddings, empty cache: "
              f"{a['index_seconds']:.1f} s ({a['chunks_per_s']} chunks/s; CLI wall "
              f"{a['index_wall_s']:.1f} s, CPU {a['index_cpu_s']:.1f} s)")  # fmt: skip
        print(f"re-index after editing one runbook: CLI wall {a['reindex_one_wall_s']:.2f} s "
              f"(CPU {a['reindex_one_cpu_s']:.2f} s, in-process {a['reindex_one_seconds']:.2f} s), "
              f"{a['reindex_one_updated']} "
              f"updated, {a['reindex_one_chunks_touched']} chunks touched")  # fmt: skip
    if "10k" in r:
        t = r["10k"]
        print(f"\n{t['chunks']} chunks, warm, query embedding included (golden queries):")
        print(f"{'vector backend':<15} {'mode':<7} {'p50 ms':>8} {'p95 ms':>8} {'CPU p50':>8}")
        for backend in ("numpy", "chroma"):
            for mode in ("hybrid", "bm25", "vector"):
                m = t[backend][mode]
                print(
                    f"{backend:<15} {mode:<7} {m['p50_ms']:>8.2f} {m['p95_ms']:>8.2f} "
                    f"{m['cpu_p50_ms']:>8.2f}"
                )
        print(f"index 10k chunks (vectors from the cache): numpy "
              f"{t['numpy']['index_cached_vectors_s']} s, chroma "
              f"{t['chroma']['index_cached_vectors_s']} s")  # fmt: skip
        print(f"one `opsmate search --json` at 10k, process wall: {t['cli_search_wall_s']} s "
              f"(CPU {t['cli_search_cpu_s']} s)")  # fmt: skip
        print(f"re-index after editing one runbook at 10k: CLI wall {t['reindex_one_wall_s']} s "
              f"(CPU {t['reindex_one_cpu_s']} s, in-process {t['reindex_one_seconds']} s), "
              f"{t['reindex_one_chunks_touched']} "
              f"chunks touched")  # fmt: skip
    b = r["bundle"]
    for label, v in b.items():
        print(f"bundle retriever ({label}, {v['chunks']} chunks): build {v['build_s']} s, "
              f"first query {v['first_query_s']} s, next {v['next_query_ms']} ms")  # fmt: skip
    print(f"load average at start / end: {r['loadavg_start']} / {r['loadavg_end']}")
    print(f"(results in {RESULTS / 'retrieval.json'})")


if __name__ == "__main__":
    sys.exit(main())
