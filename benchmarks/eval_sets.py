#!/usr/bin/env python3
"""Diagnosis quality over every eval set, scored by the rules of ``../shared/peer-dev/run.py``.

A case passes when its status is one the answer key accepts (default ``complete``), every
``must_mention`` term appears in the root cause or a confirmed hypothesis, and every cited
id resolves. Per set it prints: pass count, ``complete``-but-wrong count (confidently
wrong), precision of ``complete`` (complete and right / complete), and, for fault cases
answered ``partial``, how often the top three hypotheses name every ``must_mention`` term
(the ranked candidates contain the right component).

Runs the engine in-process (``--model none``), ``--jobs`` worker processes. Usage::

    .venv/bin/python benchmarks/eval_sets.py                       # every set
    .venv/bin/python benchmarks/eval_sets.py evals/blind4 peer-dev  # some sets
    .venv/bin/python benchmarks/eval_sets.py --fails                # also list failures
    .venv/bin/python benchmarks/eval_sets.py --out results/evals.json --compare OLD.json

Sets: each folder under ``evals/`` (``scenarios`` includes the demo bundles), and
``peer-dev`` (``../shared/peer-dev/bundles``, when it is there).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
PEER = ROOT.parent / "shared" / "peer-dev" / "bundles"
# sets kept back for a measurement: run only when named (`eval_sets.py blind7`)
HELD = {"blind7"}
MODELS = ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2" / "onnx"


def set_dirs() -> dict[str, list[Path]]:
    sets: dict[str, list[Path]] = {}
    for d in sorted((ROOT / "evals").iterdir()):
        if d.is_dir() and d.name not in HELD:
            sets[d.name] = sorted(p.parent for p in d.glob("*/expected.yaml"))
    demo = ROOT / "src" / "opsmate" / "data" / "demo"
    sets["scenarios"] = sets.get("scenarios", []) + sorted(
        p.parent for p in demo.glob("*/expected.yaml")
    )
    if PEER.is_dir():
        sets["peer-dev"] = sorted(p.parent for p in PEER.glob("*/expected.yaml"))
    return sets


def _statuses(expected: dict[str, Any]) -> list[str]:
    want = expected.get("status") or expected.get("accept_status") or ["complete"]
    return [want] if isinstance(want, str) else list(want)


def score(report: dict[str, Any] | None, expected: dict[str, Any]) -> dict[str, Any]:
    """peer-dev's rules, plus what this script tracks beside them."""
    want = _statuses(expected)
    if report is None:
        return {"passed": False, "why": "no report", "status": None}
    rc = report.get("root_cause") or {}
    hyps = report.get("hypotheses") or []
    texts = [rc.get("statement") or ""]
    texts += [h.get("statement") or "" for h in hyps if h.get("status") == "confirmed"]
    blob = "\n".join(texts).lower()
    terms = [str(t) for t in expected.get("must_mention") or []]
    missing = [t for t in terms if t.lower() not in blob]
    known = {e.get("id") for e in report.get("evidence") or []}
    known |= {r.get("id") for r in report.get("runbooks") or []}
    cited = [i for i in rc.get("evidence") or []]
    for sect in ("hypotheses", "facts", "next_steps"):
        for item in report.get(sect) or []:
            cited += list(item.get("evidence") or [])
    unresolved = [i for i in cited if i not in known]
    why = []
    status = report.get("status")
    if status not in want:
        why.append(f"status {status} not in {want}")
    if missing:
        why.append(f"missing {missing}")
    if unresolved:
        why.append(f"unresolved {unresolved[:3]}")
    top3 = "\n".join((h.get("statement") or "") for h in hyps[:3]).lower()
    return {
        "passed": not why,
        "why": "; ".join(why),
        "status": status,
        "fault": "complete" in want,
        "top3": bool(terms) and all(t.lower() in top3 or t.lower() in blob for t in terms),
        "root_cause": rc.get("statement"),
        "failure_mode": rc.get("failure_mode"),
    }


