"""read_message: the message templates of the kubelet, the scheduler and controllers."""

from __future__ import annotations

import pytest

from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.k8s_messages import read_message

NS = "shop"


# ----------------------------------------------------------------------------- references


def test_secret_not_found() -> None:
    r = read_message("Failed", 'Error: secret "ledger-db-creds" not found', NS)
    assert r is not None
    assert r.kind == K.MISSING_REFERENCE
    assert r.severity == "error"
    assert r.detail == {"ref_kind": "Secret", "ref_name": "ledger-db-creds"}
    assert r.refs == [("Secret", "ledger-db-creds", NS)]


def test_configmap_not_found() -> None:
    r = read_message("CreateContainerConfigError", 'configmap "tariff-table" not found', NS)
    assert r is not None
    assert r.kind == K.MISSING_REFERENCE
    assert r.detail["ref_kind"] == "ConfigMap"
    assert r.refs == [("ConfigMap", "tariff-table", NS)]


def test_not_found_in_a_mount_names_the_volume() -> None:
    msg = 'MountVolume.SetUp failed for volume "tls" : secret "edge-cert" not found'
    r = read_message("FailedMount", msg, NS)
    assert r is not None
    assert r.kind == K.MISSING_REFERENCE
    assert r.detail == {"ref_kind": "Secret", "ref_name": "edge-cert", "volume": "tls"}


def test_missing_key_in_secret_with_namespace() -> None:
    msg = "Error: couldn't find key API_TOKEN in Secret billing/payment-keys"
    r = read_message("Failed", msg, NS)
    assert r is not None
    assert r.kind == K.MISSING_REFERENCE
    assert r.detail == {"ref_kind": "Secret", "ref_name": "payment-keys", "key": "API_TOKEN"}
    assert r.refs == [("Secret", "payment-keys", "billing")]  # the message's namespace wins


def test_missing_key_in_configmap_without_namespace() -> None:
    msg = "Error: couldn't find key log.level in ConfigMap ledger-settings"
    r = read_message("CreateContainerConfigError", msg, NS)
    assert r is not None
    assert r.kind == K.MISSING_REFERENCE
    assert r.detail == {"ref_kind": "ConfigMap", "ref_name": "ledger-settings", "key": "log.level"}
    assert r.refs == [("ConfigMap", "ledger-settings", NS)]


def test_pvc_not_found() -> None:
    msg = '0/3 nodes are available: persistentvolumeclaim "orders-archive" not found.'
    r = read_message("FailedScheduling", msg, NS)
    assert r is not None
    assert r.kind == K.MISSING_REFERENCE  # the missing claim, not the scheduler's summary
    assert r.refs == [("PersistentVolumeClaim", "orders-archive", NS)]


def test_storageclass_not_found() -> None:
    msg = 'storageclass.storage.k8s.io "turbo-nvme" not found'
    r = read_message("ProvisioningFailed", msg, NS)
    assert r is not None
    assert r.kind == K.MISSING_REFERENCE
    assert r.detail["ref_kind"] == "StorageClass"
    assert r.refs == [("StorageClass", "turbo-nvme", NS)]


def test_serviceaccount_not_found() -> None:
    msg = 'Error creating: pods "reporter-" is forbidden: serviceaccount "report-bot" not found'
    r = read_message("FailedCreate", msg, NS)
    assert r is not None
    assert r.kind == K.MISSING_REFERENCE
    assert r.detail["ref_kind"] == "ServiceAccount"
    assert r.refs == [("ServiceAccount", "report-bot", NS)]


def test_serviceaccount_lookup_error_names_its_namespace() -> None:
    msg = "error looking up service account billing/report-bot: the server is unavailable"
    r = read_message("FailedCreate", msg, NS)
    assert r is not None
    assert r.kind == K.MISSING_REFERENCE
    assert r.detail == {"ref_kind": "ServiceAccount", "ref_name": "report-bot"}
    assert r.refs == [("ServiceAccount", "report-bot", "billing")]


# ----------------------------------------------------------------------------- quotas


