"""A short message quoted with what it is about (the record's distinctive fields), and
pool-acquire time-outs read as an exhausted pool."""

from __future__ import annotations

from opsmate.loganalysis.fields import context_of
from opsmate.loganalysis.parse import parse_record
from opsmate.loganalysis.signals import classify
from opsmate.loganalysis.stats import example_text


def test_a_short_message_is_quoted_with_its_distinctive_fields() -> None:
    rec = {
        "@timestamp": "2026-07-14T13:42:47Z",
        "message": "slow query",
        "level": "info",
        "service": "checkout-api",
        "query": "orders_csv_export",
        "duration_ms": 163466,
        "rid": "999223d8252d",
    }
    pl = parse_record(rec)
    assert pl.context == "query=orders_csv_export"
    assert example_text(pl) == "slow query (query=orders_csv_export)"


def test_ids_and_parser_fields_are_not_context() -> None:
    assert context_of({"rid": "ab12cd34ef56", "trace": "0af7651916cd43dd8448eb211c80319c"}) is None
    assert context_of({"kind": "json", "text": "x", "status": "429"}) == "status=429"
    long = {"a": "x" * 80, "b": "ok"}
    assert context_of(long) == "b=ok"


def test_a_timeout_acquiring_a_pooled_connection_is_an_exhausted_pool() -> None:
    for text in (
        "timeout acquiring connection from pool",
        "could not acquire connection from pool after 30s",
        "error getting a connection from the db pool",
    ):
        sig = classify(text)
        assert (sig.kind, sig.reason) == ("saturation", "pool_exhausted"), text
