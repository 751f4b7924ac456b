"""A limit nobody asked for: a container OOM-killed at a memory limit the namespace's
LimitRange filled in at admission says so (the pod's ``kubernetes.io/limit-ranger``
annotation), and an eviction names the node's resource in the words people search for."""

from __future__ import annotations

from typing import Any

from k8s_build import NS, obj

from opsmate.agent.observe.analyzers.events import eviction_cause
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.registry import observe
from opsmate.tools.base import ToolResult
from opsmate.tools.kubernetes.shaping_pod import pod_summary


def oom_pod(annotation: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"annotations": {"kubernetes.io/limit-ranger": annotation}} if (
        annotation) else {}  # fmt: skip
    status = {"phase": "Running", "containerStatuses": [{
        "name": "engine", "ready": False, "restartCount": 4,
        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
        "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}}}]}  # fmt: skip
    spec = {"containers": [{"name": "engine", "image": "shop/engine:1",
                            "resources": {"limits": {"memory": "768Mi"}}}]}  # fmt: skip
    return obj("Pod", "engine-7c5d8f9b66-v2w8n", metadata=meta, spec=spec, status=status)


def oom_statement(annotation: str | None) -> str:
    res = ToolResult(call_id="c1", tool="list_pods", status="success",
                     data={"pods": [pod_summary(oom_pod(annotation))], "count": 1},
                     args={"namespace": NS}, scope={"namespace": NS}, complete=True)  # fmt: skip
    facts = observe(res, ObserveContext(eid="E1"))
    [oom] = [f for f in facts if f.kind == FactKind.OOM_KILLED]
    return oom.statement


def test_an_oom_kill_at_a_limit_the_limitrange_set_says_so() -> None:
    note = ("LimitRanger plugin set: cpu, memory request for container engine; "
            "cpu, memory limit for container engine")  # fmt: skip
    said = oom_statement(note)
    assert "768Mi" in said and "LimitRange set by default" in said
    assert "LimitRange" not in oom_statement(None)
    only_requests = "LimitRanger plugin set: cpu, memory request for container engine"
    assert "LimitRange" not in oom_statement(only_requests)  # the limit was the workload's


def test_an_eviction_for_ephemeral_storage_says_disk() -> None:
    ev = Fact(key="k", statement="s", kind=FactKind.EVICTED, severity="error",
              subject=ObjRef(kind="Pod", name="web-1", namespace=NS),
              detail={"container": "web", "resource": "ephemeral-storage", "usage": "9Gi",
                      "request": "0"})  # fmt: skip
    assert "node ran low on disk (ephemeral-storage)" in eviction_cause(ev).statement
