"""What an analyzer may read besides the result it analyzes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from opsmate.agent.intake.subject import Subject
from opsmate.agent.observe.graph import ObjectGraph


@dataclass
class ObserveContext:
    """The investigation's view for analyzers: subject, focus, times, the object graph."""

    subject: Subject = field(default_factory=Subject)
    focus: list[str] = field(default_factory=list)  # services in focus (lower-case)
    onset: datetime | None = None
    window_from: datetime | None = None
    window_to: datetime | None = None
    graph: ObjectGraph = field(default_factory=ObjectGraph)
    notes: list[str] = field(default_factory=list)  # e.g. suspected prompt injection
    eid: str = ""  # the evidence id of the result being analyzed

    def is_focus(self, *names: str | None) -> bool:
        """Whether any of ``names`` is the subject or a service in focus (or part of one)."""
        for n in names:
            if not n:
                continue
            if self.subject.matches(n):
                return True
            low = n.lower()
            if any(low == f or low.startswith(f + "-") or f in low for f in self.focus):
                return True
        return False

    def in_window(self, t: datetime, slack_minutes: int = 0) -> bool:
        """Whether ``t`` falls in the task window (its start widened by ``slack_minutes``)."""
        slack = timedelta(minutes=slack_minutes)
        lo = (self.window_from - slack) if self.window_from else None
        hi = self.window_to
        return (lo is None or t >= lo) and (hi is None or t <= hi)
