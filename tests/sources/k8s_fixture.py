"""A protocol fixture for the Kubernetes API server (read paths only; not a mock of our code).

:class:`K8sFixture` is a threaded HTTP server on 127.0.0.1 serving Kubernetes-shaped
JSON for the paths the real ``kubernetes`` client requests: pods (list, get, ``log``
subresource as text), events, deployments, replicasets and nodes. List answers are
``<Kind>List`` objects whose items carry no kind / apiVersion, as a real API server
sends them; ``labelSelector`` (equality and set-based) and ``fieldSelector``
(``=``, ``==``, ``!=`` on the fields the API server supports for that resource, others
are a 400 ``field label not supported``) are honoured, as are ``limit`` / ``continue``
and the log parameters ``container``, ``tailLines`` and ``sinceSeconds``. Errors are
``Status`` objects. Every request is recorded in ``requests`` (method, path, query,
headers with lower-case names) so a test can assert that only GET was ever used; any other verb is
answered 405.

Beyond those, every resource of the product's allow-list is served on its real path
(``/api/v1/...`` for the core group, ``/apis/<group>/<version>/...`` otherwise; see
``RESOURCES``), namespaced or cluster-scoped as on a real server. A request whose
``Accept`` header asks for ``as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`` gets
only the objects' metadata, as a real API server answers it.

Fault modes (``fixture.mode``): ``forbidden`` (403, an RBAC denial), ``unauthorized``
(401), ``server_error`` (500), ``slow`` (answers after ``delay`` s), ``malformed``
(200 with truncated JSON), ``hang`` (accepts the request and never answers until the
fixture closes). ``forbidden_resources`` makes only those resources answer 403.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from http_fixture import LoopbackServer

FIELDS = {
    "pods": {"metadata.name", "metadata.namespace", "spec.nodeName", "status.phase"},
    "events": {
        "metadata.name",
        "metadata.namespace",
        "involvedObject.kind",
        "involvedObject.name",
        "involvedObject.namespace",
        "involvedObject.uid",
        "reason",
        "type",
        "source",
    },
}
# resource -> (kind, group/version, namespaced): what a v1.31 API server serves
RESOURCES: dict[str, tuple[str, str, bool]] = {
    "pods": ("Pod", "v1", True),
    "events": ("Event", "v1", True),
    "services": ("Service", "v1", True),
    "endpoints": ("Endpoints", "v1", True),
    "persistentvolumeclaims": ("PersistentVolumeClaim", "v1", True),
    "configmaps": ("ConfigMap", "v1", True),
    "secrets": ("Secret", "v1", True),
    "serviceaccounts": ("ServiceAccount", "v1", True),
    "resourcequotas": ("ResourceQuota", "v1", True),
    "limitranges": ("LimitRange", "v1", True),
    "nodes": ("Node", "v1", False),
    "namespaces": ("Namespace", "v1", False),
    "persistentvolumes": ("PersistentVolume", "v1", False),
    "deployments": ("Deployment", "apps/v1", True),
    "replicasets": ("ReplicaSet", "apps/v1", True),
    "statefulsets": ("StatefulSet", "apps/v1", True),
    "daemonsets": ("DaemonSet", "apps/v1", True),
    "jobs": ("Job", "batch/v1", True),
    "cronjobs": ("CronJob", "batch/v1", True),
    "ingresses": ("Ingress", "networking.k8s.io/v1", True),
    "networkpolicies": ("NetworkPolicy", "networking.k8s.io/v1", True),
    "ingressclasses": ("IngressClass", "networking.k8s.io/v1", False),
    "storageclasses": ("StorageClass", "storage.k8s.io/v1", False),
    "csinodes": ("CSINode", "storage.k8s.io/v1", False),
    "volumeattachments": ("VolumeAttachment", "storage.k8s.io/v1", False),
    "endpointslices": ("EndpointSlice", "discovery.k8s.io/v1", True),
    "roles": ("Role", "rbac.authorization.k8s.io/v1", True),
    "rolebindings": ("RoleBinding", "rbac.authorization.k8s.io/v1", True),
    "clusterroles": ("ClusterRole", "rbac.authorization.k8s.io/v1", False),
    "clusterrolebindings": ("ClusterRoleBinding", "rbac.authorization.k8s.io/v1", False),
    "horizontalpodautoscalers": ("HorizontalPodAutoscaler", "autoscaling/v2", True),
    "poddisruptionbudgets": ("PodDisruptionBudget", "policy/v1", True),
    "validatingwebhookconfigurations": (
        "ValidatingWebhookConfiguration",
        "admissionregistration.k8s.io/v1",
        False,
    ),
    "mutatingwebhookconfigurations": (
        "MutatingWebhookConfiguration",
        "admissionregistration.k8s.io/v1",
        False,
    ),
    # Gateway API CRDs installed (custom resources: served as plain JSON)
    "gateways": ("Gateway", "gateway.networking.k8s.io/v1", True),
    "gatewayclasses": ("GatewayClass", "gateway.networking.k8s.io/v1", False),
    "httproutes": ("HTTPRoute", "gateway.networking.k8s.io/v1", True),
    # Chaos Mesh and LitmusChaos CRDs installed
    **{
        f"{k.lower()}": (k, "chaos-mesh.org/v1alpha1", True)
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
    "chaosengines": ("ChaosEngine", "litmuschaos.io/v1alpha1", True),
    # cert-manager CRDs installed
    "certificates": ("Certificate", "cert-manager.io/v1", True),
    "issuers": ("Issuer", "cert-manager.io/v1", True),
    "clusterissuers": ("ClusterIssuer", "cert-manager.io/v1", False),
}
KINDS = {r: k for r, (k, _, _) in RESOURCES.items()}
GROUP = {r: gv for r, (_, gv, _) in RESOURCES.items()}
PARTIAL = re.compile(r"as=(PartialObjectMetadata(?:List)?);g=meta\.k8s\.io;v=v1")


def status(code: int, reason: str, message: str, **details: Any) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "details": details,
        "code": code,
    }


class K8sError(Exception):
    def __init__(self, code: int, reason: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.body = status(code, reason, message, **details)


# --------------------------------------------------------------------------- selectors


def _split(selector: str) -> list[str]:
    parts, cur, depth = [], "", 0
    for ch in selector:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def label_match(labels: dict[str, str], selector: str) -> bool:
    """Kubernetes label selector semantics (an independent implementation)."""
    for req in _split(selector):
        if m := re.fullmatch(r"([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)", req):
            key, op, vals = m.group(1), m.group(2), {v.strip() for v in m.group(3).split(",")}
            ok = labels.get(key) in vals if op == "in" else labels.get(key) not in vals
        elif m := re.fullmatch(r"([\w./-]+)\s*(==|=|!=)\s*([\w.-]*)", req):
            key, op, val = m.groups()
            ok = labels.get(key) == val if op != "!=" else labels.get(key) != val
        elif m := re.fullmatch(r"(!?)([\w./-]+)", req):
            ok = (m.group(2) in labels) != bool(m.group(1))
        else:
            raise K8sError(400, "BadRequest", f"unable to parse requirement: {req!r}")
        if not ok:
            return False
    return True


def _path_get(obj: dict[str, Any], dotted: str) -> Any:
    cur: Any = obj
    for part in dotted.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    if dotted == "source" and isinstance(cur, dict):
        return cur.get("component")
    return cur


def field_match(obj: dict[str, Any], selector: str, resource: str) -> bool:
    allowed = FIELDS.get(resource, {"metadata.name", "metadata.namespace"})
    for req in _split(selector):
        m = re.fullmatch(r"([\w.]+)\s*(==|=|!=)\s*(.*)", req)
        if not m:
            raise K8sError(400, "BadRequest", f"invalid field selector: {req!r}")
        key, op, val = m.groups()
        if key not in allowed:
            raise K8sError(400, "BadRequest", f"field label not supported: {key}")
        have = str(_path_get(obj, key) or "")
        if (have == val) != (op != "!="):
            return False
    return True


# --------------------------------------------------------------------------- server


class K8sFixture(LoopbackServer):
    """The server over ``objects`` (API-shaped dicts with kind) and pod ``logs``.

    ``logs`` maps ``(namespace, pod, container)`` to ``[(time, line), ...]``.
    """

    def __init__(
        self,
        objects: list[dict[str, Any]],
        logs: dict[tuple[str, str, str], list[tuple[datetime, str]]] | None = None,
    ):
        self.objects = objects
        self.logs = logs or {}
        self.mode = "ok"
        self.delay = 3.0
        self.forbidden_resources: set[str] = set()
        self.requests: list[dict[str, Any]] = []
        self.released = threading.Event()  # set on exit: hanging answers end
        self._serve()

    def __exit__(self, *exc: object) -> None:
        self.released.set()
        super().__exit__(*exc)

    def respond(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        lowered = {k.lower(): v for k, v in headers.items()}
        code, ctype, payload = self.handle(method, target, lowered)
        return code, {"Content-Type": ctype}, payload

    def methods(self) -> set[str]:
        return {r["method"] for r in self.requests}

    def handle(self, method: str, target: str, headers: dict[str, str]) -> tuple[int, str, bytes]:
        parts = urlsplit(target)
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        self.requests.append(
            {"method": method, "path": parts.path, "query": query, "headers": headers}
        )
        try:
            if method != "GET":
                raise K8sError(
                    405, "MethodNotAllowed", f"the fixture serves only GET, not {method}"
                )
            self._fault(parts.path)
            result = self._route(parts.path, query, headers.get("accept") or "")
        except K8sError as exc:
            return exc.code, "application/json", json.dumps(exc.body).encode()
        if isinstance(result, str):
            return 200, "text/plain", result.encode()
        if self.mode == "malformed":
            return (
                200,
                "application/json",
                b'{"kind": "PodList", "apiVersion": "v1", "items": [{"meta',
            )
        return 200, "application/json", json.dumps(result).encode()

    def _fault(self, path: str) -> None:
        parts = [p for p in path.split("/") if p]
        resource = next((p for p in reversed(parts) if p in RESOURCES), "pods")
        if "namespaces" in parts and parts.index("namespaces") + 2 < len(parts):
            resource = parts[parts.index("namespaces") + 2]  # /namespaces/<ns>/<resource>
        ns = re.search(r"/namespaces/([^/]+)/", path)
        if self.mode == "forbidden" or resource in self.forbidden_resources:
            where = f' in the namespace "{ns.group(1)}"' if ns else " at the cluster scope"
            group = GROUP[resource].rpartition("/")[0]
            raise K8sError(
                403,
                "Forbidden",
                f'{resource} is forbidden: User "system:serviceaccount:ops:opsmate" '
                f'cannot list resource "{resource}" in API group "{group}"{where}',
                kind=resource,
            )
        if self.mode == "unauthorized":
            raise K8sError(401, "Unauthorized", "Unauthorized")
        if self.mode == "server_error":
            raise K8sError(500, "InternalError", "etcdserver: request timed out")
        if self.mode == "slow":
            self.released.wait(self.delay)
        if self.mode == "hang":
            self.released.wait()

    def _route(self, path: str, q: dict[str, str], accept: str = "") -> Any:
        m = re.fullmatch(r"/api/v1/namespaces/([^/]+)/pods/([^/]+)/log", path)
        if m:
            return self._log(m.group(1), m.group(2), q)
        m = re.fullmatch(
            r"/(?:api/(v1)|apis/([^/]+/[^/]+))(?:/namespaces/([^/]+))?/([a-z]+)(?:/([^/]+))?", path
        )
        not_served = K8sError(404, "NotFound", "the server could not find the requested resource")
        if not m or m.group(4) not in RESOURCES:
            raise not_served
        group_version = m.group(1) or m.group(2)
        ns, resource, name = m.group(3), m.group(4), m.group(5)
        kind, served_gv, namespaced = RESOURCES[resource]
        if group_version != served_gv or (ns is not None and not namespaced):
            raise not_served
        if name is not None and namespaced and ns is None:
            raise not_served
        objs = [
            o
            for o in self.objects
            if o["kind"] == kind and (ns is None or o["metadata"].get("namespace") == ns)
        ]
        partial = PARTIAL.search(accept)
        if name is not None:
            for o in objs:
                if o["metadata"]["name"] == name:
                    return _partial(o) if partial else copy.deepcopy(o)
            raise K8sError(
                404, "NotFound", f'{resource} "{name}" not found', name=name, kind=resource
            )
        if q.get("labelSelector"):
            objs = [
                o
                for o in objs
                if label_match(o["metadata"].get("labels") or {}, q["labelSelector"])
            ]
        if q.get("fieldSelector"):
            objs = [o for o in objs if field_match(o, q["fieldSelector"], resource)]
        start = int(q.get("continue") or 0)
        limit = int(q.get("limit") or 0) or len(objs)
        page = objs[start : start + limit]
        meta: dict[str, Any] = {"resourceVersion": "4242"}
        if start + limit < len(objs):
            meta["continue"] = str(start + limit)
        if partial:
            return {
                "kind": "PartialObjectMetadataList",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta,
                "items": [_partial(o) for o in page],
            }
        items = []
        for o in page:
            item = copy.deepcopy(o)
            item.pop("kind")
            item.pop("apiVersion")
            items.append(item)
        return {
            "kind": f"{kind}List",
            "apiVersion": GROUP[resource],
            "metadata": meta,
            "items": items,
        }

    def _log(self, ns: str, name: str, q: dict[str, str]) -> str:
        pod = next(
            (
                o
                for o in self.objects
                if o["kind"] == "Pod"
                and o["metadata"]["name"] == name
                and o["metadata"].get("namespace") == ns
            ),
            None,
        )
        if pod is None:
            raise K8sError(404, "NotFound", f'pods "{name}" not found', name=name, kind="pods")
        containers = [c["name"] for c in pod["spec"]["containers"]]
        container = q.get("container")
        if container is None:
            if len(containers) > 1:
                raise K8sError(
                    400,
                    "BadRequest",
                    f"a container name must be specified for pod "
                    f"{name}, choose one of: [{' '.join(containers)}]",
                )
            container = containers[0]
        if container not in containers:
            raise K8sError(400, "BadRequest", f"container {container} is not valid for pod {name}")
        lines = self.logs.get((ns, name, container), [])
        if q.get("sinceSeconds"):
            since = datetime.now(UTC) - timedelta(seconds=int(q["sinceSeconds"]))
            lines = [(t, ln) for t, ln in lines if t >= since]
        if q.get("tailLines"):
            lines = lines[-int(q["tailLines"]) :] if int(q["tailLines"]) else []
        return "".join(ln + "\n" for _, ln in lines)


def _partial(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as ``PartialObjectMetadata``: its metadata and nothing else."""
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": copy.deepcopy(obj["metadata"]),
    }


