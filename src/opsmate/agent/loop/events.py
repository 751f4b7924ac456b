"""Events the engine emits while it investigates (for the TUI, progress output, tests).

Small frozen dataclasses, posted in order through one callback
``on_event(event: Event) -> None`` given to :class:`opsmate.agent.session.session.Session`.
The callback runs on the engine's thread; a UI forwards them to its own thread
(Textual: ``post_message`` / ``call_from_thread``). The engine never waits on a
callback's result, and an exception raised by a callback is swallowed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class StepPlanned:
    """The planner chose the next action (before it runs)."""

    step: int  # 1-based tool step this will be
    tool: str
    args: dict[str, Any]
    reason: str
    source: str  # runbook_check | runbook_command | rule | model


@dataclass(frozen=True)
class ToolCallStarted:
    step: int
    call_id: str  # the id the executor is expected to give it (call_001 ...)
    tool: str
    args: dict[str, Any]


@dataclass(frozen=True)
class ToolCallFinished:
    step: int
    call_id: str
    tool: str
    status: str  # success | partial | no_data | error | rejected
    elapsed_ms: int
    summary: str  # one line for a transcript
    evidence_id: str | None = None
    rejected_reason: str | None = None
    error_code: str | None = None  # timeout | unreachable | auth | forbidden_scope | ...


@dataclass(frozen=True)
class ModelToken:
    """A piece of model output as it streams (``purpose``: next_action, facts, narrative)."""

    text: str
    purpose: str = "next_action"


@dataclass(frozen=True)
class StateChanged:
    """The task state changed; ``rendered`` is the compact text the model also sees."""

    rendered: str
    facts: int = 0
    hypotheses: int = 0
    pending: int = 0
    # budget used so far in this ask (steps, model tokens, seconds)
    steps: int = 0
    max_steps: int = 0
    tokens: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class ReportReady:
    """The investigation (or one follow-up) ended; ``report`` is a Report model."""

    report: Any  # opsmate.agent.report.model.Report (Any avoids an import cycle)
    markdown: str = ""


@dataclass(frozen=True)
class Notice:
    """Something a person should see (budget reached, model fell back, a source failed)."""

    level: Literal["info", "warning", "error"]
    message: str
    detail: dict[str, Any] = field(default_factory=dict)


Event = (
    StepPlanned
    | ToolCallStarted
    | ToolCallFinished
    | ModelToken
    | StateChanged
    | ReportReady
    | Notice
)
EventSink = Callable[[Event], None]


def safe_emit(sink: EventSink | None, event: Event) -> None:
    """Call ``sink`` with ``event``; a failing sink never breaks the investigation."""
    if sink is None:
        return
    with contextlib.suppress(Exception):
        sink(event)
