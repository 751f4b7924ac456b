"""The dependency graph (agent/observe/depgraph.py) on synthetic objects and facts: each edge
kind, aliases (pods, IPs, Service names and DNS forms), the walk (a chain of three, a cycle,
a fan-out) and the path used for the chain in reports."""

from __future__ import annotations

from datetime import UTC, datetime

from opsmate.agent.intake.subject import Subject
from opsmate.agent.judge import links
from opsmate.agent.observe.depgraph import DependencyGraph, build, fact_component, hosts_in
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.records.k8s import Container, EnvVar, Pod, Volume
from opsmate.records.k8s_objects import EndpointAddress, Endpoints, Ingress, IngressBackend, Service

T0 = datetime(2026, 5, 4, 10, 0, tzinfo=UTC)


def pod(
    workload: str,
    ip: str,
    env: dict[str, str] | None = None,
    *,
    args: list[str] | None = None,
    volumes: list[Volume] | None = None,
    sa: str | None = None,
) -> Pod:
    return Pod(
        name=f"{workload}-5d8f9c7b6d-x2x1a",
        namespace="shop",
        owner=f"ReplicaSet/{workload}-5d8f9c7b6d",
        labels={"app": workload},
        ip=ip,
        containers=[
            Container(
                name="main",
                env=[EnvVar(name=k, value=v) for k, v in (env or {}).items()],
                args=args or [],
            )
        ],
        volumes=volumes or [],
        service_account=sa,
    )


def service(name: str, app: str, ip: str) -> Service:
    return Service(name=name, namespace="shop", selector={"app": app}, cluster_ip=ip)


def objects(*records: tuple[str, object]) -> ObjectGraph:
    g = ObjectGraph()
    for i, (kind, r) in enumerate(records):
        g.add(kind, r, f"E{i + 1}")  # type: ignore[arg-type]
    return g


def test_hosts_in_reads_urls_host_ports_and_ips() -> None:
    assert hosts_in("mongodb://user:pw@carts-db:27017/data") == [("carts-db", "27017")]
    assert hosts_in("cartservice:7070") == [("cartservice", "7070")]
    assert ("10.4.0.12", "5432") in hosts_in("dial tcp 10.4.0.12:5432: connect: refused")
    assert hosts_in("http://localhost:8080/x") == []


def test_env_edges_resolve_through_services_by_selector() -> None:
    g = objects(
        ("Pod", pod("web", "10.0.0.1", {"CART_ADDR": "cart-svc:7070", "DB_URL": "postgres://db"})),
        ("Pod", pod("cart-backend", "10.0.0.2")),
        ("Pod", pod("postgres", "10.0.0.3")),
        ("Service", service("cart-svc", "cart-backend", "10.96.0.10")),
        ("Service", service("db", "postgres", "10.96.0.11")),
    )
    dg = build(g)
    deps = {e.dst: e.via for e in dg.depends_on("web")}
    assert set(deps) == {"cart-backend", "postgres"}
    assert deps["cart-backend"].startswith("env CART_ADDR=")
    assert dg.depends_on("web")[0].evidence == ("E1",)


def test_bare_host_under_an_address_named_key_and_args() -> None:
    g = objects(
        (
            "Pod",
            pod("api", "10.0.0.1", {"REDIS_HOST": "cache"}, args=["--db=mysql://catalogue-db"]),
        ),
        ("Pod", pod("cache", "10.0.0.2")),
        ("Pod", pod("catalogue-db", "10.0.0.3")),
        ("Service", service("cache", "cache", "10.96.0.2")),
        ("Service", service("catalogue-db", "catalogue-db", "10.96.0.3")),
    )
    assert {e.dst for e in build(g).depends_on("api")} == {"cache", "catalogue-db"}


def test_aliases_pod_names_ips_and_dns_forms() -> None:
    g = objects(
        ("Pod", pod("payment", "10.0.0.9")),
        ("Service", service("paymentservice", "payment", "10.96.0.9")),
        (
            "Endpoints",
            Endpoints(
                name="paymentservice",
                namespace="shop",
                service="paymentservice",
                ready=[EndpointAddress(ip="10.0.0.19")],
            ),
        ),
    )
    dg = build(g)
    for name in (
        "payment-5d8f9c7b6d-x2x1a",
        "10.0.0.9",
        "10.96.0.9",
        "10.0.0.19",
        "paymentservice",
        "paymentservice.shop.svc.cluster.local",
        "payment",
    ):
        assert dg.component(name) == "payment", name


