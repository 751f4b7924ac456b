"""Capabilities found missing on incidents written blind: each on a small example of its own."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from opsmate.agent.intake.subject import names_mentioned
from opsmate.agent.observe.analyzers.events import events
from opsmate.agent.observe.analyzers.metrics import growth_pattern, metrics
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import FactKind
from opsmate.agent.observe.k8s_messages import read_message
from opsmate.tools.base import ToolResult

T = "2026-06-01T10:00:00Z"


def result(tool: str, data: dict[str, Any], args: dict[str, Any] | None = None) -> ToolResult:
    return ToolResult(call_id="c1", tool=tool, status="success", data=data, args=args or {})


def test_a_sawtooth_climb_is_a_leak_pattern_and_a_flat_or_noisy_series_is_not() -> None:
    saw = [180, 263, 363, 464, 535, 199, 307, 419, 524, 535, 181, 262, 358, 456]
    leak = growth_pattern([float(v) for v in saw])
    assert leak is not None and leak["resets"] == 2 and leak["climbs"] >= 2
    assert growth_pattern([300.0, 310, 295, 305, 300, 298, 302, 299]) is None
    assert growth_pattern([100.0, 500, 90, 480, 120, 450, 100, 470]) is None  # spikes, no climb


def test_a_memory_series_that_climbs_to_each_restart_becomes_a_cause() -> None:
    samples = [[f"2026-06-01T10:{i:02d}:00Z", float(v) * 2**20] for i, v in
               enumerate([180, 263, 363, 464, 505, 199, 307, 419, 504, 181, 262, 358])]  # fmt: skip
    data = {
        "query": 'sum by (pod) (container_memory_working_set_bytes{container="push"})',
        "series": [{"labels": {"pod": "push-1"}, "samples": samples, "points": 12}],
    }
    facts = metrics(result("query_metrics", data), ObserveContext(eid="E4"))
    leak = [f for f in facts if f.reason == "MemoryLeakPattern"]
    assert leak and leak[0].kind == FactKind.SATURATION and "leak pattern" in leak[0].statement
    assert leak[0].service == "push"


def test_an_eviction_names_the_container_that_used_too_much() -> None:
    msg = (
        "The node was low on resource: ephemeral-storage. Threshold quantity: 2146223340, "
        "available: 1791140Ki. Container thumbs was using 9437612Ki, request is 0, has larger "
        "consumption of ephemeral-storage. "
    )
    reading = read_message("Evicted", msg, "media")
    assert reading is not None and reading.detail["container"] == "thumbs"
    ev = {
        "type": "Warning",
        "reason": "Evicted",
        "message": msg,
        "object": {"kind": "Pod", "name": "thumbs-7d9f8c6b5-x2x1q", "namespace": "media"},
        "first_timestamp": T,
        "last_timestamp": T,
    }
    facts = events(result("get_events", {"events": [ev]}), ObserveContext(eid="E2"))
    cause = next(f for f in facts if f.kind == FactKind.SATURATION)
    assert cause.conclusive and "9437612Ki of ephemeral-storage" in cause.statement
    assert any(f.kind == FactKind.EVICTED for f in facts)


def test_a_drain_refused_by_a_disruption_budget_names_it() -> None:
    msg = (
        "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget "
        "quorum needs 3 healthy pods and has 3 currently"
    )
    reading = read_message("EvictionBlocked", msg, "kv")
    assert reading is not None and reading.kind == FactKind.MISCONFIGURATION
    assert reading.refs == [("PodDisruptionBudget", "quorum", "kv")]


def test_node_not_ready_on_a_pod_is_that_pods_symptom() -> None:
    ev = {
        "type": "Warning",
        "reason": "NodeNotReady",
        "message": "Node is not ready",
        "object": {"kind": "Pod", "name": "planner-1", "namespace": "fleet"},
        "first_timestamp": T,
        "last_timestamp": T,
    }
    facts = events(result("get_events", {"events": [ev]}), ObserveContext(eid="E2"))
    assert [f.kind for f in facts] == [FactKind.NOT_READY]


def test_objects_named_in_words_become_the_subject() -> None:
    names = ["revenue-report-nightly", "report-portal", "checkout-api", "db-0"]
    assert names_mentioned("why didn't the nightly revenue report run?", names) == [
        "revenue-report-nightly"
    ]
    assert names_mentioned("the checkout API is slow", names) == ["checkout-api"]
    assert names_mentioned("is the database ok", names) == []


def test_times_of_these_examples_parse() -> None:
    assert datetime.fromisoformat(T.replace("Z", "+00:00")).tzinfo == UTC
