"""The cause/symptom model: which observations are symptoms and which can be causes.

Symptoms are what the user sees: a crash loop, a pending pod, pods not ready, a failed
Job, a 5xx rate, latency, an alert. They are never a root cause: they are what a root
cause must explain, and they appear in the root-cause statement as supporting evidence.

Causes explain symptoms. Some are *conclusive* on their own, because they are the
system's own account of why (the kubelet's OOMKilled with the memory limit, the
scheduler's message, the registry's answer to an image pull, a referenced object proven
absent, a quota's refusal, a failing probe with its target). Others are *inferred*
from application output (the last lines a container wrote before it exited, a DNS or
connection failure to a named dependency, a configuration error, an error template
in the logs) and weigh by how specific they are and when they appeared.

Changes (a rollout, a one-off workload, a config reload) explain a problem that began
right after them; they are causes only with such timing, otherwise context.

Each cause kind lists the symptom kinds it can explain: an OOM kill explains a crash
loop or restarts, not a pending pod; a scheduler message explains a pending pod, not a
crash loop. The judge links a cause to the subject's symptom only through this table
and through the objects both are about.
"""

from __future__ import annotations

from enum import StrEnum

from opsmate.agent.observe.facts import FactKind as K


class Role(StrEnum):
    SYMPTOM = "symptom"
    CAUSE = "cause"
    CHANGE = "change"
    CONTEXT = "context"


ROLE: dict[K, Role] = {
    K.CRASH_LOOP: Role.SYMPTOM,
    K.CONTAINER_EXIT: Role.SYMPTOM,
    K.POD_PENDING: Role.SYMPTOM,
    K.NOT_READY: Role.SYMPTOM,
    K.EVICTED: Role.SYMPTOM,
    K.JOB_FAILED: Role.SYMPTOM,
    K.ERROR_RATE: Role.SYMPTOM,
    K.LATENCY: Role.SYMPTOM,
    K.ALERT: Role.SYMPTOM,
    K.METRIC_SHIFT: Role.SYMPTOM,
    K.OOM_KILLED: Role.CAUSE,
    K.LAST_WORDS: Role.CAUSE,
    K.IMAGE_PULL: Role.CAUSE,
    K.SCHEDULING: Role.CAUSE,
    K.MISSING_REFERENCE: Role.CAUSE,
    K.PROBE_FAILURE: Role.CAUSE,
    K.QUOTA_REFUSAL: Role.CAUSE,
    K.DEPENDENCY_FAILURE: Role.CAUSE,
    K.CONFIG_ERROR: Role.CAUSE,
    K.SELECTOR_MISMATCH: Role.CAUSE,
    K.NETWORK_POLICY: Role.CAUSE,
    K.RBAC_DENIED: Role.CAUSE,
    K.MISCONFIGURATION: Role.CAUSE,
    K.SATURATION: Role.CAUSE,
    K.NODE_PROBLEM: Role.CAUSE,
    K.LOG_ERROR: Role.CAUSE,
    K.CHANGE: Role.CHANGE,
    K.NO_CHANGE: Role.CONTEXT,
    K.LOG_WARNING: Role.CONTEXT,
    K.MODEL_NOTE: Role.CONTEXT,
    K.OBSERVATION: Role.CONTEXT,
}

# Causes that stand on their own: the system's own account of why.
CONCLUSIVE: frozenset[K] = frozenset(
    {
        K.OOM_KILLED,
        K.IMAGE_PULL,
        K.SCHEDULING,
        K.MISSING_REFERENCE,
        K.QUOTA_REFUSAL,
        K.PROBE_FAILURE,
        K.SELECTOR_MISMATCH,
        K.NETWORK_POLICY,
        K.RBAC_DENIED,
        K.MISCONFIGURATION,
    }
)

# How specific a cause is (higher explains more precisely); ties break on timing/subject.
SPECIFICITY: dict[K, float] = {
    K.MISSING_REFERENCE: 3.0,
    K.OOM_KILLED: 3.0,
    K.IMAGE_PULL: 3.0,
    K.SCHEDULING: 3.0,
    K.QUOTA_REFUSAL: 3.0,
    K.SELECTOR_MISMATCH: 3.0,
    K.NETWORK_POLICY: 3.0,
    K.RBAC_DENIED: 3.0,
    K.MISCONFIGURATION: 2.6,
    K.PROBE_FAILURE: 2.6,
    K.CONFIG_ERROR: 2.8,
    K.LAST_WORDS: 2.5,
    K.DEPENDENCY_FAILURE: 2.4,
    K.SATURATION: 2.4,
    K.NODE_PROBLEM: 2.0,
    K.LOG_ERROR: 1.5,
}

