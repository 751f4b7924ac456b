"""Checks prompted by problems unrelated to the question's subject wait their turn."""

from __future__ import annotations

from opsmate.agent.intake.subject import Subject
from opsmate.agent.observe.facts import Fact, ObjRef
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.plan.hold import HELD_TIER, hold, release, unrelated_facts
from opsmate.agent.plan.registry import (
    _RULES,
    Check,
    Proposal,
    RuleContext,
    propose,
    result_rule,
)
from opsmate.agent.plan.tiers import Tier
from opsmate.agent.state import PendingCheck
from opsmate.tools.base import ToolResult


def crash(pod: str, quote: str = "") -> Fact:
    return Fact(
        key=f"k8s:crash:{pod}",
        kind=K.CRASH_LOOP,
        statement=f"pod {pod}: container app is in CrashLoopBackOff",
        subject=ObjRef(kind="Pod", name=pod, namespace="shop"),
        severity="error",
        quote=quote,
        evidence=["E1"],
    )


def mine(text: str) -> Fact:
    return Fact(
        key="log:api",
        kind=K.LOG_ERROR,
        statement=f"api: {text}",
        subject=ObjRef(kind="app", name="api"),
        severity="error",
        quote=text,
        service="api",
        focus=True,
        evidence=["E2"],
    )


def test_without_a_subject_nothing_is_unrelated() -> None:
    assert unrelated_facts([crash("mailer-1")], Subject(), ObjectGraph(), []) == set()


def test_a_neighbours_crash_is_held_until_the_subjects_errors_name_it() -> None:
    subject = Subject(names=["api"], namespace="shop")
    other = crash("mailer-6d7f8-k2j3h")
    unrelated = unrelated_facts([other], subject, ObjectGraph(), [])
    assert other.key in unrelated
    check = PendingCheck(tool="pod_logs", args={"name": other.subject.name},  # type: ignore[union-attr]
                         priority=int(Tier.FOLLOW), trigger_fact=other.key)  # fmt: skip
    held = hold(check, unrelated)
    assert held.priority == HELD_TIER and held.held_from == int(Tier.FOLLOW)
    queue = [held]
    assert release(queue, unrelated) == 0 and queue[0].priority == HELD_TIER
    # the subject's own error names the mailer: the crash is now linked, the check is urgent
    linked = unrelated_facts([other, mine("smtp send failed: mailer:2525 refused")], subject,
                             ObjectGraph(), [])  # fmt: skip
    assert other.key not in linked
    assert release(queue, linked) == 1
    assert queue[0].priority == int(Tier.FOLLOW) and queue[0].held_from is None


def test_a_subject_fact_is_never_held() -> None:
    subject = Subject(names=["api"], namespace="shop")
    own = crash("api-5c6d7-a1b2c")
    assert own.key not in unrelated_facts([own], subject, ObjectGraph(), [])
    check = PendingCheck(tool="pod_logs", priority=int(Tier.FOLLOW), trigger_fact=own.key)
    assert hold(check, set()).priority == int(Tier.FOLLOW)


def test_proposals_carry_the_fact_that_prompted_them() -> None:
    f = crash("mailer-6d7f8-k2j3h")
    ctx = RuleContext(subject=Subject(), namespace="shop", tools=frozenset({"pod_logs"}))
    props = [p for p in propose([f], None, ctx) if p.check.tool == "pod_logs"]
    assert props and all(p.fact == f.key and p.tier == Tier.FOLLOW for p in props)


def test_a_check_may_make_itself_less_urgent_than_its_rule_never_more() -> None:
    seen: list[Proposal] = []

    @result_rule("test_tiers_probe", Tier.EXPLAIN, "probe_tool")
    def probe(result: ToolResult, ctx: RuleContext) -> list[Check]:
        return [
            Check("a", {}, "later", tier=Tier.BACKGROUND),
            Check("b", {}, "sooner?", tier=Tier.FOLLOW),
            Check("c", {}, "as the rule"),
        ]

    try:
        res = ToolResult(call_id="c", tool="probe_tool", status="success", data={})
        seen = [p for p in propose([], res, RuleContext()) if p.rule == "test_tiers_probe"]
    finally:
        _RULES[:] = [r for r in _RULES if r.name != "test_tiers_probe"]
    assert [(p.check.tool, p.tier) for p in seen] == [
        ("a", Tier.BACKGROUND),
        ("b", Tier.EXPLAIN),
        ("c", Tier.EXPLAIN),
    ]