def test_exceeded_quota_parses_resources() -> None:
    msg = (
        'Error creating: pods "ledger-6b7c8d9f0-x2x1q" is forbidden: exceeded quota: '
        "shop-compute, requested: limits.memory=2Gi,requests.memory=1Gi, "
        "used: limits.memory=7Gi,requests.memory=3Gi, "
        "limited: limits.memory=8Gi,requests.memory=4Gi"
    )
    r = read_message("FailedCreate", msg, NS)
    assert r is not None
    assert r.kind == K.QUOTA_REFUSAL
    assert r.detail["quota"] == "shop-compute"
    assert r.detail["resources"] == ["limits.memory", "requests.memory"]
    assert r.detail["requested"] == "limits.memory=2Gi,requests.memory=1Gi"
    assert r.detail["used"] == "limits.memory=7Gi,requests.memory=3Gi"
    assert r.detail["limited"] == "limits.memory=8Gi,requests.memory=4Gi"
    assert r.refs == [("ResourceQuota", "shop-compute", NS)]


def test_failed_quota_must_specify() -> None:
    msg = (
        'Error creating: pods "ledger-6b7c8d9f0-x2x1q" is forbidden: failed quota: '
        "shop-compute: must specify limits.cpu,limits.memory"
    )
    r = read_message("FailedCreate", msg, NS)
    assert r is not None
    assert r.kind == K.QUOTA_REFUSAL
    assert r.detail == {
        "quota": "shop-compute",
        "resources": ["limits.cpu", "limits.memory"],
        "must_specify": True,
    }
    assert r.refs == [("ResourceQuota", "shop-compute", NS)]


def test_limitrange_maximum_usage() -> None:
    msg = (
        'Error creating: pods "ledger-6b7c8d9f0-x2x1q" is forbidden: '
        "maximum memory usage per Container is 1Gi, but limit is 3Gi"
    )
    r = read_message("FailedCreate", msg, NS)
    assert r is not None
    assert r.kind == K.QUOTA_REFUSAL
    assert r.detail == {"limit_range": True, "resources": ["memory"], "allowed": "1Gi"}


def test_limitrange_minimum_usage_per_pod() -> None:
    msg = "minimum cpu usage per Pod is 200m, but request is 50m"
    r = read_message("FailedCreate", msg, NS)
    assert r is not None
    assert r.kind == K.QUOTA_REFUSAL
    assert r.detail["resources"] == ["cpu"]
    assert r.detail["allowed"] == "200m"


# ----------------------------------------------------------------------------- RBAC


def test_rbac_forbidden() -> None:
    msg = (
        'pods is forbidden: User "system:serviceaccount:shop:reporter" cannot list '
        'resource "pods" in API group "" in the namespace "shop"'
    )
    r = read_message(None, msg, NS)
    assert r is not None
    assert r.kind == K.RBAC_DENIED
    assert r.detail == {
        "user": "system:serviceaccount:shop:reporter",
        "verb": "list",
        "resource": "pods",
        "api_group": "",
        "namespace": "shop",
    }


def test_rbac_forbidden_cluster_scope_with_group() -> None:
    msg = (
        'nodes is forbidden: User "system:serviceaccount:ops:scanner" cannot watch '
        'resource "nodes" in API group "metrics.k8s.io"'
    )
    r = read_message(None, msg, NS)
    assert r is not None
    assert r.kind == K.RBAC_DENIED
    assert r.detail["verb"] == "watch"
    assert r.detail["api_group"] == "metrics.k8s.io"
    assert r.detail["namespace"] is None


# ----------------------------------------------------------------------------- images

IMAGE = "registry.example.internal/shop/ledger:9.9.9"


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("ErrImagePull", f'Failed to pull image "{IMAGE}": rpc error: code = NotFound'),
        ("ImagePullBackOff", f'Back-off pulling image "{IMAGE}"'),
    ],
)
def test_image_pull_by_reason(reason: str, message: str) -> None:
    r = read_message(reason, message, NS)
    assert r is not None
    assert r.kind == K.IMAGE_PULL
    assert r.detail == {"image": IMAGE}


