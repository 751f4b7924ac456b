"""The rules that follow references between Kubernetes objects, one test each, on
synthetic results and facts."""

from __future__ import annotations

from typing import Any

from k8s_build import NS, container, obj, pod, workload

from opsmate.agent.intake.subject import Subject
from opsmate.agent.observe.facts import Fact, ObjRef
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.plan.registry import Check, RuleContext, rule
from opsmate.agent.plan.rules.k8s_graph import service_host
from opsmate.agent.plan.tiers import Tier
from opsmate.records.k8s_objects import Secret
from opsmate.tools.base import ToolResult
from opsmate.tools.kubernetes.shaping_objects import shape_object
from opsmate.tools.shaping import pod_summary

TOOLS = frozenset({"list_pods", "list_objects", "get_object", "get_events", "node_conditions"})


def rctx(subject: Subject | None = None, graph: ObjectGraph | None = None) -> RuleContext:
    return RuleContext(
        subject=subject or Subject(), namespace=NS, graph=graph or ObjectGraph(), tools=TOOLS
    )


def result(tool: str, data: dict[str, Any], **args: Any) -> ToolResult:
    return ToolResult(call_id="c", tool=tool, status="success", data=data, args=args)


def objects(kind: str, *objs: dict[str, Any]) -> ToolResult:
    return result(
        "list_objects", {"kind": kind, "items": [shape_object(kind, o) for o in objs]}, kind=kind
    )


def run_result(name: str, res: ToolResult, ctx: RuleContext) -> list[Check]:
    r = rule(name)
    assert r.result_fn is not None
    return list(r.result_fn(res, ctx))


def run_fact(name: str, fact: Fact, ctx: RuleContext) -> list[Check]:
    r = rule(name)
    assert r.fact_fn is not None and fact.kind in r.on
    return list(r.fact_fn(fact, ctx))


def calls(checks: list[Check]) -> list[tuple[str, dict[str, Any]]]:
    return [(c.tool, c.args) for c in checks]


def test_pod_references_follow_what_an_unhealthy_pod_uses() -> None:
    bad = pod(
        "cart-5f6d7-q1w2e",
        {"app": "cart"},
        phase="Pending",
        waiting=("ContainerCreating", ""),
        owner="ReplicaSet/cart-5f6d7",
        serviceAccountName="cart",
        volumes=[
            {"name": "k", "secret": {"secretName": "keys"}},
            {"name": "d", "persistentVolumeClaim": {"claimName": "data"}},
        ],
        containers=[
            container(
                env=[{"name": "M", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "m"}}}]
            )
        ],
    )
    fine = pod(
        "web-1", {"app": "web"}, volumes=[{"name": "k", "secret": {"secretName": "web-keys"}}]
    )
    res = result("list_pods", {"pods": [pod_summary(bad), pod_summary(fine)]}, namespace=NS)
    got = calls(run_result("pod_references", res, rctx()))
    assert ("list_objects", {"kind": "Secret", "namespace": NS}) in got
    assert ("list_objects", {"kind": "ConfigMap", "namespace": NS}) in got
    assert ("list_objects", {"kind": "PersistentVolumeClaim", "namespace": NS}) in got
    assert ("get_object", {"kind": "ReplicaSet", "name": "cart-5f6d7", "namespace": NS}) in got
    assert ("list_objects", {"kind": "ServiceAccount", "namespace": NS}) in got
    assert rule("pod_references").tier == Tier.FOLLOW
    g = ObjectGraph()
    g.add_listing("Secret", [Secret(name="keys", namespace=NS)], "E1", namespace=NS)
    again = calls(run_result("pod_references", res, rctx(graph=g)))
    assert ("list_objects", {"kind": "Secret", "namespace": NS}) not in again  # already proven


def test_a_pod_not_placed_on_a_node_reads_the_nodes_and_its_volumes_not_its_secrets() -> None:
    """Secrets and ConfigMaps are read by the kubelet once the pod is on a node: before that
    they cannot be why it waits; the nodes and where its volumes live can."""
    waiting = pod(
        "db-0", {"app": "db"}, phase="Pending", node=None, owner="StatefulSet/db",
        volumes=[{"name": "k", "secret": {"secretName": "keys"}},
                 {"name": "d", "persistentVolumeClaim": {"claimName": "data-db-0"}}],
    )  # fmt: skip
    res = result("list_pods", {"pods": [pod_summary(waiting)]}, namespace=NS)
    got = calls(run_result("pod_references", res, rctx()))
    assert ("list_objects", {"kind": "Secret", "namespace": NS}) not in got
    assert ("node_conditions", {}) in got
    assert ("list_objects", {"kind": "PersistentVolumeClaim", "namespace": NS}) in got
    assert ("list_objects", {"kind": "PersistentVolume"}) in got


