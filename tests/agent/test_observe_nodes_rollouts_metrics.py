"""The node_conditions, rollout_history, query_metrics and list_alerts analyzers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.registry import observe
from opsmate.tools.base import ToolResult
from opsmate.tools.shaping import summarize_prom_data

NS = "shop"
REG = "registry.example.internal/shop"
W_FROM = datetime(2025, 6, 10, 9, 0, tzinfo=UTC)
W_TO = datetime(2025, 6, 10, 10, 0, tzinfo=UTC)


def make_ctx(**kw: Any) -> ObserveContext:
    return ObserveContext(eid="E3", window_from=W_FROM, window_to=W_TO, **kw)


def run(tool: str, data: dict[str, Any], args: dict[str, Any] | None = None) -> list[Fact]:
    ctx = make_ctx()
    res = ToolResult(call_id="c3", tool=tool, status="success", data=data, args=args or {})
    facts = observe(res, ctx)
    assert ctx.notes == []
    return facts


def of(facts: list[Fact], kind: FactKind) -> list[Fact]:
    return [f for f in facts if f.kind == kind]


# ----------------------------------------------------------------------------- nodes


def node(name: str, *, ready: str = "True", unschedulable: bool = False, **pressure: str) -> Any:
    """A node as node_summary writes it (pressure conditions: memory/disk/pid = status)."""
    conds = [
        {
            "type": "Ready",
            "status": ready,
            "reason": "KubeletReady" if ready == "True" else "KubeletNotReady",
            "message": "kubelet is posting ready status"
            if ready == "True"
            else "container runtime network not ready: NetworkReady=false",
            "last_transition_time": "2025-06-10T09:12:00Z",
        }
    ]
    flags = {"memory": False, "disk": False, "pid": False}
    for short, ctype in (
        ("memory", "MemoryPressure"),
        ("disk", "DiskPressure"),
        ("pid", "PIDPressure"),
    ):
        status = pressure.get(short, "False")
        flags[short] = status == "True"
        conds.append(
            {
                "type": ctype,
                "status": status,
                "reason": f"KubeletHas{ctype}" if status == "True" else f"KubeletHasNo{ctype}",
                "message": f"kubelet has {ctype}"
                if status == "True"
                else f"kubelet has no {ctype}",
                "last_transition_time": "2025-06-10T09:14:00Z",
            }
        )
    return {
        "name": name,
        "ready": ready == "True",
        "unschedulable": unschedulable,
        "pressure": flags,
        "any_pressure": any(flags.values()),
        "conditions": conds,
        "taints": [],
        "labels": {"kubernetes.io/hostname": name},
        "capacity": {"cpu": "4", "memory": "16Gi"},
        "allocatable": {"cpu": "3800m", "memory": "15Gi"},
        "kubelet_version": "v1.30.2",
    }


def test_node_not_ready() -> None:
    facts = run("node_conditions", {"nodes": [node("worker-7", ready="False"), node("worker-2")]})
    assert len(facts) == 1
    f = facts[0]
    assert f.kind == FactKind.NODE_PROBLEM
    assert f.severity == "error"
    assert f.subject == ObjRef(kind="Node", name="worker-7")
    assert f.detail == {"condition": "Ready", "status": "False"}
    assert f.reason == "KubeletNotReady"
    assert "Ready=False" in f.statement
    assert f.time == datetime(2025, 6, 10, 9, 12, tzinfo=UTC)


def test_node_ready_unknown_is_a_problem() -> None:
    facts = run("node_conditions", {"nodes": [node("worker-7", ready="Unknown")]})
    assert [f.detail["status"] for f in facts] == ["Unknown"]


def test_node_disk_pressure() -> None:
    facts = run("node_conditions", {"nodes": [node("worker-5", disk="True")]})
    assert len(facts) == 1
    f = facts[0]
    assert f.kind == FactKind.NODE_PROBLEM
    assert f.detail == {"condition": "DiskPressure", "status": "True"}
    assert f.subject == ObjRef(kind="Node", name="worker-5")


def test_cordoned_node() -> None:
    facts = run("node_conditions", {"nodes": [node("worker-3", unschedulable=True)]})
    assert len(facts) == 1
    f = facts[0]
    assert f.kind == FactKind.NODE_PROBLEM
    assert f.severity == "warning"
    assert f.reason == "Unschedulable"
    assert "cordoned" in f.statement


def test_healthy_nodes_have_no_facts_and_are_listed() -> None:
    ctx = make_ctx()
    res = ToolResult(
        call_id="c3",
        tool="node_conditions",
        status="success",
        data={"nodes": [node("worker-1"), node("worker-2")]},
    )
    assert observe(res, ctx) == []
    assert ctx.graph.get("Node", None, "worker-1") is not None
    assert ctx.graph.absent("Node", None, "worker-9") == "E3"


# ----------------------------------------------------------------------------- rollouts


def revision(n: int, image: str, created: datetime, *, current: bool = False) -> dict[str, Any]:
    return {
        "revision": n,
        "replicaset": f"ledger-{n:x}b7c8d9f0",
        "images": [image],
        "created": created.isoformat().replace("+00:00", "Z"),
        "change_cause": None,
        "replicas": 3 if current else 0,
        "ready_replicas": 3 if current else 0,
        "current": current,
    }


def rollout(revisions: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    """A rollout as rollout_history writes it (with its Deployment)."""
    cur = next((r for r in revisions if r["current"]), revisions[-1] if revisions else None)
    out: dict[str, Any] = {
        "current_revision": cur["revision"] if cur else None,
        "revisions": revisions,
        "name": "ledger",
        "namespace": NS,
        "images": cur["images"] if cur else [],
        "replicas": {"desired": 3, "ready": 3, "updated": 3, "available": 3, "unavailable": 0},
        "conditions": [
            {
                "type": "Available",
                "status": "True",
                "reason": "MinimumReplicasAvailable",
                "message": "Deployment has minimum availability.",
                "last_update": "2025-06-10T09:41:00Z",
            }
        ],
    }
    out.update(kw)
    return out


def test_new_image_in_the_window_is_a_change() -> None:
    data = rollout(
        [
            revision(3, f"{REG}/ledger:1.4.0", W_FROM - timedelta(days=6)),
            revision(4, f"{REG}/ledger:1.5.0", W_FROM + timedelta(minutes=40), current=True),
        ]
    )
    facts = run("rollout_history", data, {"name": "ledger", "namespace": NS})
    f = of(facts, FactKind.CHANGE)
    assert len(f) == 1, [x.statement for x in facts]
    change = f[0]
    assert f"{REG}/ledger:1.4.0 -> {REG}/ledger:1.5.0" in change.statement
    assert change.detail["images"] == [f"{REG}/ledger:1.5.0"]
    assert change.detail["previous_images"] == [f"{REG}/ledger:1.4.0"]
    assert change.detail["revision"] == 4
    assert change.subject == ObjRef(kind="Deployment", name="ledger", namespace=NS)
    assert change.time == W_FROM + timedelta(minutes=40)
    assert of(facts, FactKind.NOT_READY) == []


def test_same_image_is_a_configuration_change() -> None:
    data = rollout(
        [
            revision(3, f"{REG}/ledger:1.4.0", W_FROM - timedelta(days=6)),
            revision(4, f"{REG}/ledger:1.4.0", W_FROM + timedelta(minutes=40), current=True),
        ]
    )
    facts = of(run("rollout_history", data), FactKind.CHANGE)
    assert len(facts) == 1
    assert "configuration change" in facts[0].statement


def test_first_revision_is_created_not_changed() -> None:
    data = rollout(
        [revision(1, f"{REG}/ledger:1.0.0", W_FROM + timedelta(minutes=5), current=True)]
    )
    facts = run("rollout_history", data)
    assert of(facts, FactKind.CHANGE) == []
    obs = of(facts, FactKind.OBSERVATION)
    assert len(obs) == 1
    assert "created" in obs[0].statement
    assert obs[0].detail["created"] is True


def test_old_revision_is_no_change() -> None:
    data = rollout(
        [
            revision(6, f"{REG}/ledger:1.3.0", W_FROM - timedelta(days=20)),
            revision(7, f"{REG}/ledger:1.4.0", W_FROM - timedelta(days=5), current=True),
        ]
    )
    facts = run("rollout_history", data)
    assert of(facts, FactKind.CHANGE) == []
    nc = of(facts, FactKind.NO_CHANGE)
    assert len(nc) == 1
    assert "no recent rollout" in nc[0].statement


def test_unavailable_replicas_are_not_ready() -> None:
    data = rollout(
        [revision(7, f"{REG}/ledger:1.4.0", W_FROM - timedelta(days=5), current=True)],
        replicas={"desired": 3, "ready": 1, "updated": 3, "available": 1, "unavailable": 2},
    )
    f = of(run("rollout_history", data), FactKind.NOT_READY)
    assert len(f) == 1
    assert f[0].detail == {"desired": 3, "ready": 1, "unavailable": 2}
    assert "1 of 3" in f[0].statement


QUOTA_MSG = (
    'pods "ledger-7b7c8d9f0-k2k2k" is forbidden: exceeded quota: shop-compute, '
    "requested: limits.memory=2Gi, used: limits.memory=7Gi, limited: limits.memory=8Gi"
)


def _quota_rollout() -> dict[str, Any]:
    return rollout(
        [revision(7, f"{REG}/ledger:1.4.0", W_FROM - timedelta(days=5), current=True)],
        replicas={"desired": 3, "ready": 2, "updated": 2, "available": 2, "unavailable": 1},
        conditions=[
            {
                "type": "ReplicaFailure",
                "status": "True",
                "reason": "FailedCreate",
                "message": QUOTA_MSG,
                "last_update": "2025-06-10T09:33:00Z",
            },
            {
                "type": "Available",
                "status": "True",
                "reason": "MinimumReplicasAvailable",
                "message": "Deployment has minimum availability.",
                "last_update": "2025-06-10T09:00:00Z",
            },
        ],
    )


def test_condition_with_exceeded_quota_is_quota_refusal() -> None:
    facts = run("rollout_history", _quota_rollout())
    q = of(facts, FactKind.QUOTA_REFUSAL)
    assert len(q) == 1
    f = q[0]
    assert f.severity == "error"
    assert f.reason == "FailedCreate"
    assert f.message == QUOTA_MSG
    assert ObjRef(kind="ResourceQuota", name="shop-compute", namespace=NS) in f.objects
    assert f.detail["resources"] == ["limits.memory"]
    # the Available=True condition is no finding
    assert not any("Available=True" in x.statement for x in facts)


def test_condition_fact_carries_the_condition_time() -> None:
    """rollout_history writes each condition's time as ``last_update``."""
    f = of(run("rollout_history", _quota_rollout()), FactKind.QUOTA_REFUSAL)[0]
    assert f.time == datetime(2025, 6, 10, 9, 33, tzinfo=UTC)


