"""Analyzers of Services, Endpoints, Ingresses, NetworkPolicies and webhooks, on objects of
our own, fed through the analyzer registry."""

from __future__ import annotations

from k8s_build import NS, obj, pod
from k8s_observe import Feed

from opsmate.agent.intake.subject import Subject
from opsmate.agent.observe.facts import FactKind as K


def svc(name: str, selector: dict[str, str], **spec: object) -> dict:
    return obj(
        "Service",
        name,
        spec={"selector": selector, "ports": [{"port": 80}], "clusterIP": "10.0.0.7", **spec},
    )


# ----------------------------------------------------------------------------- services


def test_selector_matching_no_pod_names_selector_and_what_pods_have() -> None:
    f = Feed()
    f.objects("Service", [svc("api", {"app": "api", "track": "canary"})])
    assert f.facts(K.SELECTOR_MISMATCH) == []  # no pod listing yet: no claim
    pods_eid = f.pods(
        [pod("api-1", {"app": "api", "track": "stable"}), pod("web-1", {"app": "web"})]
    )
    [fact] = f.facts(K.SELECTOR_MISMATCH)
    assert "Service `api` selects `app=api,track=canary`" in fact.statement
    assert "pods with `app=api` have `track=stable`" in fact.statement
    assert pods_eid in fact.evidence and "E1" in fact.evidence
    assert fact.subject and fact.subject.key() == "Service/shop/api"
    assert {o.key() for o in fact.objects} >= {"Pod/shop/api-1", "host/-/10.0.0.7"}
    assert fact.detail["selector"] == {"app": "api", "track": "canary"}


def test_matching_pods_that_are_not_ready_and_empty_endpoints() -> None:
    f = Feed()
    f.objects("Service", [svc("api", {"app": "api"}), svc("db", {"app": "db"})])
    f.objects(
        "Endpoints", [obj("Endpoints", "db", subsets=[{"notReadyAddresses": [{"ip": "10.1.0.9"}]}])]
    )
    f.pods([pod("api-1", {"app": "api"}, ready=False, ns="other")], ns="other")  # no proof for shop
    facts = f.facts()
    assert [x.key for x in facts] == ["k8s:endpoints-empty:shop:db"]
    f.pods([pod("api-1", {"app": "api"}, ready=False)])
    unready = [x for x in f.facts(K.NOT_READY) if "api" in x.key]
    assert unready and "1 pod(s) match (`api-1`) but none is ready" in unready[0].statement


def test_a_named_target_port_the_pods_do_not_declare() -> None:
    f = Feed()
    f.objects("Service", [svc("api", {"app": "api"}, ports=[{"port": 80, "targetPort": "http"}])])
    f.pods(
        [
            pod(
                "api-1",
                {"app": "api"},
                containers=[
                    {"name": "app", "image": "i", "ports": [{"name": "web", "containerPort": 8080}]}
                ],
            )
        ]
    )
    [fact] = f.facts(K.MISCONFIGURATION)
    assert "named targetPort `http`" in fact.statement


def test_a_numeric_target_port_nothing_listens_on() -> None:
    f = Feed()
    f.objects("Service", [svc("api", {"app": "api"}, ports=[{"port": 80, "targetPort": 8080}])])
    listening = [{"name": "app", "image": "i", "ports": [{"name": "http", "containerPort": 9090}]}]
    f.pods([pod("api-1", {"app": "api"}, containers=listening)])
    [fact] = f.facts(K.MISCONFIGURATION)
    assert "targetPort 8080, but its pods' containers listen on 9090" in fact.statement
    assert fact.reason == "TargetPortNotListening" and fact.severity == "error"
    # pods that declare no ports prove nothing
    g = Feed()
    g.objects("Service", [svc("api", {"app": "api"}, ports=[{"port": 80, "targetPort": 8080}])])
    g.pods([pod("api-1", {"app": "api"})])
    assert g.facts(K.MISCONFIGURATION) == []
    # a database container that declares no port beside an exporter that declares its own:
    # the database may listen on the targetPort (charts often leave it undeclared)
    h = Feed()
    h.objects("Service", [svc("db", {"app": "db"}, ports=[{"port": 5432, "targetPort": 5432}])])
    h.pods([pod("db-0", {"app": "db"}, containers=[
        {"name": "postgresql", "image": "postgres"},
        {"name": "metrics", "image": "exporter",
         "ports": [{"name": "http", "containerPort": 9187}]}])])  # fmt: skip
    assert h.facts(K.MISCONFIGURATION) == []
    # a headless Service proxies nothing: a peer port it names (a cluster's gossip port)
    # need not be declared
    k = Feed()
    k.objects("Service", [svc("mq-headless", {"app": "api"}, clusterIP="None",
                              ports=[{"port": 4369, "targetPort": 4369}])])  # fmt: skip
    k.pods([pod("api-1", {"app": "api"}, containers=listening)])
    assert k.facts(K.MISCONFIGURATION) == []