def test_subject_objects_reads_what_the_question_names() -> None:
    s = Subject(names=["nightly"], kind="CronJob", namespace="batch")
    assert calls(run_result("subject_objects", result("list_pods", {}), rctx(s))) == [
        ("get_object", {"kind": "CronJob", "name": "nightly", "namespace": "batch"})
    ]
    h = Subject(hosts=["shop.example.test"])
    assert calls(run_result("subject_objects", result("list_pods", {}), rctx(h))) == [
        ("list_objects", {"kind": "Ingress", "namespace": NS}),
    ]
    # the Gateway API's routes when no Ingress serves the host
    none = result("list_objects", {"kind": "Ingress", "items": []}, kind="Ingress")
    assert ("list_objects", {"kind": "HTTPRoute", "namespace": NS}) in calls(
        run_result("ingress_references", none, rctx(h))
    )
    assert (
        run_result(
            "subject_objects", result("list_pods", {}), rctx(Subject(names=["p"], kind="Pod"))
        )
        == []
    )


def test_service_neighbours() -> None:
    res = objects(
        "Service",
        obj("Service", "api", spec={"selector": {"app": "api"}, "clusterIP": "10.0.0.7"}),
        obj("Service", "ext", spec={"type": "ExternalName"}),
    )
    assert run_result("service_neighbours", res, rctx()) == []  # nothing names it
    named = rctx(Subject(names=["api"]))
    assert calls(run_result("service_neighbours", res, named)) == [("list_pods", {"namespace": NS})]
    dep = Fact(
        key="log:d",
        statement="web cannot reach 10.0.0.7",
        kind=K.DEPENDENCY_FAILURE,
        objects=[ObjRef(kind="host", name="10.0.0.7")],
    )
    by_ip = rctx()
    by_ip.facts = [dep]
    assert calls(run_result("service_neighbours", res, by_ip)) == [("list_pods", {"namespace": NS})]
    no_pods = RuleContext(
        subject=Subject(names=["api"]), namespace=NS, tools=frozenset({"get_object"})
    )
    assert calls(run_result("service_neighbours", res, no_pods)) == [
        ("get_object", {"kind": "Endpoints", "name": "api", "namespace": NS})
    ]


def test_ingress_and_claim_references() -> None:
    ing = objects(
        "Ingress",
        obj(
            "Ingress",
            "shop",
            spec={
                "ingressClassName": "x",
                "rules": [
                    {
                        "http": {
                            "paths": [
                                {"backend": {"service": {"name": "web", "port": {"number": 80}}}}
                            ]
                        }
                    }
                ],
            },
        ),
    )
    assert calls(run_result("ingress_references", ing, rctx())) == [
        ("list_objects", {"kind": "IngressClass"}),
        ("list_objects", {"kind": "Service", "namespace": NS}),
    ]
    pvc = objects(
        "PersistentVolumeClaim",
        obj(
            "PersistentVolumeClaim",
            "data",
            spec={"volumeName": "pv-3"},
            status={"phase": "Pending"},
        ),
    )
    assert calls(run_result("claim_references", pvc, rctx())) == [
        ("list_objects", {"kind": "StorageClass"}),
        ("get_object", {"kind": "PersistentVolume", "name": "pv-3"}),
    ]
    bound = objects(
        "PersistentVolumeClaim", obj("PersistentVolumeClaim", "ok", status={"phase": "Bound"})
    )
    assert run_result("claim_references", bound, rctx()) == []


def test_workload_references() -> None:
    short = objects(
        "Deployment", workload("Deployment", "api", {"app": "api"}, replicas=3, current=1, ready=1)
    )
    assert calls(run_result("workload_references", short, rctx())) == [
        ("list_objects", {"kind": "ResourceQuota", "namespace": NS}),
        ("list_objects", {"kind": "LimitRange", "namespace": NS}),
    ]
    full = objects("Deployment", workload("Deployment", "api", {"app": "api"}))
    assert run_result("workload_references", full, rctx()) == []
    hpa = objects(
        "HorizontalPodAutoscaler",
        obj(
            "HorizontalPodAutoscaler",
            "api",
            spec={"scaleTargetRef": {"kind": "Deployment", "name": "api"}},
        ),
    )
    assert calls(run_result("workload_references", hpa, rctx())) == [
        ("get_object", {"kind": "Deployment", "name": "api", "namespace": NS})
    ]


