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

Query latency (numpy backend) and the re-index costs are measured side by side with the
code of an earlier commit (``--before REF``, default :data:`before.BEFORE_REF`; see
``before.py``): the same index, the same edits, each index folder and embedding cache
copied so both start equal; ``--rounds`` alternating rounds, the best round of each
printed with the ratio (before / after).

    .venv/bin/python benchmarks/bench_retrieval.py [--skip-1k] [--skip-10k] [--before REF]

Writes ``benchmarks/results/retrieval.json`` and prints a table. Needs the MiniLM ONNX
files in ``~/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx/``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from before import BEFORE_REF, WORKER_FLAG, env_for, ratio, run_worker, source_tree
from synthetic import REPO, golden_queries, write_corpus

RESULTS = Path(__file__).resolve().parent / "results"
OPSMATE = Path(sys.executable).parent / "opsmate"
SCRIPT = Path(__file__).resolve()
CHUNKS_PER_VARIANT = 180  # about: the 25 base runbooks give ~180 chunks
MODES = ("hybrid", "bm25", "vector")


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _cli(
    args: list[str], env: dict[str, str], src: Path | None = None
) -> tuple[float, dict[str, Any]]:
    """Run the CLI (this tree, or ``src``); returns (wall seconds, stdout JSON + ``_cpu_s``)."""
    from before import cli

    cmd = [str(OPSMATE), *args] if src is None else [*cli(), *args]
    t0, c0 = time.perf_counter(), _children_cpu()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**env_for(src), **env})
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"opsmate {' '.join(args)} failed:\n{proc.stderr}")
    out = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {}
    out["_cpu_s"] = round(_children_cpu() - c0, 2)
    return wall, out


def reindex_side_by_side(
    root: Path, idx: Path, cache: Path, work: Path, env: dict[str, str], src: Path | None,
    rounds: int,
) -> dict[str, Any]:  # fmt: skip
    """Edit one runbook, re-index with the code before and after; ``rounds`` times.

    Each side has its own copy of the index folder and of the embedding cache (taken
    now), so neither profits from what the other embedded or wrote.
    """
    sides: dict[str, tuple[Path | None, Path, Path]] = {"after": (None, idx, cache)}
    if src is not None:
        b_idx, b_cache = work / f"{idx.name}-before", work / f"{cache.name}-{idx.name}-before"
        shutil.copytree(cache, b_cache)
        if not b_idx.exists():  # the before code's own index (its own embedding model)
            shutil.copytree(idx, b_idx)
            _cli(["index", str(root), "--index-dir", str(b_idx), "--json"],
                 {**env, "OPSMATE_CACHE_DIR": str(b_cache)}, src)  # fmt: skip
        sides["before"] = (src, b_idx, b_cache)
    out: dict[str, Any] = {}
    for _ in range(rounds):
        _edit_one(root)
        for label, (tree, folder, cdir) in sides.items():
            wall, s = _cli(
                ["index", str(root), "--index-dir", str(folder), "--json"],
                {**env, "OPSMATE_CACHE_DIR": str(cdir)},
                tree,
            )
            side = out.setdefault(label, {"wall_s": [], "cpu_s": [], "seconds": []})
            side["wall_s"].append(round(wall, 2))
            side["cpu_s"].append(s["_cpu_s"])
            side["seconds"].append(s["seconds"])
            side["chunks_touched"] = s["chunks_touched"]
            side["updated"] = s["updated"]
    for side in out.values():
        side["best_wall_s"] = min(side["wall_s"])
        side["best_cpu_s"] = min(side["cpu_s"])
    return out


def _edit_one(root: Path) -> Path:
    target = sorted(root.rglob("db-connection-pool.md"))[0]
    target.write_text(target.read_text("utf-8") + "\n\nEdited: check PgBouncer first.\n", "utf-8")
    return target


def bench_index_1k(
    work: Path, env: dict[str, str], src: Path | None, rounds: int
) -> dict[str, Any]:
    root = work / "rb1k"
    files = write_corpus(root, max(1, round(1000 / CHUNKS_PER_VARIANT)))
    idx = work / "idx1k"
    wall, s = _cli(["index", str(root), "--index-dir", str(idx), "--json"], env)
    return {
        "files": files,
        "chunks": s["chunks"],
        "index_wall_s": round(wall, 2),
        "index_cpu_s": s["_cpu_s"],
        "index_seconds": s["seconds"],
        "embedded": s["embedded"],
        "chunks_per_s": round(s["embedded"] / max(s["seconds"], 1e-9), 1),
        "reindex_one": reindex_side_by_side(
            root, idx, Path(env["OPSMATE_CACHE_DIR"]), work, env, src, rounds
        ),
    }


