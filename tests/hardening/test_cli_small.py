"""Small command-line slips: ``opsmate`` alone prints the help; a blank question uses the
bundle's own; ``opsmate tui`` off a terminal says to use ``diagnose`` instead of hanging
and writing escape codes."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from hardening_util import OPSMATE, POOL, run_cli


def test_no_arguments_prints_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli([], capsys)
    assert code == 0
    assert "Usage" in out and "diagnose" in out and "doctor" in out
    assert err == ""


@pytest.mark.parametrize("blank", ["   ", "\t\n", ""])
def test_a_blank_question_uses_the_bundles_question(
    blank: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(["diagnose", blank, "--bundle", str(POOL), "--json"], capsys)
    assert code in (0, 1), err
    report = json.loads(out)
    assert report["question"] == "order-service error rate rose after the 10:00 release"
    assert "has none" not in err


def test_a_blank_question_without_a_bundle_question_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bundle.yaml").write_text(
        "format: opsmate-bundle/v1\ncaptured_at: '2026-10-21T10:06:00Z'\n"
        "window: {from: '-30m', to: now}\nenvironment: test\n"
    )
    code, _out, err = run_cli(["diagnose", "  ", "--bundle", str(tmp_path)], capsys)
    assert code == 2 and "no question given" in err


def test_tui_off_a_terminal_exits_2_pointing_to_diagnose(tmp_path: Path) -> None:
    started = time.monotonic()
    proc = subprocess.run(
        [str(OPSMATE), "tui", "--demo"],
        stdin=subprocess.PIPE,
        capture_output=True,
        env=dict(os.environ),
        timeout=60,
    )
    assert time.monotonic() - started < 30
    assert proc.returncode == 2
    assert b"opsmate diagnose" in proc.stderr and b"terminal" in proc.stderr
    assert proc.stdout == b""
    assert b"\x1b" not in proc.stderr  # no escape codes anywhere


def test_tui_with_a_terminal_stdin_but_piped_stdout_is_refused_too() -> None:
    import pty

    master, slave = pty.openpty()
    try:
        proc = subprocess.run(
            [str(OPSMATE), "tui", "--demo"],
            stdin=slave,
            capture_output=True,
            env=dict(os.environ),
            timeout=60,
        )
    finally:
        os.close(slave)
        os.close(master)
    assert proc.returncode == 2
    assert b"stdout is not one" in proc.stderr and proc.stdout == b""
