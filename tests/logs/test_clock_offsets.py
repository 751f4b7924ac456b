"""A service whose own timestamps disagree with when its lines were collected: its clock is
off (a time fault, a node without time sync)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from opsmate.loganalysis.parse import parse_line
from opsmate.loganalysis.stats import StatsBuilder, clock_offsets

T0 = datetime(2025, 3, 11, 1, 0, tzinfo=UTC)


def _feed(b: StatsBuilder, svc: str, minutes: int, skew: timedelta, zone: str = "Z") -> None:
    t = T0 + timedelta(minutes=minutes)
    own = (t + skew).strftime("%Y-%m-%dT%H:%M:%S") + zone
    line = json.dumps({"time": own, "level": "info", "msg": "POST /login 200"})
    b.add(parse_line(line), t, svc)


def test_a_clock_that_falls_behind_in_the_window_is_read_with_when() -> None:
    b = StatsBuilder(start=T0, end=T0 + timedelta(hours=1))
    behind = timedelta(hours=-73)
    for m in range(0, 60, 3):
        _feed(b, "auth-api", m, behind if m >= 25 else timedelta(0))
        _feed(b, "todos-api", m, timedelta(seconds=1))
    out = b.result()["clock_offsets"]
    assert [o["service"] for o in out] == ["auth-api"]
    o = out[0]
    assert round(o["offset_s"]) == -73 * 3600 and o["before_ok"]
    assert o["since"].startswith("2025-03-11T01:27")  # the first skewed line seen


def test_a_local_time_written_without_its_zone_is_not_a_clock_fault() -> None:
    b = StatsBuilder(start=T0, end=T0 + timedelta(hours=1))
    for m in range(0, 60, 3):
        _feed(b, "web", m, timedelta(hours=2), zone="")  # CEST written as if it were UTC
    assert "clock_offsets" not in b.result()
    # with its zone said, two hours off is a clock off
    c = StatsBuilder(start=T0, end=T0 + timedelta(hours=1))
    for m in range(0, 60, 3):
        _feed(c, "web", m, timedelta(hours=2))
    assert c.result()["clock_offsets"][0]["service"] == "web"


def test_a_clock_reading_without_a_date_is_no_evidence() -> None:
    assert clock_offsets({("a", 0): (T0.timestamp(), "12:00:01"),
                          ("a", 1): (T0.timestamp(), "12:05:01")}) == []  # fmt: skip
