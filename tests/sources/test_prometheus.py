"""The Prometheus tools against a REAL Prometheus (backfilled fixture TSDB), and their
failure modes against a fault server, directly and through the Executor."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import prom_fixture
import pytest
from prom_fixture import FaultServer, PromServer, free_port, run_prometheus

from opsmate.config import Settings, ToolsConfig
from opsmate.tools import schemas as s
from opsmate.tools.audit import AuditLog
from opsmate.tools.base import CallContext, Constraints, ToolFailure, ToolResult
from opsmate.tools.executor import Executor
from opsmate.tools.prometheus.tools import MetricMetadataArgs, MetricNamesArgs, tool_specs
from opsmate.tools.registry import ToolRegistry, live_registry
from opsmate.tools.shaping import metric_ref

CST = timezone(timedelta(hours=8))
W_FROM = datetime(2026, 10, 21, 9, 30, tzinfo=CST)
W_TO = datetime(2026, 10, 21, 10, 6, tzinfo=CST)
RELEASE = datetime(2026, 10, 21, 10, 0, tzinfo=CST)
ERRORS_BY_CODE = 'sum by (code) (rate(http_requests_total{service="order-service"}[5m]))'


@pytest.fixture(scope="session")
def prom(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PromServer]:
    """One real Prometheus for the whole session (fails, never skips, without the binary)."""
    with run_prometheus(tmp_path_factory.mktemp("prometheus")) as server:
        yield server


def settings_for(url: str, env: str = "test") -> Settings:
    return Settings(environments={env: {"prometheus": {"url": url, "timeout": 5}}})


def specs(url: str) -> dict[str, Any]:
    return {spec.name: spec for spec in tool_specs(settings_for(url))}


def ctx(window: bool = True, now: datetime = W_TO) -> CallContext:
    c = Constraints(environment="test")
    if window:
        c = Constraints(environment="test", window_from=W_FROM, window_to=W_TO)
    return CallContext(call_id="call_test", constraints=c, now=now)


def executor(
    registry: ToolRegistry, tmp_path: Path, *, retries: int = 0, env: str = "test"
) -> Executor:
    return Executor(
        registry,
        Constraints(environment=env, window_from=W_FROM, window_to=W_TO),
        config=ToolsConfig(max_retries=retries),
        now=W_TO,
        audit=AuditLog(tmp_path / "audit.jsonl"),
    )


def series_by(data: dict[str, Any], label: str) -> dict[str, dict[str, Any]]:
    return {ser["labels"][label]: ser for ser in data["series"]}


# --------------------------------------------------------------------------- real server


def test_range_query_summarises_the_error_spike(prom: PromServer) -> None:
    out = specs(prom.url)["query_metrics"].run(s.QueryMetricsArgs(query=ERRORS_BY_CODE), ctx())
    assert out.status == "success"
    assert out.source_refs == [metric_ref(ERRORS_BY_CODE)]
    assert out.scope["start"] == "2026-10-21T09:30:00+08:00"
    assert out.scope["step"] == 30  # 36 minutes under a 120-point budget
    data = out.data
    assert data["result_type"] == "matrix" and data["series_total"] == 2
    errors = series_by(data, "code")["500"]
    assert errors["points"] == 73
    assert errors["first"]["value"] == pytest.approx(0.1)
    assert errors["max"]["value"] == pytest.approx(8.0)
    change_at = datetime.fromisoformat(errors["largest_change"]["time"])
    assert RELEASE <= change_at <= W_TO
    assert errors["largest_change"]["time"].endswith("+08:00")  # the window's offset
    ok = series_by(data, "code")["200"]
    assert 49 < ok["mean"] < 53
    assert len(ok["samples"]) <= 20 and ok["samples_downsampled_from"] == 73


def test_instant_query_vector_scalar_and_string(prom: PromServer) -> None:
    run = specs(prom.url)["query_metrics"].run
    out = run(s.QueryMetricsArgs(query="db_pool_connections_in_use", type="instant"), ctx())
    assert out.data["result_type"] == "vector"
    (pool,) = out.data["series"]
    assert pool["labels"]["pool"] == "orders-db"
    assert pool["last"]["value"] == 20.0  # saturated: 20 of 20
    assert out.scope["time"] == "2026-10-21T10:06:00+08:00"
    before = run(
        s.QueryMetricsArgs(
            query="db_pool_connections_in_use", type="instant", end="2026-10-21T09:45:00+08:00"
        ),
        ctx(),
    )
    assert before.data["series"][0]["last"]["value"] < 10
    scalar = run(s.QueryMetricsArgs(query="scalar(vector(3))", type="instant"), ctx())
    assert scalar.data["result_type"] == "scalar"
    assert scalar.data["series"][0]["last"]["value"] == 3.0
    text = run(s.QueryMetricsArgs(query='"hello"', type="instant"), ctx())
    assert text.data["result_type"] == "string" and text.data["value"]["value"] == "hello"


def test_explicit_step_and_a_step_too_fine_for_prometheus(prom: PromServer) -> None:
    run = specs(prom.url)["query_metrics"].run
    out = run(s.QueryMetricsArgs(query="db_pool_connections_max", step=60), ctx())
    assert out.scope["step"] == 60 and out.data["series"][0]["points"] == 37
    fine = run(
        s.QueryMetricsArgs(
            query="db_pool_connections_max",
            start="2026-10-21T04:06:00+08:00",
            end="2026-10-21T10:06:00+08:00",
            step=1,
        ),
        ctx(),
    )
    assert fine.status == "success"  # 21,600 points would be refused; the step was raised
    assert fine.scope["clamped"]["step"]["asked"] == 1
    assert fine.scope["step"] == fine.scope["clamped"]["step"]["used"] >= 2


def test_default_range_is_the_last_hour_without_a_task_window(prom: PromServer) -> None:
    now = datetime(2026, 10, 21, 2, 30, tzinfo=UTC)
    out = specs(prom.url)["query_metrics"].run(
        s.QueryMetricsArgs(query="db_pool_connections_max"), ctx(window=False, now=now)
    )
    assert out.scope["start"] == "2026-10-21T01:30:00+00:00"
    assert out.scope["end"] == "2026-10-21T02:30:00+00:00"
    assert out.data["series"][0]["points"] == 121


def test_unknown_metric_is_no_data(prom: PromServer) -> None:
    out = specs(prom.url)["query_metrics"].run(
        s.QueryMetricsArgs(query="no_such_metric_total"), ctx()
    )
    assert out.status == "no_data" and out.data["series"] == []
    assert "metric_names" in out.data["message"]


def test_invalid_promql_is_bad_request(prom: PromServer, tmp_path: Path) -> None:
    with pytest.raises(ToolFailure) as info:
        specs(prom.url)["query_metrics"].run(s.QueryMetricsArgs(query="sum(rate(x[5m])"), ctx())
    assert info.value.code == "bad_request" and not info.value.retryable
    assert "parse error" in info.value.message
    res = executor(live_registry(settings_for(prom.url)), tmp_path).call(
        "query_metrics", {"query": "rate(x[5m]"}
    )
    assert (res.status, res.error and res.error.code) == ("error", "bad_request")


def test_list_alerts_by_state(prom: PromServer) -> None:
    run = specs(prom.url)["list_alerts"].run
    deadline = time.monotonic() + 10
    out = run(s.ListAlertsArgs(), ctx())
    while out.data["count"] < 2 and time.monotonic() < deadline:  # rules evaluate every 1 s
        time.sleep(0.2)
        out = run(s.ListAlertsArgs(), ctx())
    names = [(a["name"], a["state"]) for a in out.data["alerts"]]
    assert names == [("FixtureAlwaysFiring", "firing"), ("FixtureAlwaysPending", "pending")]
    firing = out.data["alerts"][0]
    assert firing["severity"] == "critical" and firing["labels"] == {"service": "order-service"}
    assert firing["annotations"]["summary"].startswith("always firing")
    assert "alert://FixtureAlwaysFiring" in out.source_refs
    pending = run(s.ListAlertsArgs(state="pending"), ctx())
    assert [a["name"] for a in pending.data["alerts"]] == ["FixtureAlwaysPending"]
    inactive = run(s.ListAlertsArgs(state="inactive"), ctx())
    assert [a["name"] for a in inactive.data["alerts"]] == ["FixtureNeverActive"]
    assert inactive.data["alerts"][0]["active_at"] is None


def test_metric_names_filtered_and_limited(prom: PromServer) -> None:
    run = specs(prom.url)["metric_names"].run
    out = run(MetricNamesArgs(match="POOL"), ctx())
    assert out.data["names"] == ["db_pool_connections_in_use", "db_pool_connections_max"]
    limited = run(MetricNamesArgs(match="pool", limit=1), ctx())
    assert limited.data["names"] == ["db_pool_connections_in_use"]
    assert not limited.complete and limited.truncated and limited.truncated.items_dropped == 1
    assert run(MetricNamesArgs(match="no-such-thing"), ctx()).status == "no_data"


def test_through_the_executor_with_relative_times(prom: PromServer, tmp_path: Path) -> None:
    registry = live_registry(settings_for(prom.url))
    assert {"query_metrics", "list_alerts", "metric_names", "metric_metadata"} <= set(
        registry.names()
    )
    res = executor(registry, tmp_path).call(
        "query_metrics", {"query": ERRORS_BY_CODE, "start": "-10m"}
    )
    assert res.status == "success" and res.error is None
    assert res.scope["environment"] == "test"
    assert res.scope["start"] == "2026-10-21T09:56:00+08:00"
    assert series_by(res.data, "code")["500"]["last"]["value"] == pytest.approx(8.0)
    audit = [json.loads(x) for x in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert audit[-1]["tool"] == "query_metrics" and audit[-1]["status"] == "success"


# --------------------------------------------------------------------------- rejections


def test_another_environment_is_rejected_before_anything_runs(tmp_path: Path) -> None:
    with FaultServer("ok") as fault:
        settings = Settings(
            environments={
                "test": {"prometheus": {"url": fault.url}},
                "prod": {"prometheus": {"url": fault.url}},
            }
        )
        res = executor(live_registry(settings), tmp_path).call(
            "query_metrics", {"query": "up", "environment": "prod"}
        )
        assert res.status == "rejected" and res.error is not None
        assert res.error.code == "forbidden_scope" and not res.error.retryable
        assert fault.requests == []


@pytest.mark.parametrize(
    "args",
    [{}, {"query": "up", "step": 0}, {"query": "up", "type": "sideways"}, {"query": "up", "x": 1}],
)
def test_invalid_arguments_are_rejected(args: dict[str, Any], tmp_path: Path) -> None:
    res = executor(live_registry(settings_for("http://127.0.0.1:9")), tmp_path).call(
        "query_metrics", args
    )
    assert res.status == "rejected" and res.error is not None
    assert res.error.code == "invalid_arguments"


def test_environment_without_prometheus_is_not_configured(tmp_path: Path) -> None:
    settings = Settings(
        environments={"test": {"prometheus": {"url": "http://127.0.0.1:9"}}, "staging": {}}
    )
    res = executor(live_registry(settings), tmp_path, env="staging").call("list_alerts", {})
    assert res.status == "error" and res.error is not None
    assert res.error.code == "not_configured" and not res.error.retryable
    assert "environments.staging.prometheus.url" in res.error.message


def test_a_missing_prometheus_binary_fails_the_fixture_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prom_fixture, "PROMETHEUS", str(tmp_path / "no-prometheus"))
    fails = pytest.raises(pytest.fail.Exception, match="apt-get install -y prometheus")
    with fails, run_prometheus(tmp_path):
        pass


def test_no_tools_without_any_prometheus() -> None:
    assert tool_specs(Settings(environments={"test": {}})) == []


# --------------------------------------------------------------------------- faults


def call(
    url: str,
    tmp_path: Path,
    *,
    timeout: float | None = None,
    retries: int = 0,
    tool: str = "query_metrics",
    args: dict[str, Any] | None = None,
) -> ToolResult:
    registry = live_registry(settings_for(url))
    if timeout is not None:
        spec = registry.get(tool)
        assert spec is not None
        registry.register(dataclasses.replace(spec, timeout_s=timeout))
    return executor(registry, tmp_path, retries=retries).call(
        tool, args if args is not None else {"query": "up"}
    )


def assert_error(res: ToolResult, code: str, retryable: bool) -> None:
    assert res.status == "error" and res.error is not None, res
    assert (res.error.code, res.error.retryable) == (code, retryable), res.error
    assert not res.complete


def test_connection_refused_is_unreachable_and_retried(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    res = call(url, tmp_path)
    assert_error(res, "unreachable", True)
    assert res.error is not None and "refused" in res.error.message
    retried = call(url, tmp_path, retries=1)
    assert_error(retried, "unreachable", True)
    assert retried.scope["attempts"] == 2


def test_unknown_host_is_unreachable(tmp_path: Path) -> None:
    res = call("http://prometheus.opsmate-test.invalid:9090", tmp_path)
    assert_error(res, "unreachable", True)
    assert res.error is not None and "resolve" in res.error.message


@pytest.mark.parametrize("mode", ["unauthorized", "forbidden"])
def test_refused_credentials_are_auth(mode: str, tmp_path: Path) -> None:
    with FaultServer(mode) as fault:
        res = call(fault.url, tmp_path, retries=2)
    assert_error(res, "auth", False)
    assert "attempts" not in res.scope  # not retryable, not retried
    assert res.error is not None and "opsmate auth set prometheus" in res.error.message


def test_server_error_is_retryable(tmp_path: Path) -> None:
    with FaultServer("server_error") as fault:
        res = call(fault.url, tmp_path)
    assert_error(res, "server_error", True)
    assert res.error is not None and "storage is on fire" in res.error.message


def test_slow_answer_times_out_through_the_executor(tmp_path: Path) -> None:
    with FaultServer("slow", delay=3.0) as fault:
        started = time.monotonic()
        res = call(fault.url, tmp_path, timeout=0.5)
        elapsed = time.monotonic() - started
    assert_error(res, "timeout", True)
    assert elapsed < 2.0


@pytest.mark.parametrize("mode", ["malformed", "bad_shape"])
def test_malformed_answers_are_bad_response(mode: str, tmp_path: Path) -> None:
    with FaultServer(mode) as fault:
        res = call(fault.url, tmp_path)
    assert_error(res, "bad_response", False)


def test_enormous_answer_is_truncated_by_the_executor(tmp_path: Path) -> None:
    with FaultServer("enormous") as fault:
        res = call(fault.url, tmp_path)
    assert res.status == "partial" and not res.complete
    assert res.truncated is not None and res.truncated.items_dropped > 1000
    assert res.data["series_total"] == 1500  # the summary says how many there were
    assert len(json.dumps(res.data, separators=(",", ":"))) <= 4 * 1500


def test_bearer_token_is_sent_and_never_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPSMATE_PROMETHEUS_TOKEN", "s3cr3t-prom-token-42")
    with FaultServer("ok") as fault:
        res = call(fault.url, tmp_path, tool="list_alerts", args={})
    assert res.status == "no_data"
    assert fault.requests[0][1]["Authorization"] == "Bearer s3cr3t-prom-token-42"
    assert "s3cr3t" not in res.model_dump_json()
    assert "s3cr3t" not in (tmp_path / "audit.jsonl").read_text()


def test_basic_auth_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPSMATE_PROMETHEUS_USERNAME", "reader")
    monkeypatch.setenv("OPSMATE_PROMETHEUS_PASSWORD", "pw")
    with FaultServer("ok") as fault:
        call(fault.url, tmp_path)
    assert fault.requests[0][1]["Authorization"] == "Basic cmVhZGVyOnB3"  # reader:pw


# --------------------------------------------------------------------------- last: needs a scrape


def test_metric_metadata_of_a_scraped_metric_and_of_a_backfilled_one(prom: PromServer) -> None:
    run = specs(prom.url)["metric_metadata"].run
    deadline = time.monotonic() + 10
    out = run(MetricMetadataArgs(metric="prometheus_build_info"), ctx())
    while out.status == "no_data" and time.monotonic() < deadline:  # first self-scrape
        time.sleep(0.2)
        out = run(MetricMetadataArgs(metric="prometheus_build_info"), ctx())
    assert out.data["metrics"][0]["name"] == "prometheus_build_info"
    assert out.data["metrics"][0]["type"] == "gauge" and out.data["metrics"][0]["help"]
    backfilled = run(MetricMetadataArgs(metric="db_pool_connections_in_use"), ctx())
    assert backfilled.status == "no_data" and "scrape targets" in backfilled.data["message"]