def test_storage_account_and_ingress_edges() -> None:
    g = objects(
        (
            "Pod",
            pod(
                "db",
                "10.0.0.1",
                volumes=[Volume(name="data", type="persistentVolumeClaim", ref_name="data-db-0")],
                sa="db-operator",
            ),
        ),
        ("Service", service("db", "db", "10.96.0.1")),
        (
            "Ingress",
            Ingress(name="shop", namespace="shop", rules=[IngressBackend(service="db")]),
        ),
    )
    dg = build(g)
    assert {e.dst for e in dg.depends_on("db")} == {
        "PersistentVolumeClaim/data-db-0",
        "ServiceAccount/db-operator",
    }
    assert [e.dst for e in dg.depends_on("Ingress/shop")] == ["db"]


def _err(service: str, text: str, eid: str, objects: list[ObjRef] | None = None) -> Fact:
    return Fact(
        key=f"{service}:{text}",
        kind=FactKind.DEPENDENCY_FAILURE,
        statement=text,
        evidence=[eid],
        service=service,
        subject=ObjRef(kind="app", name=service),
        quote=text,
        objects=objects or [],
        time=T0,
    )


def test_fact_edges_from_error_text_ips_and_metric_labels() -> None:
    g = objects(
        ("Pod", pod("frontend", "10.0.0.1")),
        ("Pod", pod("checkout", "10.0.0.2")),
        ("Pod", pod("payment", "10.0.0.3")),
        ("Service", service("checkoutservice", "checkout", "10.96.0.2")),
    )
    facts = [
        _err("frontend", "rpc error: dial tcp 10.96.0.2:5050: connect: connection refused", "E7"),
        Fact(
            key="m1",
            kind=FactKind.LATENCY,
            statement="latency rose",
            evidence=["E8"],
            detail={"labels": {"source_workload": "checkout", "destination_workload": "payment"}},
        ),
    ]
    dg = build(g, facts)
    assert [(e.dst, e.evidence) for e in dg.depends_on("frontend")] == [("checkout", ("E7",))]
    assert [e.dst for e in dg.depends_on("checkout")] == ["payment"]
    assert fact_component(dg, facts[0]) == "frontend"


def _chain(*pairs: tuple[str, str]) -> DependencyGraph:
    dg = DependencyGraph()
    for a, b in pairs:
        dg.aliases.setdefault(a, a)
        dg.aliases.setdefault(b, b)
        dg.add(a, b, "test", ["E1"])
    return dg


def test_walk_chain_of_three_cycle_and_fan_out() -> None:
    chain = _chain(("frontend", "checkout"), ("checkout", "payment"))
    assert chain.reachable("frontend") == {"checkout": 1, "payment": 2}
    assert [e.dst for e in chain.path("frontend", "payment")] == ["checkout", "payment"]
    cycle = _chain(("a", "b"), ("b", "c"), ("c", "a"))
    assert cycle.reachable("a") == {"b": 1, "c": 2}  # terminates, never itself
    fan = _chain(("edge", "x"), ("edge", "y"), ("y", "z"))
    assert fan.reachable("edge") == {"x": 1, "y": 1, "z": 2}
    assert fan.path("edge", "nowhere") == []


def test_relation_links_a_dependency_the_data_shows() -> None:
    dg = _chain(("frontend", "checkout"), ("checkout", "payment"))
    subject = Subject(names=["frontend"])
    reach = links.subject_reach(subject, dg, [])
    deep = Fact(
        key="p",
        kind=FactKind.CRASH_LOOP,
        statement="payment crash-loops",
        evidence=["E3"],
        subject=ObjRef(kind="Pod", name="payment-5d8f9c7b6d-x2x1a", namespace="shop"),
    )
    other = Fact(
        key="o",
        kind=FactKind.CRASH_LOOP,
        statement="batch crash-loops",
        evidence=["E4"],
        subject=ObjRef(kind="Pod", name="batch-1", namespace="shop"),
    )
    g = ObjectGraph()
    assert links.relation(deep, subject, g, set(), [], None, reach, dg) == links.LINKED
    assert links.relation(other, subject, g, set(), [], None, reach, dg) == links.UNRELATED


