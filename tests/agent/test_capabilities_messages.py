"""What a message says and whom it means: the telling line of a report written over several
lines, a product named instead of a host, a memory series read against its limit, the
events of the nodes that run the pods in focus. Each on a small example of its own."""

from __future__ import annotations

from typing import Any

from opsmate.agent.evidence import EvidenceStore
from opsmate.agent.intake.subject import Subject
from opsmate.agent.judge.saturation import derive_oom
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.observe.software import image_word, software_target
from opsmate.agent.plan.registry import RuleContext, rule
from opsmate.agent.state import TaskState
from opsmate.loganalysis.parse import strip_timestamp
from opsmate.loganalysis.podlines import fit_tail
from opsmate.loganalysis.stats import deepest_cause, telling_line
from opsmate.records.k8s import Pod
from opsmate.records.k8s_objects import Service
from opsmate.tools.base import ToolResult

CHECK_REPORT = (
    "search engine failed its start-up checks\n"
    "[1] start-up checks failed. You must address the points below. For more information "
    "see [https://docs.example.org/checks.html]\n"
    "check failure [1] of [1]: open files limit [1024] is too low, increase to at least "
    "[65535]; for more information see [https://docs.example.org/files.html]"
)
TRACEBACK = (
    "job failed\nTraceback (most recent call last):\n"
    '  File "/app/run.py", line 12, in <module>\n    main()\n'
    '  File "/app/run.py", line 9, in main\n    connect(os.environ["QUEUE_URL"])\n'
    "KeyError: 'QUEUE_URL'"
)


def test_the_telling_line_of_a_report_over_several_lines() -> None:
    assert telling_line(CHECK_REPORT) == (
        "check failure [1] of [1]: open files limit [1024] is too low, increase to at least [65535]"
    )
    assert telling_line(TRACEBACK) == "KeyError: 'QUEUE_URL'"  # the exception, not a frame
    assert telling_line("one line: connection refused") is None
    assert telling_line("started\nlistening on :8080\nready") is None  # nothing failed
    dotnet = (
        "Error starting\nX.Exceptions.Unreachable: none reachable ---> X.AuthFailed: refused\n"
        "   --- End of inner exception stack trace ---\n   at X.Connect() in /src/c.cs:line 4"
    )
    assert (
        telling_line(dotnet)
        == "X.Exceptions.Unreachable: none reachable ---> X.AuthFailed: refused"
    )
    # a wrapped exception keeps its innermost cause; a report falls back to its telling line
    assert deepest_cause("a failed; nested exception is B: disk full") == "B: disk full"
    # .NET writes each inner exception on a line of its own, after an arrow
    inner = (
        "An unhandled exception has occurred.\nSystem.InvalidOperationException: IDX20803\n"
        " ---> System.Net.Http.HttpRequestException: The SSL connection could not be "
        "established\n ---> System.Security.Authentication.AuthenticationException: The remote "
        "certificate is invalid: NotTimeValid\n   at System.Net.Security.SslStream.Handshake()"
    )
    assert deepest_cause(inner) == (
        "System.Security.Authentication.AuthenticationException: The remote certificate is "
        "invalid: NotTimeValid"
    )
    assert deepest_cause(CHECK_REPORT) is not None and "[1024]" in str(deepest_cause(CHECK_REPORT))


def test_a_dotted_date_is_a_timestamp_prefix() -> None:
    assert strip_timestamp("2026.02.24 09:09:45 ERROR es[] failed") == "ERROR es[] failed"
    assert strip_timestamp("2026-02-24 09:09:45 ERROR x") == "ERROR x"
    assert strip_timestamp("2026.02-24 09:09:45 x").startswith("2026.02-24")  # mixed: not a date


