"""Events carry what a UI needs: budget use, the settled hypotheses, error codes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opsmate.agent.loop.events import ReportReady, StateChanged, ToolCallFinished
from opsmate.agent.session.session import Session
from opsmate.paths import demo_dir


def test_state_events_carry_budget_and_settled_hypotheses() -> None:
    events: list[Any] = []
    session = Session.open(demo=True, model="none", on_event=events.append)
    report = session.ask()
    session.close()
    states = [e for e in events if isinstance(e, StateChanged)]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished and states
    assert isinstance(events[-1], ReportReady)
    last_state = states[-1]
    assert last_state.steps == report.budget.steps
    assert last_state.max_steps == report.budget.max_steps
    assert last_state.seconds > 0
    # the last state event comes after the analysis: hypotheses are settled in it
    assert last_state.hypotheses == len(report.hypotheses) > 0
    assert events.index(last_state) > events.index(finished[-1])


def test_rejected_call_reports_its_error_code(repo_root: Path) -> None:
    """The scripted model of scenario 02 tries a call into prod; the executor rejects it
    and the transcript event says why (forbidden_scope), not just 'rejected'."""
    events: list[Any] = []
    script = repo_root / "tests" / "evaluation" / "data" / "scripted" / "02-oom-crashloop.yaml"
    session = Session.open(
        bundle=demo_dir() / "02-oom-crashloop",
        model=f"scripted:{script}",
        on_event=events.append,
    )
    session.ask()
    session.close()
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    rejected = [e for e in finished if e.status == "rejected"]
    assert rejected, "the script's prod call should have been rejected"
    assert {e.error_code for e in rejected} == {"forbidden_scope"}
    assert all(e.error_code is None for e in finished if e.status == "success")
