"""Records of the Kubernetes kinds read by ``list_objects`` / ``get_object``.

One record per kind (Service, Endpoints, Ingress, NetworkPolicy, PVC, StorageClass,
RBAC, quotas, HPA, PDB, Jobs and workloads ...), built by
:mod:`opsmate.tools.kubernetes.shaping_objects` from API-shaped objects, live and replayed
alike. Every record carries ``kind``, ``name``, ``namespace``, ``labels``, ``created``
and ``owner``; pods and nodes use :class:`~opsmate.records.k8s.Pod` /
:class:`~opsmate.records.k8s.Node`. What may hold a secret is never here: ConfigMaps
give their keys, Secrets only their metadata, and annotations are left out (a
``last-applied-configuration`` annotation repeats a Secret's data).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from opsmate.records.base import Record
from opsmate.records.k8s import Condition, Node, Pod
from opsmate.records.k8s_certs import Certificate, Issuer
from opsmate.records.k8s_chaos import FAULT_EXPERIMENT_KINDS, FaultExperiment
from opsmate.records.k8s_gateway import Gateway, GatewayClass, HTTPRoute
from opsmate.records.k8s_meta import (
    K8sObject,
    LabelSelector,
    OptSelector,
    Selector,
    SelectorRequirement,
    _none,
)
from opsmate.records.k8s_workloads import (
    CronJob,
    HorizontalPodAutoscaler,
    Job,
    LimitItem,
    LimitRange,
    PodDisruptionBudget,
    ResourceQuota,
    VolumeClaimTemplate,
    Webhook,
    WebhookConfiguration,
    Workload,
)
from opsmate.records.types import (
    AnyMap,
    Flag,
    OptInt,
    StrList,
    StrMap,
    Text,
    Time,
    items,
    lenient,
)

# ----------------------------------------------------------------------------- services


class ServicePort(Record):
    name: Text = None
    port: OptInt = None
    target_port: Text = None
    protocol: Text = None
    node_port: OptInt = None


class Service(K8sObject):
    type: Text = None
    selector: StrMap = Field(default_factory=dict)  # empty: endpoints are managed by hand
    ports: Annotated[list[ServicePort], items(ServicePort)] = Field(default_factory=list)
    cluster_ip: Text = None
    external_name: Text = None
    lb_addresses: StrList = Field(default_factory=list)  # status.loadBalancer.ingress
    # spec.internalTrafficPolicy: "Local" sends a pod's calls only to endpoints on its node
    internal_traffic_policy: Text = None


class EndpointAddress(Record):
    ip: Text = None
    pod: Text = None  # targetRef name when it is a Pod
    node: Text = None


class Endpoints(K8sObject):
    """Endpoints or an EndpointSlice: the ready and not-ready addresses of a Service."""

    service: Text = None  # the Service it belongs to (EndpointSlice label; Endpoints: name)
    ready: Annotated[list[EndpointAddress], items(EndpointAddress)] = Field(default_factory=list)
    not_ready: Annotated[list[EndpointAddress], items(EndpointAddress)] = Field(
        default_factory=list
    )
    ports: StrList = Field(default_factory=list)  # "80/TCP"


class IngressBackend(Record):
    host: Text = None
    path: Text = None
    service: Text = None
    port: Text = None  # number or name
    resource: Text = None  # "Kind/name" of a resource backend


class Ingress(K8sObject):
    class_name: Text = None
    class_source: Text = None  # spec | annotation
    rules: Annotated[list[IngressBackend], items(IngressBackend)] = Field(default_factory=list)
    default_backend: Annotated[IngressBackend | None, lenient(_none)] = None
    tls_hosts: StrList = Field(default_factory=list)
    tls_secrets: StrList = Field(default_factory=list)  # spec.tls[].secretName
    addresses: StrList = Field(default_factory=list)  # status.loadBalancer.ingress
    # the protocol the controller speaks to the backends, when an annotation sets it
    # ("nginx.ingress.kubernetes.io/backend-protocol: HTTPS")
    backend_protocol: Text = None

    def services(self) -> list[str]:
        names = [b.service for b in [*self.rules, self.default_backend] if b and b.service]
        return list(dict.fromkeys(names))


class IngressClass(K8sObject):
    controller: Text = None
    is_default: Flag = False


# ----------------------------------------------------------------------------- network


class PolicyPeer(Record):
    """One peer of a NetworkPolicy rule (None selectors: that side is unrestricted)."""

    pod_selector: OptSelector = None
    namespace_selector: OptSelector = None
    ip_block: Text = None  # "10.0.0.0/8 except 10.1.0.0/16"


class PolicyRule(Record):
    """An ingress (``from``) or egress (``to``) rule: no peers = any peer, no ports = any."""

    peers: Annotated[list[PolicyPeer], items(PolicyPeer)] = Field(default_factory=list)
    ports: StrList = Field(default_factory=list)  # "TCP/80", "UDP/53", "TCP/8000-8100"


class NetworkPolicy(K8sObject):
    pod_selector: Selector = Field(default_factory=LabelSelector)
    policy_types: StrList = Field(default_factory=list)  # Ingress | Egress (as in effect)
    ingress: Annotated[list[PolicyRule], items(PolicyRule)] = Field(default_factory=list)
    egress: Annotated[list[PolicyRule], items(PolicyRule)] = Field(default_factory=list)


# ----------------------------------------------------------------------------- storage


class PersistentVolumeClaim(K8sObject):
    phase: Text = None
    storage_class: Text = None  # None: not set (the default class applies); "": no class
    volume_name: Text = None
    requested: Text = None
    capacity: Text = None
    access_modes: StrList = Field(default_factory=list)
    conditions: Annotated[list[Condition], items(Condition)] = Field(default_factory=list)


class PersistentVolume(K8sObject):
    phase: Text = None
    storage_class: Text = None
    claim: Text = None  # "namespace/name"
    capacity: Text = None
    reclaim_policy: Text = None
    reason: Text = None
    message: Text = None
    # spec.nodeAffinity as given: a local volume lives on the nodes its required terms match
    node_affinity: AnyMap = Field(default_factory=dict)


class StorageClass(K8sObject):
    provisioner: Text = None
    is_default: Flag = False
    binding_mode: Text = None
    reclaim_policy: Text = None
    allow_expansion: Flag = False


class CSINode(K8sObject):
    """A node's CSI drivers and how many volumes each may attach there."""

    attach_limits: dict[str, int] = Field(default_factory=dict)  # driver -> allocatable.count