def write_kubeconfig(
    path: Path, contexts: dict[str, str], current: str, token: str = "fixture-token"
) -> Path:
    """A kubeconfig with one context per ``name -> server URL`` (namespace ``shop``)."""
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": current,
        "clusters": [{"name": n, "cluster": {"server": url}} for n, url in contexts.items()],
        "users": [{"name": "reader", "user": {"token": token}}],
        "contexts": [
            {"name": n, "context": {"cluster": n, "user": "reader", "namespace": "shop"}}
            for n in contexts
        ],
    }
    path.write_text(json.dumps(cfg), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- fixture objects

T = datetime(2026, 10, 21, 2, 0, tzinfo=UTC)  # the 10:00 +08:00 release


def ts(minutes: float) -> str:
    return (T + timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")


def _pod(
    name: str,
    app: str,
    rs: str,
    *,
    ready: bool,
    restarts: int = 0,
    waiting: str | None = None,
    last: tuple[str, int] | None = None,
    ns: str = "shop",
    node: str = "node-a",
    image: str = "registry.local/order-service:1.8.0",
    containers: tuple[str, ...] = ("app",),
) -> dict[str, Any]:
    state: dict[str, Any] = (
        {"waiting": {"reason": waiting, "message": "back-off 5m0s"}}
        if waiting
        else {"running": {"startedAt": ts(1)}}
    )
    statuses = []
    for c in containers:
        st: dict[str, Any] = {
            "name": c,
            "image": image,
            "imageID": "",
            "ready": ready,
            "restartCount": restarts if c == "app" else 0,
            "started": ready,
            "state": state if c == "app" else {"running": {"startedAt": ts(0)}},
        }
        if last and c == "app":
            st["lastState"] = {
                "terminated": {
                    "reason": last[0],
                    "exitCode": last[1],
                    "startedAt": ts(2),
                    "finishedAt": ts(4),
                }
            }
        statuses.append(st)
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": f"uid-{name}",
            "labels": {"app": app, "pod-template-hash": rs.rsplit("-", 1)[-1]},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": rs,
                    "uid": f"uid-{rs}",
                    "controller": True,
                }
            ],
            "creationTimestamp": ts(0),
        },
        "spec": {"nodeName": node, "containers": [{"name": c, "image": image} for c in containers]},
        "status": {"phase": "Running", "startTime": ts(0), "containerStatuses": statuses},
    }


