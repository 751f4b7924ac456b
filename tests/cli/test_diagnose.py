"""`opsmate diagnose` through the console script: output formats and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
OPSMATE = Path(sys.executable).parent / "opsmate"
MINI = REPO / "tests" / "agent" / "data" / "mini-bundle"


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(OPSMATE), *args], capture_output=True, text=True, timeout=timeout)


def test_demo_json_is_the_only_stdout_and_exits_0() -> None:
    started = time.monotonic()
    proc = run("diagnose", "--demo", "--json")
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["status"] == "complete" and report["root_cause"]["evidence"]
    assert report["budget"]["stopped_by"] in ("done", "max_steps")
    known = {e["id"] for e in report["evidence"]} | {r["id"] for r in report["runbooks"]}
    cited = set(report["root_cause"]["evidence"])
    for group in ("hypotheses", "facts", "next_steps"):
        for item in report[group]:
            cited |= set(item["evidence"])
    assert cited <= known
    assert "Traceback" not in proc.stderr
    print(f"diagnose --demo --json: {elapsed:.2f} s wall")


def test_markdown_and_plain_output() -> None:
    proc = run("diagnose", "--bundle", str(MINI), "--markdown")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# Diagnosis: ") and "## Root cause" in proc.stdout
    piped = run("diagnose", "--bundle", str(MINI))  # not a terminal: Markdown, no escape codes
    assert piped.returncode == 0 and "\x1b[" not in piped.stdout and "## Evidence" in piped.stdout


def test_question_flags_and_tar_gz(tmp_path: Path) -> None:
    archive = tmp_path / "mini.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(MINI, arcname="mini-bundle")
    proc = run(
        "diagnose",
        "why does cart-service fail? test environment only",
        "--bundle",
        str(archive),
        "--service",
        "cart-service",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["question"].startswith("why does cart-service fail")
    assert report["constraints"]["environment"] == "test"
    assert report["constraints"]["services"] == ["cart-service"]


def test_partial_is_exit_1_with_the_report_printed() -> None:
    proc = run("diagnose", "--bundle", str(MINI), "--max-steps", "1", "--json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["status"] == "partial" and report["budget"]["stopped_by"] == "max_steps"
    assert report["unfinished"]
    assert "partial" in proc.stderr


def _write_slow_script(script: Path) -> None:
    """A scripted model that takes 60 s to answer its first (and only) reply."""
    script.write_text(
        yaml.safe_dump(
            {
                "delay": 60,
                "replies": [
                    {"action": "call_tool", "tool": "list_alerts", "args": {}, "reason": "slow"}
                ],
            }
        ),
        encoding="utf-8",
    )


def test_timeout_with_a_slow_scripted_model(tmp_path: Path) -> None:
    script = tmp_path / "slow.yaml"
    _write_slow_script(script)
    started = time.monotonic()
    proc = run(
        "diagnose",
        "--bundle",
        str(MINI),
        "--model",
        f"scripted:{script}",
        "--timeout",
        "2",
        "--max-steps",
        "30",
        "--json",
    )
    assert time.monotonic() - started < 15
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["budget"]["stopped_by"] == "timeout" and report["status"] == "partial"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--model", "llama"], "unknown model spec"),
        (["--model", "gguf:/nonexistent/model.gguf"], "--model none"),
        (["--demo", "--bundle", str(MINI)], "exclusive"),
        (["--bundle", "/nonexistent/bundle"], "no such bundle"),
        (["--demo", "--since", "yesterday"], "--since"),
        (["--demo", "--json", "--markdown"], "exclusive"),
    ],
)
def test_usage_errors_exit_2(args: list[str], needle: str) -> None:
    proc = run("diagnose", *args)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert needle in proc.stderr and proc.stdout == ""


def test_unreachable_sources_exit_3(tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        "default_environment: test\n"
        "environments:\n"
        "  test:\n"
        '    prometheus: {url: "http://127.0.0.1:9", timeout: 2}\n'
        '    elasticsearch: {url: "http://127.0.0.1:9", timeout: 2}\n',
        encoding="utf-8",
    )
    proc = run(
        "diagnose",
        "why is order-service failing?",
        "--config",
        str(cfg),
        "--json",
        "--timeout",
        "20",
    )
    assert proc.returncode == 3, proc.stderr
    report = json.loads(proc.stdout)
    assert report["root_cause"] is None and report["tool_calls"]
    assert all(c["status"] == "error" for c in report["tool_calls"])


def test_no_live_sources_configured_is_a_config_error() -> None:
    proc = run("diagnose", "why is order-service failing?")
    assert proc.returncode == 2 and "no live data sources" in proc.stderr


def test_ctrl_c_prints_a_partial_report_and_exits_130(tmp_path: Path) -> None:
    import signal

    script = tmp_path / "slow.yaml"
    _write_slow_script(script)
    proc = subprocess.Popen(
        [
            str(OPSMATE),
            "diagnose",
            "--bundle",
            str(MINI),
            "--model",
            f"scripted:{script}",
            "--max-steps",
            "30",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONFAULTHANDLER": "1"},
        # a runner started in the background inherits SIGINT ignored; a terminal's Ctrl-C
        # reaches a process whose SIGINT is at its default
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(4)  # the deterministic steps are done; the model is "thinking"
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack
        out, err = proc.communicate(timeout=10)
        pytest.fail(f"no exit 30 s after Ctrl-C; the threads were:\n{err[-6000:]}")
    assert proc.returncode == 130, err
    report = json.loads(out)
    assert report["budget"]["stopped_by"] == "cancelled" and report["status"] == "partial"
    assert report["evidence"]