def test_env_references_are_expanded_and_listen_addresses_are_not_dependencies() -> None:
    from opsmate.agent.observe.depgraph import expand_env, hosts_in

    env = {"COLLECTOR": "otel-collector"}
    assert expand_env("http://$(COLLECTOR):4317", env) == "http://otel-collector:4317"
    assert expand_env("$(MISSING)/x", env) == "$(MISSING)/x"
    assert hosts_in(expand_env("http://$(COLLECTOR):4317", env)) == [("otel-collector", "4317")]
    assert hosts_in("http://*:8080") == [] and hosts_in("http://+:80;https://+:443") == []


def test_the_names_logs_use_for_a_workload_are_aliases_when_only_it_has_them() -> None:
    db = Pod(
        name="chi-metrics-store-0-0-0",
        namespace="shop",
        owner="StatefulSet/chi-metrics-store-0-0",
        labels={"app": "columnstore"},
        containers=[Container(name="columnstore")],
    )
    api = pod("query-api", "10.0.0.5")
    api.containers.append(Container(name="logshipper"))
    web = pod("web", "10.0.0.6")
    web.containers.append(Container(name="logshipper"))
    dg = build(objects(("Pod", db), ("Pod", api), ("Pod", web)))
    assert dg.component("columnstore") == "chi-metrics-store-0-0"
    assert dg.component("logshipper") is None  # a container name two workloads share


def test_a_host_an_ingress_serves_is_its_backends_component() -> None:
    api = pod("auth", "10.0.0.7")
    web = pod("web", "10.0.0.8", {"AUTH_URL": "https://login.example.test/connect"})
    ing = Ingress(
        name="auth",
        namespace="shop",
        rules=[IngressBackend(host="login.example.test", path="/", service="auth-svc")],
    )
    dg = build(objects(("Pod", api), ("Pod", web), ("Service", service("auth-svc", "auth",
                       "10.96.0.7")), ("Ingress", ing)))  # fmt: skip
    assert dg.resolve("login.example.test") == "auth"
    assert [e.dst for e in dg.depends_on("web")] == ["auth"]


def test_a_switch_under_an_address_named_key_names_no_host() -> None:
    from opsmate.agent.observe.analyzers.k8s_env_hosts import unknown_service_hosts
    from opsmate.agent.observe.context import ObserveContext

    db = pod("db", "10.0.0.9", {"POSTGRESQL_LOG_HOSTNAME": "false", "REPLICA_HOST": "db-ro"})
    g = objects(("Pod", db))
    g.add_listing("Service", [service("db", "db", "10.96.0.9")], "E5", namespace="shop")
    dg = build(g)
    assert [e.dst for e in dg.depends_on("db")] == []
    ctx = ObserveContext(graph=g)
    said = [f.statement for f in unknown_service_hosts(ctx)]
    assert len(said) == 1 and "REPLICA_HOST=db-ro" in said[0] and "`false`" not in said[0]


def test_a_telemetry_service_name_is_not_an_address() -> None:
    from opsmate.agent.observe.analyzers.k8s_env_hosts import unknown_service_hosts
    from opsmate.agent.observe.context import ObserveContext

    web = pod("web", "10.0.0.8", {"DD_SERVICE": "shop-web", "CART_SERVICE": "cart"})
    g = objects(("Pod", web))
    g.add_listing("Service", [service("web", "web", "10.96.0.8")], "E5", namespace="shop")
    said = [f.statement for f in unknown_service_hosts(ObserveContext(graph=g))]
    assert len(said) == 1 and "CART_SERVICE=cart" in said[0]  # the address is still checked


def test_a_question_about_a_host_in_a_named_namespace_scopes_that_namespace() -> None:
    subject = Subject(hosts=["assets.example.test"], namespace="shop")
    mine = _err("ldap-sync", "ldap-sync logged 1 error", "E1")
    elsewhere = _err("billing", "billing logged 3 errors", "E2")
    elsewhere.subject = ObjRef(kind="Pod", name="billing-0", namespace="ops")
    rel = [links.relation(f, subject, ObjectGraph(), set(), []) for f in (mine, elsewhere)]
    assert rel == [links.SCOPE, links.UNRELATED]


