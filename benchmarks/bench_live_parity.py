#!/usr/bin/env python3
"""Live parity: every bundle diagnosed live (served by protocol fixtures) and replayed.

For each bundle of ``evals/*/`` (the demo bundles with ``scenarios``) and
``../shared/peer-dev/bundles``, the bundle's question is investigated twice with
``--model none``: replayed (``opsmate diagnose --bundle``) and live, against the bundle's
data served as live sources by the protocol fixtures of ``tests/live/bundle_sources.py``
(Kubernetes API server, Elasticsearch or Loki, a Prometheus answering the recorded
queries and the series they imply), at the capture time, with the bundle's runbooks.

It prints one line per bundle whose live report differs from the replay (status, root
cause statement without evidence ids, or the answer key's verdict), with why: the live
calls that failed, the replayed calls the live run did not make (and the reverse), the
PromQL the fixture could answer only from an equivalent recording or not at all; then,
per set, how many bundles differ. Every row and the per-set counts are written to
``benchmarks/results/live_parity.json`` (``--out``).

    .venv/bin/python benchmarks/bench_live_parity.py                 # every set
    .venv/bin/python benchmarks/bench_live_parity.py scenarios peer-dev --logs loki
    .venv/bin/python benchmarks/bench_live_parity.py --quick         # scenarios only
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "live"))

from eval_sets import HELD, _seed_home, score, set_dirs  # noqa: E402


def _calls(report: dict[str, Any]) -> Counter[str]:
    out: Counter[str] = Counter()
    calls = list(report.get("tool_calls") or [])
    inventory = {"kind", "environment"}  # the live inventory, read before intake
    while calls and calls[0]["tool"] == "list_objects" and set(calls[0]["args"]) <= inventory:
        calls.pop(0)
    for c in calls:
        args = {k: v for k, v in (c.get("args") or {}).items() if k != "environment"}
        key = c["tool"] if c["tool"] != "query_metrics" else "query_metrics"
        if c["tool"] in ("list_objects", "get_object"):
            key += f"({args.get('kind')})"
        out[key] += 1
    return out


def why_differs(replay: dict[str, Any], live: dict[str, Any], answers: dict[str, str]) -> str:
    """What the live run saw or did differently, in a line."""
    parts = []
    errors = Counter(
        f"{c['tool']}: {(c.get('error') or '').split(':')[0]}"
        for c in live.get("tool_calls") or []
        if c.get("status") == "error"
    )
    if errors:
        parts.append("live errors " + ", ".join(f"{k} x{n}" for k, n in errors.items()))
    rc, lc = _calls(replay), _calls(live)
    lc.pop("discover_metrics", None)  # every live run with a Prometheus makes it
    only_r = rc - lc
    only_l = lc - rc
    if only_r:
        parts.append("replay only " + ", ".join(f"{k} x{n}" for k, n in only_r.items()))
    if only_l:
        parts.append("live only " + ", ".join(f"{k} x{n}" for k, n in only_l.items()))
    none = [q for q, a in answers.items() if a == "none"]
    mapped = [q for q, a in answers.items() if a.startswith("mapped")]
    if none or mapped:
        parts.append(f"promql unanswered {len(none)}, from an equivalent recording {len(mapped)}")
    rf = {f["statement"] for f in replay.get("facts") or []}
    lf = {f["statement"] for f in live.get("facts") or []}
    if rf != lf:
        parts.append(f"facts replay-only {len(rf - lf)}, live-only {len(lf - rf)}")
    return "; ".join(parts) or "same calls and facts"


CAUSES = {
    "error": "the run failed",
    "live-failed": "live calls failed (a fixture too slow, a call the API refuses)",
    "shaping": "the same reads, shaped differently by the live source and by replay",
    "promql": "the live run read the series through discovered queries, which the fixture "
    "answers from the equivalent recordings (it holds results, not samples)",
    "plan": "the live run planned other calls (discovered queries instead of recorded ones, "
    "the step budget spent elsewhere)",
}


def cause_of(row: dict[str, Any]) -> str:
    """The first of :data:`CAUSES` a differing row shows (its ``why`` and PromQL counts)."""
    why = row.get("why", "")
    if row.get("error"):
        return "error"
    if "live errors" in why:
        return "live-failed"
    if (row.get("promql") or {}).get("mapped"):
        return "promql"
    if "replay only" not in why and "live only" not in why:
        return "shaping"
    return "plan"


def _run_one(job: tuple[str, str, str]) -> dict[str, Any]:
    import yaml
    from bundle_sources import compare, live_report, replay_report, root_cause_text, serve_bundle

    from opsmate.tools.bundle import load_bundle

    set_name, path_s, log_source = job
    path = Path(path_s)
    row: dict[str, Any] = {"set": set_name, "case": path.name}
    key_file = path / "expected.yaml"
    expected = yaml.safe_load(key_file.read_text()) if key_file.is_file() else {}
    t0 = time.perf_counter()
    try:
        replay = replay_report(path)
        t1 = time.perf_counter()
        bundle = load_bundle(path)
        with (
            tempfile.TemporaryDirectory() as tmp,
            serve_bundle(bundle, Path(tmp), log_source=log_source) as served,
        ):
            live = live_report(served)
            answers = dict(served.prom.answers) if served.prom is not None else {}
        t2 = time.perf_counter()
    except Exception as exc:  # one broken case must not stop the run
        row.update(differs=True, why=f"{type(exc).__name__}: {exc}", error=True)
        return row
    rs, ls = score(replay, expected or {}), score(live, expected or {})
    row.update(
        outcome=compare(replay, live, bundle),
        replay_status=replay["status"],
        live_status=live["status"],
        replay_root=root_cause_text(replay),
        live_root=root_cause_text(live),
        replay_passes=rs["passed"] if expected else None,
        live_passes=ls["passed"] if expected else None,
        replay_seconds=round(t1 - t0, 2),
        live_seconds=round(t2 - t1, 2),
        promql=Counter(a.split(":")[0] for a in answers.values()),
    )
    row["differs"] = row["outcome"] != "same"
    row["verdict_differs"] = bool(expected) and rs["passed"] != ls["passed"]
    row["why"] = why_differs(replay, live, answers) if row["differs"] else ""
    if row["differs"]:
        row["cause"] = cause_of(row)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("sets", nargs="*", help="set names (evals/<name>, peer-dev) or bundle folders")
    ap.add_argument("--logs", choices=("elasticsearch", "loki"), default="elasticsearch")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="the scenarios set only")
    ap.add_argument(
        "--out",
        default=str(ROOT / "benchmarks" / "results" / "live_parity.json"),
        help="where the rows and the per-set counts go as JSON (default: %(default)s)",
    )
    a = ap.parse_args()
    all_sets = set_dirs()
    for name in HELD:
        if (ROOT / "evals" / name).is_dir():
            all_sets[name] = sorted(p.parent for p in (ROOT / "evals" / name).glob("*/bundle.yaml"))
    names = a.sets or (["scenarios"] if a.quick else list(all_sets))
    jobs: list[tuple[str, str, str]] = []
    for name in names:
        if name in all_sets:
            jobs += [(name, str(p), a.logs) for p in all_sets[name]]
        elif (Path(name) / "bundle.yaml").is_file():
            jobs.append(("cases", str(Path(name).resolve()), a.logs))
        else:
            print(f"unknown set {name!r}; sets: {', '.join(all_sets)}", file=sys.stderr)
            return 2
    _seed_home()
    t0 = time.time()
    rows = []
    with ProcessPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for i, row in enumerate(pool.map(_run_one, jobs, chunksize=1), 1):
            rows.append(row)
            mark = "." if not row.get("differs") else "x"
            print(f"[{i}/{len(jobs)}] {mark} {row['set']}/{row['case']}", file=sys.stderr)
    by_set: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_set.setdefault(r["set"], []).append(r)
    print(f"live parity ({a.logs} as the log source), {len(rows)} bundles")
    for r in rows:
        if r["differs"] or r.get("verdict_differs"):
            print(f"- {r['set']}/{r['case']}: ", end="")
            if r.get("error"):
                print(f"ERROR {r['why']}")
                r["cause"] = "error"
                continue
            print(f"{r['outcome']}: replay {r['replay_status']} / live {r['live_status']}"
                  + (" (answer key verdict differs)" if r["verdict_differs"] else ""))  # fmt: skip
            print(f"    replay: {r['replay_root']}")
            print(f"    live:   {r['live_root']}")
            print(f"    why:    [{r['cause']}] {r['why']}")
    print()
    print(f"{'set':<14} {'bundles':>7} {'differ':>6} {'verdict':>7} {'replay ok':>9} "
          f"{'live ok':>7} {'live s p50':>10}")  # fmt: skip
    total = Counter()
    for s, rs in by_set.items():
        ok = [r for r in rs if not r.get("error")]
        line = {
            "bundles": len(rs),
            "differ": sum(r["differs"] for r in rs),
            "verdict": sum(bool(r.get("verdict_differs")) for r in rs),
            "replay_ok": sum(bool(r.get("replay_passes")) for r in ok),
            "live_ok": sum(bool(r.get("live_passes")) for r in ok),
        }
        total.update(line)
        p50 = statistics.median([r["live_seconds"] for r in ok]) if ok else 0.0
        print(f"{s:<14} {line['bundles']:>7} {line['differ']:>6} {line['verdict']:>7} "
              f"{line['replay_ok']:>9} {line['live_ok']:>7} {p50:>10.1f}")  # fmt: skip
    print(f"{'all':<14} {total['bundles']:>7} {total['differ']:>6} {total['verdict']:>7} "
          f"{total['replay_ok']:>9} {total['live_ok']:>7}")  # fmt: skip
    print(f"{time.time() - t0:.0f} s with {a.jobs} workers")
    outcomes = Counter(r.get("outcome", "error") for r in rows)
    print("outcomes: " + ", ".join(f"{k} {n}" for k, n in sorted(outcomes.items())))
    causes = Counter(r.get("cause", "error") for r in rows if r.get("differs"))
    for key, n in causes.most_common():
        print(f"  {n:>3} differ because {CAUSES[key]}")
    print("differ: status or root cause statement (evidence ids aside) not the same; "
          "verdict: the answer key passes one and fails the other")  # fmt: skip
    if a.out:
        summary = {s: {"bundles": len(rs), "differ": sum(r["differs"] for r in rs),
                       "outcomes": dict(Counter(r.get("outcome", "error") for r in rs))}
                   for s, rs in by_set.items()}  # fmt: skip
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        body = {"logs": a.logs, "summary": summary, "rows": rows}
        Path(a.out).write_text(json.dumps(body, indent=1, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
