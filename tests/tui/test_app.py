"""Pilot tests of ``opsmate tui`` over the real engine (demo bundle, scripted model).

Assertions look at app state and the messages the workers posted first, then at
what the widgets show. Every test runs the app headless at a fixed size.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.message import Message
from textual.widgets import Input, OptionList
from textual.worker import WorkerState

from opsmate.tui import messages as m
from opsmate.tui.app import OpsmateApp
from opsmate.tui.bridge import Bridge, LaunchOptions
from opsmate.tui.display import FrozenFormatter
from opsmate.tui.screens.error import ErrorScreen
from opsmate.tui.screens.evidence import EvidenceScreen
from opsmate.tui.screens.save import SaveScreen
from opsmate.tui.screens.sessions import SessionsScreen
from opsmate.tui.widgets.transcript import ModelEntry, StepEntry


def make_app(config: Path, model: str = "none", **kw: Any) -> tuple[OpsmateApp, list[Message]]:
    opts = LaunchOptions(demo=True, model=model, config_path=config, **kw)
    return OpsmateApp(opts, formatter=FrozenFormatter()), []


def link_offset(app: OpsmateApp, widget: Any, action: str) -> tuple[int, int]:
    """Screen coordinates of the first cell of ``widget`` whose click runs ``action``."""
    r = widget.region
    for y in range(r.y, r.bottom):
        for x in range(r.x, r.right):
            if action in str(app.screen.get_style_at(x, y).meta.get("@click", "")):
                return x, y
    raise AssertionError(f"no link to {action} on screen")


def posted(seen: list[Message], kind: type) -> list[Any]:
    return [x for x in seen if isinstance(x, kind)]


async def ask_and_wait(pilot: Any, until: Any, seen: list[Message], text: str = "") -> m.TurnEnded:
    """Type ``text`` (empty: the bundle's question), press Enter, wait for the turn to end."""
    app = pilot.app
    await until(pilot, lambda: app.ready)
    before = len(posted(seen, m.TurnEnded))
    if text:
        await pilot.press(*text)
    await pilot.press("enter")
    await until(pilot, lambda: len(posted(seen, m.TurnEnded)) > before)
    await pilot.pause()
    return posted(seen, m.TurnEnded)[-1]


# -- the bridge alone: engine events become messages ----------------------------------------------


def test_bridge_turns_engine_events_into_messages(tui_config: Path, fast_script: Path) -> None:
    seen: list[Message] = []
    bridge = Bridge(
        LaunchOptions(demo=True, model=f"scripted:{fast_script}", config_path=tui_config),
        seen.append,
    )
    assert bridge.open()
    bridge.ask(None)
    opened = posted(seen, m.SessionOpened)[0]
    assert opened.environment == "test" and opened.model.startswith("scripted:")
    steps = posted(seen, m.StepAnnounced)
    finished = posted(seen, m.ToolFinished)
    n = posted(seen, m.ReportArrived)[-1].report.budget.steps
    assert [s.step for s in steps] == list(range(1, n + 1))
    assert len(finished) == n and all(
        f.evidence is None or f.evidence.id == f.evidence_id for f in finished
    )
    # the model's proposal ran, taking turns with the plan after the plan's first checks
    model_steps = [s for s in steps if s.source == "model"]
    assert [s.tool for s in model_steps] == ["search_logs"] and model_steps[0].step > 2
    streams = posted(seen, m.ModelStream)
    assert streams and streams[-1].purpose == "narrative"
    # cumulative text: each stream's last message holds its whole answer
    last_next = [s for s in streams if s.purpose == "next_action"][-1]
    assert json.loads(last_next.text)["action"] == "finish"
    assert streams[0].can_replace(streams[1]) == (streams[0].stream == streams[1].stream)
    state = posted(seen, m.StateUpdated)[-1]
    assert state.state.constraints.environment == "test" and state.state.hypotheses
    ended = posted(seen, m.TurnEnded)[-1]
    assert ended.status == "complete" and ended.saved_to and Path(ended.saved_to).is_file()
    assert isinstance(posted(seen, m.ReportArrived)[-1].report.summary, str)


# -- asking, the transcript, the state pane ----------------------------------------------


@pytest.mark.asyncio
async def test_question_runs_investigation_and_shows_steps_state_and_report(
    tui_config: Path, fast_script: Path, until: Any
) -> None:
    app, seen = make_app(tui_config, model=f"scripted:{fast_script}")
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        ended = await ask_and_wait(pilot, until, seen)
        assert ended.stopped_by == "done" and ended.status == "complete"
        started = posted(seen, m.TurnStarted)[0]
        assert started.question == "order-service error rate rose after the 10:00 release"
        steps = list(app.main.query(StepEntry))
        n = app.report.budget.steps
        assert len(steps) == n and 8 <= n <= 20
        assert all(s.status in ("success", "partial", "no_data") for s in steps)
        assert steps[0].evidence_id == "E1" and "1 ms" in str(steps[0]._body.visual)
        models = list(app.main.query(ModelEntry))
        assert {e.purpose for e in models} == {"next action", "narrative"}
        assert app.report is not None and app.main.transcript.reports
        # the state pane: goal, the highlighted environment constraint, facts with ids
        pane = app.main.state_pane
        constraints = str(pane.query_one("#state-constraints").visual)
        assert "environment: test only" in constraints
        facts = str(pane.query_one("#state-facts").visual)
        assert "Facts (" in facts and "E4" in facts
        assert "confirmed" in str(pane.query_one("#state-hypotheses").visual)
        assert f"steps {n}/20" in str(pane.query_one("#state-budget").visual)
        assert not app.bridge.running and not app.main.header.busy


@pytest.mark.asyncio
async def test_follow_up_keeps_the_constraint(tui_config: Path, until: Any) -> None:
    app, seen = make_app(tui_config)
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await ask_and_wait(pilot, until, seen)
        await ask_and_wait(pilot, until, seen, "and what about prod?")
        follow = posted(seen, m.TurnStarted)[-1]
        assert follow.follow_up and follow.question == "and what about prod?"
        notices = [n.text for n in posted(seen, m.EngineNotice)]
        assert any("limited to 'test'" in t for t in notices)
        assert app.report.follow_up is not None and app.report.follow_up.refused
        assert "environment: test only" in str(
            app.main.state_pane.query_one("#state-constraints").visual
        )
        assert app.main.question.history[-1] == "and what about prod?"


@pytest.mark.asyncio
async def test_input_history_up_and_down(tui_config: Path, until: Any) -> None:
    app, _ = make_app(tui_config)
    async with app.run_test(size=(80, 24)) as pilot:
        q = app.main.question
        q.seed(["first question", "second question"])
        await pilot.press("d", "r", "a", "f", "t")
        await pilot.press("up")
        assert q.value == "second question"
        await pilot.press("up", "up")
        assert q.value == "first question"
        await pilot.press("down")
        assert q.value == "second question"
        await pilot.press("down")
        assert q.value == "draft"


# -- evidence and runbooks ----------------------------------------------


@pytest.mark.asyncio
async def test_open_evidence_by_typing_by_key_and_by_click(tui_config: Path, until: Any) -> None:
    app, seen = make_app(tui_config)
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await ask_and_wait(pilot, until, seen)
        # typing an id opens it
        await pilot.press("E", "1", "enter")
        await until(pilot, lambda: isinstance(app.screen, EvidenceScreen))
        screen = app.screen
        assert isinstance(screen, EvidenceScreen) and screen.selected == "E1"
        head = str(app.screen.detail.head.visual)
        assert "E1" in head and "query_metrics" in head and "source" in head and "complete" in head
        assert "order-service request rate by HTTP status code" in app.screen.detail.text
        # keyboard: down moves to E2 and shows it
        await pilot.press("down")
        assert screen.selected == "E2"
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, EvidenceScreen))
        # a result the report holds cut: the viewer shows all of it, and says which is which
        partial = next(e for e in app.evidence.values() if getattr(e, "complete", True) is False)
        await pilot.press(*partial.id, "enter")
        await until(pilot, lambda: isinstance(app.screen, EvidenceScreen))
        head = str(app.screen.detail.head.visual)
        assert "the report's copy was cut" in head and "all " in head
        await pilot.press("escape")
        # runbooks (ctrl+r): heading path, source, status
        await pilot.press("ctrl+r")
        await until(pilot, lambda: isinstance(app.screen, EvidenceScreen))
        head = str(app.screen.detail.head.visual)
        r1 = app.evidence["R1"]
        assert "R1" in head and "section" in head and r1.source in head
        await pilot.press("escape")
        # mouse: click the E1 link in step 1 of the transcript
        await until(pilot, lambda: not isinstance(app.screen, EvidenceScreen))
        transcript = app.main.transcript
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        step1 = app.main.query(StepEntry).first()
        await pilot.click(offset=link_offset(app, step1._body, "open_evidence('E1')"))
        await until(pilot, lambda: isinstance(app.screen, EvidenceScreen))
        assert app.screen.selected == "E1"  # type: ignore[attr-defined]


