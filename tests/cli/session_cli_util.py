"""Helpers for the ``diagnose --session`` tests: the console script, run as a user would,
with its own isolated user dirs (so a module's sessions share one signing key)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

OPSMATE = Path(sys.executable).parent / "opsmate"
REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "tests" / "agent" / "data" / "mini-bundle"
CART_RESTARTS = REPO / "tests" / "agent" / "data" / "cart-restarts"


def isolated_env(root: Path) -> dict[str, str]:
    """The process environment with every user dir under ``root`` (as tests/conftest.py)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPSMATE_")}
    env.update(
        HOME=str(root / "home"),
        OPSMATE_DATA_DIR=str(root / "data"),
        OPSMATE_CONFIG_DIR=str(root / "config"),
        OPSMATE_CACHE_DIR=str(root / "cache"),
        ANONYMIZED_TELEMETRY="False",
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    return env


def run(*args: str, env: dict[str, str], timeout: float = 60, **kw: Any) -> Any:
    """``opsmate ARGS`` -> CompletedProcess (text)."""
    return subprocess.run(
        [str(OPSMATE), *args], capture_output=True, text=True, timeout=timeout, env=env, **kw
    )


def follow_up(session: Path, question: str, env: dict[str, str], *flags: str) -> Any:
    """Ask ``question`` in the saved ``session``; the report JSON (asserts exit 0)."""
    proc = run("diagnose", "--session", str(session), question, "--json", *flags, env=env)
    assert proc.returncode == 0, proc.stderr[-1500:]
    return json.loads(proc.stdout)
