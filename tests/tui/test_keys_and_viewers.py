"""Pilot tests: the screen with nothing open, the key help, the footer at 80 columns, the
runbook viewer (Markdown), the evidence viewer (the whole result, scrolled), one status.

The app runs headless over the real engine (the demo bundle, no model) or with no
bundle and an empty config (a first start); nothing is mocked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.message import Message
from textual.widgets import Footer, Markdown
from textual.widgets._footer import FooterKey
from textual.widgets.markdown import MarkdownFence

from opsmate.agent.report.model import Report
from opsmate.tui import messages as m
from opsmate.tui.app import OpsmateApp
from opsmate.tui.bridge import SETUP_HINT, LaunchOptions
from opsmate.tui.display import FrozenFormatter
from opsmate.tui.result_view import search_mode
from opsmate.tui.screens.bundle import BundleScreen
from opsmate.tui.screens.error import ErrorScreen
from opsmate.tui.screens.evidence import EvidenceScreen
from opsmate.tui.screens.help import HELP_TEXT, HelpScreen
from opsmate.tui.screens.report import ReportScreen


@pytest.fixture
def empty_config(tmp_path: Path) -> Path:
    cfg = tmp_path / "empty.yaml"
    cfg.write_text("model: none\n", encoding="utf-8")
    return cfg


def first_start(config: Path) -> OpsmateApp:
    """``opsmate tui`` with no bundle and no source configured."""
    return OpsmateApp(LaunchOptions(config_path=config), formatter=FrozenFormatter())


def demo_app(config: Path) -> OpsmateApp:
    return OpsmateApp(
        LaunchOptions(demo=True, model="none", config_path=config), formatter=FrozenFormatter()
    )


def footer_keys(footer: Footer) -> list[FooterKey]:
    return list(footer.query(FooterKey))


def footer_width(footer: Footer) -> int:
    """Columns the footer's keys need (each key whole, with its margins)."""
    return sum(
        k.outer_size.width + k.styles.margin.left + k.styles.margin.right
        for k in footer_keys(footer)
    )


def shown_actions(footer: Footer) -> list[str]:
    return [k.action for k in footer_keys(footer) if "-command-palette" not in k.classes]


async def investigate(pilot: Any, until: Any, seen: list[Message]) -> OpsmateApp:
    app = pilot.app
    await until(pilot, lambda: app.ready)
    await pilot.press("enter")
    await until(pilot, lambda: bool([x for x in seen if isinstance(x, m.TurnEnded)]), 60)
    await pilot.pause()
    return app  # type: ignore[no-any-return]


# -- nothing open: the screen says what to do, questions are refused with the hint ----------


@pytest.mark.asyncio
async def test_first_start_says_what_to_do_and_refuses_questions(
    empty_config: Path, until: Any
) -> None:
    app, seen = first_start(empty_config), []
    async with app.run_test(size=(80, 24), message_hook=seen.append) as pilot:
        await until(pilot, lambda: any(isinstance(x, m.SetupNeeded) for x in seen))
        await pilot.pause()
        assert not isinstance(app.screen, ErrorScreen)  # a first start is not an error
        assert not app.ready and not app.main.header.loading
        welcome = str(app.main.transcript.query_one(".welcome").visual)
        assert "open a bundle: ctrl+b" in welcome
        assert "configure sources: `opsmate doctor`" in welcome
        # ctrl+b is in the footer, and the footer fits
        assert "switch_bundle" in shown_actions(app.main.footer)
        assert footer_width(app.main.footer) <= 80
        # a question is refused at once with the hint; the text stays to ask again later
        await pilot.press(*"why do checkouts fail?", "enter")
        await pilot.pause()
        assert app.main.question.value == "why do checkouts fail?"
        notes = [n.message for n in app._notifications]
        assert any(SETUP_HINT in n for n in notes), notes
        assert not any("still opening" in n for n in notes)
        assert not [x for x in seen if isinstance(x, m.TurnStarted)] and app._pending is None
        # ctrl+b opens the bundle picker; a demo bundle opens a session
        await pilot.press("ctrl+b")
        await until(pilot, lambda: isinstance(app.screen, BundleScreen))
        await pilot.press("enter")
        await until(pilot, lambda: app.ready, 60)
        assert app._open_error is None


