"""The executor pipeline: allow-list, validation, scope, time-outs, retries, budget, cursors."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from opsmate.config import ToolsConfig
from opsmate.tools.audit import AuditLog, read_records
from opsmate.tools.base import (
    CallContext,
    Constraints,
    ToolErrorInfo,
    ToolFailure,
    ToolOutput,
    ToolSpec,
)
from opsmate.tools.executor import Executor
from opsmate.tools.redact import Redactor
from opsmate.tools.registry import ToolRegistry
from opsmate.tools.schemas import ListPodsArgs, QueryMetricsArgs, SearchLogsArgs

NOW = datetime(2026, 10, 21, 10, 6, tzinfo=UTC)
WINDOW_FROM = NOW - timedelta(minutes=36)


class Recorder:
    """A fake tool run function that records what it was called with."""

    def __init__(self, behaviour: Callable[[BaseModel, CallContext, int], Any] | None = None):
        self.calls: list[BaseModel] = []
        self.contexts: list[CallContext] = []
        self.behaviour = behaviour

    def __call__(self, args: BaseModel, ctx: CallContext) -> Any:
        self.calls.append(args)
        self.contexts.append(ctx)
        if self.behaviour is None:
            return ToolOutput(data={"items": [{"n": 1}]}, source_refs=["log://x/1"])
        return self.behaviour(args, ctx, len(self.calls))


def spec(name: str, run: Any, model: type[BaseModel] = SearchLogsArgs, **kw: Any) -> ToolSpec:
    return ToolSpec(name=name, description=f"fake {name}", args_model=model, run=run, **kw)


@pytest.fixture
def audit_path(tmp_path: Path) -> Path:
    return tmp_path / "audit.jsonl"


def make_executor(
    audit_path: Path,
    *specs: ToolSpec,
    constraints: Constraints | None = None,
    config: ToolsConfig | None = None,
    **kw: Any,
) -> Executor:
    c = constraints or Constraints(
        environment="test", window_from=WINDOW_FROM, window_to=NOW, max_window=timedelta(hours=6)
    )
    return Executor(
        ToolRegistry(specs),
        c,
        config=config or ToolsConfig(max_retries=2),
        now=NOW,
        audit=AuditLog(audit_path),
        **kw,
    )


# -- allow-list and validation ------------------------------------------------------
def test_unknown_tool_is_rejected_and_lists_known_tools(audit_path: Path) -> None:
    ex = make_executor(audit_path, spec("search_logs", Recorder()))
    r = ex.call("delete_pod", {"name": "x"})
    assert r.status == "rejected"
    assert r.error is not None and r.error.code == "unknown_tool"
    assert "search_logs" in r.error.message and not r.error.retryable
    assert r.call_id == "call_001"


def test_extra_argument_is_rejected_with_allowed_names(audit_path: Path) -> None:
    rec = Recorder()
    ex = make_executor(audit_path, spec("search_logs", rec))
    r = ex.call("search_logs", {"query": "x", "bogus": 1})
    assert r.status == "rejected" and r.error and r.error.code == "invalid_arguments"
    assert "unknown argument 'bogus'" in r.error.message
    assert "from" in r.error.message and "page_size" in r.error.message
    assert rec.calls == []


def test_missing_and_mistyped_arguments(audit_path: Path) -> None:
    ex = make_executor(audit_path, spec("query_metrics", Recorder(), QueryMetricsArgs))
    r = ex.call("query_metrics", {})
    assert r.error and r.error.code == "invalid_arguments"
    assert "missing required argument 'query'" in r.error.message
    ex2 = make_executor(audit_path, spec("search_logs", Recorder()))
    r2 = ex2.call("search_logs", {"page_size": "many"})
    assert r2.error and "argument 'page_size'" in r2.error.message and "'many'" in r2.error.message


def test_arguments_that_are_not_a_mapping_never_raise(audit_path: Path) -> None:
    ex = make_executor(audit_path, spec("search_logs", Recorder()))
    r = ex.call("search_logs", ["not", "a", "dict"])  # type: ignore[arg-type]
    assert r.status == "rejected" and r.error and r.error.code == "invalid_arguments"


# -- scope ------------------------------------------------------------------------------
def test_environment_defaults_to_the_task_and_another_is_forbidden(audit_path: Path) -> None:
    rec = Recorder()
    ex = make_executor(audit_path, spec("search_logs", rec))
    ok = ex.call("search_logs", {"query": "PoolTimeout"})
    assert ok.status == "success"
    assert rec.calls[0].environment == "test"  # type: ignore[attr-defined]
    assert ok.scope["environment"] == "test"
    bad = ex.call("search_logs", {"query": "PoolTimeout", "environment": "prod"})
    assert bad.status == "rejected" and bad.error and bad.error.code == "forbidden_scope"
    assert "the task is limited to environment 'test'" in bad.error.message
    assert len(rec.calls) == 1  # nothing ran


def test_namespace_and_service_limits(audit_path: Path) -> None:
    rec = Recorder()
    c = Constraints(environment="test", namespaces=["shop"], allowed_services=["order-service"])
    ex = make_executor(
        audit_path, spec("list_pods", rec, ListPodsArgs), spec("search_logs", rec), constraints=c
    )
    r = ex.call("list_pods", {})
    assert r.status == "success" and rec.calls[-1].namespace == "shop"  # type: ignore[attr-defined]
    r = ex.call("list_pods", {"namespace": "kube-system"})
    assert r.error and r.error.code == "forbidden_scope" and "shop" in r.error.message
    r = ex.call("search_logs", {"service": "payment-service"})
    assert r.error and r.error.code == "forbidden_scope" and "order-service" in r.error.message
    r = ex.call("search_logs", {})
    assert r.status == "success" and rec.calls[-1].service == "order-service"  # type: ignore[attr-defined]


def test_several_namespaces_stay_open_but_reported(audit_path: Path) -> None:
    rec = Recorder()
    c = Constraints(environment="test", namespaces=["shop", "payments"])
    ex = make_executor(audit_path, spec("list_pods", rec, ListPodsArgs), constraints=c)
    r = ex.call("list_pods", {})
    assert r.scope["namespaces"] == ["shop", "payments"]
    assert rec.contexts[0].constraints.namespaces == ["shop", "payments"]


def test_times_default_to_the_task_window(audit_path: Path) -> None:
    rec = Recorder()
    ex = make_executor(audit_path, spec("search_logs", rec))
    r = ex.call("search_logs", {})
    args = rec.calls[0]
    assert args.from_ == WINDOW_FROM.isoformat(timespec="seconds")  # type: ignore[attr-defined]
    assert args.to == NOW.isoformat(timespec="seconds")  # type: ignore[attr-defined]
    assert r.scope["from"] == args.from_ and "clamped" not in r.scope  # type: ignore[attr-defined]


def test_relative_times_resolve_against_now(audit_path: Path) -> None:
    rec = Recorder()
    ex = make_executor(audit_path, spec("query_metrics", rec, QueryMetricsArgs))
    ex.call("query_metrics", {"query": "up", "start": "-10m", "end": "now"})
    assert rec.calls[0].start == (NOW - timedelta(minutes=10)).isoformat(timespec="seconds")  # type: ignore[attr-defined]


def test_long_window_is_clamped_and_reported(audit_path: Path) -> None:
    rec = Recorder()
    ex = make_executor(audit_path, spec("search_logs", rec))
    r = ex.call("search_logs", {"from": "-7d"})
    assert r.status == "success"
    clamp = r.scope["clamped"]["from"]
    assert clamp["asked"] == (NOW - timedelta(days=7)).isoformat(timespec="seconds")
    assert clamp["used"] == (NOW - timedelta(hours=6)).isoformat(timespec="seconds")
    assert rec.calls[0].from_ == clamp["used"]  # type: ignore[attr-defined]


def test_window_outside_the_task_window_is_narrowed_not_rejected(audit_path: Path) -> None:
    rec = Recorder()
    ex = make_executor(audit_path, spec("search_logs", rec))
    r = ex.call("search_logs", {"from": "2026-10-10T00:00:00Z", "to": "2026-10-12T00:00:00Z"})
    assert r.status == "success"
    assert r.scope["outside_window"] is True
    assert r.scope["clamped"]["from"]["used"] == "2026-10-11T18:00:00+00:00"


def test_bad_times_are_rejected(audit_path: Path) -> None:
    ex = make_executor(audit_path, spec("search_logs", Recorder()))
    r = ex.call("search_logs", {"from": "yesterday-ish"})
    assert r.error and r.error.code == "invalid_arguments" and "'from'" in r.error.message
    r = ex.call("search_logs", {"from": "-10m", "to": "-20m"})
    assert r.error and r.error.code == "invalid_arguments" and "after" in r.error.message


def test_page_size_is_clamped(audit_path: Path) -> None:
    rec = Recorder()
    c = Constraints(environment="test", max_page_size=100)
    ex = make_executor(audit_path, spec("search_logs", rec), constraints=c)
    r = ex.call("search_logs", {"page_size": 900})
    assert rec.calls[0].page_size == 100  # type: ignore[attr-defined]
    assert r.scope["clamped"]["page_size"] == {"asked": 900, "used": 100}


# -- faults ----------------------------------------------------------------------------
def failing(code: str, retryable: bool) -> Recorder:
    def behaviour(args: BaseModel, ctx: CallContext, n: int) -> Any:
        raise ToolFailure(code, f"{code} happened", retryable=retryable)

    return Recorder(behaviour)


@pytest.mark.parametrize(
    ("code", "retryable", "attempts"),
    [
        ("unreachable", True, 3),  # connection refused / unknown host
        ("auth", False, 1),  # 401/403
        ("server_error", True, 3),  # 500
        ("bad_response", False, 1),  # malformed JSON from the source
    ],
)
def test_tool_failures(
    audit_path: Path, code: str, retryable: bool, attempts: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("opsmate.tools.executor._BACKOFF_S", (0.01,))
    rec = failing(code, retryable)
    ex = make_executor(audit_path, spec("search_logs", rec))
    r = ex.call("search_logs", {})
    assert r.status == "error" and r.error is not None
    assert (r.error.code, r.error.retryable) == (code, retryable)
    assert len(rec.calls) == attempts
    assert r.scope.get("attempts", 1) == attempts
    assert r.complete is False


def test_retry_succeeds_after_a_transient_failure(
    audit_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("opsmate.tools.executor._BACKOFF_S", (0.01,))

    def flaky(args: BaseModel, ctx: CallContext, n: int) -> Any:
        if n == 1:
            raise ToolFailure("unreachable", "connection refused", retryable=True)
        return ToolOutput(data={"items": []}, status="no_data")

    rec = Recorder(flaky)
    r = make_executor(audit_path, spec("search_logs", rec)).call("search_logs", {})
    assert r.status == "no_data" and r.scope["attempts"] == 2
    assert rec.contexts[1].extra["attempt"] == 2


def test_non_idempotent_tools_are_not_retried(audit_path: Path) -> None:
    rec = failing("unreachable", True)
    ex = make_executor(audit_path, spec("search_logs", rec, idempotent=False))
    r = ex.call("search_logs", {})
    assert r.error and r.error.code == "unreachable" and len(rec.calls) == 1


def test_slow_tool_times_out(audit_path: Path) -> None:
    release = threading.Event()

    def slow(args: BaseModel, ctx: CallContext, n: int) -> Any:
        release.wait(5)
        return ToolOutput()

    rec = Recorder(slow)
    ex = make_executor(
        audit_path, spec("search_logs", rec, timeout_s=0.2), config=ToolsConfig(max_retries=0)
    )
    r = ex.call("search_logs", {})
    release.set()
    assert r.status == "error" and r.error and r.error.code == "timeout" and r.error.retryable
    assert r.elapsed_ms < 3000


def test_config_timeout_applies_when_the_spec_sets_none(audit_path: Path) -> None:
    release = threading.Event()
    rec = Recorder(lambda a, c, n: release.wait(5))
    ex = make_executor(
        audit_path, spec("search_logs", rec), config=ToolsConfig(timeout_seconds=0.2, max_retries=0)
    )
    r = ex.call("search_logs", {})
    release.set()
    assert r.error and r.error.code == "timeout"


def test_retries_stop_at_the_deadline(audit_path: Path) -> None:
    rec = failing("server_error", True)
    cfg = ToolsConfig(max_retries=10)
    ex = make_executor(
        audit_path, spec("search_logs", rec), config=cfg, deadline=time.monotonic() + 0.6
    )
    r = ex.call("search_logs", {})
    assert r.error and r.error.code == "server_error"
    assert 1 <= len(rec.calls) < 4
    assert ex.deadline is not None
    time.sleep(max(0.0, ex.deadline - time.monotonic()) + 0.01)
    late = ex.call("search_logs", {})
    assert late.error and late.error.code == "timeout" and not late.error.retryable


def test_unexpected_exception_is_internal(audit_path: Path) -> None:
    def boom(args: BaseModel, ctx: CallContext, n: int) -> Any:
        raise KeyError("oops")

    r = make_executor(audit_path, spec("search_logs", Recorder(boom))).call("search_logs", {})
    assert r.status == "error" and r.error and r.error.code == "internal"
    assert "KeyError" in r.error.message and not r.error.retryable


def test_malformed_tool_result_is_bad_response(audit_path: Path) -> None:
    r = make_executor(
        audit_path, spec("search_logs", Recorder(lambda a, c, n: {"status": "weird"}))
    ).call("search_logs", {})
    assert r.error and r.error.code == "bad_response"
    r = make_executor(audit_path, spec("search_logs", Recorder(lambda a, c, n: 42))).call(
        "search_logs", {}
    )
    assert r.error and r.error.code == "internal"


def test_enormous_result_is_truncated_with_a_hint(audit_path: Path) -> None:
    items = [
        {"message": f"PoolTimeout waiting for connection #{i}", "pod": "order-7f9"}
        for i in range(3000)
    ]
    rec = Recorder(lambda a, c, n: ToolOutput(data={"total": 3000, "items": items}))
    ex = make_executor(audit_path, spec("search_logs", rec, token_budget=500))
    r = ex.call("search_logs", {})
    assert r.status == "partial" and r.complete is False and r.truncated is not None
    assert r.truncated.items_dropped > 2900
    assert "narrow the time range" in r.truncated.hint and "page_size" in r.truncated.hint
    kept = r.data["items"]
    assert kept and kept[0] == items[0] and r.data["total"] == 3000
    assert len(json.dumps(r.data, separators=(",", ":"))) <= 500 * 4


def test_one_huge_string_is_cut(audit_path: Path) -> None:
    rec = Recorder(lambda a, c, n: ToolOutput(data={"log": "x" * 50_000}))
    r = make_executor(audit_path, spec("search_logs", rec)).call("search_logs", {})
    assert r.truncated and "characters of long text were cut" in r.truncated.hint
    assert len(r.data["log"]) < 7000


# -- cursors ------------------------------------------------------------------------------
def paging(args: BaseModel, ctx: CallContext, n: int) -> ToolOutput:
    cursor = getattr(args, "cursor", None)
    page = int(cursor.split("_")[1]) if cursor else 1
    return ToolOutput(
        data={"items": [{"page": page}]}, complete=False, next_cursor=f"page_{page + 1}"
    )


def test_cursor_round_trip_and_binding(audit_path: Path) -> None:
    rec = Recorder(paging)
    ex = make_executor(audit_path, spec("search_logs", rec))
    first = ex.call("search_logs", {"query": "PoolTimeout", "from": "-30m"})
    assert first.next_cursor and first.next_cursor != "page_2"
    second = ex.call(
        "search_logs",
        {"query": "PoolTimeout", "from": "-30m", "page_size": 10, "cursor": first.next_cursor},
    )
    assert second.status == "success" and rec.calls[-1].cursor == "page_2"  # type: ignore[attr-defined]
    assert second.data["items"] == [{"page": 2}]
    other = ex.call("search_logs", {"query": "OOMKilled", "cursor": first.next_cursor})
    assert other.status == "rejected" and other.error and other.error.code == "bad_cursor"
    assert "different query" in other.error.message
    junk = ex.call("search_logs", {"query": "PoolTimeout", "cursor": "page_2"})
    assert junk.error and junk.error.code == "bad_cursor"
    assert len(rec.calls) == 2


def test_cursor_pins_relative_times(audit_path: Path) -> None:
    rec = Recorder(paging)
    ex = make_executor(audit_path, spec("search_logs", rec))
    first = ex.call("search_logs", {"from": "-30m"})
    ex.fixed_now = NOW + timedelta(minutes=5)  # time passes between pages
    ex.call("search_logs", {"from": "-30m", "cursor": first.next_cursor})
    assert rec.calls[1].from_ == rec.calls[0].from_  # type: ignore[attr-defined]
    assert rec.calls[1].to == rec.calls[0].to  # type: ignore[attr-defined]


# -- redaction, audit, ids --------------------------------------------------------------------
def test_redaction_and_audit(audit_path: Path) -> None:
    def leaky(args: BaseModel, ctx: CallContext, n: int) -> ToolOutput:
        return ToolOutput(
            data={"items": [{"message": "connect postgres://app:hunter2@db/orders failed"}]},
            source_refs=["log://order-service/1?token=abcd1234"],
        )

    ex = make_executor(audit_path, spec("search_logs", Recorder(leaky)))
    r = ex.call("search_logs", {"query": "password=letmein"})
    assert r.redactions == 3
    text = r.model_dump_json()
    for secret in ("hunter2", "abcd1234", "letmein"):
        assert secret not in text
    assert "postgres://app:[REDACTED]@db/orders" in r.data["items"][0]["message"]
    records = list(read_records(audit_path))
    assert len(records) == 1
    rec = records[0]
    assert (
        rec["schema_version"] == 1 and rec["call_id"] == "call_001" and rec["tool"] == "search_logs"
    )
    assert rec["status"] == "success" and rec["error_code"] is None and rec["redactions"] == 3
    assert rec["args"]["query"] == "password=[REDACTED]"
    assert rec["scope"]["environment"] == "test" and isinstance(rec["elapsed_ms"], int)
    assert "letmein" not in audit_path.read_text()


def test_error_messages_are_redacted(audit_path: Path) -> None:
    def fails(args: BaseModel, ctx: CallContext, n: int) -> Any:
        raise ToolFailure("auth", "401 for Authorization: Bearer s3cr3t-t0ken-value")

    r = make_executor(audit_path, spec("search_logs", Recorder(fails))).call("search_logs", {})
    assert r.error and "s3cr3t" not in r.error.message and r.redactions == 1


def test_every_call_is_audited_with_sequential_ids(audit_path: Path) -> None:
    ex = make_executor(audit_path, spec("search_logs", Recorder()), call_prefix="step")
    ex.call("search_logs", {})
    ex.call("nope", {})
    ex.call("search_logs", {"environment": "prod"})
    records = list(read_records(audit_path))
    assert [r["call_id"] for r in records] == ["step_001", "step_002", "step_003"]
    assert [r["error_code"] for r in records] == [None, "unknown_tool", "forbidden_scope"]
    assert [c.call_id for c in ex.calls] == ["step_001", "step_002", "step_003"]


def test_default_audit_path_is_the_user_data_dir(tmp_path: Path) -> None:
    ex = Executor(ToolRegistry([spec("search_logs", Recorder())]), Constraints(), now=NOW)
    ex.call("search_logs", {})
    assert (tmp_path / "data" / "audit.jsonl").exists()  # OPSMATE_DATA_DIR from conftest


def test_a_failing_redactor_withholds_the_result(audit_path: Path) -> None:
    class Broken(Redactor):
        def redact_obj(self, obj: Any) -> tuple[Any, int]:
            raise RuntimeError("boom")

    rec = Recorder(lambda a, c, n: ToolOutput(data={"secret": "password=hunter2"}))
    ex = make_executor(audit_path, spec("search_logs", rec), redactor=Broken())
    r = ex.call("search_logs", {})
    assert r.status == "error" and r.error and r.error.code == "internal"
    assert "hunter2" not in r.model_dump_json() and "hunter2" not in audit_path.read_text()


def test_not_available_answers_pass_through(audit_path: Path) -> None:
    def unavailable(args: BaseModel, ctx: CallContext, n: int) -> ToolOutput:
        return ToolOutput(
            status="no_data",
            data={"recorded_queries": ["up"]},
            error=ToolErrorInfo(code="not_available", message="not recorded"),
        )

    r = make_executor(audit_path, spec("search_logs", Recorder(unavailable))).call(
        "search_logs", {}
    )
    assert r.status == "no_data" and r.error and r.error.code == "not_available"
    assert r.data["recorded_queries"] == ["up"]


def test_http_status_codes_map_to_envelope_codes() -> None:
    from opsmate.tools.base import http_status_code

    assert http_status_code(401) == ("auth", False)
    assert http_status_code(403) == ("auth", False)
    assert http_status_code(400) == ("bad_request", False)
    assert http_status_code(422) == ("bad_request", False)
    assert http_status_code(404) == ("not_found", False)
    assert http_status_code(429) == ("server_error", True)
    assert http_status_code(503) == ("server_error", True)
    assert http_status_code(418) == ("bad_response", False)