def _listening(workload: str, ip: str, port: str) -> Pod:
    p = pod(workload, ip)
    p.containers[0].ports = [f"{port}/TCP"]
    return p


def test_an_address_nothing_resolves_is_what_alone_listens_on_its_port() -> None:
    g = objects(
        ("Pod", pod("reader", "10.0.0.1")),
        ("Pod", _listening("reader-db", "10.0.0.2", "5432")),
        ("Pod", _listening("cache", "10.0.0.3", "6379")),
        ("Pod", _listening("web-a", "10.0.0.4", "8080")),
        ("Pod", _listening("web-b", "10.0.0.5", "8080")),
    )
    refused = _err("reader", "dial tcp 10.96.118.23:5432: connect: connection refused", "E7")
    dg = build(g, [refused])
    (edge,) = dg.depends_on("reader")
    assert edge.dst == "reader-db" and "port 5432" in edge.via
    # two workloads listen on 8080: the address says nothing about which one answered
    ambiguous = _err("reader", "dial tcp 10.96.7.7:8080: i/o timeout", "E8")
    assert build(g, [ambiguous]).depends_on("reader") == []
    # a host name is not guessed from its port: only an address
    named = _err("reader", "dial tcp gone-db:5432: connect: connection refused", "E9")
    assert build(g, [named]).depends_on("reader") == []


def test_a_log_template_written_by_one_workloads_pods_is_that_workloads() -> None:
    db = pod("reader-db", "10.0.0.2")
    dg = build(objects(("Pod", db)))
    said = Fact(
        key="log:postgres",
        kind=FactKind.SATURATION,
        statement="postgres reports a full disk",
        evidence=["E3"],
        service="postgres",
        subject=ObjRef(kind="app", name="postgres"),
        detail={"streams": [db.name]},
    )
    assert fact_component(dg, said) == "reader-db"
    said.detail["streams"] = [db.name, "other-7f9c-abcde"]
    assert fact_component(dg, said) is None


def test_an_address_a_container_reads_from_a_configmap_is_a_dependency() -> None:
    from opsmate.records.k8s import EnvFrom
    from opsmate.records.k8s_objects import ConfigMap

    p = pod("orders", "10.0.0.1")
    p.containers[0].env_from = [EnvFrom(source="configmap", name="orders-config")]
    p.containers[0].env = [EnvVar(name="DB", source="configmap", ref_name="db-config",
                                  ref_key="DB_HOST")]  # fmt: skip
    g = objects(
        ("Pod", p),
        ("Pod", pod("store", "10.0.0.2")),
        ("Service", service("store-svc", "store", "10.96.0.5")),
        ("ConfigMap", ConfigMap(name="orders-config", namespace="shop",
                                addresses={"BROKER_URL": "pulsar://proxy.messaging.svc:6650"})),
        ("ConfigMap", ConfigMap(name="db-config", namespace="shop",
                                addresses={"DB_HOST": "store-svc"})),
    )  # fmt: skip
    deps = {e.dst: e.via for e in build(g).depends_on("orders")}
    assert deps["host/proxy.messaging.svc"].startswith("ConfigMap setting BROKER_URL=")
    assert deps["store"] == "ConfigMap setting DB=store-svc"


def test_a_log_template_written_by_one_or_two_pods_concerns_those_pods() -> None:
    from opsmate.agent.judge.candidates import same_thread

    said = Fact(key="log:pg", kind=FactKind.SATURATION, statement="postgres reports a full disk",
                evidence=["E3"], service="postgres", subject=ObjRef(kind="app", name="postgres"),
                detail={"streams": ["store-0"]})  # fmt: skip
    probe = Fact(
        key="ev:probe",
        kind=FactKind.PROBE_FAILURE,
        statement="Unhealthy on store-0",
        evidence=["E4"],
        subject=ObjRef(kind="Pod", name="store-0", namespace="shop"),
    )
    assert same_thread(said, probe)
    said.detail["streams"] = ["a-0", "b-0", "store-0"]  # everyone's line: no one pod's
    assert not same_thread(said, probe)


