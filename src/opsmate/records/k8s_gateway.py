"""Records of the Gateway API kinds (gateway.networking.k8s.io/v1): GatewayClass, Gateway,
HTTPRoute — what routes traffic from outside when Ingress is not used."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from opsmate.records.base import Record
from opsmate.records.k8s import Condition
from opsmate.records.k8s_meta import K8sObject
from opsmate.records.types import OptInt, StrList, StrMap, Text, items


class GatewayClass(K8sObject):
    controller: Text = None  # spec.controllerName
    conditions: Annotated[list[Condition], items(Condition)] = Field(default_factory=list)


class GatewayListener(Record):
    name: Text = None
    port: OptInt = None
    protocol: Text = None
    hostname: Text = None
    tls_secrets: StrList = Field(default_factory=list)  # certificateRefs (Secret names)
    allowed_from: Text = None  # allowedRoutes.namespaces.from: Same | All | Selector
    allowed_labels: StrMap = Field(default_factory=dict)  # its selector's matchLabels


class Gateway(K8sObject):
    class_name: Text = None  # spec.gatewayClassName
    listeners: Annotated[list[GatewayListener], items(GatewayListener)] = Field(
        default_factory=list
    )
    addresses: StrList = Field(default_factory=list)  # status.addresses
    conditions: Annotated[list[Condition], items(Condition)] = Field(default_factory=list)


class RouteRef(Record):
    """A parentRef (Gateway) or a backendRef (Service) of a route."""

    kind: Text = None
    name: Text = None
    namespace: Text = None
    port: OptInt = None


class RouteParentStatus(Record):
    parent: Text = None  # the Gateway's name
    conditions: Annotated[list[Condition], items(Condition)] = Field(default_factory=list)


class HTTPRoute(K8sObject):
    hostnames: StrList = Field(default_factory=list)
    parents: Annotated[list[RouteRef], items(RouteRef)] = Field(default_factory=list)
    backends: Annotated[list[RouteRef], items(RouteRef)] = Field(default_factory=list)
    parent_status: Annotated[list[RouteParentStatus], items(RouteParentStatus)] = Field(
        default_factory=list
    )
