"""Sources down, slow or hanging (issue 24 §2): wall time of each case, end to end.

    .venv/bin/python benchmarks/bench_sources_down.py [--timeout 5] [--quick]

Starts loopback servers (a minimal healthy Prometheus, one that refuses, one that accepts and
never answers, one that drips a byte every 0.5 s, one that answers HTTP 500) and runs
the real ``opsmate`` console script against each configuration in a fresh process,
printing the command, its exit code, the wall time and the time-out it must keep to (the
configured source ``timeout`` + 2 s, per hanging call), and which sources the report
names. ``base s`` is the same command with every source refusing (process start-up,
imports and a quick failure: seconds on a loaded 2-core machine), and ``hang s`` the
wall time beyond it: what the hanging source cost, which the limit bounds. The Ctrl-C
case sends SIGINT to ``opsmate diagnose`` while its call hangs and measures SIGINT ->
exit. Writes ``benchmarks/results/sources_down.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OPSMATE = str(REPO / ".venv" / "bin" / "opsmate")
RESULTS = REPO / "benchmarks" / "results" / "sources_down.json"
QUESTION = "order-service 5xx errors since 05:38"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    mode = "ok"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        if self.mode == "drip":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            with contextlib.suppress(OSError):
                for _ in range(100000):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.5)
            return
        if self.mode == "500":
            body, status = b"internal error\n", 500
        elif "/api/v1/alerts" in self.path:
            body, status = b'{"status":"success","data":{"alerts":[]}}', 200
        elif "/api/v1/query" in self.path:
            body, status = b'{"status":"success","data":{"resultType":"vector","result":[]}}', 200
        else:
            body, status = b'{"status":"success","data":[]}', 200
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextlib.contextmanager
def serve(mode: str) -> Iterator[str]:
    handler = type(f"H_{mode}", (_Handler,), {"mode": mode})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


CONNECTED = threading.Event()  # set when the silent server accepts a connection


@contextlib.contextmanager
def silent() -> Iterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(sock.accept()[0])
                CONNECTED.set()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        stop.set()
        for c in held:
            c.close()
        sock.close()


def refused() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def config(folder: Path, name: str, blocks: dict[str, Any]) -> Path:
    path = folder / f"{name}.json"
    body = {"model": "none", "default_environment": "test", "embedding": {"backend": "none"},
            "environments": {"test": blocks}}  # fmt: skip
    path.write_text(json.dumps(body))
    return path


def run(cfg: Path, argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    began = time.monotonic()
    proc = subprocess.run(
        [OPSMATE, "--config", str(cfg), *argv], capture_output=True, text=True, env=env, timeout=300
    )
    took = time.monotonic() - began
    named = ""
    with contextlib.suppress(ValueError, KeyError):
        named = json.loads(proc.stdout)["summary"].split("; nothing is concluded")[0]
    if not named:
        named = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    return {"exit": proc.returncode, "seconds": round(took, 2), "says": named[:200]}


def ctrl_c(cfg: Path, env: dict[str, str], after: float) -> dict[str, Any]:
    """SIGINT ``after`` seconds once the call reached the silent server (it hangs there)."""
    CONNECTED.clear()
    proc = subprocess.Popen(
        [OPSMATE, "--config", str(cfg), "diagnose", QUESTION, "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    CONNECTED.wait(120)
    time.sleep(after)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    return {"exit": proc.returncode, "seconds": round(time.monotonic() - sent, 2), "says": ""}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timeout", type=float, default=5.0, help="each source's timeout (s)")
    ap.add_argument("--quick", action="store_true", help="timeout 2 s")
    args = ap.parse_args()
    t = 2.0 if args.quick else args.timeout
    rows: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        serve("ok") as prom_ok,
        serve("drip") as drip,
        serve("500") as err500,
        silent() as hole,
    ):
        folder = Path(tmp)
        env = {**os.environ, "HOME": str(folder), "OPSMATE_DATA_DIR": str(folder / "data"),
               "OPSMATE_CONFIG_DIR": str(folder / "cfg")}  # fmt: skip
        am_down, es_down, prom_down = refused(), refused(), refused()
        diag = ["diagnose", QUESTION, "--service", "order-service", "--json"]
        cases = [
            ("Prometheus up, Alertmanager refused", {"prometheus": {"url": prom_ok},
             "alertmanager": {"url": am_down}}, diag, None),
            ("everything refused (Prometheus, Elasticsearch, Alertmanager)",
             {"prometheus": {"url": prom_down}, "elasticsearch": {"url": es_down},
              "alertmanager": {"url": am_down}}, diag, None),
            ("Prometheus silent (accepts, never answers)",
             {"prometheus": {"url": hole, "timeout": t}}, diag, t),
            ("Alertmanager dripping 1 byte / 0.5 s: diagnose",
             {"prometheus": {"url": prom_ok}, "alertmanager": {"url": drip, "timeout": t}},
             diag, t),
            ("Alertmanager dripping: alerts", {"alertmanager": {"url": drip, "timeout": t}},
             ["alerts"], t),
            ("Alertmanager dripping: diagnose --alert",
             {"alertmanager": {"url": drip, "timeout": t}}, ["diagnose", "--alert", "X"], t),
            ("Loki answering 500", {"loki": {"url": err500, "timeout": t}}, diag, None),
            ("Loki dripping + Prometheus silent (two hanging sources)",
             {"loki": {"url": drip, "timeout": t}, "prometheus": {"url": hole, "timeout": t}},
             diag, 2 * t),
        ]  # fmt: skip
        for title, blocks, argv, limit in cases:
            cfg = config(folder, f"c{len(rows)}", blocks)
            row = {"case": title, "argv": " ".join(argv), **run(cfg, argv, env)}
            row["limit_s"] = None if limit is None else limit + 2.0
            if limit is not None:  # the same command, every source refusing at once
                down = {k: {**v, "url": refused()} for k, v in blocks.items()}
                base = run(config(folder, f"b{len(rows)}", down), argv, env)["seconds"]
                row["base_s"], row["hang_s"] = base, round(row["seconds"] - base, 2)
            rows.append(row)
        cfg = config(folder, "ctrlc", {"prometheus": {"url": hole, "timeout": 60}})
        row = {"case": "Ctrl-C while Prometheus hangs (timeout 60)", "argv": "diagnose + SIGINT",
               **ctrl_c(cfg, env, after=1.0), "limit_s": 2.0}  # fmt: skip
        row["hang_s"] = row["seconds"]  # SIGINT -> exit
        rows.append(row)
    print(f"{'case':<58} {'exit':>4} {'wall s':>7} {'base s':>6} {'hang s':>6} {'limit s':>7}"
          "  report / error")  # fmt: skip
    for r in rows:
        lim = "" if r["limit_s"] is None else f"{r['limit_s']:.1f}"
        base = f"{r['base_s']:.2f}" if "base_s" in r else ""
        hang = f"{r['hang_s']:.2f}" if "hang_s" in r else ""
        print(f"{r['case']:<58} {r['exit']:>4} {r['seconds']:>7.2f} {base:>6} {hang:>6} {lim:>7}"
              f"  {r['says'][:80]}")  # fmt: skip
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"timeout_s": t, "cases": rows}, indent=2) + "\n")
    bad = [r for r in rows if r["limit_s"] is not None and r["hang_s"] > r["limit_s"]]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
