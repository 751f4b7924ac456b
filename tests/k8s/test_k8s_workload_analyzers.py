"""Analyzers of references, storage, quotas, HPAs, Jobs, workloads, RBAC and scheduling,
on objects of our own, fed through the analyzer registry; malformed input included."""

from __future__ import annotations

from k8s_build import NS, container, malformed_objects, node, obj, pod, workload
from k8s_observe import Feed

from opsmate.agent.observe.analyzers.k8s_common import ingest
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import FactKind as K
from opsmate.tools.base import ToolResult
from opsmate.tools.k8s_kinds import KIND_NAMES
from opsmate.tools.kubernetes.shaping_objects import shape_object

# ----------------------------------------------------------------------------- references


def cart_pod(**spec: object) -> dict:
    return pod(
        "cart-5f6d7-q1w2e",
        {"app": "cart"},
        phase="Pending",
        waiting=("ContainerCreating", ""),
        owner="ReplicaSet/cart-5f6d7",
        **spec,
    )


def test_a_mounted_secret_proven_absent() -> None:
    f = Feed()
    f.pods(
        [
            cart_pod(
                volumes=[
                    {"name": "creds", "secret": {"secretName": "cart-keys"}},
                    {"name": "opt", "secret": {"secretName": "maybe", "optional": True}},
                ]
            )
        ]
    )
    assert f.facts(K.MISSING_REFERENCE) == []  # nothing proves it yet
    proof = f.objects("Secret", [obj("Secret", "db-creds")])
    f.objects("ConfigMap", [obj("ConfigMap", "cart-keys", data={"a": "1"})])
    [fact] = f.facts(K.MISSING_REFERENCE)
    assert (
        "mounts volume `creds` from Secret `cart-keys`, which does not exist in namespace shop"
        in fact.statement
    )
    assert "(Secrets there: `db-creds`; a ConfigMap named `cart-keys` does exist)" in fact.statement
    assert proof in fact.evidence and fact.detail["ref_name"] == "cart-keys"
    assert {"Secret/shop/cart-keys", "ReplicaSet/shop/cart-5f6d7"} <= {
        o.key() for o in fact.objects
    }


def test_a_missing_configmap_key_and_a_template_reference() -> None:
    env = [
        {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "cart-config", "key": "mode"}}}
    ]
    f = Feed()
    f.pods([cart_pod(containers=[container(env=env)])])
    f.objects("ConfigMap", [obj("ConfigMap", "cart-config", data={"MODE": "x"})])
    [key] = f.facts(K.MISSING_REFERENCE)
    assert "has no key `mode` (keys: `MODE`)" in key.statement
    g = Feed()
    g.get(
        "Deployment",
        workload(
            "Deployment",
            "cart",
            {"app": "cart"},
            current=0,
            ready=0,
            containers=[container(envFrom=[{"configMapRef": {"name": "cart-env"}}])],
        ),
    )
    g.objects("ConfigMap", [obj("ConfigMap", "other")])
    [tmpl] = g.facts(K.MISSING_REFERENCE)
    assert tmpl.subject and tmpl.subject.key() == "Deployment/shop/cart"
    assert "loads its environment (envFrom) from ConfigMap `cart-env`" in tmpl.statement


def test_ingest_records_listings_and_misses() -> None:
    ctx = ObserveContext(eid="E7")
    res = ToolResult(
        call_id="c",
        tool="get_object",
        status="no_data",
        data={"kind": "Secret", "name": "gone", "found": False, "items": []},
        scope={"namespace": NS},
        args={"kind": "Secret", "name": "gone"},
    )
    ingest(res, ctx)
    assert ctx.graph.absent("Secret", NS, "gone") == "E7"
    na = res.model_copy(
        update={
            "data": {"kind": "Secret", "kinds_held": []},
            "error": {"code": "not_available", "message": "no", "retryable": False},
        }
    )
    ctx2 = ObserveContext(eid="E8")
    ingest(na, ctx2)
    assert ctx2.graph.absent("Secret", NS, "gone") is None  # not_available proves nothing
    cut = ToolResult(
        call_id="c",
        tool="list_objects",
        status="partial",
        complete=False,
        data={"kind": "Secret", "items": [shape_object("Secret", obj("Secret", "a"))]},
        scope={"namespace": NS},
        args={"kind": "Secret"},
    )
    ingest(cut, ctx2)
    assert ctx2.graph.absent("Secret", NS, "b") is None  # an incomplete list proves nothing