# ----------------------------------------------------------------------------- ingress


def ingress(cls: str | None, service: str = "web", address: bool = False, port: int = 80) -> dict:
    spec: dict = {
        "rules": [
            {
                "host": "shop.example.test",
                "http": {
                    "paths": [
                        {
                            "path": "/",
                            "backend": {"service": {"name": service, "port": {"number": port}}},
                        }
                    ]
                },
            }
        ]
    }
    if cls:
        spec["ingressClassName"] = cls
    status = {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}} if address else {}
    return obj("Ingress", "shop", spec=spec, status=status)


def test_ingress_class_proven_missing_and_unserved() -> None:
    f = Feed(subject=Subject(hosts=["shop.example.test"]))
    f.objects("Ingress", [ingress("fancy")])
    [unserved] = f.facts(K.MISCONFIGURATION)
    assert "names IngressClass `fancy`" in unserved.statement and "no address" in unserved.statement
    assert any(o.kind == "host" and o.name == "shop.example.test" for o in unserved.objects)
    listing = f.objects("IngressClass", [obj("IngressClass", "nginx", None)], ns=None)
    [missing] = f.facts(K.MISSING_REFERENCE)
    assert "IngressClass `fancy` does not exist (IngressClasses: `nginx`)" in missing.statement
    assert listing in missing.evidence and missing.focus


def test_ingress_with_address_or_existing_class_is_fine_and_default_class_matters() -> None:
    f = Feed()
    f.objects("Ingress", [ingress("fancy", address=True)])
    assert f.facts() == []
    g = Feed()
    g.objects("Ingress", [ingress(None)])
    g.objects("IngressClass", [obj("IngressClass", "nginx", None)], ns=None)
    [fact] = g.facts(K.MISCONFIGURATION)
    assert "names no IngressClass and none is marked default" in fact.statement


def test_ingress_backend_missing_or_wrong_port() -> None:
    f = Feed()
    f.objects("Ingress", [ingress("nginx", service="gone", address=True)])
    f.objects("Service", [svc("web", {"app": "web"})])
    [fact] = f.facts(K.MISSING_REFERENCE)
    assert "routes `shop.example.test/` to Service `gone`, which does not exist" in fact.statement
    g = Feed()
    g.objects("Ingress", [ingress("nginx", service="web", address=True, port=8443)])
    g.objects("Service", [svc("web", {"app": "web"})])
    [port] = g.facts(K.MISCONFIGURATION)
    assert "port 8443 of Service `web`, which exposes only `80`" in port.statement


# ----------------------------------------------------------------------------- policies


def policy(name: str, selector: dict, **spec: object) -> dict:
    return obj("NetworkPolicy", name, spec={"podSelector": selector, **spec})


def test_policy_denying_ingress_from_a_pod_in_focus() -> None:
    f = Feed(focus=["web"])
    f.pods(
        [
            pod("api-1", {"app": "api", "role": "backend"}),
            pod("web-1", {"app": "web", "role": "frontend"}),
            pod("batch-1", {"app": "batch", "role": "backend"}),
        ]
    )
    f.objects("Service", [svc("api", {"app": "api"})])
    f.objects(
        "NetworkPolicy",
        [
            policy(
                "api-in",
                {"matchLabels": {"app": "api"}},
                policyTypes=["Ingress"],
                ingress=[
                    {
                        "from": [{"podSelector": {"matchLabels": {"role": "backend"}}}],
                        "ports": [{"port": 80}],
                    }
                ],
            )
        ],
    )
    [fact] = f.facts(K.NETWORK_POLICY)
    assert "NetworkPolicy `api-in` selects pods `app=api` (`api-1`)" in fact.statement
    assert "allows ingress only from pods `role=backend` on TCP/80" in fact.statement
    assert "`web-1`" in fact.statement and "batch-1" not in fact.statement
    assert fact.severity == "error" and fact.detail["direction"] == "ingress"
    assert {"Service/shop/api", "Pod/shop/web-1"} <= {o.key() for o in fact.objects}


def test_default_deny_dns_and_unknown_peers() -> None:
    f = Feed()
    f.pods([pod("api-1", {"app": "api"}), pod("web-1", {"app": "web"})])
    f.objects(
        "NetworkPolicy",
        [
            policy("deny-all", {}, policyTypes=["Ingress"]),
            policy(
                "web-out",
                {"matchLabels": {"app": "web"}},
                policyTypes=["Egress"],
                egress=[
                    {
                        "to": [{"podSelector": {"matchLabels": {"app": "api"}}}],
                        "ports": [{"port": 80}],
                    }
                ],
            ),
            policy(
                "from-cidr",
                {"matchLabels": {"app": "api"}},
                ingress=[{"from": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]}],
            ),
        ],
    )
    facts = {x.key: x for x in f.facts(K.NETWORK_POLICY)}
    assert "allows no ingress at all" in facts["k8s:netpol:shop:deny-all:ingress"].statement
    assert "allows no port 53" in facts["k8s:netpol-dns:shop:web-out"].statement
    assert "k8s:netpol:shop:from-cidr:ingress" not in facts  # an ipBlock may admit anyone
    assert facts["k8s:netpol:shop:deny-all:ingress"].severity == "warning"  # nothing in focus


