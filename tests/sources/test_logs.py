"""The log tools with the REAL elasticsearch client against the ES protocol fixture."""

from __future__ import annotations

import dataclasses
import json
import time
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from es_fixture import WINDOW_FROM, WINDOW_TO, ESFixture, es_server, sample_logs
from prom_fixture import free_port

from opsmate.config import Settings, ToolsConfig
from opsmate.tools import schemas as s
from opsmate.tools.audit import AuditLog
from opsmate.tools.base import CallContext, Constraints, ToolFailure, ToolResult
from opsmate.tools.bundle import load_bundle
from opsmate.tools.elasticsearch import tools as logs_module
from opsmate.tools.elasticsearch.tools import tool_specs
from opsmate.tools.executor import Executor
from opsmate.tools.registry import live_registry

INDEX = "logs-test-*"


@pytest.fixture
def es() -> Iterator[ESFixture]:
    with es_server() as fx:
        yield fx


def settings_for(url: str, index: str = INDEX) -> Settings:
    return Settings(
        environments={
            "test": {"elasticsearch": {"url": url, "index": index, "timeout": 5}},
            "prod": {"elasticsearch": {"url": url, "index": "logs-prod-*"}},
        }
    )


def ctx(**constraints: Any) -> CallContext:
    c = Constraints(environment="test", window_from=WINDOW_FROM, window_to=WINDOW_TO, **constraints)
    return CallContext(call_id="call_test", constraints=c, now=WINDOW_TO)


def run(url: str, tool: str, args: Any, **constraints: Any) -> Any:
    spec = {x.name: x for x in tool_specs(settings_for(url))}[tool]
    return spec.run(args, ctx(**constraints))


def executor(
    url: str,
    tmp_path: Path,
    *,
    timeout: float | None = None,
    index: str = INDEX,
    retries: int = 0,
    budget: int = 1500,
) -> Executor:
    registry = live_registry(settings_for(url, index))
    if timeout is not None:
        for name in ("search_logs", "log_stats"):
            spec = registry.get(name)
            assert spec is not None
            registry.register(dataclasses.replace(spec, timeout_s=timeout))
    return Executor(
        registry,
        Constraints(environment="test", window_from=WINDOW_FROM, window_to=WINDOW_TO),
        config=ToolsConfig(max_retries=retries, result_token_budget=budget),
        now=WINDOW_TO,
        audit=AuditLog(tmp_path / "audit.jsonl"),
    )


def expected(pred: Any) -> list[dict[str, Any]]:
    """The fixture records a search should return (computed independently), newest first."""
    recs = [
        r
        for r in sample_logs()
        if r.get("environment", "test") == "test"
        and pred(r)
        and "2026-10-21T01:30" <= r["@timestamp"] <= "2026-10-21T02:06:00Z"
    ]
    return sorted(recs, key=lambda r: r["@timestamp"], reverse=True)


def assert_error(res: ToolResult, code: str, retryable: bool) -> None:
    assert res.status == "error" and res.error is not None, res
    assert (res.error.code, res.error.retryable) == (code, retryable), res.error


# --------------------------------------------------------------------------- search_logs


def test_search_by_service_and_level_newest_first(es: ESFixture) -> None:
    out = run(es.url, "search_logs", s.SearchLogsArgs(service="ORDER-service", level="error"))
    want = expected(lambda r: r["service"] == "order-service" and r["level"].lower() == "error")
    assert out.status == "success" and out.complete
    assert [i["ref"] for i in out.data["items"]] == [
        f"log://order-service/{r['_id']}" for r in want
    ]
    assert out.data["total"] == len(want) == 25
    assert out.source_refs == [i["ref"] for i in out.data["items"]]
    assert out.scope == {
        "source": "elasticsearch",
        "index": INDEX,
        "environment": "test",
        "service": "ORDER-service",
        "level": "error",
        "from": "2026-10-21T01:30:00+00:00",
        "to": "2026-10-21T02:06:00+00:00",
        "page_size": 50,
    }
    # the record without an environment field is kept, the prod one is not
    messages = {i["message"] for i in out.data["items"]}
    assert "legacy record without environment field" in messages
    assert "PoolTimeout in prod" not in messages


