"""Every message the TUI's workers post to the app: small dataclasses, one place.

Workers (threads) never touch widgets; they post these and the app's handlers
update the screen. ``turn`` numbers each question asked in the session, so a late
message from a stopped turn is recognised and ignored. High-rate messages carry
the whole current value (not a delta) and define ``can_replace``, so Textual may
drop a queued one in favour of the next without losing anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message


@dataclass
class SessionOpened(Message):
    """A session is ready (new, switched bundle or resumed)."""

    title: str  # what is investigated: "bundle 01-pool-exhaustion" / "live sources"
    environment: str | None  # the environment constraint known before any question
    model: str  # the model spec in use
    default_question: str | None
    resumed: bool = False
    session_id: str = ""


@dataclass
class SetupNeeded(Message):
    """Nothing can be opened yet: no bundle was given and no data source is configured."""

    reason: str
    hint: str  # what to do: open a bundle, configure sources


@dataclass
class SessionRestored(Message):
    """A resumed session's history: its state, evidence and reports, to redisplay."""

    questions: list[str]
    state: Any  # TaskState
    evidence: list[Any]  # Evidence
    runbooks: list[Any]  # RunbookRef
    reports: list[Any]  # Report


@dataclass
class HealthChecked(Message):
    """Health of the model and data sources: ``(name, ok|warn|fail, detail)``."""

    checks: list[tuple[str, str, str]]


@dataclass
class SessionsListed(Message):
    """Saved sessions (newest first), as
    :func:`opsmate.agent.session.session.list_sessions` gives them."""

    sessions: list[dict[str, Any]]


@dataclass
class TurnStarted(Message):
    turn: int
    question: str
    follow_up: bool


@dataclass
class StepAnnounced(Message):
    """The planner chose the next tool call."""

    turn: int
    step: int
    tool: str
    args: dict[str, Any]
    reason: str
    source: str


@dataclass
class ToolStarted(Message):
    turn: int
    step: int
    call_id: str


@dataclass
class ToolFinished(Message):
    turn: int
    step: int
    call_id: str
    status: str
    elapsed_ms: int
    summary: str
    evidence_id: str | None = None
    rejected_reason: str | None = None
    evidence: Any = None  # the Evidence entry (a copy), when one was recorded


@dataclass
class ModelStream(Message):
    """Model output so far in one stream (cumulative text, so it may replace its predecessor)."""

    turn: int
    stream: int
    purpose: str
    text: str

    def can_replace(self, message: Message) -> bool:
        return (
            isinstance(message, ModelStream)
            and message.turn == self.turn
            and message.stream == self.stream
        )


@dataclass
class StateUpdated(Message):
    """A copy of the task state and budget use (the latest one supersedes queued ones)."""

    turn: int
    state: Any  # TaskState
    runbooks: list[Any] = field(default_factory=list)  # RunbookRef copies
    steps: int = 0
    max_steps: int = 0
    tokens: int | None = None
    seconds: float = 0.0

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, StateUpdated) and message.turn == self.turn


@dataclass
class ReportArrived(Message):
    turn: int
    report: Any  # Report


@dataclass
class EngineNotice(Message):
    turn: int
    level: str  # info | warning | error
    text: str


@dataclass
class TurnEnded(Message):
    """The question's investigation returned (``stopped_by`` from its report)."""

    turn: int
    stopped_by: str
    status: str
    saved_to: str | None = None
    report: Any = None  # the final Report (the one saved), when the turn made one


@dataclass
class EngineFailed(Message):
    """An error to show a person: what happened and what to do (never a traceback)."""

    title: str
    message: str
    hint: str = ""
    kind: str = "error"  # model | source | input | config | internal
    turn: int | None = None


@dataclass
class ReportSaved(Message):
    paths: list[str]
