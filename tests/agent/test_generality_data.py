"""Capabilities found on incidents the engine had not seen (session 15): each is a general
reading, tested on data of its own."""

from __future__ import annotations

import json

from opsmate.agent.kinds import card_for
from opsmate.agent.observe.depgraph import hosts_in
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.loganalysis.parse import parse_line
from opsmate.loganalysis.signals import NOT_A_HOST


def test_a_lager_record_keeps_the_error_nested_under_data() -> None:
    # Cloud Foundry's lager (Concourse): the message names the step, data.error says why
    line = json.dumps(
        {
            "timestamp": "2025-04-17T08:04:55.2Z",
            "level": "error",
            "source": "atc",
            "message": "atc.db.failed-to-open-db-retrying",
            "data": {"session": "3", "error": "x509: certificate signed by unknown authority"},
        }
    )
    pl = parse_line(line)
    assert pl.message == "atc.db.failed-to-open-db-retrying"
    assert pl.error == "x509: certificate signed by unknown authority"


def test_an_object_store_uri_names_a_bucket_not_a_host() -> None:
    assert hosts_in("s3://team-bucket/indexes") == []
    assert hosts_in("gs://b/x") == []
    assert hosts_in("abfss://c@acct.dfs.core.windows.net/p") == []
    assert hosts_in("postgres://u@db:5432/x") == [("db", "5432")]
    assert hosts_in("http://minio:9000/bucket") == [("minio", "9000")]


def test_a_backend_kind_is_no_address() -> None:
    assert {"s3", "local", "memory"} <= NOT_A_HOST


def _fact(kind: K, quote: str) -> Fact:
    return Fact(key="k", statement=quote, kind=kind, quote=quote, message=quote)


def test_a_storage_services_access_denied_is_a_policy_not_an_application_error() -> None:
    quote = (
        "failed to put object: service error: AccessDenied: User: arn:aws:sts::1:assumed-role/"
        "r/x is not authorized to perform: s3:PutObject on resource: arn:aws:s3:::b/k with an "
        "explicit deny in a resource-based policy"
    )
    card = card_for(_fact(K.LOG_ERROR, quote))
    assert card.id == "object-store-access-denied"
    assert card.conclusive and "policy" in card.phrase
    gcs = "403 Forbidden: sa@p.iam.gserviceaccount.com does not have storage.objects.create access"
    assert card_for(_fact(K.LOG_ERROR, gcs)).id == "object-store-access-denied"


def test_a_consumer_offset_out_of_range_is_records_lost_to_retention() -> None:
    quote = (
        "kafka: error while consuming metrics/4: kafka server: The requested offset is outside "
        "the range of offsets maintained by the server for the given topic/partition"
    )
    card = card_for(_fact(K.LOG_ERROR, quote))
    assert card.id == "consumer-offset-out-of-range"
    assert "retention" in card.phrase


def test_nodes_at_their_attach_limit_outrank_the_zone_conflict_of_the_others() -> None:
    # the nodes in the volume's zone are full of attached volumes; the others are in another
    # zone: the attach limit is what keeps the pod off the nodes it could use
    msg = (
        "0/7 nodes are available: 2 node(s) exceed max volume count, 5 node(s) had volume "
        "node affinity conflict."
    )
    f = Fact(key="s", statement=msg, kind=K.SCHEDULING, reason="FailedScheduling", quote=msg)
    assert card_for(f).id == "volume-attach-limit"
    only_zone = "0/3 nodes are available: 3 node(s) had volume node affinity conflict."
    g = Fact(key="z", statement=only_zone, kind=K.SCHEDULING, reason="FailedScheduling",
             quote=only_zone)  # fmt: skip
    assert card_for(g).id == "volume-node-affinity-conflict"