# ----------------------------------------------------------------------------- storage


def test_claim_on_a_missing_storage_class() -> None:
    f = Feed()
    f.pods(
        [
            pod(
                "db-0",
                {"app": "db"},
                phase="Pending",
                node=None,
                owner="StatefulSet/db",
                volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}],
            )
        ]
    )
    f.objects(
        "PersistentVolumeClaim",
        [
            obj(
                "PersistentVolumeClaim",
                "data-db-0",
                spec={"storageClassName": "ultra"},
                status={"phase": "Pending"},
            )
        ],
    )
    [pending] = f.facts(K.NOT_READY)
    assert "is not bound yet" in pending.statement
    sc = f.objects(
        "StorageClass",
        [
            obj(
                "StorageClass",
                "standard",
                None,
                metadata={"annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            )
        ],
        ns=None,
    )
    [fact] = f.facts(K.MISSING_REFERENCE)
    assert (
        "requests StorageClass `ultra` (spec.storageClassName), which does not exist"
        in fact.statement
    )
    assert "the default class is `standard`" in fact.statement and sc in fact.evidence
    assert {"Pod/shop/db-0", "StatefulSet/shop/db", "StorageClass/-/ultra"} <= {
        o.key() for o in fact.objects
    }


def test_no_default_class_and_a_missing_volume() -> None:
    f = Feed()
    f.objects(
        "PersistentVolumeClaim",
        [
            obj("PersistentVolumeClaim", "a", spec={}, status={"phase": "Pending"}),
            obj(
                "PersistentVolumeClaim",
                "b",
                spec={"volumeName": "pv-9", "storageClassName": ""},
                status={"phase": "Lost"},
            ),
        ],
    )
    f.objects("StorageClass", [obj("StorageClass", "slow", None)], ns=None)
    f.objects("PersistentVolume", [obj("PersistentVolume", "pv-1", None)], ns=None)
    keys = {x.key for x in f.facts()}
    assert {"k8s:pvc-noclass:shop:a", "k8s:pvc-volume:shop:b"} <= keys


# ----------------------------------------------------------------------------- quotas


def quota(hard: dict, used: dict) -> dict:
    return obj("ResourceQuota", "team", spec={"hard": hard}, status={"hard": hard, "used": used})


def test_quota_requires_a_field_the_template_lacks() -> None:
    f = Feed()
    f.get(
        "Deployment",
        workload(
            "Deployment",
            "api",
            {"app": "api"},
            replicas=3,
            current=0,
            ready=0,
            containers=[container("api", resources={"requests": {"cpu": "10m"}})],
        ),
    )
    f.objects("ResourceQuota", [quota({"limits.cpu": "1", "requests.cpu": "1"}, {})])
    [fact] = f.facts(K.QUOTA_REFUSAL)
    assert "ResourceQuota `team` limits `limits.cpu`" in fact.statement
    assert "container(s) `api` of Deployment `api` do not" in fact.statement
    assert "(no LimitRange of the namespace was read)" in fact.statement
    f.objects(
        "LimitRange",
        [
            obj(
                "LimitRange",
                "defaults",
                spec={"limits": [{"type": "Container", "default": {"cpu": "100m"}}]},
            )
        ],
    )
    assert f.facts(K.QUOTA_REFUSAL) == []  # a LimitRange default fills it in


def test_quota_exceeded_reported_and_inferred() -> None:
    f = Feed()
    rs = workload(
        "ReplicaSet",
        "api-7f8",
        {"app": "api"},
        replicas=3,
        current=2,
        ready=2,
        containers=[container("api", resources={"requests": {"cpu": "10m"}})],
    )
    f.get("ReplicaSet", rs)
    f.objects("ResourceQuota", [quota({"requests.cpu": "20m"}, {"requests.cpu": "20m"})])
    f.events(
        [
            obj(
                "Event",
                "api-7f8.1",
                involvedObject={"kind": "ReplicaSet", "name": "api-7f8", "namespace": NS},
                reason="FailedCreate",
                type="Warning",
                count=4,
                message='Error creating: pods "api-7f8-x" is forbidden: '
                "exceeded quota: team, requested: requests.cpu=10m, used: requests.cpu=20m, "
                "limited: requests.cpu=20m",
            )
        ]
    )
    facts = {x.key: x for x in f.facts(K.QUOTA_REFUSAL, K.SATURATION)}
    reported = facts["k8s:quota-refused:shop:team:requests.cpu:api-7f8"]
    assert (
        "requests.cpu: used 20m of hard 20m" in reported.statement and reported.evidence[0] == "E3"
    )
    assert (
        "would be exceeded: each pod of ReplicaSet `api-7f8` needs requests.cpu 10m"
        in facts["k8s:quota-exceeded:shop:team:requests.cpu:api-7f8"].statement
    )
    assert facts["k8s:quota-full:shop:team"].kind == K.SATURATION


def test_limit_range_maximum() -> None:
    f = Feed()
    f.get(
        "Deployment",
        workload(
            "Deployment",
            "big",
            {"app": "big"},
            replicas=1,
            current=0,
            ready=0,
            containers=[container("big", resources={"limits": {"memory": "8Gi"}})],
        ),
    )
    f.objects(
        "LimitRange",
        [
            obj(
                "LimitRange",
                "caps",
                spec={"limits": [{"type": "Container", "max": {"memory": "2Gi"}}]},
            )
        ],
    )
    [fact] = f.facts(K.QUOTA_REFUSAL)
    assert (
        "LimitRange `caps` sets a per-container maximum 2Gi for `limits.memory`" in fact.statement
    )


# ----------------------------------------------------------------------------- hpa, jobs, workloads


def hpa(conditions: list[dict], **status: object) -> dict:
    return obj(
        "HorizontalPodAutoscaler",
        "api",
        spec={
            "scaleTargetRef": {"kind": "Deployment", "name": "api"},
            "minReplicas": 1,
            "maxReplicas": 4,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 60},
                    },
                }
            ],
        },
        status={"conditions": conditions, **status},
    )


