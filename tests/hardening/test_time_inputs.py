"""Absurd times are usage errors, never tracebacks: ``--since`` far beyond a datetime,
and tool arguments that overflow it (answered ``rejected`` / ``invalid_arguments``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hardening_util import POOL, assert_no_traceback, run_cli

from opsmate.errors import InputError
from opsmate.timeparse import MAX_DURATION, TimeParseError, parse_duration, parse_time


@pytest.mark.parametrize("since", ["999999999999d", "10000000w", "3654d"])
def test_since_beyond_the_limit_is_exit_2(since: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["diagnose", "--demo", "--since", since, "--json"], capsys)
    assert code == 2, err
    assert "--since" in err and "too long" in err
    assert out == ""
    assert_no_traceback(err)


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("99999999999999999999", "out of range"),
        ("-999999999999d", "too long"),
        ("-10000000w", "too long"),
        ("1e400", "not a time"),
    ],
)
def test_tool_time_arguments_that_overflow_are_rejected(
    value: str, fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = json.dumps({"from": value})
    code, out, err = run_cli(
        ["tool", "search_logs", "--args", args, "--bundle", str(POOL), "--json"], capsys
    )
    envelope = json.loads(out)
    assert envelope["status"] == "rejected", envelope
    assert envelope["error"]["code"] == "invalid_arguments"
    assert "'from'" in envelope["error"]["message"] and fragment in envelope["error"]["message"]
    assert code == 2
    assert_no_traceback(err)


def test_parse_errors_are_value_errors_and_input_errors() -> None:
    now = datetime(2026, 10, 21, 10, 0, tzinfo=UTC)
    for bad in ("99999999999999999999", "-999999999999d", "+10000000w", 1e20, float("nan")):
        with pytest.raises(TimeParseError) as info:
            parse_time(bad, now)
        assert isinstance(info.value, ValueError) and isinstance(info.value, InputError)
    with pytest.raises(TimeParseError):
        parse_duration("9" * 400 + "d")
    assert parse_duration(f"{MAX_DURATION.days}d") == MAX_DURATION
    assert parse_time("-30m", now) == datetime(2026, 10, 21, 9, 30, tzinfo=UTC)
    # a time near the end of the calendar plus an offset overflows: still a parse error
    with pytest.raises(TimeParseError, match="out of range"):
        parse_time("+3650d", datetime(9999, 6, 1, tzinfo=UTC))