def test_rollout_of_nothing_does_not_raise() -> None:
    assert run("rollout_history", {}) == []
    assert run("rollout_history", {"revisions": "x", "replicas": None}) == []


# ----------------------------------------------------------------------------- metrics

T0 = int(W_FROM.timestamp())


def prom(query: str, series: list[tuple[dict[str, str], list[float]]]) -> dict[str, Any]:
    """A query_metrics answer: the query plus summarize_prom_data of a matrix (1 min steps)."""
    raw = {
        "resultType": "matrix",
        "result": [
            {"metric": labels, "values": [[T0 + 60 * i, str(v)] for i, v in enumerate(values)]}
            for labels, values in series
        ],
    }
    return {"query": query, **summarize_prom_data(raw, tz=UTC, max_points=30)}


ROSE = [0.12, 0.11, 0.13, 0.12, 0.12, 0.11, 0.95, 0.97, 0.96, 0.98, 0.97, 0.96]
FLAT = [0.2] * 12


def metric_facts(query: str, series: list[tuple[dict[str, str], list[float]]]) -> list[Fact]:
    return run("query_metrics", prom(query, series), {"query": query})


def test_latency_that_rose() -> None:
    q = (
        "histogram_quantile(0.99, sum by (le) (rate("
        'http_server_request_duration_seconds_bucket{service="ledger"}[5m])))'
    )
    facts = metric_facts(q, [({}, ROSE)])
    assert len(facts) == 1
    f = facts[0]
    assert f.kind == FactKind.LATENCY
    assert f.detail["direction"] == "rose"
    assert f.subject == ObjRef(kind="app", name="ledger")  # from the query's selector
    assert f.service == "ledger"
    assert f.time == W_FROM + timedelta(minutes=6)


