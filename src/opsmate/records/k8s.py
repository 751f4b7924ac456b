"""Records of the core Kubernetes views: pods (whole), events, nodes, rollouts.

These mirror what :mod:`opsmate.tools.kubernetes.shaping` produces (``pod_summary``,
``event_summary``, ``node_summary``, ``rollout_history``); that module builds its
output from them. Values of Secrets never appear: an env var or volume that comes from
a Secret names the Secret and the key, never the value.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AliasChoices, Field

from opsmate.records.base import Record
from opsmate.records.types import (
    AnyMap,
    BoolMap,
    Count,
    Flag,
    OptBool,
    OptInt,
    StrList,
    StrMap,
    Text,
    Time,
    items,
    lenient,
)

# how a revision that only ran ``kubectl rollout restart`` reads in its ``changes``
RESTARTED = "pod template: restarted"


def _none() -> None:
    """The value of a nested record that does not validate."""
    return None


class ObjectRef(Record):
    """Which object something is about: kind, name and (for namespaced kinds) namespace."""

    kind: Text = None
    name: Text = None
    namespace: Text = None


# ----------------------------------------------------------------------------- pods


class Termination(Record):
    """A container's (last) termination: reason, exit code, message, when."""

    reason: Text = None
    exit_code: OptInt = None
    signal: OptInt = None
    message: Text = None
    started_at: Time = None
    finished_at: Time = None


class Probe(Record):
    """A liveness / readiness / startup probe: what it checks and how often."""

    type: Text = None  # http | tcp | exec | grpc
    target: Text = None  # "GET http://:8080/healthz", "tcp :5432", "exec cat /tmp/ready"
    initial_delay_seconds: OptInt = None
    period_seconds: OptInt = None
    timeout_seconds: OptInt = None
    failure_threshold: OptInt = None


class EnvVar(Record):
    """One environment variable: its name and where its value comes from.

    ``source``: literal | configmap | secret | field | resource. ``value`` is given only
    for literals; for ConfigMap and Secret sources ``ref_name`` / ``ref_key`` say which
    object and key, and ``optional`` whether a missing one is tolerated.
    """

    name: Text = None
    source: Text = "literal"
    value: Text = None
    value_hidden: Flag = False  # a literal whose name says it is a secret: value not shown
    ref_name: Text = None
    ref_key: Text = None
    optional: Flag = False


class EnvFrom(Record):
    """An ``envFrom`` entry: every key of a ConfigMap or Secret (with an optional prefix)."""

    source: Text = None  # configmap | secret
    name: Text = None
    prefix: Text = None
    optional: Flag = False


class Mount(Record):
    name: Text = None
    mount_path: Text = None
    read_only: Flag = False
    sub_path: Text = None


class Volume(Record):
    """A pod volume: its type and the object it refers to (ConfigMap, Secret, PVC ...)."""

    name: Text = None
    type: Text = None  # configMap | secret | persistentVolumeClaim | emptyDir | hostPath | ...
    ref_name: Text = None  # ConfigMap / Secret / claim name
    optional: Flag = False
    keys: StrList = Field(default_factory=list)  # ConfigMap / Secret items asked for


class Resources(Record):
    requests: StrMap = Field(default_factory=dict)
    limits: StrMap = Field(default_factory=dict)


