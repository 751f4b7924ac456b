"""The TUI's alerts screen over a REAL Alertmanager: F2 lists the firing alerts, Enter
investigates the chosen one in the open session (the demo bundle)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from am_fixture import create_silence, post_alerts, run_alertmanager

from opsmate.tui import messages as m
from opsmate.tui.app import OpsmateApp
from opsmate.tui.bridge import LaunchOptions
from opsmate.tui.display import FrozenFormatter
from opsmate.tui.screens.alerts import AlertsScreen


async def until(pilot: Any, cond: Any, timeout: float = 60.0) -> None:
    """Let the app run until ``cond()`` (a hang becomes a failure, not a timed check)."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        await pilot.pause(0.05)


@pytest.mark.asyncio
async def test_f2_lists_alerts_and_enter_investigates(tmp_path: Path) -> None:
    with run_alertmanager(tmp_path / "am") as am:
        post_alerts(
            am.url,
            [
                {
                    "labels": {
                        "alertname": "OrderServiceHigh5xxRate",
                        "service": "order-service",
                        "namespace": "shop",
                        "severity": "critical",
                    },
                    "annotations": {"summary": "order-service error rate rose"},
                },
                {"labels": {"alertname": "Watchdog", "severity": "none"}},
            ],
        )
        create_silence(am.url, {"alertname": "Watchdog"})
        cfg = tmp_path / "opsmate.yaml"
        cfg.write_text(
            "model: none\ndefault_environment: test\n"
            f"environments:\n  test:\n    alertmanager: {{url: '{am.url}'}}\n",
            encoding="utf-8",
        )
        app = OpsmateApp(
            LaunchOptions(demo=True, model="none", config_path=cfg), formatter=FrozenFormatter()
        )
        seen: list[Any] = []
        async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
            await until(pilot, lambda: app.ready)
            await pilot.press("f2")
            await until(pilot, lambda: isinstance(app.screen, AlertsScreen))
            screen = app.screen
            assert isinstance(screen, AlertsScreen)
            await until(pilot, lambda: len(screen.alerts) == 2)
            assert screen.alerts[0].name == "OrderServiceHigh5xxRate"  # most severe first
            assert screen.alerts[1].silenced
            title = str(screen.query_one("#alerts-title").visual)
            assert "Firing alerts in test (alertmanager): 2" in title
            await pilot.press("enter")
            await until(pilot, lambda: [x for x in seen if isinstance(x, m.TurnEnded)])
            started = next(x for x in seen if isinstance(x, m.TurnStarted))
            assert started.question.startswith(
                "Investigate this alert: OrderServiceHigh5xxRate (subject: order-service in "
                "namespace shop), severity critical"
            )
            assert app.report is not None and app.report.status == "complete"