def _event(
    name: str,
    kind: str,
    obj: str,
    reason: str,
    message: str,
    etype: str,
    last: float,
    count: int = 1,
    ns: str = "shop",
) -> dict[str, Any]:
    return {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": ts(last - 1)},
        "involvedObject": {"kind": kind, "name": obj, "namespace": ns, "apiVersion": "v1"},
        "reason": reason,
        "message": message,
        "type": etype,
        "count": count,
        "firstTimestamp": ts(last - 1),
        "lastTimestamp": ts(last),
        "source": {"component": "kubelet"},
    }


def _rs(
    name: str,
    dep: str,
    rev: int,
    image: str,
    created: float,
    replicas: int,
    owner: str | None = None,
) -> dict[str, Any]:
    ann = {"deployment.kubernetes.io/revision": str(rev)}
    if rev == 3:
        ann["kubernetes.io/change-cause"] = "release 1.8.0"
    return {
        "kind": "ReplicaSet",
        "apiVersion": "apps/v1",
        "metadata": {
            "name": name,
            "namespace": "shop",
            "uid": f"uid-{name}",
            "labels": {"app": dep, "pod-template-hash": name.rsplit("-", 1)[-1]},
            "annotations": ann,
            "creationTimestamp": ts(created),
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": owner or dep,
                    "uid": f"uid-{owner or dep}",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": dep, "pod-template-hash": name.rsplit("-", 1)[-1]}},
            "template": {
                "metadata": {"labels": {"app": dep}},
                "spec": {"containers": [{"name": "app", "image": image}]},
            },
        },
        "status": {"replicas": replicas, "readyReplicas": replicas},
    }


