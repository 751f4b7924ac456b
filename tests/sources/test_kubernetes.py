"""The Kubernetes tools with the REAL kubernetes client against the API-server protocol
fixture, configured through a generated kubeconfig."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from k8s_fixture import (
    ORDER_PODS,
    K8sFixture,
    sample_logs,
    sample_objects,
    write_kubeconfig,
)
from prom_fixture import free_port

from opsmate.config import Settings, ToolsConfig
from opsmate.tools import schemas as s
from opsmate.tools.audit import AuditLog
from opsmate.tools.base import CallContext, Constraints, ToolFailure, ToolResult
from opsmate.tools.bundle import load_bundle
from opsmate.tools.executor import Executor
from opsmate.tools.kubernetes.tools import KUBE_CONTEXT_ENV, tool_specs
from opsmate.tools.registry import live_registry


@pytest.fixture
def k8s() -> Iterator[K8sFixture]:
    with K8sFixture(sample_objects(), sample_logs()) as fx:
        yield fx


@pytest.fixture
def kubeconfig(k8s: K8sFixture, tmp_path: Path) -> Path:
    """Contexts ``fixture`` (the server) and ``dead`` (nothing listens); current: ``dead``."""
    dead = f"http://127.0.0.1:{free_port()}"
    return write_kubeconfig(
        tmp_path / "kubeconfig", {"fixture": k8s.url, "dead": dead}, current="dead"
    )


def settings_for(kubeconfig: Path, context: str | None = "fixture", **extra: Any) -> Settings:
    source = {"kubeconfig": str(kubeconfig), "context": context, "timeout": 5, **extra}
    return Settings(environments={"test": {"kubernetes": source}})


def tools(kubeconfig: Path, context: str | None = "fixture", **kw: Any) -> dict[str, Any]:
    kube_context = kw.pop("kube_context", None)
    specs = tool_specs(settings_for(kubeconfig, context, **kw), kube_context=kube_context)
    return {spec.name: spec for spec in specs}


def ctx(namespaces: tuple[str, ...] = ()) -> CallContext:
    c = Constraints(environment="test", namespaces=list(namespaces))
    return CallContext(call_id="call_test", constraints=c, now=datetime.now(UTC))


def executor(
    kubeconfig: Path,
    tmp_path: Path,
    *,
    timeout: float | None = None,
    retries: int = 0,
    namespaces: tuple[str, ...] = ("shop",),
) -> Executor:
    registry = live_registry(settings_for(kubeconfig))
    if timeout is not None:
        spec = registry.get("list_pods")
        assert spec is not None
        registry.register(dataclasses.replace(spec, timeout_s=timeout))
    return Executor(
        registry,
        Constraints(environment="test", namespaces=list(namespaces)),
        config=ToolsConfig(max_retries=retries),
        audit=AuditLog(tmp_path / "audit.jsonl"),
    )


def assert_error(res: ToolResult, code: str, retryable: bool) -> None:
    assert res.status == "error" and res.error is not None, res
    assert (res.error.code, res.error.retryable) == (code, retryable), res.error


# --------------------------------------------------------------------------- tools


def test_list_pods_by_label_selector(k8s: K8sFixture, kubeconfig: Path) -> None:
    out = tools(kubeconfig)["list_pods"].run(
        s.ListPodsArgs(label_selector="app=order-service"), ctx()
    )
    assert out.status == "success" and out.data["count"] == 2
    pods = {p["name"]: p for p in out.data["pods"]}
    crashing = pods[ORDER_PODS[1]]
    assert (crashing["ready"], crashing["restarts"], crashing["node"]) == ("0/1", 7, "node-b")
    assert crashing["containers"][0]["reason"] == "CrashLoopBackOff"
    assert pods[ORDER_PODS[0]]["containers"][0]["last_termination"]["reason"] == "OOMKilled"
    assert out.source_refs == [f"k8s://shop/Pod/{n}" for n in sorted(ORDER_PODS, key=str)]
    assert out.scope == {
        "source": "kubernetes",
        "environment": "test",
        "context": "fixture",
        "namespace": "shop",
        "label_selector": "app=order-service",
    }
    assert k8s.requests[-1]["path"] == "/api/v1/namespaces/shop/pods"
    assert k8s.requests[-1]["query"]["labelSelector"] == "app=order-service"


def test_set_based_and_invalid_label_selectors(k8s: K8sFixture, kubeconfig: Path) -> None:
    run = tools(kubeconfig)["list_pods"].run
    out = run(s.ListPodsArgs(label_selector="app in (payment-service, batch)"), ctx())
    assert [p["name"] for p in out.data["pods"]] == ["payment-service-5c6d7e8f9-abcde"]
    assert run(s.ListPodsArgs(label_selector="app=nothing"), ctx()).status == "no_data"
    before = len(k8s.requests)
    with pytest.raises(ToolFailure) as info:
        run(s.ListPodsArgs(label_selector="app in (a"), ctx())
    assert info.value.code == "bad_request" and len(k8s.requests) == before


def test_namespace_comes_from_args_constraints_config_then_kubeconfig(
    k8s: K8sFixture, kubeconfig: Path
) -> None:
    def names(out: Any) -> set[str]:
        return {p["namespace"] for p in out.data["pods"]}

    run = tools(kubeconfig)["list_pods"].run
    assert names(run(s.ListPodsArgs(namespace="jobs"), ctx(("shop",)))) == {"jobs"}
    both = run(s.ListPodsArgs(), ctx(("shop", "jobs")))
    assert names(both) == {"shop", "jobs"} and both.scope["namespaces"] == ["shop", "jobs"]
    configured = tools(kubeconfig, namespaces=["jobs"])["list_pods"].run(s.ListPodsArgs(), ctx())
    assert names(configured) == {"jobs"}
    assert names(run(s.ListPodsArgs(), ctx())) == {"shop"}  # the kubeconfig context's namespace


def test_events_for_one_object_newest_first(k8s: K8sFixture, kubeconfig: Path) -> None:
    out = tools(kubeconfig)["get_events"].run(
        s.GetEventsArgs(kind="pod", name=ORDER_PODS[1]), ctx()
    )
    assert [e["reason"] for e in out.data["events"]] == ["BackOff", "Unhealthy"]
    assert out.data["warnings"] == 2 and out.data["events"][0]["count"] == 12
    assert k8s.requests[-1]["query"]["fieldSelector"] == (
        f"involvedObject.kind=Pod,involvedObject.name={ORDER_PODS[1]}"
    )
    everything = tools(kubeconfig)["get_events"].run(s.GetEventsArgs(), ctx())
    stamps = [e["last_timestamp"] for e in everything.data["events"]]
    assert len(stamps) == 5 and stamps == sorted(stamps, reverse=True)
    assert "k8s://shop/Event/ev-1" in everything.source_refs


def test_rollout_history_from_owned_replicasets(k8s: K8sFixture, kubeconfig: Path) -> None:
    out = tools(kubeconfig)["rollout_history"].run(
        s.RolloutHistoryArgs(name="order-service"), ctx()
    )
    data = out.data
    assert data["current_revision"] == 3
    revs = [
        (r["revision"], r["images"][0].rsplit(":", 1)[1], r["current"]) for r in data["revisions"]
    ]
    assert revs == [(1, "1.7.2", False), (2, "1.7.3", False), (3, "1.8.0", True)]
    assert data["revisions"][-1]["change_cause"] == "release 1.8.0"
    assert data["replicas"]["unavailable"] == 1
    assert "k8s://shop/ReplicaSet/order-service-canary-1a2b3c4d5" not in out.source_refs
    assert out.source_refs[0] == "k8s://shop/Deployment/order-service"
    rs_request = k8s.requests[-1]
    assert rs_request["path"] == "/apis/apps/v1/namespaces/shop/replicasets"
    assert rs_request["query"]["labelSelector"] == "app=order-service"


def test_rollout_history_of_an_unknown_deployment(k8s: K8sFixture, kubeconfig: Path) -> None:
    out = tools(kubeconfig)["rollout_history"].run(s.RolloutHistoryArgs(name="nope"), ctx())
    assert out.status == "no_data"
    assert out.data["deployments"] == ["order-service", "payment-service"]


def test_node_conditions_all_one_and_unknown(k8s: K8sFixture, kubeconfig: Path) -> None:
    run = tools(kubeconfig)["node_conditions"].run
    nodes = {n["name"]: n for n in run(s.NodeConditionsArgs(), ctx()).data["nodes"]}
    assert nodes["node-b"]["pressure"]["memory"] and not nodes["node-a"]["any_pressure"]
    one = run(s.NodeConditionsArgs(name="node-b"), ctx())
    assert [n["name"] for n in one.data["nodes"]] == ["node-b"]
    assert k8s.requests[-1]["query"]["fieldSelector"] == "metadata.name=node-b"
    assert one.source_refs == ["k8s://_cluster/Node/node-b"]
    missing = run(s.NodeConditionsArgs(name="node-z"), ctx())
    assert missing.status == "no_data" and missing.data["node_names"] == ["node-a", "node-b"]


def test_pod_logs_tail_since_and_containers(k8s: K8sFixture, kubeconfig: Path) -> None:
    run = tools(kubeconfig)["pod_logs"].run
    tail = run(s.PodLogsArgs(name=ORDER_PODS[0], tail_lines=5), ctx())
    assert tail.data["returned"] == 5 and not tail.complete
    assert tail.data["lines"][-1].endswith("INFO GET /api/orders/299 200")
    assert k8s.requests[-1]["query"]["tailLines"] == "6"  # one more: is there anything older?
    everything = run(s.PodLogsArgs(name=ORDER_PODS[0], tail_lines=1000), ctx())
    assert everything.data["returned"] == 300 and everything.complete
    recent = run(s.PodLogsArgs(name=ORDER_PODS[0], since_seconds=60), ctx())
    assert 8 <= recent.data["returned"] <= 11
    proxy = run(s.PodLogsArgs(name="payment-service-5c6d7e8f9-abcde", container="proxy"), ctx())
    assert proxy.data["lines"] == ["proxy ready"]
    with pytest.raises(ToolFailure) as info:
        run(s.PodLogsArgs(name="payment-service-5c6d7e8f9-abcde"), ctx())
    assert info.value.code == "bad_request" and "choose one of: [app proxy]" in info.value.message
    with pytest.raises(ToolFailure) as info:
        run(s.PodLogsArgs(name="no-such-pod"), ctx())
    assert info.value.code == "not_found"


def test_only_read_verbs_are_ever_used(k8s: K8sFixture, kubeconfig: Path, tmp_path: Path) -> None:
    ex = executor(kubeconfig, tmp_path)
    calls = [
        ("list_pods", {}),
        ("get_events", {"kind": "Pod"}),
        ("rollout_history", {"name": "order-service"}),
        ("node_conditions", {}),
        ("node_conditions", {"name": "node-a"}),
        ("pod_logs", {"name": ORDER_PODS[0], "tail_lines": 3}),
        ("list_objects", {"kind": "Deployment"}),
        ("list_objects", {"kind": "Node"}),
        ("get_object", {"kind": "ReplicaSet", "name": "order-service-7d9f8b6c4"}),
    ]
    for tool, args in calls:
        assert ex.call(tool, args).status == "success", tool
    assert len(k8s.requests) >= len(calls)
    assert k8s.methods() == {"GET"}
    assert {r["headers"].get("authorization") for r in k8s.requests} == {"Bearer fixture-token"}


# --------------------------------------------------------------------------- contexts


def test_context_from_config_env_var_and_option(
    k8s: K8sFixture, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = s.ListPodsArgs()
    # the kubeconfig's current context is "dead"; the configured one is "fixture"
    assert tools(kubeconfig)["list_pods"].run(args, ctx()).scope["context"] == "fixture"
    with pytest.raises(ToolFailure) as info:
        tools(kubeconfig, context=None)["list_pods"].run(args, ctx())
    assert info.value.code == "unreachable"
    monkeypatch.setenv(KUBE_CONTEXT_ENV, "dead")
    with pytest.raises(ToolFailure) as info:
        tools(kubeconfig)["list_pods"].run(args, ctx())
    assert info.value.code == "unreachable" and info.value.retryable
    out = tools(kubeconfig, kube_context="fixture")["list_pods"].run(args, ctx())
    assert out.status == "success" and out.scope["context"] == "fixture"


def test_unknown_context_or_kubeconfig_is_not_configured(kubeconfig: Path, tmp_path: Path) -> None:
    with pytest.raises(ToolFailure) as info:
        tools(kubeconfig, context="nope")["list_pods"].run(s.ListPodsArgs(), ctx())
    assert info.value.code == "not_configured" and "context" in info.value.message
    with pytest.raises(ToolFailure) as info:
        tools(tmp_path / "missing")["list_pods"].run(s.ListPodsArgs(), ctx())
    assert info.value.code == "not_configured"
    assert tool_specs(Settings(environments={"test": {}})) == []


# --------------------------------------------------------------------------- faults and scope


def test_rbac_forbidden_is_auth(k8s: K8sFixture, kubeconfig: Path, tmp_path: Path) -> None:
    k8s.mode = "forbidden"
    res = executor(kubeconfig, tmp_path, retries=2).call("list_pods", {})
    assert_error(res, "auth", False)
    assert res.error is not None and 'cannot list resource "pods"' in res.error.message
    assert len(k8s.requests) == 1


def test_unauthorized_is_auth(k8s: K8sFixture, kubeconfig: Path, tmp_path: Path) -> None:
    k8s.mode = "unauthorized"
    assert_error(executor(kubeconfig, tmp_path).call("get_events", {}), "auth", False)


def test_server_error_is_retryable(k8s: K8sFixture, kubeconfig: Path, tmp_path: Path) -> None:
    k8s.mode = "server_error"
    res = executor(kubeconfig, tmp_path, retries=1).call("node_conditions", {})
    assert_error(res, "server_error", True)
    assert res.scope["attempts"] == 2


def test_slow_answer_times_out(k8s: K8sFixture, kubeconfig: Path, tmp_path: Path) -> None:
    k8s.mode, k8s.delay = "slow", 3.0
    started = time.monotonic()
    res = executor(kubeconfig, tmp_path, timeout=0.5).call("list_pods", {})
    assert_error(res, "timeout", True)
    assert time.monotonic() - started < 2.0


def test_malformed_json_is_bad_response(k8s: K8sFixture, kubeconfig: Path, tmp_path: Path) -> None:
    k8s.mode = "malformed"
    assert_error(executor(kubeconfig, tmp_path).call("list_pods", {}), "bad_response", False)


def test_unreachable_and_unknown_host(kubeconfig: Path, tmp_path: Path) -> None:
    with pytest.raises(ToolFailure) as info:
        tools(kubeconfig, context="dead")["list_pods"].run(s.ListPodsArgs(), ctx())
    assert (info.value.code, info.value.retryable) == ("unreachable", True)
    invalid = write_kubeconfig(
        tmp_path / "invalid", {"x": "https://k8s.opsmate-test.invalid:6443"}, current="x"
    )
    with pytest.raises(ToolFailure) as info:
        tools(invalid, context=None)["node_conditions"].run(s.NodeConditionsArgs(), ctx())
    assert (info.value.code, info.value.retryable) == ("unreachable", True)
    assert "resolve" in info.value.message


def test_enormous_pod_list_is_truncated(kubeconfig: Path, tmp_path: Path) -> None:
    template = sample_objects()[0]
    many = [
        {**template, "metadata": {**template["metadata"], "name": f"order-{i:04d}"}}
        for i in range(400)
    ]
    with K8sFixture(many) as fx:
        config = write_kubeconfig(tmp_path / "many", {"fixture": fx.url}, current="fixture")
        res = executor(config, tmp_path).call("list_pods", {})
    assert res.status == "partial" and not res.complete
    assert res.truncated is not None and res.truncated.items_dropped > 300
    assert res.data["count"] == 400


def test_scope_rejections_happen_before_any_request(
    k8s: K8sFixture, kubeconfig: Path, tmp_path: Path
) -> None:
    ex = executor(kubeconfig, tmp_path)
    outside = ex.call("list_pods", {"namespace": "kube-system"})
    assert (
        outside.status == "rejected" and outside.error and outside.error.code == "forbidden_scope"
    )
    other_env = ex.call("pod_logs", {"name": "x", "environment": "prod"})
    assert other_env.status == "rejected" and other_env.error
    assert other_env.error.code == "forbidden_scope"
    for bad in (
        {"name": "x", "tail_lines": 0},
        {"namespace": "shop"},
        {"name": "x", "follow": True},
    ):
        res = ex.call("pod_logs", bad)
        assert res.status == "rejected" and res.error and res.error.code == "invalid_arguments"
    assert k8s.requests == []


def test_live_answers_equal_bundle_replay_of_the_same_objects(
    repo_root: Path, tmp_path: Path
) -> None:
    """Served by the fixture or replayed from the bundle, the same objects give the same data."""
    bundle = load_bundle(repo_root / "src/opsmate/data/demo/01-pool-exhaustion")
    replay = {spec.name: spec for spec in bundle.tool_specs()}
    c = Constraints(environment=bundle.meta.environment, namespaces=["shop"])
    call_ctx = CallContext(call_id="call_parity", constraints=c, now=bundle.meta.captured_at)
    with K8sFixture(bundle.objects) as fx:
        config = write_kubeconfig(tmp_path / "parity", {"dev-1": fx.url}, current="dev-1")
        settings = Settings(
            environments={bundle.meta.environment: {"kubernetes": {"kubeconfig": str(config)}}}
        )
        live = {spec.name: spec for spec in tool_specs(settings)}
        for tool, args in [
            ("list_pods", s.ListPodsArgs()),
            ("list_pods", s.ListPodsArgs(label_selector="app=order-service")),
            ("get_events", s.GetEventsArgs()),
            ("get_events", s.GetEventsArgs(kind="pod")),
            ("rollout_history", s.RolloutHistoryArgs(name="order-service")),
            ("node_conditions", s.NodeConditionsArgs()),
        ]:
            got, want = live[tool].run(args, call_ctx), replay[tool].run(args, call_ctx)
            assert got.status == want.status == "success", tool
            assert got.data == want.data, tool
            assert got.source_refs == want.source_refs, tool
