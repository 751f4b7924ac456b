"""Log tools over replayed bundles: log_stats / search_logs at 10k / 100k / 200k records,
template mining, and the engines behind them, next to the previous implementation.

    .venv/bin/python benchmarks/bench_logs.py [--sizes 10000 100000 200000] [--no-old]
        [--goal-only] [--repeat 3] [--before REF]

First, the speed goal of issue 19 (item 5): ``log_stats`` over 150,001 records costs at
most 3x a bare ``json.loads`` loop over the same ``logs.ndjson``. Measured side by side:
this tree ("after") and, in a subprocess, commit ``--before`` ("before", default
:data:`before.BEFORE_REF`; ``HEAD`` for the last commit, ``none`` to skip), each with its
own bare loop, best CPU seconds of ``--repeat`` rounds (each round: the bare loop, a fresh
``load_bundle``, the first ``log_stats`` call). Printed: the bare baseline, before, after,
and each one's ratio to its bare loop (also with the load counted).

Each size is a synthetic bundle (JSON-in-message access records with durations and
status, unleveled text, logfmt, leveled text, a traceback, rare errors) written to a
temp dir. Reported per size, wall seconds and CPU seconds of this process (the machine
is shared; CPU time is the steadier number):

- ``log_stats`` new: first call (parses every line, kept per bundle) and second call;
  old: the previous replay path (field filter + ``normalize_message`` grouping), kept
  below as it was;
- ``search_logs`` for a quoted phrase and for ``level=error`` (new) vs the old filter;
- mining: Drain (with its message-shape cache) over every parsed message vs the old
  masking over every raw message (as each grouped them);
- engines: JSON-in-message parsed with ``json`` vs ``orjson``, and DuckDB counting levels
  straight from the NDJSON file (``read_ndjson_auto`` + ``json_extract_string``).

Writes ``benchmarks/results/logs.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from before import BEFORE_REF, WORKER_FLAG, run_worker, source_tree

from opsmate.timeparse import format_time, parse_time
from opsmate.tools.base import CallContext, Constraints
from opsmate.tools.bundle import load_bundle

RESULTS = Path(__file__).resolve().parent / "results"
T0 = datetime(2031, 4, 2, 8, 0, tzinfo=UTC)

# --------------------------------------------------------------------------- data


def write_bundle(root: Path, n: int, seed: int = 7) -> Path:
    """A bundle of ``n`` records over one hour."""
    rnd = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    step = 3600.0 / n
    paths = ["/api/cart/{}", "/api/items/{}", "/healthz", "/api/pay"]
    with (root / "logs.ndjson").open("w") as fh:
        for i in range(n):
            t = (T0 + timedelta(seconds=i * step)).isoformat().replace("+00:00", "Z")
            base = {
                "@timestamp": t,
                "service": "shop",
                "environment": "test",
                "pod": "shop-7d9f8c6b5-x2x1q",
                "namespace": "retail",
            }
            r = rnd.random()
            if i == n * 3 // 4:
                needle = "could not acquire connection from pool after 30s"
                msg = json.dumps(
                    {"level": "ERROR", "message": needle, "path": "/api/pay", "status": 500}
                )
            elif r < 0.7:
                p = rnd.choice(paths).format(rnd.randint(1, 9999))
                slow = i > n * 0.6 and p.startswith("/api/pay")
                msg = json.dumps({
                    "timestamp": t, "level": "INFO", "message": "request served", "path": p,
                    "method": "GET", "status": 503 if slow and r < 0.05 else 200,
                    "response_time_ms": rnd.randint(900, 1500) if slow else rnd.randint(5, 90),
                    "request_id": f"req-{rnd.getrandbits(40):x}",
                })  # fmt: skip
            elif r < 0.8:
                msg = f"worker {rnd.randint(1, 8)} flushed batch {i} in {rnd.randint(2, 40)}ms"
            elif r < 0.87:
                keys, ms = rnd.randint(1, 500), rnd.randint(1, 30)
                msg = f'time={t} level=info msg="cache refill" keys={keys} duration={ms}ms'
            elif r < 0.95:
                user = rnd.randint(1, 99999)
                msg = f"2031-04-02 08:00:00,{i % 1000:03d} - INFO - user {user} signed in"
            elif r < 0.999:
                msg = f"WARN slow downstream call to inventory-api took {rnd.randint(300, 900)}ms"
            else:
                msg = "Connection refused while talking to ledger-db:5432"
            fh.write(json.dumps({**base, "message": msg}) + "\n")
    (root / "bundle.yaml").write_text(
        "format: opsmate-bundle/v1\ntitle: bench\n"
        f'captured_at: "{format_time(T0 + timedelta(hours=1))}"\n'
        f'window: {{from: "{format_time(T0)}", to: "{format_time(T0 + timedelta(hours=1))}"}}\n'
        "environment: test\n"
    )
    return root


# ------------------------------------------------------------------ the previous implementation
# (as it was before log templates: kept here only to compare)

_OLD_MASKS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r'"(?:[^"\\]|\\.)*"'), '"<str>"'),
    (re.compile(r"(?<![A-Za-z0-9])'(?:[^'\\]|\\.)*'"), "'<str>'"),
    (
        re.compile(
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
        ),
        "<uuid>",
    ),
    (
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
        ),
        "<ts>",
    ),
    (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b"), "<ip>"),
    (re.compile(r"\b(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}\b"), "<ip>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<id>"),
    (re.compile(r"(?<=[a-z0-9])-[a-z0-9]{8,10}-[a-z0-9]{5}\b"), "-<id>"),
    (re.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b"), "<id>"),
    (re.compile(r"\b(?=[A-Za-z0-9_]*\d)(?=[A-Za-z0-9_]*[A-Za-z])[A-Za-z0-9_]{12,}\b"), "<id>"),
    (
        re.compile(r"\b\d+(?:\.\d+)?\s?(?:ns|us|µs|ms|s|sec|secs|seconds|m|min|mins|h)\b"),
        "<dur>",
    ),
    (re.compile(r"(?<![A-Za-z])\d+(?:\.\d+)?(?![A-Za-z])"), "<num>"),
)


def old_normalize_message(msg: str) -> str:
    first = msg.strip().splitlines()[0] if msg.strip() else ""
    for pattern, repl in _OLD_MASKS:
        first = pattern.sub(repl, first)
    return re.sub(r"\s+", " ", first).strip()[:300]


def _get(rec: Mapping[str, Any], name: str) -> Any:
    if name in rec:
        return rec[name]
    cur: Any = rec
    for part in name.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return None
        cur = cur[part]
    return cur


def old_log_stats(records: Iterable[Mapping[str, Any]], top: int = 20) -> dict[str, Any]:
    total = 0
    by_level: dict[str, int] = {}
    groups: dict[str, dict[str, Any]] = {}
    for rec in records:
        total += 1
        raw = _get(rec, "level")
        level = str(raw).lower() if raw not in (None, "") else "unknown"
        by_level[level] = by_level.get(level, 0) + 1
        msg = str(_get(rec, "message") or "")
        pattern = old_normalize_message(msg)
        new = {"pattern": pattern, "count": 0, "levels": {}, "first": None, "last": None}
        g = groups.setdefault(pattern, {**new, "example": msg[:500]})
        g["count"] += 1
        g["levels"][level] = g["levels"].get(level, 0) + 1
        ts = parse_time(_get(rec, "@timestamp"))
        g["first"] = ts if g["first"] is None or ts < g["first"] else g["first"]
        g["last"] = ts if g["last"] is None or ts > g["last"] else g["last"]
    ranked = sorted(groups.values(), key=lambda g: (-g["count"], g["pattern"]))
    return {"total": total, "by_level": by_level, "distinct_messages": len(groups),
            "top_messages": ranked[:top]}  # fmt: skip


def _old_text(rec: Mapping[str, Any]) -> str:
    parts: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, Mapping):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif v is not None:
            parts.append(str(v))

    walk({k: v for k, v in rec.items() if k != "@timestamp"})
    return "\n".join(parts).lower()


def old_filter(b: Any, level: str | None = None, terms: list[str] | None = None) -> list[int]:
    d = b.replay.d
    start, end = d.meta.window_from, d.meta.window_to
    hits = []
    texts: dict[int, str] = {}
    for i, rec in enumerate(d.logs):
        ts = d.log_times[i]
        if ts < start or ts > end:
            continue
        if _get(rec, "environment") not in (None, "test"):
            continue
        if level is not None and str(_get(rec, "level") or "").lower() != level:
            continue
        if terms:
            text = texts.setdefault(i, _old_text(rec))
            if any(t not in text for t in terms):
                continue
        hits.append(i)
    hits.sort(key=lambda i: (d.log_times[i], d.log_lines[i]), reverse=True)
    return hits


# --------------------------------------------------------------------------- measuring


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def run_tool(b: Any, name: str, args: Any) -> Any:
    spec = {x.name: x for x in b.tool_specs()}[name]
    ctx = CallContext(call_id="bench", constraints=Constraints(), now=b.meta.captured_at,
                      deadline=time.monotonic() + 600)  # fmt: skip
    return spec.run(args, ctx)


def duckdb_levels(path: Path) -> dict[str, int] | None:
    try:
        import duckdb
    except ImportError:
        return None
    con = duckdb.connect()
    rows = con.execute(
        "WITH r AS (SELECT json_extract_string(json, '$.level') AS lv, "
        "json_extract_string(json, '$.message') AS msg "
        f"FROM read_json_objects('{path}', format='newline_delimited')) "
        "SELECT coalesce(lv, CASE WHEN json_valid(msg) THEN json_extract_string(msg, '$.level') "
        "END) AS level, count(*) FROM r GROUP BY level"
    ).fetchall()
    con.close()
    return {str(k): int(v) for k, v in rows}


GOAL_RECORDS = 150_001
GOAL_RATIO = 3.0


def bare_json_loads(path: Path) -> int:
    """The baseline: ``json.loads`` of every line of the file, nothing else."""
    n = 0
    with path.open("rb") as fh:
        for line in fh:
            json.loads(line)
            n += 1
    return n


def measure_goal(root: str, repeat: int) -> dict[str, float]:
    """Best CPU seconds over ``repeat`` rounds of: the bare loop over ``logs.ndjson``, a
    fresh ``load_bundle``, its first ``log_stats`` call. Imports only what the before
    commit also has (this runs in its subprocess too)."""
    from opsmate.tools import schemas as s

    path = Path(root)
    best = {"bare": float("inf"), "load": float("inf"), "log_stats": float("inf")}
    for _ in range(repeat):
        gc.collect()
        c = time.process_time()
        bare_json_loads(path / "logs.ndjson")
        best["bare"] = min(best["bare"], time.process_time() - c)
        gc.collect()
        c = time.process_time()
        b = load_bundle(path)
        best["load"] = min(best["load"], time.process_time() - c)
        c = time.process_time()
        run_tool(b, "log_stats", s.LogStatsArgs())
        best["log_stats"] = min(best["log_stats"], time.process_time() - c)
        del b
    return best


def goal(workdir: Path, repeat: int, before: str) -> dict[str, Any]:
    """The issue-19 goal, before and after side by side (see the module docstring)."""
    root = write_bundle(workdir / "goal", GOAL_RECORDS)
    rows: dict[str, Any] = {}
    src = source_tree(before)
    if src is not None:
        rows[f"before ({before})"] = run_worker(
            Path(__file__).resolve(), src, "goal", {"root": str(root), "repeat": repeat}
        )
    rows["after"] = measure_goal(str(root), repeat)
    print(f"goal (issue 19 item 5): log_stats over {GOAL_RECORDS:,} records <= {GOAL_RATIO:g}x "
          f"a bare json.loads loop over the same file; CPU seconds, best of {repeat}")  # fmt: skip
    print(
        "| code | bare json.loads | load_bundle | log_stats (first call) "
        "| log_stats / bare | (load + log_stats) / bare |"
    )
    print("|---|---|---|---|---|---|")
    for label, m in rows.items():
        m["ratio"] = m["log_stats"] / m["bare"]
        m["ratio_with_load"] = (m["load"] + m["log_stats"]) / m["bare"]
        print(f"| {label} | {m['bare']:.2f} | {m['load']:.2f} | {m['log_stats']:.2f} "
              f"| {m['ratio']:.2f}x | {m['ratio_with_load']:.2f}x |")  # fmt: skip
    if len(rows) == 2:
        b, a = rows[f"before ({before})"], rows["after"]
        print(f"after vs before: log_stats {b['log_stats'] / a['log_stats']:.2f}x faster, "
              f"load {b['load'] / a['load']:.2f}x faster")  # fmt: skip
    met = rows["after"]["ratio"] <= GOAL_RATIO
    print(f"goal {'met' if met else 'missed'}: {rows['after']['ratio']:.2f}x "
          f"(<= {GOAL_RATIO:g}x)\n")  # fmt: skip
    return rows


def bench(size: int, workdir: Path, old: bool) -> dict[str, Any]:
    from opsmate.loganalysis.parse import parse_record
    from opsmate.loganalysis.templates import TemplateMiner
    from opsmate.tools import schemas as s

    root = write_bundle(workdir / f"b{size}", size)
    row: dict[str, Any] = {"records": size}
    w, c, b = timed(lambda: load_bundle(root))
    row["load"] = (w, c)
    w, c, out = timed(lambda: run_tool(b, "log_stats", s.LogStatsArgs()))
    row["log_stats_first"] = (w, c)
    groups = out.data["top_messages"] + out.data.get("rare_errors", [])
    row["needle_found"] = any("acquire connection" in g["example"] and g.get("errors")
                              for g in groups)  # fmt: skip
    row["log_stats_again"] = timed(lambda: run_tool(b, "log_stats", s.LogStatsArgs()))[:2]
    q = s.SearchLogsArgs(query='"acquire connection"')
    row["search_phrase"] = timed(lambda: run_tool(b, "search_logs", q))[:2]
    row["search_level_error"] = timed(
        lambda: run_tool(b, "search_logs", s.SearchLogsArgs(level="error"))
    )[:2]
    messages = [str(r["message"]) for r in b.logs]
    parsed = [parse_record(r).message for r in b.logs]  # what log_stats mines
    miner = TemplateMiner()
    w, c, _ = timed(lambda: [miner.add(m) for m in parsed])
    row["mine_drain"] = (w, c)
    row["templates"] = len(miner)
    json_lines = [m for m in messages if m.startswith("{")]
    row["json_loads"] = timed(lambda: [json.loads(m) for m in json_lines])[:2]
    try:
        import orjson

        row["orjson_loads"] = timed(lambda: [orjson.loads(m) for m in json_lines])[:2]
    except ImportError:
        row["orjson_loads"] = None
    w, c, levels = timed(lambda: duckdb_levels(root / "logs.ndjson"))
    row["duckdb_levels"] = (w, c) if levels is not None else None
    if old:
        w, c, o = timed(lambda: old_log_stats(b.logs[i] for i in reversed(old_filter(b))))
        row["old_log_stats"] = (w, c)
        row["old_patterns"] = o["distinct_messages"]
        row["old_search_phrase"] = timed(lambda: old_filter(b, terms=["acquire connection"]))[:2]
        row["old_mine_masks"] = timed(lambda: {old_normalize_message(m) for m in messages})[:2]
    return row


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == WORKER_FLAG:  # the before column's process
        a = json.loads(sys.argv[3])
        print(json.dumps(measure_goal(a["root"], a["repeat"])))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 200_000])
    ap.add_argument("--no-old", action="store_true", help="skip the previous implementation")
    ap.add_argument("--goal-only", action="store_true", help="only the issue-19 goal")
    ap.add_argument("--repeat", type=int, default=3, help="rounds of the goal measurement")
    ap.add_argument("--before", default=BEFORE_REF, help="commit for the before column, or none")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        goal_rows = goal(Path(tmp), args.repeat, args.before)
        if args.goal_only:
            RESULTS.mkdir(exist_ok=True)
            (RESULTS / "logs_goal.json").write_text(json.dumps(goal_rows, indent=2))
            return
        for n in args.sizes:
            rows.append(bench(n, Path(tmp), not args.no_old))
            print(f"measured {n} records", file=sys.stderr)
    keys = [
        ("load", "bundle load (not log code)"),
        ("log_stats_first", "log_stats, first call"),
        ("log_stats_again", "log_stats, second call"),
        ("old_log_stats", "log_stats, previous"),
        ("search_phrase", 'search_logs "phrase"'),
        ("old_search_phrase", 'search_logs "phrase", previous'),
        ("search_level_error", "search_logs level=error"),
        ("mine_drain", "mining: Drain + shape cache (parsed messages)"),
        ("old_mine_masks", "mining: previous masks (raw messages)"),
        ("json_loads", "JSON-in-message: json"),
        ("orjson_loads", "JSON-in-message: orjson"),
        ("duckdb_levels", "DuckDB levels from NDJSON"),
    ]
    head = "| seconds (wall / cpu) | " + " | ".join(f"{r['records']:,}" for r in rows) + " |"
    print(head)
    print("|" + "---|" * (len(rows) + 1))
    for key, label in keys:
        cells = []
        for r in rows:
            v = r.get(key)
            cells.append("n/a" if not v else f"{v[0]:.2f} / {v[1]:.2f}")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print("| templates (Drain) / patterns (previous) | " + " | ".join(
        f"{r['templates']} / {r.get('old_patterns', 'n/a')}" for r in rows) + " |")  # fmt: skip
    print("| rare error found by log_stats | " + " | ".join(
        str(r["needle_found"]) for r in rows) + " |")  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "logs.json").write_text(json.dumps(rows, indent=2, default=str))
    (RESULTS / "logs_goal.json").write_text(json.dumps(goal_rows, indent=2))


if __name__ == "__main__":
    main()