class Container(Record):
    """A container or init container of a pod: spec and status together."""

    name: Text = None
    image: Text = None
    init: Flag = False
    command: StrList = Field(default_factory=list)
    args: StrList = Field(default_factory=list)
    ready: Flag = False
    started: Flag = False
    restarts: Count = 0
    state: Text = "unknown"  # running | waiting | terminated | unknown
    started_at: Time = None
    reason: Text = None  # waiting / terminated reason
    message: Text = None  # waiting / terminated message (names what is missing)
    exit_code: OptInt = None
    finished_at: Time = None
    last_termination: Annotated[Termination | None, lenient(_none)] = None
    resources: Annotated[Resources | None, lenient(_none)] = None
    liveness: Annotated[Probe | None, lenient(_none)] = None
    readiness: Annotated[Probe | None, lenient(_none)] = None
    startup: Annotated[Probe | None, lenient(_none)] = None
    env: Annotated[list[EnvVar], items(EnvVar)] = Field(default_factory=list)
    env_from: Annotated[list[EnvFrom], items(EnvFrom)] = Field(default_factory=list)
    mounts: Annotated[list[Mount], items(Mount)] = Field(default_factory=list)
    ports: StrList = Field(default_factory=list)  # "8080/TCP", "http:8080/TCP" (named)


class Condition(Record):
    type: Text = None
    status: Text = None
    reason: Text = None
    message: Text = None
    last_transition_time: Time = Field(
        None, validation_alias=AliasChoices("last_transition_time", "last_update")
    )


class Pod(Record):
    """A pod, whole: status, containers and init containers, scheduling and references."""

    name: Text = None
    namespace: Text = None
    phase: Text = None
    ready: Text = None  # "1/2"
    restarts: Count = 0
    node: Text = None
    ip: Text = None  # status.podIP
    host_ip: Text = None  # status.hostIP: the node's address
    start_time: Time = None
    created: Time = None
    labels: StrMap = Field(default_factory=dict)
    owner: Text = None  # "ReplicaSet/web-7d9f" (first owner reference)
    reason: Text = None  # pod-level status reason (Evicted, ...)
    message: Text = None
    containers: Annotated[list[Container], items(Container)] = Field(default_factory=list)
    init_containers: Annotated[list[Container], items(Container)] = Field(default_factory=list)
    conditions: Annotated[list[Condition], items(Condition)] = Field(default_factory=list)
    service_account: Text = None
    node_selector: StrMap = Field(default_factory=dict)
    affinity: AnyMap = Field(default_factory=dict)  # the spec's affinity, as given
    tolerations: StrList = Field(default_factory=list)  # "key=value:Effect" / "key:Exists"
    spread_keys: StrList = Field(default_factory=list)  # hard topologySpreadConstraints' keys
    volumes: Annotated[list[Volume], items(Volume)] = Field(default_factory=list)
    qos_class: Text = None
    priority_class: Text = None
    priority: OptInt = None  # spec.priority: below zero, a placeholder meant to yield
    image_pull_secrets: StrList = Field(default_factory=list)
    restart_policy: Text = None
    # the kubernetes.io/limit-ranger annotation: which requests / limits the namespace's
    # LimitRange filled in at admission ("LimitRanger plugin set: memory limit for container x")
    limit_ranger: Text = None

    def owner_ref(self) -> ObjectRef | None:
        """The first owner reference as an :class:`ObjectRef` (same namespace)."""
        if not self.owner or "/" not in self.owner:
            return None
        kind, name = self.owner.split("/", 1)
        return ObjectRef(kind=kind, name=name, namespace=self.namespace)

    def all_containers(self) -> list[Container]:
        return [*self.init_containers, *self.containers]

    def tolerates(self, taint: str) -> bool:
        """Whether one of the pod's tolerations tolerates ``taint`` (``key=value:Effect``)."""
        key, value, effect = parse_taint(taint)
        return any(_tolerates(t, key, value, effect) for t in self.tolerations)

    def requests(self) -> dict[str, str]:
        """What the scheduler counts: per resource, the larger of the sum over containers
        and the largest init container request (quantities as text, e.g. ``250m``)."""
        from opsmate.records.quantity import add_quantities, max_quantity

        out: dict[str, str] = {}
        for c in self.containers:
            for k, v in (c.resources.requests if c.resources else {}).items():
                out[k] = add_quantities(out.get(k), v)
        for c in self.init_containers:
            for k, v in (c.resources.requests if c.resources else {}).items():
                out[k] = max_quantity(out.get(k), v)
        return out


