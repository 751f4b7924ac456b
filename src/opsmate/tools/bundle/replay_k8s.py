"""Kubernetes tools replayed from a bundle's ``k8s/*.yaml`` objects.

Each function is ``(replay, args, ctx) -> ToolOutput``; :class:`~opsmate.tools.bundle.Bundle`
binds them to its :class:`~opsmate.tools.bundle.replay.Replay`. Views come from the
same shaping functions the live Kubernetes tool uses, and an object with fields of the
wrong type (labels as a list, ``spec`` as a string) is shaped with those fields empty.

``list_objects`` / ``get_object`` answer for a kind only where the bundle holds objects
of it (for a namespaced kind: in the namespaces asked); elsewhere the answer is
``not_available`` naming the kinds the bundle does hold, never an empty list that would
read as proof that nothing exists.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from opsmate.timeparse import parse_time
from opsmate.tools import schemas as s
from opsmate.tools.base import CallContext, ToolFailure, ToolOutput
from opsmate.tools.bundle.replay import Replay, not_available
from opsmate.tools.k8s_kinds import KINDS, canonical_kind
from opsmate.tools.kubernetes.shaping_common import (
    name_matches,
    object_name,
    object_namespace,
    str_map,
    text,
)
from opsmate.tools.kubernetes.shaping_objects import shape_object
from opsmate.tools.shaping import (
    event_summary,
    k8s_ref,
    matches_label_selector,
    node_summary,
    pod_summary,
)
from opsmate.tools.shaping import rollout_history as shape_rollout

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _scope(r: Replay, **items: Any) -> dict[str, Any]:
    out = {"source": "bundle", "environment": r.env, "cluster": r.d.meta.cluster, **items}
    return {k: v for k, v in out.items() if v is not None}


def _ns_scope(namespaces: list[str] | None) -> dict[str, Any]:
    if namespaces is None:
        return {"namespaces": "all"}
    if len(namespaces) == 1:
        return {"namespace": namespaces[0]}
    return {"namespaces": namespaces}


def _ref(obj: dict[str, Any]) -> str:
    return k8s_ref(object_namespace(obj) or None, str(obj["kind"]), object_name(obj))


def _get(obj: Any, *keys: str) -> Any:
    for key in keys:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def _objects(r: Replay, kind: str, namespaces: list[str] | None = None) -> list[dict[str, Any]]:
    """Captured objects of ``kind`` (case-insensitive), optionally in ``namespaces``, sorted
    by namespace and name (as text: a hand-written bundle may hold numbers there)."""
    out = [
        o
        for o in r.d.objects
        if str(o.get("kind", "")).lower() == kind.lower()
        and (namespaces is None or object_namespace(o) in namespaces)
    ]
    return sorted(out, key=lambda o: (object_namespace(o), object_name(o)))


def list_pods(r: Replay, args: s.ListPodsArgs, ctx: CallContext) -> ToolOutput:
    """Captured pods in the namespace(s), filtered by label selector."""
    if (bad := r.check_env(args.environment, ctx)) is not None:
        return bad
    namespaces = r.namespaces(args.namespace, ctx)
    try:
        pods = [
            p
            for p in _objects(r, "Pod", namespaces)
            if matches_label_selector(str_map(_get(p, "metadata", "labels")), args.label_selector)
            and name_matches(text(_get(p, "metadata", "name")), args.name)
        ]
    except ValueError as exc:
        raise ToolFailure("bad_request", f"argument 'label_selector': {exc}") from exc
    return ToolOutput(
        status="success" if pods else "no_data",
        data={"pods": [pod_summary(p, tz=r.tz) for p in pods], "count": len(pods)},
        scope=_scope(
            r, label_selector=args.label_selector, name=args.name, **_ns_scope(namespaces)
        ),
        source_refs=[_ref(p) for p in pods],
    )


def get_events(r: Replay, args: s.GetEventsArgs, ctx: CallContext) -> ToolOutput:
    """Captured events (core/v1 and events.k8s.io/v1), newest first, optionally for one
    involved object (kind and / or name)."""
    if (bad := r.check_env(args.environment, ctx)) is not None:
        return bad
    namespaces = r.namespaces(args.namespace, ctx)
    picked: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for ev in _objects(r, "Event", namespaces):
        summary = event_summary(ev, tz=r.tz)
        obj = summary["object"]
        if args.kind and str(obj.get("kind") or "").lower() != args.kind.lower():
            continue
        if args.name and obj.get("name") != args.name:
            continue
        picked.append((ev, summary))
    picked.sort(key=lambda p: _when(p[1]["last_timestamp"]), reverse=True)
    events = [summary for _, summary in picked]
    return ToolOutput(
        status="success" if events else "no_data",
        data={
            "events": events,
            "count": len(events),
            "warnings": sum(1 for e in events if e["type"] == "Warning"),
        },
        scope=_scope(r, kind=args.kind, name=args.name, **_ns_scope(namespaces)),
        source_refs=[_ref(ev) for ev, _ in picked],
    )


def _when(text: str | None) -> datetime:
    try:
        return parse_time(text) if text else _EPOCH
    except ValueError:
        return _EPOCH


def _owned_by(rs: dict[str, Any], kind: str, name: str) -> bool:
    owners = _get(rs, "metadata", "ownerReferences")
    return any(
        isinstance(o, dict) and o.get("kind") == kind and o.get("name") == name
        for o in (owners if isinstance(owners, list) else [])
    )


def _selected_by(rs: dict[str, Any], deployment: dict[str, Any]) -> bool:
    match = str_map(_get(deployment, "spec", "selector", "matchLabels"))
    labels = str_map(_get(rs, "metadata", "labels"))
    return bool(match) and all(labels.get(k) == v for k, v in match.items())


def rollout_history(r: Replay, args: s.RolloutHistoryArgs, ctx: CallContext) -> ToolOutput:
    """A Deployment's revisions from its ReplicaSets (by ownerReferences, else by its
    selector's labels)."""
    if (bad := r.check_env(args.environment, ctx)) is not None:
        return bad
    namespaces = r.namespaces(args.namespace, ctx)
    deps = [d for d in _objects(r, "Deployment", namespaces) if object_name(d) == args.name]
    dep = deps[0] if deps else None
    rs_all = _objects(r, "ReplicaSet", namespaces)
    ns: str | None
    if dep is not None:
        ns = object_namespace(dep) or None
        rs_ns = [x for x in rs_all if (object_namespace(x) or None) == ns]
        owned = [x for x in rs_ns if _owned_by(x, "Deployment", args.name)]
        replicasets = owned or [x for x in rs_ns if _selected_by(x, dep)]
    else:
        replicasets = [x for x in rs_all if _owned_by(x, "Deployment", args.name)]
        ns = (object_namespace(replicasets[0]) or None) if replicasets else None
        replicasets = [x for x in replicasets if (object_namespace(x) or None) == ns]
    scope = _scope(r, name=args.name, **_ns_scope([ns] if ns else namespaces))
    if dep is None and not replicasets:
        names = sorted({object_name(d) for d in _objects(r, "Deployment", namespaces)})
        return ToolOutput(
            status="no_data",
            data={"message": f"no deployment named {args.name!r} captured", "deployments": names},
            scope=scope,
        )
    history = rollout_history_view(dep, replicasets, args.name, ns, r)
    refs = ([_ref(dep)] if dep is not None else []) + [_ref(x) for x in replicasets]
    if len(deps) > 1:
        scope["also_in_namespaces"] = [object_namespace(d) or None for d in deps[1:]]
    return ToolOutput(status="success", data=history, scope=scope, source_refs=refs)


