"""The "before" column of a benchmark: the same measurement on an earlier commit's code.

A benchmark that prints before / after / ratio runs its measurement twice in one run:
in its own process (the working tree) and in a subprocess whose ``PYTHONPATH`` puts
the ``src/`` of an earlier commit first (``git archive REF src``, extracted once into
``/tmp``; the repository is only read). Both see the same data, the same index folder
copies and the same machine load, so the ratio is the comparison.

``BEFORE_REF`` is the commit before the issue-19 speed work; pass ``--before REF`` to a
benchmark to compare with another commit, ``--before none`` to skip the column.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BEFORE_REF = "85836bc"  # issue 19 item 5 starts from here
WORKER_FLAG = "--before-worker"


def source_tree(ref: str) -> Path | None:
    """``src/`` of commit ``ref`` in a temporary folder (kept for later runs); None: no git."""
    if ref in ("", "none"):
        return None
    try:
        sha = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short=12", ref],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"(no before column: cannot resolve {ref}: {exc})", file=sys.stderr)
        return None
    dest = Path(tempfile.gettempdir()) / f"opsmate-before-{sha}"
    src = dest / "src"
    if not (src / "opsmate" / "__init__.py").is_file():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", sha, "src"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return src


def env_for(src: Path | None) -> dict[str, str]:
    """The environment of a process that imports ``opsmate`` from ``src`` (None: this tree)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        )
    return env


def run_worker(script: Path, src: Path | None, name: str, args: dict[str, Any]) -> Any:
    """Run ``script --before-worker NAME ARGS_JSON`` under ``src``; its last stdout line's JSON."""
    proc = subprocess.run(
        [sys.executable, str(script), WORKER_FLAG, name, json.dumps(args)],
        capture_output=True,
        text=True,
        env=env_for(src),
    )
    if proc.returncode != 0:
        raise SystemExit(f"before worker {name} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cli() -> list[str]:
    """The ``opsmate`` command line (run it with :func:`env_for` to choose the tree)."""
    return [sys.executable, "-c", "import sys; from opsmate.cli import main; sys.exit(main())"]


def ratio(before: float | None, after: float | None) -> str:
    """``before / after`` as ``"2.1x"`` (how many times faster after is), or ``"-"``."""
    if not before or not after:
        return "-"
    return f"{before / after:.2f}x"
