"""Fault-injection experiments (Chaos Mesh kinds, LitmusChaos ChaosEngine) to the fields of
:class:`~opsmate.records.k8s_chaos.FaultExperiment`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import tzinfo
from typing import Any

from opsmate.records.k8s_chaos import CHAOS_MESH_KINDS
from opsmate.tools.kubernetes.shaping_common import as_list, conditions, get, str_map, text

# the settings that say how hard an action hits, by where Chaos Mesh keeps them
_PARAM_PATHS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("loss", ("loss", "loss")),
    ("latency", ("delay", "latency")),
    ("jitter", ("delay", "jitter")),
    ("corrupt", ("corrupt", "corrupt")),
    ("duplicate", ("duplicate", "duplicate")),
    ("rate", ("bandwidth", "rate")),
    ("delay", ("delay",)),
    ("errno", ("errno",)),
    ("percent", ("percent",)),
    ("path", ("path",)),
    ("volume", ("volumePath",)),
    ("time_offset", ("timeOffset",)),
    ("patterns", ("patterns",)),
    ("abort", ("abort",)),
    ("code", ("replace", "code")),
    ("port", ("port",)),
    ("class", ("class",)),
    ("method", ("method",)),
    ("exception", ("exception",)),
    ("container", ("containerNames",)),
)


def _flat(value: Any) -> str | None:
    if isinstance(value, list):
        parts = [str(v) for v in value if v is not None and not isinstance(v, Mapping)]
        return ", ".join(parts) or None
    if value is None or isinstance(value, Mapping):
        return None
    return str(value)


def _selector(sel: Any) -> tuple[list[str], dict[str, str]]:
    ns = [str(n) for n in as_list(get(sel, "namespaces")) if n]
    labels = str_map(get(sel, "labelSelectors"))
    for pods in (get(sel, "pods"),):  # {namespace: [pod names]}
        if isinstance(pods, Mapping):
            ns += [str(k) for k in pods if str(k) not in ns]
    return ns, labels


def _applied_pods(obj: Any) -> list[str]:
    out: list[str] = []
    for rec in as_list(get(obj, "status", "experiment", "containerRecords")):
        rid = (text(get(rec, "id")) or "").split("/")  # namespace/pod[/container]
        pod = rid[1] if len(rid) > 1 else rid[0]
        if pod and pod not in out:
            out.append(pod)
    return out


def _state(obj: Any) -> str | None:
    conds = {
        text(get(c, "type")): text(get(c, "status"))
        for c in as_list(get(obj, "status", "conditions"))
    }
    if conds.get("Paused") == "True":
        return "paused"
    if conds.get("AllRecovered") == "True":
        return "recovered"
    if conds.get("AllInjected") == "True":
        return "injected"
    desired = text(get(obj, "status", "experiment", "desiredPhase"))
    return "stopped" if desired == "Stop" else None


def chaos_mesh(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    spec = get(obj, "spec")
    params: dict[str, str] = {}
    for name, path in _PARAM_PATHS:
        v = _flat(get(spec, *path))
        if v and name not in params:
            params[name] = v
    stressors = get(spec, "stressors")
    action = text(get(spec, "action"))
    if isinstance(stressors, Mapping):  # StressChaos: {cpu: {workers, load}, memory: {size}}
        kinds = [str(k) for k in stressors if isinstance(stressors.get(k), Mapping)]
        action = action or (" and ".join(kinds) + " stress" if kinds else "stress")
        for k in kinds:
            for key in ("load", "size", "workers"):
                if (v := _flat(get(stressors, k, key))) is not None:
                    params[f"{k}_{key}"] = v
    if not action and get(spec, "timeOffset"):
        action = "time offset"
    if not action and get(spec, "failKernRequest"):
        action = "kernel fault"
    if not action and params.get("abort") in ("True", "true"):
        action = "abort"
    ns, labels = _selector(get(spec, "selector"))
    _, target = _selector(get(spec, "target", "selector"))
    return {
        "tool": "Chaos Mesh",
        "action": action,
        "params": params,
        "mode": text(get(spec, "mode")),
        "direction": text(get(spec, "direction")),
        "duration": text(get(spec, "duration")),
        "namespaces": ns,
        "selector": labels,
        "target": target,
        "pods": _applied_pods(obj),
        "state": _state(obj),
        "conditions": conditions(obj, tz),
    }


def chaos_engine(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    spec = get(obj, "spec")
    names = [text(get(e, "name")) for e in as_list(get(spec, "experiments"))]
    label = text(get(spec, "appinfo", "applabel")) or ""
    selector = dict([label.split("=", 1)]) if "=" in label else {}
    engine = text(get(spec, "engineState"))
    status = text(get(obj, "status", "engineStatus"))
    return {
        "tool": "LitmusChaos",
        "action": ", ".join(n for n in names if n) or None,
        "namespaces": [n for n in [text(get(spec, "appinfo", "appns"))] if n],
        "selector": selector,
        "state": "stopped" if engine == "stop" else status,
        "conditions": conditions(obj, tz),
    }


CHAOS_SHAPERS = {**{k: chaos_mesh for k in CHAOS_MESH_KINDS}, "ChaosEngine": chaos_engine}
