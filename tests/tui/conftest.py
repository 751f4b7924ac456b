"""Fixtures for the TUI tests: scripted model files, a config, and a polling helper.

The demo bundle is investigated for real (the engine's Session over the replayed
bundle); only the model is scripted, so runs are deterministic and fast. The
budget is raised to 20 steps so that the model is asked once the runbook checks
and rules are done (step 13 on the demo bundle).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

NARRATIVE = {
    "summary": "order-service ran out of database connections after the 10:00 release.",
    "root_cause": {
        "statement": "The v2.4.0 release shrank the DB pool to 10 connections (PoolTimeout).",
        "evidence": ["E4", "E3", "R1"],
    },
}


def script_yaml(first_delay: float = 0.0) -> str:
    """A model script: one extra search, then finish, then the narrative."""
    import json

    call = {
        "action": "call_tool",
        "tool": "search_logs",
        "args": {"query": "connection pool saturated", "service": "order-service"},
        "reason": "How often does the pool saturate?",
        "facts": [],
    }
    finish = {"action": "finish", "reason": "The pool exhaustion explains the errors."}
    return (
        "replies:\n"
        f"  - {{schema: NextAction, delay: {first_delay}, reply: {json.dumps(call)}}}\n"
        f"  - {{schema: NextAction, reply: {json.dumps(finish)}}}\n"
        f"  - {{schema: Narrative, reply: {json.dumps(NARRATIVE)}}}\n"
    )


@pytest.fixture
def tui_config(tmp_path: Path) -> Path:
    cfg = tmp_path / "opsmate.yaml"
    cfg.write_text("model: none\nbudget:\n  max_steps: 20\n", encoding="utf-8")
    return cfg


@pytest.fixture
def fast_script(tmp_path: Path) -> Path:
    p = tmp_path / "fast-model.yaml"
    p.write_text(script_yaml(0.0), encoding="utf-8")
    return p


@pytest.fixture
def slow_script(tmp_path: Path) -> Path:
    """The model's first answer takes 6 s (streamed), long enough to press keys and stop it."""
    p = tmp_path / "slow-model.yaml"
    p.write_text(script_yaml(6.0), encoding="utf-8")
    return p


async def wait_for(pilot: object, cond: Callable[[], bool], timeout: float = 15.0) -> None:
    """Let the app run until ``cond()`` holds (AssertionError after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.05)  # type: ignore[attr-defined]


@pytest.fixture
def until() -> Callable[..., object]:
    """``await until(pilot, cond, timeout=15)``: run the app until ``cond()`` holds."""
    return wait_for