def test_level_aliases_match_warn_and_warning(es: ESFixture) -> None:
    out = run(es.url, "search_logs", s.SearchLogsArgs(level="warn", page_size=200))
    levels = Counter(i["level"] for i in out.data["items"])
    assert levels == {"WARNING": 12, "WARN": 6}


def test_free_text_terms_phrases_and_exclusions(es: ESFixture) -> None:
    both = run(es.url, "search_logs", s.SearchLogsArgs(query="pooltimeout orders-db"))
    assert both.data["total"] == 24
    assert all("orders-db" in i["message"] for i in both.data["items"])
    phrase = run(es.url, "search_logs", s.SearchLogsArgs(query='"pool exhausted"'))
    assert phrase.data["total"] == 12
    wrong_order = run(es.url, "search_logs", s.SearchLogsArgs(query='"exhausted pool"'))
    assert wrong_order.status == "no_data" and wrong_order.data["items"] == []
    excluded = run(
        es.url, "search_logs", s.SearchLogsArgs(service="order-service", query="-PoolTimeout")
    )
    assert excluded.data["total"] == 187 - 24
    sent = es.requests[0]["body"]["query"]["bool"]["must"]
    assert sent == [
        {"match": {"message": {"query": "pooltimeout", "operator": "and"}}},
        {"match": {"message": {"query": "orders-db", "operator": "and"}}},
    ]


def test_time_range_narrows_the_search(es: ESFixture) -> None:
    args = s.SearchLogsArgs(
        **{"from": "2026-10-21T10:00:00+08:00", "to": "2026-10-21T10:01:00+08:00"}
    )
    out = run(es.url, "search_logs", args)
    assert out.data["items"] and all(
        "2026-10-21T02:00:00Z" <= i["@timestamp"] <= "2026-10-21T02:01:00Z"
        for i in out.data["items"]
    )
    assert out.scope["from"] == "2026-10-21T10:00:00+08:00"


def test_nothing_matching_is_no_data(es: ESFixture) -> None:
    out = run(es.url, "search_logs", s.SearchLogsArgs(service="no-such-service"))
    assert out.status == "no_data" and out.complete and out.next_cursor is None


def test_pagination_through_the_executor_returns_every_record_once(
    es: ESFixture, tmp_path: Path
) -> None:
    ex = executor(es.url, tmp_path, budget=20_000)  # whole pages: none cut by the budget
    args: dict[str, Any] = {"service": "order-service", "page_size": 40}
    refs: list[str] = []
    times: list[str] = []
    pages = 0
    while True:
        res = ex.call("search_logs", args)
        assert res.status == "success", res.error
        pages += 1
        refs += [i["ref"] for i in res.data["items"]]
        times += [i["@timestamp"] for i in res.data["items"]]
        if res.complete:
            assert res.next_cursor is None
            break
        assert res.next_cursor
        args = {**args, "cursor": res.next_cursor}
    want = expected(lambda r: r["service"] == "order-service")
    assert len(refs) == len(set(refs)) == len(want) == 187
    assert pages == 5 and times == sorted(times, reverse=True)
    later = [r for r in es.requests if r["body"].get("search_after")]
    assert len(later) == 4 and all(r["body"]["size"] == 41 for r in later)


def test_cursor_of_another_query_is_rejected(es: ESFixture, tmp_path: Path) -> None:
    ex = executor(es.url, tmp_path)
    first = ex.call("search_logs", {"service": "order-service", "page_size": 10})
    assert first.next_cursor
    other = ex.call("search_logs", {"service": "payment-service", "cursor": first.next_cursor})
    assert other.status == "rejected" and other.error is not None
    assert other.error.code == "bad_cursor" and not other.error.retryable
    garbage = ex.call("search_logs", {"service": "order-service", "cursor": "bm90LWEtY3Vyc29y"})
    assert garbage.status == "rejected" and garbage.error and garbage.error.code == "bad_cursor"