class VolumeAttachment(K8sObject):
    attacher: Text = None  # the CSI driver
    node: Text = None
    volume: Text = None  # the PersistentVolume
    attached: Flag = False
    error: Text = None  # status.attachError.message


# ----------------------------------------------------------------------------- config


class ConfigMap(K8sObject):
    keys: StrList = Field(default_factory=list)  # data and binaryData keys
    addresses: StrMap = Field(default_factory=dict)  # address settings: key -> URL / host
    changed_at: Time = None  # the last update after creation (managedFields)
    changed_by: Text = None  # the client that made it (kubectl-edit, helm, argocd ...)
    changed_keys: StrList = Field(default_factory=list)  # keys differing from the last apply
    changes: StrList = Field(default_factory=list)  # "key: old line -> new line"


class Secret(K8sObject):
    """A Secret's existence and metadata (read as PartialObjectMetadata: no type, no keys)."""


class ServiceAccount(K8sObject):
    secrets: StrList = Field(default_factory=list)
    image_pull_secrets: StrList = Field(default_factory=list)
    automount_token: bool | None = None


class Namespace(K8sObject):
    phase: Text = None


# ----------------------------------------------------------------------------- rbac


class RbacRule(Record):
    api_groups: StrList = Field(default_factory=list)
    resources: StrList = Field(default_factory=list)
    resource_names: StrList = Field(default_factory=list)
    verbs: StrList = Field(default_factory=list)
    non_resource_urls: StrList = Field(default_factory=list)


class Role(K8sObject):
    """A Role or ClusterRole."""

    rules: Annotated[list[RbacRule], items(RbacRule)] = Field(default_factory=list)


