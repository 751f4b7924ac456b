"""A diagnosis in a crowded namespace against the same incident alone (issue 19 item 5).

Two bundles are written under ``/tmp/opsmate-scale/`` from the demo incident
``src/opsmate/data/demo/01-pool-exhaustion``:

- ``alone``: the incident as shipped;
- ``crowded``: the same incident plus, in its namespace, 100 healthy services
  (Deployment, ReplicaSet, Service, 20 Running/Ready pods each: 2,000 pods), cloned
  from the incident's healthy ``inventory-service`` objects, and 200,000 INFO access-log
  records of those services spread over the bundle window, beside the incident's own.

Each bundle is diagnosed by a fresh ``opsmate diagnose --bundle DIR --model none
--json`` process (what a user waits for, imports included), alternating, ``--repeat``
times; per run: wall seconds, CPU seconds and peak RSS of that process (``wait4``).
Printed: best wall / CPU and peak RSS per bundle, the crowded / alone ratio (goal:
at most 4x), and whether both reports name the same root cause. With ``--before REF``
(default :data:`before.BEFORE_REF`) the same pair is run with that commit's code
beside it (``before.py``). ``--profile`` writes a cProfile of one crowded run to
``/tmp/opsmate-scale/crowded.prof`` and prints its top functions.

    .venv/bin/python benchmarks/bench_diagnose_scale.py [--repeat 2] [--before REF]

Writes ``benchmarks/results/diagnose_scale.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from before import BEFORE_REF, cli, env_for, source_tree

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "src" / "opsmate" / "data" / "demo" / "01-pool-exhaustion"
RESULTS = Path(__file__).resolve().parent / "results"
WORK = Path("/tmp/opsmate-scale")
TEMPLATE = "inventory-service"  # a healthy service of the incident, cloned
SERVICES, PODS_PER_SERVICE, LOG_RECORDS = 100, 20, 200_000


def _docs(path: Path) -> list[dict[str, Any]]:
    import yaml

    return [d for d in yaml.safe_load_all(path.read_text("utf-8")) if d]


def _clone(doc: dict[str, Any], name: str) -> dict[str, Any]:
    """``doc`` with the template service's name replaced everywhere by ``name``."""
    return json.loads(json.dumps(doc).replace(TEMPLATE, name))  # type: ignore[no-any-return]


def _append(path: Path, docs: list[dict[str, Any]]) -> None:
    import yaml

    with path.open("a", encoding="utf-8") as fh:
        for d in docs:
            fh.write("---\n")
            yaml.safe_dump(d, fh, sort_keys=False)


def write_crowded(dest: Path, seed: int = 19) -> dict[str, int]:
    """The crowded bundle (see the module docstring); returns what was added."""
    rnd = random.Random(seed)
    shutil.copytree(DEMO, dest)
    k8s = dest / "k8s"
    pick = {
        kind: next(d for d in _docs(k8s / f"{kind}.yaml") if TEMPLATE in d["metadata"]["name"])
        for kind in ("pods", "deployments", "replicasets", "services")
    }
    pods, deps, rss, svcs = [], [], [], []
    names = [f"catalog-{i:03d}" for i in range(SERVICES)]
    for i, name in enumerate(names):
        deps.append(_clone(pick["deployments"], name))
        svcs.append(_clone(pick["services"], name))
        rs = _clone(pick["replicasets"], name)
        rss.append(rs)
        for j in range(PODS_PER_SERVICE):
            pod = _clone(pick["pods"], name)
            meta = pod["metadata"]
            meta["name"] = f"{rs['metadata']['name']}-{i:03d}{j:02d}"
            meta["uid"] = f"{rnd.getrandbits(128):032x}"
            pod.setdefault("status", {})["podIP"] = f"10.{44 + i // 250}.{i % 250}.{j + 10}"
            pods.append(pod)
        for spec_doc in (deps[-1], rss[-1]):
            spec = spec_doc.get("spec", {})
            if "replicas" in spec:
                spec["replicas"] = PODS_PER_SERVICE
            st = spec_doc.setdefault("status", {})
            for key in ("replicas", "readyReplicas", "availableReplicas", "updatedReplicas"):
                if key in st:
                    st[key] = PODS_PER_SERVICE
    _append(k8s / "pods.yaml", pods)
    _append(k8s / "deployments.yaml", deps)
    _append(k8s / "replicasets.yaml", rss)
    _append(k8s / "services.yaml", svcs)

    import yaml

    meta = yaml.safe_load((dest / "bundle.yaml").read_text("utf-8"))
    t0 = datetime.fromisoformat(str(meta["window"]["from"]))
    t1 = datetime.fromisoformat(str(meta["window"]["to"]))
    span = (t1 - t0).total_seconds()
    own = (dest / "logs.ndjson").read_text("utf-8").splitlines()
    lines: list[tuple[datetime, str]] = [
        (datetime.fromisoformat(json.loads(x)["@timestamp"]), x) for x in own if x.strip()
    ]
    paths = ["/api/v1/items/{}", "/api/v1/catalog/{}", "/healthz", "/api/v1/search"]
    for k in range(LOG_RECORDS):
        t = t0 + timedelta(seconds=span * k / LOG_RECORDS)
        i = rnd.randrange(SERVICES)
        path = rnd.choice(paths).format(rnd.randint(1, 99999))
        rec = {
            "@timestamp": t.isoformat(timespec="milliseconds"),
            "message": f"GET {path} 200 {rnd.randint(2, 80)}ms",
            "service": names[i],
            "environment": "test",
            "level": "info",
            "pod": pods[i * PODS_PER_SERVICE + rnd.randrange(PODS_PER_SERVICE)]["metadata"]["name"],
            "namespace": "shop",
            "trace_id": f"{rnd.getrandbits(128):032x}",
            "logger": "uvicorn.access",
        }
        lines.append((t, json.dumps(rec)))
    lines.sort(key=lambda x: x[0])
    (dest / "logs.ndjson").write_text("\n".join(x for _, x in lines) + "\n", "utf-8")
    return {"pods_added": len(pods), "services_added": SERVICES, "log_records_added": LOG_RECORDS}