def test_latency_by_peer_is_a_dependency_failure() -> None:
    q = (
        "histogram_quantile(0.99, sum by (le, peer) (rate("
        'client_request_duration_seconds_bucket{service="ledger"}[5m])))'
    )
    facts = metric_facts(q, [({"peer": "tally"}, ROSE)])
    assert len(facts) == 1
    f = facts[0]
    assert f.kind == FactKind.DEPENDENCY_FAILURE
    assert f.objects == [ObjRef(kind="app", name="tally")]
    assert f.reason == "slow"


def test_latency_by_peer_host() -> None:
    q = (
        "histogram_quantile(0.99, sum by (le, upstream) "
        '(rate(upstream_latency_bucket{app="ledger"}[5m])))'
    )
    facts = metric_facts(q, [({"upstream": "db.shop.internal"}, ROSE)])
    assert facts[0].kind == FactKind.DEPENDENCY_FAILURE
    assert facts[0].objects == [ObjRef(kind="host", name="db.shop.internal")]


def test_5xx_series_is_error_rate() -> None:
    q = 'sum(rate(http_requests_total{service="ledger",code=~"5.."}[5m]))'
    facts = metric_facts(q, [({}, [0.0, 0.1, 0.0, 0.1, 0.0, 0.1, 4.0, 4.2, 4.1, 3.9, 4.0, 4.1])])
    assert len(facts) == 1
    assert facts[0].kind == FactKind.ERROR_RATE
    assert facts[0].subject == ObjRef(kind="app", name="ledger")