def test_hpa_without_metrics_names_the_container_without_a_request() -> None:
    f = Feed()
    f.get("Deployment", workload("Deployment", "api", {"app": "api"}))
    f.objects(
        "HorizontalPodAutoscaler",
        [
            hpa(
                [
                    {
                        "type": "ScalingActive",
                        "status": "False",
                        "reason": "FailedGetResourceMetric",
                        "message": "failed to get cpu utilization: missing request for cpu",
                    }
                ]
            )
        ],
    )
    [fact] = f.facts(K.MISCONFIGURATION)
    assert (
        "cannot compute its metrics (ScalingActive=False, FailedGetResourceMetric)"
        in fact.statement
    )
    assert "container(s) `app` of Deployment `api` request no cpu" in fact.statement


def test_hpa_target_missing_and_at_max() -> None:
    f = Feed()
    f.objects(
        "HorizontalPodAutoscaler",
        [
            hpa(
                [
                    {
                        "type": "AbleToScale",
                        "status": "False",
                        "reason": "FailedGetScale",
                        "message": "not found",
                    },
                    {
                        "type": "ScalingLimited",
                        "status": "True",
                        "reason": "TooManyReplicas",
                        "message": "at max",
                    },
                ],
                desiredReplicas=4,
            )
        ],
    )
    f.objects("Deployment", [workload("Deployment", "other", {"app": "o"})])
    kinds = {x.kind for x in f.facts()}
    assert {K.MISSING_REFERENCE, K.SATURATION} <= kinds


