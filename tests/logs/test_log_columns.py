"""The shortcuts that spare parsing a record (level and service columns of bundle replay)
answer exactly what parsing it would."""

from __future__ import annotations

from typing import Any

import pytest

from opsmate.loganalysis.parse import (
    NEEDS_PARSE,
    line_names_no_service,
    parse_record,
    record_level,
)

MESSAGES = [
    "GET /api/v1/items/42 200 12ms",
    "Could not resolve host: db",
    "ERROR: disk full",
    "[WARN] retrying in 5s",
    "E1120 11:55:03.123456 1 main.go:12] boom",
    '{"level": "error", "message": "pool timeout", "service": "orders"}',
    '{"message": "no level here", "service": "orders"}',
    '  {"level": "info"}  ',
    "time=2031-04-02T08:00:00Z level=error msg=x service=cart",
    "a=1 b=2",
    "a=1 only one pair",
    "panic: runtime error",
    "\x1b[31mERROR\x1b[0m red",
    "",
    "{not json",
]
LEVELS: list[Any] = [None, "", "info", "INFO", "Warning", "err", 50, 3, True, "bogus", ["x"]]


@pytest.mark.parametrize("message", MESSAGES)
@pytest.mark.parametrize("level", LEVELS)
def test_record_level_is_the_parsed_level(message: str, level: Any) -> None:
    rec: dict[str, Any] = {"@timestamp": "2031-04-02T08:00:00Z", "message": message}
    if level is not None:
        rec["level"] = level
    rec["trace_id"] = "abc"  # an extra field: parse_record reads it too
    quick = record_level(rec)
    if quick != NEEDS_PARSE:
        assert quick == parse_record(rec).level


@pytest.mark.parametrize("message", MESSAGES)
def test_no_line_service_means_parsed_service_is_none(message: str) -> None:
    rec = {"@timestamp": "2031-04-02T08:00:00Z", "message": message, "service": "web"}
    if line_names_no_service(rec):
        assert parse_record(rec).service is None


def test_shortcuts_decline_what_only_parsing_tells() -> None:
    json_line = {"message": '{"level": "error"}', "level": "info"}
    assert record_level(json_line) == NEEDS_PARSE
    assert record_level({"message": "x"}) == NEEDS_PARSE  # no field: the text may say
    assert record_level({"message": "x", "level": "info"}) == "info"
    assert not line_names_no_service({"message": "service=a level=b"})
    assert line_names_no_service({"message": "GET / 200"})
