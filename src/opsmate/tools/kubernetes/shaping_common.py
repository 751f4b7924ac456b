"""Tolerant accessors for API-shaped Kubernetes objects, shared by the shaping modules.

Objects come from an API server, a bundle written by hand or a newer cluster: any field
may be missing or of the wrong type (labels as a list, ``spec`` as a string). These
helpers never raise: a walk through something that is not a mapping gives None, a list
that is not a list gives ``[]``, a map that is not a map gives ``{}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, tzinfo
from typing import Any

from opsmate.timeparse import format_time, parse_time


def k8s_ref(namespace: str | None, kind: str, name: str) -> str:
    """The source reference of a Kubernetes object: ``k8s://<namespace>/<kind>/<name>``;
    cluster-scoped objects (Node, Namespace, ...) use ``_cluster`` as namespace."""
    return f"k8s://{namespace or '_cluster'}/{kind}/{name}"


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def get(d: Any, *keys: str) -> Any:
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


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_map(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def str_map(value: Any) -> dict[str, str]:
    """A mapping of text (labels, selectors, resource maps); anything else is ``{}``."""
    if not isinstance(value, Mapping):
        return {}
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def text(value: Any) -> str | None:
    """Text of a scalar (numbers as text), None for anything else."""
    if value is None or isinstance(value, dict | list):
        return None
    return str(value)


def integer(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return None


def time_text(value: Any, tz: tzinfo | None = None) -> str | None:
    """An API time (string or datetime) as RFC 3339 (in ``tz`` if given), None when absent."""
    if value in (None, ""):
        return None
    if isinstance(value, dict | list):
        return None
    try:
        dt = parse_time(value if isinstance(value, datetime) else str(value))
    except (ValueError, TypeError, OverflowError):
        return str(value)
    return format_time(dt.astimezone(tz) if tz is not None else dt)


def meta(obj: Any, key: str) -> Any:
    return get(obj, "metadata", key)


def owner_text(obj: Any) -> str | None:
    """``Kind/name`` of the first owner reference (the controller's when marked)."""
    owners = [o for o in as_list(meta(obj, "ownerReferences")) if isinstance(o, Mapping)]
    if not owners:
        return None
    first = next((o for o in owners if o.get("controller")), owners[0])
    kind, name = text(get(first, "kind")), text(get(first, "name"))
    return f"{kind}/{name}" if kind and name else None


def base_fields(obj: Any, kind: str, tz: tzinfo | None) -> dict[str, Any]:
    """``kind``, ``name``, ``namespace``, ``labels``, ``created``, ``owner`` of any object."""
    return {
        "kind": kind,
        "name": text(meta(obj, "name")),
        "namespace": text(meta(obj, "namespace")),
        "labels": str_map(meta(obj, "labels")),
        "created": time_text(meta(obj, "creationTimestamp"), tz),
        "owner": owner_text(obj),
    }


def conditions(obj: Any, tz: tzinfo | None) -> list[dict[str, Any]]:
    """``status.conditions`` as Condition dicts (type, status, reason, message, time)."""
    out = []
    for c in as_list(get(obj, "status", "conditions")):
        if not isinstance(c, Mapping):
            continue
        out.append(
            {
                "type": text(get(c, "type")),
                "status": text(get(c, "status")),
                "reason": text(get(c, "reason")),
                "message": text(get(c, "message")),
                "last_transition_time": time_text(
                    get(c, "lastTransitionTime") or get(c, "lastUpdateTime"), tz
                ),
            }
        )
    return out


def object_name(obj: Any) -> str:
    """``metadata.name`` as text (empty when missing): a safe sort key."""
    return text(meta(obj, "name")) or ""


def object_namespace(obj: Any) -> str:
    return text(meta(obj, "namespace")) or ""


DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
    "ingressclass.kubernetes.io/is-default-class",
)


def annotation(obj: Any, key: str) -> str | None:
    ann = meta(obj, "annotations")
    return text(ann.get(key)) if isinstance(ann, Mapping) else None


def is_default(obj: Any) -> bool:
    return any((annotation(obj, k) or "").lower() == "true" for k in DEFAULT_CLASS_ANNOTATIONS)


def selector(value: Any) -> dict[str, Any]:
    """A metav1 LabelSelector as the LabelSelector record's fields."""
    labels = str_map(get(value, "matchLabels"))
    return {
        "everything": (not labels and not as_list(get(value, "matchExpressions"))) or None,
        "match_labels": labels,
        "match_expressions": [
            {
                "key": text(get(r, "key")),
                "operator": text(get(r, "operator")),
                "values": [str(v) for v in as_list(get(r, "values"))],
            }
            for r in as_list(get(value, "matchExpressions"))
            if isinstance(r, Mapping)
        ],
    }


def opt_selector(value: Any) -> dict[str, Any] | None:
    return selector(value) if isinstance(value, Mapping) else None


def strings(value: Any) -> list[str]:
    return [str(v) for v in as_list(value) if v is not None]


def name_matches(name: str | None, wanted: str | None) -> bool:
    """Whether an object called ``name`` is ``wanted`` or one of its children
    (``web-7d9f8c6b5-x2x1q`` for ``web``); no ``wanted``: everything."""
    if not wanted:
        return True
    return bool(name) and (name == wanted or str(name).startswith(wanted + "-"))
