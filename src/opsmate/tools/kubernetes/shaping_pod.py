"""The pod, whole: :class:`~opsmate.records.k8s.Pod` built from an API-shaped pod.

``pod_summary`` carries, besides phase, readiness and restarts, every container and init
container with its image, command and args, state and last state (reason, message,
exit code), resources, probes, env (each variable's source; values of Secrets never,
literals whose name says secret neither), envFrom, mounts and ports; and the pod's
service account, node selector, affinity, tolerations, volumes (with the ConfigMap,
Secret or claim each refers to), owner and conditions. The same function serves the
live tool and bundle replay. ``pod_template`` reads a workload's pod template the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import tzinfo
from typing import Any

from opsmate.records.k8s import Pod, toleration_text
from opsmate.tools.kubernetes.shaping_common import (
    as_list,
    as_map,
    conditions,
    get,
    integer,
    meta,
    owner_text,
    str_map,
    text,
    time_text,
)

MESSAGE_CHARS = 300  # a waiting / terminated message is cut here
LAST_MESSAGE_CHARS = 1000  # a last termination message (the container's last words)
LITERAL_CHARS = 200  # a literal env value is cut here
_SECRETISH = re.compile(
    r"pass(word|wd)?|pwd|secret|token|api[-_]?key|private[-_]?key|credential|auth|cookie"
    r"|session[-_]?key|access[-_]?key|signing",
    re.I,
)
# keys every pod / container / termination dict had before the records (kept for callers)
_POD_KEYS = ("name", "namespace", "phase", "ready", "restarts", "node", "start_time", "labels")
_CONTAINER_KEYS = ("name", "image", "ready", "restarts", "state")
_STATE_KEYS = {
    "running": ("started_at",),
    "waiting": ("reason",),
    "terminated": ("reason", "exit_code", "finished_at"),
}
_TERMINATION_KEYS = ("reason", "exit_code", "finished_at")


def _clip(value: Any, limit: int) -> str | None:
    s = text(value)
    if s is None:
        return None
    return s if len(s) <= limit else s[:limit] + "…"


def _state(state: Any, tz: tzinfo | None) -> dict[str, Any]:
    """``{"state": running|waiting|terminated|unknown, ...details}`` of a container state."""
    if not isinstance(state, Mapping):
        return {"state": "unknown"}
    for name in ("running", "waiting", "terminated"):
        detail = state.get(name)
        if detail and isinstance(detail, Mapping):
            out: dict[str, Any] = {"state": name}
            if name == "running":
                out["started_at"] = time_text(get(detail, "startedAt"), tz)
            else:
                out["reason"] = text(get(detail, "reason"))
                out["message"] = _clip(get(detail, "message"), MESSAGE_CHARS)
            if name == "terminated":
                out["exit_code"] = integer(get(detail, "exitCode"))
                out["finished_at"] = time_text(get(detail, "finishedAt"), tz)
            return out
    return {"state": "unknown"}


def _termination(last: Any, tz: tzinfo | None) -> dict[str, Any] | None:
    if not isinstance(last, Mapping) or not last:
        return None
    return {
        "reason": text(get(last, "reason")),
        "exit_code": integer(get(last, "exitCode")),
        "signal": integer(get(last, "signal")),
        "message": _clip(get(last, "message"), LAST_MESSAGE_CHARS),
        "started_at": time_text(get(last, "startedAt"), tz),
        "finished_at": time_text(get(last, "finishedAt"), tz),
    }


def _probe(p: Any) -> dict[str, Any] | None:
    if not isinstance(p, Mapping):
        return None
    out: dict[str, Any] = {
        "initial_delay_seconds": integer(get(p, "initialDelaySeconds")),
        "period_seconds": integer(get(p, "periodSeconds")),
        "timeout_seconds": integer(get(p, "timeoutSeconds")),
        "failure_threshold": integer(get(p, "failureThreshold")),
    }
    if isinstance(h := get(p, "httpGet"), Mapping):
        scheme = (text(get(h, "scheme")) or "HTTP").lower()
        host = text(get(h, "host")) or ""
        out.update(
            type="http",
            target=f"GET {scheme}://{host}:{text(get(h, 'port'))}{text(get(h, 'path')) or '/'}",
        )
    elif isinstance(t := get(p, "tcpSocket"), Mapping):
        out.update(type="tcp", target=f"tcp {text(get(t, 'host')) or ''}:{text(get(t, 'port'))}")
    elif isinstance(e := get(p, "exec"), Mapping):
        cmd = " ".join(str(x) for x in as_list(get(e, "command")))
        out.update(type="exec", target=f"exec {_clip(cmd, 200)}")
    elif isinstance(g := get(p, "grpc"), Mapping):
        out.update(type="grpc", target=f"grpc :{text(get(g, 'port'))}")
    return out


def _env(items: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for e in as_list(items):
        name = text(get(e, "name"))
        if not name:
            continue
        src = get(e, "valueFrom")
        if isinstance(src, Mapping):
            if isinstance(ref := get(src, "configMapKeyRef"), Mapping):
                source = "configmap"
            elif isinstance(ref := get(src, "secretKeyRef"), Mapping):
                source = "secret"
            elif isinstance(ref := get(src, "fieldRef"), Mapping):
                out.append({"name": name, "source": "field", "value": text(get(ref, "fieldPath"))})
                continue
            elif isinstance(ref := get(src, "resourceFieldRef"), Mapping):
                value = text(get(ref, "resource"))
                out.append({"name": name, "source": "resource", "value": value})
                continue
            else:
                out.append({"name": name, "source": "unknown"})
                continue
            out.append(
                {
                    "name": name,
                    "source": source,
                    "ref_name": text(get(ref, "name")),
                    "ref_key": text(get(ref, "key")),
                    "optional": bool(get(ref, "optional")),
                }
            )
        elif _SECRETISH.search(name):
            out.append({"name": name, "source": "literal", "value_hidden": True})
        else:
            out.append(
                {"name": name, "source": "literal", "value": _clip(get(e, "value"), LITERAL_CHARS)}
            )
    return out


def _env_from(items: Any) -> list[dict[str, Any]]:
    out = []
    for e in as_list(items):
        for key, source in (("configMapRef", "configmap"), ("secretRef", "secret")):
            ref = get(e, key)
            if isinstance(ref, Mapping):
                out.append(
                    {
                        "source": source,
                        "name": text(get(ref, "name")),
                        "prefix": text(get(e, "prefix")),
                        "optional": bool(get(ref, "optional")),
                    }
                )
    return out


def _container(spec: Any, status: Any, init: bool, tz: tzinfo | None) -> dict[str, Any]:
    c: dict[str, Any] = {
        "name": text(get(spec, "name")) or text(get(status, "name")),
        "image": text(get(status, "image")) or text(get(spec, "image")),
        "init": init,
        "command": [str(x) for x in as_list(get(spec, "command"))],
        "args": [str(x) for x in as_list(get(spec, "args"))],
        "ready": bool(get(status, "ready")),
        "started": bool(get(status, "started")),
        "restarts": integer(get(status, "restartCount")) or 0,
    }
    c.update(_state(get(status, "state"), tz))
    last = _termination(get(status, "lastState", "terminated"), tz)
    if last:
        c["last_termination"] = last
    res = get(spec, "resources")
    if isinstance(res, Mapping):
        c["resources"] = {
            "requests": str_map(get(res, "requests")),
            "limits": str_map(get(res, "limits")),
        }
    for key, field in (
        ("livenessProbe", "liveness"),
        ("readinessProbe", "readiness"),
        ("startupProbe", "startup"),
    ):
        c[field] = _probe(get(spec, key))
    c["env"] = _env(get(spec, "env"))
    c["env_from"] = _env_from(get(spec, "envFrom"))
    c["mounts"] = [
        {
            "name": text(get(m, "name")),
            "mount_path": text(get(m, "mountPath")),
            "read_only": bool(get(m, "readOnly")),
            "sub_path": text(get(m, "subPath")),
        }
        for m in as_list(get(spec, "volumeMounts"))
        if isinstance(m, Mapping)
    ]
    c["ports"] = [
        (f"{text(get(p, 'name'))}:" if get(p, "name") else "")
        + f"{text(get(p, 'containerPort'))}/{text(get(p, 'protocol')) or 'TCP'}"
        for p in as_list(get(spec, "ports"))
        if isinstance(p, Mapping) and get(p, "containerPort") is not None
    ]
    return c


def _items_keys(src: Any) -> list[str]:
    return [str(get(i, "key")) for i in as_list(get(src, "items")) if get(i, "key")]


def _volumes(items: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for v in as_list(items):
        if not isinstance(v, Mapping):
            continue
        name = text(get(v, "name"))
        if isinstance(cm := get(v, "configMap"), Mapping):
            out.append(
                {
                    "name": name,
                    "type": "configMap",
                    "ref_name": text(get(cm, "name")),
                    "optional": bool(get(cm, "optional")),
                    "keys": _items_keys(cm),
                }
            )
        elif isinstance(sec := get(v, "secret"), Mapping):
            out.append(
                {
                    "name": name,
                    "type": "secret",
                    "ref_name": text(get(sec, "secretName")),
                    "optional": bool(get(sec, "optional")),
                    "keys": _items_keys(sec),
                }
            )
        elif isinstance(pvc := get(v, "persistentVolumeClaim"), Mapping):
            out.append(
                {
                    "name": name,
                    "type": "persistentVolumeClaim",
                    "ref_name": text(get(pvc, "claimName")),
                }
            )
        elif isinstance(proj := get(v, "projected"), Mapping):
            out += _projected(name, proj)
        else:
            kinds = [k for k in v if k != "name"]
            out.append({"name": name, "type": str(kinds[0]) if kinds else None})
    return out


def _projected(name: str | None, proj: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A projected volume's ConfigMaps and Secrets (the token volume's CA bundle left out)."""
    out = []
    for s in as_list(get(proj, "sources")):
        for key, vtype in (("configMap", "configMap"), ("secret", "secret")):
            ref = get(s, key)
            if isinstance(ref, Mapping) and text(get(ref, "name")) != "kube-root-ca.crt":
                out.append(
                    {
                        "name": name,
                        "type": vtype,
                        "ref_name": text(get(ref, "name")),
                        "optional": bool(get(ref, "optional")),
                        "keys": _items_keys(ref),
                    }
                )
    return out or [{"name": name, "type": "projected"}]


