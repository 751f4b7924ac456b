"""Start-up transients: trouble a new pod had only while it started.

A rolling update scales the previous ReplicaSet down only as new pods become available.
So probe failures on a new pod, followed by its Deployment scaling an older ReplicaSet
down, were the pod starting up (the application not listening yet), not a fault: the
pod passed its probes afterwards. Such failures are no cause, whatever their count.

Likewise a pod that could not attach or mount its volume, or failed its start-up probe,
and is now running with every container ready: that trouble passed on its own.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from opsmate.agent.observe.depgraph import replicaset_workload
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.records.k8s import Pod

_SCALED_DOWN = re.compile(r"Scaled down replica set (\S+)")


def _replicaset_of(pod: str) -> str | None:
    """``web-5d9f8c7b6-x2x9z`` -> ``web-5d9f8c7b6`` (a Deployment's pod naming)."""
    rs, _, suffix = pod.rpartition("-")
    return rs if rs and suffix and replicaset_workload(rs) != rs else None


def passed_after_start(fact: Fact, facts: list[Fact]) -> bool:
    """``fact`` is a probe failure of a pod whose Deployment afterwards scaled a previous
    ReplicaSet down: the pod became ready, so the failures were its start-up."""
    if fact.kind != K.PROBE_FAILURE or fact.subject is None or fact.subject.kind != "Pod":
        return False
    rs = _replicaset_of(fact.subject.name)
    if rs is None:
        return False
    deployment = replicaset_workload(rs)
    last = fact.last_time or fact.time
    for f in facts:
        if f.reason != "ScalingReplicaSet" or f.time is None:
            continue
        if last is not None and f.time < last:
            continue
        for text in (f.message, f.quote, f.statement):
            m = _SCALED_DOWN.search(text or "")
            if m and m.group(1) != rs and replicaset_workload(m.group(1)) == deployment:
                return True
    return False


# start-up trouble that ends once the pod starts (the volume attaches, the probe passes)
_START_UP = frozenset({"FailedAttachVolume", "FailedMount"})
_STARTUP_PROBE = re.compile(r"startup probe failed", re.I)


def recovered(fact: Fact, graph: ObjectGraph | None) -> bool:
    """``fact`` is start-up trouble of a pod that is now running with every container ready
    (in the objects read): it passed. Readiness failures count as start-up trouble when
    they all fell in the first minutes after each pod's containers started (the
    application not listening yet)."""
    if graph is None or fact.subject is None or fact.subject.kind != "Pod":
        return False
    startup = fact.reason in _START_UP or (
        fact.kind == K.PROBE_FAILURE and bool(_STARTUP_PROBE.search(fact.statement))
    )
    warming = fact.kind == K.PROBE_FAILURE and bool(_READINESS.search(fact.statement))
    if not startup and not warming:
        return False
    names = [fact.subject.name, *(o.name for o in fact.objects if o.kind == "Pod")]
    begins = []
    for name in names:
        pod = graph.get("Pod", fact.subject.namespace, name)
        if not isinstance(pod, Pod) or pod.phase != "Running" or not pod.containers:
            return False
        if not all(c.ready for c in pod.containers):
            return False
        began = max((c.started_at for c in pod.containers if c.started_at), default=None)
        begins.append(began or pod.start_time)
    if startup:
        return True
    last = fact.last_time or fact.time
    if None in begins or last is None or fact.time is None:
        return False
    known = [b for b in begins if b is not None]
    # failures before the pods started, or long after: not their start-up
    return min(known) - _SLACK <= fact.time and last <= max(known) + _WARM_UP


_READINESS = re.compile(r"readiness probe failed", re.I)
_WARM_UP = timedelta(minutes=5)  # an application given this long to start listening
_SLACK = timedelta(minutes=1)


def scheduled_later(fact: Fact, graph: ObjectGraph | None) -> bool:
    """``fact`` is the scheduler's refusal of pods that it then placed: every pod it is about
    has a later ``Scheduled`` event (a brief wait for room, resolved)."""
    if graph is None or fact.kind != K.SCHEDULING or fact.reason != "FailedScheduling":
        return False
    last = fact.last_time or fact.time
    names = {o.name for o in [fact.subject, *fact.objects] if o is not None and o.kind == "Pod"}
    if last is None or not names:
        return False
    placed = {
        e.object.name
        for e, _ in graph.events
        if e.reason == "Scheduled"
        and e.object.name in names
        and (e.first_timestamp or e.last_timestamp or last) >= last
    }
    return placed >= names


def yields_by_design(fact: Fact, graph: ObjectGraph | None) -> bool:
    """``fact`` is the scheduler refusing or evicting only pods whose priority is below zero:
    placeholders (cluster over-provisioning, pre-warmed capacity) exist to give way to real
    pods — their being preempted or pending is the design working, not a failure."""
    if graph is None or fact.kind != K.SCHEDULING:
        return False
    refs = [o for o in [fact.subject, *fact.objects] if o is not None and o.kind == "Pod"]
    if not refs:
        return False
    priorities = [getattr(graph.get("Pod", o.namespace, o.name), "priority", None) for o in refs]
    return all(isinstance(p, int) and p < 0 for p in priorities)


_ONE_OFF = frozenset({K.OOM_KILLED, K.CONTAINER_EXIT, K.LAST_WORDS})
_HEALED = timedelta(minutes=5)


def healed_before(fact: Fact, graph: ObjectGraph | None, onset: datetime | None) -> bool:
    """``fact`` is a pod's one-off kill or exit that ended well before the onset of what is
    asked about, and the pod has run with every container ready since before that onset: it
    explains nothing that began after it (an OOM kill of a tracing backend a quarter of an
    hour before logins fail)."""
    if graph is None or onset is None or fact.kind not in _ONE_OFF or fact.time is None:
        return False
    if fact.subject is None or fact.subject.kind != "Pod":
        return False
    if (fact.last_time or fact.time) > onset - _HEALED:
        return False
    pod = graph.get("Pod", fact.subject.namespace, fact.subject.name)
    if not isinstance(pod, Pod) or pod.phase != "Running" or not pod.containers:
        return False
    if not all(c.ready for c in pod.containers):
        return False
    began = [c.started_at for c in pod.containers if c.started_at]
    return bool(began) and max(began) <= onset - _HEALED
