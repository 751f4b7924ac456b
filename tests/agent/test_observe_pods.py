"""The list_pods analyzer: container states and pod phases into facts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from opsmate.agent.intake.subject import Subject
from opsmate.agent.observe.analyzers.pods import pods as pods_analyzer
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.registry import observe
from opsmate.tools.base import ToolResult

NS = "shop"
REG = "registry.example.internal/shop"
W_FROM = datetime(2025, 6, 10, 9, 0, tzinfo=UTC)
W_TO = datetime(2025, 6, 10, 10, 0, tzinfo=UTC)


def container(name: str = "ledger", **kw: Any) -> dict[str, Any]:
    """A container as pod_summary writes it (running and ready unless told otherwise)."""
    out: dict[str, Any] = {
        "name": name,
        "image": f"{REG}/{name}:2.3.1",
        "init": False,
        "ready": True,
        "started": True,
        "restarts": 0,
        "state": "running",
        "started_at": "2025-06-09T08:00:05Z",
    }
    out.update(kw)
    return out


def pod(
    name: str,
    containers: list[Any],
    *,
    app: str | None = "ledger",
    phase: str = "Running",
    owner: str | None = "ReplicaSet/ledger-6b7c8d9f0",
    **kw: Any,
) -> dict[str, Any]:
    """A pod as pod_summary writes it."""
    out: dict[str, Any] = {
        "name": name,
        "namespace": NS,
        "phase": phase,
        "ready": f"{sum(1 for c in containers if c.get('ready'))}/{len(containers)}",
        "restarts": sum(int(c.get("restarts") or 0) for c in containers),
        "node": "worker-2",
        "start_time": "2025-06-09T08:00:00Z",
        "created": "2025-06-09T07:59:58Z",
        "labels": {"app": app} if app else {},
        "containers": containers,
    }
    if owner:
        out["owner"] = owner
    out.update(kw)
    return out


def result(
    pods: list[Any], *, args: dict[str, Any] | None = None, complete: bool = True
) -> ToolResult:
    return ToolResult(
        call_id="c1",
        tool="list_pods",
        status="success",
        data={"pods": pods, "count": len(pods)},
        args={"namespace": NS} if args is None else args,
        complete=complete,
    )


def make_ctx(**kw: Any) -> ObserveContext:
    kw.setdefault("window_from", W_FROM)
    kw.setdefault("window_to", W_TO)
    return ObserveContext(eid="E1", **kw)


def run(pods: list[Any], ctx: ObserveContext | None = None, **kw: Any) -> list[Fact]:
    ctx = ctx or make_ctx()
    facts = observe(result(pods, **kw), ctx)
    assert ctx.notes == []  # no analyzer failed on it
    return facts


def of(facts: list[Fact], kind: FactKind) -> list[Fact]:
    return [f for f in facts if f.kind == kind]


def one(facts: list[Fact], kind: FactKind) -> Fact:
    found = of(facts, kind)
    assert len(found) == 1, [(f.kind, f.statement) for f in facts]
    return found[0]


# ----------------------------------------------------------------------------- containers


def test_crash_loop() -> None:
    c = container(
        ready=False,
        restarts=5,
        state="waiting",
        reason="CrashLoopBackOff",
        message="back-off 1m20s restarting failed container=ledger "
        "pod=ledger-6b7c8d9f0-x2x1q_shop(5d0c4b1e-2f3a-4c5d-8e9f-0a1b2c3d4e5f)",
    )
    f = one(run([pod("ledger-6b7c8d9f0-x2x1q", [c])]), FactKind.CRASH_LOOP)
    assert f.severity == "error"
    assert f.container == "ledger"
    assert f.reason == "CrashLoopBackOff"
    assert f.detail["restarts"] == 5
    assert f.subject == ObjRef(kind="Pod", name="ledger-6b7c8d9f0-x2x1q", namespace=NS)
    assert ObjRef(kind="ReplicaSet", name="ledger-6b7c8d9f0", namespace=NS) in f.objects
    assert f.service == "ledger"
    assert f.evidence == ["E1"]
    assert "CrashLoopBackOff" in f.statement and "5 restart" in f.statement


def test_oom_killed_names_the_memory_limit() -> None:
    c = container(
        ready=False,
        restarts=3,
        state="waiting",
        reason="CrashLoopBackOff",
        last_termination={
            "reason": "OOMKilled",
            "exit_code": 137,
            "finished_at": "2025-06-10T09:31:00Z",
        },
        resources={"requests": {"memory": "128Mi"}, "limits": {"memory": "256Mi"}},
    )
    facts = run([pod("ledger-6b7c8d9f0-x2x1q", [c])])
    f = one(facts, FactKind.OOM_KILLED)
    assert f.severity == "error"
    assert f.exit_code == 137
    assert f.reason == "OOMKilled"
    assert f.detail["memory_limit"] == "256Mi"
    assert f.detail["memory_request"] == "128Mi"
    assert "256Mi" in f.statement
    assert f.time == datetime(2025, 6, 10, 9, 31, tzinfo=UTC)
    assert of(facts, FactKind.CONTAINER_EXIT) == []  # the OOM kill is the exit


def test_exit_code_one_is_an_error_exit() -> None:
    c = container(
        ready=False,
        restarts=2,
        state="waiting",
        reason="CrashLoopBackOff",
        last_termination={"reason": "Error", "exit_code": 1},
    )
    f = one(run([pod("ledger-6b7c8d9f0-x2x1q", [c])]), FactKind.CONTAINER_EXIT)
    assert f.severity == "error"
    assert f.exit_code == 1
    assert f.reason == "Error"
    assert "exited with code 1" in f.statement


def test_exit_code_zero_completed_is_info() -> None:
    c = container(
        name="report",
        ready=False,
        state="terminated",
        reason="Completed",
        exit_code=0,
        finished_at="2025-06-10T09:05:00Z",
    )
    facts = run([pod("report-28455-abcde", [c], app="report", phase="Succeeded", owner=None)])
    f = one(facts, FactKind.CONTAINER_EXIT)
    assert f.severity == "info"
    assert f.exit_code == 0
    assert of(facts, FactKind.LAST_WORDS) == []


def test_error_without_an_exit_code_is_an_error() -> None:
    c = container(
        ready=False,
        state="waiting",
        reason="CrashLoopBackOff",
        restarts=1,
        last_termination={"reason": "Error"},
    )
    f = one(run([pod("ledger-6b7c8d9f0-x2x1q", [c])]), FactKind.CONTAINER_EXIT)
    assert f.severity == "error"
    assert f.exit_code is None


def test_termination_message_is_last_words() -> None:
    words = "panic: LEDGER_DSN is not set"
    c = container(
        ready=False,
        state="waiting",
        reason="CrashLoopBackOff",
        restarts=4,
        last_termination={"reason": "Error", "exit_code": 2, "message": words},
    )
    f = one(run([pod("ledger-6b7c8d9f0-x2x1q", [c])]), FactKind.LAST_WORDS)
    assert f.severity == "error"
    assert f.message == words
    assert f.detail["lines"] == [words]
    assert f.detail["source"] == "termination message"
    assert words in f.statement


def test_image_pull_names_the_image_and_the_registry_answer() -> None:
    image = f"{REG}/ledger:9.9.9"
    answer = (
        f'Failed to pull image "{image}": rpc error: code = NotFound desc = '
        f"failed to resolve reference: {image}: not found"
    )
    c = container(image=image, ready=False, state="waiting", reason="ErrImagePull", message=answer)
    f = one(run([pod("ledger-6b7c8d9f0-x2x1q", [c])]), FactKind.IMAGE_PULL)
    assert f.severity == "error"
    assert f.detail["image"] == image
    assert image in f.statement
    assert "code = NotFound" in f.statement
    assert f.message == answer


def test_image_pull_backoff() -> None:
    image = f"{REG}/ledger:9.9.9"
    c = container(
        image=image,
        ready=False,
        state="waiting",
        reason="ImagePullBackOff",
        message=f'Back-off pulling image "{image}"',
    )
    f = one(run([pod("ledger-6b7c8d9f0-x2x1q", [c])]), FactKind.IMAGE_PULL)
    assert f.reason == "ImagePullBackOff"
    assert f.detail["image"] == image


def test_missing_secret_is_a_missing_reference() -> None:
    c = container(
        ready=False,
        state="waiting",
        reason="CreateContainerConfigError",
        message='secret "ledger-db-creds" not found',
    )
    facts = run([pod("ledger-0", [c], owner=None)])
    f = one(facts, FactKind.MISSING_REFERENCE)
    assert f.objects == [ObjRef(kind="Secret", name="ledger-db-creds", namespace=NS)]
    assert f.detail["ref_kind"] == "Secret"
    assert f.detail["ref_name"] == "ledger-db-creds"
    assert f.severity == "error"
    assert of(facts, FactKind.CONFIG_ERROR) == []


def test_other_config_error() -> None:
    c = container(
        ready=False,
        state="waiting",
        reason="CreateContainerConfigError",
        message="Error: container has runAsNonRoot and image will run as root",
    )
    f = one(run([pod("ledger-0", [c])]), FactKind.CONFIG_ERROR)
    assert "runAsNonRoot" in f.statement


# ----------------------------------------------------------------------------- pods


def test_pending_with_scheduler_message() -> None:
    sched = (
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/3 nodes are available"
    )
    p = pod(
        "ledger-6b7c8d9f0-x2x1q",
        [container(ready=False, state="unknown", started_at=None)],
        phase="Pending",
        node=None,
        conditions=[
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": sched,
                "last_transition_time": "2025-06-10T09:20:00Z",
            }
        ],
        node_selector={"disktype": "nvme"},
    )
    facts = run([p])
    f = one(facts, FactKind.SCHEDULING)
    assert f.message == sched
    assert f.reason == "Unschedulable"
    assert f.detail["scheduler_message"] == sched
    assert f.detail["node_selector"] == {"disktype": "nvme"}
    assert "didn't match Pod's node affinity/selector" in f.statement
    assert f.time == datetime(2025, 6, 10, 9, 20, tzinfo=UTC)
    assert of(facts, FactKind.POD_PENDING) == []


def test_pending_without_a_message() -> None:
    p = pod(
        "ledger-6b7c8d9f0-x2x1q",
        [container(ready=False, state="unknown", started_at=None)],
        phase="Pending",
        node=None,
    )
    f = one(run([p]), FactKind.POD_PENDING)
    assert f.severity == "error"
    assert "Pending" in f.statement
    assert "not scheduled" in f.statement


def test_evicted() -> None:
    msg = "The node was low on resource: memory. Container ledger was using 1900Mi."
    p = pod(
        "ledger-6b7c8d9f0-x2x1q",
        [container(ready=False, state="terminated", reason="Error", exit_code=137)],
        phase="Failed",
        node="worker-4",
        reason="Evicted",
        message=msg,
    )
    f = one(run([p]), FactKind.EVICTED)
    assert f.severity == "error"
    assert f.message == msg
    assert ObjRef(kind="Node", name="worker-4") in f.objects
    assert "evicted" in f.statement


def test_running_but_not_ready_with_readiness_probe() -> None:
    c = container(ready=False, readiness={"type": "http", "target": "GET http://:8080/ready"})
    f = one(run([pod("ledger-6b7c8d9f0-x2x1q", [c])]), FactKind.NOT_READY)
    assert f.severity == "warning"
    assert f.detail["probe"] == "readiness"
    assert f.detail["target"] == "GET http://:8080/ready"
    assert "GET http://:8080/ready" in f.statement


def test_healthy_pod_has_no_facts() -> None:
    c = container(readiness={"type": "http", "target": "GET http://:8080/ready"})
    assert run([pod("ledger-6b7c8d9f0-x2x1q", [c])]) == []


def test_init_container_is_named_as_such() -> None:
    init = container(
        name="migrate",
        init=True,
        ready=False,
        restarts=3,
        state="waiting",
        reason="CrashLoopBackOff",
    )
    main = container(ready=False, state="waiting", reason="PodInitializing")
    p = pod("ledger-6b7c8d9f0-x2x1q", [main], phase="Pending", init_containers=[init])
    facts = run([p])
    f = one(facts, FactKind.CRASH_LOOP)
    assert f.container == "migrate"
    assert "init container migrate" in f.statement
    assert of(facts, FactKind.NOT_READY) == []  # PodInitializing is not a finding


# ----------------------------------------------------------------------------- grouping


def _crashing(name: str, message: str | None, restarts: int = 5) -> dict[str, Any]:
    c = container(
        ready=False,
        restarts=restarts,
        state="waiting",
        reason="CrashLoopBackOff",
        message=message,
    )
    return pod(name, [c])


def test_same_finding_on_two_pods_is_one_fact() -> None:
    facts = run(
        [
            _crashing("ledger-6b7c8d9f0-x2x1q", "back-off restarting failed container"),
            _crashing("ledger-6b7c8d9f0-k9z8w", "back-off restarting failed container", 4),
        ]
    )
    f = one(facts, FactKind.CRASH_LOOP)
    assert f.count == 2
    assert "ledger-6b7c8d9f0-x2x1q" in f.statement
    assert "ledger-6b7c8d9f0-k9z8w" in f.statement
    assert f.detail["pods"] == ["ledger-6b7c8d9f0-x2x1q", "ledger-6b7c8d9f0-k9z8w"]
    assert ObjRef(kind="Pod", name="ledger-6b7c8d9f0-k9z8w", namespace=NS) in f.objects


def test_kubelet_messages_that_name_their_own_pod_still_group() -> None:
    """The kubelet's CrashLoopBackOff message names the pod as ``name_namespace(uid)``."""
    facts = run(
        [
            _crashing(
                "ledger-6b7c8d9f0-x2x1q",
                "back-off 5m0s restarting failed container=ledger "
                "pod=ledger-6b7c8d9f0-x2x1q_shop(5d0c4b1e-2f3a-4c5d-8e9f-0a1b2c3d4e5f)",
            ),
            _crashing(
                "ledger-6b7c8d9f0-k9z8w",
                "back-off 5m0s restarting failed container=ledger "
                "pod=ledger-6b7c8d9f0-k9z8w_shop(7e1d5c2f-3a4b-4d6e-9f0a-1b2c3d4e5f60)",
            ),
        ]
    )
    f = one(facts, FactKind.CRASH_LOOP)
    assert f.count == 2