def test_image_pull_reason_without_message() -> None:
    r = read_message("InvalidImageName", None, NS)
    assert r is not None
    assert r.kind == K.IMAGE_PULL
    assert r.detail == {"image": None}


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("Failed", f'Failed to pull image "{IMAGE}": manifest unknown'),
        ("BackOff", f'Back-off pulling image "{IMAGE}"'),
    ],
)
def test_image_pull_by_message(reason: str, message: str) -> None:
    r = read_message(reason, message, NS)
    assert r is not None
    assert r.kind == K.IMAGE_PULL  # a BackOff pulling an image is not a crash loop
    assert r.detail["image"] == IMAGE


# ----------------------------------------------------------------------------- probes


@pytest.mark.parametrize(
    ("message", "probe", "output"),
    [
        (
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            "readiness",
            "HTTP probe failed with statuscode: 503",
        ),
        (
            'Liveness probe failed: Get "http://10.4.2.9:8081/livez": connection refused',
            "liveness",
            'Get "http://10.4.2.9:8081/livez": connection refused',
        ),
        (
            "Startup probe failed: dial tcp 10.4.2.9:9000: i/o timeout",
            "startup",
            "dial tcp 10.4.2.9:9000: i/o timeout",
        ),
    ],
)
def test_probe_failed(message: str, probe: str, output: str) -> None:
    r = read_message("Unhealthy", message, NS)
    assert r is not None
    assert r.kind == K.PROBE_FAILURE
    assert r.detail == {"probe": probe, "output": output}


# ----------------------------------------------------------------------------- scheduling, jobs


def test_failed_scheduling() -> None:
    msg = (
        "0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: batch}, "
        "3 Insufficient memory. preemption: 0/4 nodes are available"
    )
    r = read_message("FailedScheduling", msg, NS)
    assert r is not None
    assert r.kind == K.SCHEDULING
    assert r.detail == {"scheduler_message": msg}


def test_scheduler_message_without_reason() -> None:
    msg = "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
    r = read_message(None, msg, NS)
    assert r is not None
    assert r.kind == K.SCHEDULING


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("BackoffLimitExceeded", "Job has reached the specified backoff limit"),
        ("DeadlineExceeded", "Job was active longer than specified deadline"),
        ("Failed", "Job failed: BackoffLimitExceeded"),
    ],
)
def test_job_failed(reason: str, message: str) -> None:
    r = read_message(reason, message, NS)
    assert r is not None
    assert r.kind == K.JOB_FAILED
    assert r.detail == {"job_reason": reason}


# ----------------------------------------------------------------------------- kubelet


def test_oom_killing() -> None:
    msg = "Memory cgroup out of memory: Killed process 4242 (java) total-vm:812344kB"
    r = read_message("OOMKilling", msg, NS)
    assert r is not None
    assert r.kind == K.OOM_KILLED


def test_evicted_with_low_on_resource() -> None:
    msg = (
        "The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, "
        "available: 512Mi. Container ledger was using 3Gi, request is 0."
    )
    r = read_message("Evicted", msg, NS)
    assert r is not None
    assert r.kind == K.EVICTED
    assert r.detail == {
        "resource": "ephemeral-storage",
        "container": "ledger",
        "usage": "3Gi",
        "request": "0",
    }


def test_eviction_named_only_in_the_message() -> None:
    msg = "Pod was evicted: the node was low on resource: memory."
    r = read_message("Killing", msg, NS)
    assert r is not None
    assert r.kind == K.EVICTED
    assert r.detail["resource"] == "memory"


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("BackOff", "Back-off restarting failed container ledger in pod ledger-0_shop(abc)"),
        # the kubelet's waiting message of a CrashLoopBackOff container
        (
            "CrashLoopBackOff",
            "back-off 40s restarting failed container=ledger pod=ledger-0_shop(abc)",
        ),
    ],
)
def test_backoff_restarting(reason: str | None, message: str) -> None:
    r = read_message(reason, message, NS)
    assert r is not None
    assert r.kind == K.CRASH_LOOP
    assert r.severity == "warning"