def test_failed_job_replicas_and_pdb() -> None:
    f = Feed()
    f.pods([pod("etl-x1y2z", {"job-name": "etl"}, phase="Failed", owner="Job/etl")])
    f.objects(
        "Job",
        [
            obj(
                "Job",
                "etl",
                spec={"backoffLimit": 1},
                status={
                    "failed": 2,
                    "conditions": [
                        {
                            "type": "Failed",
                            "status": "True",
                            "reason": "BackoffLimitExceeded",
                            "message": "Job has reached the specified backoff limit",
                        }
                    ],
                },
            )
        ],
    )
    [job] = f.facts(K.JOB_FAILED)
    assert (
        "Job `etl` failed (BackoffLimitExceeded" in job.statement
        and "past its backoffLimit 1" in job.statement
    )
    assert "`etl-x1y2z`" in job.statement
    f.objects(
        "Deployment",
        [workload("Deployment", "web", {"app": "web"}, replicas=3, current=3, ready=0)],
    )
    f.objects(
        "PodDisruptionBudget",
        [
            obj(
                "PodDisruptionBudget",
                "web",
                spec={"minAvailable": 3, "selector": {"matchLabels": {"app": "web"}}},
                status={"expectedPods": 3, "currentHealthy": 0, "disruptionsAllowed": 0},
            )
        ],
    )
    keys = {x.key: x for x in f.facts()}
    assert "has 0/3 replicas ready" in keys["k8s:workload-replicas:Deployment:shop:web"].statement
    assert keys["k8s:pdb:shop:web"].kind == K.MISCONFIGURATION


def test_replica_failure_condition_is_read_like_an_event() -> None:
    rs = workload("ReplicaSet", "api-1a2", {"app": "api"}, replicas=2, current=0, ready=0)
    rs["status"]["conditions"] = [
        {
            "type": "ReplicaFailure",
            "status": "True",
            "reason": "FailedCreate",
            "message": 'pods "api-1a2-" is forbidden: error looking up service account '
            'shop/api: serviceaccount "api" not found',
        }
    ]
    f = Feed()
    f.get("ReplicaSet", rs)
    [fact] = f.facts(K.MISSING_REFERENCE)
    assert "ReplicaFailure=True (FailedCreate)" in fact.statement
    assert any(o.key() == "ServiceAccount/shop/api" for o in fact.objects)


# ----------------------------------------------------------------------------- rbac


DENIED = (
    'pods is forbidden: User "system:serviceaccount:shop:reporter" cannot list resource "pods" '
    'in API group "" in the namespace "shop"'
)


def test_rbac_denial_evaluated_against_bindings() -> None:
    f = Feed()
    f.logs([f"ERROR {DENIED}"])
    f.objects(
        "RoleBinding",
        [
            obj(
                "RoleBinding",
                "reporter",
                roleRef={"kind": "Role", "name": "cm-reader"},
                subjects=[{"kind": "ServiceAccount", "name": "reporter", "namespace": NS}],
            )
        ],
    )
    # cluster bindings and the role not read yet: the API server's refusal still stands
    [early] = f.facts(K.RBAC_DENIED)
    assert "is forbidden to `list` on `pods`" in early.statement
    assert "`cm-reader` (which was not read)" in early.statement
    f.objects(
        "ClusterRoleBinding",
        [
            obj(
                "ClusterRoleBinding",
                "ops",
                None,
                roleRef={"kind": "ClusterRole", "name": "admin"},
                subjects=[{"kind": "Group", "name": "ops"}],
            )
        ],
        ns=None,
    )
    f.get(
        "Role",
        obj(
            "Role",
            "cm-reader",
            rules=[{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
        ),
    )
    [fact] = f.facts(K.RBAC_DENIED)
    assert (
        "ServiceAccount `shop/reporter` is forbidden to `list` on `pods` in namespace shop"
        in fact.statement
    )
    assert "RoleBinding `reporter` -> Role `cm-reader` (get on configmaps)" in fact.statement
    assert fact.detail["verb"] == "list" and fact.subject and fact.subject.kind == "ServiceAccount"


def test_rbac_granted_now_is_an_observation() -> None:
    f = Feed()
    f.logs([DENIED])
    f.objects(
        "RoleBinding",
        [
            obj(
                "RoleBinding",
                "other",
                roleRef={"kind": "Role", "name": "x"},
                subjects=[{"kind": "User", "name": "alice"}],
            )
        ],
    )
    f.objects(
        "ClusterRoleBinding",
        [
            obj(
                "ClusterRoleBinding",
                "all-sa",
                None,
                roleRef={"kind": "ClusterRole", "name": "pod-lister"},
                subjects=[{"kind": "Group", "name": "system:serviceaccounts"}],
            )
        ],
        ns=None,
    )
    f.get(
        "ClusterRole",
        obj(
            "ClusterRole",
            "pod-lister",
            None,
            rules=[{"apiGroups": ["*"], "resources": ["pods"], "verbs": ["list"]}],
        ),
    )
    facts = f.facts()
    assert [x.kind for x in facts] == [K.OBSERVATION] and "now grant it" in facts[0].statement


# ----------------------------------------------------------------------------- scheduling


def pending(name: str, **spec: object) -> dict:
    return pod(name, {"app": "solo"}, phase="Pending", node=None, owner="ReplicaSet/solo-1", **spec)


def test_node_selector_no_node_has() -> None:
    f = Feed()
    f.pods([pending("solo-1-a", nodeSelector={"disk": "nvme"})])
    f.nodes([node("n1", {"disk": "hdd"}), node("n2")])
    [fact] = f.facts(K.SCHEDULING)
    assert "its nodeSelector `disk=nvme` matches no node" in fact.statement
    assert "`n1` has disk=hdd" in fact.statement and "`n2` has no disk label" in fact.statement


def test_taints_anti_affinity_and_capacity() -> None:
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": "solo"}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }
    f = Feed()
    f.pods([pod("solo-1-x", {"app": "solo"}, node="n1"), pending("solo-1-b", affinity=anti)])
    f.nodes(
        [node("n1"), node("n2", taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}])]
    )
    facts = {x.detail["reason"]: x for x in f.facts(K.SCHEDULING)}
    assert (
        "required pod anti-affinity (`app=solo` per `kubernetes.io/hostname`)"
        in facts["podAntiAffinity"].statement
    )
    assert "`n1` already runs `solo-1-x`" in facts["podAntiAffinity"].statement
    assert "`gpu=yes:NoSchedule`" in facts["taint"].statement
    big = Feed()
    big.pods([pending("solo-1-c", containers=[container(resources={"requests": {"cpu": "8"}})])])
    big.nodes([node("n1", cpu="4"), node("n2", cpu="2")])
    [cap] = big.facts(K.SCHEDULING)
    assert "it requests cpu 8, more than 2 of 2 node(s) have free" in cap.statement


