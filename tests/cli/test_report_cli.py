"""`diagnose` report behaviour through the console script: --env against a bundle of
another environment, headless follow-ups with --session, escaped Markdown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

OPSMATE = Path(sys.executable).parent / "opsmate"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(OPSMATE), *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def test_env_of_another_environment_is_exit_2_before_any_call() -> None:
    audit = Path(os.environ["OPSMATE_DATA_DIR"]) / "audit.jsonl"
    proc = run("diagnose", "--demo", "--env", "prod", "--json")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "bundle captured in test; --env prod cannot be read from it" in proc.stderr
    assert not audit.exists() or audit.read_text() == ""  # no tool call was made
    tool = run(
        "tool", "list_pods", "--args", "{}", "--bundle",
        str(Path(__file__).resolve().parents[2] / "src/opsmate/data/demo/01-pool-exhaustion"),
        "--env", "prod",
    )  # fmt: skip
    assert tool.returncode == 2 and "cannot be read from it" in tool.stderr


def test_session_follow_up_is_answered_from_the_saved_state(tmp_path: Path) -> None:
    first = run("diagnose", "--demo", "--session", "s.json", "--json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "s.json").is_file()
    proc = run(
        "diagnose", "--session", "s.json", "did the release change the pool settings?", "--json",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    fu = json.loads(proc.stdout)["follow_up"]
    assert fu["question"] == "did the release change the pool settings?"
    assert "DB_POOL_SIZE" in fu["answer"] and fu["evidence"] and fu["new_calls"] == 0
    assert set(fu) >= {"question", "answer", "evidence", "new_calls"}


def test_markdown_report_carries_the_chain_as_a_numbered_list() -> None:
    proc = run("diagnose", "--demo", "--markdown")
    assert proc.returncode == 0, proc.stderr
    assert "## From symptom to cause\n\n1. " in proc.stdout
    assert "*Runbooks searched: bundle runbooks*" in proc.stdout
