"""Wall time of ``opsmate diagnose`` per demo bundle (and scenario), and with a GGUF model.

Usage::

    .venv/bin/python benchmarks/bench_diagnose.py                 # --model none, demo bundles
    .venv/bin/python benchmarks/bench_diagnose.py --scenarios     # + evals/scenarios/*
    .venv/bin/python benchmarks/bench_diagnose.py --blind         # + evals/blind*/*
    .venv/bin/python benchmarks/bench_diagnose.py --model gguf:PATH [--bundle DIR]

For ``--model none`` each bundle is run as a fresh process (``opsmate diagnose --bundle
DIR --model none --json``: what a user waits for, imports included), ``--repeat`` times;
the table shows the minimum and median wall time, the in-process engine time the
report records (``budget.seconds``), the steps and the status. ``--demo`` is the first
row. With a GGUF model one bundle is run in-process, twice: with llama.cpp's prompt
prefix reuse and with it disabled (``OPSMATE_LLM_NO_PREFIX_CACHE=1``), printing the
time to the first step, model tokens per second, total time and what the reuse saves.
Results are printed and, with ``--out FILE``, written as JSON. Numbers, not asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OPSMATE = Path(sys.executable).parent / "opsmate"


def _bundles(with_scenarios: bool, blind: bool = False) -> list[Path]:
    sys.path.insert(0, str(REPO / "src"))
    from opsmate import paths

    found = sorted(p for p in paths.demo_dir().glob("0*") if (p / "bundle.yaml").is_file())
    if with_scenarios:
        found += sorted(
            p for p in (REPO / "evals" / "scenarios").glob("*") if (p / "bundle.yaml").is_file()
        )
    if blind:  # incidents written by people who never saw the engine (some with 20k lines)
        for folder in ("blind", "blind2"):
            found += sorted(
                p for p in (REPO / "evals" / folder).glob("*") if (p / "bundle.yaml").is_file()
            )
    return found


def run_cli(args: list[str]) -> tuple[float, dict[str, Any] | None, int]:
    started = time.perf_counter()
    proc = subprocess.run([str(OPSMATE), *args], capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - started
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        report = None
    return wall, report, proc.returncode


def bench_none(bundles: list[Path], repeat: int) -> list[dict[str, Any]]:
    rows = []
    targets: list[tuple[str, list[str]]] = [
        ("--demo", ["diagnose", "--demo", "--model", "none", "--json"])
    ]
    targets += [
        (b.name, ["diagnose", "--bundle", str(b), "--model", "none", "--json"]) for b in bundles
    ]
    for name, args in targets:
        walls: list[float] = []
        report: dict[str, Any] | None = None
        code = 0
        for _ in range(repeat):
            wall, report, code = run_cli(args)
            walls.append(wall)
        budget = (report or {}).get("budget") or {}
        rows.append(
            {
                "bundle": name,
                "wall_min_s": round(min(walls), 3),
                "wall_median_s": round(statistics.median(walls), 3),
                "engine_s": budget.get("seconds"),
                "steps": budget.get("steps"),
                "status": (report or {}).get("status"),
                "exit": code,
            }
        )
    return rows


def bench_model(spec: str, bundle: Path, max_steps: int) -> list[dict[str, Any]]:
    """Each mode in a fresh process, so neither inherits the other's loaded model or cache."""
    rows = []
    for reuse in (True, False):
        env = dict(os.environ)
        env.pop("OPSMATE_LLM_NO_PREFIX_CACHE", None)
        if not reuse:
            env["OPSMATE_LLM_NO_PREFIX_CACHE"] = "1"
        cmd = [sys.executable, __file__, "--one-model-run", "--model", spec,
               "--bundle", str(bundle), "--max-steps", str(max_steps)]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        row = json.loads(lines[-1]) if lines else {"error": proc.stderr[-300:]}
        rows.append({"prefix_reuse": reuse, **row})
    if len(rows) == 2 and rows[0].get("total_s") and rows[1].get("total_s"):
        rows[0]["reuse_saves_s"] = round(rows[1]["total_s"] - rows[0]["total_s"], 3)
    return rows


def one_model_run(spec: str, bundle: Path, max_steps: int) -> dict[str, Any]:
    """One in-process diagnosis with a model: time to first token / model step, total, tokens."""
    sys.path.insert(0, str(REPO / "src"))
    from opsmate.agent.loop.events import ModelToken, StepPlanned
    from opsmate.agent.session.session import Session
    from opsmate.config import load_settings

    marks: dict[str, float] = {}
    started = time.perf_counter()

    def on_event(event: object) -> None:
        now = time.perf_counter() - started
        if isinstance(event, ModelToken):
            marks.setdefault("first_token_s", now)
        if isinstance(event, StepPlanned) and event.source == "model":
            marks.setdefault("first_model_step_s", now)

    session = Session.open(
        settings=load_settings(None), bundle=bundle, model=spec, max_steps=max_steps,
        on_event=on_event,
    )  # fmt: skip
    opened = time.perf_counter() - started
    report = session.ask()
    total = time.perf_counter() - started
    stats = getattr(session.model, "last_stats", None)
    completion = int(getattr(stats, "completion_tokens", 0) or 0)
    gen_s = float(getattr(stats, "seconds", 0) or 0) - float(
        getattr(stats, "first_token_seconds", 0) or 0
    )
    return {
        "open_s": round(opened, 3),
        "first_token_s": round(marks.get("first_token_s", float("nan")), 3),
        "first_model_step_s": round(marks.get("first_model_step_s", float("nan")), 3),
        "total_s": round(total, 3),
        "model_tokens": report.budget.tokens,
        "last_call_tokens_per_s": round(completion / gen_s, 1) if gen_s > 0 else None,
        "last_call_reused_prompt_tokens": getattr(stats, "reused_tokens", None),
        "steps": report.budget.steps,
        "status": report.status,
    }


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(nothing measured)"
    cols = list(dict.fromkeys(k for r in rows for k in r))
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in cols}
    lines = ["  ".join(c.ljust(widths[c]) for c in cols)]
    lines += ["  ".join(str(r.get(c, "")).ljust(widths[c]) for c in cols) for r in rows]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument(
        "--model", default="none", help="none | gguf:PATH | openai:URL#MODEL | scripted:PATH"
    )
    ap.add_argument(
        "--bundle", type=Path, help="bundle for the model run (default: the first demo)"
    )
    ap.add_argument("--scenarios", action="store_true", help="also time evals/scenarios/*")
    ap.add_argument("--blind", action="store_true", help="also time evals/blind*/*")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-steps", type=int, default=12)
    ap.add_argument("--out", type=Path, help="write the results as JSON")
    ap.add_argument("--one-model-run", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one_model_run:
        bundle = args.bundle or _bundles(False)[0]
        print(json.dumps(one_model_run(args.model, bundle, args.max_steps)))
        return
    bundles = _bundles(args.scenarios, args.blind)
    results: dict[str, Any] = {
        "machine": os.uname().nodename,
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
    }
    if args.model == "none":
        rows = bench_none(bundles, args.repeat)
        results["model_none"] = rows
        print(f"opsmate diagnose --model none (fresh process, {args.repeat} runs each)")
        print(_table(rows))
    else:
        rows = bench_model(args.model, args.bundle or bundles[0], args.max_steps)
        results["model"] = {"spec": args.model, "runs": rows}
        print(f"opsmate diagnose --model {args.model} (in process; with and without prefix reuse)")
        print(_table(rows))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
