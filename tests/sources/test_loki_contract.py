"""The log-tool contract, run over every log source: Elasticsearch and Loki (level as a
stream label, and level read from JSON lines), each served by its protocol fixture with
the same records (``es_fixture.sample_logs``) and driven by the real client code.

These are the behavioural assertions of ``test_logs.py`` (which also checks the
Elasticsearch request bodies), parameterized over the backends: the same filters, pages,
counts, refs, faults and scope must come out of each source.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from es_fixture import WINDOW_FROM, WINDOW_TO, ESFixture, sample_logs
from http_fixture import LoopbackServer
from loki_fixture import LokiFixture
from prom_fixture import free_port

from opsmate.config import Settings, ToolsConfig
from opsmate.tools import schemas as s
from opsmate.tools.audit import AuditLog
from opsmate.tools.base import CallContext, Constraints, ToolFailure, ToolResult
from opsmate.tools.bundle import load_bundle
from opsmate.tools.elasticsearch import tools as es_module
from opsmate.tools.executor import Executor
from opsmate.tools.loki import tools as loki_module
from opsmate.tools.registry import live_registry

INDEX = "logs-test-*"
LOKI_LABELS = {"service": "app", "namespace": "namespace", "pod": "pod", "level": "level",
               "environment": "env"}  # fmt: skip


@dataclasses.dataclass
class Backend:
    """One log source behind its fixture: how to configure it and what it reports."""

    kind: str
    server: Any
    block: dict[str, Any]  # the environment's config block, without url
    scope: dict[str, Any]  # what its scope names besides the filters
    module: ModuleType  # holds STATS_SAMPLE / ERROR_SAMPLE

    @property
    def key(self) -> str:
        return "elasticsearch" if self.kind == "elasticsearch" else "loki"

    def settings(self, url: str | None = None, **extra: Any) -> Settings:
        url = url or self.server.url
        prod = {**self.block, "index": "logs-prod-*"} if self.key == "elasticsearch" else self.block
        return Settings(environments={
            "test": {self.key: {"url": url, **self.block, "timeout": 5, **extra}},
            "prod": {self.key: {"url": url, **prod}},
        })  # fmt: skip

    @property
    def requests(self) -> list[dict[str, Any]]:
        return list(self.server.requests)


def _backend(kind: str, records: list[dict[str, Any]]) -> tuple[LoopbackServer, Backend]:
    if kind == "elasticsearch":
        es = ESFixture({"logs-test-2026.10.21": records, "other-index": []})
        return es, Backend(kind, es, {"index": INDEX}, {"source": "elasticsearch", "index": INDEX},
                           es_module)  # fmt: skip
    if kind == "loki-labels":  # level, environment and the record id as labels / metadata
        fx = LokiFixture(records, label_fields={**{"service": "app", "namespace": "namespace",
                         "pod": "pod", "level": "level", "environment": "env"}},
                         metadata_fields={"_id": "event_id"})  # fmt: skip
        labels = {**LOKI_LABELS, "id": "event_id"}
        return fx, Backend(kind, fx, {"labels": labels}, {"source": "loki"}, loki_module)
    # loki-json: the level only in the JSON line, read with | json
    fx = LokiFixture(records, label_fields={"service": "app", "namespace": "namespace",
                     "pod": "pod", "environment": "env"},
                     metadata_fields={"_id": "event_id"})  # fmt: skip
    labels = {"service": "app", "environment": "env", "id": "event_id"}
    return fx, Backend(kind, fx, {"labels": labels}, {"source": "loki"}, loki_module)


KINDS = ["elasticsearch", "loki-labels", "loki-json"]


@pytest.fixture(params=KINDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    server, b = _backend(request.param, sample_logs())
    with server:
        yield b


def ctx(**constraints: Any) -> CallContext:
    c = Constraints(environment="test", window_from=WINDOW_FROM, window_to=WINDOW_TO, **constraints)
    return CallContext(call_id="call_test", constraints=c, now=WINDOW_TO)


def run(b: Backend, tool: str, args: Any, **constraints: Any) -> Any:
    spec = live_registry(b.settings()).get(tool)
    assert spec is not None
    return spec.run(args, ctx(**constraints))


def executor(b: Backend, tmp_path: Path, *, url: str | None = None, timeout: float | None = None,
             retries: int = 0, budget: int = 1500) -> Executor:  # fmt: skip
    registry = live_registry(b.settings(url))
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


def test_search_by_service_and_level_newest_first(backend: Backend) -> None:
    out = run(backend, "search_logs", s.SearchLogsArgs(service="ORDER-service", level="error"))
    want = expected(lambda r: r["service"] == "order-service" and r["level"].lower() == "error")
    assert out.status == "success" and out.complete
    assert [i["ref"] for i in out.data["items"]] == [
        f"log://order-service/{r['_id']}" for r in want
    ]
    assert out.data["total"] == len(want) == 25
    assert out.source_refs == [i["ref"] for i in out.data["items"]]
    assert out.scope == {
        **backend.scope,
        "environment": "test",
        "service": "ORDER-service",
        "level": "error",
        "from": "2026-10-21T01:30:00+00:00",
        "to": "2026-10-21T02:06:00+00:00",
        "page_size": 50,
    }
    messages = {i["message"] for i in out.data["items"]}
    assert "legacy record without environment field" in messages
    assert "PoolTimeout in prod" not in messages
    first = {k: v for k, v in out.data["items"][0].items() if k != "ref"}
    assert {k: first[k] for k in want[0] if k != "_id"} == {
        k: v for k, v in want[0].items() if k != "_id"
    }  # the record as it was written


def test_level_aliases_match_warn_and_warning(backend: Backend) -> None:
    out = run(backend, "search_logs", s.SearchLogsArgs(level="warn", page_size=200))
    levels = Counter(i["level"] for i in out.data["items"])
    assert levels == {"WARNING": 12, "WARN": 6}


def test_free_text_terms_phrases_and_exclusions(backend: Backend) -> None:
    both = run(backend, "search_logs", s.SearchLogsArgs(query="pooltimeout orders-db"))
    assert both.data["total"] == 24
    assert all("orders-db" in i["message"] for i in both.data["items"])
    phrase = run(backend, "search_logs", s.SearchLogsArgs(query='"pool exhausted"'))
    assert phrase.data["total"] == 12
    wrong_order = run(backend, "search_logs", s.SearchLogsArgs(query='"exhausted pool"'))
    assert wrong_order.status == "no_data" and wrong_order.data["items"] == []
    excluded = run(
        backend, "search_logs", s.SearchLogsArgs(service="order-service", query="-PoolTimeout")
    )
    assert excluded.data["total"] == 187 - 24


def test_time_range_narrows_the_search(backend: Backend) -> None:
    args = s.SearchLogsArgs(
        **{"from": "2026-10-21T10:00:00+08:00", "to": "2026-10-21T10:01:00+08:00"}
    )
    out = run(backend, "search_logs", args)
    assert out.data["items"] and all(
        "2026-10-21T02:00:00Z" <= i["@timestamp"] <= "2026-10-21T02:01:00Z"
        for i in out.data["items"]
    )
    assert out.data["total"] == len(
        [r for r in expected(lambda r: "2026-10-21T02:00:00Z" <= r["@timestamp"]
                             <= "2026-10-21T02:01:00Z")]
    )  # fmt: skip
    assert out.scope["from"] == "2026-10-21T10:00:00+08:00"


def test_nothing_matching_is_no_data(backend: Backend) -> None:
    out = run(backend, "search_logs", s.SearchLogsArgs(service="no-such-service"))
    assert out.status == "no_data" and out.complete and out.next_cursor is None


def test_pagination_through_the_executor_returns_every_record_once(
    backend: Backend, tmp_path: Path
) -> None:
    ex = executor(backend, tmp_path, budget=20_000)
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
    assert set(refs) == {f"log://order-service/{r['_id']}" for r in want}
    assert pages == 5 and times == sorted(times, reverse=True)


def test_cursor_of_another_query_is_rejected(backend: Backend, tmp_path: Path) -> None:
    ex = executor(backend, tmp_path)
    first = ex.call("search_logs", {"service": "order-service", "page_size": 10})
    assert first.next_cursor
    other = ex.call("search_logs", {"service": "payment-service", "cursor": first.next_cursor})
    assert other.status == "rejected" and other.error is not None
    assert other.error.code == "bad_cursor" and not other.error.retryable
    garbage = ex.call("search_logs", {"service": "order-service", "cursor": "bm90LWEtY3Vyc29y"})
    assert garbage.status == "rejected" and garbage.error and garbage.error.code == "bad_cursor"


def test_tool_cursor_is_checked_when_called_directly(backend: Backend) -> None:
    first = run(backend, "search_logs", s.SearchLogsArgs(service="order-service", page_size=5))
    page2 = run(
        backend,
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
            run(backend, "search_logs", bad_args)
        assert info.value.code == "bad_cursor"


# --------------------------------------------------------------------------- log_stats


def test_log_stats_counts_levels_exactly_and_groups_messages(backend: Backend) -> None:
    out = run(backend, "log_stats", s.LogStatsArgs(service="order-service"))
    want = expected(lambda r: r["service"] == "order-service")
    assert out.data["total"] == len(want)
    assert out.data["by_level"] == dict(
        sorted(Counter(r["level"].lower() for r in want).items(), key=lambda kv: (-kv[1], kv[0]))
    )
    top = {g["pattern"]: g for g in out.data["top_messages"]}
    pool = next(g for p, g in top.items() if p.startswith("PoolTimeout: could not acquire"))
    assert pool["count"] == 24 and pool["levels"] == {"error": 24}
    assert pool["first_seen"] == "2026-10-21T02:00:07+00:00"
    assert pool["example_ref"] in out.source_refs
    assert out.data["coverage"]["sample"] is False
    assert out.data["coverage"]["messages_grouped"] == len(want)
    assert sum(out.data["timeline"]["total"]) == len(want)
    assert sum(out.data["timeline"]["error"]) == sum(r["level"].lower() == "error" for r in want)
    assert out.data["buckets"]["count"] == len(out.data["timeline"]["total"]) == 13
    assert out.data["buckets"]["step_seconds"] == 180.0


def test_log_stats_over_a_sample_still_counts_levels_exactly(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(backend.module, "STATS_SAMPLE", 50)
    out = run(backend, "log_stats", s.LogStatsArgs())
    total = len(expected(lambda r: True))
    assert out.data["total"] == total and sum(out.data["by_level"].values()) == total
    errors = [r for r in expected(lambda r: True) if r["level"].lower() == "error"]
    recent_errors = [r for r in sample_logs()[-50:] if r["level"].lower() == "error"]
    grouped = 50 + len(errors) - len(recent_errors)
    assert out.data["coverage"]["records_matching"] == total
    assert out.data["coverage"]["messages_grouped"] == grouped and out.data["coverage"]["sample"]
    assert sum(g["count"] for g in out.data["top_messages"]) + out.data["other_messages"] == grouped
    assert sum(out.data["timeline"]["total"]) == total


def test_log_stats_with_a_level_filter(backend: Backend) -> None:
    out = run(backend, "log_stats", s.LogStatsArgs(level="warning"))
    assert out.data["by_level"] == {"warning": 12, "warn": 6}
    assert {g["pattern"] for g in out.data["top_messages"]} == {
        "connection pool exhausted, queueing request",
        "slow query took <num> ms",
    }
    slow = out.data["latency"][0]
    assert slow["key"] == "slow query took <num> ms" and slow["source"] == "text"
    assert slow["count"] == 6 and slow["max_ms"] == 1000.0


# --------------------------------------------------------------------------- faults and scope


@pytest.mark.parametrize("mode", ["unauthorized", "forbidden"])
def test_refused_credentials_are_auth(mode: str, backend: Backend, tmp_path: Path) -> None:
    backend.server.mode = mode
    res = executor(backend, tmp_path, retries=2).call("log_stats", {})
    assert_error(res, "auth", False)
    assert len(backend.requests) == 1


def test_server_error_is_retryable(backend: Backend, tmp_path: Path) -> None:
    backend.server.mode = "server_error"
    res = executor(backend, tmp_path, retries=1).call("search_logs", {})
    assert_error(res, "server_error", True)
    assert res.scope["attempts"] == 2 and len(backend.requests) == 2


def test_slow_answer_times_out_through_the_executor(backend: Backend, tmp_path: Path) -> None:
    backend.server.mode, backend.server.delay = "slow", 3.0
    started = time.monotonic()
    res = executor(backend, tmp_path, timeout=0.5).call("search_logs", {})
    assert_error(res, "timeout", True)
    assert time.monotonic() - started < 2.0


def test_malformed_json_is_bad_response(backend: Backend, tmp_path: Path) -> None:
    backend.server.mode = "malformed"
    assert_error(executor(backend, tmp_path).call("search_logs", {}), "bad_response", False)


def test_enormous_answer_is_truncated_by_the_executor(backend: Backend, tmp_path: Path) -> None:
    backend.server.mode = "enormous"
    res = executor(backend, tmp_path).call("search_logs", {"page_size": 100})
    assert res.status == "partial" and not res.complete
    assert res.truncated is not None and res.truncated.items_dropped > 50
    assert all(len(i["message"]) <= 2001 for i in res.data["items"])
    assert res.next_cursor


def test_connection_refused_is_unreachable(backend: Backend, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    res = executor(backend, tmp_path, url=url).call("search_logs", {})
    assert_error(res, "unreachable", True)


def test_unknown_host_is_unreachable(backend: Backend, tmp_path: Path) -> None:
    url = "http://logs.opsmate-test.invalid:9200"
    res = executor(backend, tmp_path, url=url).call("log_stats", {})
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
    tool: str, args: dict[str, Any], backend: Backend, tmp_path: Path
) -> None:
    res = executor(backend, tmp_path).call(tool, args)
    assert res.status == "rejected" and res.error and res.error.code == "invalid_arguments"
    assert backend.requests == []


def test_another_environment_is_rejected(backend: Backend, tmp_path: Path) -> None:
    res = executor(backend, tmp_path).call("search_logs", {"environment": "prod"})
    assert res.status == "rejected" and res.error and res.error.code == "forbidden_scope"
    assert backend.requests == []


def test_credential_is_sent_and_never_shown(
    backend: Backend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "ZXMtYXBpLWtleS1zZWNyZXQ="
    if backend.key == "elasticsearch":
        monkeypatch.setenv("OPSMATE_ELASTICSEARCH_API_KEY", secret)
        header = f"ApiKey {secret}"
    else:
        monkeypatch.setenv("OPSMATE_LOKI_TOKEN", secret)
        header = f"Bearer {secret}"
    res = executor(backend, tmp_path).call("search_logs", {"page_size": 1})
    assert res.status == "success"
    sent = {k.lower(): v for k, v in backend.requests[0]["headers"].items()}
    assert sent["authorization"] == header
    assert secret.rstrip("=") not in res.model_dump_json()
    assert secret.rstrip("=") not in (tmp_path / "audit.jsonl").read_text()


def test_not_configured_and_no_tools_without_a_source(backend: Backend) -> None:
    assert live_registry(Settings(environments={"test": {}})).names() == []
    settings = Settings(environments={"prod": {backend.key: {"url": "http://127.0.0.1:9"}}})
    spec = live_registry(settings).get("search_logs")
    assert spec is not None
    with pytest.raises(ToolFailure) as info:
        spec.run(s.SearchLogsArgs(), ctx())
    assert info.value.code == "not_configured"
    assert f"environments.test.{backend.key}.url" in info.value.message
    assert json.dumps(info.value.message)


# --------------------------------------------------------------------------- parity with replay


@pytest.mark.parametrize("kind", KINDS)
def test_live_answers_equal_bundle_replay_of_the_same_records(kind: str, repo_root: Path) -> None:
    """Served by a fixture or replayed from the bundle, the same records give the same data."""
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
    server, b = _backend(kind, docs)
    with server:
        live = live_registry(b.settings())
        for tool, args in [
            ("search_logs", s.SearchLogsArgs(service="order-service", level="error", page_size=20)),
            ("search_logs", s.SearchLogsArgs(query='"connection pool"')),
            ("log_stats", s.LogStatsArgs(service="order-service")),
            ("log_stats", s.LogStatsArgs(level="warn")),
        ]:
            spec = live.get(tool)
            assert spec is not None
            got, want = spec.run(args, call_ctx), replay[tool].run(args, call_ctx)
            assert got.status == want.status == "success", tool
            assert {k: v for k, v in got.data.items() if k != "coverage"} == want.data, tool
            assert got.source_refs == want.source_refs, tool
            assert got.complete == want.complete, tool