def test_a_long_last_line_is_not_counted_twice_when_the_tail_is_fitted() -> None:
    long_text = "x" * 1500
    lines = ["a", long_text, "b"]
    records: list[dict[str, Any]] = [{"message": "a"}, {"message": long_text}, {"message": "b"}]
    assert fit_tail(lines, records, 1560) == 2  # the record counts, not line + record
    assert fit_tail(lines, records, 100) == 1


def _pod(name: str, image: str, labels: dict[str, str], ns: str = "shop") -> Pod:
    return Pod.model_validate({"name": name, "namespace": ns, "labels": labels,
                               "containers": [{"name": "c", "image": image}]})  # fmt: skip


def test_a_product_named_in_an_error_is_the_workload_whose_image_runs_it() -> None:
    assert image_word("docker.io/bitnami/postgresql:16.2@sha256:abc") == "postgresql"
    assert image_word("registry.local/shop/order-processor:1.2") is None  # an app's own image
    assert image_word("nats:2") is None  # too short to name anything reliably
    g = ObjectGraph()
    pods = [
        _pod("queue-0", "rabbitmq:3.13-management", {"app": "queue"}),
        _pod("orders-7d9f8c6b5-x2x1q", "shop/orders:2", {"app": "orders"}),
        _pod("db-0", "bitnami/postgresql:16", {"app": "db"}),
    ]
    g.add_listing("Pod", pods, "E1", namespace="shop")
    g.add_listing("Service", [Service.model_validate(
        {"name": "broker", "namespace": "shop", "selector": {"app": "queue"}})], "E2",
        namespace="shop")  # fmt: skip
    msg = "RabbitMQ.Client.Exceptions.AuthenticationFailureException: ACCESS_REFUSED"
    assert software_target(msg, g, own="orders") == "broker"  # the Service in front of it
    assert software_target("FATAL: PostgreSQL said: too many clients", g) == "db"
    assert software_target("timeout talking to the payment gateway", g) is None
    assert software_target(msg, g, own="queue") is None  # its own product names nothing
    g.add_listing("Pod", [_pod("queue-b-0", "rabbitmq:3.12", {"app": "queue-b"})], "E3",
                  namespace="other")  # fmt: skip
    assert software_target(msg, g) is None  # two brokers: ambiguous, no answer


def _series_result(query: str, pod: str, value: float) -> ToolResult:
    point = {"time": "2026-06-01T10:30:00Z", "value": value}
    data = {"query": query, "series": [{"labels": {"pod": pod}, "points": 2, "last": point,
                                        "max": point}]}  # fmt: skip
    return ToolResult(call_id="c", tool="query_metrics", status="success", data=data,
                      args={"query": query})  # fmt: skip


def test_memory_that_climbs_to_its_limit_and_drops_was_killed_out_of_memory() -> None:
    store = EvidenceStore()
    q = 'sum by (pod) (kube_pod_container_resource_limits{namespace="bi", resource="memory"})'
    eid = store.add_result(_series_result(q, "mb-1", 2 * 2**30))
    assert eid
    state = TaskState(goal="q", questions=["q"])

    def leak(high: float) -> Fact:
        return Fact(
            key="leak", kind=FactKind.SATURATION, severity="error", reason="MemoryLeakPattern",
            statement="memory by pod {pod=mb-1} climbs steadily from 290Mi to 2Gi, dropping 3 "
            "time(s) when it restarted: a memory leak pattern", evidence=["E9"],
            detail={"labels": {"pod": "mb-1"}, "high": high, "resets": 3,
                    "query": 'container_memory_working_set_bytes{namespace="bi"}'},
        )  # fmt: skip

    state.upsert_fact(leak(2.0 * 2**30 * 0.99))
    derive_oom(store, state)
    [f] = state.facts
    assert "out of memory (OOM) at its limit" in f.statement and "2.0Gi" in f.statement
    assert "leak pattern" in f.statement and eid in f.evidence
    assert f.subject == ObjRef(kind="Pod", name="mb-1", namespace="bi")
    before = f.statement
    derive_oom(store, state)
    assert state.facts[0].statement == before  # read once
    # far below its limit: a leak, not (yet) a kill
    low = TaskState(goal="q", questions=["q"])
    low.upsert_fact(leak(2.0**30))
    derive_oom(store, low)
    assert "OOM" not in low.facts[0].statement


