"""Rules about changes: a failing workload's rollout, a rollout seen in the events."""

from __future__ import annotations

from opsmate.agent.intake.subject import Subject
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.plan.registry import RuleContext, rule
from opsmate.agent.plan.tiers import Tier

TOOLS = frozenset({"rollout_history"})


def f(kind: FactKind, **kw: object) -> Fact:
    return Fact(key=str(kw), statement="s", evidence=["E1"], kind=kind, severity="error", **kw)  # type: ignore[arg-type]


def test_a_failing_workload_gets_its_rollout_checked() -> None:
    r = rule("rollout_of_failing_workload")
    assert r.tier == Tier.EXPLAIN
    fact = f(FactKind.LOG_ERROR, service="thumbs", subject=ObjRef(kind="app", name="thumbs"))
    checks = list(r.fact_fn(fact, RuleContext(tools=TOOLS, namespace="media")))  # type: ignore[misc]
    assert [(c.tool, c.args) for c in checks] == [
        ("rollout_history", {"name": "thumbs", "namespace": "media"})
    ]
    # the question names another subject: not this workload's business
    ctx = RuleContext(tools=TOOLS, subject=Subject(names=["web"]))
    assert list(r.fact_fn(fact, ctx)) == []  # type: ignore[misc]
    assert list(r.fact_fn(f(FactKind.LOG_ERROR), RuleContext(tools=TOOLS))) == []  # type: ignore[misc]


def test_a_rollout_seen_in_the_events_gets_its_changes_read() -> None:
    r = rule("rollout_seen_in_events")
    scaled = f(
        FactKind.OBSERVATION,
        reason="ScalingReplicaSet",
        message="Scaled up replica set thumbs-7d9 to 1",
        subject=ObjRef(kind="Deployment", name="thumbs", namespace="media"),
    )
    checks = list(r.fact_fn(scaled, RuleContext(tools=TOOLS)))  # type: ignore[misc]
    assert [(c.tool, c.args["name"]) for c in checks] == [("rollout_history", "thumbs")]
    down = scaled.model_copy(update={"message": "Scaled down replica set thumbs-6c8 to 0"})
    assert list(r.fact_fn(down, RuleContext(tools=TOOLS))) == []  # type: ignore[misc]
