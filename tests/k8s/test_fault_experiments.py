"""Fault-injection experiments read as objects (Chaos Mesh kinds, LitmusChaos ChaosEngine):
what they do is in their spec, which the events do not carry. Objects of our own, fed
through the analyzer registry as the engine does."""

from __future__ import annotations

from typing import Any

import pytest
from k8s_build import NS, obj, pod
from k8s_observe import Feed

from opsmate.agent.intake.subject import Subject
from opsmate.agent.observe.facts import Fact, ObjRef
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.observe.registry import observe_graph
from opsmate.agent.plan.registry import RuleContext
from opsmate.agent.plan.rules.changes import experiment_spec
from opsmate.agent.state import TaskState
from opsmate.records.k8s_chaos import FaultExperiment
from opsmate.tools.k8s_kinds import KINDS, canonical_kind
from opsmate.tools.kubernetes.shaping_objects import shape_record


def partition(**status: Any) -> dict[str, Any]:
    spec = {
        "action": "partition",
        "mode": "all",
        "direction": "both",
        "duration": "2h",
        "selector": {"namespaces": [NS], "labelSelectors": {"app": "billing"}},
        "target": {"mode": "all", "selector": {"labelSelectors": {"app": "broker"}}},
    }
    return obj("NetworkChaos", "split", spec=spec, status=status)


def started(name: str = "split", kind: str = "NetworkChaos") -> list[dict[str, Any]]:
    return [
        {
            "metadata": {"name": f"{name}.1", "namespace": NS},
            "type": "Normal",
            "reason": "Started",
            "message": "Experiment has started",
            "involvedObject": {"kind": kind, "name": name, "namespace": NS},
            "firstTimestamp": "2026-10-21T01:08:20Z",
            "lastTimestamp": "2026-10-21T01:08:20Z",
            "count": 1,
        },
        {
            "metadata": {"name": f"{name}.2", "namespace": NS},
            "type": "Normal",
            "reason": "Applied",
            "message": f"Successfully apply chaos for {NS}/billing-5f6d7b8c9-q1w2e",
            "involvedObject": {"kind": kind, "name": name, "namespace": NS},
            "firstTimestamp": "2026-10-21T01:08:21Z",
            "lastTimestamp": "2026-10-21T01:08:21Z",
            "count": 1,
        },
    ]


def chaos_facts(f: Feed) -> list[Fact]:
    return [x for x in observe_graph(f.ctx) if x.key.startswith("chaos:")]


@pytest.mark.parametrize(
    ("kind", "spec", "action", "params"),
    [
        ("NetworkChaos", {"action": "loss", "loss": {"loss": "35"}}, "loss", {"loss": "35"}),
        ("NetworkChaos", {"action": "delay", "delay": {"latency": "200ms", "jitter": "50ms"}},
         "delay", {"latency": "200ms", "jitter": "50ms"}),
        ("StressChaos", {"stressors": {"cpu": {"workers": 2, "load": 80}}}, "cpu stress",
         {"cpu_load": "80", "cpu_workers": "2"}),
        ("IOChaos", {"action": "fault", "errno": 28, "path": "/data/**"}, "fault",
         {"errno": "28", "path": "/data/**"}),
        ("TimeChaos", {"timeOffset": "-2h"}, "time offset", {"time_offset": "-2h"}),
        ("HTTPChaos", {"abort": True, "port": 3000, "target": "Request"}, "abort",
         {"abort": "True", "port": "3000"}),
    ],
)  # fmt: skip
def test_an_experiment_spec_is_read_into_action_and_settings(
    kind: str, spec: dict[str, Any], action: str, params: dict[str, str]
) -> None:
    rec = shape_record(kind, obj(kind, "x", spec=spec))
    assert isinstance(rec, FaultExperiment)
    assert rec.tool == "Chaos Mesh" and rec.action == action
    assert rec.params == params


def test_the_experiment_kinds_are_allow_listed_custom_resources() -> None:
    assert canonical_kind("networkchaos") == "NetworkChaos"
    assert KINDS["NetworkChaos"].api_version == "chaos-mesh.org/v1alpha1"
    assert KINDS["ChaosEngine"].custom and KINDS["ChaosEngine"].namespaced


def test_status_records_and_conditions_say_where_and_whether_it_still_acts() -> None:
    status = {
        "conditions": [
            {"type": "AllInjected", "status": "True"},
            {"type": "AllRecovered", "status": "False"},
        ],
        "experiment": {"containerRecords": [{"id": f"{NS}/billing-5f6d7b8c9-q1w2e/app"}]},
    }
    rec = shape_record("NetworkChaos", partition(**status))
    assert isinstance(rec, FaultExperiment)
    assert rec.pods == ["billing-5f6d7b8c9-q1w2e"] and rec.state == "injected"
    assert rec.selector == {"app": "billing"} and rec.target == {"app": "broker"}


def test_reading_the_experiment_after_its_events_says_what_it_does() -> None:
    f = Feed()
    f.events(started())
    [first] = chaos_facts(f)
    assert "(partition" not in first.statement
    eid = f.get("NetworkChaos", partition())
    [fuller] = chaos_facts(f)
    assert fuller.key == first.key
    assert (
        "NetworkChaos `split` (partition, between app=billing and app=broker, both directions, "
        "for 2h) started on billing at 01:08" in fuller.statement
    )
    assert eid in fuller.evidence and "E1" in fuller.evidence
    state = TaskState(goal="q", questions=["q"])
    state.upsert_fact(first)
    assert state.upsert_fact(fuller) is False  # the same finding, now fuller
    [kept] = state.facts
    assert kept.statement == fuller.statement and eid in kept.evidence


def test_an_experiment_read_without_events_names_the_workloads_its_selector_matches() -> None:
    f = Feed()
    f.pods(
        [
            pod("billing-5f6d7b8c9-q1w2e", labels={"app": "billing"}),
            pod("broker-0", labels={"app": "broker"}),
            pod("web-7d9f8c7b6-x2x9z", labels={"app": "web"}),
        ]
    )
    f.get("NetworkChaos", partition())
    [fact] = chaos_facts(f)
    assert "started on billing and broker at 01:00" in fact.statement
    assert fact.reason == "FaultInjection" and fact.detail["action"] == "partition"


def test_a_recovered_experiment_says_so() -> None:
    f = Feed()
    f.events(started())
    f.get("NetworkChaos", partition(conditions=[{"type": "AllRecovered", "status": "True"}]))
    [fact] = chaos_facts(f)
    assert fact.statement.endswith("(now recovered)")


def test_an_experiment_seen_in_events_asks_for_its_object_once() -> None:
    f = Feed()
    f.events(started())
    [fact] = chaos_facts(f)
    ctx = RuleContext(
        subject=Subject(),
        namespace=NS,
        graph=ObjectGraph(),
        tools=frozenset({"get_object", "list_objects"}),
    )
    [check] = list(experiment_spec(fact, ctx))
    assert check.tool == "get_object"
    assert check.args == {"kind": "NetworkChaos", "name": "split", "namespace": NS}
    ctx.graph.add("NetworkChaos", shape_record("NetworkChaos", partition()), "E9")
    assert list(experiment_spec(fact, ctx)) == []  # already read
    other = fact.model_copy(update={"reason": "RolloutRevision"})
    assert list(experiment_spec(other, ctx)) == []
    assert ObjRef(kind="NetworkChaos", name="split", namespace=NS) in fact.objects