def test_pods_that_restart_read_the_events_of_their_nodes() -> None:
    g = ObjectGraph()
    pods = [
        Pod.model_validate({"name": "web-7d9f8c6b5-x2x1q", "namespace": "shop", "node": "n1"}),
        Pod.model_validate({"name": "web-7d9f8c6b5-abcde", "namespace": "shop", "node": "n2"}),
        Pod.model_validate({"name": "db-0", "namespace": "shop", "node": "n3"}),
    ]
    g.add_listing("Pod", pods, "E1", namespace="shop")
    ctx = RuleContext(subject=Subject(names=["web"], namespace="shop"),
                      tools=frozenset({"get_events"}), graph=g)  # fmt: skip
    f = Fact(key="k", statement="s", kind=FactKind.CRASH_LOOP, severity="error", focus=True,
             service="web", subject=ObjRef(kind="Pod", name="web-7d9f8c6b5-x2x1q",
                                           namespace="shop"))  # fmt: skip
    checks = list(rule("node_events_of_restarts").fact_fn(f, ctx))  # type: ignore[misc]
    assert [(c.args["kind"], c.args["name"], c.args["namespace"]) for c in checks] == [
        ("Node", "n1", "default"), ("Node", "n2", "default")]  # fmt: skip
    other = f.model_copy(update={"focus": False})
    assert list(rule("node_events_of_restarts").fact_fn(other, ctx)) == []  # type: ignore[misc]


def test_tls_spoken_to_a_plain_text_server_names_the_ingress_that_asks_for_it() -> None:
    from opsmate.agent.observe.software import backend_protocol
    from opsmate.loganalysis.signals import classify
    from opsmate.records.k8s_objects import Ingress
    from opsmate.tools.kubernetes.shaping_objects import shape_record

    line = ("SSL_do_handshake() failed (SSL: error:0A00010B:SSL routines::wrong version number) "
            "while SSL handshaking to upstream, server: docs.example.org")  # fmt: skip
    assert classify(line).reason == "protocol_mismatch"
    assert classify('http: server gave HTTP response to HTTPS client').reason == (
        "protocol_mismatch")  # fmt: skip
    assert classify("GET /health 200").reason != "protocol_mismatch"

    def ingress(name: str, host: str, proto: str | None) -> Ingress:
        notes = {"nginx.ingress.kubernetes.io/backend-protocol": proto} if proto else {}
        raw = {"kind": "Ingress", "apiVersion": "networking.k8s.io/v1",
               "metadata": {"name": name, "namespace": "docs", "annotations": notes},
               "spec": {"rules": [{"host": host, "http": {"paths": [{"path": "/", "backend": {
                   "service": {"name": name, "port": {"number": 80}}}}]}}]}}  # fmt: skip
        rec = shape_record("Ingress", raw)
        assert isinstance(rec, Ingress)
        return rec

    g = ObjectGraph()
    g.add_listing("Ingress", [ingress("docs", "docs.example.org", "HTTPS"),
                              ingress("argo", "argo.example.org", "HTTPS"),
                              ingress("web", "web.example.org", None)], "E1",
                  namespace="docs")  # fmt: skip
    said = backend_protocol(line, g)
    assert said == "Ingress docs (nginx.ingress.kubernetes.io/backend-protocol: HTTPS)"
    assert backend_protocol("wrong version number while SSL handshaking to upstream", g) is None