def rollout_history_view(
    dep: dict[str, Any] | None,
    replicasets: list[dict[str, Any]],
    name: str,
    ns: str | None,
    r: Replay,
) -> dict[str, Any]:
    """:func:`shaping.rollout_history` with name / namespace filled when no Deployment."""
    out = shape_rollout(dep, replicasets, tz=r.tz)
    out.setdefault("name", name)
    out.setdefault("namespace", ns)
    return out


def node_conditions(r: Replay, args: s.NodeConditionsArgs, ctx: CallContext) -> ToolOutput:
    """Conditions, pressure flags and capacity of the captured nodes (or one node)."""
    if (bad := r.check_env(args.environment, ctx)) is not None:
        return bad
    nodes = _objects(r, "Node")
    if args.name:
        nodes = [n for n in nodes if object_name(n) == args.name]
    scope = _scope(r, name=args.name)
    if not nodes:
        names = [object_name(n) for n in _objects(r, "Node")]
        return ToolOutput(
            status="no_data",
            data={"nodes": [], "message": "no such node captured", "captured_nodes": names},
            scope=scope,
        )
    return ToolOutput(
        status="success",
        data={"nodes": [node_summary(n, tz=r.tz) for n in nodes], "count": len(nodes)},
        scope=scope,
        source_refs=[_ref(n) for n in nodes],
    )


