"""Gateway API objects, Ingress TLS Secrets, LoadBalancer addresses and StatefulSet governing
Services, on objects of our own, fed through the analyzer registry."""

from __future__ import annotations

from k8s_build import NS, obj
from k8s_observe import Feed

from opsmate.agent.kinds import card_for
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.state import TaskState


def gateway(cls: str, **status: object) -> dict:
    spec = {
        "gatewayClassName": cls,
        "listeners": [
            {
                "name": "https",
                "port": 443,
                "protocol": "HTTPS",
                "tls": {"certificateRefs": [{"name": "shop-tls"}]},
            }
        ],
    }
    return obj("Gateway", "shop-gw", spec=spec, status=status)


def route(parent: str = "shop-gw", backend: str = "web", port: int = 80, **status: object) -> dict:
    spec = {
        "hostnames": ["shop.example.test"],
        "parentRefs": [{"name": parent}],
        "rules": [{"backendRefs": [{"name": backend, "port": port}]}],
    }
    return obj("HTTPRoute", "shop-route", spec=spec, status=status)


def svc(name: str, **spec: object) -> dict:
    return obj("Service", name, spec={"selector": {"app": name}, "ports": [{"port": 80}], **spec})


def test_gateway_class_proven_missing() -> None:
    f = Feed()
    f.objects("Gateway", [gateway("istio")])
    assert f.facts(K.MISSING_REFERENCE) == []  # not yet proven absent
    proof = f.objects("GatewayClass", [obj("GatewayClass", "envoy", None)], ns=None)
    [fact] = f.facts(K.MISSING_REFERENCE)
    assert (
        "GatewayClass `istio`" in fact.statement and "(GatewayClasses: `envoy`)" in fact.statement
    )
    assert proof in fact.evidence and fact.conclusive
    assert card_for(fact).id == "gateway-class-missing"


def test_gateway_refused_by_its_controller() -> None:
    f = Feed()
    cond = {"type": "Programmed", "status": "False", "reason": "AddressNotAssigned",
            "message": "No addresses have been assigned to the Gateway"}  # fmt: skip
    f.objects("Gateway", [gateway("envoy", conditions=[cond])])
    [fact] = f.facts(K.MISCONFIGURATION)
    assert "not Programmed (AddressNotAssigned)" in fact.statement
    assert fact.reason == "GatewayNotProgrammed"


def test_route_parent_and_backend_missing_and_wrong_port() -> None:
    f = Feed()
    f.objects("HTTPRoute", [route(parent="gone-gw", backend="gone")])
    f.objects("Gateway", [gateway("envoy")])
    f.objects("Service", [svc("web")])
    facts = f.facts(K.MISSING_REFERENCE)
    reasons = sorted(x.reason or "" for x in facts)
    assert reasons == ["RouteBackendNotFound", "RouteParentNotFound"]
    assert {card_for(x).id for x in facts} == {"route-parent-or-backend-missing"}
    g = Feed()
    g.objects("HTTPRoute", [route(port=8080)])
    g.objects("Service", [svc("web")])
    [port] = g.facts(K.MISCONFIGURATION)
    assert "port 8080 of Service `web`, which exposes only `80`" in port.statement


def test_route_not_accepted_by_its_gateway() -> None:
    f = Feed()
    refused = {"type": "Accepted", "status": "False", "reason": "NotAllowedByListeners",
               "message": "no listener allows routes from namespace shop"}  # fmt: skip
    f.objects("HTTPRoute", [route(parents=[{"parentRef": {"name": "shop-gw"},
                                            "conditions": [refused]}])])  # fmt: skip
    [fact] = f.facts(K.MISCONFIGURATION)
    assert "NotAllowedByListeners" in fact.statement and fact.reason == "RouteNotAllowed"


def test_tls_secrets_of_ingress_and_gateway_proven_missing() -> None:
    f = Feed()
    ing = obj("Ingress", "web", spec={"tls": [{"hosts": ["a.test"], "secretName": "web-tls"}]})
    f.objects("Ingress", [ing])
    f.objects("Gateway", [gateway("envoy")])
    assert f.facts(K.MISSING_REFERENCE) == []
    f.objects("Secret", [obj("Secret", "other")])
    facts = f.facts(K.MISSING_REFERENCE)
    assert sorted(x.objects[0].name for x in facts) == ["shop-tls", "web-tls"]
    assert all(card_for(x).id == "ingress-tls-secret-missing" for x in facts)