def test_throttling_that_rose_is_saturation() -> None:
    q = 'sum(rate(container_cpu_cfs_throttled_periods_total{container="ledger"}[5m]))'
    facts = metric_facts(q, [({}, [1, 2, 1, 2, 1, 2, 40, 42, 41, 39, 40, 43])])
    assert len(facts) == 1
    assert facts[0].kind == FactKind.SATURATION
    assert facts[0].subject == ObjRef(kind="app", name="ledger")


def test_ratio_pinned_at_one_is_saturation() -> None:
    q = 'sum(db_pool_in_use{service="ledger"}) / sum(db_pool_max{service="ledger"})'
    facts = metric_facts(q, [({}, [0.6, 0.7, 0.8, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])])
    assert len(facts) == 1
    f = facts[0]
    assert f.kind == FactKind.SATURATION
    assert f.severity == "error"
    assert f.detail["max"] == 1.0 and f.detail["last"] == 1.0
    assert "pinned" in f.statement


def test_flat_series_has_no_fact() -> None:
    q = 'sum(rate(http_requests_total{service="ledger",code=~"5.."}[5m]))'
    assert metric_facts(q, [({}, FLAT)]) == []
    q2 = 'sum(db_pool_in_use{service="ledger"}) / sum(db_pool_max{service="ledger"})'
    assert metric_facts(q2, [({}, [0.4] * 12)]) == []


def test_series_label_beats_the_selector() -> None:
    q = 'sum by (service) (rate(http_requests_total{code=~"5..", service=~"ledger|tally"}[5m]))'
    facts = metric_facts(q, [({"service": "tally"}, [0, 0, 0, 0, 0, 0, 3, 3, 3, 3, 3, 3])])
    assert [f.subject for f in facts] == [ObjRef(kind="app", name="tally")]


def test_no_series_no_fact() -> None:
    assert run("query_metrics", {"query": "up", "series": [], "series_total": 0}) == []
    assert run("query_metrics", {}) == []


# ----------------------------------------------------------------------------- alerts


def test_firing_alerts() -> None:
    data = {
        "alerts": [
            {
                "name": "LedgerHighErrorRate",
                "state": "firing",
                "labels": {"alertname": "LedgerHighErrorRate", "service": "ledger"},
                "annotations": {"summary": "ledger 5xx above 5% for 10m"},
                "active_at": "2025-06-10T09:22:00Z",
                "value": "0.081",
            },
            {
                "name": "TallyDiskFilling",
                "state": "inactive",
                "labels": {"service": "tally"},
                "annotations": {},
            },
        ],
        "count": 2,
    }
    facts = run("list_alerts", data)
    assert len(facts) == 1
    f = facts[0]
    assert f.kind == FactKind.ALERT
    assert f.reason == "LedgerHighErrorRate"
    assert f.subject == ObjRef(kind="app", name="ledger")
    assert f.message == "ledger 5xx above 5% for 10m"
    assert f.time == datetime(2025, 6, 10, 9, 22, tzinfo=UTC)
    assert f.evidence == ["E3"]