@pytest.mark.asyncio
async def test_question_asked_while_opening_still_waits(empty_config: Path, until: Any) -> None:
    app, seen = demo_app(empty_config), []
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        assert not app.ready  # the engine's imports and the bundle load come after first paint
        await pilot.press(*"db pool?", "enter")
        await until(pilot, lambda: bool([x for x in seen if isinstance(x, m.TurnEnded)]), 60)
        assert [x.question for x in seen if isinstance(x, m.TurnStarted)] == ["db pool?"]


# -- the key help ----------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_question_mark_and_f1_open_the_key_help(empty_config: Path, until: Any) -> None:
    app = first_start(empty_config)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        # "?" on the empty question line opens the help ...
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        screen = app.screen
        assert isinstance(screen, HelpScreen)
        listed = {keys: text for keys, text in screen.rows}
        # every binding of the app is listed, with what it does
        for binding in OpsmateApp.BINDINGS:
            action = binding.action  # type: ignore[union-attr]
            text = HELP_TEXT.get(action) or binding.description  # type: ignore[union-attr]
            assert text in listed.values(), action
        assert listed["f1 / ?"] == HELP_TEXT["help"]
        assert "^b" in listed and "esc" in listed and "^q" in listed
        assert any(k.startswith("enter") for k in listed)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen))
        # ... F1 too; and "?" inside a question is typed, not a key
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("f1")
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen))
        await pilot.press("a", "question_mark")
        await pilot.pause()
        assert app.main.question.value == "a?" and not isinstance(app.screen, HelpScreen)


# -- the footer at 80 columns ------------------------------------------------------------------


@pytest.mark.asyncio
async def test_footer_fits_80_columns_before_while_and_after_a_run(
    tui_config: Path, slow_script: Path, until: Any
) -> None:
    opts = LaunchOptions(demo=True, model=f"scripted:{slow_script}", config_path=tui_config)
    app, seen = OpsmateApp(opts, formatter=FrozenFormatter()), []
    async with app.run_test(size=(80, 24), message_hook=seen.append) as pilot:
        await until(pilot, lambda: app.ready)
        await pilot.pause()
        footer = app.main.footer
        before = shown_actions(footer)
        assert "help" in before and "switch_bundle" in before and "quit" in before
        assert "stop" not in before  # shown only while an investigation runs
        assert footer_width(footer) <= 80, [k.description for k in footer_keys(footer)]
        # while the (slow) model answers: Stop shows, Bundle does not
        await pilot.press("enter")
        await until(pilot, lambda: any(isinstance(x, m.ModelStream) for x in seen))
        await pilot.pause(0.2)
        running = shown_actions(footer)
        assert "stop" in running and "switch_bundle" not in running
        assert footer_width(footer) <= 80, [k.description for k in footer_keys(footer)]
        await pilot.press("escape")
        await until(pilot, lambda: any(isinstance(x, m.TurnEnded) for x in seen), 30)
        await pilot.pause(0.2)
        after = shown_actions(footer)
        assert {"save", "full_report", "evidence", "runbooks", "switch_bundle"} <= set(after)
        assert footer_width(footer) <= 80, [k.description for k in footer_keys(footer)]


# -- one status ------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_notices_and_header_say_the_reports_status(empty_config: Path) -> None:
    app = first_start(empty_config)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.on_turn_ended(m.TurnEnded(0, "max_steps", "complete"))
        app.on_turn_ended(m.TurnEnded(0, "token_budget", "partial"))
        await pilot.pause()
        complete, partial = (n.message for n in list(app._notifications)[-2:])
        assert "Status complete" in complete and "partial" not in complete
        assert "Status partial" in partial and "max_tokens" in partial
        app.main.header.status = "complete"
        app.main.header.target = "bundle x"
        await pilot.pause()
        line = app.main.header.render().plain
        assert "complete" in line and "max_steps" not in line