def test_tool_cursor_is_checked_when_called_directly(es: ESFixture) -> None:
    first = run(es.url, "search_logs", s.SearchLogsArgs(service="order-service", page_size=5))
    page2 = run(
        es.url,
        "search_logs",
        s.SearchLogsArgs(service="order-service", page_size=5, cursor=first.next_cursor),
    )
    assert page2.data["offset"] == 5
    assert not set(page2.source_refs) & set(first.source_refs)
    for bad_args in (
        s.SearchLogsArgs(service="payment-service", cursor=first.next_cursor),
        s.SearchLogsArgs(service="order-service", cursor="%%%not base64"),
    ):
        with pytest.raises(ToolFailure) as info:
            run(es.url, "search_logs", bad_args)
        assert info.value.code == "bad_cursor"


# --------------------------------------------------------------------------- log_stats


def test_log_stats_counts_levels_exactly_and_groups_messages(es: ESFixture) -> None:
    out = run(es.url, "log_stats", s.LogStatsArgs(service="order-service"))
    want = expected(lambda r: r["service"] == "order-service")
    assert out.data["total"] == len(want)
    assert out.data["by_level"] == dict(
        sorted(Counter(r["level"].lower() for r in want).items(), key=lambda kv: (-kv[1], kv[0]))
    )
    top = {g["pattern"]: g for g in out.data["top_messages"]}
    pool = next(g for p, g in top.items() if p.startswith("PoolTimeout: could not acquire"))
    assert pool["count"] == 24 and pool["levels"] == {"error": 24}
    assert pool["first_seen"] == "2026-10-21T02:00:07+00:00"  # the first occurrence
    assert pool["example_ref"] in out.source_refs
    assert out.data["coverage"]["sample"] is False
    assert out.data["coverage"]["messages_grouped"] == len(want)
    agg = es.requests[-1]["body"]["aggs"]
    assert agg["by_level"] == {"terms": {"field": "level", "size": 50}}
    hist = agg["timeline"]["date_histogram"]
    assert hist["fixed_interval"] == "180s" and hist["min_doc_count"] == 0
    assert agg["dur0"]["filter"] == {"exists": {"field": "duration_ms"}}
    # counted by the server: the level timeline adds up to every matching record
    assert sum(out.data["timeline"]["total"]) == len(want)
    assert sum(out.data["timeline"]["error"]) == sum(r["level"].lower() == "error" for r in want)
    assert out.data["buckets"]["count"] == len(out.data["timeline"]["total"])


def test_log_stats_over_a_sample_still_counts_levels_exactly(
    es: ESFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logs_module, "STATS_SAMPLE", 50)
    out = run(es.url, "log_stats", s.LogStatsArgs())
    total = len(expected(lambda r: True))
    assert out.data["total"] == total and sum(out.data["by_level"].values()) == total
    errors = [r for r in expected(lambda r: True) if r["level"].lower() == "error"]
    recent_errors = [r for r in sample_logs()[-50:] if r["level"].lower() == "error"]
    grouped = 50 + len(errors) - len(recent_errors)  # the recent sample + the error sample
    assert out.data["coverage"]["records_matching"] == total
    assert out.data["coverage"]["messages_grouped"] == grouped and out.data["coverage"]["sample"]
    assert sum(g["count"] for g in out.data["top_messages"]) + out.data["other_messages"] == grouped
    # the second search asked for error-like records: an error level, or none and error words
    err_query = es.requests[-1]["body"]["query"]["bool"]
    assert err_query["minimum_should_match"] == 1 and len(err_query["should"]) == 9
    assert sum(out.data["timeline"]["total"]) == total  # still exact: an aggregation


