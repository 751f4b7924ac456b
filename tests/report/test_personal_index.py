"""A non-empty personal runbook index changes no `eval` result (unless --index-dir)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

OPSMATE = Path(sys.executable).parent / "opsmate"


def _eval(repo_root: Path, scenario: str) -> list[dict]:
    proc = subprocess.run(
        [str(OPSMATE), "eval", str(repo_root / scenario), "--model", "none", "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    data = json.loads(proc.stdout)
    rows = data["scenarios"]
    for row in rows:
        for key in ("seconds", "wall_s", "elapsed_s", "duration_s"):
            row.pop(key, None)
    return rows


def test_personal_index_changes_no_eval_result(repo_root: Path, tmp_path: Path) -> None:
    scenario = "evals/scenarios/bad-config-value"
    before = _eval(repo_root, scenario)
    indexed = subprocess.run(
        [str(OPSMATE), "index", str(repo_root / "runbooks"), "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout)["chunks"] > 0  # the personal index is not empty
    after = _eval(repo_root, scenario)
    assert json.dumps(before, sort_keys=True, default=str) == json.dumps(
        after, sort_keys=True, default=str
    )
