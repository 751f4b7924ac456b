"""What a follow-up answer is built from and what it is: shared by :mod:`.answers` and
:mod:`.answers_objects`.

:class:`Reads` is what the session holds (the task state, the stored results by E id,
the tools it can call, the redacting clipper); :class:`Body` an answer before its "not
read" clause; :class:`Answer` the finished answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from opsmate.agent.state import TaskState

Clean = Callable[[str, int], str]
CHANGE_TOOLS = ("rollout_history", "list_objects")
POD_TOOLS = ("list_pods", "get_events")
VALUE_TOOLS = ("rollout_history", "query_metrics")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


@dataclass
class Answer:
    """A follow-up answer: its text (frame + evidence text + what was not read), the ids
    it cites, and whether the state settles the question (then no call is made)."""

    text: str
    evidence: list[str]
    settled: bool


class Body(NamedTuple):
    """An answer before its "not read" clause: text, cited ids, whether it settles the
    question, the tools whose data bears on it, and other unread data to name."""

    text: str
    cited: list[str]
    settled: bool
    relevant: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()


@dataclass
class Reads:
    """What the session holds to answer from."""

    state: TaskState
    results: Mapping[str, Any] = field(default_factory=dict)  # E id -> ToolResult
    tools: list[str] = field(default_factory=list)  # the tools this session can call
    clean: Clean = _clip
