"""ctrl+q quits ``opsmate tui`` from every screen, modal viewers and dialogs included
(it did nothing while the evidence or runbook viewer was open)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hardening_util import DEMO

from opsmate.tui.app import OpsmateApp
from opsmate.tui.bridge import LaunchOptions
from opsmate.tui.display import FrozenFormatter
from opsmate.tui.screens.bundle import BundleScreen
from opsmate.tui.screens.error import ErrorScreen
from opsmate.tui.screens.evidence import EvidenceScreen
from opsmate.tui.screens.save import SaveScreen
from opsmate.tui.screens.sessions import SessionsScreen

SCREENS: dict[str, Callable[[OpsmateApp], Any]] = {
    "evidence viewer": lambda app: EvidenceScreen([], title="Evidence"),
    "runbook viewer": lambda app: EvidenceScreen([], title="Runbooks"),
    "sessions": lambda app: SessionsScreen([], app.formatter),
    "error": lambda app: ErrorScreen("Broken", "something failed", "fix it"),
    "save": lambda app: SaveScreen(Path("report.md")),
    "bundle": lambda app: BundleScreen(DEMO),
}


@pytest.mark.asyncio
@pytest.mark.parametrize("screen", [None, *SCREENS])
async def test_ctrl_q_quits_from_every_screen(screen: str | None, tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("model: none\n", encoding="utf-8")
    app = OpsmateApp(
        LaunchOptions(demo=True, model="none", config_path=cfg), formatter=FrozenFormatter()
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.2)
        if screen is not None:
            pushed = SCREENS[screen](app)
            app.push_screen(pushed)
            await pilot.pause(0.2)
            assert app.screen is pushed
        await pilot.press("ctrl+q")
        await pilot.pause(0.3)
        assert not app.is_running, f"ctrl+q did not quit from {screen or 'the main screen'}"
