"""A stored record's level read from the application's own level field."""

from __future__ import annotations

from opsmate.loganalysis.parse import parse_record


def test_a_records_severity_field_is_its_level_not_its_words() -> None:
    # GCP structured logging (and apps modelled on it) put the level in "severity"
    rec = {"message": "ENV_PLATFORM environment variable is not set", "severity": "INFO"}
    pl = parse_record(rec)
    assert (pl.level, pl.inferred) == ("info", False)
    rec = {"message": "ready", "severity": "ERROR"}
    assert parse_record(rec).level == "error"


def test_the_level_field_wins_and_a_printed_level_counts_without_one() -> None:
    both = {"message": "connection refused", "level": "warn", "severity": "ERROR"}
    assert parse_record(both).level == "warn"
    printed = parse_record({"message": "ERROR: connection refused to db:5432"})
    assert (printed.level, printed.inferred) == ("error", False)
