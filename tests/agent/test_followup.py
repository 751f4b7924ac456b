"""Follow-up questions are answered as follow-ups: refusals first, then what changed."""

from __future__ import annotations

from pathlib import Path

from opsmate.agent.report.model import render_markdown
from opsmate.agent.session.followup import FollowUpContext, compose, refusals
from opsmate.agent.session.session import Session
from opsmate.agent.state import TaskState
from opsmate.config import Settings
from opsmate.tools.base import Constraints


def test_refusals_name_the_constraint() -> None:
    state = TaskState(
        goal="g",
        constraints=Constraints(environment="test", allowed_services=["order-service"]),
    )
    out = refusals("check prod too, and the payment-service", state, ["test", "prod"], [])
    assert any("'prod' is not read" in r and "limited to 'test'" in r for r in out)
    assert any("'payment-service' is not read" in r and "order-service" in r for r in out)
    assert refusals("anything new in test?", state, ["test", "prod"], []) == []


def test_a_follow_up_leads_with_what_was_asked(mini_bundle: Path) -> None:
    session = Session.open(settings=Settings(), bundle=mini_bundle, model="none")
    first = session.ask()
    assert first.follow_up is None
    report = session.ask("check the prod error rate too")
    fu = report.follow_up
    assert fu is not None and fu.question == "check the prod error rate too"
    assert fu.refused and "limited to 'test'" in fu.refused[0]
    assert fu.answer.startswith("Not done: 'prod' is not read")
    assert "is not read" not in report.summary  # the refusal is said once, in the answer
    assert report.constraints.environment == "test"
    assert all(c.args.get("environment") != "prod" for c in report.tool_calls)
    md = render_markdown(report)
    assert md.startswith("# Follow-up: check the prod error rate too")
    assert "# Diagnosis:" in md  # the whole report follows the answer


def test_compose_reports_new_facts_and_a_changed_root() -> None:
    from opsmate.agent.report.model import ReportFact

    ctx = FollowUpContext(refused=[], known_facts={"a"})
    assert ctx.refused == [] and ctx.previous is None
    fu = compose(
        "and the worker?",
        [ReportFact(statement="worker logged 3 errors", evidence=["E9"])],
        _report("the worker is OOMKilled (E9)."),
        _report("the api is slow (E1)."),
        [],
    )
    assert "1 new fact(s)" in fu.answer and "[E9]" in fu.answer
    assert fu.root_changed and "The root cause changed: the worker is OOMKilled" in fu.answer
    same = compose(
        "again?", [], _report("the api is slow (E1, E4)."), _report("the api is slow (E1)."), []
    )
    assert not same.root_changed and "unchanged" in same.answer


def _report(root: str):  # type: ignore[no-untyped-def]
    from opsmate.agent.report.model import Report, ReportConstraints, RootCause, Window

    return Report(
        question="q",
        constraints=ReportConstraints(environment="test", services=[], window=Window()),
        status="complete",
        summary="s",
        root_cause=RootCause(statement=root, confidence=0.8, evidence=["E1"]),
    )