def timed_run(bundle: Path, src: Path | None, env: dict[str, str]) -> dict[str, Any]:
    """One fresh ``opsmate diagnose`` process: wall, its own CPU and peak RSS (``os.wait4``),
    status and root cause."""
    cmd = [*cli(), "diagnose", "--bundle", str(bundle), "--model", "none", "--json"]
    out_path = WORK / "out.json"
    err_path = WORK / "err.txt"
    t0 = time.perf_counter()
    with out_path.open("w") as out, err_path.open("w") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env={**env_for(src), **env})
        _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    row: dict[str, Any] = {
        "wall_s": round(wall, 2),
        "cpu_s": round(ru.ru_utime + ru.ru_stime, 2),
        "peak_rss_mib": round(ru.ru_maxrss / 1024),
        "exit": os.waitstatus_to_exitcode(status),
    }
    try:
        report = json.loads(out_path.read_text("utf-8"))
    except ValueError:
        row["error"] = err_path.read_text("utf-8")[-1500:]
        return row
    row["status"] = report.get("status")
    row["report_seconds"] = (report.get("budget") or {}).get("seconds")
    row["root_cause"] = _root_cause(report)
    return row


def _root_cause(report: dict[str, Any]) -> str:
    for key in ("root_cause", "conclusion", "answer", "summary"):
        v = report.get(key)
        if isinstance(v, dict):
            v = v.get("statement") or v.get("text") or v.get("summary") or json.dumps(v)
        if v:
            return str(v)[:200]
    return ""


PROFILE_ENTRY = """\
import cProfile, sys, threading
from opsmate.cli import main

OUT = sys.argv.pop(1)
_run = threading.Thread.run


def run(self):  # the diagnosis runs in a worker thread: profile every thread
    prof = cProfile.Profile()
    prof.enable()
    try:
        _run(self)
    finally:
        prof.disable()
        prof.dump_stats(f"{OUT}.{self.name}")


threading.Thread.run = run
main_prof = cProfile.Profile()
main_prof.enable()
try:
    main()
except SystemExit:
    pass
finally:
    main_prof.disable()
    main_prof.dump_stats(OUT + ".main")
"""