def test_back_off_durations_do_not_split_a_finding() -> None:
    """Two pods in different back-off stages (2m40s, 5m0s) crash the same way."""
    facts = run(
        [
            _crashing("ledger-6b7c8d9f0-x2x1q", "back-off 2m40s restarting failed container"),
            _crashing("ledger-6b7c8d9f0-k9z8w", "back-off 5m0s restarting failed container"),
        ]
    )
    f = one(facts, FactKind.CRASH_LOOP)
    assert f.count == 2


def test_different_workloads_are_different_facts() -> None:
    a = _crashing("ledger-6b7c8d9f0-x2x1q", None)
    b = pod(
        "tally-5f6a7b8c9-q1w2e",
        [container(name="tally", ready=False, state="waiting", reason="CrashLoopBackOff")],
        app="tally",
        owner="ReplicaSet/tally-5f6a7b8c9",
    )
    facts = of(run([a, b]), FactKind.CRASH_LOOP)
    assert sorted(f.service or "" for f in facts) == ["ledger", "tally"]
    assert all(f.count == 1 for f in facts)


# ----------------------------------------------------------------------------- graph, focus


def test_pods_go_into_the_graph_and_absence_is_provable() -> None:
    ctx = make_ctx()
    run([pod("ledger-6b7c8d9f0-x2x1q", [container()])], ctx)
    rec = ctx.graph.get("Pod", NS, "ledger-6b7c8d9f0-x2x1q")
    assert rec is not None
    assert ctx.graph.source_of("Pod", NS, "ledger-6b7c8d9f0-x2x1q") == "E1"
    assert ctx.graph.absent("Pod", NS, "ghost-0") == "E1"
    assert ctx.graph.absent("Pod", NS, "ledger-6b7c8d9f0-x2x1q") is None
    assert ctx.graph.absent("Pod", "billing", "ghost-0") is None  # another namespace
    assert ctx.graph.listed("Pod", NS) == "E1"


