"""API-shaped Kubernetes objects for the tests (a small shop of our own, namespace ``shop``).

Every builder returns what ``kubectl get -o json`` prints for one object (with kind and
apiVersion); ``shop_objects`` is a namespace holding one of each allow-listed kind.
"""

from __future__ import annotations

import copy
from typing import Any

NS = "shop"
CANARY = "s3cr3t-canary-value-7f1d"  # a Secret value that must never appear in any output

GV = {
    "Pod": "v1",
    "Service": "v1",
    "Endpoints": "v1",
    "ConfigMap": "v1",
    "Secret": "v1",
    "ServiceAccount": "v1",
    "PersistentVolumeClaim": "v1",
    "PersistentVolume": "v1",
    "ResourceQuota": "v1",
    "LimitRange": "v1",
    "Node": "v1",
    "Namespace": "v1",
    "Event": "v1",
    "Deployment": "apps/v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "Job": "batch/v1",
    "CronJob": "batch/v1",
    "Ingress": "networking.k8s.io/v1",
    "IngressClass": "networking.k8s.io/v1",
    "NetworkPolicy": "networking.k8s.io/v1",
    "StorageClass": "storage.k8s.io/v1",
    "CSINode": "storage.k8s.io/v1",
    "VolumeAttachment": "storage.k8s.io/v1",
    "EndpointSlice": "discovery.k8s.io/v1",
    "Role": "rbac.authorization.k8s.io/v1",
    "RoleBinding": "rbac.authorization.k8s.io/v1",
    "ClusterRole": "rbac.authorization.k8s.io/v1",
    "ClusterRoleBinding": "rbac.authorization.k8s.io/v1",
    "HorizontalPodAutoscaler": "autoscaling/v2",
    "PodDisruptionBudget": "policy/v1",
    "ValidatingWebhookConfiguration": "admissionregistration.k8s.io/v1",
    "MutatingWebhookConfiguration": "admissionregistration.k8s.io/v1",
    "Gateway": "gateway.networking.k8s.io/v1",
    "GatewayClass": "gateway.networking.k8s.io/v1",
    "HTTPRoute": "gateway.networking.k8s.io/v1",
    **{
        k: "chaos-mesh.org/v1alpha1"
        for k in (
            "NetworkChaos",
            "PodChaos",
            "StressChaos",
            "IOChaos",
            "TimeChaos",
            "DNSChaos",
            "HTTPChaos",
            "JVMChaos",
            "KernelChaos",
        )
    },
    "ChaosEngine": "litmuschaos.io/v1alpha1",
    "Certificate": "cert-manager.io/v1",
    "Issuer": "cert-manager.io/v1",
    "ClusterIssuer": "cert-manager.io/v1",
}
CLUSTER = {
    "GatewayClass",
    "ClusterIssuer",
    "Node",
    "Namespace",
    "PersistentVolume",
    "StorageClass",
    "CSINode",
    "VolumeAttachment",
    "IngressClass",
    "ClusterRole",
    "ClusterRoleBinding",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
}


def obj(
    kind: str, name: str, ns: str | None = NS, labels: dict[str, str] | None = None, **body: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "creationTimestamp": "2026-10-21T01:00:00Z"}
    if kind not in CLUSTER and ns:
        meta["namespace"] = ns
    if labels:
        meta["labels"] = labels
    meta.update(body.pop("metadata", {}))
    return {"kind": kind, "apiVersion": GV[kind], "metadata": meta, **body}


def container(
    name: str = "app", image: str = "registry.local/cart:2.0", **spec: Any
) -> dict[str, Any]:
    return {"name": name, "image": image, **spec}


