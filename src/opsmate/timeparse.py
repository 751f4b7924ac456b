"""Times as users and models write them: RFC 3339, or relative (``-30m``, ``30m``, ``now``)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*$")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> timedelta:
    """``30m``, ``6h``, ``1.5h``, ``90s``, ``2d`` → timedelta; ValueError otherwise."""
    m = _DURATION.match(text.lower())
    if not m:
        raise ValueError(f"not a duration: {text!r} (use e.g. 30m, 6h, 2d)")
    return timedelta(seconds=float(m.group(1)) * _UNITS[m.group(2)])


def parse_time(text: str | float | int | datetime, now: datetime | None = None) -> datetime:
    """Parse an absolute or relative time into an aware UTC-offset datetime.

    Accepts RFC 3339 (``2026-10-21T10:00:00+08:00``, ``...Z``), unix seconds,
    ``now``, and relative offsets ``-30m`` / ``now-30m`` (relative to ``now``).
    """
    now = now or datetime.now(UTC)
    if isinstance(text, datetime):
        return text if text.tzinfo else text.replace(tzinfo=UTC)
    if isinstance(text, int | float):
        return datetime.fromtimestamp(float(text), tz=UTC)
    s = text.strip()
    if not s:
        raise ValueError("empty time")
    low = s.lower()
    if low == "now":
        return now
    if low.startswith("now"):
        low = low[3:].strip()
    if low.startswith("-") or low.startswith("+"):
        sign = -1 if low[0] == "-" else 1
        return now + sign * parse_duration(low[1:])
    if re.fullmatch(r"\d+(\.\d+)?", s) and len(s) >= 9:
        return datetime.fromtimestamp(float(s), tz=UTC)
    try:
        dt = datetime.fromisoformat(s.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as exc:
        raise ValueError(
            f"not a time: {text!r} (use RFC 3339 or a relative time like -30m)"
        ) from exc
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def format_time(dt: datetime) -> str:
    """RFC 3339 with offset, seconds precision."""
    return dt.isoformat(timespec="seconds")