def dep_fact(*objs: ObjRef, **detail: Any) -> Fact:
    return Fact(
        key="log:dep",
        statement="cart cannot reach it",
        kind=K.DEPENDENCY_FAILURE,
        subject=ObjRef(kind="app", name="cart"),
        objects=list(objs),
        detail=detail,
    )


def test_dependency_service_for_service_names_and_cluster_ips() -> None:
    got = calls(
        run_fact(
            "dependency_service",
            dep_fact(ObjRef(kind="host", name="api.shop.svc.cluster.local:8080")),
            rctx(),
        )
    )
    assert got == [
        ("list_objects", {"kind": "Service", "namespace": "shop"}),
        ("list_objects", {"kind": "NetworkPolicy", "namespace": "shop"}),
    ]
    ip = calls(
        run_fact("dependency_service", dep_fact(ObjRef(kind="host", name="10.0.0.7")), rctx())
    )
    assert ("list_objects", {"kind": "Service", "namespace": NS}) in ip
    assert (
        run_fact(
            "dependency_service", dep_fact(ObjRef(kind="host", name="api.example.com")), rctx()
        )
        == []
    )
    assert service_host("http://billing:9000/x") == ("billing", None)
    assert service_host("billing.payments") == ("billing", "payments")
    assert service_host("db.example.com") is None and service_host("a_b") is None


def test_quota_objects_and_reference_proof() -> None:
    q = Fact(
        key="event:q",
        statement="refused",
        kind=K.QUOTA_REFUSAL,
        subject=ObjRef(kind="ReplicaSet", name="api-1", namespace=NS),
        objects=[ObjRef(kind="ResourceQuota", name="team", namespace=NS)],
    )
    assert calls(run_fact("quota_objects", q, rctx())) == [
        ("list_objects", {"kind": "ResourceQuota", "namespace": NS}),
        ("list_objects", {"kind": "LimitRange", "namespace": NS}),
        ("get_object", {"kind": "ReplicaSet", "name": "api-1", "namespace": NS}),
    ]
    m = Fact(
        key="event:m",
        statement="secret missing",
        kind=K.MISSING_REFERENCE,
        subject=ObjRef(kind="Pod", name="p", namespace=NS),
        objects=[ObjRef(kind="Secret", name="keys", namespace=NS)],
    )
    assert calls(run_fact("reference_proof", m, rctx())) == [
        ("list_objects", {"kind": "Secret", "namespace": NS})
    ]
    proven = m.model_copy(update={"key": "k8s:ref:x"})
    assert run_fact("reference_proof", proven, rctx()) == []


def test_rbac_rules() -> None:
    f = Fact(
        key="event:rbac",
        statement="forbidden",
        kind=K.RBAC_DENIED,
        detail={"user": "system:serviceaccount:shop:reporter", "namespace": "shop"},
    )
    assert calls(run_fact("rbac_bindings", f, rctx())) == [
        ("list_objects", {"kind": "RoleBinding", "namespace": "shop"}),
        ("list_objects", {"kind": "ClusterRoleBinding"}),
        ("list_objects", {"kind": "ServiceAccount", "namespace": "shop"}),
    ]
    from opsmate.agent.observe.analyzers.k8s_rbac import denials_in

    g = ObjectGraph()
    for d in denials_in(
        'User "system:serviceaccount:shop:reporter" cannot list resource "pods" '
        'in API group "" in the namespace "shop"'
    ):
        g.add("AccessDenial", d, "E2")
    logs = result("search_logs", {"items": []})
    assert ("list_objects", {"kind": "ClusterRoleBinding"}) in calls(
        run_result("access_denials", logs, rctx(graph=g))
    )
    rb = objects(
        "RoleBinding",
        obj(
            "RoleBinding",
            "reporter",
            roleRef={"kind": "Role", "name": "reader"},
            subjects=[{"kind": "ServiceAccount", "name": "reporter"}],
        ),
    )
    assert calls(run_result("bound_roles", rb, rctx(graph=g))) == [
        ("get_object", {"kind": "Role", "name": "reader", "namespace": NS})
    ]


def test_rules_need_their_tools() -> None:
    res = objects("Service", obj("Service", "api", spec={"selector": {"app": "api"}}))
    bare = RuleContext(subject=Subject(), namespace=NS, tools=frozenset())
    assert run_result("service_neighbours", res, bare) == []