def test_log_stats_with_a_level_filter(es: ESFixture) -> None:
    out = run(es.url, "log_stats", s.LogStatsArgs(level="warning"))
    assert out.data["by_level"] == {"warning": 12, "warn": 6}
    assert {g["pattern"] for g in out.data["top_messages"]} == {
        "connection pool exhausted, queueing request",
        "slow query took <num> ms",
    }
    slow = out.data["latency"][0]  # a duration written in the text
    assert slow["key"] == "slow query took <num> ms" and slow["source"] == "text"
    assert slow["count"] == 6 and slow["max_ms"] == 1000.0


# --------------------------------------------------------------------------- the fixture itself


def test_fixture_speaks_es_and_refuses_queries_it_does_not_implement(es: ESFixture) -> None:
    from elasticsearch import BadRequestError, Elasticsearch

    client = Elasticsearch(es.url)
    assert client.info()["version"]["number"].startswith("9.")
    with pytest.raises(BadRequestError) as info:
        client.search(index=INDEX, query={"query_string": {"query": "x"}})
    assert info.value.meta.status == 400 and "unknown query [query_string]" in str(info.value)
    hits = client.search(index=INDEX, query={"term": {"message": "PoolTimeout"}})
    assert hits["hits"]["total"]["value"] == 0  # a term on a text field is not analysed


def test_missing_concrete_index_is_not_found(es: ESFixture, tmp_path: Path) -> None:
    res = executor(es.url, tmp_path, index="logs-missing").call("search_logs", {})
    assert_error(res, "not_found", False)
    assert res.error is not None and "environments.test.elasticsearch.index" in res.error.message


def test_a_server_that_is_not_elasticsearch_is_bad_response(es: ESFixture, tmp_path: Path) -> None:
    es.mode = "no_product_header"
    assert_error(executor(es.url, tmp_path).call("search_logs", {}), "bad_response", False)


# --------------------------------------------------------------------------- faults and scope


@pytest.mark.parametrize("mode", ["unauthorized", "forbidden"])
def test_refused_credentials_are_auth(mode: str, es: ESFixture, tmp_path: Path) -> None:
    es.mode = mode
    res = executor(es.url, tmp_path, retries=2).call("log_stats", {})
    assert_error(res, "auth", False)
    assert len(es.requests) == 1  # not retried


def test_server_error_is_retryable(es: ESFixture, tmp_path: Path) -> None:
    es.mode = "server_error"
    res = executor(es.url, tmp_path, retries=1).call("search_logs", {})
    assert_error(res, "server_error", True)
    assert res.scope["attempts"] == 2 and len(es.requests) == 2


def test_slow_answer_times_out_through_the_executor(es: ESFixture, tmp_path: Path) -> None:
    es.mode, es.delay = "slow", 3.0
    started = time.monotonic()
    res = executor(es.url, tmp_path, timeout=0.5).call("search_logs", {})
    assert_error(res, "timeout", True)
    assert time.monotonic() - started < 2.0


def test_malformed_json_is_bad_response(es: ESFixture, tmp_path: Path) -> None:
    es.mode = "malformed"
    assert_error(executor(es.url, tmp_path).call("search_logs", {}), "bad_response", False)


def test_enormous_answer_is_truncated_by_the_executor(es: ESFixture, tmp_path: Path) -> None:
    es.mode = "enormous"
    res = executor(es.url, tmp_path).call("search_logs", {"page_size": 100})
    assert res.status == "partial" and not res.complete
    assert res.truncated is not None and res.truncated.items_dropped > 50
    assert all(len(i["message"]) <= 2001 for i in res.data["items"])
    assert res.next_cursor  # the next page is still reachable


def test_connection_refused_is_unreachable(tmp_path: Path) -> None:
    res = executor(f"http://127.0.0.1:{free_port()}", tmp_path).call("search_logs", {})
    assert_error(res, "unreachable", True)