def _deployment(name: str, rev: int, image: str) -> dict[str, Any]:
    return {
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {
            "name": name,
            "namespace": "shop",
            "uid": f"uid-{name}",
            "annotations": {"deployment.kubernetes.io/revision": str(rev)},
            "creationTimestamp": ts(-60 * 24 * 30),
        },
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": image}]},
            },
        },
        "status": {
            "replicas": 2,
            "readyReplicas": 1,
            "updatedReplicas": 2,
            "availableReplicas": 1,
            "unavailableReplicas": 1,
            "conditions": [
                {
                    "type": "Available",
                    "status": "False",
                    "reason": "MinimumReplicasUnavailable",
                    "message": "Deployment does not have minimum availability.",
                    "lastUpdateTime": ts(3),
                    "lastTransitionTime": ts(3),
                }
            ],
        },
    }


def _node(name: str, memory_pressure: bool) -> dict[str, Any]:
    def cond(ctype: str, value: bool, reason: str) -> dict[str, Any]:
        return {
            "type": ctype,
            "status": "True" if value else "False",
            "reason": reason,
            "message": reason,
            "lastTransitionTime": ts(-5),
        }

    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {},
        "status": {
            "conditions": [
                cond(
                    "MemoryPressure",
                    memory_pressure,
                    "KubeletHasInsufficientMemory"
                    if memory_pressure
                    else "KubeletHasSufficientMemory",
                ),
                cond("DiskPressure", False, "KubeletHasNoDiskPressure"),
                cond("PIDPressure", False, "KubeletHasSufficientPID"),
                cond("Ready", True, "KubeletReady"),
            ],
            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": "3800m", "memory": "15Gi", "pods": "110"},
            "nodeInfo": {
                "kubeletVersion": "v1.31.2",
                "kubeProxyVersion": "v1.31.2",
                "architecture": "amd64",
                "operatingSystem": "linux",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
                "kernelVersion": "6.1.0-26-amd64",
                "containerRuntimeVersion": "containerd://1.7.22",
                "bootID": f"boot-{name}",
                "machineID": f"machine-{name}",
                "systemUUID": f"uuid-{name}",
            },
        },
    }


