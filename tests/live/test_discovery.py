"""Metric discovery builds the request / error / duration / resource survey from the series
a Prometheus holds (hand-built label sets), and says what it did not find; the planner
reads the discovered queries as it reads a bundle's recorded ones."""

from __future__ import annotations

from opsmate.agent.plan import survey
from opsmate.agent.plan.planner import Planner, Recorded
from opsmate.agent.state import TaskState
from opsmate.tools.base import Constraints
from opsmate.tools.prometheus.discovery import (
    _collect,
    _namespace_found,
    build_candidates,
    series_matchers,
)

SERIES = [
    {"__name__": "http_requests_total", "service": "checkout", "code": "500", "pod": "c-1"},
    {"__name__": "http_requests_total", "service": "checkout", "code": "200", "pod": "c-1"},
    {"__name__": "http_request_duration_seconds_bucket", "service": "checkout", "le": "0.5"},
    {"__name__": "http_request_duration_seconds_count", "service": "checkout"},
    {"__name__": "db_pool_connections_in_use", "service": "checkout", "pool": "main"},
    {"__name__": "build_info", "service": "checkout", "version": "1.2"},
    {"__name__": "container_cpu_usage_seconds_total", "namespace": "shop",
     "pod": "checkout-7d9f8-abcde", "container": "app"},
    {"__name__": "container_memory_working_set_bytes", "namespace": "shop",
     "pod": "checkout-7d9f8-abcde", "container": "app"},
    {"__name__": "http_requests_total", "service": "payments", "code": "200"},
]  # fmt: skip
NAMES = {s["__name__"] for s in SERIES}


def test_a_service_gets_its_error_rate_latency_saturation_and_resources() -> None:
    found = _collect(SERIES, ["checkout"], "shop")
    cands, missing = build_candidates(found, {}, NAMES)
    queries = [c.query for c in cands]
    assert 'sum by (code) (rate(http_requests_total{service="checkout"}[5m]))' in queries
    assert (
        "histogram_quantile(0.99, sum by (le) "
        '(rate(http_request_duration_seconds_bucket{service="checkout"}[5m])))' in queries
    )
    assert 'db_pool_connections_in_use{service="checkout"}' in queries
    pods = 'namespace="shop", pod=~"checkout-.*", container!=""'
    assert f"sum by (pod) (rate(container_cpu_usage_seconds_total{{{pods}}}[5m]))" in queries
    assert f"max by (pod) (container_memory_working_set_bytes{{{pods}}})" in queries
    # the _count of a histogram is read through its buckets; other services are not asked
    assert not any("_count" in q or "payments" in q for q in queries)
    assert [c.family for c in cands][:2] == ["errors", "duration"]
    assert cands[-1].query == 'build_info{service="checkout"}'  # any other gauge, last
    assert missing == []


def test_what_is_missing_is_said() -> None:
    found = _collect(SERIES, ["payments", "ghost"], None)
    cands, missing = build_candidates(found, {}, NAMES)
    assert [c.query for c in cands] == [
        'sum by (code) (rate(http_requests_total{service="payments"}[5m]))'
    ]
    assert "payments: no request-duration histogram (latency)" in missing
    assert "payments: no container CPU / memory series of its pods" in missing
    assert any(m.startswith("ghost: no series under the labels") for m in missing)


def test_a_namespace_is_surveyed_per_service_label() -> None:
    found = _namespace_found(SERIES, "shop")
    cands, _ = build_candidates(found, {}, NAMES)
    queries = [c.query for c in cands]
    assert 'sum by (service, code) (rate(http_requests_total{namespace="shop"}[5m]))' in queries
    assert 'sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="shop", ' in " ".join(
        queries
    )


def test_matchers_escape_what_they_quote() -> None:
    got = series_matchers('we"ird.svc', "ns")
    assert '{service="we\\"ird.svc"}' in got
    assert got[-1] == '{pod=~"we"ird\\\\.svc-.*", namespace="ns"}'


def test_the_survey_reads_discovered_queries_and_lists_the_rest() -> None:
    c = Constraints(environment="test", services=["checkout"])
    state = TaskState(goal="checkout fails", questions=["checkout fails"], constraints=c)
    query = 'sum by (code) (rate(http_requests_{}_total{{service="checkout"}}[5m]))'
    found = [Recorded(query.format(i), "range") for i in range(9)]
    calls: list[TaskState] = []

    def discover(st: TaskState) -> tuple[list[Recorded], list[str]]:
        calls.append(st)
        return found, ["metrics not found: checkout: no request-duration histogram (latency)"]

    planner = Planner(state, tools=["query_metrics"], discover=discover)
    survey.baseline(state, planner, None)
    survey.baseline(state, planner, None)  # discovered once
    assert len(calls) == 1
    queued = [p.args["query"] for p in state.pending if p.tool == "query_metrics"]
    assert len(queued) == 6 and queued[0] == found[0].query
    assert sum(1 for p in state.pending if p.tool == "query_metrics" and p.essential) == 2
    assert len(planner.skipped) == 3  # the three discovered queries the survey leaves
    assert "metrics not found" in state.notes[-1]
    # live, a query of the runbooks is asked as written, not mapped onto a discovered one
    assert planner.adapt_query({"query": "up"}) == {"query": "up"}