def profile_crowded(bundle: Path, env: dict[str, str]) -> str:
    """cProfile of one crowded diagnosis (this tree, every thread): top functions by own time."""
    import io
    import pstats

    entry = WORK / "diagnose_entry.py"
    entry.write_text(PROFILE_ENTRY, "utf-8")
    prof = WORK / "crowded.prof"
    subprocess.run(
        [
            sys.executable,
            str(entry),
            str(prof),
            "diagnose",
            "--bundle",
            str(bundle),
            "--model",
            "none",
            "--json",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env},
    )
    files = sorted(str(p) for p in WORK.glob("crowded.prof.*"))
    if not files:
        return "(no profile written)"
    buf = io.StringIO()
    stats: pstats.Stats | None = None
    for f in files:  # a daemon thread cut off at exit may leave an empty file
        try:
            if stats is None:
                stats = pstats.Stats(f, stream=buf)
            else:
                stats.add(f)
        except (EOFError, ValueError, TypeError):
            continue
    if stats is None:
        return "(no readable profile)"
    stats.sort_stats("tottime").print_stats(40)
    return f"profiles: {', '.join(Path(f).name for f in files)}\n{buf.getvalue()}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--before", default=BEFORE_REF, help="commit for the before column, or none")
    ap.add_argument("--profile", action="store_true", help="cProfile one crowded run")
    args = ap.parse_args()
    if WORK.exists():
        shutil.rmtree(WORK)
    WORK.mkdir(parents=True)
    alone, crowded = WORK / "alone", WORK / "crowded"
    shutil.copytree(DEMO, alone)
    t0 = time.perf_counter()
    added = write_crowded(crowded)
    print(f"wrote {crowded} in {time.perf_counter() - t0:.1f} s: {added}", file=sys.stderr)
    env = {"OPSMATE_CACHE_DIR": str(WORK / "cache"), "OPSMATE_DATA_DIR": str(WORK / "data")}
    src = source_tree(args.before)
    trees: dict[str, Path | None] = {"after": None}
    if src is not None:
        trees["before"] = src
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {
        t: {"alone": [], "crowded": []} for t in trees
    }
    for path in trees.values():  # untimed: build the bundle runbook index caches
        timed_run(alone, path, env)
    for _ in range(args.repeat):
        for tree, path in trees.items():
            for label, bundle in (("alone", alone), ("crowded", crowded)):
                row = timed_run(bundle, path, env)
                runs[tree][label].append(row)
                print(f"{tree:<6} {label:<8} {row}", file=sys.stderr)
    summary: dict[str, Any] = {}
    for tree, by in runs.items():
        s: dict[str, Any] = {}
        for label, rows in by.items():
            ok = [r for r in rows if "error" not in r]
            s[label] = {
                "best_wall_s": min((r["wall_s"] for r in ok), default=None),
                "best_cpu_s": min((r["cpu_s"] for r in ok), default=None),
                "peak_rss_mib": max((r["peak_rss_mib"] for r in ok), default=None),
                "status": ok[0]["status"] if ok else None,
                "root_cause": ok[0]["root_cause"] if ok else None,
                "errors": [r["error"] for r in rows if "error" in r][:1],
            }
        a, c = s["alone"], s["crowded"]
        if a["best_wall_s"] and c["best_wall_s"]:
            s["ratio_wall"] = round(c["best_wall_s"] / a["best_wall_s"], 2)
            s["ratio_cpu"] = round(c["best_cpu_s"] / a["best_cpu_s"], 2)
        s["same_root_cause"] = a["root_cause"] == c["root_cause"]
        summary[tree] = s
    result = {
        "before_ref": args.before if src is not None else None,
        "repeat": args.repeat,
        "added": added,
        "loadavg": os.getloadavg(),
        "runs": runs,
        "summary": summary,
    }
    if args.profile:
        result["profile_top"] = profile_crowded(crowded, env)
        print(result["profile_top"])
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "diagnose_scale.json").write_text(json.dumps(result, indent=1))
    _print(result)
    return 0


def _print(r: dict[str, Any]) -> None:
    print(f"diagnose --model none, fresh process, best of {r['repeat']}; crowded = the incident "
          f"+ {r['added']['pods_added']} healthy pods in {r['added']['services_added']} services "
          f"+ {r['added']['log_records_added']} INFO records")  # fmt: skip
    print(f"{'code':<8}{'bundle':<9}{'wall s':>8}{'CPU s':>8}{'RSS MiB':>9}  status")
    for tree, s in r["summary"].items():
        label = tree if tree == "after" else f"{tree} ({r['before_ref']})"
        for b in ("alone", "crowded"):
            x = s[b]
            if x["best_wall_s"] is None:
                print(f"{label:<8}{b:<9}  failed: {(x['errors'] or [''])[0][-300:]}")
                continue
            print(f"{label:<8}{b:<9}{x['best_wall_s']:>8.2f}{x['best_cpu_s']:>8.2f}"
                  f"{x['peak_rss_mib']:>9}  {x['status']}")  # fmt: skip
        if "ratio_wall" in s:
            print(f"{label:<8}crowded / alone: {s['ratio_wall']}x wall, {s['ratio_cpu']}x CPU "
                  f"(goal <= 4x); same root cause: {s['same_root_cause']}")  # fmt: skip
    print(f"(results in {RESULTS / 'diagnose_scale.json'})")


if __name__ == "__main__":
    sys.exit(main())