def test_a_store_without_enough_live_replicas_is_a_failing_dependency() -> None:
    from opsmate.loganalysis.signals import classify

    for line in (
        "Failed to save span (error: Cannot achieve consistency level LOCAL_QUORUM)",
        "NoHostAvailable: ('Unable to complete the operation against any hosts')",
        "org.apache.kafka.common.errors.NotEnoughReplicasException: ISR too small",
    ):
        sig = classify(line)
        assert (sig.kind, sig.reason) == ("dependency", "unavailable"), line


def test_a_service_in_front_of_several_workloads_depends_on_each() -> None:
    from opsmate.agent.observe import depgraph

    g = ObjectGraph()
    racks = [_pod(f"db-r{i}-sts-0", "shop/db:4", {"cluster": "db"}) for i in (1, 2, 3)]
    for p in racks:
        p.owner = f"StatefulSet/db-r{p.name[4]}-sts"
    g.add_listing("Pod", racks, "E1", namespace="shop")
    g.add_listing("Service", [Service.model_validate(
        {"name": "db", "namespace": "shop", "selector": {"cluster": "db"}})], "E2",
        namespace="shop")  # fmt: skip
    dg = depgraph.build(g)
    first = dg.component("db")
    assert first is not None
    others = {e.dst for e in dg.edges if e.src == first}
    assert others == {"db-r1-sts", "db-r2-sts", "db-r3-sts"} - {first}


def test_a_connection_string_names_its_database_host() -> None:
    from opsmate.agent.observe.depgraph import hosts_in

    assert hosts_in("server=sqlserver;user id=sa;password=x;database=Invoices") == [
        ("sqlserver", None)]  # fmt: skip
    assert hosts_in("Host=pg.db.svc;Port=5432;Database=a") == [("pg.db.svc", None)]
    assert hosts_in("Data Source=tcp:sql1,1433;Initial Catalog=x") == [("sql1", "1433")]
    assert hosts_in("Database=orders;User Id=app") == []  # names no host


def test_a_probe_blip_is_not_a_failure_of_the_subjects_own() -> None:
    from opsmate.agent.judge.links import own_failure

    def probe(count: int) -> Fact:
        return Fact(key=f"p{count}", statement="s", kind=FactKind.PROBE_FAILURE,
                    severity="error", focus=True, count=count, reason="Unhealthy",
                    subject=ObjRef(kind="Pod", name="web-1", namespace="shop"))  # fmt: skip

    web = Subject(names=["web"], namespace="shop")
    assert not own_failure([probe(2)], web, [])  # fewer than failureThreshold
    assert own_failure([probe(5)], web, [])


def test_the_series_that_moved_a_mean_is_named() -> None:
    from opsmate.agent.observe.analyzers.metrics import _leading
    from opsmate.records.metrics import Series

    def series(container: str, peak: float) -> Series:
        point = {"time": "2026-06-01T10:30:00Z", "value": peak}
        return Series.model_validate({"labels": {"container": container}, "max": point})

    lead = _leading([series("web", 0.05), series("db", 0.97), series("cache", 0.1)])
    assert lead is not None and lead.labels == {"container": "db"}
    assert _leading([series("web", 0.5), series("db", 0.6)]) is None  # alike: no leader


def test_no_log_line_under_a_label_reads_the_logs_of_its_workload() -> None:
    g = ObjectGraph()
    pod = Pod.model_validate({"name": "jobs-worker-7d9f8c6b5-x2x1q", "namespace": "ci",
                              "labels": {"app": "queue"},
                              "owner": "ReplicaSet/jobs-worker-7d9f8c6b5"})  # fmt: skip
    g.add_listing("Pod", [pod], "E1", namespace="ci")
    ctx = RuleContext(subject=Subject(names=["queue"], namespace="ci"),
                      tools=frozenset({"log_stats"}), graph=g)  # fmt: skip
    empty = ToolResult(call_id="c", tool="log_stats", status="no_data", data={},
                       args={"service": "queue"})  # fmt: skip
    [check] = rule("logs_under_the_workload_name").result_fn(empty, ctx)  # type: ignore[misc]
    assert check.args == {"service": "jobs-worker"}
    found = empty.model_copy(update={"status": "success"})
    assert list(rule("logs_under_the_workload_name").result_fn(found, ctx)) == []  # type: ignore[misc]


