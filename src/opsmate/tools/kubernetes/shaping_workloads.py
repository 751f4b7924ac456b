"""Records of quotas, LimitRanges, HPAs, PDBs, Jobs, CronJobs, workloads and admission
webhooks from API-shaped objects (the limits and workload half of
:mod:`opsmate.tools.kubernetes.shaping_objects`, whose ``shape_object`` is the entry point).
Shaping never raises: a field of the wrong type becomes its empty value; a workload's pod
template is read as a :class:`~opsmate.records.k8s.Pod` without status.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import tzinfo
from typing import Any

from opsmate.tools.kubernetes.shaping_common import (
    annotation,
    as_list,
    conditions,
    get,
    integer,
    meta,
    selector,
    str_map,
    strings,
    text,
    time_text,
)
from opsmate.tools.kubernetes.shaping_pod import pod_template

Shaper = Callable[[Any, tzinfo | None], dict[str, Any]]


# ----------------------------------------------------------------------------- limits


def _quota(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    return {
        "hard": str_map(get(obj, "status", "hard")) or str_map(get(obj, "spec", "hard")),
        "used": str_map(get(obj, "status", "used")),
        "scopes": strings(get(obj, "spec", "scopes")),
    }


def _limit_range(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    return {
        "limits": [
            {
                "type": text(get(i, "type")),
                "max": str_map(get(i, "max")),
                "min": str_map(get(i, "min")),
                "default": str_map(get(i, "default")),
                "default_request": str_map(get(i, "defaultRequest")),
                "max_limit_request_ratio": str_map(get(i, "maxLimitRequestRatio")),
            }
            for i in as_list(get(obj, "spec", "limits"))
            if isinstance(i, Mapping)
        ]
    }


def _metric(m: Any) -> str | None:
    """``cpu utilization 80%`` / ``memory average 500Mi`` / ``pods requests_per_second 10``."""
    mtype = text(get(m, "type"))
    if not mtype:
        return None
    body = get(m, mtype[0].lower() + mtype[1:]) or {}
    name = text(get(body, "name")) or text(get(body, "metric", "name")) or mtype
    target = get(body, "target") or get(body, "current") or {}
    if (v := get(target, "averageUtilization")) is not None:
        return f"{name} utilization {v}%"
    if (v := get(target, "averageValue")) is not None:
        return f"{name} average {v}"
    if (v := get(target, "value")) is not None:
        return f"{name} value {v}"
    return name


def _hpa(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    spec, status = get(obj, "spec"), get(obj, "status")
    ref = get(spec, "scaleTargetRef")
    metrics = [m for m in (_metric(x) for x in as_list(get(spec, "metrics"))) if m]
    if not metrics and (cpu := get(spec, "targetCPUUtilizationPercentage")) is not None:
        metrics = [f"cpu utilization {cpu}%"]  # autoscaling/v1 shape
    return {
        "target": {
            "kind": text(get(ref, "kind")),
            "name": text(get(ref, "name")),
            "namespace": text(meta(obj, "namespace")),
        },
        "min_replicas": integer(get(spec, "minReplicas")),
        "max_replicas": integer(get(spec, "maxReplicas")),
        "current_replicas": integer(get(status, "currentReplicas")),
        "desired_replicas": integer(get(status, "desiredReplicas")),
        "metrics": metrics,
        "current_metrics": [
            m for m in (_metric(x) for x in as_list(get(status, "currentMetrics"))) if m
        ],
        "conditions": conditions(obj, tz),
        "last_scale_time": time_text(get(status, "lastScaleTime"), tz),
    }


def _pdb(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    spec, status = get(obj, "spec"), get(obj, "status")
    return {
        "min_available": text(get(spec, "minAvailable")),
        "max_unavailable": text(get(spec, "maxUnavailable")),
        "selector": selector(get(spec, "selector")),
        "current_healthy": integer(get(status, "currentHealthy")),
        "desired_healthy": integer(get(status, "desiredHealthy")),
        "disruptions_allowed": integer(get(status, "disruptionsAllowed")),
        "expected_pods": integer(get(status, "expectedPods")),
        "conditions": conditions(obj, tz),
    }


# ----------------------------------------------------------------------------- workloads


def _template(obj: Any, tz: tzinfo | None, *path: str) -> dict[str, Any] | None:
    pod = pod_template(get(obj, *path), text(meta(obj, "namespace")), tz=tz)
    return pod.dump() if pod is not None else None


def _job(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    spec, status = get(obj, "spec"), get(obj, "status")
    return {
        "completions": integer(get(spec, "completions")),
        "parallelism": integer(get(spec, "parallelism")),
        "backoff_limit": integer(get(spec, "backoffLimit")),
        "active_deadline_seconds": integer(get(spec, "activeDeadlineSeconds")),
        "suspend": bool(get(spec, "suspend")),
        "active": integer(get(status, "active")) or 0,
        "succeeded": integer(get(status, "succeeded")) or 0,
        "failed": integer(get(status, "failed")) or 0,
        "start_time": time_text(get(status, "startTime"), tz),
        "completion_time": time_text(get(status, "completionTime"), tz),
        "conditions": conditions(obj, tz),
        "selector": selector(get(spec, "selector")),
        "template": _template(obj, tz, "spec", "template"),
    }


def _cron_job(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    spec, status = get(obj, "spec"), get(obj, "status")
    return {
        "schedule": text(get(spec, "schedule")),
        "suspend": bool(get(spec, "suspend")),
        "concurrency_policy": text(get(spec, "concurrencyPolicy")),
        "last_schedule_time": time_text(get(status, "lastScheduleTime"), tz),
        "last_successful_time": time_text(get(status, "lastSuccessfulTime"), tz),
        "active": [str(get(a, "name")) for a in as_list(get(status, "active")) if get(a, "name")],
        "template": _template(obj, tz, "spec", "jobTemplate", "spec", "template"),
    }


def _daemon_set(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    return _workload(obj, tz, daemon=True)


def _workload(obj: Any, tz: tzinfo | None, daemon: bool = False) -> dict[str, Any]:
    spec, status = get(obj, "spec"), get(obj, "status")
    if daemon:
        replicas = {
            "desired": integer(get(status, "desiredNumberScheduled")),
            "current": integer(get(status, "currentNumberScheduled")),
            "ready": integer(get(status, "numberReady")) or 0,
            "available": integer(get(status, "numberAvailable")) or 0,
            "unavailable": integer(get(status, "numberUnavailable")) or 0,
            "updated": integer(get(status, "updatedNumberScheduled")) or 0,
            "misscheduled": integer(get(status, "numberMisscheduled")),
        }
    else:
        desired = integer(get(spec, "replicas"))
        replicas = {
            "desired": 1 if desired is None and isinstance(spec, Mapping) else desired,
            "current": integer(get(status, "replicas")),
            "ready": integer(get(status, "readyReplicas")) or 0,
            "available": integer(get(status, "availableReplicas")) or 0,
            "unavailable": integer(get(status, "unavailableReplicas")) or 0,
            "updated": integer(get(status, "updatedReplicas")) or 0,
        }
    claims = [
        {
            "name": text(meta(t, "name")),
            "storage_class": text(get(t, "spec", "storageClassName")),
            "requested": text(get(t, "spec", "resources", "requests", "storage")),
        }
        for t in as_list(get(spec, "volumeClaimTemplates"))
        if isinstance(t, Mapping)
    ]
    strategy = get(spec, "strategy", "type") or get(spec, "updateStrategy", "type")
    return {
        "replicas": replicas,
        "selector": selector(get(spec, "selector")),
        "template": _template(obj, tz, "spec", "template"),
        "conditions": conditions(obj, tz),
        "revision": integer(annotation(obj, "deployment.kubernetes.io/revision")),
        "strategy": text(strategy),
        "paused": bool(get(spec, "paused")),
        "service_name": text(get(spec, "serviceName")),
        "volume_claim_templates": claims,
    }


def _webhooks(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    out = []
    for w in as_list(get(obj, "webhooks")):
        if not isinstance(w, Mapping):
            continue
        svc = get(w, "clientConfig", "service")
        url = text(get(w, "clientConfig", "url")) or ""
        host = url.split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1] if url else None
        out.append(
            {
                "name": text(get(w, "name")),
                "service": f"{text(get(svc, 'namespace'))}/{text(get(svc, 'name'))}"
                if isinstance(svc, Mapping)
                else None,
                "url_host": host,
                "failure_policy": text(get(w, "failurePolicy")) or "Fail",
                "timeout_seconds": integer(get(w, "timeoutSeconds")),
                "rules": [
                    f"{','.join(strings(get(r, 'operations')))} "
                    f"{','.join(strings(get(r, 'resources')))}"
                    for r in as_list(get(w, "rules"))
                    if isinstance(r, Mapping)
                ],
            }
        )
    return {"webhooks": out}


WORKLOAD_SHAPERS: dict[str, Shaper] = {
    "ResourceQuota": _quota,
    "LimitRange": _limit_range,
    "HorizontalPodAutoscaler": _hpa,
    "PodDisruptionBudget": _pdb,
    "Job": _job,
    "CronJob": _cron_job,
    "Deployment": _workload,
    "StatefulSet": _workload,
    "DaemonSet": _daemon_set,
    "ReplicaSet": _workload,
    "ValidatingWebhookConfiguration": _webhooks,
    "MutatingWebhookConfiguration": _webhooks,
}