def _run_one(job: tuple[str, str | None]) -> dict[str, Any]:
    from opsmate.agent.session.session import Session

    path_s, reports = job
    path = Path(path_s)
    expected = yaml.safe_load((path / "expected.yaml").read_text()) or {}
    t0 = time.perf_counter()
    report = None
    error = None
    try:
        session = Session.open(
            bundle=path, model="none", env=expected.get("env") or None, settings=None
        )
        question = expected.get("question") or None
        try:
            rep = session.ask(question)
            report = rep.to_json()
        finally:
            closer = getattr(session, "close", None)
            if callable(closer):
                closer()
    except Exception as exc:  # one broken case must not stop the run
        error = f"{type(exc).__name__}: {exc}"
    if reports and report is not None:
        dest = Path(reports) / f"{path.parent.name}--{path.name}.json"
        report.get("budget", {}).pop("seconds", None)
        dest.write_text(json.dumps(report, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    out = score(report, expected)
    out.update(case=path.name, seconds=round(time.perf_counter() - t0, 2), error=error)
    if error:
        out["why"] = error
    return out


def _seed_home() -> None:
    home = Path(tempfile.mkdtemp(prefix="opsmate-evals-"))
    cache = home / ".cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx"
    if MODELS.is_dir():
        shutil.copytree(MODELS, cache)
    os.environ["HOME"] = str(home)
    for var in ("OPSMATE_CONFIG_DIR", "OPSMATE_DATA_DIR", "OPSMATE_CACHE_DIR"):
        os.environ[var] = str(home / var.lower())


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    passed = sum(r["passed"] for r in rows)
    complete = [r for r in rows if r["status"] == "complete"]
    wrong = sum(1 for r in complete if not r["passed"])
    partial_faults = [r for r in rows if r["fault"] and r["status"] != "complete"] if rows else []
    return {
        "cases": n,
        "passed": passed,
        "complete": len(complete),
        "confidently_wrong": wrong,
        "precision_complete": round((len(complete) - wrong) / len(complete), 3)
        if complete
        else None,
        "partial_faults": len(partial_faults),
        "partial_top3": sum(1 for r in partial_faults if r.get("top3")),
        "seconds_median": statistics.median([r["seconds"] for r in rows]) if rows else None,
        "seconds_max": max((r["seconds"] for r in rows), default=None),
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("sets", nargs="*", help="set names (evals/<name>, peer-dev) or case folders")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--fails", action="store_true", help="list every failing case")
    ap.add_argument("--out", help="write the rows and summaries as JSON")
    ap.add_argument("--compare", help="a previous --out file: print cases whose result changed")
    ap.add_argument("--reports", help="write every report (JSON, without timings) into this folder")
    a = ap.parse_args()
    all_sets = set_dirs()
    for name in HELD:
        if name in a.sets and (ROOT / "evals" / name).is_dir():
            all_sets[name] = sorted(
                p.parent for p in (ROOT / "evals" / name).glob("*/expected.yaml")
            )
    chosen: dict[str, list[Path]] = {}
    for name in a.sets or list(all_sets):
        key = Path(name).name if name not in all_sets else name
        if key in all_sets:
            chosen[key] = all_sets[key]
        elif (Path(name) / "expected.yaml").is_file():
            chosen.setdefault("cases", []).append(Path(name).resolve())
        else:
            print(f"unknown set {name!r}; sets: {', '.join(all_sets)}", file=sys.stderr)
            return 2
    _seed_home()
    jobs = [(s, p) for s, paths in chosen.items() for p in paths]
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        if a.reports:
            Path(a.reports).mkdir(parents=True, exist_ok=True)
        work = [(str(p), a.reports) for _, p in jobs]
        results = list(pool.map(_run_one, work, chunksize=1))
    by_set: dict[str, list[dict[str, Any]]] = {}
    for (s, _), r in zip(jobs, results, strict=True):
        r["set"] = s
        by_set.setdefault(s, []).append(r)
    summaries = {s: summarize(rows) for s, rows in by_set.items()}
    summaries["ALL"] = summarize(results)
    head = ("set", "pass", "CW", "prec(complete)", "partial top3", "median s")
    print(f"{head[0]:14s} {head[1]:>9s} {head[2]:>4s} {head[3]:>15s} {head[4]:>13s} {head[5]:>9s}")
    for s, m in summaries.items():
        prec = "-" if m["precision_complete"] is None else f"{m['precision_complete']:.3f}"
        print(
            f"{s:14s} {m['passed']:>4d}/{m['cases']:<4d} {m['confidently_wrong']:>4d} {prec:>15s} "
            f"{m['partial_top3']:>6d}/{m['partial_faults']:<6d} {m['seconds_median'] or 0:>9.2f}"
        )
    if a.fails:
        for r in results:
            if not r["passed"]:
                cw = "CW " if r["status"] == "complete" else "   "
                print(f"FAIL {cw}{r['set']}/{r['case']}: {r['why'][:160]}")
    if a.compare:
        old = {(r["set"], r["case"]): r for r in json.loads(Path(a.compare).read_text())["rows"]}
        for r in results:
            o = old.get((r["set"], r["case"]))
            if o is not None and (o["passed"], o["status"]) != (r["passed"], r["status"]):
                was = f"{o['status']}/{'pass' if o['passed'] else 'fail'}"
                now = f"{r['status']}/{'pass' if r['passed'] else 'fail'}"
                print(f"CHANGED {r['set']}/{r['case']}: {was} -> {now}  {r['why'][:120]}")
    print(f"({time.time() - t0:.0f} s)")
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(
            json.dumps({"summaries": summaries, "rows": results}, indent=1, ensure_ascii=False)
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
