"""What exists on the live sources, read once before the first question is taken apart.

A bundle tells intake which services, namespaces and objects exist (its objects, its log
records), so "why is checkout failing" finds ``checkout`` and a name that does not exist is
not made the subject. Live, :func:`live_inventory` gives a session the same knowledge: it
lists the workloads, Services, Ingresses, Jobs and pods of the configured namespaces
(every namespace when none is configured) through the executor (read-only, audited, the
whole read bounded by the seconds the session gives it, so a slow API server delays the
investigation by no more) and fills the :class:`Sources` fields a bundle
fills: ``known_services`` (workload and Service names, and an ``app`` label carried by at
most one of them), ``known_objects``, ``known_namespaces``, ``namespace`` (when everything
lives in one) and ``ingress_backends``. A kind that cannot be listed is skipped (the
investigation names the source if it is down); without Kubernetes nothing is read.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from opsmate.records.k8s_objects import Ingress
from opsmate.records.payloads import ObjectsPayload

# ``sources`` below is an :class:`opsmate.agent.session.sources.Sources` (which imports
# this module: named, not imported)
Sources = Any

KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Service", "Ingress", "Job", "CronJob", "Pod")
_WORKLOADS = ("Deployment", "StatefulSet", "Service", "DaemonSet")
_PLACED = ("Pod", "Deployment", "Service", "StatefulSet", "Job")  # where an app lives


def live_inventory(sources: Sources) -> Callable[[str | None, float], None] | None:
    """A function ``(environment, seconds)`` filling ``sources`` from the cluster of an
    environment (once), within ``seconds`` of wall-clock time (a slow API server leaves it
    incomplete, never marked down for it); None when no source can list objects."""
    registry = sources.executor.registry
    if "list_objects" not in registry:
        return None
    done: set[str] = set()

    def read(env: str | None, seconds: float) -> None:
        key = env or ""
        if key in done:
            return
        done.add(key)
        executor = sources.executor
        before = executor.deadline
        executor.deadline = time.monotonic() + max(seconds, 0.1)
        items: list[dict[str, Any]] = []
        try:
            for kind in KINDS:
                args: dict[str, Any] = {"kind": kind}
                if env:
                    args["environment"] = env
                result = executor.call("list_objects", args)
                if result.status not in ("success", "partial"):
                    code = result.error.code if result.error is not None else ""
                    if code in ("unreachable", "timeout", "interrupted", "auth"):
                        break  # down, slow or stopped: the investigation says which
                    continue
                items += _shaped(result.full().payload_as(ObjectsPayload), kind)
        finally:
            executor.deadline = before
        fill(sources, items)

    return read


def _shaped(listed: ObjectsPayload | None, kind: str) -> list[dict[str, Any]]:
    """The objects of a ``list_objects`` answer: kind, name, namespace, labels (and the
    Services an Ingress routes to)."""
    out: list[dict[str, Any]] = []
    for rec in listed.items if listed is not None else []:
        name = getattr(rec, "name", None)
        if not isinstance(name, str) or not name:
            continue
        out.append({
            "kind": listed.kind if listed is not None and listed.kind else kind,
            "name": name,
            "namespace": getattr(rec, "namespace", None),
            "labels": dict(getattr(rec, "labels", None) or {}),
            "backends": rec.services() if isinstance(rec, Ingress) else [],
        })  # fmt: skip
    return out


def fill(sources: Sources, items: list[dict[str, Any]]) -> None:
    """Add what ``items`` (kind, name, namespace, labels, backends) say exists."""
    names = {str(o["name"]).lower() for o in items}
    sources.known_objects = sorted(set(sources.known_objects) | names)
    namespaces = {str(o["namespace"]) for o in items if o.get("namespace")}
    sources.known_namespaces = sorted(set(sources.known_namespaces) | namespaces)
    placed = {str(o["namespace"]) for o in items if o.get("namespace") and o["kind"] in _PLACED}
    if sources.namespace is None and len(placed) == 1:
        sources.namespace = next(iter(placed))
    services = {str(o["name"]) for o in items if o["kind"] in _WORKLOADS}
    owners: dict[str, set[str]] = {}  # app label -> the workloads and Services carrying it
    for o in items:
        labels = o.get("labels") if isinstance(o.get("labels"), dict) else {}
        app = labels.get("app") if labels else None
        if isinstance(app, str) and app:
            group = owners.setdefault(app, set())
            if o["kind"] in _WORKLOADS:
                group.add(str(o["name"]))
    # an app label several workloads share names the application, not one of its services
    services |= {app for app, who in owners.items() if len(who - {app}) <= 1}
    sources.known_services = sorted(set(sources.known_services) | services)
    for o in items:
        if o["kind"] == "Ingress" and o.get("backends"):
            sources.ingress_backends.setdefault(str(o["name"]).lower(), list(o["backends"]))
