"""Service-level checks that answer "why does this callee not serve?", on objects of our own:
a workload scaled to 0 behind a Service, an env address naming a Service that does not
exist, NetworkPolicies against the calls the dependency graph shows, a ConfigMap edited
(the change differ), and the latency between two services."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from k8s_build import NS, container, obj, pod, workload
from k8s_observe import Feed

from opsmate.agent.observe.analyzers.metrics_edges import LatencySeries, side_of
from opsmate.agent.observe.facts import FactKind as K
from opsmate.tools.kubernetes.shaping_objects import config_change


def svc(name: str, selector: dict[str, str], port: int = 80, target: int | str = 80) -> dict:
    return obj(
        "Service",
        name,
        spec={
            "selector": selector,
            "ports": [{"port": port, "targetPort": target}],
            "clusterIP": "10.0.0.9",
        },
    )


def test_a_workload_scaled_to_zero_behind_its_service() -> None:
    f = Feed()
    f.pods([pod("web-1", {"app": "web"})])
    f.objects("Service", [svc("payment", {"app": "payment"})])
    f.objects("Deployment", [workload("Deployment", "payment", {"app": "payment"}, replicas=0,
                                      current=0, ready=0)])  # fmt: skip
    [fact] = f.facts(K.MISCONFIGURATION)
    assert "`payment` is scaled to 0 replicas (spec.replicas: 0)" in fact.statement
    assert fact.reason == "ScaledToZero"
    assert f.facts(K.SELECTOR_MISMATCH) == []  # the selector is right: nothing to match


def _caller(env: dict[str, str], labels: dict[str, str] | None = None) -> dict:
    c = container("main", env=[{"name": k, "value": v} for k, v in env.items()])
    return pod("checkout-5d8f9c7b6d-x2x1a", labels or {"app": "checkout"}, containers=[c],
               owner="ReplicaSet/checkout-5d8f9c7b6d")  # fmt: skip


def test_env_address_naming_a_service_that_does_not_exist() -> None:
    f = Feed()
    f.pods([_caller({"PAYMENT_SERVICE_ADDR": "paymnt:50051"}), pod("payment-1", {"app": "pay"})])
    f.objects("Service", [svc("payment", {"app": "pay"})])
    [fact] = f.facts(K.MISCONFIGURATION)
    assert "PAYMENT_SERVICE_ADDR=paymnt:50051" in fact.statement
    assert "no Service `paymnt` exists in namespace shop" in fact.statement
    assert fact.reason == "UnknownServiceHost"


def test_env_address_pointing_at_another_namespace() -> None:
    f = Feed()
    env = {"PAYMENT_SERVICE_ADDR": "payment.payments.svc.cluster.local:50051"}
    f.pods([_caller(env), pod("payment-1", {"app": "pay"})])
    f.objects("Service", [svc("payment", {"app": "pay"})])
    [fact] = f.facts(K.MISCONFIGURATION)
    assert "points at namespace payments, but Service `payment` lives in namespace shop" in (
        fact.statement
    )


def test_env_addresses_that_resolve_say_nothing() -> None:
    f = Feed()
    f.pods([_caller({"PAYMENT_SERVICE_ADDR": "payment:50051", "SITE": "https://example.com"})])
    f.objects("Service", [svc("payment", {"app": "pay"})])
    assert f.facts(K.MISCONFIGURATION) == []


def _policy(name: str, selector: dict, frm: list[dict] | None) -> dict:
    spec: dict = {"podSelector": selector, "policyTypes": ["Ingress"]}
    if frm is not None:
        spec["ingress"] = [{"from": frm}]
    return obj("NetworkPolicy", name, spec=spec)


def test_network_policy_dropping_a_call_the_graph_shows() -> None:
    f = Feed()
    callee = pod("currency-7c9d8b6f5c-abcde", {"app": "currency"},
                 owner="ReplicaSet/currency-7c9d8b6f5c")  # fmt: skip
    web = pod("web-6b7c8d9e0f-fghij", {"app": "web"}, owner="ReplicaSet/web-6b7c8d9e0f",
              containers=[container("main", env=[{"name": "CURRENCY_ADDR",
                                                  "value": "currency:7000"}])])  # fmt: skip
    f.pods([_caller({"CURRENCY_ADDR": "currency:7000"}), callee, web])
    f.objects("Service", [svc("currency", {"app": "currency"}, 7000, 7000)])
    f.objects(
        "NetworkPolicy",
        [
            _policy("default-deny", {}, None),
            _policy(
                "currency",
                {"matchLabels": {"app": "currency"}},
                [{"podSelector": {"matchLabels": {"app": "web"}}}],
            ),
        ],
    )
    edges = [x for x in f.facts(K.NETWORK_POLICY) if x.reason == "BlocksDependency"]
    assert len(edges) == 1  # web is admitted, checkout is not
    assert "no rule admits checkout, which calls it (env CURRENCY_ADDR=currency:7000)" in (
        edges[0].statement
    )
    assert edges[0].subject and edges[0].subject.name == "currency"  # the specific policy


def test_config_change_from_managed_fields_and_last_applied() -> None:
    before = {"data": {"app.yml": "timeout-ms: 5000\nretries: 3\n"}}
    cm = obj(
        "ConfigMap",
        "settings",
        data={"app.yml": "timeout-ms: 800\nretries: 3\n"},
        metadata={
            "managedFields": [
                {
                    "manager": "kubectl-client-side-apply",
                    "operation": "Update",
                    "time": "2026-10-21T01:00:00Z",
                },
                {"manager": "kubectl-edit", "operation": "Update", "time": "2026-10-21T09:58:00Z"},
            ],
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": json.dumps(before)},
        },
    )
    got = config_change(cm, UTC)
    assert got["changed_by"] == "kubectl-edit"
    assert got["changed_at"].startswith("2026-10-21T09:58")
    assert got["changed_keys"] == ["app.yml"]
    assert got["changes"] == ["app.yml: timeout-ms: 5000 -> timeout-ms: 800"]


def test_config_change_becomes_a_change_of_its_readers() -> None:
    f = Feed()
    f.ctx.window_from = datetime(2026, 10, 21, 9, 0, tzinfo=UTC)
    f.ctx.window_to = datetime(2026, 10, 21, 11, 0, tzinfo=UTC)
    reader = pod("api-5d8f9c7b6d-x2x1a", {"app": "api"}, owner="ReplicaSet/api-5d8f9c7b6d",
                 volumes=[{"name": "cfg", "configMap": {"name": "settings"}}])  # fmt: skip
    f.pods([reader])
    edited = {"manager": "kubectl-edit", "operation": "Update", "time": "2026-10-21T09:58:00Z"}
    f.objects("ConfigMap", [obj("ConfigMap", "settings", data={"a": "1"},
                                metadata={"managedFields": [edited]})])  # fmt: skip
    [fact] = f.facts(K.CHANGE)
    assert (
        "ConfigMap `settings` was changed at 09:58:00 by kubectl-edit; read by `api`"
        in fact.statement
    )
    assert fact.detail["readers"] == ["api"] and fact.detail["change"] == "config"
    assert fact.time == datetime(2026, 10, 21, 9, 58, tzinfo=UTC)
    assert NS == "shop"


def test_latency_between_two_services_sides() -> None:
    assert side_of('x{reporter="source"}', {}) == "client"
    assert side_of("grpc_server_handling_seconds_bucket", {}) == "server"
    assert side_of("q", {"reporter": "destination"}) == "server"
    assert side_of("some_latency", {}) is None
    f = Feed()
    f.ctx.graph.add("LatencySeries", LatencySeries(name="c", side="client", server="route",
                    client="travel", ratio=40.0, before=12.0, after=480.0), "E1")  # fmt: skip
    f.ctx.graph.add("LatencySeries", LatencySeries(name="s", side="server", server="route",
                    ratio=1.0, after=11.0), "E2")  # fmt: skip
    from opsmate.agent.observe.analyzers.metrics_edges import latency_between

    [fact] = latency_between(f.ctx)
    assert fact.kind == K.DEPENDENCY_FAILURE and fact.reason == "network"
    assert "calls to route from travel got 40x slower" in fact.statement
    assert "network path to route" in fact.statement
    assert set(fact.evidence) == {"E1", "E2"}
    f.ctx.graph.add("LatencySeries", LatencySeries(name="s", side="server", server="route",
                    ratio=30.0, after=400.0), "E3")  # fmt: skip
    assert latency_between(f.ctx) == []  # the callee itself got slow: not the network


def test_a_local_traffic_policy_strands_the_callers_on_other_nodes() -> None:
    def local(policy: str) -> dict:
        s = svc("cache", {"app": "cache"}, port=6379, target=6379)
        s["spec"]["internalTrafficPolicy"] = policy
        return s

    pods = [pod("cache-0", {"app": "cache"}, node="node-a"),
            pod("web-7d9f8c6b5d-a1b2c", {"app": "web"}, node="node-a"),
            pod("web-7d9f8c6b5d-d3e4f", {"app": "web"}, node="node-b")]  # fmt: skip
    f = Feed()
    f.pods(pods)
    f.objects("Service", [local("Local")])
    [fact] = [x for x in f.facts(K.MISCONFIGURATION) if x.reason == "LocalTrafficPolicy"]
    assert "internalTrafficPolicy: Local" in fact.statement and "`node-b`" in fact.statement
    assert "web-7d9f8c6b5d-d3e4f" in fact.statement and "a1b2c" not in fact.statement
    assert fact.conclusive
    plain = Feed()
    plain.pods(pods)
    plain.objects("Service", [local("Cluster")])
    assert [x for x in plain.facts(K.MISCONFIGURATION) if x.reason == "LocalTrafficPolicy"] == []
    beside = Feed()  # every caller beside an endpoint: nothing stranded
    beside.pods(pods[:2])
    beside.objects("Service", [local("Local")])
    assert [x for x in beside.facts(K.MISCONFIGURATION) if x.reason == "LocalTrafficPolicy"] == []
