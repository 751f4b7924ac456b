"""Times as users and models write them: RFC 3339, or relative (``-30m``, ``30m``, ``now``).

Every problem is a :class:`TimeParseError`, which is both a ``ValueError`` (what
callers catch) and an :class:`~opsmate.errors.InputError` (exit 2 with a message, should
one reach the command line): text that is not a time, a duration longer than
:data:`MAX_DURATION`, or a time outside what a datetime can hold (``1e20``,
``-999999999999d``) never escapes as an ``OverflowError``.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

from opsmate.errors import InputError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*$")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
#: the longest duration accepted (ten years): a look-back or offset beyond it is a typo
MAX_DURATION = timedelta(days=3653)


class TimeParseError(InputError, ValueError):
    """A time or duration that cannot be used (see the module docstring)."""


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_duration(text: str) -> timedelta:
    """``30m``, ``6h``, ``1.5h``, ``90s``, ``2d`` → timedelta; TimeParseError otherwise."""
    m = _DURATION.match(text.lower())
    if not m:
        raise TimeParseError(f"not a duration: {_show(text)} (use e.g. 30m, 6h, 2d)")
    seconds = float(m.group(1)) * _UNITS[m.group(2)]
    if not math.isfinite(seconds) or seconds > MAX_DURATION.total_seconds():
        raise TimeParseError(
            f"duration {_show(text.strip())} is too long (at most {MAX_DURATION.days} days)"
        )
    return timedelta(seconds=seconds)


def _from_unix(value: float, text: object) -> datetime:
    try:
        return datetime.fromtimestamp(float(value), tz=UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise TimeParseError(
            f"not a time: {_show(text)} (unix seconds out of range; use RFC 3339 or -30m)"
        ) from exc


def parse_time(text: str | float | int | datetime, now: datetime | None = None) -> datetime:
    """Parse an absolute or relative time into an aware UTC-offset datetime.

    Accepts RFC 3339 (``2026-10-21T10:00:00+08:00``, ``...Z``), unix seconds,
    ``now``, and relative offsets ``-30m`` / ``now-30m`` (relative to ``now``).
    Raises :class:`TimeParseError` (a ``ValueError``) for anything else.
    """
    now = now or datetime.now(UTC)
    if isinstance(text, datetime):
        return text if text.tzinfo else text.replace(tzinfo=UTC)
    if isinstance(text, int | float):
        return _from_unix(text, text)
    if not isinstance(text, str):
        raise TimeParseError(f"not a time: {_show(text)}")
    s = text.strip()
    if not s:
        raise TimeParseError("empty time")
    low = s.lower()
    if low == "now":
        return now
    if low.startswith("now"):
        low = low[3:].strip()
    if low.startswith("-") or low.startswith("+"):
        sign = -1 if low[0] == "-" else 1
        try:
            return now + sign * parse_duration(low[1:])
        except OverflowError as exc:
            raise TimeParseError(f"not a time: {_show(text)} (out of range)") from exc
    if re.fullmatch(r"\d+(\.\d+)?", s) and len(s) >= 9:
        return _from_unix(float(s), text)
    try:
        dt = datetime.fromisoformat(s.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as exc:
        raise TimeParseError(
            f"not a time: {_show(text)} (use RFC 3339 or a relative time like -30m)"
        ) from exc
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def format_time(dt: datetime) -> str:
    """RFC 3339 with offset, seconds precision."""
    return dt.isoformat(timespec="seconds")
