"""A model call the engine gives up on (time-out or cancel) is stopped in the backend,
so no generation keeps running behind the investigation."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from opsmate.agent.model.steps import ask_model
from opsmate.llm.base import Usage


class _SlowCancellableModel:
    """A backend that generates until told to stop (as GGUFModel.cancel() does)."""

    name = "slow"

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.finished = threading.Event()

    def complete_json(
        self,
        messages: list[dict[str, Any]],
        schema: dict[str, Any],
        *,
        max_tokens: int,
        on_token: Callable[[str], None] | None = None,
    ) -> tuple[dict[str, Any], Usage]:
        try:
            self.stop.wait(30)
            return {}, Usage()
        finally:
            self.finished.set()

    def cancel(self) -> None:
        self.stop.set()


def test_timeout_stops_the_backend() -> None:
    model = _SlowCancellableModel()
    t0 = time.monotonic()
    answer = ask_model(
        model,
        [{"role": "user", "content": "x"}],
        {"type": "object"},
        max_tokens=8,
        deadline=time.monotonic() + 0.2,
        cancelled=threading.Event(),
    )
    assert answer.error == "timeout"
    assert model.finished.is_set(), "the backend call must have been stopped"
    assert time.monotonic() - t0 < 5


def test_cancel_stops_the_backend() -> None:
    model = _SlowCancellableModel()
    cancelled = threading.Event()
    threading.Timer(0.1, cancelled.set).start()
    answer = ask_model(
        model,
        [{"role": "user", "content": "x"}],
        {"type": "object"},
        max_tokens=8,
        deadline=None,
        cancelled=cancelled,
    )
    assert answer.error == "cancelled"
    assert model.finished.is_set()
