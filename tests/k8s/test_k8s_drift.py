"""A pod running an image its workload does not name, a workload re-created at the
incident, and a failing call that reads what changed on the callee — on objects of our
own, fed through the analyzer and rule registries."""

from __future__ import annotations

from typing import Any

from k8s_build import NS, obj
from k8s_observe import Feed

from opsmate.agent.kinds import card_for
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.plan.registry import RuleContext, rule


def rollout(name: str, rs: str, images: list[str], created: str) -> dict[str, Any]:
    rev = {"revision": 1, "replicaset": rs, "images": images, "created": created, "current": True}
    return {"name": name, "namespace": NS, "current_revision": 1, "revisions": [rev]}


def pod(name: str, rs: str, image: str, created: str = "2026-10-21T01:00:00Z", **c: Any) -> dict:
    return obj(
        "Pod", name,
        metadata={"ownerReferences": [{"kind": "ReplicaSet", "name": rs}],
                  "creationTimestamp": created},
        spec={"containers": [{"name": "app", "image": image, **c}]},
        status={"phase": "Running"},
    )  # fmt: skip


def feed_rollout(f: Feed, data: dict[str, Any]) -> list[Fact]:
    """A ``rollout_history`` answer through the registered analyzers; the facts it gave."""
    from opsmate.agent.observe.registry import observe
    from opsmate.tools.base import ToolResult

    f.n += 1
    f.ctx.eid = f"E{f.n}"
    res = ToolResult(call_id=f"call_{f.n:03d}", tool="rollout_history", status="success",
                     data=data, args={"name": data["name"]}, scope={"namespace": NS},
                     complete=True)  # type: ignore[arg-type]  # fmt: skip
    return observe(res, f.ctx)


def test_a_pod_running_another_image_than_its_workload() -> None:
    f = Feed()
    f.pods([pod("driver-7c5d8f9b66-v2w8n", "driver-7c5d8f9b66", "gcr.io/google-containers/pause")])
    feed_rollout(
        f, rollout("driver", "driver-7c5d8f9b66", ["jaeger/hotrod:1.72"], "2026-10-20T00:00:00Z")
    )
    [fact] = [x for x in f.facts(FactKind.MISCONFIGURATION) if x.reason == "ImageDrift"]
    assert "pause" in fact.statement and card_for(fact).id == "image-drift"


def test_the_same_image_written_another_way_is_no_drift() -> None:
    f = Feed()
    f.pods([pod("api-7c5d8f9b66-v2w8n", "api-7c5d8f9b66", "docker.io/library/python:3.9-slim")])
    feed_rollout(f, rollout("api", "api-7c5d8f9b66", ["python:3.9"], "2026-10-20T00:00:00Z"))
    assert [x for x in f.facts(FactKind.MISCONFIGURATION) if x.reason == "ImageDrift"] == []


def test_a_sidecar_added_at_admission_is_no_drift_but_a_swap_beside_it_is() -> None:
    f = Feed()
    sidecar = obj(
        "Pod", "orders-7c5d8f9b66-v2w8n",
        metadata={"ownerReferences": [{"kind": "ReplicaSet", "name": "orders-7c5d8f9b66"}],
                  "creationTimestamp": "2026-10-21T01:00:00Z"},
        spec={"containers": [{"name": "orders", "image": "shop/orders:2"},
                             {"name": "daprd", "image": "daprio/daprd:1.13"}]},
        status={"phase": "Running"},
    )  # fmt: skip
    f.pods([sidecar])
    feed_rollout(f, rollout("orders", "orders-7c5d8f9b66", ["shop/orders:2"], "2026-10-20T00:00Z"))
    assert [x for x in f.facts(FactKind.MISCONFIGURATION) if x.reason == "ImageDrift"] == []
    g = Feed()
    swapped = obj(
        "Pod", "orders-7c5d8f9b66-v2w8n",
        metadata={"ownerReferences": [{"kind": "ReplicaSet", "name": "orders-7c5d8f9b66"}],
                  "creationTimestamp": "2026-10-21T01:00:00Z"},
        spec={"containers": [{"name": "orders", "image": "pause:3.9"},
                             {"name": "daprd", "image": "daprio/daprd:1.13"}]},
        status={"phase": "Running"},
    )  # fmt: skip
    g.pods([swapped])
    feed_rollout(g, rollout("orders", "orders-7c5d8f9b66", ["shop/orders:2"], "2026-10-20T00:00Z"))
    drift = [x for x in g.facts(FactKind.MISCONFIGURATION) if x.reason == "ImageDrift"]
    assert drift and all("pause" in x.statement or "daprd" in x.statement for x in drift)
    assert any("pause" in x.statement for x in drift)


def test_a_workload_re_created_at_the_incident_is_a_change_saying_what_runs() -> None:
    f = Feed()
    f.pods([
        pod("customer-7b8d5c9f47-q2l6z", "customer-7b8d5c9f47", "hotrod:1", "2026-10-21T10:40:06Z",
            args=["route"]),
        pod("frontend-5d9f-abcde", "frontend-5d9f", "hotrod:1", "2026-10-20T08:00:00Z"),
    ])  # fmt: skip
    got = feed_rollout(
        f, rollout("customer", "customer-7b8d5c9f47", ["hotrod:1"], "2026-10-21T10:40:06Z")
    )
    changes = [x for x in got if x.kind == FactKind.CHANGE]
    assert (
        changes and "re-created" in changes[0].statement and "runs `route`" in changes[0].statement
    )


def test_a_refused_call_reads_what_changed_on_the_callee() -> None:
    f = Feed()
    f.pods([pod("customer-7b8d5c9f47-q2l6z", "customer-7b8d5c9f47", "hotrod:1")])
    fact = Fact(
        key="k", statement="s", kind=FactKind.DEPENDENCY_FAILURE, severity="error", focus=True,
        reason="refused", subject=ObjRef(kind="app", name="frontend", namespace=NS),
        objects=[ObjRef(kind="host", name="customer:8081")],
    )  # fmt: skip
    ctx = RuleContext(tools=frozenset({"rollout_history", "list_objects"}), graph=f.ctx.graph)
    checks = list(rule("card_reads").fact_fn(fact, ctx))  # type: ignore[misc]
    assert ("rollout_history", {"name": "customer", "namespace": NS}) in [
        (c.tool, c.args) for c in checks
    ]