_POD_TROUBLE = frozenset({K.CRASH_LOOP, K.CONTAINER_EXIT, K.NOT_READY, K.JOB_FAILED, K.ALERT})
_REQUESTS = frozenset({K.ERROR_RATE, K.LATENCY, K.ALERT, K.METRIC_SHIFT, K.NOT_READY})

# cause kind -> the symptom kinds it can explain
EXPLAINS: dict[K, frozenset[K]] = {
    K.OOM_KILLED: _POD_TROUBLE | {K.ERROR_RATE, K.METRIC_SHIFT},
    K.LAST_WORDS: _POD_TROUBLE,
    K.IMAGE_PULL: _POD_TROUBLE | {K.POD_PENDING},
    K.SCHEDULING: frozenset({K.POD_PENDING, K.NOT_READY, K.JOB_FAILED, K.ALERT}),
    K.MISSING_REFERENCE: _POD_TROUBLE | {K.POD_PENDING} | _REQUESTS,
    K.PROBE_FAILURE: _POD_TROUBLE | _REQUESTS,
    K.QUOTA_REFUSAL: frozenset({K.POD_PENDING, K.NOT_READY, K.JOB_FAILED, K.ALERT}),
    K.DEPENDENCY_FAILURE: _POD_TROUBLE | _REQUESTS,
    K.CONFIG_ERROR: _POD_TROUBLE | _REQUESTS,
    K.SELECTOR_MISMATCH: _REQUESTS | {K.NOT_READY},
    K.NETWORK_POLICY: _POD_TROUBLE | _REQUESTS,
    K.RBAC_DENIED: _POD_TROUBLE | _REQUESTS,
    K.MISCONFIGURATION: _POD_TROUBLE | {K.POD_PENDING} | _REQUESTS,
    K.SATURATION: _POD_TROUBLE | _REQUESTS,
    K.NODE_PROBLEM: _POD_TROUBLE | {K.POD_PENDING, K.EVICTED} | _REQUESTS,
    K.LOG_ERROR: _POD_TROUBLE | _REQUESTS,
    K.CHANGE: _POD_TROUBLE | _REQUESTS | {K.POD_PENDING},
}


def role(kind: K) -> Role:
    return ROLE.get(kind, Role.CONTEXT)


def can_explain(cause: K, symptom: K) -> bool:
    return symptom in EXPLAINS.get(cause, frozenset())


_APP_CAUSES = frozenset(
    {K.SATURATION, K.DEPENDENCY_FAILURE, K.CONFIG_ERROR, K.OOM_KILLED, K.LAST_WORDS, K.LOG_ERROR}
)

# cause kind -> deeper cause kinds that can explain it in turn (a probe that times out
# because the connection pool is exhausted; a connection failure because a Service selects
# no pod). When both are found about the same object, the deeper one is the root cause and
# the shallower one becomes its supporting evidence.
DEEPER: dict[K, frozenset[K]] = {
    K.PROBE_FAILURE: _APP_CAUSES
    | {K.MISSING_REFERENCE, K.NODE_PROBLEM, K.NETWORK_POLICY, K.RBAC_DENIED},
    # (a misconfiguration or a missing permission of the dependency itself is found through
    # the name the failing call gives, see chains._is_deeper, not by kind alone)
    K.DEPENDENCY_FAILURE: frozenset(
        {K.NETWORK_POLICY, K.SELECTOR_MISMATCH, K.MISSING_REFERENCE, K.SATURATION}
    ),
    K.LOG_ERROR: frozenset(
        {K.SATURATION, K.CONFIG_ERROR, K.NETWORK_POLICY, K.SELECTOR_MISMATCH, K.RBAC_DENIED}
    ),
    K.LAST_WORDS: frozenset({K.MISSING_REFERENCE, K.NETWORK_POLICY, K.RBAC_DENIED}),
    K.SCHEDULING: frozenset({K.NODE_PROBLEM, K.QUOTA_REFUSAL}),
    K.SATURATION: frozenset({K.NODE_PROBLEM, K.DEPENDENCY_FAILURE, K.CONFIG_ERROR}),
    K.OOM_KILLED: frozenset({K.SATURATION}),
    K.NODE_PROBLEM: frozenset(),
}

# the order in which a subject's symptoms are named in a root-cause sentence
SYMPTOM_ORDER: tuple[K, ...] = (
    K.CRASH_LOOP,
    K.POD_PENDING,
    K.JOB_FAILED,
    K.NOT_READY,
    K.ERROR_RATE,
    K.LATENCY,
    K.CONTAINER_EXIT,
    K.EVICTED,
    K.ALERT,
    K.METRIC_SHIFT,
)


def deeper(cause: K, other: K) -> bool:
    """Whether ``other`` can explain ``cause`` in turn."""
    return other in DEEPER.get(cause, frozenset())
