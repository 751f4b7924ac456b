"""Gateway API objects (GatewayClass, Gateway, HTTPRoute) to their records' fields."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import tzinfo
from typing import Any

from opsmate.tools.kubernetes.shaping_common import as_list, conditions, get, str_map, text


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def gateway_class(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    return {
        "controller": text(get(obj, "spec", "controllerName")),
        "conditions": conditions(obj, tz),
    }


def gateway(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    listeners = []
    for item in as_list(get(obj, "spec", "listeners")):
        if not isinstance(item, Mapping):
            continue
        certs = as_list(get(item, "tls", "certificateRefs"))
        listeners.append(
            {
                "name": text(get(item, "name")),
                "port": _int(get(item, "port")),
                "protocol": text(get(item, "protocol")),
                "hostname": text(get(item, "hostname")),
                "tls_secrets": [text(get(c, "name")) for c in certs if text(get(c, "name"))],
                # which namespaces' routes may attach (Same when unset, All, Selector)
                "allowed_from": text(get(item, "allowedRoutes", "namespaces", "from")) or "Same",
                "allowed_labels": str_map(
                    get(item, "allowedRoutes", "namespaces", "selector", "matchLabels")
                ),
            }
        )
    addresses = [text(get(a, "value")) for a in as_list(get(obj, "status", "addresses"))]
    return {
        "class_name": text(get(obj, "spec", "gatewayClassName")),
        "listeners": listeners,
        "addresses": [a for a in addresses if a],
        "conditions": conditions(obj, tz),
    }


def _ref(item: Any, default_kind: str) -> dict[str, Any] | None:
    if not isinstance(item, Mapping):
        return None
    return {
        "kind": text(get(item, "kind")) or default_kind,
        "name": text(get(item, "name")),
        "namespace": text(get(item, "namespace")),
        "port": _int(get(item, "port")),
    }


def http_route(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    parents = [_ref(p, "Gateway") for p in as_list(get(obj, "spec", "parentRefs"))]
    backends = [
        _ref(b, "Service")
        for rule in as_list(get(obj, "spec", "rules"))
        for b in as_list(get(rule, "backendRefs"))
    ]
    status = []
    for p in as_list(get(obj, "status", "parents")):
        if isinstance(p, Mapping):
            status.append(
                {
                    "parent": text(get(p, "parentRef", "name")),
                    "conditions": conditions({"status": {"conditions": get(p, "conditions")}}, tz),
                }
            )
    return {
        "hostnames": [text(h) for h in as_list(get(obj, "spec", "hostnames")) if text(h)],
        "parents": [p for p in parents if p],
        "backends": [b for b in backends if b],
        "parent_status": status,
    }


GATEWAY_SHAPERS = {"GatewayClass": gateway_class, "Gateway": gateway, "HTTPRoute": http_route}
