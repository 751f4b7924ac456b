"""A protocol fixture for what ``kubectl apply --dry-run=client`` asks a Kubernetes API
server: API discovery and a GET of each object (not a mock of our code).

kubectl maps each manifest's ``apiVersion`` / ``kind`` to a REST resource through
discovery (``/api``, ``/apis``, ``/api/v1``, ``/apis/<group>/<version>``), then GETs the
object to decide between create and patch. This server answers discovery in the legacy
(non-aggregated) format with the resources a v1.31 API server lists for the groups below,
and answers every object GET with a ``404 NotFound`` ``Status`` (nothing exists yet), so
a client dry run reports ``created (dry run)`` for each object. It has no OpenAPI
document: kubectl's schema validation is off there (``--validate=false``); the manifests
test checks the fields against the Kubernetes API models instead. Any method but GET is
answered 405 and recorded, so a test can assert that kubectl wrote nothing.
"""

from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

# group/version -> [(resource, kind, namespaced, verbs)]
_RW = ["create", "delete", "get", "list", "patch", "update", "watch"]
RESOURCES: dict[str, list[tuple[str, str, bool]]] = {
    "v1": [
        ("namespaces", "Namespace", False),
        ("serviceaccounts", "ServiceAccount", True),
        ("configmaps", "ConfigMap", True),
        ("secrets", "Secret", True),
        ("services", "Service", True),
        ("persistentvolumeclaims", "PersistentVolumeClaim", True),
        ("pods", "Pod", True),
    ],
    "apps/v1": [
        ("deployments", "Deployment", True),
        ("statefulsets", "StatefulSet", True),
    ],
    "rbac.authorization.k8s.io/v1": [
        ("clusterroles", "ClusterRole", False),
        ("clusterrolebindings", "ClusterRoleBinding", False),
        ("roles", "Role", True),
        ("rolebindings", "RoleBinding", True),
    ],
    "policy/v1": [("poddisruptionbudgets", "PodDisruptionBudget", True)],
    "networking.k8s.io/v1": [("networkpolicies", "NetworkPolicy", True)],
}


def _resource_list(group_version: str) -> dict[str, Any]:
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": [
            {
                "name": name,
                "singularName": kind.lower(),
                "namespaced": namespaced,
                "kind": kind,
                "verbs": _RW,
            }
            for name, kind, namespaced in RESOURCES[group_version]
        ],
    }


def _group_list() -> dict[str, Any]:
    groups = []
    for gv in RESOURCES:
        if "/" not in gv:
            continue
        group, version = gv.split("/")
        entry = {"groupVersion": gv, "version": version}
        groups.append({"name": group, "versions": [entry], "preferredVersion": entry})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


class KubeDiscovery:
    """Serve on ``self.url`` while used as a context manager; ``requests`` records
    (method, path) of every request."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        fixture = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _send(self, status: int, body: dict[str, Any]) -> None:
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                with contextlib.suppress(OSError):
                    self.wfile.write(raw)

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0].rstrip("/")
                fixture.requests.append(("GET", path))
                if path == "/api":
                    self._send(200, {"kind": "APIVersions", "versions": ["v1"]})
                elif path == "/apis":
                    self._send(200, _group_list())
                elif path == "/api/v1":
                    self._send(200, _resource_list("v1"))
                elif path.startswith("/apis/") and path.count("/") == 3:
                    gv = path.removeprefix("/apis/")
                    if gv in RESOURCES:
                        self._send(200, _resource_list(gv))
                    else:
                        self._not_found(path)
                else:
                    self._not_found(path)

            def _not_found(self, path: str) -> None:
                self._send(
                    404,
                    {
                        "kind": "Status",
                        "apiVersion": "v1",
                        "status": "Failure",
                        "message": f"{path} not found",
                        "reason": "NotFound",
                        "code": 404,
                    },
                )

            def _refuse(self) -> None:
                fixture.requests.append((self.command, self.path))
                self._send(405, {"kind": "Status", "status": "Failure", "code": 405})

            do_POST = do_PUT = do_PATCH = do_DELETE = _refuse

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def kubeconfig(self) -> str:
        """A kubeconfig pointing kubectl at this server."""
        return json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "fixture", "cluster": {"server": self.url}}],
                "users": [{"name": "fixture", "user": {"token": "fixture-token"}}],
                "contexts": [
                    {"name": "fixture", "context": {"cluster": "fixture", "user": "fixture"}}
                ],
                "current-context": "fixture",
            }
        )