def test_a_fitting_node_or_an_incomplete_node_list_says_nothing() -> None:
    f = Feed()
    f.pods([pending("solo-1-d", nodeSelector={"disk": "nvme"})])
    f.nodes([node("n1", {"disk": "nvme"}), node("n2")])
    assert f.facts(K.SCHEDULING) == []


# ----------------------------------------------------------------------------- malformed


def test_malformed_and_empty_input_gives_no_exception() -> None:
    f = Feed()
    by_kind: dict[str, list[dict]] = {}
    for o in malformed_objects():
        by_kind.setdefault(o["kind"], []).append(o)
    for kind, objs in by_kind.items():
        if kind in KIND_NAMES:
            f.objects(kind, objs)
    for kind in KIND_NAMES:
        f.objects(kind, [obj(kind, f"x-{kind.lower()}", NS)])  # every kind, mostly empty
    f.logs(['User "system:serviceaccount:a" cannot get resource "x"', ""])
    f.facts()  # asserts that no analyzer raised
    ctx = ObserveContext(eid="E1")
    for data in (
        {},
        {"kind": "Widget", "items": [1]},
        {"kind": "Service", "items": "none"},
        {"kind": "Service", "items": [None, 3, {"name": 5}]},
    ):
        res = ToolResult(call_id="c", tool="list_objects", status="success", data=data)
        ingest(res, ctx)
    assert ctx.notes == []


def test_the_nodes_the_selector_allows_are_where_the_answer_lies() -> None:
    """A nodeSelector that matches some nodes is not the obstacle: what keeps the pod off
    those nodes is. Of several obstacles, the ones that alone bar a node are reported."""
    big = {"resources": {"requests": {"memory": "8Gi"}}}
    f = Feed()
    f.pods(
        [
            pod("db-0", {"app": "db"}, node="d1", containers=[container(**big)]),
            pending("solo-1-e", nodeSelector={"pool": "data"}, containers=[container(**big)]),
        ]
    )
    f.nodes(
        [
            node("g1"),
            node("g2"),
            node("d1", {"pool": "data"}, memory="10Gi"),
            node("d2", {"pool": "data"}, memory="10Gi", unschedulable=True),
        ]
    )
    [fact] = f.facts(K.SCHEDULING)
    assert fact.detail["reason"] == "cordoned" and fact.detail["alone_on"] == ["d2"]
    assert "on any of the 2 of 4 node(s) its nodeSelector `pool=data` allows" in fact.statement
    assert "nothing else keeps it off `d2`" in fact.statement


