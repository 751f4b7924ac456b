"""The planner: no repeated calls, subsumed calls folded, recorded queries, reserved steps."""

from __future__ import annotations

from opsmate.agent.plan.planner import Planner, Recorded, call_key
from opsmate.agent.state import PendingCheck, TaskState
from opsmate.tools.base import Constraints

TOOLS = ["query_metrics", "list_pods", "get_events", "log_stats", "rollout_history", "search_logs"]


def _state() -> TaskState:
    return TaskState(
        goal="g", constraints=Constraints(environment="test", services=["order-service"])
    )


def test_call_key_normalises() -> None:
    a = call_key("query_metrics", {"query": "sum by (code) (x)", "environment": "test"}, "test")
    b = call_key("query_metrics", {"query": "sum  by(code)(x)", "type": "range"}, "test")
    assert a == b
    assert call_key("rollout_history", {"name": "a", "namespace": "shop"}) == call_key(
        "rollout_history", {"name": "a"}
    )


def test_identical_calls_are_never_repeated() -> None:
    st = _state()
    p = Planner(st, tools=TOOLS)
    assert p.add(PendingCheck(tool="log_stats", args={"service": "order-service"}))
    assert not p.add(
        PendingCheck(tool="log_stats", args={"service": "order-service", "environment": "test"})
    )
    first = p.next(10)
    assert first is not None
    p.mark_done(first.tool, first.args, True)
    assert not p.add(PendingCheck(tool="log_stats", args={"service": "order-service"}))
    assert not p.add(PendingCheck(tool="unknown_tool", args={}))


def test_subsumed_calls_fold_into_the_broader_one() -> None:
    st = _state()
    p = Planner(st, tools=TOOLS)
    p.add(
        PendingCheck(
            tool="list_pods", args={"namespace": "shop", "label_selector": "app=x"}, priority=10
        )
    )
    p.add(PendingCheck(tool="list_pods", args={"namespace": "shop"}, priority=30, essential=True))
    assert [(c.args, c.priority, c.essential) for c in st.pending] == [
        ({"namespace": "shop"}, 10, True)
    ]
    p.mark_done("list_pods", {"namespace": "shop"}, True)
    assert p.is_done("list_pods", {"namespace": "shop", "label_selector": "app=y"})
    p.mark_done(
        "get_events", {"namespace": "shop"}, False
    )  # truncated: does not cover narrower asks
    assert not p.is_done("get_events", {"namespace": "shop", "name": "x"})


def test_recorded_queries_map_or_drop() -> None:
    st = _state()
    rec = [
        Recorded('max by (service) (db_pool_connections_in_use{service="order-service"})', "range"),
        Recorded('sum(up{job="x"})', "instant"),
    ]
    p = Planner(st, tools=TOOLS, recorded=rec)
    assert p.add(
        PendingCheck(
            tool="query_metrics",
            args={"query": 'sum(db_pool_connections_in_use{service="order-service"})'},
        )
    )
    assert st.pending[0].args["query"] == rec[0].query
    assert p.add(
        PendingCheck(tool="query_metrics", args={"query": 'sum ( up{job="x"} )', "type": "range"})
    )
    assert st.pending[-1].args["type"] == "instant"  # the type it was recorded with
    assert not p.add(
        PendingCheck(tool="query_metrics", args={"query": "rate(unknown_metric_total[5m])"})
    )
    assert p.skipped and "unknown_metric_total" in p.skipped[0]


def test_steps_are_reserved_for_the_survey() -> None:
    st = _state()
    p = Planner(st, tools=TOOLS)
    for i in range(5):
        p.add(PendingCheck(tool="search_logs", args={"query": f"t{i}"}, priority=10 + i))
    p.add(PendingCheck(tool="log_stats", args={}, priority=30, essential=True))
    p.add(PendingCheck(tool="rollout_history", args={"name": "a"}, priority=31, essential=True))
    assert p.next(5).tool == "search_logs"  # enough room: the plan's order
    assert p.next(2).tool == "log_stats"  # two steps left, two essential checks: they go first


def test_a_failure_named_in_the_logs_frees_one_of_the_two_reserved_metric_reads() -> None:
    from opsmate.agent.observe.facts import Fact, FactKind

    st = _state()
    p = Planner(st, tools=TOOLS)
    for q in ("a", "b"):
        p.add(PendingCheck(tool="query_metrics", args={"query": q}, priority=30, essential=True))
    p.add(PendingCheck(tool="list_pods", args={"namespace": "other"}, priority=10))
    assert p.next(2).tool == "query_metrics"  # both reserved: the survey's reads go first
    st.pending = []
    for q in ("a", "b"):
        p.add(PendingCheck(tool="query_metrics", args={"query": q}, priority=30, essential=True))
    p.add(PendingCheck(tool="list_pods", args={"namespace": "other"}, priority=10))
    st.facts.append(Fact(key="k", statement="s", kind=FactKind.DEPENDENCY_FAILURE,
                         severity="error", focus=True, detail={"source": "log_stats"}))  # fmt: skip
    assert p.next(2).tool == "list_pods"  # one metric read stays reserved, the other is freed
    assert [c.essential for c in st.pending] == [True, False]


def test_a_failure_named_by_the_subject_frees_the_surveys_search_for_error_lines() -> None:
    from opsmate.agent.observe.facts import Fact, FactKind

    st = _state()
    p = Planner(st, tools=TOOLS)
    p.add(PendingCheck(tool="search_logs", args={"level": "error"}, priority=30, essential=True))
    p.add(PendingCheck(tool="log_stats", args={}, priority=31, essential=True))
    p.add(PendingCheck(tool="list_pods", args={"namespace": "other"}, priority=10))
    assert p.next(2).tool == "search_logs"  # nothing named yet: the survey's reads first
    st.pending = []
    p.add(PendingCheck(tool="search_logs", args={"level": "error"}, priority=30, essential=True))
    p.add(PendingCheck(tool="log_stats", args={}, priority=31, essential=True))
    p.add(PendingCheck(tool="list_pods", args={"namespace": "other"}, priority=10))
    st.facts.append(Fact(key="k", statement="s", kind=FactKind.LAST_WORDS, severity="error",
                         focus=True, detail={"source": "pod_logs"}))  # fmt: skip
    assert p.next(2).tool == "list_pods"  # the failure is named: the search for one waits
    # every service's error summary stays reserved: it says who else fails
    assert [(c.tool, c.essential) for c in st.pending] == [
        ("search_logs", False),
        ("log_stats", True),
    ]


def test_one_pods_log_is_read_once_whatever_tail_is_asked() -> None:
    """A card asks for the pod's log after a rule read its last 100 lines: the same pod's
    current log is not read again; its previous instance, or another container, is."""
    st = _state()
    p = Planner(st, tools=[*TOOLS, "pod_logs"])
    assert p.add(PendingCheck(tool="pod_logs", args={"name": "web-1", "tail_lines": 100}))
    assert not p.add(PendingCheck(tool="pod_logs", args={"name": "web-1", "namespace": "shop"}))
    first = p.next(10)
    assert first is not None
    p.mark_done(first.tool, first.args, True)
    assert not p.add(PendingCheck(tool="pod_logs", args={"name": "web-1"}))
    assert p.add(PendingCheck(tool="pod_logs", args={"name": "web-1", "previous": True}))
    assert p.add(PendingCheck(tool="pod_logs", args={"name": "web-2"}))
