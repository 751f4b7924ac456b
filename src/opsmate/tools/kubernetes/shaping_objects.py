"""Records of the allow-listed kinds (:mod:`opsmate.records.k8s_objects`) from API objects.

``shape_object(kind, obj)`` is the one entry point, used by the live ``list_objects`` /
``get_object`` and by their bundle replay, so both answer alike. Shaping never raises:
a field of the wrong type becomes its empty value. Values that may be secret never
come out: a ConfigMap gives its keys, a Secret only its metadata, and no annotation is
copied (a ``last-applied-configuration`` annotation repeats a Secret's data).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from datetime import tzinfo
from typing import Any

from opsmate.loganalysis.signals import ADDRESS_SETTING, NOT_A_HOST
from opsmate.records.base import Record
from opsmate.records.k8s_objects import RECORD_TYPES
from opsmate.tools.kubernetes.shaping import node_summary
from opsmate.tools.kubernetes.shaping_certs import CERT_SHAPERS
from opsmate.tools.kubernetes.shaping_chaos import CHAOS_SHAPERS
from opsmate.tools.kubernetes.shaping_common import (
    annotation,
    as_list,
    as_map,
    base_fields,
    conditions,
    get,
    integer,
    is_default,
    meta,
    opt_selector,
    selector,
    str_map,
    strings,
    text,
    time_text,
)
from opsmate.tools.kubernetes.shaping_gateway import GATEWAY_SHAPERS
from opsmate.tools.kubernetes.shaping_pod import build_pod
from opsmate.tools.kubernetes.shaping_workloads import WORKLOAD_SHAPERS

INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"

Shaper = Callable[[Any, tzinfo | None], dict[str, Any]]


# ----------------------------------------------------------------------------- services


def _service(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    spec = get(obj, "spec")
    return {
        "type": text(get(spec, "type")) or "ClusterIP",
        "selector": str_map(get(spec, "selector")),
        "ports": [
            {
                "name": text(get(p, "name")),
                "port": integer(get(p, "port")),
                "target_port": text(get(p, "targetPort")),
                "protocol": text(get(p, "protocol")),
                "node_port": integer(get(p, "nodePort")),
            }
            for p in as_list(get(spec, "ports"))
            if isinstance(p, Mapping)
        ],
        "cluster_ip": text(get(spec, "clusterIP")),
        "external_name": text(get(spec, "externalName")),
        "internal_traffic_policy": text(get(spec, "internalTrafficPolicy")),
        "lb_addresses": [
            str(get(a, "ip") or get(a, "hostname"))
            for a in as_list(get(obj, "status", "loadBalancer", "ingress"))
            if get(a, "ip") or get(a, "hostname")
        ],
    }


def _address(a: Any) -> dict[str, Any]:
    ref = get(a, "targetRef")
    pod = text(get(ref, "name")) if text(get(ref, "kind")) == "Pod" else None
    ip = get(a, "ip")
    if ip is None and isinstance(get(a, "addresses"), list):
        ip = next(iter(get(a, "addresses")), None)
    return {"ip": text(ip), "pod": pod, "node": text(get(a, "nodeName"))}


def _endpoints(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    ready: list[dict[str, Any]] = []
    not_ready: list[dict[str, Any]] = []
    ports: list[str] = []
    for s in as_list(get(obj, "subsets")):
        ready += [_address(a) for a in as_list(get(s, "addresses")) if isinstance(a, Mapping)]
        not_ready += [
            _address(a) for a in as_list(get(s, "notReadyAddresses")) if isinstance(a, Mapping)
        ]
        ports += _ports(get(s, "ports"))
    return {
        "service": text(meta(obj, "name")),
        "ready": ready,
        "not_ready": not_ready,
        "ports": list(dict.fromkeys(ports)),
    }


def _ports(items: Any) -> list[str]:
    return [
        f"{text(get(p, 'port'))}/{text(get(p, 'protocol')) or 'TCP'}"
        for p in as_list(items)
        if isinstance(p, Mapping)
    ]


def _endpoint_slice(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    ready: list[dict[str, Any]] = []
    not_ready: list[dict[str, Any]] = []
    for e in as_list(get(obj, "endpoints")):
        if not isinstance(e, Mapping):
            continue
        flag = get(e, "conditions", "ready")
        (ready if flag is None or flag is True else not_ready).append(_address(e))
    labels = str_map(meta(obj, "labels"))
    return {
        "service": labels.get("kubernetes.io/service-name"),
        "ready": ready,
        "not_ready": not_ready,
        "ports": _ports(get(obj, "ports")),
    }


def _backend(b: Any, host: str | None = None, path: str | None = None) -> dict[str, Any]:
    svc = get(b, "service")
    port = get(svc, "port")
    res = get(b, "resource")
    out: dict[str, Any] = {
        "host": host,
        "path": path,
        "service": text(get(svc, "name")) or text(get(b, "serviceName")),
        "port": text(get(port, "number")) or text(get(port, "name")) or text(get(b, "servicePort")),
    }
    if isinstance(res, Mapping):
        out["resource"] = f"{text(get(res, 'kind'))}/{text(get(res, 'name'))}"
    return out


def _ingress(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    spec = get(obj, "spec")
    cls = text(get(spec, "ingressClassName"))
    source = "spec" if cls else None
    if not cls and (ann := annotation(obj, INGRESS_CLASS_ANNOTATION)):
        cls, source = ann, "annotation"
    rules = []
    for r in as_list(get(spec, "rules")):
        host = text(get(r, "host"))
        paths = as_list(get(r, "http", "paths"))
        rules += [
            _backend(get(p, "backend"), host, text(get(p, "path")))
            for p in paths
            if isinstance(p, Mapping)
        ]
        if not paths:
            rules.append({"host": host})
    default = get(spec, "defaultBackend") or get(spec, "backend")
    lb = as_list(get(obj, "status", "loadBalancer", "ingress"))
    notes = get(obj, "metadata", "annotations")
    proto = next(
        (
            f"{k}: {v}"
            for k, v in (notes.items() if isinstance(notes, Mapping) else ())
            if str(k).endswith(("/backend-protocol", "/secure-backends")) and v
        ),
        None,
    )
    return {
        "backend_protocol": proto,
        "class_name": cls,
        "class_source": source,
        "rules": rules,
        "default_backend": _backend(default) if isinstance(default, Mapping) else None,
        "tls_hosts": [str(h) for t in as_list(get(spec, "tls")) for h in as_list(get(t, "hosts"))],
        "tls_secrets": [s for t in as_list(get(spec, "tls")) if (s := text(get(t, "secretName")))],
        "addresses": [
            str(get(a, "ip") or get(a, "hostname"))
            for a in lb
            if get(a, "ip") or get(a, "hostname")
        ],
    }


def _ingress_class(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    return {"controller": text(get(obj, "spec", "controller")), "is_default": is_default(obj)}


# ----------------------------------------------------------------------------- network


def _policy_ports(items: Any) -> list[str]:
    out = []
    for p in as_list(items):
        if not isinstance(p, Mapping):
            continue
        proto = text(get(p, "protocol")) or "TCP"
        port = text(get(p, "port"))
        end = text(get(p, "endPort"))
        out.append(f"{proto}/{port}-{end}" if port and end else f"{proto}/{port or '*'}")
    return out


def _peer(p: Any) -> dict[str, Any]:
    block = get(p, "ipBlock")
    cidr = None
    if isinstance(block, Mapping):
        cidr = text(get(block, "cidr"))
        excepts = [str(x) for x in as_list(get(block, "except"))]
        if excepts:
            cidr = f"{cidr} except {', '.join(excepts)}"
    return {
        "pod_selector": opt_selector(get(p, "podSelector")),
        "namespace_selector": opt_selector(get(p, "namespaceSelector")),
        "ip_block": cidr,
    }


def _rules(items: Any, peers_key: str) -> list[dict[str, Any]]:
    return [
        {
            "peers": [_peer(p) for p in as_list(get(r, peers_key)) if isinstance(p, Mapping)],
            "ports": _policy_ports(get(r, "ports")),
        }
        for r in as_list(items)
        if isinstance(r, Mapping) or r is None
    ]


def _network_policy(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    spec = get(obj, "spec")
    types = [str(t) for t in as_list(get(spec, "policyTypes"))]
    if not types:  # the API server's default
        types = ["Ingress"] + (["Egress"] if get(spec, "egress") is not None else [])
    return {
        "pod_selector": selector(get(spec, "podSelector")),
        "policy_types": types,
        "ingress": _rules(get(spec, "ingress"), "from"),
        "egress": _rules(get(spec, "egress"), "to"),
    }


# ----------------------------------------------------------------------------- storage


def _pvc(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    spec, status = get(obj, "spec"), get(obj, "status")
    return {
        "phase": text(get(status, "phase")),
        "storage_class": text(get(spec, "storageClassName")),
        "volume_name": text(get(spec, "volumeName")),
        "requested": text(get(spec, "resources", "requests", "storage")),
        "capacity": text(get(status, "capacity", "storage")),
        "access_modes": [str(m) for m in as_list(get(spec, "accessModes"))],
        "conditions": conditions(obj, tz),
    }


def _pv(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    spec, status = get(obj, "spec"), get(obj, "status")
    claim = get(spec, "claimRef")
    return {
        "phase": text(get(status, "phase")),
        "storage_class": text(get(spec, "storageClassName")),
        "claim": f"{text(get(claim, 'namespace'))}/{text(get(claim, 'name'))}"
        if isinstance(claim, Mapping)
        else None,
        "capacity": text(get(spec, "capacity", "storage")),
        "reclaim_policy": text(get(spec, "persistentVolumeReclaimPolicy")),
        "reason": text(get(status, "reason")),
        "message": text(get(status, "message")),
        "node_affinity": as_map(get(spec, "nodeAffinity")),
    }


def _storage_class(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    return {
        "provisioner": text(get(obj, "provisioner")),
        "is_default": is_default(obj),
        "binding_mode": text(get(obj, "volumeBindingMode")),
        "reclaim_policy": text(get(obj, "reclaimPolicy")),
        "allow_expansion": bool(get(obj, "allowVolumeExpansion")),
    }


def _csi_node(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    limits: dict[str, int] = {}
    for d in as_list(get(obj, "spec", "drivers")):
        count = get(d, "allocatable", "count") if isinstance(d, Mapping) else None
        name = text(get(d, "name")) if isinstance(d, Mapping) else None
        if name and isinstance(count, int) and not isinstance(count, bool):
            limits[name] = count
    return {"attach_limits": limits}


def _volume_attachment(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    return {
        "attacher": text(get(obj, "spec", "attacher")),
        "node": text(get(obj, "spec", "nodeName")),
        "volume": text(get(obj, "spec", "source", "persistentVolumeName")),
        "attached": bool(get(obj, "status", "attached")),
        "error": text(get(obj, "status", "attachError", "message")),
    }


# ----------------------------------------------------------------------------- config


# a value of an address setting (``PULSAR_SERVICE_URL``, ``db.host``): a URL, ``host:port``,
# or a bare DNS name
_ADDR_VALUE = re.compile(
    r"^(?:[a-z][a-z0-9+.-]*://\S+|[a-z0-9][a-z0-9.-]*(?::\d{2,5})?(?:,[a-z0-9][a-z0-9.-]*"
    r"(?::\d{2,5})?)*)$",
    re.I,
)
_USERINFO = re.compile(r"://[^@/\s]+@")
MAX_ADDRESSES = 20


def config_addresses(data: Any) -> dict[str, str]:
    """The values of a ConfigMap's address settings (a URL, ``host:port``, a name), with any
    user and password in a URL masked: where the workloads that read it connect to."""
    out: dict[str, str] = {}
    if not isinstance(data, Mapping):
        return out
    for k, v in data.items():
        if not isinstance(k, str) or not isinstance(v, str):
            continue
        pairs = [(k, v)] if len(v) <= 300 and "\n" not in v.strip() else _file_settings(k, v)
        for key, raw in pairs:
            leaf = re.split(r"[._-]", key)[-1] if not ADDRESS_SETTING.search(key) else key
            value = raw.strip().strip("'\"")
            if value.lower() in NOT_A_HOST:
                continue
            if ADDRESS_SETTING.search(leaf) and _ADDR_VALUE.match(value):
                out[key] = _USERINFO.sub("://***@", value)
                if len(out) >= MAX_ADDRESSES:
                    return out
    return out


# ``  Target: k8s://shop/travel-rpc-svc:2003`` / ``db.host = pg`` in a config file a
# ConfigMap carries (YAML, properties, TOML, ini)
_FILE_SETTING = re.compile(r"^\s*-?\s*([A-Za-z][\w.-]*)\s*[:=]\s*(\S+)\s*$")
MAX_FILE_CHARS = 20000


def _file_settings(name: str, text: str) -> list[tuple[str, str]]:
    """``(file:key, value)`` for the one-value settings of a config file."""
    out: list[tuple[str, str]] = []
    for line in text[:MAX_FILE_CHARS].splitlines():
        m = _FILE_SETTING.match(line)
        if m and len(m.group(2)) <= 300:
            out.append((f"{name}:{m.group(1)}", m.group(2)))
    return out


def _config_map(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    keys = [*_keys(get(obj, "data")), *_keys(get(obj, "binaryData"))]
    out: dict[str, Any] = {"keys": sorted(set(keys))}
    addresses = config_addresses(get(obj, "data"))
    if addresses:
        out["addresses"] = addresses
    out.update(config_change(obj, tz))
    return out


def config_change(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    """When a ConfigMap last changed after it was created and by which client (its
    managedFields), and — when the last kubectl apply is recorded — which keys differ from
    it and how (a few changed lines, ``old -> new``)."""
    out: dict[str, Any] = {}
    created = text(get(obj, "metadata", "creationTimestamp"))
    updates = [
        m
        for m in as_list(get(obj, "metadata", "managedFields"))
        if isinstance(m, Mapping) and text(get(m, "time")) and text(get(m, "time")) != created
    ]
    if updates:
        last = max(updates, key=lambda m: str(get(m, "time")))
        out["changed_at"] = time_text(get(last, "time"), tz)
        out["changed_by"] = text(get(last, "manager"))
    applied = get(
        obj, "metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"
    )
    data = get(obj, "data")
    if isinstance(applied, str) and isinstance(data, Mapping):
        try:
            before = json.loads(applied).get("data") or {}
        except (ValueError, AttributeError):
            before = {}
        if isinstance(before, Mapping):
            changed = sorted(k for k in {*before, *data} if before.get(k) != data.get(k))
            if changed:
                out["changed_keys"] = changed[:10]
                out["changes"] = _value_diffs(before, data, changed)[:6]
    return out


def _json_diffs(a: Any, b: Any) -> list[str] | None:
    """``path: old -> new`` for the leaves that differ when both values are JSON documents
    (a feature-flag file: ``flags.newCheckout.defaultVariant: 'off' -> 'on'``)."""
    try:
        x, y = json.loads(a), json.loads(b)
    except (TypeError, ValueError):
        return None
    if not isinstance(x, dict | list) or not isinstance(y, dict | list):
        return None
    out: list[str] = []

    def walk(p: str, u: Any, v: Any) -> None:
        if len(out) >= 6:
            return
        if isinstance(u, dict) and isinstance(v, dict):
            for key in [*u, *[q for q in v if q not in u]]:
                walk(f"{p}.{key}" if p else str(key), u.get(key), v.get(key))
        elif u != v:
            out.append(f"{p}: {json.dumps(u)[:60]} -> {json.dumps(v)[:60]}")

    walk("", x, y)
    return out


def _value_diffs(before: Mapping[str, Any], after: Mapping[str, Any], keys: list[str]) -> list[str]:
    """``key: old line -> new line`` for the first lines that differ in each changed key."""
    out: list[str] = []
    for k in keys:
        structured = _json_diffs(before.get(k), after.get(k))
        if structured is not None:
            out += [f"{k}: {d}" for d in structured[:3]]
            continue
        old = str(before.get(k) if before.get(k) is not None else "").splitlines()
        new = str(after.get(k) if after.get(k) is not None else "").splitlines()
        gone = [ln.strip() for ln in old if ln not in new and ln.strip()]
        came = [ln.strip() for ln in new if ln not in old and ln.strip()]
        for a, b in zip(gone[:2], came[:2], strict=False):
            out.append(f"{k}: {a[:80]} -> {b[:80]}")
        if not gone and came:
            out.append(f"{k}: added {came[0][:80]}")
        elif gone and not came:
            out.append(f"{k}: removed {gone[0][:80]}")
        elif len(came) > len(gone):
            out.append(f"{k}: added {came[len(gone)][:80]}")
    return out


def _keys(value: Any) -> list[str]:
    return [str(k) for k in value] if isinstance(value, Mapping) else []


def _secret(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    return {}  # metadata only: never type, keys or data


def _service_account(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    auto = get(obj, "automountServiceAccountToken")
    return {
        "secrets": [str(get(s, "name")) for s in as_list(get(obj, "secrets")) if get(s, "name")],
        "image_pull_secrets": [
            str(get(s, "name")) for s in as_list(get(obj, "imagePullSecrets")) if get(s, "name")
        ],
        "automount_token": auto if isinstance(auto, bool) else None,
    }


def _namespace(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    return {"phase": text(get(obj, "status", "phase"))}


def _role(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    return {
        "rules": [
            {
                "api_groups": strings(get(r, "apiGroups")),
                "resources": strings(get(r, "resources")),
                "resource_names": strings(get(r, "resourceNames")),
                "verbs": strings(get(r, "verbs")),
                "non_resource_urls": strings(get(r, "nonResourceURLs")),
            }
            for r in as_list(get(obj, "rules"))
            if isinstance(r, Mapping)
        ]
    }


def _role_binding(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    ref = get(obj, "roleRef")
    return {
        "role_kind": text(get(ref, "kind")),
        "role_name": text(get(ref, "name")),
        "subjects": [
            {
                "kind": text(get(s, "kind")),
                "name": text(get(s, "name")),
                "namespace": text(get(s, "namespace")),
            }
            for s in as_list(get(obj, "subjects"))
            if isinstance(s, Mapping)
        ],
    }


SHAPERS: dict[str, Shaper] = {
    "Service": _service,
    "Endpoints": _endpoints,
    "EndpointSlice": _endpoint_slice,
    "Ingress": _ingress,
    "IngressClass": _ingress_class,
    "NetworkPolicy": _network_policy,
    "PersistentVolumeClaim": _pvc,
    "PersistentVolume": _pv,
    "StorageClass": _storage_class,
    "CSINode": _csi_node,
    "VolumeAttachment": _volume_attachment,
    "ConfigMap": _config_map,
    "Secret": _secret,
    "ServiceAccount": _service_account,
    "Namespace": _namespace,
    "Role": _role,
    "ClusterRole": _role,
    "RoleBinding": _role_binding,
    "ClusterRoleBinding": _role_binding,
    **WORKLOAD_SHAPERS,
    **GATEWAY_SHAPERS,
    **CHAOS_SHAPERS,
    **CERT_SHAPERS,
}


def shape_record(kind: str, obj: Any, *, tz: tzinfo | None = None) -> Record:
    """The record of one API object of ``kind`` (an allow-listed kind)."""
    if kind == "Pod":
        return build_pod(obj, tz=tz)
    if kind == "Node":
        return RECORD_TYPES["Node"].model_validate(
            node_summary(obj if isinstance(obj, Mapping) else {}, tz=tz)
        )
    fields = base_fields(obj, kind, tz)
    fields.update(SHAPERS[kind](obj, tz))
    return RECORD_TYPES[kind].model_validate(fields)


def shape_object(kind: str, obj: Any, *, tz: tzinfo | None = None) -> dict[str, Any]:
    """The JSON of :func:`shape_record` (what goes into the envelope's ``data.items``)."""
    if kind == "Pod":
        from opsmate.tools.kubernetes.shaping_pod import pod_summary

        return pod_summary(obj if isinstance(obj, Mapping) else {}, tz=tz)
    out = shape_record(kind, obj, tz=tz).dump()
    out.setdefault("kind", kind)
    return out
