"""Times in a question: clock times, absolute dates, ISO timestamps, "yesterday 14:00".

"after the 10:00 release" is 10:00 on the reference day (the day before when that is
still ahead of the reference). "on August 2, 2025 around 13:45 UTC", "Aug 2 13:45",
"2025-08-02T13:45:00Z", "2025-08-02 13:45", "昨天 14:00", "yesterday at 14:00" are
absolute: they anchor the onset and the window, wherever the default window lies.
A time without a zone is read in the reference time's zone. Pure functions.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ]
    )
    for m in names
}
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_CLOCK_RE = r"(?P<h>[01]?\d|2[0-3])[:：](?P<mi>[0-5]\d)(?::(?P<s>[0-5]\d))?"
_ZONE_RE = r"(?:\s*(?P<zone>UTC|GMT|Z|[+-]\d{2}:?\d{2}))?"
_ISO = re.compile(
    r"(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})[T ]" + _CLOCK_RE + r"(?:\.\d+)?" + _ZONE_RE
)
_MONTH_DAY = re.compile(
    rf"\b(?P<mon>{_MONTH_RE})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s*(?P<y>\d{{4}}))?"
    rf"(?:,?\s*(?:at|around|about|near|~)?\s*{_CLOCK_RE}{_ZONE_RE})?",
    re.I,
)
_DAY_MONTH = re.compile(
    rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<mon>{_MONTH_RE})\.?(?:,?\s*(?P<y>\d{{4}}))?"
    rf"(?:,?\s*(?:at|around|about|near|~)?\s*{_CLOCK_RE}{_ZONE_RE})?",
    re.I,
)
_CN_DATE = re.compile(
    r"(?:(?P<y>\d{4})年)?(?P<mo>\d{1,2})月(?P<d>\d{1,2})[日号]\s*(?:" + _CLOCK_RE + r")?"
)
_RELATIVE_DAY = re.compile(
    r"(?P<word>yesterday|today|昨天|昨日|今天|今日|前天)\s*(?:at|around|about|上午|下午|晚上)?\s*"
    + _CLOCK_RE
    + _ZONE_RE,
    re.I,
)
_CLOCK_BEFORE = re.compile(_CLOCK_RE + _ZONE_RE + r"\s*(?:on|,)?\s*$", re.I)
_CLOCK_ONLY = re.compile(
    r"(?:after|since|from|at|around|starting|started|began|从|在|自)?\s*"
    r"(?<!\d)([01]?\d|2[0-3])[:：]([0-5]\d)(?!\d)",
    re.I,
)


def _zone(text: str | None, ref: datetime) -> timezone:
    if not text:
        tz = ref.tzinfo
        return tz if isinstance(tz, timezone) else UTC
    t = text.upper()
    if t in ("UTC", "GMT", "Z"):
        return UTC
    sign = 1 if t[0] == "+" else -1
    digits = t[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0)))


def _at(y: int, mo: int, d: int, m: re.Match[str], ref: datetime) -> datetime | None:
    gd = m.groupdict()
    h = int(gd["h"]) if gd.get("h") else 0
    mi = int(gd["mi"]) if gd.get("mi") else 0
    s = int(gd["s"]) if gd.get("s") else 0
    try:
        return datetime(y, mo, d, h, mi, s, tzinfo=_zone(gd.get("zone"), ref))
    except ValueError:
        return None


def absolute_time(text: str, reference: datetime) -> tuple[datetime, bool] | None:
    """The first absolute date (and time) in ``text`` and whether it had a clock time."""
    ref = reference
    if m := _ISO.search(text):
        t = _at(int(m["y"]), int(m["mo"]), int(m["d"]), m, ref)
        if t:
            return t, True
    for pat in (_MONTH_DAY, _DAY_MONTH):
        if m := pat.search(text):
            if m["mon"].lower() == "may" and not (m["y"] or m.groupdict().get("h")):
                continue  # "may 3 ..." is more often a verb than a date
            mon = _MONTHS[m["mon"].lower().rstrip(".")]
            year = int(m["y"]) if m["y"] else ref.year
            t = _at(year, mon, int(m["d"]), m, ref)
            has_clock = bool(m.groupdict().get("h"))
            if t and not has_clock:  # "at 13:45 on Aug 2": the clock came first
                before = _CLOCK_BEFORE.search(text[max(0, m.start() - 30) : m.start()])
                if before:
                    t = _at(year, mon, int(m["d"]), before, ref)
                    has_clock = t is not None
            if t and not m["y"] and t > ref + timedelta(days=1):
                t = t.replace(year=year - 1)
            if t:
                return t, has_clock
    if m := _CN_DATE.search(text):
        year = int(m["y"]) if m["y"] else ref.year
        t = _at(year, int(m["mo"]), int(m["d"]), m, ref)
        if t:
            return t, bool(m.groupdict().get("h"))
    if m := _RELATIVE_DAY.search(text):
        word = m["word"].lower()
        back = {"yesterday": 1, "昨天": 1, "昨日": 1, "前天": 2}.get(word, 0)
        day = (ref - timedelta(days=back)).astimezone(_zone(m["zone"], ref))
        t = _at(day.year, day.month, day.day, m, ref)
        if t:
            return t, True
    return None


def clock_time(text: str, reference: datetime) -> datetime | None:
    """A bare clock time ("after the 10:00 release", "10:00 发布后") on the reference day."""
    m = _CLOCK_ONLY.search(text)
    if not m:
        return None
    hh, mm = int(m.group(1)), int(m.group(2))
    cand = reference.replace(hour=hh, minute=mm, second=0, microsecond=0)
    if cand > reference + timedelta(minutes=5):
        cand -= timedelta(days=1)
    return cand


def detect_onset(text: str, reference: datetime | None) -> datetime | None:
    """When the question says the problem started: an absolute time, else a clock time."""
    if reference is None:
        return None
    found = absolute_time(text, reference)
    if found is not None:
        return found[0]
    return clock_time(text, reference)