def test_a_python_stack_is_quoted_by_its_exception() -> None:
    from opsmate.loganalysis.parse import parse_line
    from opsmate.loganalysis.stats import example_text

    said = example_text(parse_line(TRACEBACK.split("\n", 1)[1]))
    assert said.startswith("KeyError: 'QUEUE_URL'") and "traceback" in said


def test_calls_that_time_out_to_workloads_on_one_node_point_at_that_node() -> None:
    from opsmate.agent.judge.colocation import derive_shared_node

    def placed(name: str, node: str) -> Pod:
        return Pod.model_validate({"name": f"{name}-7d9f8c6b5-x2x1q", "namespace": "shop",
                                   "node": node, "labels": {"app": name},
                                   "owner": f"ReplicaSet/{name}-7d9f8c6b5"})  # fmt: skip

    def timeout(target: str) -> Fact:
        return Fact(key=f"t-{target}", statement="s", kind=FactKind.DEPENDENCY_FAILURE,
                    severity="warning", reason="timeout", count=20, evidence=["E3"],
                    objects=[ObjRef(kind="host", name=f"{target}:8000")])  # fmt: skip

    def run(nodes: dict[str, str]) -> list[Fact]:
        g = ObjectGraph()
        g.add_listing("Pod", [placed(n, node) for n, node in nodes.items()], "E1",
                      namespace="shop")  # fmt: skip
        state = TaskState(goal="q", questions=["q"])
        state.upsert_fact(timeout("pay"))
        state.upsert_fact(timeout("ship"))
        derive_shared_node(state, g)
        return [f for f in state.facts if f.reason == "SharedNode"]

    [fact] = run({"pay": "n3", "ship": "n3", "cart": "n1", "front": "n2"})
    assert fact.subject == ObjRef(kind="Node", name="n3") and "pay, ship" in fact.statement
    assert run({"pay": "n3", "ship": "n1", "cart": "n1"}) == []  # two nodes: no commonality
    assert run({"pay": "n3", "ship": "n3"}) == []  # everything is on n3: says nothing


def test_a_resolver_timing_out_upstream_and_rate_limit_headroom() -> None:
    from opsmate.loganalysis.signals import classify

    sig = classify("[ERROR] plugin/errors: 2 api.example.org. A: read udp 10.1.4.22:41622->"
                   "10.40.0.3:53: i/o timeout")  # fmt: skip
    assert (sig.kind, sig.reason) == ("dependency", "timeout")
    assert classify("API rate limit low: 212 of 5000 requests remaining").kind is None
    assert classify("rate limit exceeded: 0 requests remaining").kind == "saturation"


def test_a_name_that_does_not_resolve_reads_the_cluster_dns_log_and_config() -> None:
    from opsmate.agent.kinds import by_id

    reads = {(r.tool, dict(r.args).get("service") or dict(r.args).get("kind"))
             for r in by_id("dns-unresolvable").reads}  # fmt: skip
    assert ("log_stats", "coredns") in reads and ("list_objects", "ConfigMap") in reads


def test_a_long_line_keeps_the_last_exception_it_names() -> None:
    from opsmate.loganalysis.parse import parse_line
    from opsmate.loganalysis.stats import example_text

    line = ("[loader-0] org.example.cache.SegmentCache - Failed to load segment[" + "x" * 200
            + "] in location[/var/cache], trying next location: java.io.IOException: No space "
            "left on device")  # fmt: skip
    said = example_text(parse_line(line))
    assert said.endswith("java.io.IOException: No space left on device") and len(said) <= 300


