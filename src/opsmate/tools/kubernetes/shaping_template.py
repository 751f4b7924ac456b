"""What changed between two pod templates (two revisions of a workload).

A rollout with "the same image as before" is a configuration change; saying which is
what an on-call engineer needs: ``container app: env OBJECT_STORE_BUCKET 'a' -> 'b'``,
``image x:1 -> x:2``, ``memory limit 512Mi -> 256Mi``, ``args ... -> ...``, a ConfigMap
or Secret reference that changed. Values from Secrets are never read; literal env values
are compared and shown (the executor redacts secret-looking ones), references by name
and key. Pure functions over API-shaped ReplicaSets / Deployments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opsmate.records.k8s import RESTARTED
from opsmate.tools.kubernetes.shaping_common import as_list, get, str_map, strings, text

MAX_CHANGES = 12
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"  # set by ``kubectl rollout restart``


def _env(c: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for e in as_list(get(c, "env")):
        name = text(get(e, "name"))
        if not name:
            continue
        if get(e, "value") is not None:
            out[name] = repr(str(get(e, "value")))
            continue
        src = get(e, "valueFrom")
        for kind, key in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
            ref = get(src, kind)
            if isinstance(ref, Mapping):
                out[name] = f"from {key} {text(get(ref, 'name'))}/{text(get(ref, 'key'))}"
        if name not in out and isinstance(src, Mapping):
            out[name] = "from " + ", ".join(sorted(str(k) for k in src))
    for ef in as_list(get(c, "envFrom")):
        for kind, key in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
            ref = get(ef, kind)
            if isinstance(ref, Mapping):
                out[f"<all of {key} {text(get(ref, 'name'))}>"] = "referenced"
    return out


def _containers(template_owner: Any) -> dict[str, dict[str, Any]]:
    spec = get(template_owner, "spec", "template", "spec")
    out: dict[str, dict[str, Any]] = {}
    for group in ("initContainers", "containers"):
        for c in as_list(get(spec, group)):
            name = text(get(c, "name"))
            if not name:
                continue
            res = get(c, "resources")
            out[name] = {
                "image": text(get(c, "image")),
                "env": _env(c),
                "command": " ".join(strings(get(c, "command"))),
                "args": " ".join(strings(get(c, "args"))),
                "ports": sorted(
                    str(get(p, "containerPort"))
                    for p in as_list(get(c, "ports"))
                    if get(p, "containerPort") is not None
                ),
                "limits": str_map(get(res, "limits")),
                "requests": str_map(get(res, "requests")),
            }
    return out


def template_changes(before: Any, after: Any) -> list[str]:
    """What changed in the pod template from ``before`` to ``after`` (API-shaped owners)."""
    a, b = _containers(before), _containers(after)
    out: list[str] = []
    for name in sorted(set(a) | set(b)):
        x, y = a.get(name), b.get(name)
        who = f"container {name}"
        if x is None or y is None:
            out.append(f"{who} {'added' if x is None else 'removed'}")
            continue
        if x["image"] != y["image"]:
            out.append(f"{who}: image {x['image']} -> {y['image']}")
        for key in sorted(set(x["env"]) | set(y["env"])):
            old, new = x["env"].get(key), y["env"].get(key)
            if old == new:
                continue
            if old is None:
                out.append(f"{who}: env {key} added ({new})")
            elif new is None:
                out.append(f"{who}: env {key} removed (was {old})")
            else:
                out.append(f"{who}: env {key} {old} -> {new}")
        if x["ports"] != y["ports"]:
            before, after = ", ".join(x["ports"]) or "none", ", ".join(y["ports"]) or "none"
            out.append(f"{who}: ports {before} -> {after}")
        for field in ("command", "args"):
            if x[field] != y[field]:
                out.append(f"{who}: {field} '{x[field][:80]}' -> '{y[field][:80]}'")
        for kind in ("limits", "requests"):
            for res in sorted(set(x[kind]) | set(y[kind])):
                old, new = x[kind].get(res), y[kind].get(res)
                if old != new:
                    out.append(f"{who}: {res} {kind[:-1]} {old or 'none'} -> {new or 'none'}")
    old = text(get(before, "spec", "template", "metadata", "annotations", RESTARTED_AT))
    new = text(get(after, "spec", "template", "metadata", "annotations", RESTARTED_AT))
    if new and new != old:
        out.append(f"{RESTARTED} ({RESTARTED_AT} {new})")
    return out[:MAX_CHANGES]