def test_a_drain_is_why_pods_move_not_why_they_cannot_land() -> None:
    f = Feed()
    f.pods([pending("solo-1-f", nodeSelector={"pool": "data"})])
    f.nodes(
        [
            node("g1"),
            node("d1", {"pool": "data"}, unschedulable=True),
            node(
                "d2",
                {"pool": "data"},
                taints=[{"key": "team", "value": "b", "effect": "NoSchedule"}],
            ),
        ]
    )
    [fact] = f.facts(K.SCHEDULING)
    assert fact.detail["reason"] == "taint" and fact.detail["alone_on"] == ["d2"]


def test_a_local_volume_ties_the_pod_to_its_node_and_that_node_is_cordoned() -> None:
    """The claim is bound to a volume that lives on one node (its required node affinity):
    that node is the only one the pod may go to, so its cordon — not the other nodes'
    taints or the volume conflict the scheduler counts on them — keeps the pod Pending."""
    f = Feed()
    f.pods(
        [
            pending(
                "db-0",
                volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}],
            )
        ]
    )
    f.objects("PersistentVolumeClaim", [obj("PersistentVolumeClaim", "data-db-0",
                                            spec={"volumeName": "pvc-1"},
                                            status={"phase": "Bound"})])  # fmt: skip
    pinned = {
        "required": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n3"]}
                    ]
                }
            ]
        }
    }
    f.objects("PersistentVolume", [obj("PersistentVolume", "pvc-1", ns=None,
                                       spec={"nodeAffinity": pinned,
                                             "claimRef": {"namespace": NS, "name": "data-db-0"}},
                                       status={"phase": "Bound"})], ns=None)  # fmt: skip
    f.nodes([
        node("cp", {"kubernetes.io/hostname": "cp"},
             taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]),
        node("n1", {"kubernetes.io/hostname": "n1"}),
        node("n3", {"kubernetes.io/hostname": "n3"}, unschedulable=True),
    ])  # fmt: skip
    [fact] = f.facts(K.SCHEDULING)
    assert fact.detail["reason"] == "cordoned" and fact.detail["alone_on"] == ["n3"]
    assert "on any of the 1 of 3 node(s) its volume `pvc-1` (kubernetes.io/hostname In (n3))" in (
        fact.statement
    )


def test_nodes_without_a_hard_spread_key_and_the_old_pool_cordoned() -> None:
    """A node-pool move: the old nodes are cordoned for the drain, the new ones lack the
    zone label a hard topology spread needs. The label, not the drain, keeps the pods off
    the new nodes; pods of one ReplicaSet are one fact (the second one counts)."""
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
               "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "solo"}}}]  # fmt: skip
    loose = [{**spread[0], "whenUnsatisfiable": "ScheduleAnyway"}]
    f = Feed()
    f.pods([pending("solo-1-a", topologySpreadConstraints=spread + loose),
            pending("solo-1-b", topologySpreadConstraints=spread)])  # fmt: skip
    zone = {"topology.kubernetes.io/zone": "fra-1"}
    f.nodes([node("old-1", zone, unschedulable=True), node("old-2", zone, unschedulable=True),
             node("new-1"), node("new-2")])  # fmt: skip
    [fact] = f.facts(K.SCHEDULING)
    assert fact.detail["reason"] == "topology spread" and fact.count == 2
    assert "`topology.kubernetes.io/zone`, which 2 of 4 node(s) lack" in fact.statement
    f2 = Feed()
    f2.pods([pending("solo-1-a", topologySpreadConstraints=loose)])
    f2.nodes([node("new-1"), node("new-2")])
    assert f2.facts(K.SCHEDULING) == []  # ScheduleAnyway: no node is filtered out
