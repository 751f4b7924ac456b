"""Follow-ups answered from what is known: no new call when the state holds the answer."""

from __future__ import annotations

from pathlib import Path

from opsmate.agent.report.model import render_markdown
from opsmate.agent.session.session import Session
from opsmate.config import Settings


def test_release_question_is_answered_from_the_change_diff(repo_root: Path) -> None:
    session = Session.open(settings=Settings(), demo=True, model="none")
    session.ask()
    calls = len(session.sources.executor.calls)
    report = session.ask("did the release change the pool settings?")
    fu = report.follow_up
    assert fu is not None
    assert "DB_POOL_SIZE" in fu.answer and "'20' -> '10'" in fu.answer
    assert fu.evidence and all(i in fu.answer for i in fu.evidence)
    assert fu.new_calls == 0 and len(session.sources.executor.calls) == calls
    assert report.summary != fu.answer  # the answer is said once, in follow_up
    md = render_markdown(report)
    assert md.count("DB_POOL_SIZE '20' -> '10'") >= 1


def test_a_refusal_is_said_once(repo_root: Path) -> None:
    session = Session.open(settings=Settings(), demo=True, model="none")
    session.ask()
    report = session.ask("check the prod error rate too")
    fu = report.follow_up
    assert fu is not None and fu.refused
    text = fu.refused[0]
    md = render_markdown(report)
    assert md.count("is not read: this session is limited to") == 1, md[:1500]
    assert all(text not in n for n in report.notes)
    assert text not in report.summary


def test_an_unanswerable_follow_up_investigates_and_says_so(repo_root: Path) -> None:
    session = Session.open(settings=Settings(), demo=True, model="none")
    session.ask()
    report = session.ask("what about the kafka consumer lag on the ledger topic?")
    fu = report.follow_up
    assert fu is not None
    assert fu.new_calls == report.budget.steps
    assert f"{fu.new_calls} read-only call(s)" in fu.answer or fu.new_calls == 0
