"""Typed payloads: the executor validates each answer's data into its tool's payload model.

Lenient as the engine's readers: an item that does not parse is skipped and counted, a
payload that cannot be built is None; the envelope's JSON stays dumped from ``data``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from opsmate.config import ToolsConfig
from opsmate.records.k8s import Node, Pod
from opsmate.records.k8s_objects import Service
from opsmate.records.payloads import (
    LogsPayload,
    MetricNamesPayload,
    NodesPayload,
    ObjectsPayload,
    PodsPayload,
    build_payload,
    nodes_in,
    pods_in,
)
from opsmate.tools.audit import AuditLog
from opsmate.tools.base import CallContext, Constraints, ToolOutput, ToolResult, ToolSpec
from opsmate.tools.executor import Executor
from opsmate.tools.redact import Redactor
from opsmate.tools.registry import ToolRegistry
from opsmate.tools.schemas import (
    ARGS_MODELS,
    PAYLOAD_MODELS,
    ListObjectsArgs,
    ListPodsArgs,
    SearchLogsArgs,
)

NOW = datetime(2026, 10, 21, 10, 6, tzinfo=UTC)


def _executor(tmp_path: Path, *specs: ToolSpec, **kw: Any) -> Executor:
    constraints = Constraints(
        environment="test", window_from=NOW - timedelta(minutes=30), window_to=NOW
    )
    return Executor(
        ToolRegistry(specs),
        constraints,
        config=ToolsConfig(max_retries=0),
        now=NOW,
        audit=AuditLog(tmp_path / "audit.jsonl"),
        **kw,
    )


def _spec(name: str, data: dict[str, Any], args: type[BaseModel], **kw: Any) -> ToolSpec:
    def run(_: BaseModel, __: CallContext) -> ToolOutput:
        return ToolOutput(data=json.loads(json.dumps(data)))

    return ToolSpec(name=name, description=name, args_model=args, run=run, **kw)


def test_every_stable_tool_has_a_payload_model() -> None:
    assert set(PAYLOAD_MODELS) == set(ARGS_MODELS)
    for name, model in PAYLOAD_MODELS.items():
        assert build_payload(model, {}) is not None, name  # every field has a default


def test_spec_payload_model_defaults_by_name() -> None:
    run: Any = None
    assert ToolSpec("list_pods", "d", ListPodsArgs, run).payload_model is PodsPayload
    assert ToolSpec("my_extra_tool", "d", ListPodsArgs, run).payload_model is None
    custom = ToolSpec("my_extra_tool", "d", ListPodsArgs, run, payload_model=MetricNamesPayload)
    assert custom.payload_model is MetricNamesPayload


def test_valid_answer_is_typed(tmp_path: Path) -> None:
    data = {"pods": [{"name": "web-1", "phase": "Running", "restarts": 2}], "count": 1}
    ex = _executor(tmp_path, _spec("list_pods", data, ListPodsArgs))
    result = ex.call("list_pods", {})
    payload = result.payload_as(PodsPayload)
    assert payload is not None
    assert [p.name for p in payload.pods] == ["web-1"]
    assert payload.pods[0].restarts == 2 and payload.count == 1
    assert payload.skipped == 0
    assert result.payload is payload  # validated once, kept
    assert pods_in(payload) == payload.pods


def test_items_that_do_not_parse_are_skipped_and_counted(tmp_path: Path) -> None:
    data = {"pods": [{"name": "a"}, "not a pod", 7, None, {"name": "b", "restarts": "x"}]}
    ex = _executor(tmp_path, _spec("list_pods", data, ListPodsArgs))
    result = ex.call("list_pods", {})
    assert result.status == "success"  # never fails the call
    payload = result.payload_as(PodsPayload)
    assert payload is not None
    assert [p.name for p in payload.pods] == ["a", "b"]
    assert payload.pods[1].restarts == 0  # an odd field degrades, the record stays
    assert payload.skipped == 3


def test_envelope_json_is_dumped_from_data_unchanged(tmp_path: Path) -> None:
    data = {"pods": [{"name": "a", "odd": [1, 2]}, 5], "count": 2, "extra_key": {"x": 1}}
    ex = _executor(tmp_path, _spec("list_pods", data, ListPodsArgs))
    result = ex.call("list_pods", {})
    assert result.payload is not None
    dumped = result.model_dump(mode="json")
    assert dumped["data"] == data
    assert "payload" not in dumped and "payload" not in result.model_dump_json()


def test_cut_result_full_carries_the_whole_payload(tmp_path: Path) -> None:
    items = [{"message": f"line {i} " + "x" * 200, "level": "error"} for i in range(60)]
    spec = _spec("search_logs", {"items": items, "total": 60}, SearchLogsArgs, token_budget=400)
    ex = _executor(tmp_path, spec)
    result = ex.call("search_logs", {})
    assert result.truncated is not None and result.full() is not result
    whole = result.full().payload_as(LogsPayload)
    cut = result.payload_as(LogsPayload)
    assert whole is not None and cut is not None
    assert len(whole.items) == 60  # what the analyzers read
    assert len(cut.items) == len(result.data["items"]) < 60  # the envelope's own
    assert whole.items[0].fields_as_stored["message"].startswith("line 0")


def test_payload_reads_the_redacted_answer(tmp_path: Path) -> None:
    data = {"items": [{"message": "login with password=hunter2 failed", "level": "error"}]}
    ex = _executor(tmp_path, _spec("search_logs", data, SearchLogsArgs), redactor=Redactor())
    payload = ex.call("search_logs", {}).payload_as(LogsPayload)
    assert payload is not None
    assert "hunter2" not in payload.items[0].message
    assert "hunter2" not in json.dumps(payload.items[0].fields_as_stored)


def test_tool_without_payload_model_has_none(tmp_path: Path) -> None:
    ex = _executor(tmp_path, _spec("my_extra_tool", {"names": ["a"]}, SearchLogsArgs))
    result = ex.call("my_extra_tool", {})
    assert result.status == "success"
    assert result.payload_model is None and result.payload is None


def test_payload_that_cannot_be_built_is_none(tmp_path: Path) -> None:
    class Strict(BaseModel):
        must: int

    ex = _executor(
        tmp_path, _spec("strict_tool", {"must": "x"}, SearchLogsArgs, payload_model=Strict)
    )
    result = ex.call("strict_tool", {})
    assert result.status == "success" and result.error is None
    assert result.payload is None


def test_error_and_rejected_results_have_no_payload(tmp_path: Path) -> None:
    ex = _executor(tmp_path, _spec("list_pods", {"pods": []}, ListPodsArgs))
    assert ex.call("list_pods", {"bogus": 1}).payload is None  # rejected
    assert ex.call("no_such_tool", {}).payload is None


def test_restored_result_rebuilds_its_payload(tmp_path: Path) -> None:
    data = {"kind": "Service", "items": [{"name": "api", "namespace": "shop"}, "junk"], "count": 1}
    ex = _executor(tmp_path, _spec("list_objects", data, ListObjectsArgs))
    result = ex.call("list_objects", {"kind": "Service"})
    saved = json.loads(json.dumps(result.model_dump(mode="json")))
    restored = ToolResult.model_validate(saved)
    payload = restored.payload_as(ObjectsPayload)
    assert payload is not None
    assert [s.name for s in payload.of(Service)] == ["api"]
    assert payload.skipped == 1
    assert restored == result  # the cached payload is no part of equality


def test_objects_payload_types_items_by_kind() -> None:
    pods = build_payload(ObjectsPayload, {"kind": "Pod", "items": [{"name": "p"}]})
    nodes = build_payload(ObjectsPayload, {"kind": "Node", "items": [{"name": "n"}]})
    unread = build_payload(ObjectsPayload, {"kind": "Gadget", "items": [{"name": "g"}]})
    assert pods is not None and nodes is not None and unread is not None
    assert [p.name for p in pods_in(pods)] == ["p"] and isinstance(pods.items[0], Pod)
    assert [n.name for n in nodes_in(nodes)] == ["n"] and isinstance(nodes.items[0], Node)
    assert unread.items == [] and unread.kind == "Gadget"
    assert nodes_in(build_payload(NodesPayload, {"nodes": [{"name": "m"}]}))[0].name == "m"


def test_copy_with_other_data_gets_its_own_payload() -> None:
    r = ToolResult(call_id="c", tool="list_pods", status="success", data={"pods": [{"name": "a"}]})
    assert [p.name for p in pods_in(r.payload)] == ["a"]
    other = r.model_copy(update={"data": {"pods": [{"name": "b"}]}})
    assert [p.name for p in pods_in(other.payload)] == ["b"]
    assert [p.name for p in pods_in(r.payload)] == ["a"]


def test_tool_output_payload_for_callers_without_executor() -> None:
    out = ToolOutput(data={"names": ["up", "http_requests_total"], "count": 2, "total": 9})
    names = out.payload_as(MetricNamesPayload)
    assert names is not None and names.names == ["up", "http_requests_total"] and names.total == 9