def test_load_balancer_without_address_and_governing_service_missing() -> None:
    f = Feed()
    f.objects("Service", [svc("web", type="LoadBalancer")])
    event = obj(
        "Event", "web.1", reason="AllocationFailed", type="Warning",
        message='Failed to allocate IP for "shop/web": no available IPs',
        involvedObject={"kind": "Service", "name": "web", "namespace": NS},
    )  # fmt: skip
    f.events([event])
    sts = obj("StatefulSet", "db", spec={"serviceName": "db-headless", "replicas": 1})
    f.objects("StatefulSet", [sts])
    reasons = {x.reason: x for x in f.facts(K.MISCONFIGURATION)}
    assert "no available IPs" in reasons["LoadBalancerPending"].statement
    assert card_for(reasons["LoadBalancerPending"]).id == "loadbalancer-pending"
    assert "GoverningServiceNotFound" in reasons
    with_ip = Feed()
    with_ip.objects("Service", [svc("web", type="LoadBalancer") | {
        "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}}}])  # fmt: skip
    with_ip.events([event])
    assert with_ip.facts(K.MISCONFIGURATION) == []


def test_a_route_refused_by_a_shared_gateway_says_which_namespaces_its_listeners_admit() -> None:
    """A shared Gateway in a namespace of its own whose listeners admit routes only from
    namespaces with a label: with the route's Namespace read, the label it lacks is named."""
    refused = {
        "type": "Accepted",
        "status": "False",
        "reason": "NotAllowedByListeners",
        "message": "No listeners included by this parent ref allowed this attachment.",
    }
    parent = {"parentRef": {"name": "shared-gw", "namespace": "gw"}, "conditions": [refused]}
    r = route(parents=[parent])
    r["spec"]["parentRefs"] = [{"name": "shared-gw", "namespace": "gw"}]  # fmt: skip
    listener = {"name": "https", "port": 443, "protocol": "HTTPS",
                "allowedRoutes": {"namespaces": {"from": "Selector", "selector": {
                    "matchLabels": {"gateway-access": "shared"}}}}}  # fmt: skip
    shared = obj("Gateway", "shared-gw", "gw", spec={"gatewayClassName": "envoy",
                                                   "listeners": [listener]})  # fmt: skip
    f = Feed()
    f.objects("HTTPRoute", [r])
    f.get("Gateway", shared)
    [fact] = f.facts(K.MISCONFIGURATION)
    assert "admit routes only from namespaces labelled gateway-access=shared" in fact.statement
    f.get("Namespace", obj("Namespace", NS, None, labels={"team": "shop"}))
    [fact] = f.facts(K.MISCONFIGURATION)
    assert f"namespace `{NS}` lacks the label gateway-access=shared" in fact.statement
    same = obj(
        "Gateway",
        "shared-gw",
        "gw",
        spec={"gatewayClassName": "envoy", "listeners": [{"name": "http", "port": 80}]},
    )
    g = Feed()
    g.objects("HTTPRoute", [r])
    g.get("Gateway", same)
    [fact] = g.facts(K.MISCONFIGURATION)
    assert "admit routes only from its own namespace `gw`" in fact.statement


def test_a_route_refusal_read_before_its_gateway_gains_the_why_once_the_gateway_is_read() -> None:
    """The route is listed first (its refusal, the controller's words), the Gateway read a
    step later: the finding kept in the task state is the fuller one naming the listeners'
    rule, not the first view."""
    refused = {
        "type": "Accepted",
        "status": "False",
        "reason": "NotAllowedByListeners",
        "message": "No listeners included by this parent ref allowed this attachment.",
    }
    r = route(parents=[{"parentRef": {"name": "shared-gw", "namespace": "gw"},
                        "conditions": [refused]}])  # fmt: skip
    r["spec"]["parentRefs"] = [{"name": "shared-gw", "namespace": "gw"}]
    listener = {"name": "http", "port": 80, "allowedRoutes": {"namespaces": {"from": "Same"}}}
    shared = obj("Gateway", "shared-gw", "gw",
                 spec={"gatewayClassName": "envoy", "listeners": [listener]})  # fmt: skip
    state = TaskState(goal="q", questions=["q"])
    f = Feed()
    f.objects("HTTPRoute", [r])
    [first] = f.facts(K.MISCONFIGURATION)
    assert state.upsert_fact(first)
    assert "own namespace" not in first.statement
    f.get("Gateway", shared)
    [fuller] = f.facts(K.MISCONFIGURATION)
    assert state.upsert_fact(fuller) is False
    [kept] = state.facts
    assert "admit routes only from its own namespace `gw`" in kept.statement
    assert "attachment; the listeners" in kept.statement