@pytest.mark.asyncio
async def test_unknown_evidence_id_is_a_notification(tui_config: Path, until: Any) -> None:
    app, _ = make_app(tui_config)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.ready)
        await pilot.press("E", "9", "9", "enter")
        await pilot.pause()
        assert not isinstance(app.screen, EvidenceScreen)
        assert any("E99 is not known" in n.message for n in app._notifications)


# -- stopping, and keys while the model is slow ----------------------------------------------


@pytest.mark.asyncio
async def test_keys_work_while_slow_model_runs_and_stop_keeps_state(
    tui_config: Path, slow_script: Path, until: Any
) -> None:
    app, seen = make_app(tui_config, model=f"scripted:{slow_script}")
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await until(pilot, lambda: app.ready)
        await pilot.press("enter")
        # the model is now streaming its (6 s) first answer on a worker thread
        await until(pilot, lambda: bool(posted(seen, m.ModelStream)))
        assert app.bridge.running and app.main.header.busy
        worker = app.investigation
        assert worker is not None and worker.state == WorkerState.RUNNING
        # keys are handled at once: typing, the theme toggle, a modal open and closed
        await pilot.press("a", "b", "c")
        assert app.main.question.value == "abc"
        theme = app.theme
        await pilot.press("ctrl+t")
        assert app.theme != theme
        await pilot.press("ctrl+g")
        await until(pilot, lambda: isinstance(app.screen, EvidenceScreen), timeout=2)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, EvidenceScreen), timeout=2)
        assert app.bridge.running, "the model should still be answering"
        # stop: the worker is cancelled, the engine stops at its next safe point
        await pilot.press("escape")
        await until(pilot, lambda: bool(posted(seen, m.TurnEnded)), timeout=5)
        ended = posted(seen, m.TurnEnded)[-1]
        assert ended.stopped_by == "cancelled" and ended.status in (
            "partial",
            "refused",
            "complete",
        )
        assert worker.state == WorkerState.CANCELLED
        assert not app.bridge.running and not app.main.header.busy
        # the state is kept: facts, evidence, the constraint; the session was saved
        session = app.bridge.session
        assert session is not None and session.state is not None
        assert session.state.facts and session.state.constraints.environment == "test"
        assert len(session.store.evidence) >= 2 and ended.saved_to
        assert app.report is not None and app.report.budget.stopped_by == "cancelled"
        assert not [s for s in app.main.query(StepEntry) if s.status in ("running", "planned")]


