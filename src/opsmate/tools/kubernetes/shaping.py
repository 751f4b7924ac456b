"""Compact views of Kubernetes objects, shared by the live tool and bundle replay.

Input is API-shaped dictionaries: what ``kubectl get -o json`` prints or what
``ApiClient.sanitize_for_serialization`` returns (camelCase keys). The snake_case
dictionaries of the client's ``to_dict()`` are accepted as well, and times may be
strings or ``datetime`` objects. Times come out as RFC 3339; pass ``tz`` to show them
in one offset (replay uses the bundle's, so pods, logs and metrics read alike).
Import these through :mod:`opsmate.tools.shaping`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from datetime import tzinfo
from typing import Any

from opsmate.tools.kubernetes.shaping_common import as_list as _list
from opsmate.tools.kubernetes.shaping_common import get as _g
from opsmate.tools.kubernetes.shaping_common import integer, k8s_ref, str_map, text
from opsmate.tools.kubernetes.shaping_common import time_text as _time
from opsmate.tools.kubernetes.shaping_pod import pod_summary
from opsmate.tools.kubernetes.shaping_template import template_changes

__all__ = [
    "event_summary",
    "k8s_ref",
    "matches_label_selector",
    "node_summary",
    "parse_label_selector",
    "pod_summary",
    "rollout_history",
]

REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
CHANGE_CAUSE_ANNOTATION = "kubernetes.io/change-cause"
_PRESSURE = {"MemoryPressure": "memory", "DiskPressure": "disk", "PIDPressure": "pid"}


def event_summary(ev: Mapping[str, Any], *, tz: tzinfo | None = None) -> dict[str, Any]:
    """A core/v1 Event or an events.k8s.io/v1 Event in one shape.

    ``{"type", "reason", "message", "object": {kind, name, namespace}, "count",
    "first_timestamp", "last_timestamp", "source", "namespace", "name"}``.
    """
    if not isinstance(ev, Mapping):
        ev = {}
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
        "type": text(_g(ev, "type")),
        "reason": text(_g(ev, "reason")),
        "message": text(message),
        "object": {
            "kind": text(_g(obj, "kind")),
            "name": text(_g(obj, "name")),
            "namespace": text(_g(obj, "namespace")),
        },
        "count": integer(count) or 1,
        "first_timestamp": _time(first, tz) or _time(_g(ev, "metadata", "creationTimestamp"), tz),
        "last_timestamp": _time(last, tz) or _time(_g(ev, "metadata", "creationTimestamp"), tz),
        "source": text(source),
        "namespace": text(_g(ev, "metadata", "namespace") or _g(obj, "namespace")),
        "name": text(_g(ev, "metadata", "name")),
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
                "replicaset": text(_g(rs, "metadata", "name")),
                "images": _images(rs),
                "created": _time(_g(rs, "metadata", "creationTimestamp"), tz),
                "change_cause": text(_annotation(rs, CHANGE_CAUSE_ANNOTATION)),
                "replicas": integer(_g(rs, "status", "replicas")) or 0,
                "ready_replicas": integer(_g(rs, "status", "readyReplicas")) or 0,
            }
        )
    by_rs = {id(r): rs for r, rs in zip(revisions, replicasets, strict=True)}
    revisions.sort(key=lambda r: (r["revision"] is None, r["revision"] or 0, r["created"] or ""))
    for prev, cur in itertools.pairwise(revisions):
        changes = template_changes(by_rs[id(prev)], by_rs[id(cur)])
        if changes:
            cur["changes"] = changes  # what this revision changed in the pod template
    numbered = [r["revision"] for r in revisions if r["revision"] is not None]
    if current is None and numbered:
        current = max(numbered)
    for r in revisions:
        r["current"] = r["revision"] is not None and r["revision"] == current
    out: dict[str, Any] = {"current_revision": current, "revisions": revisions}
    if deployment is not None:
        out.update(
            name=text(_g(deployment, "metadata", "name")),
            namespace=text(_g(deployment, "metadata", "namespace")),
            images=_images(deployment),
            replicas={
                "desired": integer(_g(deployment, "spec", "replicas")),
                "ready": integer(_g(deployment, "status", "readyReplicas")) or 0,
                "updated": integer(_g(deployment, "status", "updatedReplicas")) or 0,
                "available": integer(_g(deployment, "status", "availableReplicas")) or 0,
                "unavailable": integer(_g(deployment, "status", "unavailableReplicas")) or 0,
            },
            conditions=[
                {
                    "type": text(_g(c, "type")),
                    "status": text(_g(c, "status")),
                    "reason": text(_g(c, "reason")),
                    "message": text(_g(c, "message")),
                    "last_update": _time(
                        _g(c, "lastUpdateTime") or _g(c, "lastTransitionTime"), tz
                    ),
                }
                for c in _list(_g(deployment, "status", "conditions"))
                if isinstance(c, Mapping)
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
        if not isinstance(c, Mapping):
            continue
        ctype, status = text(_g(c, "type")), text(_g(c, "status"))
        conditions.append(
            {
                "type": ctype,
                "status": status,
                "reason": text(_g(c, "reason")),
                "message": text(_g(c, "message")),
                "last_transition_time": _time(_g(c, "lastTransitionTime"), tz),
            }
        )
        if ctype in _PRESSURE:
            pressure[_PRESSURE[ctype]] = status == "True"
        elif ctype == "Ready":
            ready = status == "True"
    return {
        "name": text(_g(node, "metadata", "name")),
        "ready": ready,
        "unschedulable": bool(_g(node, "spec", "unschedulable")),
        "pressure": pressure,
        "any_pressure": any(pressure.values()),
        "conditions": conditions,
        "taints": [
            f"{_g(t, 'key')}={_g(t, 'value') or ''}:{_g(t, 'effect')}"
            for t in _list(_g(node, "spec", "taints"))
            if isinstance(t, Mapping)
        ],
        "labels": str_map(_g(node, "metadata", "labels")),
        "capacity": str_map(_g(node, "status", "capacity")),
        "allocatable": str_map(_g(node, "status", "allocatable")),
        "kubelet_version": text(_g(node, "status", "nodeInfo", "kubeletVersion")),
        "addresses": [
            str(_g(a, "address"))
            for a in _list(_g(node, "status", "addresses"))
            if isinstance(a, Mapping) and _g(a, "address")
        ],
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
