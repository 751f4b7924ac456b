"""The pod, whole, and the records of every allow-listed kind, from API-shaped objects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from k8s_build import CANARY, NS, container, malformed_objects, node, obj, pod, shop_objects

from opsmate.records.k8s import Pod, parse_taint
from opsmate.records.k8s_objects import RECORD_TYPES, LabelSelector, parse_objects
from opsmate.records.quantity import add_quantities, format_quantity, parse_quantity
from opsmate.tools.k8s_kinds import KIND_TABLE, KINDS, canonical_kind
from opsmate.tools.kubernetes.shaping_objects import shape_object, shape_record
from opsmate.tools.shaping import node_summary, pod_summary


def full_pod() -> dict:
    app = container(
        "app",
        command=["/srv/cart"],
        args=["--port", "8080"],
        ports=[{"name": "http", "containerPort": 8080}],
        resources={"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}},
        livenessProbe={"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
        readinessProbe={"tcpSocket": {"port": 8080}},
        startupProbe={"exec": {"command": ["cat", "/tmp/ready"]}},
        env=[
            {"name": "LOG_LEVEL", "value": "debug"},
            {"name": "DB_PASSWORD", "value": CANARY},
            {"name": "DB_URL", "valueFrom": {"secretKeyRef": {"name": "cart-db", "key": "url"}}},
            {
                "name": "FEATURE",
                "valueFrom": {
                    "configMapKeyRef": {"name": "cart-config", "key": "feature", "optional": True}
                },
            },
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        ],
        envFrom=[
            {"configMapRef": {"name": "cart-env"}},
            {"secretRef": {"name": "cart-keys"}, "prefix": "K_"},
        ],
        volumeMounts=[{"name": "config", "mountPath": "/etc/cart", "readOnly": True}],
    )
    p = pod(
        "cart-7c9d8-abcde",
        {"app": "cart"},
        owner="ReplicaSet/cart-7c9d8",
        containers=[app],
        initContainers=[container("wait-db", "busybox:1.36")],
        serviceAccountName="cart",
        nodeSelector={"disk": "ssd"},
        affinity={
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app": "cart"}},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        },
        tolerations=[
            {"key": "dedicated", "operator": "Equal", "value": "shop", "effect": "NoSchedule"},
            {"operator": "Exists"},
        ],
        volumes=[
            {
                "name": "config",
                "configMap": {
                    "name": "cart-config",
                    "items": [{"key": "app.yaml", "path": "app.yaml"}],
                },
            },
            {"name": "keys", "secret": {"secretName": "cart-keys", "optional": True}},
            {"name": "data", "persistentVolumeClaim": {"claimName": "cart-data"}},
            {"name": "tmp", "emptyDir": {}},
            {
                "name": "token",
                "projected": {
                    "sources": [
                        {"serviceAccountToken": {"path": "t"}},
                        {"configMap": {"name": "kube-root-ca.crt"}},
                    ]
                },
            },
        ],
        imagePullSecrets=[{"name": "registry-creds"}],
    )
    p["status"]["initContainerStatuses"] = [
        {
            "name": "wait-db",
            "ready": False,
            "restartCount": 2,
            "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 20s"}},
            "lastState": {
                "terminated": {
                    "reason": "Error",
                    "exitCode": 1,
                    "message": "db not reachable",
                    "startedAt": "2026-10-21T01:02:00Z",
                    "finishedAt": "2026-10-21T01:02:05Z",
                }
            },
        }
    ]
    return p


def test_pod_summary_carries_the_pod_whole() -> None:
    s = pod_summary(full_pod())
    rec = Pod.model_validate(s)
    app = rec.containers[0]
    assert app.command == ["/srv/cart"] and app.args == ["--port", "8080"]
    assert app.ports == ["http:8080/TCP"]
    assert app.resources is not None and app.resources.requests == {
        "cpu": "250m",
        "memory": "256Mi",
    }
    assert (
        app.liveness
        and app.liveness.type == "http"
        and app.liveness.target == "GET http://:8080/healthz"
    )
    assert app.readiness and app.readiness.target == "tcp :8080"
    assert app.startup and app.startup.target == "exec cat /tmp/ready"
    env = {e.name: e for e in app.env}
    assert env["LOG_LEVEL"].value == "debug" and env["LOG_LEVEL"].source == "literal"
    assert env["DB_PASSWORD"].value is None and env["DB_PASSWORD"].value_hidden
    assert (env["DB_URL"].source, env["DB_URL"].ref_name, env["DB_URL"].ref_key) == (
        "secret",
        "cart-db",
        "url",
    )
    assert env["FEATURE"].optional and env["POD_IP"].value == "status.podIP"
    assert [(e.source, e.name, e.prefix) for e in app.env_from] == [
        ("configmap", "cart-env", None),
        ("secret", "cart-keys", "K_"),
    ]
    init = rec.init_containers[0]
    assert init.init and init.reason == "CrashLoopBackOff" and init.restarts == 2
    assert init.last_termination and init.last_termination.message == "db not reachable"
    assert rec.service_account == "cart" and rec.node_selector == {"disk": "ssd"}
    assert rec.tolerations == ["dedicated=shop:NoSchedule", "*:Exists"]
    assert "podAntiAffinity" in rec.affinity
    vols = {(v.name, v.type, v.ref_name, v.optional) for v in rec.volumes}
    assert ("config", "configMap", "cart-config", False) in vols
    assert ("keys", "secret", "cart-keys", True) in vols and (
        "data",
        "persistentVolumeClaim",
        "cart-data",
        False,
    ) in vols
    assert ("token", "projected", None, False) in vols  # the CA bundle of the token is left out
    assert rec.image_pull_secrets == ["registry-creds"] and rec.owner == "ReplicaSet/cart-7c9d8"
    assert CANARY not in json.dumps(s)


def test_pod_summary_keeps_the_keys_it_always_had() -> None:
    s = pod_summary(pod("p", {"app": "x"}, phase="Pending", node=None))
    for key in ("name", "namespace", "phase", "ready", "restarts", "node", "start_time", "labels"):
        assert key in s
    assert (
        s["node"] is None and s["start_time"] is None and s["containers"][0]["state"] == "unknown"
    )
    c = pod_summary(pod("q", {}, waiting=("ErrImagePull", "not found")))["containers"][0]
    assert {"name", "image", "ready", "restarts", "state", "reason"} <= set(c)


def test_requests_and_tolerations() -> None:
    rec = Pod.model_validate(pod_summary(full_pod()))
    assert rec.requests() == {"cpu": "250m", "memory": "256Mi"}
    assert rec.tolerates("dedicated=shop:NoSchedule")
    strict = Pod.model_validate({"tolerations": ["dedicated=shop:NoSchedule", "gpu:Exists"]})
    assert strict.tolerates("gpu=:NoExecute") and not strict.tolerates("dedicated=other:NoSchedule")
    assert not Pod().tolerates("node-role.kubernetes.io/control-plane=:NoSchedule")
    assert parse_taint("a/b=c:NoSchedule") == ("a/b", "c", "NoSchedule")


def test_quantities() -> None:
    assert (
        parse_quantity("250m") == 0.25
        and parse_quantity("1Gi") == 2**30
        and parse_quantity("1e3") == 1000
    )
    assert parse_quantity("lots") is None and parse_quantity(None) is None
    assert add_quantities("250m", "500m") == "750m" and add_quantities("256Mi", "256Mi") == "512Mi"
    assert format_quantity(2.0, "1") == "2"


def test_every_kind_shapes_and_none_shows_a_secret() -> None:
    seen = set()
    for o in shop_objects():
        kind = canonical_kind(o["kind"])
        assert kind is not None, o["kind"]
        out = shape_object(kind, o)
        seen.add(kind)
        assert out["name"] == o["metadata"]["name"]
        rec = RECORD_TYPES[kind].model_validate(out)
        assert getattr(rec, "name", None) == o["metadata"]["name"]
        assert CANARY not in json.dumps(out), kind
        assert "annotations" not in out and "data" not in out
    assert seen == set(KINDS), set(KINDS) - seen
    cm = shape_object("ConfigMap", obj("ConfigMap", "c", data={"a": "1"}, binaryData={"b": "Ag=="}))
    assert cm["keys"] == ["a", "b"]
    secret = next(o for o in shop_objects() if o["kind"] == "Secret")
    assert set(shape_object("Secret", secret)) == {
        "kind",
        "name",
        "namespace",
        "created",
    }


def test_selected_kinds_read_their_fields() -> None:
    by = {o["metadata"]["name"] + "/" + o["kind"]: o for o in shop_objects()}
    ing = shape_record("Ingress", by["cart/Ingress"])
    assert (
        ing.class_name == "nginx" and ing.services() == ["cart"] and ing.addresses == ["192.0.2.10"]
    )  # type: ignore[attr-defined]
    np_ = shape_object("NetworkPolicy", by["cart-ingress/NetworkPolicy"])
    assert np_["policy_types"] == ["Ingress"] and np_["ingress"][0]["peers"][0]["pod_selector"]
    hpa = shape_object("HorizontalPodAutoscaler", by["cart/HorizontalPodAutoscaler"])
    assert hpa["metrics"] == ["cpu utilization 70%"] and hpa["target"]["name"] == "cart"
    ds = shape_object("DaemonSet", by["log-agent/DaemonSet"])
    assert ds["replicas"]["desired"] == 2 and ds["replicas"]["ready"] == 2
    dep = shape_object("Deployment", by["cart/Deployment"])
    assert dep["template"]["containers"][0]["image"] == "registry.local/cart:2.0"
    ep = shape_object("EndpointSlice", by["cart-x1/EndpointSlice"])
    assert ep["service"] == "cart" and ep["ready"][0]["ip"] == "10.1.0.5"
    allpods = shape_object("NetworkPolicy", obj("NetworkPolicy", "deny", spec={"podSelector": {}}))
    rec = parse_objects({"kind": "NetworkPolicy", "items": [allpods]})[1][0]
    assert rec.pod_selector.everything and rec.ingress == []  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "o", malformed_objects(), ids=lambda o: f"{o['kind']}-{o['metadata']['name']}"
)
def test_malformed_objects_shape_without_raising(o: dict) -> None:
    kind = canonical_kind(o["kind"])
    if kind is not None:
        out = shape_object(kind, o)
        assert out["name"] == o["metadata"]["name"]
    if o["kind"] == "Pod":
        s = pod_summary(o)
        assert s["name"] == o["metadata"]["name"] and isinstance(s["labels"], dict)
    if o["kind"] == "Node":
        assert node_summary(o)["labels"] == {} and node_summary(o)["capacity"] == {}


def test_label_selector_semantics() -> None:
    sel = LabelSelector.model_validate(
        {
            "match_labels": {"app": "cart"},
            "match_expressions": [
                {"key": "tier", "operator": "In", "values": ["web", "api"]},
                {"key": "legacy", "operator": "DoesNotExist"},
            ],
        }
    )
    assert sel.matches({"app": "cart", "tier": "web"})
    assert not sel.matches({"app": "cart", "tier": "db"}) and not sel.matches(
        {"app": "cart", "tier": "web", "legacy": "1"}
    )
    assert not LabelSelector.model_validate(
        {"match_expressions": [{"key": "a", "operator": "Weird"}]}
    ).matches({"a": "1"})
    assert sel.text() == "app=cart,tier in (web, api),!legacy"


def test_kind_table_matches_the_client() -> None:
    """Every allow-listed kind is read through a real method of the kubernetes client."""
    from kubernetes import client

    for info in KIND_TABLE:
        api = getattr(client, info.api)
        assert hasattr(api, info.list_method()), info.list_method()
        assert hasattr(api, info.read_method()), info.read_method()
    assert (
        canonical_kind("svc") == "Service" and canonical_kind("networkpolicies") == "NetworkPolicy"
    )
    assert canonical_kind("storageclasses.storage.k8s.io") == "StorageClass"
    assert canonical_kind("secrets") == "Secret" and canonical_kind("widgets") is None
    assert node("n")["metadata"]["name"] == "n" and NS == "shop"


def test_readme_cluster_role_grants_exactly_the_kinds_read(repo_root: Path) -> None:
    """The README's ``opsmate-reader`` ClusterRole: get/list on exactly the allow-listed
    resources (plus events), get on pods/log, nothing else, no other verb."""
    text = (repo_root / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- opsmate-reader", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
    role = yaml.safe_load(block)
    granted: dict[tuple[str, str], set[str]] = {}
    for r in role["rules"]:
        for g in r["apiGroups"]:
            for res in r["resources"]:
                granted[(g, res)] = set(r["verbs"])
    want = {(k.group, k.resource): {"get", "list"} for k in KIND_TABLE}
    want[("", "events")] = {"get", "list"}
    want[("", "pods/log")] = {"get"}
    assert role["kind"] == "ClusterRole" and role["metadata"]["name"] == "opsmate-reader"
    assert granted == want


def test_a_pods_priority_is_read_with_its_class() -> None:
    p = full_pod()
    p["spec"]["priorityClassName"] = "overprovisioning"
    p["spec"]["priority"] = -10
    rec = Pod.model_validate(pod_summary(p))
    assert (rec.priority_class, rec.priority) == ("overprovisioning", -10)
    assert Pod.model_validate(pod_summary(full_pod())).priority is None
