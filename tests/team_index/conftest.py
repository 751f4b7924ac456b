"""Fixtures of the team-index tests: a real Chroma server, two teams' runbooks.

The Chroma server is the real one, ``chroma run`` from the chromadb package (a
dependency), started once per session on a free loopback port with a temporary path.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from teams import TEAM_RUNBOOKS, write_tree

CHROMA = Path(sys.executable).parent / "chroma"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a real `chroma run` server (session-wide; each test uses its own collection)."""
    exe = CHROMA if CHROMA.is_file() else shutil.which("chroma")
    if exe is None:
        pytest.skip("the `chroma` command is missing: `.venv/bin/pip install chromadb` provides it")
    data = tmp_path_factory.mktemp("chroma-data")
    port = _free_port()
    log = (data / "server.log").open("wb")
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    proc = subprocess.Popen(
        [str(exe), "run", "--path", str(data / "db"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"chroma run did not start: {(data / 'server.log').read_text()}")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def module_env(session_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Module-wide isolation (HOME with the model, cache, data) for module fixtures that
    build indexes before the per-test isolation applies; yields a scratch folder."""
    scratch = tmp_path_factory.mktemp("team")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(session_home))
        mp.setenv("OPSMATE_CACHE_DIR", str(session_home / ".cache" / "opsmate"))
        mp.setenv("OPSMATE_DATA_DIR", str(scratch / "data"))
        mp.setenv("OPSMATE_CONFIG_DIR", str(scratch / "config"))
        mp.setenv("ANONYMIZED_TELEMETRY", "False")
        yield scratch


@pytest.fixture(scope="module")
def team_root(module_env: Path) -> Path:
    """The two teams' runbooks (see :mod:`teams`)."""
    return write_tree(module_env / "runbooks", TEAM_RUNBOOKS)
