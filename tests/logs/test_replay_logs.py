"""The replayed log tools on bundles built here: levels as understood, rare errors inside the
result budget, pod_logs previous and typed records, time-outs, odd input."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from opsmate.config import ToolsConfig
from opsmate.errors import BundleError
from opsmate.records.base import parse_list
from opsmate.records.logs import LogStats, PodLogLine
from opsmate.tools import schemas as s
from opsmate.tools.audit import AuditLog
from opsmate.tools.base import CallContext, Constraints
from opsmate.tools.bundle import Bundle, load_bundle
from opsmate.tools.executor import Executor
from opsmate.tools.registry import ToolRegistry

T0 = datetime(2031, 4, 2, 8, 0, tzinfo=UTC)
POD = "ledger-6d8f7c9b5-q2w3e"


def _ts(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def make_bundle(
    root: Path, records: list[dict[str, Any]], pods: list[dict[str, Any]] | None = None
) -> Bundle:
    root.mkdir(parents=True, exist_ok=True)
    meta = {
        "format": "opsmate-bundle/v1",
        "title": "t",
        "captured_at": _ts(T0 + timedelta(hours=1)),
        "window": {"from": _ts(T0), "to": _ts(T0 + timedelta(hours=1))},
        "environment": "test",
    }
    (root / "bundle.yaml").write_text(yaml.safe_dump(meta))
    with (root / "logs.ndjson").open("w") as fh:
        for rec in records:
            fh.write(json.dumps(rec) + "\n")
    if pods:
        (root / "k8s").mkdir(exist_ok=True)
        (root / "k8s" / "pods.yaml").write_text(yaml.safe_dump_all(pods))
    return load_bundle(root)


def rec(minute: float, message: str, **extra: Any) -> dict[str, Any]:
    return {
        "@timestamp": _ts(T0 + timedelta(minutes=minute)),
        "message": message,
        "service": "ledger",
        "environment": "test",
        "pod": POD,
        "namespace": "money",
        **extra,
    }


def call(b: Bundle, tool: str, deadline: float | None = None, **args: Any) -> Any:
    spec = {x.name: x for x in b.tool_specs()}[tool]
    ctx = CallContext(
        call_id="c", constraints=Constraints(), now=b.meta.captured_at, deadline=deadline
    )
    return spec.run(spec.args_model.model_validate(args), ctx)


def test_level_filter_matches_levels_as_understood(tmp_path: Path) -> None:
    b = make_bundle(
        tmp_path / "b",
        [
            rec(1, "ledger ready", level="info"),
            rec(2, "curl: (6) Could not resolve host: vault.internal"),  # unleveled
            rec(3, json.dumps({"level": "ERROR", "message": "write rejected"})),  # JSON level
            rec(4, "INFO: retries exhausted counter reset"),  # written INFO, error words
            rec(5, json.dumps({"level": "info", "service": "fx-rates", "message": "tick"})),
        ],
    )
    out = call(b, "search_logs", level="error")
    msgs = [it["message"] for it in out.data["items"]]
    assert len(msgs) == 2 and msgs[1].startswith("curl")
    unleveled = out.data["items"][1]
    assert unleveled["level"] == "error" and unleveled["level_inferred"] is True
    assert out.data["items"][0]["kind"] == "json" and out.data["items"][0]["text"] == (
        "write rejected"
    )
    inner = call(b, "search_logs", service="fx-rates")  # the service a JSON line names
    assert inner.data["total"] == 1


def test_log_stats_keeps_the_rare_error_inside_the_result_budget(tmp_path: Path) -> None:
    records = [
        rec(i * 0.01, json.dumps({"level": "INFO", "message": f"GET /api/balance/{i} ok",
                                  "path": f"/api/balance/{i}", "status": 200,
                                  "response_time_ms": 20 + i % 30, "request_id": f"r-{i}"}))
        for i in range(3000)
    ]  # fmt: skip
    records += [
        rec(10 + i * 0.5, f"batch {i} settled in {i % 9}ms", level="info") for i in range(40)
    ]
    records.insert(2500, rec(25.001, "pq: sorry, too many clients already", level="error"))
    b = make_bundle(tmp_path / "b", records)
    ex = Executor(
        ToolRegistry(b.tool_specs()),
        Constraints(environment="test"),
        config=ToolsConfig(result_token_budget=1500),
        now=b.meta.captured_at,
        audit=AuditLog(tmp_path / "audit.jsonl"),
    )
    res = ex.call("log_stats", {})
    stats = LogStats.model_validate(res.data)
    assert stats.total == 3041 and stats.by_level["error"] == 1
    rare = [g for g in stats.groups() if g.errors]
    assert rare and rare[0].example == "pq: sorry, too many clients already"
    assert rare[0].signal == "saturation"
    assert any(x.startswith("log://ledger/") for x in res.source_refs)


def test_pod_logs_previous_reads_up_to_the_last_termination(tmp_path: Path) -> None:
    lines = [rec(m, f"run 1 step {m}") for m in range(5)]
    lines += [rec(5, "FATAL: ledger schema version 7 not supported")]
    lines += [rec(6 + m, f"run 2 step {m}") for m in range(3)]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": POD, "namespace": "money"},
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {
                    "name": "ledger",
                    "restartCount": 1,
                    "lastState": {
                        "terminated": {
                            "exitCode": 3,
                            "reason": "Error",
                            "finishedAt": _ts(T0 + timedelta(minutes=5, seconds=10)),
                        }
                    },
                    "state": {"running": {"startedAt": _ts(T0 + timedelta(minutes=6))}},
                }
            ],
        },
    }
    b = make_bundle(tmp_path / "b", lines, [pod])
    prev = call(b, "pod_logs", name=POD, previous=True)
    assert prev.data["returned"] == 6 and prev.scope["previous"] is True
    assert prev.scope["previous_basis"].startswith("lines up to the last termination")
    records, skipped = parse_list(PodLogLine, prev.data, "records")
    assert skipped == 0 and len(records) == 6 and all(r.previous for r in records)
    last = records[-1]
    assert last.level == "fatal" and not last.level_inferred and last.time is not None
    assert last.message == "FATAL: ledger schema version 7 not supported"
    assert prev.data["lines"][-1].endswith("FATAL: ledger schema version 7 not supported")
    current = call(b, "pod_logs", name=POD)
    assert current.data["returned"] == 9 and "previous" not in current.scope


def test_pod_logs_previous_without_a_recorded_termination_returns_all_lines(
    tmp_path: Path,
) -> None:
    b = make_bundle(tmp_path / "b", [rec(m, f"line {m}") for m in range(4)])
    out = call(b, "pod_logs", name=POD, previous=True)
    assert out.data["returned"] == 4
    assert out.scope["previous_basis"].startswith("no termination time recorded")


def test_pod_logs_records_keep_the_newest_lines_when_the_tail_is_large(tmp_path: Path) -> None:
    b = make_bundle(
        tmp_path / "b",
        [rec(m * 0.1, f"progress {m} " + "x" * 120) for m in range(200)]
        + [rec(30, "panic: assignment to entry in nil map")],
    )
    out = call(b, "pod_logs", name=POD, tail_lines=201)
    assert out.data["returned"] == 201 and len(out.data["lines"]) == 201
    records, _ = parse_list(PodLogLine, out.data, "records")
    assert 1 < len(records) < 201 and records[-1].kind == "panic"
    assert records[-1].message == "panic: assignment to entry in nil map"


def test_a_scan_stopped_by_the_deadline_answers_partial(tmp_path: Path) -> None:
    b = make_bundle(
        tmp_path / "b", [rec(i * 0.01, f"event {i}", level="info") for i in range(5000)]
    )
    deadline = time.monotonic() + 0.05  # already inside the safety margin
    stats = call(b, "log_stats", deadline=deadline)
    assert stats.complete is False and stats.status == "partial"
    assert "stopped at the time-out" in stats.data["note"]
    search = call(b, "search_logs", deadline=deadline, query="event")
    assert search.complete is False and search.data["total_is_lower_bound"] is True
    full = call(b, "log_stats")
    assert full.complete is True and full.data["total"] == 5000


@pytest.mark.parametrize("stamp", ["1e20", '"12345678901234567890"'])
def test_an_impossible_timestamp_is_a_clear_error(tmp_path: Path, stamp: str) -> None:
    root = tmp_path / "b"
    make_bundle(root, [rec(1, "fine")])
    with (root / "logs.ndjson").open("a") as fh:
        fh.write(f'{{"@timestamp": {stamp}, "message": "x"}}\n')
    with pytest.raises(BundleError) as info:
        load_bundle(root)
    assert "logs.ndjson:2" in str(info.value) and "@timestamp" in str(info.value)


def test_lone_surrogates_in_a_bundle_are_replaced(tmp_path: Path) -> None:
    root = tmp_path / "b"
    make_bundle(root, [])
    (root / "logs.ndjson").write_text(
        '{"@timestamp": "2031-04-02T08:01:00Z", "message": "ERROR half \\ud800 pair"}\n'
    )
    b = load_bundle(root)
    out = call(b, "search_logs")
    json.dumps(out.data, ensure_ascii=False).encode("utf-8")  # printable as UTF-8
    assert "\ufffd" in out.data["items"][0]["message"]


def test_json_lines_do_not_collapse_and_info_is_never_an_error(tmp_path: Path) -> None:
    msgs = ["cart saved", "cart loaded", "price computed"]
    b = make_bundle(
        tmp_path / "b",
        [rec(i * 0.1, json.dumps({"level": "INFO", "message": msgs[i % 3], "user": f"u{i}"}))
         for i in range(300)],
    )  # fmt: skip
    stats = LogStats.model_validate(call(b, "log_stats").data)
    assert {g.pattern for g in stats.top_messages} == set(msgs)
    assert all(g.errors == 0 and g.severity == "info" for g in stats.top_messages)
    assert stats.rare_errors == [] and stats.by_level == {"info": 300}


def test_schema_has_previous() -> None:
    assert s.PodLogsArgs(name="x").previous is False
    assert s.PodLogsArgs.model_json_schema()["properties"]["previous"]["type"] == "boolean"