def test_an_address_in_a_config_file_a_configmap_volume_mounts_is_a_dependency() -> None:
    from opsmate.records.k8s import Mount
    from opsmate.records.k8s_objects import ConfigMap
    from opsmate.tools.kubernetes.shaping_objects import config_addresses

    conf = "Name: order-rpc\nListenOn: 0.0.0.0:2001\nTravelRpc:\n  Target: k8s://shop/travel-svc:2003\n"
    addresses = config_addresses({"order.yaml": conf})
    assert addresses == {"order.yaml:Target": "k8s://shop/travel-svc:2003"}
    assert hosts_in("k8s://shop/travel-svc:2003") == [("travel-svc.shop", "2003")]
    p = pod("order-rpc", "10.0.0.1", volumes=[Volume(name="conf", type="configMap",
                                                     ref_name="order-conf")])  # fmt: skip
    p.containers[0].mounts = [Mount(name="conf", mount_path="/app/etc")]
    g = objects(
        ("Pod", p),
        ("Pod", pod("travel", "10.0.0.2")),
        ("Service", service("travel-svc", "travel", "10.96.0.9")),
        ("ConfigMap", ConfigMap(name="order-conf", namespace="shop", addresses=addresses)),
    )
    deps = {e.dst: e.via for e in build(g).depends_on("order-rpc")}
    assert deps["travel"].startswith("ConfigMap setting order.yaml:Target=")


def test_what_serves_the_host_asked_about_is_the_subject() -> None:
    ing = Ingress(
        name="viewer",
        namespace="shop",
        rules=[IngressBackend(host="bots.example.com", path="/", service="viewer")],
    )
    svc = service("viewer", "viewer", "10.96.0.8")
    g = objects(("Pod", pod("viewer", "10.0.0.8")), ("Pod", pod("builder", "10.0.0.9")),
                ("Service", svc), ("Ingress", ing))  # fmt: skip
    dg = build(g)
    subject = Subject(namespace="shop", hosts=["bots.example.com"])
    about = ObjRef(kind="Service", name="viewer", namespace="shop")
    f = Fact(key="s", statement="Service viewer selects no pod", subject=about)
    other = Fact(key="o", statement="builder logged", subject=ObjRef(kind="app", name="builder"))
    assert links.relation(f, subject, g, set(), [], dg=dg) == links.SUBJECT
    assert links.relation(other, subject, g, set(), [], dg=dg) != links.SUBJECT


def test_a_full_pool_gives_way_to_the_dependency_it_waits_on_being_down() -> None:
    from opsmate.agent.judge.candidates import Candidate
    from opsmate.agent.judge.chains import callee_under_pool

    g = objects(("Pod", pod("shop", "10.0.0.8")), ("Service", service("db", "db", "10.96.0.9")))
    dg = build(g)
    shop = ObjRef(kind="app", name="shop")
    pool = Fact(key="p", statement="shop reports that a connection pool is exhausted",
                kind=FactKind.SATURATION, reason="pool_exhausted", service="shop", subject=shop,
                quote="HikariPool-1 - Connection is not available, request timed out")  # fmt: skip
    call = Fact(key="c", statement="shop cannot reach db:5432 (connection refused)",
                kind=FactKind.DEPENDENCY_FAILURE, reason="refused", service="shop",
                subject=shop, quote="Connection to db:5432 refused",
                objects=[ObjRef(kind="host", name="db")])  # fmt: skip
    down = Fact(key="d", statement="StatefulSet `db` is scaled to 0 replicas",
                kind=FactKind.MISCONFIGURATION, reason="ScaledToZero",
                subject=ObjRef(kind="Service", name="db", namespace="shop"))  # fmt: skip
    a = Candidate(lead=pool, relation="subject", score=18.0, supported=True)
    c = Candidate(lead=call, relation="subject", score=3.0, supported=True)
    b = Candidate(lead=down, relation="linked", score=6.0, supported=True, conclusive=True)
    callee_under_pool([a, c, b], dg)
    assert b.score > a.score and pool in b.chain and call in b.chain
    quiet = Candidate(lead=down, relation="linked", score=6.0, supported=True, conclusive=True)
    callee_under_pool([Candidate(lead=pool, relation="subject", score=18.0), quiet], dg)
    assert quiet.score == 6.0  # no failing call to it from the pool's client: no link
