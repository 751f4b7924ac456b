"""Scheduling and admission: why a pod is not placed or not created (the scheduler's and
the admission plugins' own messages; k8sgpt's Pod and ReplicaSet analyzers; ITBench and
SRE-benchmark scheduling / admission faults)."""

from __future__ import annotations

from opsmate.agent.kinds.card import Trait as T
from opsmate.agent.kinds.card import read
from opsmate.agent.kinds.catalog.base import variant
from opsmate.agent.observe.facts import FactKind as K

_NODES = read("node_conditions", "node labels, taints, capacity and conditions")

CARDS = (
    variant(
        K.SCHEDULING,
        "preempted-by-priority",
        "Pod preempted by a pod of higher priority (PriorityClass)",
        reasons=("Preempted",),
        example=("Preempted", "Preempted by pod 5f3c2b1a on node n1"),
        explains=frozenset(
            {K.POD_PENDING, K.NOT_READY, K.EVICTED, K.ALERT, K.ERROR_RATE, K.LATENCY, K.CRASH_LOOP}
        ),
        conclusive=True,
        specificity=3.1,
        traits=frozenset({T.EVICTS}),
        phrase="a pod evicted for one of higher priority",
        check="see who preempted it and their PriorityClass: `kubectl get events -A "
        "--field-selector reason=Preempted` and `kubectl get priorityclass`",
        mitigation="give {workload} a PriorityClass that matches its importance, or cap what "
        "the higher-priority workload may take (quota); a person decides",
        topics=("priority", "preempt", "priorityclass", "evict", "schedul"),
        evidence="Preempted events on the pod (the scheduler's own account)",
        confirms="a Preempted event naming the node, and the preemptor's PriorityClass",
        catalog=("SREGym: priority preemption", "k8sgpt:Pod"),
    ),
    variant(
        K.SCHEDULING,
        "insufficient-resources",
        "No node has the CPU / memory / pods the pod requests",
        words=r"insufficient (?:cpu|memory|ephemeral-storage|pods|nvidia|[\w./-]+)"
        r"|too many pods|insufficient",
        example=("FailedScheduling", "0/3 nodes are available: 3 Insufficient memory."),
        phrase="requests no node can fit",
        check="compare the pod's requests with what nodes have free: `kubectl describe nodes "
        "| grep -A8 Allocated` and `kubectl -n {ns} get {obj} -o yaml` (resources)",
        mitigation="lower the requests of {workload}, free capacity, or add nodes (a person "
        "decides)",
        topics=("pending", "schedul", "insufficient", "capacity", "resources"),
        asks=r"pending|insufficient|capacity|resources",
        reads=(_NODES,),
        confirms="the scheduler's Insufficient <resource> on every node",
        rules_out="a node with enough allocatable left",
        catalog=("k8sgpt:Pod", "HolmesGPT:pending resources", "ITBench:scheduling"),
    ),
    # before the placement rules: the nodes that pass the pod's zone / selector / taints
    # are the ones full of attached volumes, so the attach limit is what keeps it off them
    variant(
        K.SCHEDULING,
        "volume-attach-limit",
        "The nodes the pod may use have reached their volume attach limit (CSINode count)",
        words=r"exceed max volume count|max volume count|maximum (?:number of )?(?:attached |"
        r"attachable )?volumes|too many (?:attached )?volumes|AttachVolumeLimitExceeded",
        example=(
            "FailedScheduling",
            "0/7 nodes are available: 2 node(s) exceed max volume count, 5 node(s) had volume "
            "node affinity conflict.",
        ),
        conclusive=True,
        specificity=3.0,
        phrase="nodes at their volume attach limit (they exceed max volume count)",
        check="compare the attachable volume count of the nodes the pod may use (`kubectl get "
        "csinode -o yaml`: allocatable.count) with the volumes attached to them (`kubectl get "
        "volumeattachments`)",
        mitigation="free attach slots on those nodes (move or delete pods with volumes there), "
        "or add a node where the volume can attach (a person decides)",
        topics=("attach", "volume", "csinode", "pending", "ebs", "schedul"),
        asks=r"pending|volume|attach",
        reads=(_NODES, read("list_objects", "the nodes' attach limits", kind="CSINode")),
        confirms="the scheduler's 'exceed max volume count' for the nodes in the volume's zone",
        catalog=("k8sgpt:Pod", "classic: EBS attach limit per node", "SREGym: storage"),
    ),
    variant(
        K.SCHEDULING,
        "untolerated-taint",
        "Nodes carry a taint the pod does not tolerate",
        words=r"taint|untolerated",
        example=(
            "FailedScheduling",
            "0/3 nodes are available: 3 node(s) had untolerated taint {dedicated: gpu}.",
        ),
        phrase="a node taint the pod does not tolerate",
        check="compare the nodes' taints with the pod's tolerations: `kubectl describe nodes | "
        "grep Taints` and `kubectl -n {ns} get {obj} -o jsonpath='{{.spec.tolerations}}'`",
        mitigation="add the toleration to {workload} or remove the taint (a person decides)",
        topics=("pending", "schedul", "taint", "toleration"),
        reads=(_NODES,),
        catalog=("k8sgpt:Pod", "ITBench:scheduling"),
    ),
    variant(
        K.SCHEDULING,
        "pod-anti-affinity",
        "Pod (anti-)affinity rules cannot be met",
        words=r"anti-?affinity|pod affinity|podaffinity|affinity rules",
        example=(
            "FailedScheduling",
            "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.",
        ),
        phrase="pod anti-affinity rules no node can satisfy",
        mitigation="relax the (anti-)affinity of {workload} or add nodes (a person decides)",
        topics=("pending", "schedul", "affinity"),
        reads=(_NODES,),
        catalog=("HolmesGPT:pod anti-affinity", "ITBench:scheduling"),
    ),
    variant(
        K.SCHEDULING,
        "topology-spread",
        "Topology spread constraints cannot be met",
        words=r"topology spread|topologyspread|spread constraint",
        example=(
            "FailedScheduling",
            "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints.",
        ),
        phrase="topology spread constraints no node can satisfy",
        mitigation="relax the topologySpreadConstraints of {workload} (whenUnsatisfiable, "
        "maxSkew) or add nodes in the missing zone",
        catalog=("ITBench:scheduling",),
    ),
    variant(
        K.SCHEDULING,
        "node-selector-mismatch",
        "No node has the labels the pod's nodeSelector / affinity requires",
        words=r"node selector|nodeselector|(?<!volume )node affinity"
        r"|didn't match pod's node affinity|node\(s\) didn't match",
        example=(
            "FailedScheduling",
            "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
        ),
        phrase="a node selector no node matches",
        check="compare the pod's nodeSelector / affinity with the nodes' labels: `kubectl get "
        "nodes --show-labels`",
        mitigation="correct the nodeSelector / affinity of {workload} or label a node (a person "
        "decides)",
        topics=("pending", "schedul", "nodeselector", "node selector", "affinity"),
        reads=(_NODES,),
        catalog=(
            "k8sgpt:Pod",
            "HolmesGPT:pending node selector",
            "AIOpsLab:assign non-existent node",
        ),
    ),
    variant(
        K.SCHEDULING,
        "unbound-claim",
        "Pod waits for a PersistentVolumeClaim that is not bound",
        words=r"unbound (?:immediate )?persistentvolumeclaim|persistentvolumeclaim .* not found"
        r"|waiting for first consumer",
        example=(
            "FailedScheduling",
            "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
        ),
        needs_deeper=True,
        deeper=frozenset({K.MISCONFIGURATION, K.MISSING_REFERENCE, K.NODE_PROBLEM}),
        phrase="a volume claim that is not bound",
        reads=(
            read(
                "list_objects",
                "the claims and why they are not bound",
                kind="PersistentVolumeClaim",
                namespace="{ns}",
            ),
            read("list_objects", "storage classes", kind="StorageClass"),
        ),
        catalog=("k8sgpt:PersistentVolumeClaim", "ITBench:storage"),
    ),
    variant(
        K.SCHEDULING,
        "volume-node-affinity-conflict",
        "A bound volume can only attach where no schedulable node is (its zone)",
        words=r"volume node affinity conflict",
        example=(
            "FailedScheduling",
            "0/3 nodes are available: 3 node(s) had volume node affinity conflict.",
        ),
        conclusive=True,
        specificity=2.9,
        phrase="a bound volume pinned to a zone (its PersistentVolume's node affinity) where "
        "no schedulable node runs",
        check="compare the PersistentVolume's nodeAffinity (`kubectl get pv -o "
        "jsonpath='{{.items[*].spec.nodeAffinity}}'`) with the nodes' topology.kubernetes.io/zone "
        "labels",
        mitigation="bring a node to the volume's zone (node group / autoscaler), or restore the "
        "data to a volume in a zone that has nodes (a person decides)",
        topics=("zone", "volume", "affinity", "pending", "pv", "topology"),
        reads=(_NODES, read("list_objects", "volumes", kind="PersistentVolume")),
        catalog=("k8sgpt:Pod", "classic: zonal volume after a node-group change"),
    ),
    variant(
        K.SCHEDULING,
        "node-name-missing",
        "A pod is bound (spec.nodeName) to a node that does not exist",
        reasons=("NodeNotFound",),
        phrase="a pod bound to a node that does not exist",
        check="compare the pod's spec.nodeName with the nodes: `kubectl get nodes` and "
        "`kubectl -n {ns} get {obj} -o jsonpath='{{.spec.nodeName}}'`",
        mitigation="remove the nodeName pin from {workload} (or use a nodeSelector) so the "
        "scheduler places it (a reviewed change)",
        topics=("pending", "node", "nodename", "schedul"),
        reads=(_NODES,),
        catalog=("AIOpsLab:assign to non-existent node", "ITBench:scheduling"),
    ),
    variant(
        K.SCHEDULING,
        "nodes-cordoned-pending",
        "Pods pending because nodes are cordoned (unschedulable)",
        words=r"cordon|unschedulable:|were unschedulable|node\(s\) were unschedulable",
        example=("FailedScheduling", "0/3 nodes are available: 3 node(s) were unschedulable."),
        phrase="cordoned nodes",
        mitigation="uncordon a node once it is safe, or add capacity (a person decides)",
        reads=(_NODES,),
        catalog=("k8sgpt:Node", "ITBench:scheduling"),
    ),
    # -- admission ------------------------------------------------------------------------
    variant(
        K.QUOTA_REFUSAL,
        "quota-exceeded",
        "ResourceQuota exceeded",
        reasons=("QuotaExceeded",),
        words=r"exceeded quota",
        example=("QuotaExceeded", "exceeded quota: compute-quota, requested: limits.cpu=2"),
        phrase="a ResourceQuota that is used up",
        catalog=("k8sgpt:ReplicaSet", "HolmesGPT:cpu quota exceeded", "ITBench:admission"),
    ),
    variant(
        K.QUOTA_REFUSAL,
        "quota-missing-limits",
        "Pods lack the requests / limits a ResourceQuota requires",
        reasons=("QuotaFieldMissing",),
        words=r"must specify|failed quota",
        example=("QuotaFieldMissing", "failed quota: compute-quota: must specify limits.cpu"),
        phrase="pods without the limits a ResourceQuota requires",
        mitigation="set the requests / limits the quota requires on {workload} (or a "
        "LimitRange default)",
        catalog=("HolmesGPT:missing cpu limits", "ITBench:admission"),
    ),
    variant(
        K.SATURATION,
        "quota-used-up",
        "A ResourceQuota is fully used (the next pod will be refused)",
        reasons=("QuotaUsedUp",),
        phrase="a ResourceQuota that is used up",
        check="compare usage with the quota: `kubectl -n {ns} describe resourcequota`",
        mitigation="raise the quota or lower the requests in the namespace (a person decides)",
        topics=("quota", "resourcequota", "limit"),
        catalog=("k8sgpt:ResourceQuota", "ITBench:admission"),
    ),
    variant(
        K.QUOTA_REFUSAL,
        "limitrange-violation",
        "A LimitRange refuses the pod's requests or limits",
        reasons=("LimitRangeViolated",),
        words=r"maximum (?:cpu|memory) usage|minimum (?:cpu|memory) usage|limitrange"
        r"|limit to request ratio",
        example=(
            "LimitRangeViolated",
            "maximum memory usage per Container is 512Mi, but limit is 1Gi",
        ),
        phrase="a LimitRange that refuses the pod's resources",
        catalog=("ITBench:admission",),
    ),
    variant(
        K.ADMISSION_DENIED,
        "pod-security-violation",
        "Pod Security admission refuses the pod spec",
        words=r"podsecurity|security context constraint",
        example=("FailedCreate", 'pods "x" is forbidden: violates PodSecurity "restricted:latest"'),
        phrase="Pod Security admission refusing the pod spec",
        check="compare the namespace's `pod-security.kubernetes.io/*` labels with the pod's "
        "securityContext: `kubectl get ns {ns} --show-labels`",
        mitigation="make {workload}'s securityContext meet the namespace's level, or relabel the "
        "namespace (a reviewed change)",
        catalog=("ITBench:admission", "k8sgpt:Security"),
    ),
    variant(
        K.ADMISSION_DENIED,
        "policy-engine-denied",
        "A policy engine (Kyverno, Gatekeeper) denies the object",
        words=r"kyverno|gatekeeper|constraint|clusterpolicy|validation error",
        example=(
            "FailedCreate",
            'admission webhook "validate.kyverno.svc-fail" denied the request: validation error',
        ),
        phrase="a policy engine rule that denies the pods",
        catalog=("SREGym:admission", "ITBench:admission"),
    ),
    variant(
        K.MISSING_REFERENCE,
        "serviceaccount-missing",
        "Pods reference a ServiceAccount that does not exist",
        words=r"service ?account|serviceaccount",
        example=(
            "FailedCreate",
            'error looking up service account ns/app-sa: serviceaccount "app-sa" not found',
        ),
        phrase="a ServiceAccount that does not exist",
        catalog=("HolmesGPT:job fail no service account", "k8sgpt:ReplicaSet"),
    ),
    variant(
        K.MISCONFIGURATION,
        "webhook-unavailable",
        "An admission webhook's service is down, so creations fail",
        reasons=("WebhookUnavailable",),
        words=r"failed calling webhook|no endpoints available for service",
        reads=(
            read("list_pods", "the webhook's own pods", namespace="{obj_ns}"),
            read("get_events", "why the webhook's pods do not serve", namespace="{obj_ns}"),
        ),
        example=("WebhookUnavailable", 'failed calling webhook "x": no endpoints available'),
        phrase="an admission webhook whose service is down",
        catalog=("k8sgpt:ValidatingWebhook", "k8sgpt:MutatingWebhook"),
    ),
)