def test_other_pods_wait_while_the_subjects_own_pods_are_healthy() -> None:
    bad = pod("batch-7d8e9-z1x2c", {"app": "batch"}, phase="Pending",
              waiting=("CrashLoopBackOff", ""), owner="ReplicaSet/batch-7d8e9")  # fmt: skip
    mine = pod("api-5c6d7-a1b2c", {"app": "api"}, owner="ReplicaSet/api-5c6d7")
    res = result("list_pods", {"pods": [pod_summary(bad), pod_summary(mine)]}, namespace=NS)
    subject = Subject(names=["api"], kind="Deployment", namespace=NS)
    got = run_result("pod_references", res, rctx(subject))
    assert got and all(c.tier == Tier.CORROBORATE for c in got)  # somebody else's problem
    # the subject's pods not listed at all: nothing says they are fine, nothing waits
    alone = result("list_pods", {"pods": [pod_summary(bad)]}, namespace=NS)
    assert all(c.tier is None for c in run_result("pod_references", alone, rctx(subject)))
    # no subject: every unhealthy pod is followed at once
    assert all(c.tier is None for c in run_result("pod_references", res, rctx()))


def test_a_dependency_in_another_namespace_reads_its_pods_and_the_namespaces() -> None:
    got = calls(
        run_fact(
            "dependency_service",
            dep_fact(ObjRef(kind="host", name="metastore.meta.svc.cluster.local:9083")),
            rctx(),
        )
    )
    assert got == [
        ("list_objects", {"kind": "Service", "namespace": "meta"}),
        ("list_objects", {"kind": "NetworkPolicy", "namespace": "meta"}),
        ("list_objects", {"kind": "Namespace"}),
        ("list_pods", {"namespace": "meta"}),
    ]
    slow = dep_fact(ObjRef(kind="app", name="query")).model_copy(update={"reason": "slow"})
    assert run_fact("dependency_service", slow, rctx()) == []  # an operation, not a host


def test_a_policy_admitting_namespaces_by_label_reads_the_namespaces() -> None:
    by_team = obj(
        "NetworkPolicy",
        "clients",
        spec={
            "podSelector": {},
            "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"team": "data"}}}]}],
        },
    )
    by_name = obj(
        "NetworkPolicy",
        "edge",
        spec={
            "podSelector": {},
            "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {NAME_LABEL: "edge"}}}]}],
        },
    )
    assert calls(run_result("policy_namespaces", objects("NetworkPolicy", by_team), rctx())) == [
        ("list_objects", {"kind": "Namespace"})
    ]
    assert run_result("policy_namespaces", objects("NetworkPolicy", by_name), rctx()) == []


NAME_LABEL = "kubernetes.io/metadata.name"


def test_a_refused_route_reads_its_shared_gateway_and_its_namespace() -> None:
    refused = {"type": "Accepted", "status": "False", "reason": "NotAllowedByListeners"}
    r = obj(
        "HTTPRoute",
        "web",
        spec={"parentRefs": [{"name": "shared-gw", "namespace": "gw"}]},
        status={"parents": [{"parentRef": {"name": "shared-gw", "namespace": "gw"},
                             "conditions": [refused]}]},
    )  # fmt: skip
    assert calls(run_result("ingress_references", objects("HTTPRoute", r), rctx())) == [
        ("list_objects", {"kind": "Gateway", "namespace": NS}),
        ("get_object", {"kind": "Gateway", "name": "shared-gw", "namespace": "gw"}),
        ("get_object", {"kind": "Namespace", "name": NS}),
    ]


def test_an_alert_about_a_pod_in_a_namespace_not_read_reads_its_pods_and_events() -> None:
    from opsmate.agent.observe.analyzers.metrics import alerts
    from opsmate.agent.observe.context import ObserveContext

    firing = result(
        "list_alerts",
        {"alerts": [{"name": "KubePodCrashLooping", "state": "firing",
                     "labels": {"namespace": "kafka", "pod": "broker-2", "severity": "warning"},
                     "active_at": "2026-05-20T08:47:00Z"}]},
    )  # fmt: skip
    (fact,) = alerts(firing, ObserveContext())
    assert ObjRef(kind="Pod", name="broker-2", namespace="kafka") in fact.objects
    propose = rule("alerted_namespace").fact_fn
    assert propose is not None
    checks = list(propose(fact, rctx()))
    assert [(c.tool, c.args) for c in checks] == [
        ("list_pods", {"namespace": "kafka"}),
        ("get_events", {"namespace": "kafka"}),
    ]
    g = ObjectGraph()
    g.add_listing("Pod", [], "E1", namespace="kafka")
    assert list(propose(fact, rctx(graph=g))) == []  # its pods were read already