def test_pending_alert_and_name_from_labels() -> None:
    data = {"alerts": [{"state": "pending", "labels": {"alertname": "LedgerSlow"}}]}
    facts = run("list_alerts", data)
    assert [f.reason for f in facts] == ["LedgerSlow"]
    assert facts[0].subject is None


def test_memory_in_use_that_rose_is_a_change_until_it_is_held_against_a_limit() -> None:
    from opsmate.agent.observe.analyzers.metrics import _shift_kind

    used = 'sum by (pod) (container_memory_working_set_bytes{namespace="shop"})'
    assert _shift_kind(used, {"pod": "web-1"}, "rose") == FactKind.METRIC_SHIFT
    ratio = (
        'sum by (pod) (container_memory_working_set_bytes{namespace="shop"}) / sum by (pod) '
        '(kube_pod_container_resource_limits{resource="memory"})'
    )
    assert _shift_kind(ratio, {"pod": "web-1"}, "rose") == FactKind.SATURATION
    throttled = "sum by (pod) (rate(container_cpu_cfs_throttled_periods_total[5m]))"
    assert _shift_kind(throttled, {"pod": "web-1"}, "rose") == FactKind.SATURATION


def test_more_answered_requests_is_traffic_not_trouble() -> None:
    from opsmate.agent.observe.analyzers.metrics import _shift_severity

    ok = {"status": "200"}
    assert _shift_severity(FactKind.METRIC_SHIFT, ok, "rose") == "info"
    assert _shift_severity(FactKind.METRIC_SHIFT, ok, "fell") == "warning"  # answers fell away
    assert _shift_severity(FactKind.METRIC_SHIFT, {"status": "502"}, "rose") == "warning"
    assert _shift_severity(FactKind.METRIC_SHIFT, {"pod": "web-1"}, "rose") == "warning"


def test_a_container_throttled_in_most_periods_is_cpu_pinned_at_its_limit() -> None:
    q = (
        'sum by (pod) (rate(container_cpu_cfs_throttled_periods_total{namespace="dt"}[5m])) '
        '/ sum by (pod) (rate(container_cpu_cfs_periods_total{namespace="dt"}[5m]))'
    )
    (f,) = metric_facts(q, [({"pod": "api-0"}, [0.93, 0.95, 0.91, 0.94] * 3)])
    assert f.kind == FactKind.SATURATION and f.reason == "cpu_throttled"
    assert f.subject == ObjRef(kind="Pod", name="api-0") and "94%" in f.statement
    assert f.background  # the same all through the window: a standing condition
    assert metric_facts(q, [({"pod": "api-0"}, [0.05, 0.08, 0.04] * 4)]) == []  # under 25 %


RETRANS = "sum by (instance) (rate(node_netstat_Tcp_RetransSegs[5m]))"


def test_one_node_retransmitting_while_the_others_do_not_is_packet_loss_there() -> None:
    calm = [0.5, 0.6, 0.4, 0.5, 0.6, 0.5, 0.5, 0.6, 0.4, 0.5, 0.6, 0.5]
    lossy = [0.4, 0.5, 0.4, 0.5, 0.4, 0.5, 30.0, 33.0, 34.0, 31.0, 32.0, 33.0]
    series = [({"instance": "w1:9100"}, calm), ({"instance": "w2:9100"}, lossy),
              ({"instance": "w3:9100"}, calm)]  # fmt: skip
    (f,) = metric_facts(RETRANS, series)
    assert f.kind == FactKind.NODE_PROBLEM and f.reason == "NodeNetworkLoss"
    assert f.subject == ObjRef(kind="Node", name="w2")  # the port is not part of the name
    assert f.severity == "error" and f.time == W_FROM + timedelta(minutes=6)
    assert "packets are lost on node w2" in f.statement and "other 2 node(s)" in f.statement


def test_retransmits_rising_on_every_node_are_load_not_loss() -> None:
    lossy = [0.4, 0.5, 0.4, 0.5, 0.4, 0.5, 30.0, 33.0, 34.0, 31.0, 32.0, 33.0]
    series = [({"instance": f"w{i}"}, lossy) for i in range(3)]
    assert of(metric_facts(RETRANS, series), FactKind.NODE_PROBLEM) == []