def _tolerations(items: Any) -> list[str]:
    return [
        toleration_text(
            text(get(t, "key")),
            text(get(t, "operator")),
            text(get(t, "value")),
            text(get(t, "effect")),
        )
        for t in as_list(items)
        if isinstance(t, Mapping)
    ]


def build_pod(pod: Any, *, tz: tzinfo | None = None) -> Pod:
    """The :class:`Pod` record of an API-shaped pod (any malformed part left empty)."""
    spec, status = get(pod, "spec"), get(pod, "status")
    statuses = {text(get(cs, "name")): cs for cs in as_list(get(status, "containerStatuses"))}
    init_st = {text(get(cs, "name")): cs for cs in as_list(get(status, "initContainerStatuses"))}
    specs = [s for s in as_list(get(spec, "containers")) if isinstance(s, Mapping)]
    specs = specs or [{"name": n} for n in statuses if n]
    containers = [_container(s, statuses.get(text(get(s, "name"))) or {}, False, tz) for s in specs]
    init = [
        _container(s, init_st.get(text(get(s, "name"))) or {}, True, tz)
        for s in as_list(get(spec, "initContainers"))
        if isinstance(s, Mapping)
    ]
    ready = sum(1 for c in containers if c["ready"])
    fields: dict[str, Any] = {
        "name": text(meta(pod, "name")),
        "namespace": text(meta(pod, "namespace")),
        "phase": text(get(status, "phase")),
        "ready": f"{ready}/{len(containers)}",
        "restarts": sum(c["restarts"] for c in containers),
        "node": text(get(spec, "nodeName")),
        "ip": text(get(status, "podIP")),
        "host_ip": text(get(status, "hostIP")),
        "start_time": time_text(get(status, "startTime"), tz),
        "created": time_text(meta(pod, "creationTimestamp"), tz),
        "labels": str_map(meta(pod, "labels")),
        "owner": owner_text(pod),
        "reason": text(get(status, "reason")),
        "message": _clip(get(status, "message"), MESSAGE_CHARS) if get(status, "reason") else None,
        "containers": containers,
        "init_containers": init,
        "conditions": conditions(pod, tz),
        "service_account": text(get(spec, "serviceAccountName") or get(spec, "serviceAccount")),
        "node_selector": str_map(get(spec, "nodeSelector")),
        "affinity": as_map(get(spec, "affinity")),
        "tolerations": _tolerations(get(spec, "tolerations")),
        # the node labels a hard topology spread needs (a node without one is filtered out)
        "spread_keys": [
            str(get(c, "topologyKey"))
            for c in as_list(get(spec, "topologySpreadConstraints"))
            if get(c, "topologyKey") and get(c, "whenUnsatisfiable") != "ScheduleAnyway"
        ],
        "volumes": _volumes(get(spec, "volumes")),
        "qos_class": text(get(status, "qosClass")),
        "priority_class": text(get(spec, "priorityClassName")),
        "priority": integer(get(spec, "priority")),
        "image_pull_secrets": [
            str(get(s, "name")) for s in as_list(get(spec, "imagePullSecrets")) if get(s, "name")
        ],
        "restart_policy": text(get(spec, "restartPolicy")),
        "limit_ranger": text(get(meta(pod, "annotations") or {}, "kubernetes.io/limit-ranger")),
    }
    return Pod.model_validate(fields)


