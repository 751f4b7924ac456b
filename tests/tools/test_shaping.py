"""The pure shaping functions shared by live tools and bundle replay."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opsmate.tools.shaping import (
    choose_step,
    downsample_indices,
    event_summary,
    expand_levels,
    is_prom_data,
    k8s_ref,
    log_stats,
    matches_label_selector,
    metric_ref,
    node_summary,
    normalize_message,
    normalize_promql,
    parse_label_selector,
    parse_terms,
    pod_summary,
    record_ref,
    rollout_history,
    summarize_prom_data,
    summarize_series,
)

T0 = 1792546200  # 2026-10-21T01:30:00Z
CST = timezone(timedelta(hours=8))


# --------------------------------------------------------------------------- metrics
@pytest.mark.parametrize(
    ("span", "max_points", "expected"),
    [
        (timedelta(minutes=36), 120, 30),  # 18 s raw -> 30 s
        (timedelta(hours=1), 120, 30),
        (timedelta(hours=6), 120, 300),  # 180 s raw -> 5 m
        (timedelta(days=7), 120, 7200),
        (timedelta(days=400), 120, 4 * 86400),  # beyond a day: whole days
        (timedelta(0), 120, 1),
        (timedelta(minutes=10), 600, 1),
    ],
)
def test_choose_step_rounds_up_to_a_nice_value(
    span: timedelta, max_points: int, expected: int
) -> None:
    start = datetime(2026, 10, 21, tzinfo=UTC)
    assert choose_step(start, start + span, max_points) == expected


@given(
    st.integers(min_value=0, max_value=10**8),
    st.integers(min_value=1, max_value=2000),
)
def test_choose_step_keeps_the_point_budget(span_s: int, max_points: int) -> None:
    start = datetime(2026, 10, 21, tzinfo=UTC)
    step = choose_step(start, start + timedelta(seconds=span_s), max_points)
    assert step >= 1
    assert span_s / step <= max_points


def test_choose_step_rejects_zero_points() -> None:
    now = datetime(2026, 10, 21, tzinfo=UTC)
    with pytest.raises(ValueError):
        choose_step(now, now, 0)


def test_summarize_series_statistics_and_largest_change() -> None:
    values = [[T0 + 60 * i, v] for i, v in enumerate(["1", "2", "2", "9", "8", "NaN"])]
    s = summarize_series({"code": "500"}, values, tz=CST)
    assert s["labels"] == {"code": "500"}
    assert s["points"] == 5 and s["non_finite"] == 1
    assert s["first"] == {"time": "2026-10-21T09:30:00+08:00", "value": 1.0}
    assert s["last"] == {"time": "2026-10-21T09:34:00+08:00", "value": 8.0}
    assert s["min"]["value"] == 1.0 and s["max"] == {
        "time": "2026-10-21T09:33:00+08:00",
        "value": 9.0,
    }
    assert s["mean"] == pytest.approx(4.4)
    assert s["largest_change"] == {
        "time": "2026-10-21T09:33:00+08:00",
        "size": 7.0,
        "from": 2.0,
        "to": 9.0,
    }
    assert len(s["samples"]) == 5 and "samples_downsampled_from" not in s


def test_summarize_series_negative_change_and_utc_default() -> None:
    s = summarize_series({}, [[T0, "10"], [T0 + 60, "3"], [T0 + 120, "4"]])
    assert s["largest_change"]["size"] == -7.0
    assert s["largest_change"]["time"] == "2026-10-21T01:31:00+00:00"


def test_summarize_series_empty_and_single_point() -> None:
    empty = summarize_series({"a": "b"}, [])
    assert empty["points"] == 0 and empty["first"] is None and empty["largest_change"] is None
    one = summarize_series({}, [[T0, "5"]])
    assert one["points"] == 1 and one["largest_change"] is None and one["mean"] == 5.0


def test_downsampling_keeps_the_spike_and_the_ends() -> None:
    values = [[T0 + 15 * i, "1"] for i in range(500)]
    values[333][1] = "100"
    s = summarize_series({}, values, max_points=10)
    assert s["samples_downsampled_from"] == 500
    assert len(s["samples"]) <= 12
    kept = [v for _, v in s["samples"]]
    assert 100.0 in kept
    assert s["samples"][0][0] == s["first"]["time"] and s["samples"][-1][0] == s["last"]["time"]
    assert summarize_series({}, values, max_points=0)["samples"] == []
    assert len(summarize_series({}, values, max_points=None)["samples"]) == 500


def test_downsample_indices_sorted_unique() -> None:
    idx = downsample_indices(1000, 20, keep=[5, 999, 5000])
    assert idx == sorted(set(idx)) and idx[0] == 0 and idx[-1] == 999 and 5 in idx
    assert len(idx) <= 21
    assert downsample_indices(5, 20) == [0, 1, 2, 3, 4]


def test_summarize_prom_data_matrix_vector_scalar_string() -> None:
    matrix = {
        "resultType": "matrix",
        "result": [
            {"metric": {"code": "200"}, "values": [[T0, "50"], [T0 + 60, "48"]]},
            {"metric": {"code": "500"}, "values": [[T0, "0"], [T0 + 60, "4"]]},
        ],
    }
    out = summarize_prom_data(matrix)
    assert out["result_type"] == "matrix" and out["series_total"] == 2
    assert [s["labels"]["code"] for s in out["series"]] == ["200", "500"]
    top = summarize_prom_data(matrix, max_series=1)
    assert top["series_dropped"] == 1 and top["series"][0]["labels"]["code"] == "200"

    vector = {"resultType": "vector", "result": [{"metric": {"pod": "a"}, "value": [T0, "1"]}]}
    v = summarize_prom_data(vector)
    assert v["result_type"] == "vector" and v["series"][0]["last"]["value"] == 1.0

    scalar = summarize_prom_data({"resultType": "scalar", "result": [T0, "3.5"]})
    assert scalar["series"][0]["last"]["value"] == 3.5
    string = summarize_prom_data({"resultType": "string", "result": [T0, "hello"]})
    assert string["value"]["value"] == "hello" and string["series"] == []


@pytest.mark.parametrize(
    "data",
    [
        {"resultType": "table", "result": []},
        {"resultType": "matrix", "result": {}},
        {"resultType": "matrix", "result": [{"metric": {}}]},
        {"resultType": "vector", "result": [{"metric": {}, "values": []}]},
        {"resultType": "scalar", "result": [1]},
        {"result": []},
    ],
)
def test_summarize_prom_data_rejects_non_prometheus_data(data: dict) -> None:
    with pytest.raises(ValueError):
        summarize_prom_data(data)
    assert is_prom_data(data) is not None


def test_is_prom_data_accepts_valid_and_rejects_non_mapping() -> None:
    assert is_prom_data({"resultType": "vector", "result": []}) is None
    assert is_prom_data([1, 2]) is not None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            'sum by (code) (rate(http_requests_total{service="order-service"}[5m]))',
            ' sum  by(code)(rate( http_requests_total{ service = "order-service" }[5m] ) )',
        ),
        ("a and b", "a   and\n  b"),
        (
            "histogram_quantile(0.99, sum by (le) (rate(x[5m])))",
            "histogram_quantile(0.99,sum by(le)(rate(x[5m])))",
        ),
    ],
)
def test_normalize_promql_ignores_insignificant_whitespace(a: str, b: str) -> None:
    assert normalize_promql(a) == normalize_promql(b)
    assert metric_ref(a) == metric_ref(b)
    assert metric_ref(a).startswith("metric://") and len(metric_ref(a)) == len("metric://") + 12


def test_normalize_promql_keeps_meaningful_differences() -> None:
    assert normalize_promql('x{a="b c"}') != normalize_promql('x{a="b  c"}')
    assert normalize_promql("a and b") != normalize_promql("aandb")
    assert metric_ref("up") != metric_ref("down")


# --------------------------------------------------------------------------- logs
@pytest.mark.parametrize(
    ("msg", "expected"),
    [
        ("GET /orders/12345 took 1500ms", "GET /orders/<num> took <dur>"),
        (
            "PoolTimeout: no connection after 30000 ms (pool size 10, waiting 57)",
            "PoolTimeout: no connection after <dur> (pool size <num>, waiting <num>)",
        ),
        ("connect to 10.0.3.17:5432 failed", "connect to <ip> failed"),
        ("req 123e4567-e89b-12d3-a456-426614174000 done", "req <uuid> done"),
        ("trace=4bf92f3577b34da6a3ce929d0e0e4736 ptr 0x7ffa3", "trace=<id> ptr <id>"),
        ('user "bob" not found', 'user "<str>" not found'),
        ("can't reach 'db-1'", "can't reach '<str>'"),
        ("pod order-service-7d4b9c6f8-kx2lp restarted", "pod order-service-<id> restarted"),
        ("at 2026-10-21T10:00:03.123Z http2 5xx", "at <ts> http2 5xx"),
        ("  many   spaces\nstack line 2", "many spaces"),
        ("", ""),
    ],
)
def test_normalize_message(msg: str, expected: str) -> None:
    assert normalize_message(msg) == expected


def test_normalize_message_groups_variants() -> None:
    a = normalize_message("PoolTimeout after 30000 ms (waiting 41) for order 1001")
    b = normalize_message("PoolTimeout after 30012 ms (waiting 93) for order 2077")
    assert a == b


def test_log_stats_counts_levels_and_patterns() -> None:
    records = [
        {
            "@timestamp": "2026-10-21T10:01:00+08:00",
            "level": "ERROR",
            "message": "PoolTimeout waiting 41",
            "id": "a",
        },
        {
            "@timestamp": "2026-10-21T02:03:00Z",
            "level": "error",
            "message": "PoolTimeout waiting 57",
            "id": "b",
        },
        {
            "@timestamp": "2026-10-21T10:00:00+08:00",
            "level": "error",
            "message": "PoolTimeout waiting 9",
            "id": "c",
        },
        {
            "@timestamp": "2026-10-21T09:59:00+08:00",
            "level": "info",
            "message": "GET /x 200",
            "id": "d",
        },
        {"@timestamp": "2026-10-21T09:58:00+08:00", "message": "no level here", "id": "e"},
    ]
    out = log_stats(records, top=2, ref_of=lambda r: record_ref("svc", r["id"]))
    assert out["total"] == 5
    assert out["by_level"] == {"error": 3, "info": 1, "unknown": 1}
    assert out["distinct_messages"] == 3
    top = out["top_messages"][0]
    assert top["pattern"] == "PoolTimeout waiting <num>" and top["count"] == 3
    assert top["levels"] == {"error": 3}
    # compared as times, not strings: 02:03Z is 10:03+08:00, the latest
    assert top["first_seen"] == "2026-10-21T10:00:00+08:00"
    assert top["last_seen"] == "2026-10-21T02:03:00+00:00"
    assert top["example"] == "PoolTimeout waiting 41" and top["example_ref"] == "log://svc/a"
    assert len(out["top_messages"]) == 2 and out["other_messages"] == 1


def test_log_stats_dotted_fields_and_empty() -> None:
    recs = [{"@timestamp": "2026-10-21T10:00:00Z", "log": {"level": "warn"}, "message": "x 1"}]
    out = log_stats(recs, level_field="log.level")
    assert out["by_level"] == {"warn": 1}
    assert "example_ref" not in out["top_messages"][0]
    empty = log_stats([])
    assert empty == {
        "total": 0,
        "by_level": {},
        "distinct_messages": 0,
        "top_messages": [],
        "other_messages": 0,
    }


def test_parse_terms() -> None:
    assert parse_terms('PoolTimeout "waiting 57" -kx2lp -"health check"') == (
        ["pooltimeout", "waiting 57"],
        ["kx2lp", "health check"],
    )
    assert parse_terms(None) == ([], [])
    assert parse_terms("-5 -") == (["-5", "-"], [])  # a minus before a digit is not negation


def test_expand_levels() -> None:
    assert expand_levels(None) is None and expand_levels(" , ") is None
    assert expand_levels("WARN") == {"warn", "warning"}
    assert expand_levels("error,info") == {"error", "err", "info"}


def test_record_ref() -> None:
    assert record_ref("order-service", "evt-42") == "log://order-service/evt-42"
    assert record_ref(None, 7) == "log://unknown/7"


# --------------------------------------------------------------------------- kubernetes
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-1",
        "namespace": "shop",
        "labels": {"app": "web"},
        "ownerReferences": [{"kind": "ReplicaSet", "name": "web-abc"}],
    },
    "spec": {
        "nodeName": "node-a",
        "containers": [{"name": "app", "image": "web:2"}, {"name": "side", "image": "side:1"}],
    },
    "status": {
        "phase": "Running",
        "startTime": "2026-10-21T02:00:00Z",
        "containerStatuses": [
            {
                "name": "app",
                "image": "web:2",
                "ready": False,
                "restartCount": 3,
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s"}},
                "lastState": {
                    "terminated": {
                        "reason": "OOMKilled",
                        "exitCode": 137,
                        "finishedAt": "2026-10-21T02:04:00Z",
                    }
                },
            },
            {
                "name": "side",
                "image": "side:1",
                "ready": True,
                "restartCount": 1,
                "state": {"running": {"startedAt": "2026-10-21T02:00:02Z"}},
            },
        ],
    },
}


def test_pod_summary() -> None:
    s = pod_summary(POD)
    assert (s["name"], s["namespace"], s["phase"], s["node"]) == (
        "web-1",
        "shop",
        "Running",
        "node-a",
    )
    assert s["ready"] == "1/2" and s["restarts"] == 4
    assert s["owner"] == "ReplicaSet/web-abc"
    app = s["containers"][0]
    assert app["state"] == "waiting" and app["reason"] == "CrashLoopBackOff"
    assert app["last_termination"] == {
        "reason": "OOMKilled",
        "exit_code": 137,
        "finished_at": "2026-10-21T02:04:00+00:00",
    }
    assert s["containers"][1]["state"] == "running" and "last_termination" not in s["containers"][1]
    assert pod_summary(POD, tz=CST)["start_time"] == "2026-10-21T10:00:00+08:00"


def test_pod_summary_accepts_client_to_dict_shape() -> None:
    pod = {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"node_name": "n1", "containers": [{"name": "c", "image": "i"}]},
        "status": {
            "phase": "Failed",
            "reason": "Evicted",
            "message": "low on memory",
            "start_time": datetime(2026, 10, 21, 2, 0, tzinfo=UTC),
            "container_statuses": [
                {
                    "name": "c",
                    "ready": False,
                    "restart_count": 0,
                    "state": {
                        "terminated": {"reason": "Error", "exit_code": 1, "finished_at": None}
                    },
                }
            ],
        },
    }
    s = pod_summary(pod)
    assert s["node"] == "n1" and s["start_time"] == "2026-10-21T02:00:00+00:00"
    assert s["reason"] == "Evicted" and s["ready"] == "0/1"
    assert s["containers"][0]["state"] == "terminated" and s["containers"][0]["exit_code"] == 1


def test_event_summary_core_v1() -> None:
    ev = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "web-1.1", "namespace": "shop"},
        "type": "Warning",
        "reason": "BackOff",
        "message": "Back-off restarting failed container",
        "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": "shop"},
        "count": 5,
        "firstTimestamp": "2026-10-21T02:01:00Z",
        "lastTimestamp": "2026-10-21T02:05:00Z",
        "source": {"component": "kubelet"},
    }
    s = event_summary(ev)
    assert s["object"] == {"kind": "Pod", "name": "web-1", "namespace": "shop"}
    assert (s["type"], s["reason"], s["count"], s["source"]) == ("Warning", "BackOff", 5, "kubelet")
    assert s["first_timestamp"] == "2026-10-21T02:01:00+00:00"
    assert s["last_timestamp"] == "2026-10-21T02:05:00+00:00"


def test_event_summary_events_k8s_io_v1() -> None:
    ev = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "web.2", "namespace": "shop"},
        "type": "Normal",
        "reason": "ScalingReplicaSet",
        "note": "Scaled up replica set web-abc to 2",
        "regarding": {"kind": "Deployment", "name": "web", "namespace": "shop"},
        "reportingController": "deployment-controller",
        "eventTime": "2026-10-21T01:59:58.000000Z",
        "series": {"count": 3, "lastObservedTime": "2026-10-21T02:00:00.000000Z"},
    }
    s = event_summary(ev, tz=CST)
    assert s["message"] == "Scaled up replica set web-abc to 2"
    assert s["object"]["kind"] == "Deployment" and s["count"] == 3
    assert s["source"] == "deployment-controller"
    assert s["first_timestamp"] == "2026-10-21T09:59:58+08:00"
    assert s["last_timestamp"] == "2026-10-21T10:00:00+08:00"


def _rs(name: str, rev: str | None, image: str, created: str, cause: str | None = None) -> dict:
    ann = {} if rev is None else {"deployment.kubernetes.io/revision": rev}
    if cause:
        ann["kubernetes.io/change-cause"] = cause
    return {
        "kind": "ReplicaSet",
        "metadata": {"name": name, "annotations": ann, "creationTimestamp": created},
        "spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}},
        "status": {"replicas": 2 if rev == "10" else 0},
    }


def test_rollout_history_sorts_numerically_and_marks_current() -> None:
    dep = {
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "annotations": {"deployment.kubernetes.io/revision": "10"},
        },
        "spec": {"replicas": 2, "template": {"spec": {"containers": [{"image": "web:10"}]}}},
        "status": {"readyReplicas": 1, "conditions": [{"type": "Available", "status": "False"}]},
    }
    rss = [
        _rs("web-c", "10", "web:10", "2026-10-21T02:00:00Z", "bump"),
        _rs("web-a", "2", "web:2", "2026-10-01T00:00:00Z"),
        _rs("web-b", "9", "web:9", "2026-10-14T00:00:00Z"),
    ]
    h = rollout_history(dep, rss)
    assert [r["revision"] for r in h["revisions"]] == [2, 9, 10]  # numeric, not "10" < "2"
    assert [r["current"] for r in h["revisions"]] == [False, False, True]
    assert h["current_revision"] == 10 and h["revisions"][-1]["change_cause"] == "bump"
    assert h["revisions"][-1]["images"] == ["web:10"] and h["revisions"][-1]["replicas"] == 2
    assert h["name"] == "web" and h["replicas"]["desired"] == 2 and h["replicas"]["ready"] == 1
    assert h["conditions"][0]["type"] == "Available"


def test_rollout_history_without_deployment_uses_highest_revision() -> None:
    h = rollout_history(
        None, [_rs("a", "3", "x:3", "t"), _rs("b", "4", "x:4", "t"), _rs("c", None, "x", "t")]
    )
    assert h["current_revision"] == 4
    assert [r["revision"] for r in h["revisions"]] == [3, 4, None]
    assert [r["current"] for r in h["revisions"]] == [False, True, False]
    assert "replicas" not in h


def test_node_summary() -> None:
    node = {
        "kind": "Node",
        "metadata": {"name": "node-b"},
        "spec": {
            "unschedulable": True,
            "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
        },
        "status": {
            "capacity": {"cpu": "4"},
            "allocatable": {"cpu": "3800m"},
            "conditions": [
                {
                    "type": "MemoryPressure",
                    "status": "True",
                    "reason": "KubeletHasInsufficientMemory",
                    "message": "m",
                    "lastTransitionTime": "2026-10-21T01:58:00Z",
                },
                {"type": "DiskPressure", "status": "False"},
                {"type": "Ready", "status": "False", "reason": "KubeletNotReady"},
            ],
        },
    }
    s = node_summary(node)
    assert s["pressure"] == {"memory": True, "disk": False, "pid": False} and s["any_pressure"]
    assert s["ready"] is False and s["unschedulable"] is True
    assert s["taints"] == ["k=v:NoSchedule"]
    assert s["conditions"][0]["last_transition_time"] == "2026-10-21T01:58:00+00:00"
    assert s["capacity"] == {"cpu": "4"} and s["allocatable"] == {"cpu": "3800m"}
    calm = node_summary({"metadata": {"name": "n"}, "status": {"conditions": []}})
    assert calm["any_pressure"] is False and calm["ready"] is None


LABELS = {"app": "order-service", "env": "test", "tier": "backend"}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("", True),
        (None, True),
        ("app=order-service", True),
        ("app==order-service", True),
        ("app=payment-service", False),
        ("app!=payment-service", True),
        ("app!=order-service", False),
        ("missing!=x", True),
        ("env in (test, dev)", True),
        ("env in (prod)", False),
        ("env notin (prod,staging)", True),
        ("env notin (test)", False),
        ("missing notin (a)", True),
        ("missing in (a)", False),
        ("tier", True),
        ("missing", False),
        ("!missing", True),
        ("!tier", False),
        ("app=order-service,env in (test,dev),!canary,tier", True),
        ("app=order-service, env=prod", False),
    ],
)
def test_matches_label_selector(selector: str | None, expected: bool) -> None:
    assert matches_label_selector(LABELS, selector) is expected


def test_label_selector_errors_and_parse() -> None:
    with pytest.raises(ValueError, match="not understood"):
        matches_label_selector(LABELS, "app=~order")
    with pytest.raises(ValueError):
        parse_label_selector("env in test")
    assert parse_label_selector("a=b,c notin (x, y)") == [
        ("a", "=", frozenset({"b"})),
        ("c", "notin", frozenset({"x", "y"})),
    ]
    assert matches_label_selector(None, "!a") is True


def test_k8s_ref() -> None:
    assert k8s_ref("shop", "Pod", "web-1") == "k8s://shop/Pod/web-1"
    assert k8s_ref(None, "Node", "node-a") == "k8s://_cluster/Node/node-a"