def toleration_text(
    key: str | None, operator: str | None, value: str | None, effect: str | None
) -> str:
    """A toleration as text: ``key=value:Effect`` (Equal), ``key:Exists:Effect`` (Exists),
    ``*:Exists`` (every taint); the effect is left out when the toleration has none."""
    if (operator or "Equal") == "Exists":
        text = f"{key or '*'}:Exists"
    else:
        text = f"{key or ''}={value or ''}"
    return f"{text}:{effect}" if effect else text


def parse_taint(text: str) -> tuple[str, str, str]:
    """``key=value:Effect`` (a node taint as :func:`~opsmate.tools.shaping.node_summary`
    writes it) -> (key, value, effect)."""
    body, _, effect = text.rpartition(":") if ":" in text else (text, "", "")
    key, _, value = body.partition("=")
    return key, value, effect


def _tolerates(toleration: str, key: str, value: str, effect: str) -> bool:
    parts = toleration.split(":")
    if len(parts) >= 2 and parts[1] == "Exists":
        t_key, t_effect = parts[0], (parts[2] if len(parts) > 2 else "")
        key_ok = t_key in ("*", "") or t_key == key
        return key_ok and (not t_effect or t_effect == effect)
    body, t_effect = (parts[0], parts[1]) if len(parts) > 1 else (parts[0], "")
    t_key, _, t_value = body.partition("=")
    return t_key == key and t_value == value and (not t_effect or t_effect == effect)


# ----------------------------------------------------------------------------- events


class Event(Record):
    """A core/v1 or events.k8s.io/v1 Event in one shape."""

    type: Text = None
    reason: Text = None
    message: Text = None
    object: Annotated[ObjectRef, lenient(ObjectRef)] = Field(default_factory=ObjectRef)
    count: Count = 1
    first_timestamp: Time = None
    last_timestamp: Time = None
    source: Text = None
    namespace: Text = None
    name: Text = None


# ----------------------------------------------------------------------------- nodes


class Node(Record):
    name: Text = None
    ready: OptBool = None
    unschedulable: Flag = False
    pressure: BoolMap = Field(default_factory=dict)
    any_pressure: Flag = False
    conditions: Annotated[list[Condition], items(Condition)] = Field(default_factory=list)
    taints: StrList = Field(default_factory=list)  # "key=value:Effect"
    labels: StrMap = Field(default_factory=dict)
    capacity: StrMap = Field(default_factory=dict)
    allocatable: StrMap = Field(default_factory=dict)
    kubelet_version: Text = None
    addresses: StrList = Field(default_factory=list)  # status.addresses (IPs, host names)


# ----------------------------------------------------------------------------- rollouts


class Revision(Record):
    revision: OptInt = None
    replicaset: Text = None
    images: StrList = Field(default_factory=list)
    created: Time = None
    change_cause: Text = None
    replicas: Count = 0
    ready_replicas: Count = 0
    current: Flag = False
    changes: StrList = Field(default_factory=list)  # what it changed in the pod template


class Replicas(Record):
    """Replica counts of a workload (a DaemonSet's: desired / current number scheduled)."""

    desired: OptInt = None
    ready: Count = 0
    updated: Count = 0
    available: Count = 0
    unavailable: Count = 0
    current: OptInt = None
    misscheduled: OptInt = None


class Rollout(Record):
    """A Deployment's revisions (from its ReplicaSets), replicas and conditions."""

    name: Text = None
    namespace: Text = None
    images: StrList = Field(default_factory=list)
    current_revision: OptInt = None
    revisions: Annotated[list[Revision], items(Revision)] = Field(default_factory=list)
    replicas: Annotated[Replicas | None, lenient(_none)] = None
    conditions: Annotated[list[Condition], items(Condition)] = Field(default_factory=list)

    def current(self) -> Revision | None:
        cur = next((r for r in self.revisions if r.current), None)
        return cur or (self.revisions[-1] if self.revisions else None)
