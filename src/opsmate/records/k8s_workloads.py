"""Records of quotas, LimitRanges, HPAs, PDBs, Jobs, CronJobs, workloads (Deployment,
StatefulSet, DaemonSet, ReplicaSet) and admission webhooks. See
:mod:`opsmate.records.k8s_objects` (which re-exports them) for the whole set.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from opsmate.records.base import Record
from opsmate.records.k8s import Condition, ObjectRef, Pod, Replicas
from opsmate.records.k8s_meta import K8sObject, LabelSelector, Selector, _none
from opsmate.records.types import (
    Count,
    Flag,
    OptInt,
    StrList,
    StrMap,
    Text,
    Time,
    items,
    lenient,
)

# ----------------------------------------------------------------------------- limits


class ResourceQuota(K8sObject):
    hard: StrMap = Field(default_factory=dict)
    used: StrMap = Field(default_factory=dict)
    scopes: StrList = Field(default_factory=list)


class LimitItem(Record):
    type: Text = None  # Container | Pod | PersistentVolumeClaim
    max: StrMap = Field(default_factory=dict)
    min: StrMap = Field(default_factory=dict)
    default: StrMap = Field(default_factory=dict)
    default_request: StrMap = Field(default_factory=dict)
    max_limit_request_ratio: StrMap = Field(default_factory=dict)


class LimitRange(K8sObject):
    limits: Annotated[list[LimitItem], items(LimitItem)] = Field(default_factory=list)


class HorizontalPodAutoscaler(K8sObject):
    target: Annotated[ObjectRef, lenient(ObjectRef)] = Field(default_factory=ObjectRef)
    min_replicas: OptInt = None
    max_replicas: OptInt = None
    current_replicas: OptInt = None
    desired_replicas: OptInt = None
    metrics: StrList = Field(default_factory=list)  # "cpu utilization 80%"
    current_metrics: StrList = Field(default_factory=list)
    conditions: Annotated[list[Condition], items(Condition)] = Field(default_factory=list)
    last_scale_time: Time = None


class PodDisruptionBudget(K8sObject):
    min_available: Text = None
    max_unavailable: Text = None
    selector: Selector = Field(default_factory=LabelSelector)
    current_healthy: OptInt = None
    desired_healthy: OptInt = None
    disruptions_allowed: OptInt = None
    expected_pods: OptInt = None
    conditions: Annotated[list[Condition], items(Condition)] = Field(default_factory=list)


# ----------------------------------------------------------------------------- workloads


class Job(K8sObject):
    completions: OptInt = None
    parallelism: OptInt = None
    backoff_limit: OptInt = None
    active_deadline_seconds: OptInt = None
    suspend: Flag = False
    active: Count = 0
    succeeded: Count = 0
    failed: Count = 0
    start_time: Time = None
    completion_time: Time = None
    conditions: Annotated[list[Condition], items(Condition)] = Field(default_factory=list)
    selector: Selector = Field(default_factory=LabelSelector)
    template: Annotated[Pod | None, lenient(_none)] = None


class CronJob(K8sObject):
    schedule: Text = None
    suspend: Flag = False
    concurrency_policy: Text = None
    last_schedule_time: Time = None
    last_successful_time: Time = None
    active: StrList = Field(default_factory=list)  # names of running Jobs
    template: Annotated[Pod | None, lenient(_none)] = None


class VolumeClaimTemplate(Record):
    name: Text = None
    storage_class: Text = None
    requested: Text = None


class Workload(K8sObject):
    """A Deployment, StatefulSet, DaemonSet or ReplicaSet: replicas, selector, pod template."""

    replicas: Annotated[Replicas, lenient(Replicas)] = Field(default_factory=Replicas)
    selector: Selector = Field(default_factory=LabelSelector)
    template: Annotated[Pod | None, lenient(_none)] = None
    conditions: Annotated[list[Condition], items(Condition)] = Field(default_factory=list)
    revision: OptInt = None
    strategy: Text = None
    paused: Flag = False
    service_name: Text = None  # StatefulSet
    volume_claim_templates: Annotated[list[VolumeClaimTemplate], items(VolumeClaimTemplate)] = (
        Field(default_factory=list)
    )


class Webhook(Record):
    name: Text = None
    service: Text = None  # "namespace/name" of the Service it calls
    url_host: Text = None  # host of a URL webhook
    failure_policy: Text = None
    timeout_seconds: OptInt = None
    rules: StrList = Field(default_factory=list)  # "CREATE,UPDATE pods"


class WebhookConfiguration(K8sObject):
    """A Validating- or MutatingWebhookConfiguration."""

    webhooks: Annotated[list[Webhook], items(Webhook)] = Field(default_factory=list)