# -- the viewers -------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_runbook_viewer_renders_markdown_and_report_shows_the_chain(
    tui_config: Path, until: Any
) -> None:
    app, seen = demo_app(tui_config), []
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await investigate(pilot, until, seen)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: isinstance(app.screen, EvidenceScreen))
        screen = app.screen
        assert isinstance(screen, EvidenceScreen) and screen.selected == "R1"
        doc = screen.detail.doc
        assert doc.display and not screen.detail.body.display
        source = doc.source
        assert not source.lstrip().startswith("---") and "\nstatus: active" not in source
        assert "# " in source  # the runbook's own headings
        await until(pilot, lambda: bool(doc.query(MarkdownFence)))  # code fences as code
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, EvidenceScreen))
        # the chain, when the report has one, is a numbered list in the report screen
        chain = [
            {"statement": "5xx rose at 10:01 after the *release*", "evidence": ["E1"]},
            {"statement": "the pool shrank from 20 to 10", "evidence": ["E5"]},
        ]
        app.report = Report.model_validate({**app.report.model_dump(), "chain": chain})
        await pilot.press("ctrl+f")
        await until(pilot, lambda: isinstance(app.screen, ReportScreen))
        md = app.screen.query_one(Markdown)
        assert "1. 5xx rose at 10:01 after the \\*release\\*" in md.source
        assert "2. the pool shrank from 20 to 10" in md.source
        assert md.source.count("From symptom to cause") == 1  # said once
        await until(pilot, lambda: bool(md.query("MarkdownOrderedList")))


@pytest.mark.asyncio
async def test_evidence_viewer_scrolls_the_whole_result_rendered_and_raw(
    tui_config: Path, until: Any
) -> None:
    app, seen = demo_app(tui_config), []
    async with app.run_test(size=(80, 24), message_hook=seen.append) as pilot:
        await investigate(pilot, until, seen)
        # the longest log search: more records than the report's excerpt holds
        logs = [e for e in app.evidence.values() if getattr(e, "tool", "") == "search_logs"]
        whole = {e.id: app.bridge.full_result(e.id) for e in logs}
        eid = max(whole, key=lambda i: len((whole[i] or {})["data"].get("items", [])))
        envelope = whole[eid]
        assert envelope is not None
        items = envelope["data"]["items"]
        assert len(items) > app.evidence[eid].excerpt.count("\n") + 1  # the excerpt is cut
        await pilot.press(*eid, "enter")
        await until(pilot, lambda: isinstance(app.screen, EvidenceScreen))
        screen = app.screen
        assert isinstance(screen, EvidenceScreen)
        detail = screen.detail
        # rendered: every record, whole (no message cut mid-URL)
        for item in items:
            assert item["message"] in detail.text
        await pilot.pause()
        assert detail.max_scroll_y > 0  # longer than the view
        for _ in range(200):
            if detail.scroll_y >= detail.max_scroll_y:
                break
            await pilot.press("pagedown")
            await pilot.pause()
        assert detail.scroll_y == detail.max_scroll_y > 0
        assert screen.selected == eid  # the list kept its place
        await pilot.press("pageup")
        await pilot.pause()
        assert detail.scroll_y < detail.max_scroll_y
        # raw JSON: the whole envelope, parseable
        await pilot.press("j")
        await pilot.pause()
        assert json.loads(detail.text) == envelope
        assert "raw JSON" in str(detail.head.visual)
        head = str(detail.head.visual)
        assert "complete" not in head or "everything the source returned" in head
        assert items[-1]["message"] in detail.text


def test_search_mode_says_bm25_only_when_the_response_does() -> None:
    warned = {"hits": [], "warnings": ["no embedding vectors in this index: BM25 only"]}
    assert search_mode(warned) == "BM25 only"
    assert search_mode({**warned, "mode": "hybrid"}) == "BM25 only"
    assert search_mode({"hits": [], "mode": "bm25"}) == "BM25 only"
    assert search_mode({"hits": []}) == "hybrid"