@pytest.mark.parametrize(
    ("args", "complete"),
    [({"namespace": NS}, False), ({"namespace": NS, "label_selector": "app=ledger"}, True)],
)
def test_a_partial_or_filtered_listing_proves_nothing(args: dict[str, Any], complete: bool) -> None:
    ctx = make_ctx()
    run([pod("ledger-6b7c8d9f0-x2x1q", [container()])], ctx, args=args, complete=complete)
    assert ctx.graph.get("Pod", NS, "ledger-6b7c8d9f0-x2x1q") is not None
    assert ctx.graph.absent("Pod", NS, "ghost-0") is None


def test_focus_follows_the_subject() -> None:
    ctx = make_ctx(subject=Subject(names=["ledger"], namespace=NS))
    a = _crashing("ledger-6b7c8d9f0-x2x1q", None)
    b = pod(
        "tally-5f6a7b8c9-q1w2e",
        [container(name="tally", ready=False, state="waiting", reason="CrashLoopBackOff")],
        app="tally",
        owner="ReplicaSet/tally-5f6a7b8c9",
    )
    facts = {f.service: f for f in run([a, b], ctx)}
    assert facts["ledger"].focus is True
    assert facts["tally"].focus is False


def test_focus_by_service_in_focus() -> None:
    ctx = make_ctx(focus=["ledger"])
    f = one(run([_crashing("ledger-6b7c8d9f0-x2x1q", None)], ctx), FactKind.CRASH_LOOP)
    assert f.focus is True