# -- saving, resuming ----------------------------------------------


@pytest.mark.asyncio
async def test_save_report_writes_markdown_and_json(
    tui_config: Path, tmp_path: Path, until: Any
) -> None:
    app, seen = make_app(tui_config)
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await until(pilot, lambda: app.ready)
        assert app.check_action("save", ()) is None  # nothing to save yet
        await ask_and_wait(pilot, until, seen)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, SaveScreen))
        app.screen.query_one("#save-path", Input).value = str(tmp_path / "out" / "incident.md")
        await pilot.press("enter")
        await until(pilot, lambda: bool(posted(seen, m.ReportSaved)))
        md, js = tmp_path / "out" / "incident.md", tmp_path / "out" / "incident.json"
        assert posted(seen, m.ReportSaved)[-1].paths == [str(md), str(js)]
        assert md.read_text(encoding="utf-8").startswith("# Diagnosis: order-service error rate")
        data = json.loads(js.read_text(encoding="utf-8"))
        assert data["status"] == "complete" and data["constraints"]["environment"] == "test"
        assert {e["id"] for e in data["evidence"]} >= {"E1", "E4"}
        # copy (ctrl+y) puts the same Markdown on the clipboard
        await pilot.press("ctrl+y")
        assert app.clipboard == md.read_text(encoding="utf-8")
        # the command palette offers every action and each evidence id
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Stop", "Save report", "Copy report", "Resume session", "Switch bundle"} <= titles
        assert {"Evidence", "Runbooks", "New investigation", "Toggle light/dark"} <= titles
        assert "Open E1" in titles and "Open R1" in titles
        # ... and runs them: ctrl+p, type, Enter
        await pilot.press("ctrl+p")
        await pilot.pause(0.3)
        await pilot.press(*"save report")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, SaveScreen), timeout=5)
        await pilot.press("escape")


