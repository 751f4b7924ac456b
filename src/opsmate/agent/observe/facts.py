"""Facts: typed observations extracted from evidence, the only thing the judge reads.

A fact has a :class:`FactKind` (what sort of observation it is), the object it is about
(``subject``) and the objects it names (``objects``: an owner, a missing Secret, a node,
a dependency), and the structured details that rules and the judge use — reason,
message, exit code, count, first and last time, container, a ``detail`` mapping for
kind-specific values (a memory limit, an image, a selector, a probe target) — plus the
evidence ids that support it. ``statement`` is the human sentence shown in reports;
nothing downstream parses it.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

Severity = Literal["error", "warning", "info"]


class FactKind(StrEnum):
    """What an observation is. Its role (symptom, cause, change, context) is defined by the
    cause/symptom model in :mod:`opsmate.agent.judge.causality`."""

    # symptoms: what the user sees
    CRASH_LOOP = "crash_loop"  # a container keeps restarting (CrashLoopBackOff, BackOff)
    CONTAINER_EXIT = "container_exit"  # a container exited with an error code
    POD_PENDING = "pod_pending"  # a pod is not scheduled / not started
    NOT_READY = "not_ready"  # pods or replicas not ready / unavailable
    EVICTED = "evicted"  # a pod was evicted
    JOB_FAILED = "job_failed"  # a Job failed (backoff limit, deadline)
    ERROR_RATE = "error_rate"  # 5xx / failed requests
    LATENCY = "latency"  # slow requests
    ALERT = "alert"  # a firing alert
    METRIC_SHIFT = "metric_shift"  # a metric changed sharply
    # causes: what can explain a symptom
    OOM_KILLED = "oom_killed"  # terminated OOMKilled (with its memory limit)
    LAST_WORDS = "last_words"  # a container's last log lines before it exited
    IMAGE_PULL = "image_pull"  # the image cannot be pulled (image, registry answer)
    SCHEDULING = "scheduling"  # the scheduler's reason a pod cannot be placed
    MISSING_REFERENCE = "missing_reference"  # a referenced object or key does not exist
    PROBE_FAILURE = "probe_failure"  # a liveness / readiness / startup probe fails
    QUOTA_REFUSAL = "quota_refusal"  # a ResourceQuota or LimitRange refused a pod
    ADMISSION_DENIED = "admission_denied"  # an admission webhook / policy refused an object
    DEPENDENCY_FAILURE = "dependency_failure"  # DNS / connection failure to a named dependency
    CONFIG_ERROR = "config_error"  # the application reports a configuration error
    SELECTOR_MISMATCH = "selector_mismatch"  # a selector matches no (ready) pod
    NETWORK_POLICY = "network_policy"  # a NetworkPolicy denies the traffic
    RBAC_DENIED = "rbac_denied"  # a ServiceAccount lacks a permission
    MISCONFIGURATION = "misconfiguration"  # another object-level misconfiguration
    SATURATION = "saturation"  # a resource is exhausted (pool, memory at its limit)
    NODE_PROBLEM = "node_problem"  # a node condition (NotReady, pressure)
    LOG_ERROR = "log_error"  # an error template in the logs
    # changes: what happened before the onset
    CHANGE = "change"  # a rollout, a one-off workload, a config reload
    # context
    NO_CHANGE = "no_change"
    LOG_WARNING = "log_warning"
    MODEL_NOTE = "model_note"
    OBSERVATION = "observation"


# kinds of facts written by earlier versions (saved sessions) -> today's kinds
_LEGACY_KINDS = {
    "pod_problem": FactKind.CRASH_LOOP,
    "event": FactKind.OBSERVATION,
    "node_condition": FactKind.NODE_PROBLEM,
}


class ObjRef(BaseModel):
    """An object a fact is about: a Kubernetes object, a service of the logs, a dependency.

    ``kind`` is a Kubernetes kind (Pod, Deployment, Service, Node, Secret ...), or
    ``app`` for a service named in logs and metrics, or ``host`` for a dependency known
    only by its address.
    """

    kind: str
    name: str
    namespace: str | None = None

    def key(self) -> str:
        return f"{self.kind}/{self.namespace or '-'}/{self.name}"

    def label(self) -> str:
        """``Pod web-1`` (kinds ``app`` and ``host`` print the bare name)."""
        return self.name if self.kind in ("app", "host") else f"{self.kind} {self.name}"


_FLAGS = ("conclusive", "background")


class Fact(BaseModel):
    """An observation extracted from evidence (``evidence``: E/R ids)."""

    key: str  # stable identity, so re-extraction does not duplicate it
    statement: str
    evidence: list[str] = Field(default_factory=list)
    kind: FactKind = FactKind.OBSERVATION
    severity: Severity = "info"
    service: str | None = None  # the application / workload name (grouping and matching)
    time: datetime | None = None  # when it started / happened (first seen)
    last_time: datetime | None = None  # when it was last seen
    quote: str | None = None  # the concrete text (error message, reason, condition)
    terms: list[str] = Field(default_factory=list)  # words used to match runbooks
    focus: bool = False  # about the subject of the question (or a service in focus)
    count: int = 1  # occurrences (log lines, events, pods) behind the statement
    subject: ObjRef | None = None  # the object it is about
    objects: list[ObjRef] = Field(default_factory=list)  # other objects it names
    container: str | None = None
    reason: str | None = None  # a machine reason (OOMKilled, FailedScheduling, BackOff ...)
    message: str | None = None  # the verbatim message behind it (redacted)
    exit_code: int | None = None
    # what the judge weighs, typed (never read from ``detail``):
    conclusive: bool = False  # the observation alone shows the cause (no corroboration needed)
    background: bool = False  # there before the onset at a like rate: noise, not the trouble
    routine: bool = False  # a change that changed nothing that runs (a rollout restart)
    detail: dict[str, Any] = Field(default_factory=dict)  # kind-specific structured values

    @model_validator(mode="before")
    @classmethod
    def _flags_out_of_detail(cls, value: Any) -> Any:
        """Sessions stored before the flags were typed kept them in ``detail``."""
        if isinstance(value, dict) and isinstance(value.get("detail"), dict):
            detail = dict(value["detail"])
            moved = {k: bool(detail.pop(k)) for k in _FLAGS if k in detail}
            if moved:
                value = {**value, **{k: v for k, v in moved.items() if k not in value}}
                value["detail"] = detail
        return value

    @field_validator("kind", mode="before")
    @classmethod
    def _legacy_kind(cls, value: Any) -> Any:
        if isinstance(value, str) and value not in FactKind._value2member_map_:
            return _LEGACY_KINDS.get(value, FactKind.OBSERVATION)
        return value

    def names(self) -> list[str]:
        """Every object name the fact is about or names (lower-case)."""
        out = [self.subject.name.lower()] if self.subject else []
        out += [o.name.lower() for o in self.objects]
        if self.service:
            out.append(self.service.lower())
        streams = self.detail.get("streams")
        if isinstance(streams, list) and len(streams) <= 2:
            out += [str(s).lower() for s in streams]  # the pods that wrote a log template
        return list(dict.fromkeys(out))