def test_a_small_rise_below_what_the_other_nodes_run_is_no_loss() -> None:
    busy = [20.0] * 12
    rose = [2.0, 2.1, 2.0, 2.1, 2.0, 2.1, 9.0, 9.5, 9.0, 9.2, 9.1, 9.0]  # x4, still under 20
    series = [({"instance": "w1"}, busy), ({"instance": "w2"}, rose), ({"instance": "w3"}, busy)]
    assert of(metric_facts(RETRANS, series), FactKind.NODE_PROBLEM) == []


def test_a_node_exporter_address_is_the_node_whose_pods_have_that_host_ip() -> None:
    from opsmate.agent.observe.graph import ObjectGraph
    from opsmate.records.k8s import Pod

    graph = ObjectGraph()
    pod = Pod(name="quote-7f9c8d6b5-abcde", namespace=NS, node="ip-10-0-3-127",
              host_ip="10.0.3.127", owner="ReplicaSet/quote-7f9c8d6b5")  # fmt: skip
    graph.add("Pod", pod, "E1")
    calm = [2.0, 2.5, 2.2, 2.4, 2.1, 2.6, 2.3, 2.2, 2.4, 2.5, 2.1, 2.2]
    lossy = [2.2, 2.4, 2.1, 2.3, 2.2, 2.5, 300.0, 340.0, 360.0, 330.0, 350.0, 345.0]
    q = "sum by (instance) (rate(node_netstat_TcpExt_TCPTimeouts[5m]))"
    data = prom(
        q, [({"instance": "10.0.1.45:9100"}, calm), ({"instance": "10.0.3.127:9100"}, lossy)]
    )
    ctx = make_ctx(graph=graph)
    res = ToolResult(
        call_id="c3", tool="query_metrics", status="success", data=data, args={"query": q}
    )
    (f,) = observe(res, ctx)
    assert f.subject == ObjRef(kind="Node", name="ip-10-0-3-127")
    assert "(it runs quote)" in f.statement  # what a call lost there may have gone to


def test_one_node_filling_its_conntrack_table_and_dropping_connections() -> None:
    calm = [30000.0] * 12
    filling = [28000.0] * 6 + [262144.0] * 6
    series = [({"node": "w1"}, calm), ({"node": "w2"}, filling), ({"node": "w3"}, calm)]
    (f,) = metric_facts("node_nf_conntrack_entries", series)
    assert f.kind == FactKind.SATURATION and f.reason == "conntrack_filling"
    assert f.subject == ObjRef(kind="Node", name="w2")
    drops = [0.0] * 6 + [400.0, 380.0, 410.0, 390.0, 420.0, 400.0]
    q = "sum by (node) (rate(node_nf_conntrack_stat_drop[5m]))"
    (d,) = metric_facts(q, [({"node": "w1"}, [0.0] * 12), ({"node": "w2"}, drops)])
    assert d.reason == "conntrack_full" and "drops new connections" in d.statement


def test_a_node_at_its_conntrack_limit_is_full() -> None:
    from opsmate.agent.evidence import EvidenceStore
    from opsmate.agent.judge.saturation import derive_node_limits
    from opsmate.agent.observe.graph import ObjectGraph
    from opsmate.agent.state import TaskState

    store = EvidenceStore()
    for eid, q, values in (
        ("E1", "node_nf_conntrack_entries", {"w1": 30000.0, "w2": 262100.0}),
        ("E2", "node_nf_conntrack_entries_limit", {"w1": 262144.0, "w2": 262144.0}),
    ):
        data = prom(q, [({"instance": f"{n}:9100"}, [v] * 12) for n, v in values.items()])
        store.results[eid] = ToolResult(call_id=eid, tool="query_metrics", status="success",
                                        data=data, args={"query": q})  # fmt: skip
    state = TaskState(goal="why")
    derive_node_limits(store, state, ObjectGraph())
    [f] = state.facts
    assert f.reason == "conntrack_full" and f.subject == ObjRef(kind="Node", name="w2")
    assert f.evidence == ["E1", "E2"] and "262100 of 262144" in f.statement


