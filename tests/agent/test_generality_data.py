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
