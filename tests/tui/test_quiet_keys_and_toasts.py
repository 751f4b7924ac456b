"""Details a user hit in the TUI (issue 24 §6): a key that is dimmed or hidden says why
when pressed; with no source configured the header never says "live sources"; a
follow-up answered from what was already read (no call) shows no budget toast over its
answer, and a follow-up's budget notice goes to the transcript, not a toast."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from opsmate.agent.report.model import FollowUp, Report, ReportConstraints
from opsmate.tui import messages as m
from opsmate.tui.app import OpsmateApp
from opsmate.tui.bridge import LaunchOptions
from opsmate.tui.display import FrozenFormatter
from opsmate.tui.widgets.transcript import NoticeEntry


def first_start(tmp_path: Path) -> OpsmateApp:
    cfg = tmp_path / "empty.yaml"
    cfg.write_text("model: none\n", encoding="utf-8")
    return OpsmateApp(LaunchOptions(config_path=cfg), formatter=FrozenFormatter())


def follow_up_report(new_calls: int) -> Report:
    return Report(
        question="q",
        constraints=ReportConstraints(),
        status="complete",
        summary="s",
        follow_up=FollowUp(question="which pods restarted?", answer="a", new_calls=new_calls),
    )


def messages(app: OpsmateApp) -> list[str]:
    return [n.message for n in app._notifications]


@pytest.mark.asyncio
async def test_nothing_configured_is_not_called_live_sources(tmp_path: Path, until: Any) -> None:
    app = first_start(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app._open_error is not None)
        await pilot.pause()
        assert app.main.header.target == "nothing open"
        assert "live sources" not in app.main.header.render().plain


@pytest.mark.asyncio
async def test_dimmed_keys_say_why(tmp_path: Path, until: Any) -> None:
    app = first_start(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app._open_error is not None)
        for key in ("ctrl+s", "ctrl+f", "ctrl+y", "ctrl+g", "ctrl+r"):
            before = len(messages(app))
            await pilot.press(key)
            await pilot.pause()
            said = messages(app)[before:]
            assert said and said[-1].startswith("No "), (key, said)
            assert "ask a question first" in said[-1]


@pytest.mark.asyncio
async def test_a_follow_up_answered_from_the_state_shows_no_budget_toast(
    tmp_path: Path, until: Any
) -> None:
    app = first_start(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app._open_error is not None)
        before = len(messages(app))
        # a 0-call answer carries the previous turn's budget (stopped by max_steps)
        app.on_turn_ended(m.TurnEnded(1, "max_steps", "complete", None, follow_up_report(0)))
        await pilot.pause()
        assert messages(app)[before:] == []
        # a follow-up that did run out of budget says so under its answer, not over it
        app.on_turn_ended(m.TurnEnded(2, "max_steps", "partial", None, follow_up_report(3)))
        await pilot.pause()
        assert messages(app)[before:] == []
        notices = [e for e in app.main.transcript.query(NoticeEntry)]
        assert notices, "the budget notice is in the transcript"
        # a first question still gets the toast
        app.on_turn_ended(m.TurnEnded(3, "max_steps", "partial"))
        await pilot.pause()
        assert any("step budget" in n or "Status partial" in n for n in messages(app)[before:])
