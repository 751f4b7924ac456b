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
