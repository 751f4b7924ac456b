"""What the kubelet, the scheduler and controllers say, read as typed observations.

Waiting messages of containers and messages of events follow a small number of
templates written by Kubernetes itself (``secret "x" not found``, ``0/3 nodes are
available: ...``, ``exceeded quota: ...``, ``Readiness probe failed: ...``). Each
template maps to a :class:`FactKind` and structured details (the object that is
missing, the quota and resource, the probe, the image), so the judge and the rules work
from fields, and the report quotes the message verbatim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from opsmate.agent.observe.facts import FactKind as K

_KIND_WORDS = {
    "secret": "Secret",
    "secrets": "Secret",
    "configmap": "ConfigMap",
    "configmaps": "ConfigMap",
    "persistentvolumeclaim": "PersistentVolumeClaim",
    "persistentvolumeclaims": "PersistentVolumeClaim",
    "storageclass.storage.k8s.io": "StorageClass",
    "storageclass": "StorageClass",
    "serviceaccount": "ServiceAccount",
    "serviceaccounts": "ServiceAccount",
    "service": "Service",
    "services": "Service",
    "ingressclass": "IngressClass",
    "ingressclass.networking.k8s.io": "IngressClass",
    "priorityclass.scheduling.k8s.io": "PriorityClass",
    "persistentvolume": "PersistentVolume",
    "runtimeclass.node.k8s.io": "RuntimeClass",
}

_NOT_FOUND = re.compile(
    r"\b(secrets?|configmaps?|persistentvolumeclaims?|storageclass(?:\.storage\.k8s\.io)?"
    r"|serviceaccounts?|services?|ingressclass(?:\.networking\.k8s\.io)?"
    r"|priorityclass\.scheduling\.k8s\.io|persistentvolume|runtimeclass\.node\.k8s\.io)"
    r"\s+\"([^\"]+)\"\s+not\s+found",
    re.I,
)
_MISSING_KEY = re.compile(
    r"couldn'?t find key\s+(\S+)\s+in\s+(Secret|ConfigMap)\s+(?:([\w.-]+)/)?([\w.-]+)", re.I
)
_QUOTA_EXCEEDED = re.compile(
    r"exceeded quota:\s*([\w.-]+)(?:,\s*requested:\s*([^,]+(?:,[^,:]+=[^,]+)*?))?"
    r"(?:,\s*used:\s*([^,]+(?:,[^,:]+=[^,]+)*?))?(?:,\s*limited:\s*(.+))?$",
    re.I,
)
_QUOTA_MUST = re.compile(r"failed quota:\s*([\w.-]+):\s*must specify\s+([\w.,\s]+)", re.I)
_LIMITRANGE = re.compile(
    r"(?:maximum|minimum)\s+(\w+)\s+usage\s+per\s+(Container|Pod)\s+is\s+(\S+),\s+but\s+"
    r"(?:limit|request)\s+is\s+(\S+)",
    re.I,
)
_PULL = re.compile(
    r"(?:Failed to pull image|Back-off pulling image|pulling image)\s+\"([^\"]+)\"", re.I
)
_PROBE = re.compile(r"\b(Readiness|Liveness|Startup) probe (?:failed|errored)\b:?\s*(.*)", re.I)
_SCHED = re.compile(r"\b\d+/\d+ nodes are available\b", re.I)
_BACKOFF_RESTART = re.compile(r"back-?off(?:\s+\S+)?\s+restarting failed container", re.I)
_NO_POD_IP = re.compile(
    r"assign an IP address|no (?:more )?(?:free )?IP addresses? (?:available|left)|IPAM|ipam"
    r"|failed to allocate (?:an )?IP|range is full|InsufficientFreeAddresses",
)
_CSI_UNREGISTERED = re.compile(r"not found in the list of registered CSI drivers", re.I)
_OOM = re.compile(r"\b(?:out of memory|oom[- ]?kill|OOMKilled|Memory cgroup out of memory)", re.I)
_LOW_ON = re.compile(r"low on resource:?\s*([\w-]+)", re.I)
_USING = re.compile(
    r"Container (\S+) was using (\S+?),?\s+(?:which exceeds its request of|request is) "
    r"(\S+?)[,.\s]",
    re.I,
)
_PDB_BLOCK = re.compile(r"violate the pod'?s disruption budget|disruption budget .* needs", re.I)
_PDB_NAME = re.compile(r"disruption budget ([\w.-]+) needs", re.I)
_EVICTING = re.compile(r"evicting pods?/\"?([\w.-]+)\"?(?: -n \"?([\w.-]+)\"?)?", re.I)
_BACKOFF_LIMIT = re.compile(r"backoff limit|BackoffLimitExceeded|DeadlineExceeded", re.I)
_VOLUME = re.compile(r"volume \"([^\"]+)\"", re.I)
_SA_LOOKUP = re.compile(r"error looking up service account\s+([\w.-]+)/([\w.-]+)", re.I)
_ADMISSION = re.compile(
    r"admission webhook \"([^\"]+)\" denied the request|violates PodSecurity \"([^\"]+)\""
    r"|ValidatingAdmissionPolicy '([^']+)'[^:]* denied request"
    r"|unable to validate against any security context constraint",
    re.I,
)
_WEBHOOK_CALL = re.compile(r"failed calling webhook \"([^\"]+)\"", re.I)
_WEBHOOK_SERVICE = re.compile(
    r"service \"([\w.-]+)\"|https?://([a-z0-9-]+)\.([a-z0-9-]+)\.svc\b", re.I
)
_FORBIDDEN_RBAC = re.compile(
    r"User \"([^\"]+)\" cannot (\w+) resource \"([^\"]+)\"(?: in API group \"([^\"]*)\")?"
    r"(?: in the namespace \"([^\"]+)\")?",
    re.I,
)


@dataclass
class Reading:
    """What one message says: a fact kind, severity and the structured details."""

    kind: K
    severity: str = "error"
    detail: dict[str, Any] = field(default_factory=dict)
    refs: list[tuple[str, str, str | None]] = field(default_factory=list)  # (kind, name, ns)
    meaning: str = ""  # what the message means, when its words do not say it plainly


# the kubelet's eviction signals and the node condition each one sets
_PRESSURE = (
    (re.compile(r"ephemeral-storage|nodefs|imagefs|disk", re.I), "DiskPressure"),
    (re.compile(r"memory", re.I), "MemoryPressure"),
    (re.compile(r"\bpids?\b", re.I), "PIDPressure"),
)


def pressure_condition(reason: str, message: str) -> str | None:
    """The node condition behind a kubelet eviction event (``Attempting to reclaim
    ephemeral-storage`` -> ``DiskPressure``), or the one an event names itself."""
    if reason.startswith("NodeHas") and reason.endswith("Pressure"):
        return reason.removeprefix("NodeHas")
    if reason != "EvictionThresholdMet":
        return None
    return next((cond for pattern, cond in _PRESSURE if pattern.search(message)), None)


def read_message(reason: str | None, message: str | None, namespace: str | None) -> Reading | None:
    """The observation a (reason, message) pair from Kubernetes amounts to, or None."""
    r = (reason or "").strip()
    m = (message or "").strip()
    if not r and not m:
        return None
    # a referenced object or key that does not exist
    if km := _MISSING_KEY.search(m):
        kind = "Secret" if km.group(2).lower() == "secret" else "ConfigMap"
        ns = km.group(3) or namespace
        return Reading(
            K.MISSING_REFERENCE,
            detail={"ref_kind": kind, "ref_name": km.group(4), "key": km.group(1)},
            refs=[(kind, km.group(4), ns)],
        )
    if nf := _NOT_FOUND.search(m):
        kind = _KIND_WORDS.get(nf.group(1).lower(), nf.group(1))
        detail: dict[str, Any] = {"ref_kind": kind, "ref_name": nf.group(2)}
        if vol := _VOLUME.search(m):
            detail["volume"] = vol.group(1)
        return Reading(K.MISSING_REFERENCE, detail=detail, refs=[(kind, nf.group(2), namespace)])
    if sa := _SA_LOOKUP.search(m):
        return Reading(
            K.MISSING_REFERENCE,
            detail={"ref_kind": "ServiceAccount", "ref_name": sa.group(2)},
            refs=[("ServiceAccount", sa.group(2), sa.group(1))],
        )
    # quota and limit refusals
    if q := _QUOTA_EXCEEDED.search(m):
        requested = q.group(2) or ""
        resources = sorted({p.split("=")[0].strip() for p in requested.split(",") if "=" in p})
        return Reading(
            K.QUOTA_REFUSAL,
            detail={
                "quota": q.group(1),
                "resources": resources,
                "requested": requested.strip(),
                "used": (q.group(3) or "").strip(),
                "limited": (q.group(4) or "").strip(),
            },
            refs=[("ResourceQuota", q.group(1), namespace)],
        )
    if q := _QUOTA_MUST.search(m):
        resources = [p.strip() for p in q.group(2).split(",") if p.strip()]
        return Reading(
            K.QUOTA_REFUSAL,
            detail={"quota": q.group(1), "resources": resources, "must_specify": True},
            refs=[("ResourceQuota", q.group(1), namespace)],
        )
    if lr := _LIMITRANGE.search(m):
        return Reading(
            K.QUOTA_REFUSAL,
            detail={"limit_range": True, "resources": [lr.group(1)], "allowed": lr.group(3)},
        )
    if wh := _WEBHOOK_CALL.search(m):
        # an admission webhook that cannot be called (failurePolicy Fail): creations fail
        # until the Service behind it answers again
        svc = _WEBHOOK_SERVICE.search(m[wh.end() :])
        name = (svc.group(1) or svc.group(2)) if svc else None
        svc_ns = svc.group(3) if svc and svc.group(3) else None
        refs = [("Service", name, svc_ns or namespace)] if name else []
        return Reading(
            K.MISCONFIGURATION,
            detail={"webhook": wh.group(1), "service": name, "service_namespace": svc_ns},
            refs=refs,
        )
    if ad := _ADMISSION.search(m):
        policy = next((g for g in ad.groups() if g), None)
        return Reading(
            K.ADMISSION_DENIED,
            detail={"policy": policy, "admission": m[ad.start() : ad.start() + 400]},
        )
    if rb := _FORBIDDEN_RBAC.search(m):
        return Reading(
            K.RBAC_DENIED,
            detail={
                "user": rb.group(1),
                "verb": rb.group(2),
                "resource": rb.group(3),
                "api_group": rb.group(4) or "",
                "namespace": rb.group(5),
            },
        )
    # an eviction (a drain) refused by a PodDisruptionBudget
    if _PDB_BLOCK.search(m):
        name = _PDB_NAME.search(m)
        budget = name.group(1) if name else None
        held: list[tuple[str, str, str | None]] = []
        if budget:
            held.append(("PodDisruptionBudget", budget, namespace))
        if ev := _EVICTING.search(m):  # a drain tool's log names the pod it cannot evict
            held.append(("Pod", ev.group(1), ev.group(2) or namespace))
        return Reading(K.MISCONFIGURATION, detail={"pdb": budget, "blocks": "eviction"}, refs=held)
    # images
    if r in ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull") or (
        r in ("Failed", "BackOff") and _PULL.search(m)
    ):
        image = _PULL.search(m)
        return Reading(K.IMAGE_PULL, detail={"image": image.group(1) if image else None})
    # probes
    if pr := _PROBE.search(m):
        return Reading(
            K.PROBE_FAILURE,
            detail={"probe": pr.group(1).lower(), "output": pr.group(2).strip()[:300]},
        )
    # scheduling
    if r == "FailedScheduling" or _SCHED.search(m):
        return Reading(K.SCHEDULING, detail={"scheduler_message": m[:500]})
    if r in ("BackoffLimitExceeded", "DeadlineExceeded") or (
        r == "Failed" and _BACKOFF_LIMIT.search(m)
    ):
        return Reading(K.JOB_FAILED, detail={"job_reason": r})
    if r in ("OOMKilling", "OOMKilled") or (r != "BackOff" and _OOM.search(m)):
        return Reading(K.OOM_KILLED)
    low_on = _LOW_ON.search(m)
    if r == "Evicted" or (low_on and "evict" in (r + m).lower()):
        evicted: dict[str, Any] = {"resource": low_on.group(1) if low_on else None}
        if use := _USING.search(m):
            evicted.update(container=use.group(1), usage=use.group(2), request=use.group(3))
        return Reading(K.EVICTED, detail=evicted)
    if r == "BackOff" or _BACKOFF_RESTART.search(m):
        return Reading(K.CRASH_LOOP, severity="warning")
    if r in ("FailedMount", "FailedAttachVolume") and _CSI_UNREGISTERED.search(m):
        # the kubelet of the pod's node has no such driver registered: the driver's node
        # plugin (a DaemonSet) runs no pod on that node
        return Reading(
            K.MISCONFIGURATION,
            detail={"on_node": True},
            meaning="the CSI driver's node plugin is not registered on the pod's node: its "
            "DaemonSet runs no pod there (a taint it does not tolerate, a nodeSelector)",
        )
    if r in ("FailedMount", "FailedAttachVolume"):
        return Reading(K.MISCONFIGURATION, severity="warning")
    if r in (
        "NodeNotReady",
        "NodeHasDiskPressure",
        "NodeHasMemoryPressure",
        "EvictionThresholdMet",
    ):
        condition = pressure_condition(r, m)
        return Reading(K.NODE_PROBLEM, detail={"condition": condition} if condition else {})
    if r in ("TooManyMissedTimes", "MissedSchedule", "InvalidSchedule", "FailedNeedsStart"):
        return Reading(K.MISCONFIGURATION, detail={"cronjob": r})  # a CronJob not scheduling
    if r in ("FailedGetResourceMetric", "FailedComputeMetricsReplicas", "FailedGetScale"):
        return Reading(K.MISCONFIGURATION, detail={"hpa": True})
    if r in ("CreateContainerConfigError", "CreateContainerError", "RunContainerError"):
        return Reading(K.CONFIG_ERROR)
    if r in ("ProvisioningFailed", "FailedBinding"):
        return Reading(K.MISCONFIGURATION)
    if r == "JobAlreadyActive":
        # a CronJob with concurrencyPolicy Forbid skips each run while an earlier Job of it
        # is still active: a Job that hangs stops the schedule with no error anywhere
        return Reading(
            K.MISCONFIGURATION,
            meaning="each skipped run waits for an earlier Job of the CronJob that is still "
            "active (concurrencyPolicy: Forbid)",
        )
    if r == "Preempted" or m.startswith("Preempted by "):
        # the scheduler evicted the pod to place one of higher priority
        return Reading(
            K.SCHEDULING,
            meaning="the scheduler evicted it to make room for a pod of higher priority "
            "(PriorityClass)",
        )
    if r == "FailedCreatePodSandBox" and _NO_POD_IP.search(m):
        # the pod network has no address to give: the CNI's pool (or the subnet behind it)
        # is exhausted, whatever the node
        return Reading(
            K.SATURATION,
            meaning="the pod network had no IP address to give: the CNI's address pool, or "
            "the subnet behind it, is exhausted or cannot grow",
        )
    if r in ("FailedCreatePodSandBox", "FailedKillPod", "FailedSync", "NetworkNotReady"):
        return Reading(K.NODE_PROBLEM, severity="warning")
    return None