def test_unknown_host_is_unreachable(tmp_path: Path) -> None:
    res = executor("http://logs.opsmate-test.invalid:9200", tmp_path).call("log_stats", {})
    assert_error(res, "unreachable", True)
    assert res.error is not None and "resolve" in res.error.message


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("search_logs", {"page_size": 0}),
        ("search_logs", {"services": "x"}),
        ("log_stats", {"query": "x"}),
        ("search_logs", {"from": "yesterday-ish"}),
    ],
)
def test_invalid_arguments_are_rejected(
    tool: str, args: dict[str, Any], es: ESFixture, tmp_path: Path
) -> None:
    res = executor(es.url, tmp_path).call(tool, args)
    assert res.status == "rejected" and res.error and res.error.code == "invalid_arguments"
    assert es.requests == []


def test_another_environment_is_rejected(es: ESFixture, tmp_path: Path) -> None:
    res = executor(es.url, tmp_path).call("search_logs", {"environment": "prod"})
    assert res.status == "rejected" and res.error and res.error.code == "forbidden_scope"
    assert es.requests == []


def test_api_key_is_sent_and_never_shown(
    es: ESFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPSMATE_ELASTICSEARCH_API_KEY", "ZXMtYXBpLWtleS1zZWNyZXQ=")
    res = executor(es.url, tmp_path).call("search_logs", {"page_size": 1})
    assert res.status == "success"
    assert es.requests[0]["headers"]["authorization"] == "ApiKey ZXMtYXBpLWtleS1zZWNyZXQ="
    assert "ZXMtYXBpLWtleS1zZWNyZXQ" not in res.model_dump_json()
    assert "ZXMtYXBpLWtleS1zZWNyZXQ" not in (tmp_path / "audit.jsonl").read_text()


def test_not_configured_and_no_tools_without_a_source(tmp_path: Path) -> None:
    assert tool_specs(Settings(environments={"test": {}})) == []
    settings = Settings(environments={"prod": {"elasticsearch": {"url": "http://127.0.0.1:9"}}})
    spec = {x.name: x for x in tool_specs(settings)}["search_logs"]
    with pytest.raises(ToolFailure) as info:
        spec.run(s.SearchLogsArgs(), ctx())
    assert info.value.code == "not_configured"
    assert "environments.test.elasticsearch.url" in info.value.message
    assert json.dumps(info.value.message)  # plain text


def test_live_answers_equal_bundle_replay_of_the_same_records(repo_root: Path) -> None:
    """Served by the fixture or replayed from the bundle, the same records give the same data."""
    bundle = load_bundle(repo_root / "src/opsmate/data/demo/01-pool-exhaustion")
    replay = {spec.name: spec for spec in bundle.tool_specs()}
    docs = [
        {**rec, "_id": rec.get("id") or rec.get("_id") or str(bundle.replay.d.log_lines[i])}
        for i, rec in enumerate(bundle.logs)
    ]
    c = Constraints(
        environment=bundle.meta.environment,
        window_from=bundle.meta.window_from,
        window_to=bundle.meta.window_to,
    )
    call_ctx = CallContext(call_id="call_parity", constraints=c, now=bundle.meta.captured_at)
    with ESFixture({"logs-test-2026.10.21": docs}) as fx:
        settings = Settings(
            environments={"test": {"elasticsearch": {"url": fx.url, "index": INDEX}}}
        )
        live = {spec.name: spec for spec in tool_specs(settings)}
        for tool, args in [
            ("search_logs", s.SearchLogsArgs(service="order-service", level="error", page_size=20)),
            ("search_logs", s.SearchLogsArgs(query='"connection pool"')),
            ("log_stats", s.LogStatsArgs(service="order-service")),
            ("log_stats", s.LogStatsArgs(level="warn")),
        ]:
            got, want = live[tool].run(args, call_ctx), replay[tool].run(args, call_ctx)
            assert got.status == want.status == "success", tool
            assert {k: v for k, v in got.data.items() if k != "coverage"} == want.data, tool
            assert got.source_refs == want.source_refs, tool
            assert got.complete == want.complete, tool


# --------------------------------------------------------------------------- aggregations


def _api_docs() -> list[dict[str, Any]]:
    """An API whose /api/b slows down and fails after 01:48, one rare error, one unleveled."""
    docs: list[dict[str, Any]] = []
    t = WINDOW_FROM
    i = 0
    while t < WINDOW_TO:
        late = t >= WINDOW_FROM + timedelta(minutes=18)
        path = "/api/b" if i % 2 else "/api/a"
        slow = late and path == "/api/b"
        docs.append(
            {
                "_id": f"a-{i:05d}",
                "@timestamp": t.isoformat().replace("+00:00", "Z"),
                "service": "api",
                "environment": "test",
                "level": "INFO",
                "message": f"{path} served",
                "path": path,
                "status": "503" if slow and i % 4 == 1 else "200",
                "duration_ms": 900 + i % 50 if slow else 20 + i % 20,
            }
        )
        t += timedelta(seconds=5)
        i += 1
    needle = WINDOW_FROM + timedelta(minutes=7)
    stamp = needle.isoformat().replace("+00:00", "Z")
    docs.append({"_id": "needle", "@timestamp": stamp, "service": "api", "environment": "test",
                 "level": "ERROR", "message": "pq: sorry, too many clients already"})  # fmt: skip
    docs.append({"_id": "dns", "@timestamp": stamp, "service": "api", "environment": "test",
                 "message": "curl: (6) Could not resolve host: fx.internal"})  # fmt: skip
    return docs


def test_log_stats_counts_durations_and_status_codes_on_the_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(logs_module, "STATS_SAMPLE", 40)
    docs = _api_docs()
    with ESFixture({"logs-test-2026.10.21": docs}) as fx:
        settings = Settings(
            environments={"test": {"elasticsearch": {
                "url": fx.url, "index": INDEX, "status_field": "status", "endpoint_field": "path",
            }}}
        )  # fmt: skip
        spec = {x.name: x for x in tool_specs(settings)}["log_stats"]
        out = spec.run(s.LogStatsArgs(), ctx())
        body = fx.requests[-2]["body"]
    aggs = body["aggs"]
    assert body["size"] == 40  # a sample for templates, not every record
    assert aggs["dur0"]["aggs"]["pct"] == {
        "percentiles": {"field": "duration_ms", "percents": [50, 99]}
    }
    assert aggs["status_codes"]["terms"] == {"field": "status", "size": 20}
    assert aggs["status_by_endpoint"]["aggs"]["codes"]["terms"]["field"] == "status"
    data = out.data
    assert data["total"] == len(docs)
    overall = next(x for x in data["latency"] if x["key"] == "duration_ms")
    assert overall["count"] == len(docs) - 2 and overall["max_ms"] == 949.0
    assert overall["shift"]["after_p50_ms"] > overall["shift"]["before_p50_ms"]
    slow_b = next(x for x in data["latency"] if x["key"] == "/api/b")
    assert slow_b["p99_ms"] > 900
    codes = next(x for x in data["status"] if x["key"] == "(all)")
    n503 = sum(d.get("status") == "503" for d in docs)
    assert codes["codes"]["503"] == n503 and codes["errors"] == n503
    assert sum(codes["timeline_errors"]) == n503
    by_b = next(x for x in data["status"] if x["key"] == "/api/b")
    assert by_b["errors"] == n503
    # the rare error and the unleveled one are older than the sample, found all the same
    examples = {g["example"] for g in data["top_messages"] + data.get("rare_errors", [])}
    assert "pq: sorry, too many clients already" in examples
    assert "curl: (6) Could not resolve host: fx.internal" in examples
    assert data["by_level"]["unknown"] == 1