def test_an_inotify_limit_is_its_own_saturation_not_a_full_disk() -> None:
    from opsmate.loganalysis.signals import classify

    line = (
        "WARNING: Failed to start filesystem watcher for folder: failed to setup inotify "
        "handler. Please increase inotify limits"
    )
    assert classify(line).reason == "inotify_exhausted"
    watch = "inotify_add_watch /data/x: no space left on device"
    assert classify(watch).reason == "inotify_exhausted"
    assert classify("write /data/x: no space left on device").reason != "inotify_exhausted"
    f = Fact(key="i", statement=line, kind=K.SATURATION, reason="inotify_exhausted", quote=line)
    assert card_for(f).id == "inotify-limit"


def test_a_tenants_series_limit_is_the_cause_of_its_missing_data() -> None:
    quote = (
        "send data to ingesters: user=team-a: per-user series limit of 150000 exceeded "
        "(err-mimir-max-series-per-user)"
    )
    card = card_for(_fact(K.LOG_ERROR, quote))
    assert card.id == "tenant-limit-exceeded" and card.conclusive


def test_a_go_kit_component_field_is_a_subsystem_not_the_service() -> None:
    pl = parse_line('level=error component=remote msg="non-recoverable error" err="HTTP 400"')
    assert pl.service is None
    assert parse_line('{"service": "cart", "level": "error", "msg": "x"}').service == "cart"


def test_data_that_does_not_arrive_widens_the_scope_to_what_carries_it() -> None:
    from opsmate.agent.intake.names import detect_subject

    q = "Payments dashboards have no data for checkout-api since 09:25, namespace monitoring"
    assert detect_subject(q, namespace="monitoring").backlog
    assert detect_subject("log search shows nothing newer than 10:00", namespace="x").backlog
    assert not detect_subject("checkout-api returns 500s", namespace="monitoring").backlog


def test_a_writers_error_in_the_namespace_of_missing_data_is_in_scope() -> None:
    from opsmate.agent.intake.subject import Subject
    from opsmate.agent.judge import links
    from opsmate.agent.observe.depgraph import DependencyGraph
    from opsmate.agent.observe.facts import ObjRef
    from opsmate.agent.observe.graph import ObjectGraph

    # a log fact names its service only; the service's pods say where it runs
    dg = DependencyGraph()
    dg.aliases.update({"prometheus": "prometheus", "billing": "billing"})
    dg.namespaces.update({"prometheus": "monitoring", "billing": "shop"})

    def logged_by(svc: str) -> Fact:
        return Fact(key=svc, statement="x", kind=K.LOG_ERROR, service=svc,
                    subject=ObjRef(kind="app", name=svc))  # fmt: skip

    gap = Subject(names=["checkout-api"], namespace="monitoring", backlog=True)
    g = ObjectGraph()
    assert links.relation(logged_by("prometheus"), gap, g, set(), [], dg=dg) == links.SCOPE
    assert links.relation(logged_by("billing"), gap, g, set(), [], dg=dg) == links.UNRELATED
    plain = Subject(names=["checkout-api"], namespace="monitoring")
    assert links.relation(logged_by("prometheus"), plain, g, set(), [], dg=dg) == links.UNRELATED


def test_a_drains_cordon_is_not_why_a_pod_pends_when_other_nodes_refuse_it_for_another() -> None:
    from opsmate.agent.judge.chains import _other_nodes_refuse

    cordon = Fact(key="n", statement="node a1 is cordoned", kind=K.NODE_PROBLEM,
                  reason="Unschedulable")  # fmt: skip
    mixed = (
        "0/6 nodes are available: 3 node(s) didn't match pod topology spread constraints "
        "(missing required label), 3 node(s) were unschedulable. preemption: 0/6 nodes"
    )
    only = "0/3 nodes are available: 3 node(s) were unschedulable."
    pend = Fact(key="p", statement=mixed, kind=K.SCHEDULING, reason="Unschedulable",
                message=mixed)  # fmt: skip
    assert _other_nodes_refuse(pend, cordon)
    alone = Fact(key="q", statement=only, kind=K.SCHEDULING, reason="Unschedulable", message=only)
    assert not _other_nodes_refuse(alone, cordon)


