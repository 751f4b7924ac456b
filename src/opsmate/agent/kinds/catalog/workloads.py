"""Workloads: Jobs, CronJobs, autoscalers, disruption budgets, replica sets (k8sgpt's Job,
CronJob, HPA, PodDisruptionBudget, ReplicaSet and Deployment analyzers; ITBench; the
classic stuck-not-failing states)."""

from __future__ import annotations

from opsmate.agent.kinds.card import Trait, read
from opsmate.agent.kinds.catalog.base import variant, variants
from opsmate.agent.observe.facts import FactKind as K

_JOBS = (
    read("list_objects", "CronJobs and their schedule", kind="CronJob", namespace="{ns}"),
    read("list_objects", "Jobs and their state", kind="Job", namespace="{ns}"),
)
# what a Job or CronJob that does not run explains: its own failure or an alert about it,
# never another workload's pods
_JOB_SYMPTOMS = frozenset({K.JOB_FAILED, K.ALERT})
_HPA = read("list_objects", "autoscalers", kind="HorizontalPodAutoscaler", namespace="{ns}")

CARDS = (
    variant(
        K.MISCONFIGURATION,
        "image-architecture-mismatch",
        "An image built for one CPU architecture runs on nodes of another (exec format error)",
        reasons=("ArchitectureMismatch",),
        conclusive=True,
        specificity=3.0,
        phrase="an image that does not run on its nodes' CPU architecture",
        check="`kubectl get nodes -L kubernetes.io/arch` against where the failing pods run, "
        "and the image's platforms: `docker manifest inspect <image>`",
        mitigation="pin {workload} to the architecture its image supports (nodeSelector "
        "kubernetes.io/arch) or publish a multi-architecture image (a person decides)",
        topics=("exec format error", "architecture", "arm64", "amd64", "multi-arch"),
        asks=r"exec format|arm64|amd64|aarch64|graviton|architecture|crash|restart|half",
        reads=(read("node_conditions", "the nodes and their architecture labels"),),
        evidence="the failing pods' nodes' kubernetes.io/arch against the ready pods' nodes'",
        confirms="every failing pod on nodes of one architecture, every ready pod on another",
        rules_out="failing pods on both architectures (then: not the image's platform)",
        catalog=("classic: exec format error", "k8sgpt:Pod"),
    ),
    variant(
        K.MISCONFIGURATION,
        "sidecar-not-injected",
        "A pod was created without the containers a mutating webhook injects into its siblings",
        reasons=("NotInjected",),
        conclusive=True,
        specificity=3.0,
        phrase="a sidecar injector (mutating webhook) that did not inject the new pod",
        check="compare the new pod's containers with an older pod's (`kubectl -n {ns} get pod "
        "-o jsonpath='{{.spec.initContainers[*].name}} {{.spec.containers[*].name}}'`), then "
        "the injector's webhook (`kubectl get mutatingwebhookconfigurations`: failurePolicy, "
        "its Service) and the injector's own pods",
        mitigation="bring the injector back (its pods, its Service's endpoints), then recreate "
        "the pods it missed; a fail-open webhook for a required sidecar hides this (a person "
        "decides)",
        topics=("webhook", "injector", "sidecar", "mutating", "admission", "secrets"),
        reads=(
            read(
                "list_objects",
                "the mutating webhooks: which injects, does it fail open",
                kind="MutatingWebhookConfiguration",
            ),
        ),
        evidence="the new pod's container list against its ready siblings' and its template's",
        confirms="every older ready pod has the injected containers, the failing pod has none",
        rules_out="the new template removing them (a rollout diff that drops the containers)",
        catalog=("k8sgpt:MutatingWebhook", "classic: sidecar injector down, failing open"),
    ),
    *variants(
        ((K.LAST_WORDS, "exec-format-last-words"), (K.LOG_ERROR, "exec-format-log")),
        "A binary the runtime cannot execute on this node (exec format error)",
        words=r"exec format error",
        example=("", "exec /app/bin/server: exec format error"),
        needs_deeper=True,
        phrase="a binary its node cannot execute (exec format error)",
        check="`kubectl get nodes -L kubernetes.io/arch` against where the failing pods run",
        topics=("exec format error", "architecture", "arm64", "amd64"),
        asks=r"exec format|arm64|amd64|architecture|crash|restart",
        reads=(read("node_conditions", "the nodes and their architecture labels"),),
        deeper_cards=frozenset({"image-architecture-mismatch"}),
        catalog=("classic: exec format error",),
    ),
    variant(
        K.JOB_FAILED,
        "job-backoff-limit",
        "Job failed after its backoff limit",
        reasons=("BackoffLimitExceeded",),
        phrase="failed (backoff limit reached)",
        catalog=("k8sgpt:Job", "HolmesGPT:job failure"),
    ),
    variant(
        K.JOB_FAILED,
        "job-deadline",
        "Job killed at its activeDeadlineSeconds",
        reasons=("DeadlineExceeded",),
        phrase="failed (deadline exceeded)",
        catalog=("k8sgpt:Job",),
    ),
    variant(
        K.MISCONFIGURATION,
        "job-suspended",
        "A CronJob or Job is suspended, so nothing runs",
        reasons=("Suspended",),
        traits=frozenset({Trait.STUCK}),
        explains=_JOB_SYMPTOMS,
        conclusive=True,
        specificity=3.0,
        phrase="a suspended CronJob / Job",
        check="`kubectl -n {ns} get cronjob,job -o wide` (SUSPEND) and who set it",
        mitigation="unsuspend it once it is safe to run: `kubectl -n {ns} patch cronjob {target} "
        '-p \'{{"spec":{{"suspend":false}}}}\'` (a person decides)',
        topics=("cronjob", "job", "suspend", "schedule", "did not run"),
        asks=r"did(?:n't| not) run|never ran|not running|cron|nightly|scheduled|batch|定时",
        reads=_JOBS,
        catalog=("k8sgpt:CronJob", "classic: stuck not failing"),
    ),
    variant(
        K.MISCONFIGURATION,
        "cronjob-not-scheduling",
        "A CronJob misses its schedule (invalid schedule, missed deadline, too many misses)",
        reasons=("InvalidSchedule", "MissedSchedule", "TooManyMissedTimes", "FailedNeedsStart"),
        traits=frozenset({Trait.STUCK}),
        explains=_JOB_SYMPTOMS,
        conclusive=True,
        specificity=2.8,
        phrase="a CronJob that stopped scheduling",
        check="`kubectl -n {ns} get cronjob {target} -o yaml` (schedule, startingDeadlineSeconds, "
        "status.lastScheduleTime) and its Events",
        mitigation="correct the schedule / startingDeadlineSeconds of {target} (a reviewed change)",
        topics=("cronjob", "schedule", "missed", "did not run"),
        reads=_JOBS,
        catalog=("k8sgpt:CronJob",),
    ),
    variant(
        K.MISCONFIGURATION,
        "cronjob-blocked-by-active-job",
        "A CronJob skips its runs while an earlier Job still runs (concurrencyPolicy Forbid)",
        reasons=("JobAlreadyActive",),
        example=(
            "JobAlreadyActive",
            "Not starting job because prior execution is running and concurrency policy is Forbid",
        ),
        traits=frozenset({Trait.STUCK}),
        explains=_JOB_SYMPTOMS,
        conclusive=True,
        specificity=2.9,
        phrase="a CronJob held back by an earlier Job that never finishes",
        check="`kubectl -n {ns} get cronjob {target} -o jsonpath='{{.status.active}}'` and the "
        "active Job's pod: its last log lines and how long it has run",
        mitigation="end the hung Job (a person decides) and give the Job template an "
        "activeDeadlineSeconds so a hang cannot hold the schedule again",
        topics=("cronjob", "job", "concurrency", "forbid", "hung", "did not run"),
        reads=_JOBS,
        catalog=("k8sgpt:CronJob", "classic: stuck not failing"),
    ),
    variant(
        K.MISCONFIGURATION,
        "job-sidecar-never-exits",
        "A Job never completes because a sidecar keeps running",
        reasons=("SidecarNeverExits",),
        traits=frozenset({Trait.STUCK}),
        explains=_JOB_SYMPTOMS,
        conclusive=True,
        specificity=3.0,
        phrase="a sidecar that keeps the Job's pod running after its work is done",
        check="`kubectl -n {ns} get {obj} -o jsonpath='{{.status.containerStatuses}}'`",
        mitigation="make the sidecar exit when the main container does (native sidecar "
        "`restartPolicy: Always` init container, or a shutdown signal)",
        topics=("job", "sidecar", "istio", "never completes", "stuck"),
        catalog=("classic: stuck not failing", "Istio job sidecar"),
    ),
    variant(
        K.MISCONFIGURATION,
        "hpa-missing-requests",
        "An autoscaler cannot compute utilization: containers lack requests",
        reasons=("FailedGetResourceMetric", "FailedComputeMetricsReplicas"),
        words=r"missing request",
        example=(
            "FailedGetResourceMetric",
            "failed to get cpu utilization: missing request for cpu in container app",
        ),
        phrase="an autoscaler blind for lack of resource requests or metrics",
        check="`kubectl -n {ns} describe hpa` (Conditions) and the target's container requests",
        mitigation="set resource requests on every container of the target (or fix the metrics "
        "API), a reviewed change",
        topics=("hpa", "autoscal", "scale", "metrics", "request"),
        asks=r"scal|hpa|autoscal|扩容",
        reads=(_HPA,),
        catalog=("k8sgpt:HPA", "HolmesGPT:hpa not scaling", "ITBench"),
    ),
    variant(
        K.SATURATION,
        "hpa-at-max",
        "An autoscaler is pinned at its maximum while load is above target",
        reasons=("ScalingLimited", "TooManyReplicas"),
        words=r"desired replica count is more than the maximum|at (?:its )?max",
        example=(
            "ScalingLimited",
            "the desired replica count is more than the maximum replica count",
        ),
        # a ceiling matters only when the load it holds back shows: requests that wait or
        # fail; pinned at its maximum while nothing suffers, it is capacity to review
        seen_as=r"slow|latenc|timed? ?out|timeout|\b5\d\d\b|unavailable|throttl|backlog|\blag\b"
        r"|queue|overload|saturat",
        phrase="an autoscaler pinned at its maximum",
        check="`kubectl -n {ns} describe hpa` (ScalingLimited, current vs target)",
        mitigation="raise maxReplicas or add capacity after checking what the load is (a person "
        "decides)",
        topics=("hpa", "autoscal", "max", "scale", "capacity"),
        reads=(_HPA,),
        catalog=("k8sgpt:HPA",),
    ),
    variant(
        K.MISCONFIGURATION,
        "hpa-target-missing",
        "An autoscaler's scale target does not exist",
        reasons=("FailedGetScale",),
        phrase="an autoscaler whose target does not exist",
        catalog=("k8sgpt:HPA",),
    ),
    variant(
        K.MISCONFIGURATION,
        "pdb-blocks-drain",
        "A PodDisruptionBudget blocks evictions (a drain never finishes)",
        reasons=("EvictionBlocked", "FailedMaintenance", "DisruptionsBlocked"),
        words=r"disruption budget",
        example=(
            "EvictionBlocked",
            "Cannot evict pod as it would violate the pod's disruption budget.",
        ),
        traits=frozenset({Trait.STUCK}),
        phrase="a PodDisruptionBudget that allows no disruption",
        check="`kubectl -n {ns} get pdb` (ALLOWED DISRUPTIONS) and the pods it selects",
        mitigation="restore enough healthy pods or relax the budget for the drain (a person "
        "decides)",
        topics=("pdb", "disruption", "drain", "evict", "maintenance"),
        asks=r"drain|maintenance|upgrade|evict|cordon",
        reads=(
            read(
                "list_objects", "disruption budgets", kind="PodDisruptionBudget", namespace="{ns}"
            ),
        ),
        catalog=("k8sgpt:PDB", "ITBench"),
    ),
    variant(
        K.QUOTA_REFUSAL,
        "replicaset-failed-create",
        "A controller cannot create pods (FailedCreate)",
        reasons=("FailedCreate",),
        phrase="a controller that cannot create pods",
        catalog=("k8sgpt:ReplicaSet",),
    ),
    variant(
        K.NOT_READY,
        "replicas-unavailable",
        "Fewer replicas ready than desired",
        reasons=("ReplicasUnavailable",),
        phrase="has replicas unavailable",
        catalog=("k8sgpt:Deployment", "k8sgpt:StatefulSet"),
    ),
)
