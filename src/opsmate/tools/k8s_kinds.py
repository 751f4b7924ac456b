"""The allow-list of Kubernetes kinds ``list_objects`` / ``get_object`` read.

Each kind names its API group, version and resource (for the URL, the fixture and the
README's ClusterRole), whether it is namespaced, and the kubernetes client class and
method stem that read it (``list_namespaced_<stem>`` / ``read_namespaced_<stem>``, or
``list_<stem>`` / ``read_<stem>`` for cluster-scoped kinds). Secrets are read as
``PartialObjectMetadata`` (``metadata_only``): their data never leaves the API server.
Anything not in this table is refused before a request is made.
"""

from __future__ import annotations

from dataclasses import dataclass

from opsmate.records.k8s_chaos import CHAOS_MESH_KINDS


@dataclass(frozen=True)
class KindInfo:
    kind: str
    group: str  # "" for the core group
    version: str
    resource: str  # the REST resource (plural, lower-case)
    namespaced: bool
    api: str  # kubernetes.client class
    stem: str  # method stem
    aliases: tuple[str, ...] = ()
    metadata_only: bool = False

    @property
    def custom(self) -> bool:
        """A custom resource, read through ``CustomObjectsApi`` by group, version, plural."""
        return self.api == "CustomObjectsApi"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def list_method(self) -> str:
        if self.custom:
            return f"list_{'namespaced' if self.namespaced else 'cluster'}_{self.stem}"
        return f"list_namespaced_{self.stem}" if self.namespaced else f"list_{self.stem}"

    def read_method(self) -> str:
        if self.custom:
            return f"get_{'namespaced' if self.namespaced else 'cluster'}_{self.stem}"
        return f"read_namespaced_{self.stem}" if self.namespaced else f"read_{self.stem}"


def _k(
    kind: str,
    group: str,
    version: str,
    resource: str,
    namespaced: bool,
    api: str,
    stem: str,
    *aliases: str,
    metadata_only: bool = False,
) -> KindInfo:
    return KindInfo(kind, group, version, resource, namespaced, api, stem, aliases, metadata_only)


CORE, APPS, BATCH = "CoreV1Api", "AppsV1Api", "BatchV1Api"
NET, RBAC = "NetworkingV1Api", "RbacAuthorizationV1Api"
CUSTOM, GW = "CustomObjectsApi", "gateway.networking.k8s.io"
CHAOS = "chaos-mesh.org"
CERTS = "cert-manager.io"