def test_a_connection_that_could_not_be_established_is_a_failing_dependency() -> None:
    from opsmate.loganalysis.signals import classify

    sig = classify("[Consumer clientId=c-1, groupId=billing] Connection to node 1001 "
                   "(kafka/10.42.2.23:9092) could not be established. Broker may not be "
                   "available.")  # fmt: skip
    assert sig.kind == "dependency"


def test_a_dependency_named_by_the_part_it_plays_is_the_one_workload_playing_it() -> None:
    """ "error communicating with database" names no product: the one workload of the
    caller's namespace that runs a database (by image, or a container named for one) is it."""
    g = ObjectGraph()
    db = Pod.model_validate(
        {
            "name": "store-0",
            "namespace": "forum",
            "labels": {"app": "store"},
            "owner": "StatefulSet/store",
            "containers": [{"name": "postgres", "image": "pgupgrade/pgup:16"}],
        }
    )
    app = _pod("forum-7d9f8c6b5-x2x1q", "forum/server:1", {"app": "forum"}, ns="forum")
    cache = _pod("kv-0", "valkey/valkey:8", {"app": "kv"}, ns="forum")
    g.add_listing("Pod", [db, app, cache], "E1", namespace="forum")  # fmt: skip
    said = "error communicating with database: Connection refused (os error 111)"
    assert software_target(said, g, own="forum") == "store"
    assert software_target("cache unavailable: i/o timeout", g, own="forum") == "kv"
    assert software_target(said, g) is None  # whose namespace: unknown, no answer
    g.add_listing("Pod", [_pod("db2-0", "mysql:8", {"app": "db2"}, ns="forum")], "E2",
                  namespace="forum")  # fmt: skip
    assert software_target(said, g, own="forum") is None  # two databases: ambiguous


def test_a_cards_reads_about_an_application_go_to_the_namespace_its_pods_run_in() -> None:
    """ENOSPC logged by an application the question names without a namespace: the volume
    reads its card lists are asked of the namespace the application's pods run in."""
    g = ObjectGraph()
    g.add("Pod", Pod(name="registry-6f9d7c8b5-q2w3e", namespace="registry"), "E1")
    ctx = RuleContext(subject=Subject(names=["registry"]), tools=frozenset({"query_metrics"}),
                      graph=g)  # fmt: skip
    f = Fact(key="k", statement="s", kind=FactKind.SATURATION, severity="error", focus=True,
             service="registry", subject=ObjRef(kind="app", name="registry"),
             reason="resource_exhausted", quote="mkdir /var/lib/x: no space left on device",
             message="no space left on device")  # fmt: skip
    checks = list(rule("card_reads").fact_fn(f, ctx))  # type: ignore[misc]
    queries = [c.args.get("query", "") for c in checks]
    assert queries and all('namespace="registry"' in q for q in queries), queries


def test_a_slower_services_recorded_throttling_is_read_before_its_other_resources() -> None:
    from opsmate.agent.plan.planner import Recorded

    recorded = [
        Recorded(
            type="range",
            query='sum by (pod) (rate(container_cpu_usage_seconds_total{container="web"}[5m]))',
        ),
        Recorded(
            type="range", query='sum by (pod) (container_memory_working_set_bytes{container="web"})'
        ),
        Recorded(
            type="range",
            query="sum by (pod) (rate(container_cpu_cfs_throttled_periods_"
            'total{container="web"}[5m]))',
        ),
    ]
    ctx = RuleContext(subject=Subject(names=["web"]), tools=frozenset({"query_metrics"}),
                      recorded=recorded)  # fmt: skip
    f = Fact(key="k", statement="s", kind=FactKind.LATENCY, severity="warning", focus=True,
             service="web")  # fmt: skip
    checks = list(rule("resources_of_slow_service").fact_fn(f, ctx))  # type: ignore[misc]
    assert [("throttled" in c.args["query"], "cpu_usage" in c.args["query"]) for c in checks] == [
        (True, False), (False, True)]  # fmt: skip