@pytest.mark.asyncio
async def test_resume_a_saved_session(tui_config: Path, until: Any) -> None:
    first, seen = make_app(tui_config)
    async with first.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        ended = await ask_and_wait(pilot, until, seen)
        saved_id = first.session_id
        assert ended.saved_to and Path(ended.saved_to).stem == saved_id
    # a new app lists the saved session on start and resumes it
    app, seen = make_app(tui_config)
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await until(pilot, lambda: app.ready and bool(app.sessions))
        assert app.sessions[0]["id"] == saved_id
        await pilot.press("ctrl+o")
        await until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        assert app.screen.query_one(OptionList).option_count == 1
        await pilot.press("enter")
        await until(pilot, lambda: bool(posted(seen, m.SessionRestored)) and app.ready)
        await pilot.pause()
        opened = [o for o in posted(seen, m.SessionOpened) if o.resumed]
        assert opened and opened[-1].session_id == saved_id
        assert app.report is not None and "E1" in app.evidence and "R1" in app.evidence
        assert app.main.question.history == [
            "order-service error rate rose after the 10:00 release"
        ]
        assert "environment: test only" in str(
            app.main.state_pane.query_one("#state-constraints").visual
        )
        # a follow-up continues the same session (its evidence numbering goes on)
        await ask_and_wait(pilot, until, seen, "is the database itself healthy?")
        assert posted(seen, m.TurnStarted)[-1].follow_up
        assert app.bridge.session is not None and app.bridge.session.id == saved_id


# -- errors are shown, never raised ----------------------------------------------


@pytest.mark.asyncio
async def test_missing_model_shows_modal_with_what_to_do(
    tui_config: Path, tmp_path: Path, until: Any
) -> None:
    app, seen = make_app(tui_config, model=f"gguf:{tmp_path / 'missing.gguf'}")
    async with app.run_test(size=(80, 24), message_hook=seen.append) as pilot:
        await until(
            pilot, lambda: isinstance(app.screen, ErrorScreen) and app.screen.query("Button")
        )
        failed = posted(seen, m.EngineFailed)[-1]
        assert failed.kind == "model" and "missing.gguf" in failed.message
        assert "--model none" in failed.hint
        hint = str(app.screen.query_one("#error-hint").visual)
        assert "What to do" in hint
        assert not app.ready and app.return_code is None  # still running, no traceback
        # the offered way out: continue without a model
        button = app.screen.query_one("#choice-no-model")
        await until(pilot, lambda: button.region.width > 0)
        await pilot.pause()
        await pilot.click(button)
        await until(pilot, lambda: app.ready and len(posted(seen, m.HealthChecked)) == 2)
        assert posted(seen, m.SessionOpened)[-1].model == "none"
        checks = dict((n, s) for n, s, _ in posted(seen, m.HealthChecked)[-1].checks)
        assert checks["bundle"] == "ok"


@pytest.mark.asyncio
async def test_unreachable_source_is_a_notification(tmp_path: Path, until: Any) -> None:
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = tmp_path / "live.yaml"
    cfg.write_text(
        "model: none\ndefault_environment: test\nbudget: {max_steps: 3}\n"
        f"environments:\n  test:\n    prometheus: {{url: 'http://127.0.0.1:{port}', timeout: 2}}\n",
        encoding="utf-8",
    )
    app = OpsmateApp(LaunchOptions(config_path=cfg), formatter=FrozenFormatter())
    seen: list[Message] = []
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await until(pilot, lambda: bool(posted(seen, m.HealthChecked)))
        checks = {n: s for n, s, _ in posted(seen, m.HealthChecked)[-1].checks}
        assert checks["prometheus[test]"] == "fail"
        ended = await ask_and_wait(pilot, until, seen, "checkout errors since 10:00")
        failed = [f for f in posted(seen, m.ToolFinished) if f.status == "error"]
        assert failed, "the calls to the unreachable Prometheus should fail"
        assert any(
            "failed" in n.title and "opsmate doctor" in n.message for n in app._notifications
        )
        assert ended.status != "error" and app.return_code is None


@pytest.mark.asyncio
async def test_a_follow_up_shows_its_answer_and_the_whole_report_is_one_key_away(
    tui_config: Path, until: Any
) -> None:
    from opsmate.tui.screens.report import ReportScreen
    from opsmate.tui.widgets.transcript import ReportEntry

    app, seen = make_app(tui_config)
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await ask_and_wait(pilot, until, seen)
        await ask_and_wait(pilot, until, seen, "check the prod error rate too")
        entry = list(app.main.query(ReportEntry))[-1]
        shown = entry.source if hasattr(entry, "source") else ""
        report = app.report
        assert report.follow_up is not None
        assert app.formatter.follow_up_markdown(report).startswith("# Follow-up:")
        assert "# Diagnosis:" not in app.formatter.follow_up_markdown(report)
        assert shown == "" or "# Diagnosis:" not in shown
        await pilot.press("ctrl+f")
        await until(pilot, lambda: isinstance(app.screen, ReportScreen))
        assert "# Diagnosis:" in app.screen.markdown
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ReportScreen))
