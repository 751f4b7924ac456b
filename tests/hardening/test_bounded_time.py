"""Bounded time: a replay that times out is not retried (one 10 s time-out took 31 s),
no call outlives the task's deadline, and the openai backend keeps to ``--timeout``."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from hardening_util import OPSMATE, POOL, REPO
from pydantic import BaseModel

from opsmate.config import ToolsConfig
from opsmate.tools.audit import AuditLog
from opsmate.tools.base import CallContext, Constraints, ToolOutput
from opsmate.tools.bundle import load_bundle
from opsmate.tools.executor import Executor
from opsmate.tools.registry import ToolRegistry

sys.path.insert(0, str(REPO / "tests" / "llm"))
from openai_protocol import ProtocolServer, Reply


def _slow_replay_executor(
    tmp_path: Path, *, timeout_s: float, deadline: float | None = None
) -> tuple[Executor, list[float], threading.Event]:
    """The real bundle's search_logs replay behind a stall (a slow disk, a huge bundle)."""
    bundle = load_bundle(POOL)
    specs = {s.name: s for s in bundle.tool_specs()}
    replay = specs["search_logs"]
    starts: list[float] = []
    release = threading.Event()

    def stalled(args: BaseModel, ctx: CallContext) -> ToolOutput:
        starts.append(time.monotonic())
        release.wait(30)
        return replay.run(args, ctx)

    slow = dataclasses.replace(replay, run=stalled, timeout_s=timeout_s)
    executor = Executor(
        ToolRegistry([slow]),
        Constraints(
            environment="test",
            window_from=bundle.meta.window_from,
            window_to=bundle.meta.window_to,
        ),
        config=ToolsConfig(max_retries=3),
        now=bundle.meta.captured_at,
        audit=AuditLog(tmp_path / "audit.jsonl"),
        deadline=deadline,
    )
    return executor, starts, release


def test_a_replay_time_out_is_not_retried(tmp_path: Path) -> None:
    executor, starts, release = _slow_replay_executor(tmp_path, timeout_s=0.5)
    began = time.monotonic()
    result = executor.call("search_logs", {"service": "order-service"})
    elapsed = time.monotonic() - began
    release.set()
    assert result.status == "error" and result.error is not None
    assert result.error.code == "timeout"
    assert len(starts) == 1, f"{len(starts)} attempts"
    assert elapsed < 1.5, f"{elapsed:.1f} s for a 0.5 s time-out"


def test_no_call_outlives_the_task_deadline(tmp_path: Path) -> None:
    executor, _starts, release = _slow_replay_executor(
        tmp_path, timeout_s=10.0, deadline=time.monotonic() + 0.6
    )
    began = time.monotonic()
    result = executor.call("search_logs", {})
    elapsed = time.monotonic() - began
    release.set()
    assert result.error is not None and result.error.code == "timeout"
    assert not result.error.retryable
    assert elapsed < 1.2, f"{elapsed:.1f} s past a 0.6 s deadline"


def test_openai_backend_keeps_to_the_timeout(tmp_path: Path) -> None:
    """A model server that never answers: the run ends at --timeout, not 5+ s later."""
    server = ProtocolServer(default=Reply(sleep=60)).start()
    try:
        spec = f"openai:{server.base_url}#{server.model}"
        started = time.monotonic()
        proc = subprocess.run(
            [str(OPSMATE), "diagnose", "--demo", "--model", spec, "--timeout", "3", "--json"],
            capture_output=True,
            text=True,
            env=dict(os.environ),
            timeout=120,
        )
        elapsed = time.monotonic() - started
        asked = len(server.chat_requests())
    finally:
        server.stop()
    assert asked >= 1, "the model was never asked: the test proves nothing"
    assert proc.returncode in (0, 1), proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    # the engine's own clock: the old backend could not be cancelled and ran to 8 s
    assert report["budget"]["seconds"] < 4.0, report["budget"]
    # process start-up and report writing included (9 s before the fix)
    assert elapsed < 8.0, f"{elapsed:.1f} s for --timeout 3"