def test_namespace_selectors_use_the_namespace_labels() -> None:
    f = Feed()
    f.pods([pod("api-1", {"app": "api"}), pod("web-1", {"app": "web"})])
    f.objects(
        "NetworkPolicy",
        [
            policy(
                "ns-only",
                {"matchLabels": {"app": "api"}},
                ingress=[
                    {
                        "from": [
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "edge"}
                                }
                            }
                        ]
                    }
                ],
            )
        ],
    )
    [fact] = f.facts(K.NETWORK_POLICY)  # same-namespace pods are not in namespace edge
    assert "`web-1`" in fact.statement
    g = Feed()
    g.pods([pod("api-1", {"app": "api"}), pod("web-1", {"app": "web"})])
    g.objects(
        "NetworkPolicy",
        [
            policy(
                "team",
                {"matchLabels": {"app": "api"}},
                ingress=[{"from": [{"namespaceSelector": {"matchLabels": {"team": "shop"}}}]}],
            )
        ],
    )
    assert g.facts(K.NETWORK_POLICY) == []  # the namespace's team label is unknown: no claim


# ----------------------------------------------------------------------------- webhooks


def test_fail_closed_webhook_without_its_service() -> None:
    f = Feed()
    f.objects(
        "ValidatingWebhookConfiguration",
        [
            obj(
                "ValidatingWebhookConfiguration",
                "guard",
                None,
                webhooks=[
                    {
                        "name": "pods.guard.test",
                        "failurePolicy": "Fail",
                        "clientConfig": {"service": {"namespace": NS, "name": "guard"}},
                        "rules": [{"operations": ["CREATE"], "resources": ["pods"]}],
                    }
                ],
            )
        ],
        ns=None,
    )
    assert f.facts() == []  # the Service is not known to be absent
    f.objects("Service", [svc("api", {"app": "api"})])
    [fact] = f.facts(K.MISCONFIGURATION)
    assert (
        "Service `shop/guard` does not exist" in fact.statement and "CREATE pods" in fact.statement
    )


def test_a_caller_in_another_namespace_is_judged_by_its_namespace_labels() -> None:
    """A policy in the dependency's namespace admits namespaces by a team label; the pod in
    focus runs in a namespace without it: the policy denies it (pods of other namespaces
    not in focus are not judged, or every default-deny would deny the whole cluster)."""
    f = Feed(focus=["query"])
    f.pods([pod("metastore-1", {"app": "metastore"}, ns="meta")], ns="meta")
    f.pods([pod("query-1", {"app": "query"}, ns="analytics")], ns="analytics")
    f.pods([pod("other-1", {"app": "other"}, ns="spare")], ns="spare")
    namespaces = [
        obj("Namespace", n, None, {"kubernetes.io/metadata.name": n, "team": t})
        for n, t in (("meta", "platform"), ("analytics", "analytics"), ("spare", "x"))
    ]
    f.objects("Namespace", namespaces, ns=None)
    f.objects(
        "NetworkPolicy",
        [
            obj(
                "NetworkPolicy",
                "clients",
                "meta",
                spec={
                    "podSelector": {"matchLabels": {"app": "metastore"}},
                    "ingress": [
                        {"from": [{"namespaceSelector": {"matchLabels": {"team": "data-eng"}}}]}
                    ],
                },
            )
        ],
        ns="meta",
    )
    [fact] = f.facts(K.NETWORK_POLICY)
    assert "`query-1`" in fact.statement and "other-1" not in fact.statement
    assert fact.severity == "error"


def test_an_ingress_an_operator_made_for_a_challenge_says_what_it_is_for() -> None:
    f = Feed()
    solver = ingress("nginx")
    solver["metadata"]["name"] = "cm-acme-http-solver-x1"
    solver["metadata"]["labels"] = {"acme.cert-manager.io/http01-solver": "true"}
    f.objects("Ingress", [solver])
    [unserved] = f.facts(K.MISCONFIGURATION)
    assert "Ingress `cm-acme-http-solver-x1` (host shop.example.test) (cert-manager's ACME " in (
        unserved.statement
    )
    assert "the certificate is issued or renewed only once the challenge is answered" in (
        unserved.statement
    )