def pod_summary(pod: Mapping[str, Any], *, tz: tzinfo | None = None) -> dict[str, Any]:
    """The pod, whole, as the JSON of :class:`~opsmate.records.k8s.Pod` (see the module
    docstring). Keys the summary always had (name, namespace, phase, ready, restarts,
    node, start_time, labels; each container's name, image, ready, restarts, state and
    its state's details) are present even when empty."""
    out = build_pod(pod, tz=tz).dump()
    for key in _POD_KEYS:
        out.setdefault(key, {} if key == "labels" else None)
    out.setdefault("containers", [])
    for c in [*out["containers"], *out.get("init_containers", [])]:
        for key in _CONTAINER_KEYS:
            c.setdefault(key, None)
        for key in _STATE_KEYS.get(str(c.get("state")), ()):
            c.setdefault(key, None)
        if "last_termination" in c:
            for key in _TERMINATION_KEYS:
                c["last_termination"].setdefault(key, None)
    return out


def pod_template(template: Any, namespace: str | None, *, tz: tzinfo | None = None) -> Pod | None:
    """A workload's pod template (``spec.template``) as a :class:`Pod` without status."""
    if not isinstance(template, Mapping):
        return None
    obj = {"metadata": as_map(get(template, "metadata")), "spec": get(template, "spec")}
    pod = build_pod(obj, tz=tz)
    if pod.namespace is None:
        pod.namespace = namespace
    return pod
