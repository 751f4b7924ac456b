"""What fact extractors share: the extraction context and small time helpers."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from opsmate.agent.signals import to_time


@dataclass
class ExtractContext:
    focus: list[str] = field(default_factory=list)
    onset: datetime | None = None
    window_from: datetime | None = None
    window_to: datetime | None = None
    notes: list[str] = field(default_factory=list)  # e.g. suspected prompt injection

    def is_focus(self, *names: str | None) -> bool:
        if not self.focus:
            return False
        for n in names:
            if not n:
                continue
            low = n.lower()
            if any(low == f or low.startswith(f + "-") or f in low for f in self.focus):
                return True
        return False


def hm(ts: Any) -> str:
    """``2026-10-21T10:01:53+08:00`` -> ``10:01:53``."""
    s = str(ts or "")
    return s[11:19] if len(s) >= 19 and s[10] == "T" else s


def min_time(a: Any, b: Any) -> Any:
    """The earlier of two time values (either may be missing or unparsable)."""
    ta, tb = to_time(a), to_time(b)
    if ta is None:
        return b
    if tb is None:
        return a
    return a if ta <= tb else b


def max_time(a: Any, b: Any) -> Any:
    """The later of two time values (either may be missing or unparsable)."""
    ta, tb = to_time(a), to_time(b)
    if ta is None:
        return b
    if tb is None:
        return a
    return a if ta >= tb else b


def in_window(t: datetime, ctx: ExtractContext, slack_minutes: int = 0) -> bool:
    """Whether ``t`` falls in the task window (its start widened by ``slack_minutes``)."""
    slack = timedelta(minutes=slack_minutes)
    lo = (ctx.window_from - slack) if ctx.window_from else None
    hi = ctx.window_to
    return (lo is None or t >= lo) and (hi is None or t <= hi)