def test_a_measured_clock_leads_the_expired_tokens_it_explains() -> None:
    from datetime import UTC, datetime

    from opsmate.agent.judge import links
    from opsmate.agent.judge.candidates import Candidate
    from opsmate.agent.judge.chains import clock_behind_time_errors
    from opsmate.agent.observe.facts import ObjRef

    t = datetime(2025, 3, 11, 1, 22, tzinfo=UTC)
    clock = Fact(key="c", statement="auth-api's clock runs 73 h behind", kind=K.CONFIG_ERROR,
                 reason="clock_skew", service="auth-api", time=t,
                 subject=ObjRef(kind="app", name="auth-api"))  # fmt: skip
    quote = "io.jsonwebtoken.ExpiredJwtException: JWT expired at 2025-03-11T00:21:57Z"
    expired = Fact(key="e", statement=quote, kind=K.LOG_ERROR, quote=quote, service="users-api",
                   time=t, subject=ObjRef(kind="app", name="users-api"))  # fmt: skip
    assert card_for(clock).id == "clock-skew-observed" and card_for(clock).conclusive
    assert card_for(expired).id == "token-expired" and card_for(expired).needs_deeper
    a = Candidate(lead=clock, score=1.0, relation=links.UNRELATED)
    b = Candidate(lead=expired, score=3.0, relation=links.LINKED, supported=True)
    clock_behind_time_errors([a, b])
    assert a.score > b.score and expired in a.chain and a.relation == links.LINKED


def test_an_exception_announced_on_the_line_before_is_what_is_quoted() -> None:
    from opsmate.loganalysis.stats import example_text

    text = (
        "Servlet.service() for servlet [dispatcherServlet] threw exception\n"
        "io.jsonwebtoken.ExpiredJwtException: JWT expired at 2025-03-11T00:21:57Z.\n"
        "\tat io.jsonwebtoken.impl.DefaultJwtParser.parse(DefaultJwtParser.java:385)"
    )
    said = example_text(parse_line(text))
    assert said.startswith("Servlet.service()") and "ExpiredJwtException: JWT expired" in said


def test_a_one_off_kill_healed_before_the_onset_explains_nothing_after_it() -> None:
    from datetime import UTC, datetime

    from opsmate.agent.judge.transients import healed_before
    from opsmate.agent.observe.facts import ObjRef
    from opsmate.agent.observe.graph import ObjectGraph
    from opsmate.records.k8s import Pod

    onset = datetime(2025, 3, 11, 1, 20, tzinfo=UTC)
    g = ObjectGraph()
    g.add("Pod", Pod.model_validate({
        "name": "zipkin-7d9f8c6b5d-x2k4p", "namespace": "todo", "phase": "Running",
        "containers": [{"name": "zipkin", "ready": True, "state": "running",
                        "started_at": "2025-03-11T01:03:40Z"}]}), "E1")  # fmt: skip
    pod = ObjRef(kind="Pod", name="zipkin-7d9f8c6b5d-x2k4p", namespace="todo")
    at = datetime(2025, 3, 11, 1, 3, tzinfo=UTC)
    kill = Fact(key="k", statement="OOMKilled", kind=K.OOM_KILLED, time=at, subject=pod)
    assert healed_before(kill, g, onset)
    assert not healed_before(kill, g, datetime(2025, 3, 11, 1, 6, tzinfo=UTC))  # at the onset
    assert not healed_before(kill, g, None)


def test_a_log4j_class_and_line_is_no_host() -> None:
    from opsmate.loganalysis.signals import hosts_in as named

    said = "will not recover (org.apache.kafka.connect.runtime.WorkerTask:234)"
    assert named(said) == [] and hosts_in(said) == []
    assert named("connect to db.prod.svc:5432 refused")[0] == "db.prod.svc:5432"


def test_postgres_refusing_writes_for_wraparound_is_its_own_cause() -> None:
    quote = 'ERROR: database is not accepting commands to avoid wraparound data loss in "app"'
    card = card_for(_fact(K.LOG_ERROR, quote))
    assert card.id == "db-xid-wraparound" and card.conclusive and "wraparound" in card.phrase