def _prefill_cache(root: Path) -> int:
    """Put noisy copies of real base-chunk vectors in the cache for every chunk text.

    For the default model (its int8 copy) and for the float32 files (the model of the
    code before), so both sides index from the cache.
    """
    from opsmate.config import EmbeddingConfig
    from opsmate.knowledge.embedding_cache import EmbeddingCache, content_hash
    from opsmate.knowledge.embeddings import OnnxEmbedder, chroma_onnx_dir, make_embedder
    from opsmate.knowledge.markdown import load_runbook
    from opsmate.knowledge.store import embed_text

    default = make_embedder(EmbeddingConfig(), allow_download=True)
    assert default is not None
    texts = [
        embed_text(c.heading_path, c.text)
        for p in sorted(root.rglob("*.md"))
        for c in load_runbook(p, root).chunks
    ]
    cache = EmbeddingCache()
    for emb in {e.model_id: e for e in (default, OnnxEmbedder(chroma_onnx_dir()))}.values():
        base = emb.embed(texts[:CHUNKS_PER_VARIANT])
        rng = np.random.default_rng(0)
        vecs = base[np.arange(len(texts)) % len(base)]
        vecs = vecs + rng.normal(0, 0.02, (len(texts), emb.dim))
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        pairs = zip(texts, vecs, strict=True)
        cache.put_many(emb.model_id, ((content_hash(t), v) for t, v in pairs))
    cache.close()
    return len(texts)


def _latency(index_dir: Path, queries: list[str], modes: tuple[str, ...] = MODES) -> dict[str, Any]:
    from opsmate.knowledge.retrieve import open_retriever

    t0 = time.perf_counter()
    r = open_retriever(index_dir)
    r.search("warm up the model and the index")
    load_s = time.perf_counter() - t0
    out: dict[str, Any] = {"open_and_first_query_s": round(load_s, 2)}
    for mode in modes:
        lat, cpu = [], []
        for q in queries:
            r._qcache.clear()  # every query pays its embedding
            t0, c0 = time.perf_counter(), time.process_time()
            r.search(q, mode=mode)  # type: ignore[arg-type]
            lat.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        out[mode] = {
            "p50_ms": round(float(np.percentile(lat, 50)) * 1000, 2),
            "p95_ms": round(float(np.percentile(lat, 95)) * 1000, 2),
            "cpu_p50_ms": round(float(np.percentile(cpu, 50)) * 1000, 2),
        }
    return out


def latency_side_by_side(
    idx: Path, queries: list[str], src: Path | None, rounds: int, b_idx: Path | None = None
) -> dict[str, Any]:
    """Query latency with the code before (a subprocess, on ``b_idx``: the index it built
    with its own embedding model) and after (on ``idx``), alternating."""
    out: dict[str, Any] = {"after": []}
    if src is not None:
        out["before"] = []
    for _ in range(rounds):
        if src is not None:
            b = str(b_idx or idx)
            out["before"].append(run_worker(SCRIPT, src, "latency", {"index": b}))
        out["after"].append(run_worker(SCRIPT, None, "latency", {"index": str(idx)}))
    for label in list(out):
        runs = out[label]
        out[f"{label}_best"] = {
            mode: {k: min(run[mode][k] for run in runs) for k in runs[0][mode]} for mode in MODES
        }
    return out


def bench_10k(work: Path, env: dict[str, str], src: Path | None, rounds: int) -> dict[str, Any]:
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
        }
        if backend == "chroma":
            res[backend].update(_latency(idx, queries))
    idx = work / "idx10k-numpy"
    b_idx = work / f"{idx.name}-before"
    if src is not None:  # the before code's own index of the same files (untimed)
        shutil.copytree(idx, b_idx)
        _cli(["index", str(root), "--index-dir", str(b_idx), "--json"], env, src)
    res["numpy"]["side_by_side"] = latency_side_by_side(idx, queries, src, rounds, b_idx)
    res["numpy"].update(res["numpy"]["side_by_side"]["after_best"])
    wall, s = _cli(["search", "PoolTimeout", "--index-dir", str(idx), "--json"], env)
    res["cli_search_wall_s"] = round(wall, 2)
    res["cli_search_cpu_s"] = s["_cpu_s"]
    res["reindex_one"] = reindex_side_by_side(
        root, idx, Path(env["OPSMATE_CACHE_DIR"]), work, env, src, rounds
    )
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