KIND_TABLE: tuple[KindInfo, ...] = (
    _k("Pod", "", "v1", "pods", True, CORE, "pod", "po"),
    _k("Service", "", "v1", "services", True, CORE, "service", "svc"),
    _k("Endpoints", "", "v1", "endpoints", True, CORE, "endpoints", "ep", "endpoint"),
    _k(
        "EndpointSlice",
        "discovery.k8s.io",
        "v1",
        "endpointslices",
        True,
        "DiscoveryV1Api",
        "endpoint_slice",
    ),
    _k("Ingress", "networking.k8s.io", "v1", "ingresses", True, NET, "ingress", "ing"),
    _k("IngressClass", "networking.k8s.io", "v1", "ingressclasses", False, NET, "ingress_class"),
    _k(
        "NetworkPolicy",
        "networking.k8s.io",
        "v1",
        "networkpolicies",
        True,
        NET,
        "network_policy",
        "netpol",
    ),
    _k(
        "PersistentVolumeClaim",
        "",
        "v1",
        "persistentvolumeclaims",
        True,
        CORE,
        "persistent_volume_claim",
        "pvc",
    ),
    _k("PersistentVolume", "", "v1", "persistentvolumes", False, CORE, "persistent_volume", "pv"),
    _k(
        "StorageClass",
        "storage.k8s.io",
        "v1",
        "storageclasses",
        False,
        "StorageV1Api",
        "storage_class",
        "sc",
    ),
    # a node's attachable volume count (allocatable.count per CSI driver) and what is attached
    _k("CSINode", "storage.k8s.io", "v1", "csinodes", False, "StorageV1Api", "csi_node"),
    _k(
        "VolumeAttachment",
        "storage.k8s.io",
        "v1",
        "volumeattachments",
        False,
        "StorageV1Api",
        "volume_attachment",
    ),
    _k("ConfigMap", "", "v1", "configmaps", True, CORE, "config_map", "cm"),
    _k("Secret", "", "v1", "secrets", True, CORE, "secret", metadata_only=True),
    _k("ServiceAccount", "", "v1", "serviceaccounts", True, CORE, "service_account", "sa"),
    _k("Role", "rbac.authorization.k8s.io", "v1", "roles", True, RBAC, "role"),
    _k(
        "RoleBinding", "rbac.authorization.k8s.io", "v1", "rolebindings", True, RBAC, "role_binding"
    ),
    _k(
        "ClusterRole",
        "rbac.authorization.k8s.io",
        "v1",
        "clusterroles",
        False,
        RBAC,
        "cluster_role",
    ),
    _k(
        "ClusterRoleBinding",
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        False,
        RBAC,
        "cluster_role_binding",
    ),
    _k("ResourceQuota", "", "v1", "resourcequotas", True, CORE, "resource_quota", "quota"),
    _k("LimitRange", "", "v1", "limitranges", True, CORE, "limit_range", "limits"),
    _k(
        "HorizontalPodAutoscaler",
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        True,
        "AutoscalingV2Api",
        "horizontal_pod_autoscaler",
        "hpa",
    ),
    _k(
        "PodDisruptionBudget",
        "policy",
        "v1",
        "poddisruptionbudgets",
        True,
        "PolicyV1Api",
        "pod_disruption_budget",
        "pdb",
    ),
    _k("Job", "batch", "v1", "jobs", True, BATCH, "job"),
    _k("CronJob", "batch", "v1", "cronjobs", True, BATCH, "cron_job", "cj"),
    _k("Deployment", "apps", "v1", "deployments", True, APPS, "deployment", "deploy"),
    _k("StatefulSet", "apps", "v1", "statefulsets", True, APPS, "stateful_set", "sts"),
    _k("DaemonSet", "apps", "v1", "daemonsets", True, APPS, "daemon_set", "ds"),
    _k("ReplicaSet", "apps", "v1", "replicasets", True, APPS, "replica_set", "rs"),
    _k("Node", "", "v1", "nodes", False, CORE, "node", "no"),
    _k("Namespace", "", "v1", "namespaces", False, CORE, "namespace", "ns"),
    _k(
        "ValidatingWebhookConfiguration",
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        False,
        "AdmissionregistrationV1Api",
        "validating_webhook_configuration",
    ),
    _k(
        "MutatingWebhookConfiguration",
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        False,
        "AdmissionregistrationV1Api",
        "mutating_webhook_configuration",
    ),
    # Gateway API (custom resources, read through CustomObjectsApi)
    _k("Gateway", GW, "v1", "gateways", True, CUSTOM, "custom_object", "gtw"),
    _k("GatewayClass", GW, "v1", "gatewayclasses", False, CUSTOM, "custom_object", "gc"),
    _k("HTTPRoute", GW, "v1", "httproutes", True, CUSTOM, "custom_object", "httproute"),
    # fault-injection experiments: what an experiment does is written only in its spec
    *(_k(k, CHAOS, "v1alpha1", k.lower(), True, CUSTOM, "custom_object") for k in CHAOS_MESH_KINDS),
    _k("ChaosEngine", "litmuschaos.io", "v1alpha1", "chaosengines", True, CUSTOM, "custom_object"),
    # cert-manager: a certificate's validity and renewal, its issuer's readiness
    _k("Certificate", CERTS, "v1", "certificates", True, CUSTOM, "custom_object", "cert"),
    _k("Issuer", CERTS, "v1", "issuers", True, CUSTOM, "custom_object"),
    _k("ClusterIssuer", CERTS, "v1", "clusterissuers", False, CUSTOM, "custom_object"),
)

KINDS: dict[str, KindInfo] = {k.kind: k for k in KIND_TABLE}
KIND_NAMES: tuple[str, ...] = tuple(KINDS)

_ALIASES: dict[str, str] = {}
for _info in KIND_TABLE:
    for _name in (_info.kind, _info.resource, _info.resource.rstrip("s"), *_info.aliases):
        _ALIASES[_name.lower()] = _info.kind
    if "." in _info.group:  # "storageclasses.storage.k8s.io"
        _ALIASES[f"{_info.resource}.{_info.group}"] = _info.kind


def canonical_kind(name: str) -> str | None:
    """The kind for a kind name, resource name or short name (``svc``, ``pvc``,
    ``networkpolicies``, ``Ingress``), case-insensitive; None when not allow-listed."""
    return _ALIASES.get(name.strip().lower())


def cluster_scoped(kind: str) -> bool:
    info = KINDS.get(kind)
    return info is not None and not info.namespaced
