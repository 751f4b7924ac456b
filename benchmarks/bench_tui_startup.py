"""Startup of ``opsmate tui``: process start to first paint, and to an open session.

    .venv/bin/python benchmarks/bench_tui_startup.py            # 7 runs of each
    .venv/bin/python benchmarks/bench_tui_startup.py --quick    # 3 runs of each

Each run starts ``opsmate tui --demo --model none`` in a fresh process on a real
pseudo-terminal (120x40), with ``OPSMATE_TUI_STARTUP_PROBE`` set: the app writes the
wall-clock times at which it was constructed, first painted (``call_after_refresh``
after the main screen mounted) and, for the second series, when its session (bundle,
runbook search, executor) was open, then exits. Times are measured from just before
the process is spawned, so they include the interpreter's start and every import.
The goal is a first paint under 1 s without a model loaded. Results go to
``benchmarks/results/tui_startup.json``.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OPSMATE = REPO / ".venv" / "bin" / "opsmate"
GOAL_S = 1.0


def _drain(fd: int) -> None:
    """Read the app's output so it never blocks on a full pty buffer."""
    while True:
        try:
            if not os.read(fd, 65536):
                return
        except OSError:
            return


def one_run(until: str, workdir: Path, timeout: float = 60.0) -> dict[str, Any]:
    """Start the TUI once on a pty; return its probe times relative to the spawn."""
    probe = workdir / f"probe-{time.monotonic_ns()}.json"
    env = dict(os.environ)
    env.update(
        OPSMATE_TUI_STARTUP_PROBE=str(probe),
        OPSMATE_TUI_STARTUP_PROBE_UNTIL=until,
        OPSMATE_DATA_DIR=str(workdir / "data"),
        OPSMATE_CONFIG_DIR=str(workdir / "config"),
        TERM="xterm-256color",
        COLUMNS="120",
        LINES="40",
    )
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    reader = threading.Thread(target=_drain, args=(master,), daemon=True)
    reader.start()
    command = [str(OPSMATE) if OPSMATE.exists() else "opsmate", "tui", "--demo", "--model", "none"]
    t0 = time.time()
    proc = subprocess.Popen(
        command, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True
    )
    os.close(slave)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    t_exit = time.time()
    os.close(master)
    reader.join(timeout=2)
    times = json.loads(probe.read_text()) if probe.exists() else {}
    out = {k: round(v - t0, 4) for k, v in times.items()}
    out["process_exit"] = round(t_exit - t0, 4)
    out["rc"] = proc.returncode
    return out


def summarize(values: list[float]) -> dict[str, float]:
    return {
        "min": round(min(values), 3),
        "median": round(statistics.median(values), 3),
        "max": round(max(values), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="3 runs of each")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "tui_startup.json")
    args = parser.parse_args(argv)
    runs = 3 if args.quick else args.runs
    series: dict[str, list[dict[str, Any]]] = {"first_paint": [], "session_ready": []}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        one_run("first_paint", work)  # warm the file cache once; not counted
        for until in series:
            for _ in range(runs):
                series[until].append(one_run(until, work))
    rows: dict[str, dict[str, float]] = {}
    for key, source in (
        ("app_created", "first_paint"),
        ("first_paint", "first_paint"),
        ("session_ready", "session_ready"),
        ("process_exit", "first_paint"),
    ):
        values = [r[key] for r in series[source] if key in r]
        if values:
            rows[key] = summarize(values)
    print(f"opsmate tui --demo --model none, {runs} runs each, seconds from spawn")
    print(f"{'event':<16} {'min':>7} {'median':>7} {'max':>7}")
    for key, row in rows.items():
        print(f"{key:<16} {row['min']:>7.3f} {row['median']:>7.3f} {row['max']:>7.3f}")
    paint = rows.get("first_paint", {}).get("median")
    verdict = "n/a" if paint is None else ("met" if paint < GOAL_S else "NOT met")
    print(f"goal: first paint < {GOAL_S:.1f} s -> {verdict}")
    result = {
        "command": "opsmate tui --demo --model none",
        "runs": runs,
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "summary": rows,
        "goal_first_paint_s": GOAL_S,
        "goal_met": paint is not None and paint < GOAL_S,
        "raw": series,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if paint is not None else 1


if __name__ == "__main__":
    raise SystemExit(main())