ORDER_PODS = ("order-service-7d9f8b6c4-x2x9k", "order-service-7d9f8b6c4-q8w7e")


def sample_objects() -> list[dict[str, Any]]:
    """The order-service incident as a cluster shows it (namespace ``shop``)."""
    return [
        _pod(
            ORDER_PODS[0],
            "order-service",
            "order-service-7d9f8b6c4",
            ready=True,
            restarts=3,
            last=("OOMKilled", 137),
        ),
        _pod(
            ORDER_PODS[1],
            "order-service",
            "order-service-7d9f8b6c4",
            ready=False,
            restarts=7,
            waiting="CrashLoopBackOff",
            last=("Error", 1),
            node="node-b",
        ),
        _pod(
            "payment-service-5c6d7e8f9-abcde",
            "payment-service",
            "payment-service-5c6d7e8f9",
            ready=True,
            image="registry.local/payment-service:2.1.0",
            containers=("app", "proxy"),
        ),
        _pod("batch-6b7c8d9e0-zzzzz", "batch", "batch-6b7c8d9e0", ready=True, ns="jobs"),
        _event(
            "ev-1",
            "Pod",
            ORDER_PODS[1],
            "BackOff",
            "Back-off restarting failed container app",
            "Warning",
            5.5,
            count=12,
        ),
        _event(
            "ev-2",
            "Pod",
            ORDER_PODS[1],
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            "Warning",
            4.0,
            count=30,
        ),
        _event(
            "ev-3",
            "Pod",
            ORDER_PODS[0],
            "Killing",
            "Container app exceeded its memory limit",
            "Warning",
            4.5,
        ),
        _event(
            "ev-4", "Pod", ORDER_PODS[0], "Pulled", "Container image already present", "Normal", 0.5
        ),
        _event(
            "ev-5",
            "Deployment",
            "order-service",
            "ScalingReplicaSet",
            "Scaled up replica set order-service-7d9f8b6c4 to 2",
            "Normal",
            0.2,
        ),
        _event("ev-6", "Pod", "batch-6b7c8d9e0-zzzzz", "Pulled", "pulled", "Normal", 1, ns="jobs"),
        _deployment("order-service", 3, "registry.local/order-service:1.8.0"),
        _deployment("payment-service", 1, "registry.local/payment-service:2.1.0"),
        _rs(
            "order-service-5f6b7c8d9",
            "order-service",
            1,
            "registry.local/order-service:1.7.2",
            -60 * 24 * 20,
            0,
        ),
        _rs(
            "order-service-6a7b8c9d0",
            "order-service",
            2,
            "registry.local/order-service:1.7.3",
            -60 * 24 * 3,
            0,
        ),
        _rs(
            "order-service-7d9f8b6c4",
            "order-service",
            3,
            "registry.local/order-service:1.8.0",
            0,
            2,
        ),
        # same labels, another owner: must not appear in order-service's history
        _rs(
            "order-service-canary-1a2b3c4d5",
            "order-service",
            9,
            "registry.local/order:canary",
            -30,
            1,
            owner="order-service-canary",
        ),
        _rs(
            "payment-service-5c6d7e8f9",
            "payment-service",
            1,
            "registry.local/payment-service:2.1.0",
            -60 * 24 * 30,
            1,
        ),
        _node("node-a", False),
        _node("node-b", True),
    ]


def sample_logs(
    now: datetime | None = None,
) -> dict[tuple[str, str, str], list[tuple[datetime, str]]]:
    """Container logs: 300 lines for order-service's first pod, the last 30 minutes."""
    now = now or datetime.now(UTC)
    lines = []
    for i in range(300):
        t = now - timedelta(seconds=(300 - i) * 6)
        msg = (
            f"ERROR PoolTimeout: could not acquire connection (attempt {i})"
            if i % 10 == 0
            else f"INFO GET /api/orders/{i} 200"
        )
        lines.append((t, f"{t.isoformat()} {msg}"))
    return {
        ("shop", ORDER_PODS[0], "app"): lines,
        ("shop", "payment-service-5c6d7e8f9-abcde", "proxy"): [(now, "proxy ready")],
    }