def test_failed_mount_without_a_missing_object() -> None:
    msg = (
        "Unable to attach or mount volumes: unmounted volumes=[archive], unattached "
        "volumes=[archive kube-api-access-7xk2p]: timed out waiting for the condition"
    )
    r = read_message("FailedMount", msg, NS)
    assert r is not None
    assert r.kind == K.MISCONFIGURATION
    assert r.severity == "warning"


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("NodeNotReady", "Node worker-7 status is now: NodeNotReady"),
        ("NodeHasDiskPressure", "Node worker-7 status is now: NodeHasDiskPressure"),
        ("NodeHasMemoryPressure", "Node worker-7 status is now: NodeHasMemoryPressure"),
        ("EvictionThresholdMet", "Attempting to reclaim ephemeral-storage"),
    ],
)
def test_node_conditions(reason: str, message: str) -> None:
    r = read_message(reason, message, None)
    assert r is not None
    assert r.kind == K.NODE_PROBLEM
    assert r.severity == "error"


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        (
            "FailedGetResourceMetric",
            "failed to get cpu utilization: unable to get metrics for resource cpu: "
            "no metrics returned from resource metrics API",
        ),
        (
            "FailedComputeMetricsReplicas",
            "invalid metrics (1 invalid out of 1), first error is: failed to get cpu "
            "resource metric value: missing request for cpu in container ledger",
        ),
        ("FailedGetScale", 'no matches for kind "Deployment" in group "extensions"'),
    ],
)
def test_hpa_metric_failures(reason: str, message: str) -> None:
    r = read_message(reason, message, NS)
    assert r is not None
    assert r.kind == K.MISCONFIGURATION
    assert r.detail == {"hpa": True}


def test_container_config_error_without_a_known_template() -> None:
    r = read_message("CreateContainerConfigError", "Error: container has runAsNonRoot", NS)
    assert r is not None
    assert r.kind == K.CONFIG_ERROR


def test_sandbox_failure_is_a_node_warning() -> None:
    r = read_message("FailedCreatePodSandBox", "failed to setup network for sandbox", NS)
    assert r is not None
    assert r.kind == K.NODE_PROBLEM
    assert r.severity == "warning"


# ----------------------------------------------------------------------------- none


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("Scheduled", "Successfully assigned shop/ledger-0 to worker-2"),
        ("Pulled", 'Successfully pulled image "registry.example.internal/shop/ledger:1.0"'),
        ("Started", "Started container ledger"),
        (None, None),
        ("", "   "),
    ],
)
def test_other_messages_are_none(reason: str | None, message: str | None) -> None:
    assert read_message(reason, message, NS) is None


def test_a_sandbox_that_gets_no_ip_address_is_the_pod_network_exhausted() -> None:
    msg = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup '
           'network for sandbox "16a8": plugin type="x-cni" failed (add): add cmd: failed to '
           "assign an IP address to container")  # fmt: skip
    reading = read_message("FailedCreatePodSandBox", msg, "chat")
    assert reading is not None and reading.kind == K.SATURATION
    other = read_message("FailedCreatePodSandBox", "failed to create containerd task: EOF", "x")
    assert other is not None and other.kind == K.NODE_PROBLEM  # the runtime, not IPs


def test_a_preemption_is_the_schedulers_eviction_for_higher_priority() -> None:
    r = read_message("Preempted", "Preempted by pod 5f3c2b1a on node n1", NS)
    assert r is not None and r.kind == K.SCHEDULING and "higher priority" in r.meaning


def test_a_cronjob_skipping_runs_for_an_active_job_is_held_back_by_it() -> None:
    r = read_message(
        "JobAlreadyActive",
        "Not starting job because prior execution is running and concurrency policy is Forbid",
        NS,
    )
    assert r is not None and r.kind == K.MISCONFIGURATION
    assert "concurrencyPolicy: Forbid" in r.meaning


def test_a_volume_pinned_to_a_zone_without_nodes_is_not_a_selector_or_an_unbound_claim() -> None:
    from opsmate.agent.kinds import card_for
    from opsmate.agent.observe.facts import Fact

    def mode(message: str) -> str:
        f = Fact(key="k", statement=message, evidence=[], kind=K.SCHEDULING,
                 reason="FailedScheduling", quote=message)  # fmt: skip
        return card_for(f).id

    assert mode("0/4 nodes are available: 4 node(s) had volume node affinity conflict.") == (
        "volume-node-affinity-conflict"
    )
    assert mode(
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."
    ) == ("node-selector-mismatch")
    assert mode("0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.") == (
        "unbound-claim"
    )
