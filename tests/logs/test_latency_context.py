"""A slow log line read with the lines before it: the request it served, what it timed,
and how much of the request-wide duration it is."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from opsmate.agent.observe.analyzers.latency_context import (
    operation_of,
    request_of,
    same_request,
    slow_context,
)
from opsmate.agent.observe.analyzers.logs import log_stats_facts
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import FactKind as K
from opsmate.loganalysis.parse import parse_line
from opsmate.loganalysis.stats import StatsBuilder, stream_of
from opsmate.records.logs import LatencyStat
from opsmate.tools.base import ToolResult

T0 = datetime(2031, 4, 2, 8, 0, tzinfo=UTC)

REQUEST = [
    "Handling request for invoice export batch=1200",
    "Opening connection to ledger database",
    "Connection established",
    "Running query: refresh_ledger_totals",
]


def test_the_request_and_the_operation_of_a_slow_line() -> None:
    assert request_of(REQUEST) == REQUEST[0]
    assert operation_of(REQUEST, REQUEST[0]) == "Running query: refresh_ledger_totals"
    # a request-wide duration times no single operation: an inner timed step ended before it
    after = [*REQUEST, "Query finished in 6.1 seconds.", "Totals result: 3 rows"]
    assert operation_of(after, REQUEST[0]) is None
    assert request_of(["GET /api/v2/orders HTTP/1.1", "loading cart"]) == (
        "GET /api/v2/orders HTTP/1.1"
    )
    assert request_of(["cache warmed", "scheduler tick"]) is None
    assert same_request("request for export batch=12", "request for export batch=4410")
    assert not same_request("request for export batch=12", "request for refund id=12")


def _stats(lines: list[tuple[str, str]]) -> ToolResult:
    b = StatsBuilder(start=T0, end=T0 + timedelta(hours=1))
    for i, (stream, line) in enumerate(lines):
        b.add(parse_line(line), T0 + timedelta(seconds=i), "exports", i, stream=stream)
    return ToolResult(call_id="c", tool="log_stats", status="success", data=b.result())


def _requests(pod: str, n: int, query_s: float, render_s: float) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for i in range(n):
        out += [(pod, line.replace("1200", str(1200 + i))) for line in REQUEST]
        out += [
            (pod, f"Query finished in {query_s} seconds."),
            (pod, f"Export rendered in {render_s} seconds."),
        ]
    return out


def test_log_stats_keeps_the_lines_of_the_same_stream_before_the_slowest() -> None:
    lines = _requests("exports-1", 3, 6.2, 6.4)
    # another pod's lines interleaved: never part of this pod's story
    noise = [("other-9", "reindex tick")] * len(lines)
    mixed = [x for pair in zip(lines, noise, strict=True) for x in pair]
    data = _stats(mixed).data
    q = next(e for e in data["latency"] if e["key"].startswith("Query finished"))
    assert q["context"][-1] == "Running query: refresh_ledger_totals"
    assert "reindex tick" not in q["context"]
    assert any(c.startswith("Handling request for invoice export") for c in q["context"])


def test_a_slow_dependency_is_told_with_its_request_its_query_and_its_share() -> None:
    facts = log_stats_facts(_stats(_requests("exports-1", 4, 6.2, 6.4)),
                            ObserveContext(eid="E3", window_from=T0))  # fmt: skip
    dep = next(f for f in facts if f.kind == K.DEPENDENCY_FAILURE)
    assert 'during "Handling request for invoice export batch=' in dep.statement
    assert 'timing "Running query: refresh_ledger_totals"' in dep.statement
    assert '97% of "Export rendered in' in dep.statement
    assert dep.detail["operation"] == "Running query: refresh_ledger_totals"
    assert dep.detail["share"] is not None and dep.detail["share"] > 0.9


def test_without_a_stream_nothing_is_guessed() -> None:
    b = StatsBuilder(start=T0, end=T0 + timedelta(hours=1))
    for i, (_, line) in enumerate(_requests("exports-1", 3, 6.2, 6.4)):
        b.add(parse_line(line), T0 + timedelta(seconds=i), "exports", i)  # no stream
    data = b.result()
    assert all("context" not in e for e in data["latency"])
    lat = LatencyStat(key="Query finished in <num> seconds.", p50_ms=6200.0, context=[])
    assert slow_context(lat, [lat]).words() == ""


def test_the_stream_of_a_record() -> None:
    assert stream_of({"pod": "api-1", "host": "n1"}) == "api-1"
    assert stream_of({"kubernetes": {"pod": {"name": "api-2"}}}) == "api-2"
    assert stream_of({"host": {"name": "n1"}}) == "n1"
    assert stream_of({"message": "x"}) is None