def test_a_volume_out_of_inodes_is_named_for_its_claim() -> None:
    q = (
        'kubelet_volume_stats_inodes_used{namespace="registry"} / '
        'kubelet_volume_stats_inodes{namespace="registry"}'
    )
    labels = {"namespace": "registry", "persistentvolumeclaim": "storage-verdaccio-0"}
    (f,) = metric_facts(q, [(labels, [0.9, 0.95, 0.99, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])])
    assert f.kind == FactKind.SATURATION and f.reason == "inodes_exhausted"
    assert f.subject == ObjRef(kind="PersistentVolumeClaim", name="storage-verdaccio-0",
                               namespace="registry")  # fmt: skip
    assert "no free inodes" in f.statement


def test_free_inodes_that_fall_to_zero_are_a_volume_out_of_inodes() -> None:
    """A gauge of what is left (free inodes) that reaches 0 and stays there: the volume ran
    out, named for its claim; one that only dips is not."""
    q = 'kubelet_volume_stats_inodes_free{namespace="registry"}'
    labels = {"namespace": "registry", "persistentvolumeclaim": "registry-data"}
    (f,) = metric_facts(q, [(labels, [900.0, 400.0, 50.0, 0.0, 0.0, 0.0, 0.0, 0.0])])
    assert f.kind == FactKind.SATURATION and f.reason == "inodes_exhausted"
    assert "fell to 0" in f.statement and "no free inodes" in f.statement
    assert f.subject is not None and f.subject.name == "registry-data"
    assert [x for x in metric_facts(q, [(labels, [900.0, 0.0, 800.0, 850.0])]) if x.reason] == []


def test_a_container_throttled_at_a_limit_its_namespace_set_since_its_pod_began() -> None:
    """Pods a rollout created half-way through the window, throttled at a CPU limit the
    LimitRanger filled in at admission: a change (not background), and the limit is named
    with where it came from."""
    from opsmate.records.k8s import Container, Pod, Resources

    q = (
        'sum by (pod) (rate(container_cpu_cfs_throttled_periods_total{container="web"}[5m])) / '
        'sum by (pod) (rate(container_cpu_cfs_periods_total{container="web"}[5m]))'
    )
    late = T0 + 40 * 60  # the series begins 40 minutes into the window
    raw = {"resultType": "matrix", "result": [{"metric": {"pod": "web-7d-x2x1q"},
           "values": [[late + 60 * i, "0.7"] for i in range(10)]}]}  # fmt: skip
    data = {"query": q, **summarize_prom_data(raw, tz=UTC, max_points=30)}
    ctx = make_ctx()
    web = Container(name="web", resources=Resources(limits={"cpu": "500m"}))
    note = "LimitRanger plugin set: cpu, memory limit for container web"
    pod = Pod(name="web-7d-x2x1q", namespace="shop", containers=[web], limit_ranger=note)
    ctx.graph.add("Pod", pod, "E1")
    res = ToolResult(call_id="c", tool="query_metrics", status="success", data=data,
                     args={"query": q})  # fmt: skip
    [f] = observe(res, ctx)
    assert f.reason == "cpu_throttled" and not f.background
    assert "throttled at its CPU limit of 500m, a limit the namespace's LimitRange set" in (
        f.statement
    )


def test_a_replica_whose_lag_rises_serves_stale_reads() -> None:
    """A replication-lag gauge that rises from nothing past half a minute: that replica is
    behind its primary (the card says reads from it miss recent writes); one that stays low
    says nothing."""
    from opsmate.agent.kinds import card_for

    q = 'mongodb_mongod_replset_member_replication_lag{namespace="app"}'
    behind = {"name": "mongodb-2.mongodb-headless.app.svc.cluster.local:27017"}
    steady = {"name": "mongodb-1.mongodb-headless.app.svc.cluster.local:27017"}
    facts = metric_facts(q, [(behind, [0.0, 0.0, 1.0, 40.0, 180.0, 420.0, 400.0, 390.0]),
                             (steady, [0.0, 1.0, 0.0, 2.0, 1.0, 0.0, 1.0, 0.0])])  # fmt: skip
    lagging = [f for f in facts if f.reason == "replication_lag"]
    assert len(lagging) == 1 and lagging[0].subject == ObjRef(kind="Pod", name="mongodb-2")
    assert "420 s" in lagging[0].statement and card_for(lagging[0]).id == "replica-lag"
    assert card_for(lagging[0]).conclusive