def worker(name: str, args: dict[str, Any]) -> None:
    """One measurement in this process (run by :func:`before.run_worker`); prints JSON."""
    if name == "latency":
        print(json.dumps(_latency(Path(args["index"]), golden_queries())))
    else:
        raise SystemExit(f"unknown worker {name}")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == WORKER_FLAG:
        worker(sys.argv[2], json.loads(sys.argv[3]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--skip-1k", action="store_true")
    ap.add_argument("--skip-10k", action="store_true")
    ap.add_argument("--before", default=BEFORE_REF, help="commit for the before column, or none")
    ap.add_argument("--rounds", type=int, default=2, help="alternating before/after rounds")
    args = ap.parse_args()
    src = source_tree(args.before)
    results: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "loadavg_start": os.getloadavg(),
        "before_ref": args.before if src is not None else None,
        "rounds": args.rounds,
    }
    with tempfile.TemporaryDirectory(prefix="opsmate-bench-") as tmp:
        work = Path(tmp)
        env = {"OPSMATE_CACHE_DIR": str(work / "cache"), "OPSMATE_DATA_DIR": str(work / "data")}
        os.environ.update(env)  # in-process parts use the same empty cache
        from opsmate.knowledge.embeddings import default_onnx_dir

        results["default_model_dir"] = str(default_onnx_dir(quantize=True))  # written once
        if not args.skip_1k:
            results["index_1k"] = bench_index_1k(work, env, src, args.rounds)
        results["bundle"] = bench_bundle()
        if not args.skip_10k:
            results["10k"] = bench_10k(work, env, src, args.rounds)
    results["loadavg_end"] = os.getloadavg()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "retrieval.json").write_text(json.dumps(results, indent=1))
    _print(results)
    return 0


def _print_reindex(label: str, r: dict[str, Any]) -> None:
    a, b = r["after"], r.get("before")
    line = f"re-index after editing one runbook, {label}: after {a['best_wall_s']:.2f} s wall "
    line += f"(CPU {a['best_cpu_s']:.2f} s; {a['chunks_touched']} chunks touched)"
    if b:
        line += (
            f", before {b['best_wall_s']:.2f} s wall (CPU {b['best_cpu_s']:.2f} s): "
            f"{ratio(b['best_wall_s'], a['best_wall_s'])} wall, "
            f"{ratio(b['best_cpu_s'], a['best_cpu_s'])} CPU"
        )
    print(line + "  [goal <= 2 s]")


def _print(r: dict[str, Any]) -> None:
    if r.get("before_ref"):
        print(f"before = the code of commit {r['before_ref']}, after = this tree; "
              f"best of {r['rounds']} alternating rounds")  # fmt: skip
    if "index_1k" in r:
        a = r["index_1k"]
        print(f"index {a['chunks']} chunks ({a['files']} files) with embeddings, empty cache: "
              f"{a['index_seconds']:.1f} s ({a['chunks_per_s']} chunks/s; CLI wall "
              f"{a['index_wall_s']:.1f} s, CPU {a['index_cpu_s']:.1f} s)")  # fmt: skip
        _print_reindex(f"{a['chunks']} chunks", a["reindex_one"])
    if "10k" in r:
        t = r["10k"]
        sbs = t["numpy"]["side_by_side"]
        print(f"\n{t['chunks']} chunks, warm, query embedding included (golden queries), numpy:")
        print(f"{'mode':<7} {'p50 ms':>8} {'p95 ms':>8} {'CPU p50':>8}   "
              f"{'before p50':>10} {'CPU p50':>8}   {'p50 ratio':>9} {'CPU ratio':>9}")  # fmt: skip
        for mode in MODES:
            m = sbs["after_best"][mode]
            b = sbs.get("before_best", {}).get(mode)
            print(
                f"{mode:<7} {m['p50_ms']:>8.2f} {m['p95_ms']:>8.2f} {m['cpu_p50_ms']:>8.2f}   "
                + (
                    f"{b['p50_ms']:>10.2f} {b['cpu_p50_ms']:>8.2f}   "
                    f"{ratio(b['p50_ms'], m['p50_ms']):>9} "
                    f"{ratio(b['cpu_p50_ms'], m['cpu_p50_ms']):>9}"
                    if b
                    else ""
                )
            )
        print("(goal: hybrid p50 <= 10 ms)")
        m = t["chroma"]
        print(f"chroma backend (after): hybrid p50 {m['hybrid']['p50_ms']} ms, bm25 "
              f"{m['bm25']['p50_ms']} ms, vector {m['vector']['p50_ms']} ms")  # fmt: skip
        print(f"index 10k chunks (vectors from the cache): numpy "
              f"{t['numpy']['index_cached_vectors_s']} s, chroma "
              f"{t['chroma']['index_cached_vectors_s']} s")  # fmt: skip
        print(f"one `opsmate search --json` at 10k, process wall: {t['cli_search_wall_s']} s "
              f"(CPU {t['cli_search_cpu_s']} s)")  # fmt: skip
        _print_reindex(f"{t['chunks']} chunks", t["reindex_one"])
    b = r["bundle"]
    for label, v in b.items():
        print(f"bundle retriever ({label}, {v['chunks']} chunks): build {v['build_s']} s, "
              f"first query {v['first_query_s']} s, next {v['next_query_ms']} ms")  # fmt: skip
    print(f"load average at start / end: {r['loadavg_start']} / {r['loadavg_end']}")
    print(f"(results in {RESULTS / 'retrieval.json'})")


if __name__ == "__main__":
    sys.exit(main())
