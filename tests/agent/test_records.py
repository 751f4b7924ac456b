"""Records: lenient typed views of tool data (a malformed field is empty, not fatal)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from opsmate.records.base import parse_list, parse_one
from opsmate.records.k8s import Container, Event, Node, Pod, Rollout
from opsmate.records.metrics import Change, MetricResult, Series


def test_labels_given_as_a_list_become_empty() -> None:
    pod = Pod.model_validate({"name": "ledger-0", "labels": ["app", "ledger"]})
    assert pod.name == "ledger-0"
    assert pod.labels == {}


def test_label_values_become_text() -> None:
    pod = Pod.model_validate({"name": "ledger-0", "labels": {"tier": 2, "canary": None}})
    assert pod.labels == {"tier": "2", "canary": ""}


def test_counts_given_as_text() -> None:
    c = Container.model_validate({"name": "ledger", "restarts": "3"})
    assert c.restarts == 3
    assert Container.model_validate({"name": "ledger", "restarts": "many"}).restarts == 0
    assert Pod.model_validate({"name": "p", "restarts": None}).restarts == 0


def test_optional_int_and_text_fields() -> None:
    c = Container.model_validate(
        {"name": 42, "exit_code": "137", "reason": ["OOMKilled"], "state": "terminated"}
    )
    assert c.name == "42"  # numbers become text
    assert c.exit_code == 137
    assert c.reason is None  # a list is not text
    assert Container.model_validate({"exit_code": "n/a"}).exit_code is None


def test_a_container_item_that_is_not_a_mapping_is_dropped() -> None:
    pod = Pod.model_validate(
        {
            "name": "ledger-0",
            "containers": ["ledger", None, 7, {"name": "sidecar", "restarts": 1}],
            "init_containers": "migrate",
        }
    )
    assert [c.name for c in pod.containers] == ["sidecar"]
    assert pod.init_containers == []


def test_times_parse() -> None:
    ev = Event.model_validate(
        {
            "reason": "BackOff",
            "first_timestamp": "2025-06-10T09:15:00Z",
            "last_timestamp": 1749547200,  # unix seconds
        }
    )
    assert ev.first_timestamp == datetime(2025, 6, 10, 9, 15, tzinfo=UTC)
    assert ev.last_timestamp == datetime(2025, 6, 10, 9, 20, tzinfo=UTC)
    assert ev.last_timestamp is not None and ev.last_timestamp.tzinfo is not None


def test_unparseable_time_becomes_none() -> None:
    pod = Pod.model_validate({"name": "p", "start_time": "around lunch", "created": ""})
    assert pod.start_time is None
    assert pod.created is None


def test_nested_items_that_do_not_parse_are_dropped() -> None:
    pod = Pod.model_validate(
        {
            "name": "p",
            "conditions": [{"type": "Ready", "status": "False"}, "Ready=False"],
            "containers": [{"name": "c", "env": [{"name": "MODE"}, ["x"]]}],
        }
    )
    assert [c.type for c in pod.conditions] == ["Ready"]
    assert [e.name for e in pod.containers[0].env] == ["MODE"]


def test_dump_prunes_empties_and_writes_times_as_text() -> None:
    pod = Pod.model_validate(
        {"name": "ledger-0", "start_time": "2025-06-10T09:15:00Z", "labels": [], "node": None}
    )
    out = pod.dump()
    assert out["name"] == "ledger-0"
    assert out["restarts"] == 0  # zero is a value, not an empty
    assert isinstance(out["start_time"], str)
    assert datetime.fromisoformat(out["start_time"].replace("Z", "+00:00")) == datetime(
        2025, 6, 10, 9, 15, tzinfo=UTC
    )
    for gone in ("labels", "node", "containers", "conditions", "namespace", "affinity"):
        assert gone not in out


def test_dump_uses_aliases() -> None:
    chg = Change.model_validate({"time": "2025-06-10T09:15:00Z", "from": 1.0, "to": 5.0})
    assert chg.from_ == 1.0
    out = chg.dump()
    assert out["from"] == 1.0
    assert "from_" not in out


def test_dump_round_trips() -> None:
    data = {
        "name": "ledger-0",
        "namespace": "shop",
        "labels": {"app": "ledger"},
        "containers": [
            {
                "name": "ledger",
                "state": "waiting",
                "reason": "CrashLoopBackOff",
                "restarts": 4,
                "last_termination": {"reason": "Error", "exit_code": 1},
            }
        ],
    }
    pod = Pod.model_validate(data)
    again = Pod.model_validate(pod.dump())
    assert again == pod


def test_parse_list_counts_skipped_items() -> None:
    data = {"pods": [{"name": "a"}, "b", None, 3, {"name": "c"}], "count": 5}
    records, skipped = parse_list(Pod, data, "pods", "items")
    assert [p.name for p in records] == ["a", "c"]
    assert skipped == 3


def test_parse_list_key_order_and_plain_lists() -> None:
    assert parse_list(Pod, {"items": [{"name": "x"}]}, "pods", "items")[0][0].name == "x"
    # the first key whose value is a list wins; a non-list value under a key is passed over
    recs, _ = parse_list(Pod, {"pods": "oops", "items": [{"name": "y"}]}, "pods", "items")
    assert [p.name for p in recs] == ["y"]
    assert [p.name for p in parse_list(Pod, [{"name": "z"}])[0]] == ["z"]


@pytest.mark.parametrize("data", [None, "pods", 42, {}, {"pods": None}, {"other": [{}]}])
def test_parse_list_of_nothing(data: object) -> None:
    assert parse_list(Pod, data, "pods") == ([], 0)


def test_parse_one() -> None:
    assert parse_one(Pod, "ledger-0") is None
    assert parse_one(Pod, None) is None
    pod = Pod(name="ledger-0")
    assert parse_one(Pod, pod) is pod
    got = parse_one(MetricResult, {"query": "up", "series": [{"labels": {}}, "bad"]})
    assert got is not None
    assert len(got.series) == 1


def test_pod_owner_ref() -> None:
    pod = Pod.model_validate(
        {"name": "ledger-6b7c8d9f0-x2x1q", "namespace": "shop", "owner": "ReplicaSet/ledger-6b7c"}
    )
    ref = pod.owner_ref()
    assert ref is not None
    assert (ref.kind, ref.name, ref.namespace) == ("ReplicaSet", "ledger-6b7c", "shop")
    assert Pod.model_validate({"name": "p", "owner": "nonsense"}).owner_ref() is None


# --- one odd nested field must not hide the rest of the record (the records' contract) -----


def test_container_with_a_malformed_nested_record_is_kept() -> None:
    """A container whose last_termination / resources / probe is not a mapping keeps its
    name and state: one odd field must not hide a crash-looping container."""
    pod = Pod.model_validate(
        {
            "name": "ledger-0",
            "containers": [
                {
                    "name": "ledger",
                    "state": "waiting",
                    "reason": "CrashLoopBackOff",
                    "last_termination": "OOMKilled",
                    "resources": "256Mi",
                    "readiness": 5,
                }
            ],
        }
    )
    assert [c.name for c in pod.containers] == ["ledger"]
    assert pod.containers[0].reason == "CrashLoopBackOff"


def test_node_with_a_malformed_field_is_kept() -> None:
    node = parse_one(Node, {"name": "worker-3", "ready": "maybe", "pressure": ["disk"]})
    assert node is not None
    assert node.name == "worker-3"


def test_rollout_with_malformed_replicas_is_kept() -> None:
    ro = parse_one(Rollout, {"name": "ledger", "replicas": "3", "revisions": []})
    assert ro is not None
    assert ro.name == "ledger"


def test_series_with_a_malformed_point_is_kept() -> None:
    s = parse_one(Series, {"labels": {"service": "ledger"}, "max": {"value": "n/a"}})
    assert s is not None
    assert s.labels == {"service": "ledger"}
