"""Kubernetes tools replayed from a bundle's ``k8s/*.yaml`` objects.

Each function is ``(replay, args, ctx) -> ToolOutput``; :class:`~opsmate.tools.bundle.Bundle`
binds them to its :class:`~opsmate.tools.bundle_replay.Replay`. Views come from the
same shaping functions the live Kubernetes tool uses.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from opsmate.timeparse import parse_time
from opsmate.tools import schemas as s
from opsmate.tools.base import CallContext, ToolFailure, ToolOutput
from opsmate.tools.bundle_replay import Replay
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
    meta = obj["metadata"]
    return k8s_ref(meta.get("namespace"), str(obj["kind"]), str(meta["name"]))


def list_pods(r: Replay, args: s.ListPodsArgs, ctx: CallContext) -> ToolOutput:
    """Captured pods in the namespace(s), filtered by label selector."""
    if (bad := r.check_env(args.environment, ctx)) is not None:
        return bad
    namespaces = r.namespaces(args.namespace, ctx)
    try:
        pods = [
            p
            for p in r.objects("Pod", namespaces)
            if matches_label_selector(p["metadata"].get("labels"), args.label_selector)
        ]
    except ValueError as exc:
        raise ToolFailure("bad_request", f"argument 'label_selector': {exc}") from exc
    return ToolOutput(
        status="success" if pods else "no_data",
        data={"pods": [pod_summary(p, tz=r.tz) for p in pods], "count": len(pods)},
        scope=_scope(r, label_selector=args.label_selector, **_ns_scope(namespaces)),
        source_refs=[_ref(p) for p in pods],
    )


def get_events(r: Replay, args: s.GetEventsArgs, ctx: CallContext) -> ToolOutput:
    """Captured events (core/v1 and events.k8s.io/v1), newest first, optionally for one
    involved object (kind and / or name)."""
    if (bad := r.check_env(args.environment, ctx)) is not None:
        return bad
    namespaces = r.namespaces(args.namespace, ctx)
    picked: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for ev in r.objects("Event", namespaces):
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
    return any(
        o.get("kind") == kind and o.get("name") == name
        for o in rs["metadata"].get("ownerReferences") or []
    )


def _selected_by(rs: dict[str, Any], deployment: dict[str, Any]) -> bool:
    match = ((deployment.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    labels = rs["metadata"].get("labels") or {}
    return bool(match) and all(labels.get(k) == v for k, v in match.items())


def rollout_history(r: Replay, args: s.RolloutHistoryArgs, ctx: CallContext) -> ToolOutput:
    """A Deployment's revisions from its ReplicaSets (by ownerReferences, else by its
    selector's labels)."""
    if (bad := r.check_env(args.environment, ctx)) is not None:
        return bad
    namespaces = r.namespaces(args.namespace, ctx)
    deps = [d for d in r.objects("Deployment", namespaces) if d["metadata"]["name"] == args.name]
    dep = deps[0] if deps else None
    rs_all = r.objects("ReplicaSet", namespaces)
    if dep is not None:
        ns = dep["metadata"].get("namespace")
        rs_ns = [x for x in rs_all if x["metadata"].get("namespace") == ns]
        owned = [x for x in rs_ns if _owned_by(x, "Deployment", args.name)]
        replicasets = owned or [x for x in rs_ns if _selected_by(x, dep)]
    else:
        replicasets = [x for x in rs_all if _owned_by(x, "Deployment", args.name)]
        ns = replicasets[0]["metadata"].get("namespace") if replicasets else None
        replicasets = [x for x in replicasets if x["metadata"].get("namespace") == ns]
    scope = _scope(r, name=args.name, **_ns_scope([ns] if ns else namespaces))
    if dep is None and not replicasets:
        names = sorted({d["metadata"]["name"] for d in r.objects("Deployment", namespaces)})
        return ToolOutput(
            status="no_data",
            data={"message": f"no deployment named {args.name!r} captured", "deployments": names},
            scope=scope,
        )
    history = rollout_history_view(dep, replicasets, args.name, ns, r)
    refs = ([_ref(dep)] if dep is not None else []) + [_ref(x) for x in replicasets]
    if len(deps) > 1:
        scope["also_in_namespaces"] = [d["metadata"].get("namespace") for d in deps[1:]]
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
    nodes = r.objects("Node")
    if args.name:
        nodes = [n for n in nodes if n["metadata"]["name"] == args.name]
    scope = _scope(r, name=args.name)
    if not nodes:
        names = [n["metadata"]["name"] for n in r.objects("Node")]
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