# ----------------------------------------------------------------------------- malformed


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"pods": []},
        {"pods": "none"},
        {"pods": None},
        {"pods": [None, 3, "ledger-0", []]},
        {"pods": [{}]},
        {"pods": [{"name": "x", "containers": "ledger"}]},
        {"pods": [{"name": "x", "phase": "Pending", "conditions": "PodScheduled=False"}]},
        {
            "pods": [
                {
                    "name": 5,
                    "phase": ["Running"],
                    "labels": "app=x",
                    "restarts": "lots",
                    "start_time": "soon",
                    "containers": [
                        {"state": ["waiting"], "reason": 3, "restarts": None},
                        {"name": "c", "state": "terminated", "exit_code": "n/a"},
                        {"name": "d", "state": "waiting", "reason": "CrashLoopBackOff"},
                    ],
                    "conditions": [{"type": "PodScheduled"}, "x"],
                    "node_selector": ["a"],
                    "owner": "/",
                }
            ]
        },
        {"pods": [{"containers": [{"state": "waiting", "reason": "ErrImagePull"}]}]},
    ],
)
def test_malformed_pods_do_not_raise(data: dict[str, Any]) -> None:
    ctx = make_ctx()
    res = ToolResult(call_id="c1", tool="list_pods", status="success", data=data)
    facts = pods_analyzer(res, ctx)  # called directly: an exception would surface here
    assert isinstance(facts, list)
    assert all(f.evidence == ["E1"] for f in facts)