# ----------------------------------------------------------------------------- other kinds


def _held(r: Replay) -> dict[str, set[str]]:
    """Allow-listed kinds the bundle holds, each with the namespaces holding it."""
    out: dict[str, set[str]] = {}
    for o in r.d.objects:
        kind = canonical_kind(str(o.get("kind", "")))
        if kind is not None:
            out.setdefault(kind, set()).add(object_namespace(o))
    return out


def _unavailable(r: Replay, kind: str, namespaces: list[str] | None) -> ToolOutput | None:
    """``not_available`` when the bundle holds no ``kind`` (in ``namespaces``), else None."""
    held = _held(r)
    where = held.get(kind, set())
    info = KINDS[kind]
    if where and (not info.namespaced or namespaces is None or where & set(namespaces)):
        return None
    kinds = sorted(held)
    if where:
        msg = (
            f"this bundle holds {kind} objects only in namespace(s) {', '.join(sorted(where))}, "
            f"not in {', '.join(namespaces or [])}"
        )
    else:
        msg = f"this bundle holds no {kind} objects; it holds: {', '.join(kinds) or 'none'}"
    return not_available(
        msg,
        {"kind": kind, "kinds_held": kinds, "namespaces_held": sorted(where)},
        environment=r.env,
        kind=kind,
    )


def list_objects(r: Replay, args: s.ListObjectsArgs, ctx: CallContext) -> ToolOutput:
    """Captured objects of one allow-listed kind, by namespace and label selector."""
    if (bad := r.check_env(args.environment, ctx)) is not None:
        return bad
    info = KINDS[args.kind]
    namespaces = r.namespaces(args.namespace, ctx) if info.namespaced else None
    if (missing := _unavailable(r, args.kind, namespaces)) is not None:
        return missing
    try:
        objs = [
            o
            for o in _objects(r, args.kind, namespaces)
            if matches_label_selector(str_map(_get(o, "metadata", "labels")), args.label_selector)
        ]
    except ValueError as exc:
        raise ToolFailure("bad_request", f"argument 'label_selector': {exc}") from exc
    ns_scope = _ns_scope(namespaces) if info.namespaced else {}
    return ToolOutput(
        status="success" if objs else "no_data",
        data={
            "kind": args.kind,
            "items": [shape_object(args.kind, o, tz=r.tz) for o in objs],
            "count": len(objs),
        },
        scope=_scope(r, kind=args.kind, label_selector=args.label_selector, **ns_scope),
        source_refs=[_ref(o) for o in objs],
    )


def get_object(r: Replay, args: s.GetObjectArgs, ctx: CallContext) -> ToolOutput:
    """One captured object by name; ``found: false`` when the bundle holds its kind (there)
    but not that object."""
    if (bad := r.check_env(args.environment, ctx)) is not None:
        return bad
    info = KINDS[args.kind]
    namespaces = r.namespaces(args.namespace, ctx) if info.namespaced else None
    if (missing := _unavailable(r, args.kind, namespaces)) is not None:
        return missing
    hits = [o for o in _objects(r, args.kind, namespaces) if object_name(o) == args.name]
    base = {"kind": args.kind, "name": args.name}
    ns_scope = _ns_scope(namespaces) if info.namespaced else {}
    if not hits:
        where = f" in {', '.join(namespaces)}" if namespaces else ""
        return ToolOutput(
            status="no_data",
            data={
                **base,
                "found": False,
                "items": [],
                "count": 0,
                "message": f"{args.kind} {args.name!r} does not exist{where}",
            },
            scope=_scope(r, kind=args.kind, name=args.name, **ns_scope),
        )
    obj = hits[0]
    if info.namespaced:
        ns_scope = {"namespace": object_namespace(obj)}
    return ToolOutput(
        status="success",
        data={**base, "found": True, "items": [shape_object(args.kind, obj, tz=r.tz)], "count": 1},
        scope=_scope(r, kind=args.kind, name=args.name, **ns_scope),
        source_refs=[_ref(obj)],
    )
