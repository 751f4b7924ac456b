"""The log rules on synthetic facts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from opsmate.agent.observe.facts import Fact, ObjRef
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.plan.registry import RuleContext, rule
from opsmate.agent.plan.tiers import Tier
from opsmate.records.k8s import Pod

TOOLS = frozenset({"pod_logs", "list_pods", "search_logs"})
T = datetime(2031, 4, 2, 8, 41, tzinfo=UTC)


def pod(name: str, *, restarts: int = 0, owner: str | None = None, containers: int = 1) -> Pod:
    cs = [{"name": "app", "restarts": restarts}] + [
        {"name": f"side{i}"} for i in range(containers - 1)
    ]
    return Pod.model_validate(
        {"name": name, "namespace": "money", "owner": owner, "containers": cs}
    )


def fact(kind: K, subject: ObjRef, **kw: object) -> Fact:
    return Fact(key=f"k:{kind}", statement="s", evidence=["E1"], kind=kind, severity="error",
                subject=subject, **kw)  # type: ignore[arg-type]  # fmt: skip


def test_a_crash_loop_reads_the_previous_and_the_current_tail() -> None:
    r = rule("last_words_logs")
    assert r.tier == Tier.FOLLOW and K.OOM_KILLED in r.on and K.JOB_FAILED in r.on
    ctx = RuleContext(tools=TOOLS)
    ctx.graph.add("Pod", pod("ledger-1", restarts=3), "E1")
    f = fact(K.CRASH_LOOP, ObjRef(kind="Pod", name="ledger-1", namespace="money"), container="app")
    assert r.fact_fn is not None
    checks = list(r.fact_fn(f, ctx))
    assert [(c.tool, c.args) for c in checks] == [
        (
            "pod_logs",
            {"name": "ledger-1", "tail_lines": 100, "namespace": "money", "previous": True},
        ),
        ("pod_logs", {"name": "ledger-1", "tail_lines": 100, "namespace": "money"}),
    ]


def test_a_multi_container_pod_names_the_container() -> None:
    r = rule("last_words_logs")
    ctx = RuleContext(tools=TOOLS)
    ctx.graph.add("Pod", pod("ledger-2", restarts=1, containers=2), "E1")
    f = fact(K.OOM_KILLED, ObjRef(kind="Pod", name="ledger-2", namespace="money"), container="app")
    assert r.fact_fn is not None
    checks = list(r.fact_fn(f, ctx))
    assert all(c.args["container"] == "app" for c in checks) and len(checks) == 2


def test_a_first_exit_without_restarts_reads_only_the_current_tail() -> None:
    r = rule("last_words_logs")
    ctx = RuleContext(tools=TOOLS)
    ctx.graph.add("Pod", pod("ledger-3"), "E1")
    f = fact(K.CONTAINER_EXIT, ObjRef(kind="Pod", name="ledger-3", namespace="money"))
    assert r.fact_fn is not None
    assert [c.args.get("previous") for c in r.fact_fn(f, ctx)] == [None]


def test_a_clean_exit_asks_nothing() -> None:
    r = rule("last_words_logs")
    f = fact(K.CONTAINER_EXIT, ObjRef(kind="Pod", name="x", namespace="money"))
    f.severity = "info"
    assert r.fact_fn is not None
    assert list(r.fact_fn(f, RuleContext(tools=TOOLS))) == []
    assert list(r.fact_fn(fact(K.CRASH_LOOP, ObjRef(kind="Pod", name="x")), RuleContext())) == []


def test_a_failed_job_reads_its_pods_or_lists_them() -> None:
    r = rule("last_words_logs")
    assert r.fact_fn is not None
    job = ObjRef(kind="Job", name="nightly-export", namespace="money")
    empty = list(r.fact_fn(fact(K.JOB_FAILED, job), RuleContext(tools=TOOLS)))
    assert [(c.tool, c.args) for c in empty] == [
        ("list_pods", {"label_selector": "job-name=nightly-export", "namespace": "money"})
    ]
    ctx = RuleContext(tools=TOOLS)
    ctx.graph.add("Pod", pod("nightly-export-abcde", owner="Job/nightly-export"), "E1")
    ctx.graph.add("Pod", pod("other-abcde", owner="Job/other"), "E1")
    checks = list(r.fact_fn(fact(K.JOB_FAILED, job), ctx))
    assert [(c.tool, c.args["name"], c.args.get("previous")) for c in checks] == [
        ("pod_logs", "nightly-export-abcde", None)
    ]


def test_a_rare_error_from_log_stats_is_looked_at_in_context() -> None:
    r = rule("rare_error_context")
    assert r.tier == Tier.CORROBORATE and r.fact_fn is not None
    f = fact(K.SATURATION, ObjRef(kind="app", name="ledger"), service="ledger", time=T,
             quote="could not acquire connection from pool after 30s", count=1,
             detail={"source": "log_stats"})  # fmt: skip
    (check,) = r.fact_fn(f, RuleContext(tools=TOOLS))
    assert check.tool == "search_logs" and check.args["service"] == "ledger"
    assert check.args["query"] == "connection acquire pool"  # its longest words
    assert check.args["from"] == "2031-04-02T08:39:00+00:00"
    frequent = f.model_copy(update={"count": 500})
    assert list(r.fact_fn(frequent, RuleContext(tools=TOOLS))) == []
    other = f.model_copy(update={"detail": {"source": "pod_logs"}})
    assert list(r.fact_fn(other, RuleContext(tools=TOOLS))) == []


def test_an_exit_long_before_the_window_is_background() -> None:
    """A pod that was OOM-killed a day before the window asked about: its last words wait
    behind the survey (they are read only if the budget allows)."""
    r = rule("last_words_logs")
    assert r.fact_fn is not None
    subject = ObjRef(kind="Pod", name="ledger-1", namespace="money")
    ctx = RuleContext(tools=TOOLS, window_from=T)
    ctx.graph.add("Pod", pod("ledger-1", restarts=1), "E1")
    early = fact(K.OOM_KILLED, subject, container="app", time=T - timedelta(days=1))
    assert {c.tier for c in r.fact_fn(early, ctx)} == {Tier.BACKGROUND}
    recent = fact(K.OOM_KILLED, subject, container="app", time=T - timedelta(minutes=20))
    assert {c.tier for c in r.fact_fn(recent, ctx)} == {None}  # the rule's own tier
