"""One base card per fact kind: what every fact of the kind means unless a finer card
(a failure mode of the kind, selected by reason or words) says more.

Symptoms are what the user sees and never a root cause. Causes list the symptoms they
can explain (an OOM kill explains a crash loop, not a pending pod) and the deeper causes
that can explain them in turn (a probe that times out because a pool is exhausted).
Conclusive causes are the system's own account of why (the kubelet's OOMKilled with the
limit, the scheduler's message, the registry's answer); inferred ones (a container's last
words, a failing call to a dependency, an error template) need a second, independent
piece of evidence. Changes explain what began right after them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from opsmate.agent.kinds.card import Card, Role, Trait, read
from opsmate.agent.observe.facts import FactKind as K

S, C = Role.SYMPTOM, Role.CAUSE
T = Trait

_POD_TROUBLE = frozenset({K.CRASH_LOOP, K.CONTAINER_EXIT, K.NOT_READY, K.JOB_FAILED, K.ALERT})
_REQUESTS = frozenset({K.ERROR_RATE, K.LATENCY, K.ALERT, K.METRIC_SHIFT, K.NOT_READY})
_APP_CAUSES = frozenset(
    {K.SATURATION, K.DEPENDENCY_FAILURE, K.CONFIG_ERROR, K.OOM_KILLED, K.LAST_WORDS, K.LOG_ERROR}
)
POD_TROUBLE, REQUESTS, APP_CAUSES = _POD_TROUBLE, _REQUESTS, _APP_CAUSES

_DESCRIBE = "`kubectl -n {ns} describe {obj}`"
# the share of CFS periods in which a namespace's containers were throttled at their CPU limit
THROTTLING = read(
    "query_metrics",
    "how often its containers are throttled at their CPU limit",
    query='sum by (pod) (rate(container_cpu_cfs_throttled_periods_total{namespace="{ns}"}[5m])) '
    '/ sum by (pod) (rate(container_cpu_cfs_periods_total{namespace="{ns}"}[5m]))',
    type="range",
)

# TCP segments each node had to send again: packets lost on one node's path
NODE_RETRANSMITS = read(
    "query_metrics",
    "packets lost on a node's network (TCP retransmits per node)",
    query="sum by (instance) (rate(node_netstat_Tcp_RetransSegs[5m]))",
    type="range",
)

# connections each node tracks, its table's size, the connections it dropped for lack of room
NODE_CONNTRACK = read(
    "query_metrics", "connections each node tracks (conntrack)", query="node_nf_conntrack_entries"
)
NODE_CONNTRACK_LIMIT = read(
    "query_metrics",
    "each node's conntrack table size",
    query="node_nf_conntrack_entries_limit",
)
NODE_CONNTRACK_DROPS = read(
    "query_metrics",
    "connections each node dropped for a full conntrack table",
    query="sum by (instance) (rate(node_nf_conntrack_stat_drop[5m]))",
    type="range",
)

BASE: tuple[Card, ...] = (
    # -- symptoms -------------------------------------------------------------------
    Card(
        "crash-loop",
        "Container restarting in a crash loop",
        K.CRASH_LOOP,
        S,
        traits=frozenset({T.DOWN}),
        symptom_rank=0,
        shows_rank=1,
        phrase="is crash-looping",
        topics=("crashloop", "crash loop", "crash-loop", "crashlooping", "restart", "backoff"),
        asks=r"crash|restart|backoff|crashloop|重启|崩溃",
        evidence="pod status (waiting reason CrashLoopBackOff, restartCount), BackOff events",
        catalog=("k8sgpt:Pod", "HolmesGPT:KubePodCrashLooping"),
    ),
    Card(
        "container-exit",
        "Container exits with an error code",
        K.CONTAINER_EXIT,
        S,
        traits=frozenset({T.DOWN}),
        symptom_rank=6,
        shows_rank=2,
        phrase="keeps exiting",
        topics=("crashloop", "crash", "restart", "exit", "terminat"),
        evidence="pod status lastState.terminated (reason, exitCode)",
        catalog=("k8sgpt:Pod",),
    ),
    Card(
        "pod-pending",
        "Pod stuck in Pending",
        K.POD_PENDING,
        S,
        traits=frozenset({T.DOWN}),
        symptom_rank=1,
        shows_rank=4,
        phrase="is stuck in Pending",
        topics=("pending", "schedul"),
        asks=r"pending|not (?:being )?scheduled|unschedul|挂起|调度",
        evidence="pod phase Pending, PodScheduled condition, FailedScheduling events",
        catalog=("k8sgpt:Pod",),
    ),
    Card(
        "not-ready",
        "Pods or replicas not ready",
        K.NOT_READY,
        S,
        traits=frozenset({T.DOWN}),
        symptom_rank=3,
        shows_rank=5,
        phrase="is not ready",
        topics=("ready", "unavailable", "replicas", "mismatch"),
        asks=r"not ready|unavailable|0/\d|no endpoints|未就绪",
        evidence="Deployment/StatefulSet status, Ready conditions, Endpoints",
        catalog=("k8sgpt:Deployment", "k8sgpt:StatefulSet"),
    ),
    Card(
        "evicted",
        "Pod evicted",
        K.EVICTED,
        S,
        traits=frozenset({T.DOWN}),
        symptom_rank=7,
        shows_rank=3,
        phrase="was evicted",
        topics=("evict", "pressure", "disk", "memory"),
        asks=r"evict|驱逐",
        evidence="pod status reason Evicted with the kubelet's message",
        catalog=("k8sgpt:Pod",),
    ),
    Card(
        "job-failed",
        "Job failed",
        K.JOB_FAILED,
        S,
        symptom_rank=2,
        phrase="failed",
        topics=("job", "cronjob", "backoff"),
        asks=r"\bjobs?\b|cron|batch|did(?:n't| not) run|定时|任务",
        evidence="Job status conditions (BackoffLimitExceeded, DeadlineExceeded)",
        catalog=("k8sgpt:Job", "k8sgpt:CronJob"),
    ),
    Card(
        "error-rate",
        "Requests failing (5xx, failed calls)",
        K.ERROR_RATE,
        S,
        traits=frozenset({T.SHIFT, T.CALLER_SIDE}),
        symptom_rank=4,
        phrase="returns errors",
        topics=("error", "5xx", "errors"),
        asks=r"5\d\d|error|fail|错误|失败",
        evidence="request series by status code, access logs",
        catalog=("RCAEval", "AIOpsLab"),
    ),
    Card(
        "latency",
        "Requests slow",
        K.LATENCY,
        S,
        traits=frozenset({T.SHIFT, T.CALLER_SIDE}),
        symptom_rank=5,
        phrase="is slow",
        topics=("latency", "slow", "throttl"),
        asks=r"slow|latency|timeouts?|延迟|慢|超时",
        evidence="duration histograms, slow-request log lines",
        catalog=("RCAEval", "AIOpsLab"),
    ),
    Card(
        "alert",
        "An alert is firing",
        K.ALERT,
        S,
        traits=frozenset({T.QUIET}),
        symptom_rank=8,
        phrase="is alerting",
        evidence="Alertmanager / Prometheus alerts",
    ),
    Card(
        "metric-shift",
        "A metric changed sharply",
        K.METRIC_SHIFT,
        S,
        symptom_rank=9,
        phrase="changed behaviour",
        evidence="recorded series before and after the onset",
    ),
    # -- causes ---------------------------------------------------------------------
    Card(
        "oom-killed",
        "Container OOM-killed at its memory limit",
        K.OOM_KILLED,
        C,
        explains=_POD_TROUBLE | {K.ERROR_RATE, K.METRIC_SHIFT},
        deeper=frozenset({K.SATURATION}),
        conclusive=True,
        specificity=3.0,
        shows_rank=0,
        phrase="out-of-memory kills",
        check="compare memory use with the limit: `kubectl -n {ns} top pod` and "
        "`kubectl -n {ns} get {obj} -o jsonpath='{{.spec.containers[*].resources}}'`",
        mitigation="raise the memory limit of {workload} or fix what grows (a person decides; "
        "the change goes through the usual release)",
        topics=("oom", "out of memory", "memory"),
        asks=r"\boom|out of memory|memory|内存",
        evidence="pod status lastState.terminated reason OOMKilled, exit code 137, the limit",
        confirms="terminated reason OOMKilled with the container's memory limit",
        rules_out="no container terminated OOMKilled in the window",
        catalog=("k8sgpt:Pod", "HolmesGPT", "ChaosMesh:StressChaos", "RCAEval:mem"),
    ),
    Card(
        "last-words",
        "A container's last lines before it exited",
        K.LAST_WORDS,
        C,
        explains=_POD_TROUBLE,
        deeper=frozenset({K.MISSING_REFERENCE, K.NETWORK_POLICY, K.RBAC_DENIED}),
        specificity=2.5,
        traits=frozenset({T.REACHING}),
        phrase="a fatal error at start-up",
        check="read the container's last lines before it exited: "
        "`kubectl -n {ns} logs {obj} --previous --tail=50`",
        mitigation="fix the configuration or code the message names, then roll out {workload} "
        "again",
        topics=("crashloop", "crash", "restart", "exit", "startup", "fails to start"),
        evidence="the previous container instance's log",
        confirms="the same message before each restart",
        catalog=("k8sgpt:Log", "HolmesGPT"),
    ),
    Card(
        "image-pull",
        "Image cannot be pulled",
        K.IMAGE_PULL,
        C,
        explains=_POD_TROUBLE | {K.POD_PENDING},
        conclusive=True,
        specificity=3.0,
        phrase="an image that cannot be pulled",
        check="check the image reference and the registry's answer: " + _DESCRIBE + " (Events)",
        mitigation="correct the image tag or the pull secret of {workload}, or roll back",
        topics=("image", "pull", "registry"),
        asks=r"image|pull|registry|镜像",
        evidence="container waiting reason ErrImagePull / ImagePullBackOff, Failed events",
        confirms="the registry's answer in the kubelet's event",
        catalog=("k8sgpt:Pod",),
    ),
    Card(
        "scheduling",
        "Pod cannot be scheduled",
        K.SCHEDULING,
        C,
        explains=frozenset({K.POD_PENDING, K.NOT_READY, K.JOB_FAILED, K.ALERT}),
        deeper=frozenset({K.NODE_PROBLEM, K.QUOTA_REFUSAL}),
        conclusive=True,
        specificity=3.0,
        phrase="pods that cannot be scheduled",
        check="see why the scheduler cannot place it: " + _DESCRIBE + " and "
        "`kubectl describe nodes | grep -A5 Allocated`",
        mitigation="free or add capacity, or correct the requests / tolerations / affinity of "
        "{workload}",
        topics=("pending", "schedul", "affinity", "taint", "toleration", "nodeselector"),
        asks=r"pending|schedul|调度",
        reads=(read("node_conditions", "node labels, taints and capacity"),),
        evidence="FailedScheduling events: the scheduler's per-node reasons",
        confirms="the scheduler's message",
        catalog=("k8sgpt:Pod",),
    ),
    Card(
        "missing-reference",
        "A referenced object or key does not exist",
        K.MISSING_REFERENCE,
        C,
        explains=_POD_TROUBLE | {K.POD_PENDING} | _REQUESTS,
        conclusive=True,
        specificity=3.0,
        phrase="a missing referenced object",
        check="confirm the referenced object is missing: `kubectl -n {ns} get {target}`",
        mitigation="create the missing {target} (or correct the reference in {workload})",
        topics=("secret", "configmap", "config map", "volume", "mount", "claim", "storage"),
        evidence="the kubelet's or controller's message naming the object, a listing without it",
        confirms="the object is absent from a complete listing of its kind",
        rules_out="the object exists",
        catalog=("k8sgpt:Pod", "k8sgpt:Ingress", "k8sgpt:StatefulSet"),
    ),
    Card(
        "probe-failure",
        "A liveness / readiness / startup probe fails",
        K.PROBE_FAILURE,
        C,
        explains=_POD_TROUBLE | _REQUESTS,
        deeper=_APP_CAUSES | {K.MISSING_REFERENCE, K.NODE_PROBLEM, K.NETWORK_POLICY, K.RBAC_DENIED},
        conclusive=True,
        specificity=2.6,
        traits=frozenset({T.REACHING}),
        at_least=3,
        phrase="failing health probes",
        check="see the probe and its failures: " + _DESCRIBE + " (Liveness / Readiness, Events)",
        mitigation="correct the probe (path, port, timeout) of {workload} or what makes it slow",
        topics=("probe", "readiness", "liveness", "health"),
        asks=r"probe|readiness|liveness|health ?check|探针",
        evidence="Unhealthy events with the probe's answer",
        confirms="failureThreshold failures in a row",
        catalog=("k8sgpt:Pod", "HolmesGPT"),
    ),
    Card(
        "quota-refusal",
        "A ResourceQuota or LimitRange refuses pods",
        K.QUOTA_REFUSAL,
        C,
        explains=frozenset({K.POD_PENDING, K.NOT_READY, K.JOB_FAILED, K.ALERT}),
        conclusive=True,
        specificity=3.0,
        phrase="a quota refusal",
        check="compare usage with the quota: `kubectl -n {ns} describe resourcequota`",
        mitigation="raise the quota or lower the requests of {workload} (a person decides)",
        topics=("quota", "limitrange", "limit range", "overcommit"),
        asks=r"quota|limitrange|配额",
        reads=(
            read("list_objects", "quotas of the namespace", kind="ResourceQuota", namespace="{ns}"),
            read("list_objects", "limit ranges", kind="LimitRange", namespace="{ns}"),
        ),
        evidence="FailedCreate events on the ReplicaSet / Job with the admission message",
        confirms="the quota's refusal naming the resource",
        catalog=("k8sgpt:ReplicaSet", "ITBench"),
    ),
    Card(
        "admission-denied",
        "An admission webhook or policy refuses the object",
        K.ADMISSION_DENIED,
        C,
        explains=frozenset({K.POD_PENDING, K.NOT_READY, K.JOB_FAILED, K.ALERT}),
        conclusive=True,
        specificity=3.0,
        phrase="an admission policy that denies the pods",
        check="read the policy the message names: `kubectl get "
        "validatingwebhookconfigurations,mutatingwebhookconfigurations` and the policy object "
        "(Kyverno ClusterPolicy, Gatekeeper constraint, the namespace's PodSecurity labels)",
        mitigation="change {workload} to satisfy the policy, or get a reviewed exception",
        topics=("admission", "webhook", "policy", "podsecurity", "kyverno", "gatekeeper"),
        asks=r"admission|webhook|policy|denied|forbidden",
        reads=(
            read("list_objects", "admission webhooks", kind="ValidatingWebhookConfiguration"),
            read("list_objects", "mutating webhooks", kind="MutatingWebhookConfiguration"),
        ),
        evidence="FailedCreate events on the ReplicaSet / Job / StatefulSet quoting the denial",
        confirms="the admission controller's own denial naming the policy",
        rules_out="pods of the current revision were created",
        catalog=("k8sgpt:ValidatingWebhook", "ITBench:admission", "SREGym:admission"),
    ),
    Card(
        "dependency-failure",
        "Calls to a named dependency fail",
        K.DEPENDENCY_FAILURE,
        C,
        explains=_POD_TROUBLE | _REQUESTS,
        deeper=frozenset(
            {K.NETWORK_POLICY, K.SELECTOR_MISMATCH, K.MISSING_REFERENCE, K.SATURATION}
        ),
        specificity=2.4,
        traits=frozenset({T.CALLER_SIDE, T.CASCADE, T.REACHING}),
        phrase="a failing dependency",
        check="check the dependency the errors name: `kubectl -n {ns} get pods,svc,endpoints` "
        "and its own logs",
        mitigation="restore {target} (or fail over); then watch the error rate of {workload}",
        topics=("dns", "resolv", "connect", "timeout", "upstream", "unreachable"),
        evidence="the caller's error lines naming the host",
        catalog=("RCAEval", "AIOpsLab", "HolmesGPT"),
    ),
    Card(
        "config-error",
        "The application reports a configuration error",
        K.CONFIG_ERROR,
        C,
        explains=_POD_TROUBLE | _REQUESTS,
        specificity=2.8,
        traits=frozenset({T.CASCADE}),
        shows_rank=8,
        phrase="a configuration error",
        check="compare the configuration the pods started with against the last good "
        "revision: `kubectl -n {ns} rollout history deployment/{workload} --revision=N`",
        mitigation="restore the previous value (or roll back: `kubectl -n {ns} rollout undo "
        "deployment/{workload}`)",
        evidence="the application's own error naming the setting",
        catalog=("HolmesGPT",),
    ),
    Card(
        "selector-mismatch",
        "A selector matches no (ready) pod",
        K.SELECTOR_MISMATCH,
        C,
        explains=_REQUESTS | {K.NOT_READY},
        conclusive=True,
        specificity=3.0,
        phrase="a selector that matches no pod",
        check="compare the selector with the pods' labels: `kubectl -n {ns} get endpoints` and "
        "`kubectl -n {ns} get pods --show-labels`",
        mitigation="correct the selector or the labels so they match",
        topics=("endpoint", "selector", "service"),
        evidence="the Service's selector against the pods' labels, empty Endpoints",
        catalog=("k8sgpt:Service",),
    ),
    Card(
        "network-policy",
        "A NetworkPolicy denies the traffic",
        K.NETWORK_POLICY,
        C,
        explains=_POD_TROUBLE | _REQUESTS,
        conclusive=True,
        specificity=3.0,
        phrase="a NetworkPolicy that denies traffic",
        check="list the policies that select the pods: `kubectl -n {ns} get networkpolicy -o yaml`",
        mitigation="allow the traffic in the NetworkPolicy (a reviewed change), or revert the "
        "policy",
        topics=("networkpolicy", "network policy", "network"),
        evidence="NetworkPolicies selecting the client or the server, judged together",
        catalog=("k8sgpt:NetworkPolicy", "ChaosMesh:NetworkChaos partition"),
    ),
    Card(
        "rbac-denied",
        "A ServiceAccount lacks a permission",
        K.RBAC_DENIED,
        C,
        explains=_POD_TROUBLE | _REQUESTS,
        conclusive=True,
        specificity=3.0,
        shows_rank=7,
        phrase="a missing RBAC permission (no Role or RoleBinding grants it)",
        check="confirm the permission: `kubectl auth can-i --as=system:serviceaccount:{ns}:NAME "
        "VERB RESOURCE -n {ns}`",
        mitigation="grant the missing permission with a Role/RoleBinding (a reviewed change)",
        topics=("rbac", "permission", "forbidden", "serviceaccount", "role"),
        evidence="the API server's 403 message quoted by the application, Roles and bindings",
        catalog=("k8sgpt:Security", "HolmesGPT"),
    ),
    Card(
        "misconfiguration",
        "An object-level misconfiguration",
        K.MISCONFIGURATION,
        C,
        explains=_POD_TROUBLE | {K.POD_PENDING} | _REQUESTS,
        conclusive=True,
        specificity=2.6,
        phrase="a misconfiguration",
        check="inspect the object the finding names: `kubectl -n {ns} get {obj} -o yaml`",
        mitigation="correct the setting on {workload} (a reviewed change)",
        evidence="the object's spec against what it refers to",
        catalog=("k8sgpt",),
    ),
    Card(
        "saturation",
        "A resource is exhausted",
        K.SATURATION,
        C,
        explains=_POD_TROUBLE | _REQUESTS,
        deeper=frozenset({K.NODE_PROBLEM, K.DEPENDENCY_FAILURE, K.CONFIG_ERROR}),
        specificity=2.4,
        traits=frozenset({T.CASCADE}),
        shows_rank=6,
        phrase="resource exhaustion",
        check="compare use with capacity over the window (in use pinned at the maximum means "
        "exhausted; a capacity that changed points at a release)",
        mitigation="restore the previous capacity or roll back {workload}; scale only within "
        "what the backend can take",
        topics=("pool", "exhaust", "saturat", "throttl", "limit", "maxclient", "capacity"),
        evidence="usage pinned at its maximum: pools, memory, CPU, connections",
        catalog=("RCAEval:cpu", "RCAEval:mem", "HolmesGPT"),
    ),
    Card(
        "node-problem",
        "A node condition (NotReady, pressure)",
        K.NODE_PROBLEM,
        C,
        explains=_POD_TROUBLE | {K.POD_PENDING, K.EVICTED} | _REQUESTS,
        specificity=2.0,
        phrase="a node problem",
        check="check the node's conditions: `kubectl describe node {target}`",
        mitigation="cordon and drain the node, then fix or replace it (a person decides)",
        topics=("node", "kubelet", "disk", "pressure", "notready"),
        asks=r"\bnodes?\b|kubelet|节点",
        reads=(read("node_conditions", "node conditions"),),
        evidence="Node conditions, the kubelet's events",
        catalog=("k8sgpt:Node",),
    ),
    Card(
        "log-error",
        "An error template in the logs",
        K.LOG_ERROR,
        C,
        explains=_POD_TROUBLE | _REQUESTS,
        deeper=frozenset(
            {K.SATURATION, K.CONFIG_ERROR, K.NETWORK_POLICY, K.SELECTOR_MISMATCH, K.RBAC_DENIED}
        ),
        specificity=1.5,
        traits=frozenset({T.CALLER_SIDE, T.CASCADE, T.REACHING}),
        at_least=2,
        phrase="an application error",
        check="read the error in context: the log lines around its first occurrence for {workload}",
        mitigation="fix what the error names, or roll back {workload} if it began with a release",
        evidence="log templates counted before and after the onset",
        catalog=("k8sgpt:Log",),
    ),
    # -- changes and context --------------------------------------------------------
    Card(
        "change",
        "A change before the onset (rollout, config edit, one-off workload)",
        K.CHANGE,
        Role.CHANGE,
        explains=_POD_TROUBLE | _REQUESTS | {K.POD_PENDING},
        traits=frozenset({T.QUIET}),
        phrase="a change",
        check="compare the revision with the previous one: "
        "`kubectl -n {ns} rollout history deployment/{workload}`",
        mitigation="roll back: `kubectl -n {ns} rollout undo deployment/{workload}` (or fix "
        "forward)",
        asks=r"release|deploy|rollout|upgrade|change|发布|上线|变更",
        evidence="ReplicaSet revisions (the pod template diff), ConfigMap edits, Jobs",
        catalog=("HolmesGPT", "ITBench"),
    ),
    Card("no-change", "No recent change", K.NO_CHANGE, Role.CONTEXT, traits=frozenset({T.QUIET})),
    Card(
        "log-warning",
        "A warning template in the logs",
        K.LOG_WARNING,
        Role.CONTEXT,
        traits=frozenset({T.QUIET}),
    ),
    Card(
        "model-note",
        "A note from the model",
        K.MODEL_NOTE,
        Role.CONTEXT,
        traits=frozenset({T.QUIET}),
    ),
    Card(
        "observation",
        "An observation",
        K.OBSERVATION,
        Role.CONTEXT,
        traits=frozenset({T.QUIET}),
    ),
)


_BY_KIND = {c.fact: c for c in BASE}


def variant(
    kind: K,
    card_id: str,
    title: str,
    *,
    reasons: tuple[str, ...] = (),
    words: str = "",
    example: tuple[str, str] = ("", ""),
    **fields: Any,
) -> Card:
    """A failure mode finer than ``kind``'s base card: selected by ``reasons`` and/or
    ``words``; every field not given is the base card's."""
    if not reasons and not words:
        raise ValueError(f"card {card_id}: a variant needs reasons or words")
    if not example[0] and not example[1]:
        example = (reasons[0] if reasons else "", "")
    return replace(
        _BY_KIND[kind],
        id=card_id,
        title=title,
        reasons=reasons,
        words=words,
        example=example,
        **fields,
    )


def variants(kinds: tuple[tuple[K, str], ...], title: str, **fields: Any) -> tuple[Card, ...]:
    """One failure mode read from facts of several kinds (an error line and a failing call
    that quote the same refusal): a :func:`variant` per ``(kind, card id)``."""
    return tuple(variant(kind, card_id, title, **fields) for kind, card_id in kinds)