def pod(
    name: str,
    labels: dict[str, str],
    *,
    phase: str = "Running",
    ready: bool = True,
    node: str | None = "node-a",
    containers: list[dict[str, Any]] | None = None,
    owner: str | None = None,
    ns: str = NS,
    waiting: tuple[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    containers = containers or [container()]
    state: dict[str, Any] = {"running": {"startedAt": "2026-10-21T01:01:00Z"}}
    if waiting:
        state = {"waiting": {"reason": waiting[0], "message": waiting[1]}}
    statuses = [
        {
            "name": c["name"],
            "image": c["image"],
            "ready": ready,
            "restartCount": 0,
            "started": ready,
            "state": state,
        }
        for c in containers
    ]
    meta: dict[str, Any] = {}
    if owner:
        kind, oname = owner.split("/")
        meta["ownerReferences"] = [{"kind": kind, "name": oname, "controller": True}]
    body_spec = {"containers": containers, **spec}
    if node:
        body_spec["nodeName"] = node
    status: dict[str, Any] = {
        "phase": phase,
        "containerStatuses": statuses if phase != "Pending" or waiting else [],
    }
    if phase == "Pending" and not node:
        status["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/2 nodes are available",
            }
        ]
    return obj("Pod", name, ns, labels, metadata=meta, spec=body_spec, status=status)


def node(
    name: str,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    cpu: str = "4",
    memory: str = "16Gi",
    unschedulable: bool = False,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"taints": taints} if taints else {}
    if unschedulable:  # cordoned: the flag and the taint the node controller adds
        spec["unschedulable"] = True
        spec["taints"] = [
            *(taints or []),
            {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
        ]
    return obj(
        "Node",
        name,
        None,
        {"kubernetes.io/hostname": name, **(labels or {})},
        spec=spec,
        status={
            "allocatable": {"cpu": cpu, "memory": memory, "pods": "110"},
            "capacity": {"cpu": cpu, "memory": memory, "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        },
    )


def workload(
    kind: str,
    name: str,
    labels: dict[str, str],
    *,
    replicas: int = 2,
    current: int = 2,
    ready: int = 2,
    containers: list[dict[str, Any]] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    template = {"metadata": {"labels": labels}, "spec": {"containers": containers or [container()]}}
    return obj(
        kind,
        name,
        NS,
        labels,
        spec={
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": template,
            **spec,
        },
        status={
            "replicas": current,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "unavailableReplicas": replicas - ready,
        },
    )


def shop_objects() -> list[dict[str, Any]]:
    """One namespace (``shop``) with an object of every allow-listed kind."""
    app = {"app": "cart"}
    return [
        pod(
            "cart-7c9d8-abcde", {**app, "pod-template-hash": "7c9d8"}, owner="ReplicaSet/cart-7c9d8"
        ),
        obj(
            "Service",
            "cart",
            spec={
                "selector": app,
                "ports": [{"port": 80, "targetPort": 8080}],
                "clusterIP": "10.0.0.10",
                "type": "ClusterIP",
            },
        ),
        obj(
            "Endpoints",
            "cart",
            subsets=[
                {
                    "addresses": [
                        {"ip": "10.1.0.5", "targetRef": {"kind": "Pod", "name": "cart-7c9d8-abcde"}}
                    ],
                    "ports": [{"port": 8080}],
                }
            ],
        ),
        obj(
            "EndpointSlice",
            "cart-x1",
            NS,
            {"kubernetes.io/service-name": "cart"},
            endpoints=[{"addresses": ["10.1.0.5"], "conditions": {"ready": True}}],
        ),
        obj(
            "Ingress",
            "cart",
            spec={
                "ingressClassName": "nginx",
                "rules": [
                    {
                        "host": "cart.shop.test",
                        "http": {
                            "paths": [
                                {
                                    "path": "/",
                                    "backend": {
                                        "service": {"name": "cart", "port": {"number": 80}}
                                    },
                                }
                            ]
                        },
                    }
                ],
            },
            status={"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}},
        ),
        obj("IngressClass", "nginx", spec={"controller": "k8s.io/ingress-nginx"}),
        obj(
            "NetworkPolicy",
            "cart-ingress",
            spec={
                "podSelector": {"matchLabels": app},
                "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "web"}}}]}],
            },
        ),
        obj(
            "PersistentVolumeClaim",
            "cart-data",
            spec={"storageClassName": "standard", "resources": {"requests": {"storage": "1Gi"}}},
            status={"phase": "Bound"},
        ),
        obj(
            "PersistentVolume",
            "pv-1",
            spec={
                "storageClassName": "standard",
                "claimRef": {"namespace": NS, "name": "cart-data"},
            },
            status={"phase": "Bound"},
        ),
        obj(
            "StorageClass",
            "standard",
            provisioner="example.com/disk",
            metadata={"annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        ),
        obj(
            "CSINode",
            "node-1",
            spec={
                "drivers": [
                    {"name": "ebs.csi.aws.com", "nodeID": "i-1", "allocatable": {"count": 25}}
                ]
            },
        ),
        obj(
            "VolumeAttachment",
            "csi-0a1b",
            spec={
                "attacher": "ebs.csi.aws.com",
                "nodeName": "node-1",
                "source": {"persistentVolumeName": "pv-1"},
            },
            status={"attached": True},
        ),
        obj("ConfigMap", "cart-config", data={"LOG_LEVEL": "debug", "FEATURE_X": "on"}),
        obj(
            "Secret",
            "cart-db",
            type="Opaque",
            data={"password": CANARY},
            metadata={
                "annotations": {
                    "kubectl.kubernetes.io/last-applied-configuration": '{"data":{"password":"'
                    + CANARY
                    + '"}}'
                }
            },
        ),
        obj("ServiceAccount", "cart", secrets=[{"name": "cart-token"}]),
        obj(
            "Role",
            "cart-reader",
            rules=[{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
        ),
        obj(
            "RoleBinding",
            "cart-reader",
            roleRef={"kind": "Role", "name": "cart-reader"},
            subjects=[{"kind": "ServiceAccount", "name": "cart", "namespace": NS}],
        ),
        obj(
            "ClusterRole",
            "view-nodes",
            rules=[{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]}],
        ),
        obj(
            "ClusterRoleBinding",
            "ops-view",
            roleRef={"kind": "ClusterRole", "name": "view-nodes"},
            subjects=[{"kind": "Group", "name": "ops"}],
        ),
        obj(
            "ResourceQuota",
            "compute",
            spec={"hard": {"requests.cpu": "4"}},
            status={"hard": {"requests.cpu": "4"}, "used": {"requests.cpu": "500m"}},
        ),
        obj(
            "LimitRange",
            "defaults",
            spec={"limits": [{"type": "Container", "default": {"cpu": "500m"}}]},
        ),
        obj(
            "HorizontalPodAutoscaler",
            "cart",
            spec={
                "scaleTargetRef": {"kind": "Deployment", "name": "cart"},
                "minReplicas": 2,
                "maxReplicas": 5,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 70},
                        },
                    }
                ],
            },
            status={"currentReplicas": 2, "desiredReplicas": 2},
        ),
        obj(
            "PodDisruptionBudget",
            "cart",
            spec={"minAvailable": 1, "selector": {"matchLabels": app}},
            status={
                "currentHealthy": 2,
                "desiredHealthy": 1,
                "disruptionsAllowed": 1,
                "expectedPods": 2,
            },
        ),
        obj(
            "Job",
            "cart-migrate",
            spec={"backoffLimit": 2, "template": {"spec": {"containers": [container("migrate")]}}},
            status={"succeeded": 1},
        ),
        obj(
            "CronJob",
            "cart-report",
            spec={
                "schedule": "0 * * * *",
                "jobTemplate": {
                    "spec": {"template": {"spec": {"containers": [container("report")]}}}
                },
            },
        ),
        workload("Deployment", "cart", app),
        workload("ReplicaSet", "cart-7c9d8", {**app, "pod-template-hash": "7c9d8"}),
        workload("StatefulSet", "cart-db", {"app": "cart-db"}, serviceName="cart-db"),
        obj(
            "DaemonSet",
            "log-agent",
            spec={
                "selector": {"matchLabels": {"app": "log-agent"}},
                "template": {"spec": {"containers": [container("agent")]}},
            },
            status={"desiredNumberScheduled": 2, "currentNumberScheduled": 2, "numberReady": 2},
        ),
        node("node-a"),
        obj("Namespace", NS, None, {"kubernetes.io/metadata.name": NS}, status={"phase": "Active"}),
        obj(
            "ValidatingWebhookConfiguration",
            "cart-policy",
            webhooks=[
                {
                    "name": "check.cart.test",
                    "clientConfig": {"service": {"namespace": NS, "name": "cart"}},
                    "rules": [{"operations": ["CREATE"], "resources": ["pods"]}],
                }
            ],
        ),
        obj("MutatingWebhookConfiguration", "cart-inject", webhooks=[]),
        obj(
            "GatewayClass",
            "envoy",
            spec={"controllerName": "gateway.envoyproxy.io/gatewayclass-controller"},
            status={"conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted"}]},
        ),
        obj(
            "Gateway",
            "shop-gw",
            spec={
                "gatewayClassName": "envoy",
                "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}],
            },
            status={"conditions": [{"type": "Programmed", "status": "True"}]},
        ),
        obj(
            "HTTPRoute",
            "cart-route",
            spec={
                "parentRefs": [{"name": "shop-gw"}],
                "rules": [{"backendRefs": [{"name": "cart", "port": 8080}]}],
            },
        ),
        *experiments(),
        obj(
            "ClusterIssuer",
            "internal-ca",
            None,
            spec={"ca": {"secretName": "internal-ca-keypair"}},
            status={
                "conditions": [{"type": "Ready", "status": "True", "reason": "KeyPairVerified"}]
            },
        ),
        obj(
            "Issuer",
            "letsencrypt",
            spec={"acme": {"server": "https://acme-v02.api.letsencrypt.org/directory"}},
            status={
                "conditions": [
                    {"type": "Ready", "status": "True", "reason": "ACMEAccountRegistered"}
                ]
            },
        ),
        obj(
            "Certificate",
            "cart-tls",
            spec={
                "secretName": "cart-tls",
                "dnsNames": ["cart.shop.svc"],
                "issuerRef": {"name": "internal-ca", "kind": "ClusterIssuer"},
            },
            status={
                "notAfter": "2099-01-01T00:00:00Z",
                "conditions": [{"type": "Ready", "status": "True", "reason": "Ready"}],
            },
        ),
    ]


def experiments() -> list[dict[str, Any]]:
    """One fault-injection experiment of each allow-listed kind, selecting no pod (nothing
    in ``shop`` is acted on)."""
    spec = {"action": "delay", "selector": {"labelSelectors": {"app": "no-such-app"}}}
    kinds = [k for k, gv in GV.items() if gv.split("/")[0] in ("chaos-mesh.org", "litmuschaos.io")]
    return [obj(k, f"{k.lower()}-1", spec=spec) for k in kinds]


def malformed_objects() -> list[dict[str, Any]]:
    """Objects with wrongly typed fields: labels as a list, ``spec`` / ``status`` as text,
    containers as a mapping, numbers as names."""
    return [
        {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"name": "odd-1", "namespace": NS, "labels": ["app", "odd"]},
            "spec": "not a spec",
            "status": ["Running"],
        },
        {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {
                "name": "odd-2",
                "namespace": NS,
                "labels": {"app": "odd"},
                "ownerReferences": "ReplicaSet/x",
            },
            "spec": {"containers": {"name": "app"}, "volumes": "none", "tolerations": [1, None]},
            "status": {
                "phase": 3,
                "containerStatuses": [None, "x", {"name": "app", "restartCount": "many"}],
            },
        },
        {
            "kind": "Node",
            "apiVersion": "v1",
            "metadata": {"name": "node-odd", "labels": ["x"]},
            "spec": "tainted",
            "status": {"conditions": "Ready", "capacity": ["4"]},
        },
        {
            "kind": "Deployment",
            "apiVersion": "apps/v1",
            "metadata": {"name": "odd", "namespace": NS, "annotations": ["rev"]},
            "spec": "replicas: 3",
            "status": None,
        },
        {
            "kind": "ReplicaSet",
            "apiVersion": "apps/v1",
            "metadata": {
                "name": "odd-1a2b3",
                "namespace": NS,
                "labels": ["x"],
                "ownerReferences": [{"kind": "Deployment", "name": "odd"}, "junk"],
            },
            "spec": {"template": "none"},
            "status": {"replicas": "two"},
        },
        {
            "kind": "Service",
            "apiVersion": "v1",
            "metadata": {"name": "odd", "namespace": NS},
            "spec": {"selector": ["app=odd"], "ports": "80"},
        },
        {
            "kind": "NetworkPolicy",
            "apiVersion": "networking.k8s.io/v1",
            "metadata": {"name": "odd", "namespace": NS},
            "spec": {"podSelector": "all", "ingress": "deny"},
        },
        {
            "kind": "Event",
            "apiVersion": "v1",
            "metadata": {"name": "odd.1", "namespace": NS},
            "involvedObject": "Pod/odd-1",
            "count": "lots",
            "reason": ["x"],
        },
    ]


def copy_objects(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return copy.deepcopy(objs)