class RbacSubject(Record):
    kind: Text = None  # ServiceAccount | User | Group
    name: Text = None
    namespace: Text = None


class RoleBinding(K8sObject):
    """A RoleBinding or ClusterRoleBinding."""

    role_kind: Text = None  # Role | ClusterRole
    role_name: Text = None
    subjects: Annotated[list[RbacSubject], items(RbacSubject)] = Field(default_factory=list)


__all__ = [
    "RECORD_TYPES",
    "CSINode",
    "Certificate",
    "ConfigMap",
    "CronJob",
    "EndpointAddress",
    "Endpoints",
    "FaultExperiment",
    "Gateway",
    "GatewayClass",
    "HTTPRoute",
    "HorizontalPodAutoscaler",
    "Ingress",
    "IngressBackend",
    "IngressClass",
    "Issuer",
    "Job",
    "K8sObject",
    "LabelSelector",
    "LimitItem",
    "LimitRange",
    "Namespace",
    "NetworkPolicy",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "PodDisruptionBudget",
    "PolicyPeer",
    "PolicyRule",
    "RbacRule",
    "RbacSubject",
    "ResourceQuota",
    "Role",
    "RoleBinding",
    "Secret",
    "SelectorRequirement",
    "Service",
    "ServiceAccount",
    "ServicePort",
    "StorageClass",
    "VolumeAttachment",
    "VolumeClaimTemplate",
    "Webhook",
    "WebhookConfiguration",
    "Workload",
    "parse_objects",
    "record_type",
]

RECORD_TYPES: dict[str, type[Record]] = {
    "Pod": Pod,
    "Node": Node,
    "Namespace": Namespace,
    "Service": Service,
    "Endpoints": Endpoints,
    "EndpointSlice": Endpoints,
    "Ingress": Ingress,
    "IngressClass": IngressClass,
    "NetworkPolicy": NetworkPolicy,
    "PersistentVolumeClaim": PersistentVolumeClaim,
    "PersistentVolume": PersistentVolume,
    "StorageClass": StorageClass,
    "CSINode": CSINode,
    "VolumeAttachment": VolumeAttachment,
    "ConfigMap": ConfigMap,
    "Secret": Secret,
    "ServiceAccount": ServiceAccount,
    "Role": Role,
    "ClusterRole": Role,
    "RoleBinding": RoleBinding,
    "ClusterRoleBinding": RoleBinding,
    "ResourceQuota": ResourceQuota,
    "LimitRange": LimitRange,
    "HorizontalPodAutoscaler": HorizontalPodAutoscaler,
    "PodDisruptionBudget": PodDisruptionBudget,
    "Job": Job,
    "CronJob": CronJob,
    "Deployment": Workload,
    "StatefulSet": Workload,
    "DaemonSet": Workload,
    "ReplicaSet": Workload,
    "ValidatingWebhookConfiguration": WebhookConfiguration,
    "MutatingWebhookConfiguration": WebhookConfiguration,
    "GatewayClass": GatewayClass,
    "Gateway": Gateway,
    "HTTPRoute": HTTPRoute,
    "Certificate": Certificate,
    "Issuer": Issuer,
    "ClusterIssuer": Issuer,
    **{k: FaultExperiment for k in FAULT_EXPERIMENT_KINDS},
}
"""The record model of each kind ``list_objects`` / ``get_object`` return."""


def record_type(kind: str | None) -> type[Record] | None:
    """The record model of ``kind`` (None for a kind that is not read)."""
    return RECORD_TYPES.get(kind or "")


def parse_objects(data: Any) -> tuple[str | None, list[Record]]:
    """The kind and the records of a ``list_objects`` / ``get_object`` answer's ``data``."""
    from opsmate.records.base import parse_list

    if not isinstance(data, dict):
        return None, []
    kind = data.get("kind") if isinstance(data.get("kind"), str) else None
    model = record_type(kind)
    if model is None:
        return kind, []
    records, _ = parse_list(model, data, "items")
    return kind, list(records)
