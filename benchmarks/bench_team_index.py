"""The team index on a real Chroma server against the embedded index, in the same run.

Builds the embedded index of ``runbooks/`` (numpy vectors) and publishes the same
runbooks to a Chroma server (``chroma run`` started here on a free loopback port with a
temporary path, or ``--chroma-url`` of one already running) with ``opsmate index --to``'s
code, then asks both every golden query (``tests/golden/retrieval.yaml``), interleaved
(embedded, server, embedded, ...) so machine load hits both alike, and prints per
backend Recall@5 and MRR@10 (measured as ``bench_retrieval_stages.py`` does: distinct
runbooks of the top 30 hits), query latency p50 / p95 / mean (the whole ``search``:
query understanding, embedding, BM25F, kNN - in-process numpy or an HTTP request to the
server - fusion, rerank, parent expansion), how many queries got the same top-5 chunks,
the publish time and the reader's first load (download + BM25 build) and cached load.

``--domains a,b`` also measures a user restricted to those domains (top folders of
``runbooks/``) on both backends.

    .venv/bin/python benchmarks/bench_team_index.py [--quick] [--chroma-url URL] [--domains D]

``--quick``: the first 60 golden queries. Writes ``benchmarks/results/team_index.json``
(``run_all.py --quick`` moves a quick run's file under ``results/quick/``).
Needs the MiniLM ONNX files.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"


def start_chroma(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    exe = Path(sys.executable).parent / "chroma"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [str(exe), "run", "--path", str(folder), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    import httpx

    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("chroma run did not start")


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def compare(retrievers: dict[str, Any], golden: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    from opsmate.knowledge.evaluate import DEPTH
    from opsmate.knowledge.metrics import dedupe_sources, mean, mrr_at_k, recall_at_k

    for r in retrievers.values():
        r.search("warm up the model and the caches", top_k=DEPTH)
    times: dict[str, list[float]] = {k: [] for k in retrievers}
    rec: dict[str, list[float]] = {k: [] for k in retrievers}
    mrr: dict[str, list[float]] = {k: [] for k in retrievers}
    tops: dict[str, list[list[str]]] = {k: [] for k in retrievers}
    for item in golden:
        rel = set(item["relevant"])
        for name, r in retrievers.items():
            t0 = time.perf_counter()
            resp = r.search(str(item["query"]), top_k=DEPTH)
            times[name].append(1000 * (time.perf_counter() - t0))
            ranked = dedupe_sources(h.source for h in resp.hits)
            rec[name].append(recall_at_k(ranked, rel, 5))
            mrr[name].append(mrr_at_k(ranked, rel, 10))
            tops[name].append([h.chunk_id for h in resp.hits[:5]])
    base = next(iter(retrievers))

    def same(name: str) -> int:
        return sum(a == b for a, b in zip(tops[name], tops[base], strict=True))

    return {
        name: {
            "recall@5": round(mean(rec[name]), 4),
            "mrr@10": round(mean(mrr[name]), 4),
            "p50_ms": round(statistics.median(times[name]), 2),
            "p95_ms": round(pct(times[name], 0.95), 2),
            "mean_ms": round(statistics.fmean(times[name]), 2),
            "same_top5_as_" + base: same(name),
            "queries": len(golden),
        }
        for name in retrievers
    }


def line(name: str, r: dict[str, Any], base: str) -> str:
    same = r["same_top5_as_" + base]
    return (f"{name:<34}{r['recall@5']:>7.3f}{r['mrr@10']:>8.3f}{r['p50_ms']:>9.1f}"
            f"{r['p95_ms']:>9.1f}{r['mean_ms']:>9.1f}{same:>6}/{r['queries']}")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--golden", type=Path, default=REPO / "tests/golden/retrieval.yaml")
    ap.add_argument("--runbooks", type=Path, default=REPO / "runbooks")
    ap.add_argument("--chroma-url", help="a running Chroma server (default: start one here)")
    ap.add_argument("--domains", default="kubernetes,redis", help="a restricted user's domains")
    ap.add_argument("--quick", action="store_true", help="the first 60 golden queries")
    args = ap.parse_args()

    golden = yaml.safe_load(args.golden.read_text("utf-8"))
    if args.quick:
        golden = golden[:60]
    tmp = Path(tempfile.mkdtemp(prefix="opsmate-team-"))
    os.environ.setdefault("OPSMATE_CACHE_DIR", str(tmp / "cache"))
    os.environ["ANONYMIZED_TELEMETRY"] = "False"
    proc = None
    try:
        url = args.chroma_url
        if url is None:
            proc, url = start_chroma(tmp / "chroma")
        return run(args, golden, tmp, url)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)


def run(args: argparse.Namespace, golden: list[dict[str, Any]], tmp: Path, url: str) -> int:
    from opsmate.config import EmbeddingConfig, Settings
    from opsmate.knowledge.chroma_publish import publish
    from opsmate.knowledge.chroma_server import ServerIndex
    from opsmate.knowledge.index import KnowledgeIndex
    from opsmate.knowledge.retrieve import open_retriever
    from opsmate.knowledge.sources import discover

    files, _ = discover([args.runbooks])
    t0 = time.perf_counter()
    KnowledgeIndex(tmp / "idx").update(files, embedding=EmbeddingConfig())
    t_embedded = time.perf_counter() - t0
    collection = f"bench-{uuid.uuid4().hex[:8]}"

    def team(domains: list[str] | None) -> Settings:
        return Settings(knowledge={"backend": "chroma-server", "url": url,
                                   "collection": collection, "domains": domains})  # fmt: skip

    summary = publish(files, team(None), url=url, embedding=EmbeddingConfig())
    t0 = time.perf_counter()
    cold = ServerIndex(team(None))
    cold.corpus()
    t_cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    warm = ServerIndex(team(None))
    warm.corpus()
    t_warm = time.perf_counter() - t0
    print(f"{len(golden)} golden queries over {summary.documents} runbooks, {summary.chunks} "
          f"chunks; Chroma server {url}\n"
          f"embedded index built in {t_embedded:.1f} s; published to the server in "
          f"{summary.seconds:.1f} s; reader's first load {t_cold:.2f} s "
          f"(download + BM25/BM25F build), cached load {t_warm:.2f} s "
          f"(from cache: {warm.synced_from_cache})\n")  # fmt: skip
    header = (f"{'backend':<34}{'R@5':>7}{'MRR@10':>8}{'p50 ms':>9}{'p95 ms':>9}"
              f"{'mean ms':>9}{'same top-5':>13}")  # fmt: skip
    print(header)
    both = {
        "embedded (numpy)": open_retriever(tmp / "idx", Settings()),
        "chroma-server": open_retriever(None, team(None)),
    }
    res = compare(both, golden)
    for name, r in res.items():
        print(line(name, r, "embedded (numpy)"))
    e, s = res["embedded (numpy)"], res["chroma-server"]
    print(f"{'difference (server - embedded)':<34}{s['recall@5'] - e['recall@5']:>+7.3f}"
          f"{s['mrr@10'] - e['mrr@10']:>+8.3f}{s['p50_ms'] - e['p50_ms']:>+9.1f}")  # fmt: skip

    domains = [d.strip() for d in args.domains.split(",") if d.strip()]
    restricted: dict[str, Any] = {}
    if domains:
        allowed = set(domains)
        sub = [g for g in golden if all(r.split("/", 1)[0] in allowed for r in g["relevant"])]
        print(f"\nuser with domains {domains}: the {len(sub)} golden queries whose runbooks "
              "are all in them")  # fmt: skip
        print(header)
        mine = Settings(knowledge={"domains": domains})
        views = {
            "embedded, domains": open_retriever(tmp / "idx", mine),
            "chroma-server, domains": open_retriever(None, team(domains)),
        }
        restricted = compare(views, sub) if sub else {}
        for name, r in restricted.items():
            print(line(name, r, "embedded, domains"))

    RESULTS.mkdir(exist_ok=True)
    out = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "queries": len(golden),
        "chunks": summary.chunks,
        "publish_seconds": summary.seconds,
        "embedded_build_seconds": round(t_embedded, 2),
        "reader_first_load_seconds": round(t_cold, 3),
        "reader_cached_load_seconds": round(t_warm, 3),
        "backends": res,
        "domains": {"domains": domains, "backends": restricted},
    }
    out["quick"] = bool(args.quick)
    (RESULTS / "team_index.json").write_text(json.dumps(out, indent=1))
    print(f"\n(results in {RESULTS / 'team_index.json'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
