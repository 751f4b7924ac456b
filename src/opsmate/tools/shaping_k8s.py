"""Compact views of Kubernetes objects, shared by the live tool and bundle replay.

Input is API-shaped dictionaries: what ``kubectl get -o json`` prints or what
``ApiClient.sanitize_for_serialization`` returns (camelCase keys). The snake_case
dictionaries of the client's ``to_dict()`` are accepted as well, and times may be
strings or ``datetime`` objects. Times come out as RFC 3339; pass ``tz`` to show them
in one offset (replay uses the bundle's, so pods, logs and metrics read alike).
Import these through :mod:`opsmate.tools.shaping`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, tzinfo
from typing import Any

from opsmate.timeparse import format_time, parse_time

REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
CHANGE_CAUSE_ANNOTATION = "kubernetes.io/change-cause"
_PRESSURE = {"MemoryPressure": "memory", "DiskPressure": "disk", "PIDPressure": "pid"}


def k8s_ref(namespace: str | None, kind: str, name: str) -> str:
    """The source reference of a Kubernetes object: ``k8s://<namespace>/<kind>/<name>``;
    cluster-scoped objects (Node, Namespace, ...) use ``_cluster`` as namespace."""
    return f"k8s://{namespace or '_cluster'}/{kind}/{name}"


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _g(d: Any, *keys: str) -> Any:
    """Walk ``keys`` through nested mappings, accepting camelCase or snake_case keys."""
    cur = d
    for key in keys:
        if not isinstance(cur, Mapping):
            return None
        if key in cur:
            cur = cur[key]
        else:
            alt = _snake(key)
            if alt not in cur:
                return None
            cur = cur[alt]
    return cur


def _time(value: Any, tz: tzinfo | None = None) -> str | None:
    """An API time (string or datetime) as RFC 3339 (in ``tz`` if given), None when absent."""
    if value in (None, ""):
        return None
    try:
        dt = parse_time(value if isinstance(value, datetime) else str(value))
    except ValueError:
        return str(value)
    return format_time(dt.astimezone(tz) if tz is not None else dt)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _container_state(state: Any, tz: tzinfo | None) -> dict[str, Any]:
    """``{"state": running|waiting|terminated|unknown, ...details}`` of a container state."""
    if not isinstance(state, Mapping):
        return {"state": "unknown"}
    for name in ("running", "waiting", "terminated"):
        detail = state.get(name)
        if detail:
            out: dict[str, Any] = {"state": name}
            if name == "running":
                out["started_at"] = _time(_g(detail, "startedAt"), tz)
            else:
                out["reason"] = _g(detail, "reason")
                if _g(detail, "message"):
                    out["message"] = str(_g(detail, "message"))[:300]
            if name == "terminated":
                out["exit_code"] = _g(detail, "exitCode")
                out["finished_at"] = _time(_g(detail, "finishedAt"), tz)
            return out
    return {"state": "unknown"}


def pod_summary(pod: Mapping[str, Any], *, tz: tzinfo | None = None) -> dict[str, Any]:
    """Name, namespace, phase, ready ("1/2"), restarts, node, start time and containers.

    Each container carries its state (with reason), restart count, image and its
    last termination (reason, exit code, finished at) when it restarted.
    """
    statuses = {_g(cs, "name"): cs for cs in _list(_g(pod, "status", "containerStatuses"))}
    containers: list[dict[str, Any]] = []
    ready = restarts = 0
    specs = _list(_g(pod, "spec", "containers")) or [{"name": n} for n in statuses]
    for spec in specs:
        name = _g(spec, "name")
        cs = statuses.get(name) or {}
        c: dict[str, Any] = {
            "name": name,
            "image": _g(cs, "image") or _g(spec, "image"),
            "ready": bool(_g(cs, "ready")),
            "restarts": int(_g(cs, "restartCount") or 0),
        }
        c.update(_container_state(_g(cs, "state"), tz))
        last = _g(cs, "lastState", "terminated")
        if last:
            c["last_termination"] = {
                "reason": _g(last, "reason"),
                "exit_code": _g(last, "exitCode"),
                "finished_at": _time(_g(last, "finishedAt"), tz),
            }
        ready += int(c["ready"])
        restarts += c["restarts"]
        containers.append(c)
    owners = _list(_g(pod, "metadata", "ownerReferences"))
    out: dict[str, Any] = {
        "name": _g(pod, "metadata", "name"),
        "namespace": _g(pod, "metadata", "namespace"),
        "phase": _g(pod, "status", "phase"),
        "ready": f"{ready}/{len(containers)}",
        "restarts": restarts,
        "node": _g(pod, "spec", "nodeName"),
        "start_time": _time(_g(pod, "status", "startTime"), tz),
        "labels": dict(_g(pod, "metadata", "labels") or {}),
        "containers": containers,
    }
    if owners:
        out["owner"] = f"{_g(owners[0], 'kind')}/{_g(owners[0], 'name')}"
    reason = _g(pod, "status", "reason")
    if reason:
        out["reason"] = reason
        out["message"] = _g(pod, "status", "message")
    return out


def event_summary(ev: Mapping[str, Any], *, tz: tzinfo | None = None) -> dict[str, Any]:
    """A core/v1 Event or an events.k8s.io/v1 Event in one shape.

    ``{"type", "reason", "message", "object": {kind, name, namespace}, "count",
    "first_timestamp", "last_timestamp", "source", "namespace", "name"}``.
    """
    new_api = str(ev.get("apiVersion", "")).startswith("events.k8s.io") or (
        "regarding" in ev or "note" in ev
    )
    if new_api:
        obj = _g(ev, "regarding") or {}
        message = _g(ev, "note")
        series = _g(ev, "series") or {}
        count = _g(series, "count") or _g(ev, "deprecatedCount") or 1
        first = _g(ev, "deprecatedFirstTimestamp") or _g(ev, "eventTime")
        last = (
            _g(series, "lastObservedTime")
            or _g(ev, "deprecatedLastTimestamp")
            or _g(ev, "eventTime")
        )
        source = _g(ev, "reportingController") or _g(ev, "deprecatedSource", "component")
    else:
        obj = _g(ev, "involvedObject") or {}
        message = _g(ev, "message")
        count = _g(ev, "count") or _g(ev, "series", "count") or 1
        first = _g(ev, "firstTimestamp") or _g(ev, "eventTime")
        last = _g(ev, "lastTimestamp") or _g(ev, "series", "lastObservedTime") or first
        source = _g(ev, "source", "component") or _g(ev, "reportingComponent")
    return {
        "type": _g(ev, "type"),
        "reason": _g(ev, "reason"),
        "message": message,
        "object": {
            "kind": _g(obj, "kind"),
            "name": _g(obj, "name"),
            "namespace": _g(obj, "namespace"),
        },
        "count": int(count),
        "first_timestamp": _time(first, tz) or _time(_g(ev, "metadata", "creationTimestamp"), tz),
        "last_timestamp": _time(last, tz) or _time(_g(ev, "metadata", "creationTimestamp"), tz),
        "source": source,
        "namespace": _g(ev, "metadata", "namespace") or _g(obj, "namespace"),
        "name": _g(ev, "metadata", "name"),
    }


def _revision(obj: Any) -> int | None:
    raw = _g(obj, "metadata", "annotations", REVISION_ANNOTATION)
    if raw is None:
        ann = _g(obj, "metadata", "annotations")
        raw = ann.get(REVISION_ANNOTATION) if isinstance(ann, Mapping) else None
    try:
        return int(raw) if raw is not None else None
    except (TypeError, ValueError):
        return None


def _annotation(obj: Any, key: str) -> Any:
    ann = _g(obj, "metadata", "annotations")
    return ann.get(key) if isinstance(ann, Mapping) else None


def _images(template_owner: Any) -> list[str]:
    return [
        str(_g(c, "image"))
        for c in _list(_g(template_owner, "spec", "template", "spec", "containers"))
        if _g(c, "image")
    ]


def rollout_history(
    deployment: Mapping[str, Any] | None,
    replicasets: Sequence[Mapping[str, Any]],
    *,
    tz: tzinfo | None = None,
) -> dict[str, Any]:
    """Revisions of a Deployment from its ReplicaSets, oldest first.

    Each revision: number (annotation ``deployment.kubernetes.io/revision``),
    ReplicaSet name, images, creation time, change cause, replicas and whether it
    is the current one (the Deployment's own revision annotation, else the
    highest revision). With a Deployment, also its desired / ready / updated
    replicas and its conditions.
    """
    current = _revision(deployment) if deployment is not None else None
    revisions: list[dict[str, Any]] = []
    for rs in replicasets:
        revisions.append(
            {
                "revision": _revision(rs),
                "replicaset": _g(rs, "metadata", "name"),
                "images": _images(rs),
                "created": _time(_g(rs, "metadata", "creationTimestamp"), tz),
                "change_cause": _annotation(rs, CHANGE_CAUSE_ANNOTATION),
                "replicas": int(_g(rs, "status", "replicas") or 0),
                "ready_replicas": int(_g(rs, "status", "readyReplicas") or 0),
            }
        )
    revisions.sort(key=lambda r: (r["revision"] is None, r["revision"] or 0, r["created"] or ""))
    numbered = [r["revision"] for r in revisions if r["revision"] is not None]
    if current is None and numbered:
        current = max(numbered)
    for r in revisions:
        r["current"] = r["revision"] is not None and r["revision"] == current
    out: dict[str, Any] = {"current_revision": current, "revisions": revisions}
    if deployment is not None:
        out.update(
            name=_g(deployment, "metadata", "name"),
            namespace=_g(deployment, "metadata", "namespace"),
            images=_images(deployment),
            replicas={
                "desired": _g(deployment, "spec", "replicas"),
                "ready": int(_g(deployment, "status", "readyReplicas") or 0),
                "updated": int(_g(deployment, "status", "updatedReplicas") or 0),
                "available": int(_g(deployment, "status", "availableReplicas") or 0),
                "unavailable": int(_g(deployment, "status", "unavailableReplicas") or 0),
            },
            conditions=[
                {
                    "type": _g(c, "type"),
                    "status": _g(c, "status"),
                    "reason": _g(c, "reason"),
                    "message": _g(c, "message"),
                    "last_update": _time(
                        _g(c, "lastUpdateTime") or _g(c, "lastTransitionTime"), tz
                    ),
                }
                for c in _list(_g(deployment, "status", "conditions"))
            ],
        )
    return out


def node_summary(node: Mapping[str, Any], *, tz: tzinfo | None = None) -> dict[str, Any]:
    """Node conditions with status / reason / message / last transition, pressure flags,
    readiness, schedulability, taints, capacity and allocatable."""
    conditions = []
    pressure = {"memory": False, "disk": False, "pid": False}
    ready: bool | None = None
    for c in _list(_g(node, "status", "conditions")):
        ctype, status = _g(c, "type"), _g(c, "status")
        conditions.append(
            {
                "type": ctype,
                "status": status,
                "reason": _g(c, "reason"),
                "message": _g(c, "message"),
                "last_transition_time": _time(_g(c, "lastTransitionTime"), tz),
            }
        )
        if ctype in _PRESSURE:
            pressure[_PRESSURE[ctype]] = status == "True"
        elif ctype == "Ready":
            ready = status == "True"
    return {
        "name": _g(node, "metadata", "name"),
        "ready": ready,
        "unschedulable": bool(_g(node, "spec", "unschedulable")),
        "pressure": pressure,
        "any_pressure": any(pressure.values()),
        "conditions": conditions,
        "taints": [
            f"{_g(t, 'key')}={_g(t, 'value') or ''}:{_g(t, 'effect')}"
            for t in _list(_g(node, "spec", "taints"))
        ],
        "capacity": dict(_g(node, "status", "capacity") or {}),
        "allocatable": dict(_g(node, "status", "allocatable") or {}),
        "kubelet_version": _g(node, "status", "nodeInfo", "kubeletVersion"),
    }


# --------------------------------------------------------------------------- label selectors

_SET_EXPR = re.compile(r"^\s*([A-Za-z0-9_./-]+)\s+(in|notin)\s*\(([^)]*)\)\s*$")
_EQ_EXPR = re.compile(r"^\s*([A-Za-z0-9_./-]+)\s*(==|=|!=)\s*([A-Za-z0-9_.-]*)\s*$")
_EXISTS_EXPR = re.compile(r"^\s*(!?)\s*([A-Za-z0-9_./-]+)\s*$")


def _split_requirements(selector: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in selector:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p for p in (s.strip() for s in parts) if p]


def parse_label_selector(selector: str) -> list[tuple[str, str, frozenset[str]]]:
    """Parse a label selector into ``(key, op, values)`` requirements.

    Ops: ``=`` (also ``==``), ``!=``, ``in``, ``notin``, ``exists``, ``!exists``.
    Raises ``ValueError`` naming the requirement that is not understood.
    """
    reqs: list[tuple[str, str, frozenset[str]]] = []
    for part in _split_requirements(selector or ""):
        if m := _SET_EXPR.match(part):
            values = frozenset(v.strip() for v in m.group(3).split(",") if v.strip())
            reqs.append((m.group(1), m.group(2), values))
        elif m := _EQ_EXPR.match(part):
            op = "=" if m.group(2) in ("=", "==") else "!="
            reqs.append((m.group(1), op, frozenset([m.group(3)])))
        elif m := _EXISTS_EXPR.match(part):
            reqs.append((m.group(2), "!exists" if m.group(1) else "exists", frozenset()))
        else:
            raise ValueError(f"label selector requirement not understood: {part!r}")
    return reqs


def matches_label_selector(labels: Mapping[str, Any] | None, selector: str | None) -> bool:
    """Whether ``labels`` satisfy a Kubernetes label selector (empty selector: everything).

    Equality-based (``a=b``, ``a==b``, ``c!=d``) and set-based (``env in (a,b)``,
    ``env notin (a)``, ``key``, ``!key``) requirements, comma-separated, all must hold.
    As in Kubernetes, ``!=`` and ``notin`` match objects without the key.
    """
    labels = labels or {}
    for key, op, values in parse_label_selector(selector or ""):
        present = key in labels
        value = str(labels[key]) if present else None
        if op == "exists":
            ok = present
        elif op == "!exists":
            ok = not present
        elif op in ("=", "in"):
            ok = present and value in values
        else:  # "!=", "notin"
            ok = not present or value not in values
        if not ok:
            return False
    return True
