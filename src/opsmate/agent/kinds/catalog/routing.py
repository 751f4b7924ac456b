"""Routing: Services, Endpoints, Ingresses, Gateways and load balancers (k8sgpt's Service,
Ingress, Gateway, GatewayClass and HTTPRoute analyzers; AIOpsLab's misconfigured ports and
scale-to-zero; SRE-benchmark routing faults)."""

from __future__ import annotations

from opsmate.agent.kinds.card import read
from opsmate.agent.kinds.catalog.base import variant
from opsmate.agent.observe.facts import FactKind as K

_SERVICES = read("list_objects", "Services and their selectors", kind="Service", namespace="{ns}")
_ENDPOINTS = read("list_objects", "endpoints", kind="Endpoints", namespace="{ns}")
_INGRESS = read("list_objects", "ingresses", kind="Ingress", namespace="{ns}")

CARDS = (
    variant(
        K.MISCONFIGURATION,
        "service-local-traffic-policy",
        "A Service with internalTrafficPolicy: Local has no endpoint on some callers' nodes",
        reasons=("LocalTrafficPolicy",),
        conclusive=True,
        specificity=3.0,
        phrase="a Service with internalTrafficPolicy: Local and no endpoint on the callers' nodes",
        check="`kubectl -n {ns} get svc {target} -o jsonpath='{{.spec.internalTrafficPolicy}}'` "
        "and `kubectl -n {ns} get pods -o wide` (which nodes run its endpoints, which its "
        "failing callers)",
        mitigation="set internalTrafficPolicy back to Cluster, or run an endpoint on every "
        "node its callers run on (a DaemonSet) — a person decides",
        topics=("internalTrafficPolicy", "service", "timeout", "node-local"),
        asks=r"timeout|timed out|some (?:pods|nodes|requests)|intermittent|half|connect",
        reads=(_SERVICES,),
        evidence="the Service's spec.internalTrafficPolicy and the nodes of its ready pods "
        "against the nodes of the callers that time out",
        confirms="the failing callers run on nodes without a ready endpoint; those beside one "
        "succeed",
        rules_out="callers on a node with a ready endpoint failing too",
        catalog=("k8sgpt:Service", "classic: node-local traffic policy"),
    ),
    variant(
        K.SELECTOR_MISMATCH,
        "service-selector-mismatch",
        "A Service's selector matches no pod",
        reasons=("SelectorMatchesNoPod",),
        phrase="a Service selector that matches no pod",
        reads=(_SERVICES, _ENDPOINTS),
        asks=r"endpoint|selector|service|connect|refused|unavailable|503",
        catalog=("k8sgpt:Service", "HolmesGPT:service discovery", "SREGym:routing"),
    ),
    variant(
        K.MISCONFIGURATION,
        "service-targetport-mismatch",
        "A Service sends traffic to a port nothing listens on",
        reasons=("TargetPortNotListening", "UnknownTargetPort"),
        phrase="a Service targetPort nothing listens on",
        check="compare the Service's targetPort with the containers' ports: `kubectl -n {ns} "
        "get svc {target} -o yaml` and `kubectl -n {ns} get endpoints {target}`",
        mitigation="point the Service's targetPort at the port the pods listen on (a reviewed "
        "change)",
        topics=("service", "port", "targetport", "endpoint", "refused"),
        asks=r"refused|connect|unavailable|503|port",
        reads=(_SERVICES,),
        catalog=("k8sgpt:Service", "AIOpsLab:misconfig k8s target port", "SREGym:routing"),
    ),
    variant(
        K.MISCONFIGURATION,
        "scaled-to-zero",
        "A workload behind a Service is scaled to zero",
        reasons=("ScaledToZero",),
        phrase="a workload scaled to zero replicas",
        check="see the workload's replicas and who scaled it: `kubectl -n {ns} get deploy "
        "{target}` and `kubectl -n {ns} describe deploy {target}` (Events)",
        mitigation="scale {target} back up (a person decides), and find what scaled it down",
        topics=("scale", "replicas", "zero", "unavailable", "endpoint"),
        reads=(_SERVICES,),
        catalog=("AIOpsLab:scale pod zero", "RCAEval"),
    ),
    variant(
        K.MISCONFIGURATION,
        "service-host-unknown",
        "A workload is configured with a Service name that does not exist",
        reasons=("UnknownServiceHost",),
        phrase="an address naming a Service that does not exist",
        check="compare the address the workload is configured with and the Services that "
        "exist: `kubectl -n {ns} get svc` and the pod's env",
        mitigation="correct the address in {workload}'s configuration (a reviewed change)",
        topics=("dns", "service", "resolve", "config", "address"),
        catalog=("HolmesGPT:config change impact", "blind sets"),
    ),
    variant(
        K.MISSING_REFERENCE,
        "ingress-class-missing",
        "An Ingress names an IngressClass that does not exist",
        reasons=("IngressClassNotFound",),
        phrase="an IngressClass that does not exist",
        check="compare the Ingress's class with the classes installed: `kubectl get "
        "ingressclass` and `kubectl -n {ns} get ingress -o wide`",
        mitigation="set ingressClassName to an installed class (a reviewed change)",
        topics=("ingress", "ingressclass", "class", "controller"),
        asks=r"ingress|outside|external|unreachable|from the internet|外部",
        reads=(_INGRESS, read("list_objects", "ingress classes", kind="IngressClass")),
        catalog=("k8sgpt:Ingress", "HolmesGPT:misconfigured ingress class"),
    ),
    variant(
        K.MISCONFIGURATION,
        "ingress-not-admitted",
        "No ingress controller admits the Ingress (its class is served by none)",
        reasons=("IngressNotAdmitted", "NoIngressClass"),
        phrase="an IngressClass no controller serves",
        check="compare the Ingress's class with the classes installed: `kubectl get "
        "ingressclass` and `kubectl -n {ns} get ingress -o wide`",
        mitigation="set ingressClassName to an installed class (a reviewed change)",
        topics=("ingress", "ingressclass", "class", "controller"),
        asks=r"ingress|outside|external|unreachable|from the internet|外部",
        reads=(_INGRESS, read("list_objects", "ingress classes", kind="IngressClass")),
        catalog=("k8sgpt:Ingress", "HolmesGPT:misconfigured ingress class"),
    ),
    variant(
        K.MISSING_REFERENCE,
        "ingress-backend-missing",
        "An Ingress routes to a Service that does not exist",
        reasons=("BackendServiceNotFound",),
        phrase="an Ingress backend Service that does not exist",
        check="compare the Ingress's backends with the Services: `kubectl -n {ns} describe "
        "ingress` and `kubectl -n {ns} get svc`",
        mitigation="point the Ingress at the existing Service (a reviewed change)",
        topics=("ingress", "backend", "service", "404", "503"),
        reads=(_INGRESS, _SERVICES),
        catalog=("k8sgpt:Ingress", "SREGym:routing"),
    ),
    variant(
        K.MISCONFIGURATION,
        "ingress-backend-port-missing",
        "An Ingress routes to a port its Service does not expose",
        reasons=("BackendPortNotFound",),
        phrase="an Ingress backend port the Service does not expose",
        check="compare the Ingress's backends with the Services: `kubectl -n {ns} describe "
        "ingress` and `kubectl -n {ns} get svc`",
        mitigation="point the Ingress at the existing Service and port (a reviewed change)",
        topics=("ingress", "backend", "service", "404", "503"),
        reads=(_INGRESS, _SERVICES),
        catalog=("k8sgpt:Ingress", "SREGym:routing"),
    ),
    variant(
        K.MISSING_REFERENCE,
        "ingress-tls-secret-missing",
        "An Ingress's TLS Secret does not exist",
        reasons=("TLSSecretNotFound",),
        phrase="an Ingress TLS Secret that does not exist",
        check="compare the Ingress's tls secretName with the Secrets: `kubectl -n {ns} get "
        "secret` (and cert-manager Certificates if used)",
        mitigation="create / renew the TLS Secret or correct secretName (a person decides)",
        topics=("ingress", "tls", "certificate", "secret", "https"),
        asks=r"tls|https|certificate|ssl|证书",
        # the controller serves its default certificate: clients see certificate errors, and
        # requests still reach the backend
        seen_as=r"tls|ssl|https|x509|certificate|cert_|handshake|not private|证书",
        reads=(
            _INGRESS,
            read("list_objects", "secrets (names only)", kind="Secret", namespace="{ns}"),
        ),
        catalog=("k8sgpt:Ingress",),
    ),
    variant(
        K.MISSING_REFERENCE,
        "gateway-class-missing",
        "A Gateway names a GatewayClass that does not exist",
        reasons=("GatewayClassNotFound",),
        phrase="a GatewayClass that does not exist",
        check="`kubectl get gatewayclass` and `kubectl -n {ns} describe gateway`",
        mitigation="point the Gateway at an installed GatewayClass (a reviewed change)",
        topics=("gateway", "gatewayclass", "gateway api", "route"),
        asks=r"gateway|route|ingress|outside|external",
        reads=(
            read("list_objects", "gateways", kind="Gateway", namespace="{ns}"),
            read("list_objects", "gateway classes", kind="GatewayClass"),
        ),
        catalog=("k8sgpt:Gateway",),
    ),
    variant(
        K.MISCONFIGURATION,
        "gateway-not-accepted",
        "A Gateway or its class is not accepted / programmed by the controller",
        reasons=("GatewayClassNotAccepted", "GatewayNotAccepted", "GatewayNotProgrammed"),
        phrase="a Gateway its controller does not accept",
        check="`kubectl -n {ns} describe gateway` (status.conditions) and `kubectl get "
        "gatewayclass`",
        mitigation="fix what the controller's condition names (listeners, addresses, class "
        "parameters), a reviewed change",
        topics=("gateway", "gatewayclass", "gateway api", "listener"),
        reads=(read("list_objects", "gateways", kind="Gateway", namespace="{ns}"),),
        catalog=("k8sgpt:Gateway", "k8sgpt:GatewayClass"),
    ),
    variant(
        K.MISSING_REFERENCE,
        "route-parent-or-backend-missing",
        "An HTTPRoute's parent Gateway or backend Service does not exist",
        reasons=("RouteParentNotFound", "RouteBackendNotFound"),
        phrase="an HTTPRoute whose gateway or backend does not exist",
        check="`kubectl -n {ns} describe httproute` (parentRefs, backendRefs) and `kubectl -n "
        "{ns} get gateway,svc`",
        mitigation="correct the route's parentRefs / backendRefs (a reviewed change)",
        topics=("httproute", "gateway", "route", "backend"),
        reads=(
            read("list_objects", "HTTP routes", kind="HTTPRoute", namespace="{ns}"),
            read("list_objects", "gateways", kind="Gateway", namespace="{ns}"),
            _SERVICES,
        ),
        catalog=("k8sgpt:HTTPRoute",),
    ),
    variant(
        K.MISCONFIGURATION,
        "httproute-refused",
        "An HTTPRoute is refused by its Gateway or points at a port the Service lacks",
        reasons=("RouteBackendPortNotFound", "RouteNotAllowed", "RouteNotAccepted"),
        phrase="an HTTPRoute its gateway refuses",
        check="`kubectl -n {ns} describe httproute` (status.parents conditions)",
        mitigation="allow the route's namespace on the listener, or fix the backend port (a "
        "reviewed change)",
        topics=("httproute", "gateway", "route", "listener"),
        asks=r"gateway|httproute|\broutes?\b|\b404\b",
        reads=(read("list_objects", "HTTP routes", kind="HTTPRoute", namespace="{ns}"),),
        catalog=("k8sgpt:HTTPRoute",),
    ),
    variant(
        K.MISCONFIGURATION,
        "loadbalancer-pending",
        "A LoadBalancer Service never gets an external address",
        reasons=("LoadBalancerPending", "AllocationFailed"),
        words=r"no available ips|failed to allocate|allocationfailed|ensuring load balancer",
        example=("AllocationFailed", 'Failed to allocate IP for "shop/web": no available IPs'),
        phrase="a LoadBalancer with no external address",
        check="`kubectl -n {ns} describe svc {target}` (Events) and the load-balancer "
        "controller's (MetalLB, cloud) address pools",
        mitigation="free or add addresses in the pool, or correct the Service's "
        "loadBalancerIP / annotations (a person decides)",
        topics=("loadbalancer", "load balancer", "external ip", "metallb", "address"),
        asks=r"external|load ?balancer|outside|public|ip",
        reads=(_SERVICES,),
        catalog=("SREGym:routing", "MetalLB"),
    ),
    variant(
        K.MISCONFIGURATION,
        "statefulset-service-missing",
        "A StatefulSet's governing (headless) Service does not exist",
        reasons=("GoverningServiceNotFound",),
        phrase="a StatefulSet whose headless Service does not exist",
        mitigation="create the headless Service named in spec.serviceName (a reviewed change)",
        topics=("statefulset", "headless", "service", "dns"),
        catalog=("k8sgpt:StatefulSet",),
    ),
)
