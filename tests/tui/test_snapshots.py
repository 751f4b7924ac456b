"""SVG snapshots of the main screen (80x24, 120x40), a first start and the evidence viewer.

Each runs the same deterministic investigation: the demo bundle replayed through
the real engine, a scripted model without delays, and a frozen formatter (tool
elapsed times and budget seconds are constants). Notifications are cleared and
the cursor does not blink. Regenerate after an intended change with
``pytest tests/tui/test_snapshots.py --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from opsmate.tui.app import OpsmateApp
from opsmate.tui.bridge import LaunchOptions
from opsmate.tui.display import FrozenFormatter
from opsmate.tui.screens.evidence import EvidenceScreen


def make_app(config: Path, script: Path) -> OpsmateApp:
    opts = LaunchOptions(demo=True, model=f"scripted:{script}", config_path=config)
    return OpsmateApp(opts, formatter=FrozenFormatter())


def investigate(until: Any, then: tuple[str, ...] = ()) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """A ``run_before``: ask the bundle's question, wait for the report, press ``then``."""

    async def run(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, OpsmateApp)
        app.main.question.cursor_blink = False  # a blinking cursor differs between pictures
        await until(pilot, lambda: app.ready)
        await pilot.press("enter")
        await until(pilot, lambda: app.report is not None and not app.main.header.busy)
        await until(pilot, lambda: app.main.transcript.report_shown)
        await pilot.pause()
        # a busy machine lays the report out over a few frames: the picture is taken once the
        # transcript's height holds still (the scrollbar's size follows it)
        last = -1
        for _ in range(40):
            height = app.main.transcript.virtual_size.height
            if height == last:
                break
            last = height
            await pilot.pause(0.1)
        if then:
            await pilot.press(*then)
            await until(pilot, lambda: isinstance(app.screen, EvidenceScreen))
        await pilot.pause(0.2)
        app.clear_notifications()
        await pilot.pause()

    return run


def test_main_screen_80x24(
    snap_compare: Any, tui_config: Path, fast_script: Path, until: Any
) -> None:
    app = make_app(tui_config, fast_script)
    assert snap_compare(app, terminal_size=(80, 24), run_before=investigate(until))


def test_main_screen_120x40(
    snap_compare: Any, tui_config: Path, fast_script: Path, until: Any
) -> None:
    app = make_app(tui_config, fast_script)
    assert snap_compare(app, terminal_size=(120, 40), run_before=investigate(until))


def test_first_start_80x24(snap_compare: Any, tmp_path: Path, until: Any) -> None:
    """No bundle, no source configured: what to do, and a footer with ctrl+b that fits."""
    cfg = tmp_path / "empty.yaml"
    cfg.write_text("model: none\n", encoding="utf-8")
    app = OpsmateApp(LaunchOptions(config_path=cfg), formatter=FrozenFormatter())

    async def settle(pilot: Pilot[Any]) -> None:
        app.main.question.cursor_blink = False
        await until(pilot, lambda: app._open_error is not None and bool(app.main.header.checks))
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=(80, 24), run_before=settle)


def test_evidence_viewer(
    snap_compare: Any, tui_config: Path, fast_script: Path, until: Any
) -> None:
    app = make_app(tui_config, fast_script)
    opened = investigate(until, then=("E", "4", "enter"))
    assert snap_compare(app, terminal_size=(120, 40), run_before=opened)
