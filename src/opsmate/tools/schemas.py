"""Argument and payload models of the stable tools (contracts section 4).

Live sources and bundle replay serve the same names with these same models, so a
planner or a model sees one schema whatever is behind it. Unknown arguments are
rejected (``extra="forbid"``). Each tool's answer (``data``) has a typed payload
(:data:`PAYLOAD_MODELS`, models in :mod:`opsmate.records.payloads`) that the engine reads.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from opsmate.records.payloads import (
    AlertsPayload,
    EventsPayload,
    LogsPayload,
    LogStatsPayload,
    MetricsPayload,
    NodesPayload,
    ObjectsPayload,
    PodLogsPayload,
    PodsPayload,
    RolloutPayload,
    RunbooksPayload,
)
from opsmate.tools.k8s_kinds import KIND_NAMES, canonical_kind


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class QueryMetricsArgs(_Args):
    query: str = Field(description="PromQL expression")
    type: Literal["instant", "range"] = Field("range", description="instant or range query")
    start: str | None = Field(None, description="RFC 3339 or relative (-30m); default window start")
    end: str | None = Field(None, description="RFC 3339 or relative; default window end / now")
    step: int | None = Field(None, ge=1, description="seconds between points (range only)")
    environment: str | None = Field(None, description="defaults to the task's environment")


class ListAlertsArgs(_Args):
    environment: str | None = None
    state: Literal["firing", "pending", "inactive"] | None = Field(
        None, description="only alerts in this state"
    )


class SearchLogsArgs(_Args):
    query: str | None = Field(
        None, description='free-text terms, all must match; "quoted phrases" allowed'
    )
    service: str | None = None
    environment: str | None = None
    level: str | None = Field(None, description="e.g. error, warn, info")
    from_: str | None = Field(None, alias="from", description="RFC 3339 or relative (-30m)")
    to: str | None = Field(None, description="RFC 3339 or relative")
    page_size: int = Field(50, ge=1, le=1000)
    cursor: str | None = Field(None, description="next_cursor of the previous page")


class LogStatsArgs(_Args):
    service: str | None = None
    environment: str | None = None
    level: str | None = None
    from_: str | None = Field(None, alias="from")
    to: str | None = None


class ListPodsArgs(_Args):
    namespace: str | None = None
    label_selector: str | None = Field(None, description="e.g. app=order-service")
    name: str | None = Field(
        None,
        description="a pod name, or a workload name: its pods (name-<hash>...) are listed",
    )
    environment: str | None = None


class GetEventsArgs(_Args):
    namespace: str | None = None
    kind: str | None = Field(None, description="involved object kind, e.g. Pod")
    name: str | None = Field(None, description="involved object name")
    environment: str | None = None


class RolloutHistoryArgs(_Args):
    name: str = Field(description="deployment name")
    namespace: str | None = None
    environment: str | None = None


class NodeConditionsArgs(_Args):
    name: str | None = Field(None, description="node name; all nodes when absent")
    environment: str | None = None


class PodLogsArgs(_Args):
    name: str = Field(description="pod name")
    namespace: str | None = None
    container: str | None = None
    tail_lines: int = Field(200, ge=1, le=5000)
    since_seconds: int | None = Field(None, ge=1)
    environment: str | None = None
    previous: bool = Field(
        False, description="the previous (terminated) instance of the container, as kubectl -p"
    )


KindName = Literal[KIND_NAMES]  # type: ignore[valid-type]


class _KindArgs(_Args):
    @field_validator("kind", mode="before", check_fields=False)
    @classmethod
    def _canonical(cls, value: Any) -> Any:
        """``svc``, ``services``, ``networkpolicies`` ... -> the kind (others fail validation)."""
        return (canonical_kind(value) or value) if isinstance(value, str) else value


class ListObjectsArgs(_KindArgs):
    kind: KindName = Field(description="object kind (short names such as svc, pvc, hpa work)")
    namespace: str | None = Field(None, description="ignored for cluster-scoped kinds")
    label_selector: str | None = Field(None, description="e.g. app=order-service")
    environment: str | None = None


class GetObjectArgs(_KindArgs):
    kind: KindName = Field(description="object kind (short names such as svc, pvc, hpa work)")
    name: str = Field(description="object name")
    namespace: str | None = Field(None, description="ignored for cluster-scoped kinds")
    environment: str | None = None


class SearchRunbooksArgs(_Args):
    query: str
    top_k: int = Field(5, ge=1, le=50)
    service: str | None = None
    environment: str | None = None


ARGS_MODELS: dict[str, type[_Args]] = {
    "query_metrics": QueryMetricsArgs,
    "list_alerts": ListAlertsArgs,
    "search_logs": SearchLogsArgs,
    "log_stats": LogStatsArgs,
    "list_pods": ListPodsArgs,
    "get_events": GetEventsArgs,
    "rollout_history": RolloutHistoryArgs,
    "node_conditions": NodeConditionsArgs,
    "pod_logs": PodLogsArgs,
    "search_runbooks": SearchRunbooksArgs,
    "list_objects": ListObjectsArgs,
    "get_object": GetObjectArgs,
}

DESCRIPTIONS: dict[str, str] = {
    "query_metrics": "Run a PromQL instant or range query; returns per-series summaries.",
    "list_alerts": "List Prometheus alerts (firing / pending).",
    "search_logs": "Search log records by time, service, environment, level and terms.",
    "log_stats": "Count log records by level and by normalised message (ids masked).",
    "list_pods": "List pods with phase, readiness, restarts and last termination reason.",
    "get_events": "Kubernetes events, optionally for one object.",
    "rollout_history": "Deployment revisions (from ReplicaSets) with image and change time.",
    "node_conditions": "Node conditions (Ready, MemoryPressure, DiskPressure, PIDPressure).",
    "pod_logs": "Tail of one container's log.",
    "search_runbooks": "Search the runbook knowledge base (hybrid BM25 + vectors).",
    "list_objects": "List Kubernetes objects of one kind (Service, Ingress, NetworkPolicy, PVC, "
    "StorageClass, ConfigMap keys, Secret metadata, RBAC, quotas, HPA, Job, workloads, Node ...) "
    "by namespace and label selector.",
    "get_object": "Get one Kubernetes object of an allow-listed kind by name; says when it "
    "does not exist.",
}

TOOL_NAMES: tuple[str, ...] = tuple(ARGS_MODELS)

PAYLOAD_MODELS: dict[str, type[BaseModel]] = {
    "query_metrics": MetricsPayload,
    "list_alerts": AlertsPayload,
    "search_logs": LogsPayload,
    "log_stats": LogStatsPayload,
    "list_pods": PodsPayload,
    "get_events": EventsPayload,
    "rollout_history": RolloutPayload,
    "node_conditions": NodesPayload,
    "pod_logs": PodLogsPayload,
    "search_runbooks": RunbooksPayload,
    "list_objects": ObjectsPayload,
    "get_object": ObjectsPayload,
}
"""The typed payload of each stable tool's ``data`` (:mod:`opsmate.records.payloads`): what
the executor validates an answer into and the engine reads (the envelope stays ``data``)."""
