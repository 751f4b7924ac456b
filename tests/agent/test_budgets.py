"""Budgets end an investigation with a partial report, never an exception or a lost result."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from opsmate.agent.session.session import Session
from opsmate.config import Settings

SLOW = {
    "delay": 30,
    "replies": [{"action": "call_tool", "tool": "list_alerts", "args": {}, "reason": "slow"}],
}


def test_step_budget(mini_bundle: Path) -> None:
    report = Session.open(settings=Settings(), bundle=mini_bundle, model="none", max_steps=2).ask()
    assert report.budget.steps == 2 and report.budget.max_steps == 2
    assert report.budget.stopped_by == "max_steps" and report.status == "partial"
    assert report.unfinished and all("step budget" in u for u in report.unfinished[:1])
    assert len(report.evidence) == 2  # what was found is kept
    assert report.cited_ids() <= report.known_ids()


def test_wall_clock_budget_with_a_slow_model(mini_bundle: Path, write_script) -> None:  # type: ignore[no-untyped-def]
    session = Session.open(
        settings=Settings(), bundle=mini_bundle, model=write_script(SLOW), timeout=2, max_steps=30
    )
    started = time.monotonic()
    report = session.ask()
    elapsed = time.monotonic() - started
    assert elapsed < 6, elapsed
    assert report.budget.stopped_by == "timeout" and report.status == "partial"
    assert report.evidence  # the deterministic steps before the model was asked are kept
    assert report.root_cause is not None  # ... and so is what they established


def test_token_budget(mini_bundle: Path, write_script) -> None:  # type: ignore[no-untyped-def]
    spec = write_script(
        {"replies": [{"action": "call_tool", "tool": "list_alerts", "args": {}, "reason": "x"}] * 5}
    )
    report = Session.open(settings=Settings(), bundle=mini_bundle, model=spec, max_steps=30).ask()
    assert report.budget.tokens > 0
    tight = Session.open(
        settings=Settings(), bundle=mini_bundle, model=spec, max_steps=30, max_tokens=200
    )
    r2 = tight.ask()
    assert r2.budget.stopped_by == "token_budget"
    assert r2.budget.tokens >= 200
    # the deterministic survey had already established the cause: the budget only ended the
    # model's part of the plan, so the report stays complete and says what was not done
    assert r2.status == "complete" and r2.root_cause is not None
    assert "cut short" in r2.summary


def test_cancel_from_another_thread(mini_bundle: Path, write_script) -> None:  # type: ignore[no-untyped-def]
    session = Session.open(
        settings=Settings(), bundle=mini_bundle, model=write_script(SLOW), max_steps=30
    )
    timer = threading.Timer(0.8, session.cancel)
    timer.start()
    started = time.monotonic()
    report = session.ask()
    timer.cancel()
    assert time.monotonic() - started < 5
    assert report.budget.stopped_by == "cancelled" and report.status == "partial"
    # the session stays usable: a follow-up runs and is not cancelled by the old request
    session.model.delay = 0  # type: ignore[union-attr]
    again = session.ask("and the pods?")
    assert again.budget.stopped_by != "cancelled"


def test_the_investigation_waits_for_what_the_root_causes_own_card_asks_read() -> None:
    from opsmate.agent.loop.investigation import root_reads_pending
    from opsmate.agent.observe.facts import Fact, FactKind
    from opsmate.agent.plan.registry import RuleContext, propose
    from opsmate.agent.state import PendingCheck

    full = Fact(key="log:registry:nospace", statement="s", kind=FactKind.SATURATION,
                severity="error", reason="disk_full", focus=True, evidence=["E4"],
                quote="mkdir /var/lib/registry/x: no space left on device")  # fmt: skip
    tools = frozenset({"query_metrics", "log_stats", "search_logs"})
    ctx = RuleContext(tools=tools, namespace="registry", facts=[full])
    queued = [PendingCheck(tool=p.check.tool, args=dict(p.check.args), reason=p.check.reason,
                           trigger_fact=p.fact, rule=p.rule)
              for p in propose([full], None, ctx)]  # fmt: skip
    card = [p for p in queued if p.rule == "card_reads"]
    assert card and any("inodes" in str(p.args) for p in card)  # the card's deciding series
    assert root_reads_pending(full, card)
    other = [p.model_copy(update={"trigger_fact": "log:web:timeout"}) for p in card]
    assert not root_reads_pending(full, other)  # another fact's reads
    search = card[0].model_copy(update={"rule": "occurrences_of_error"})
    assert not root_reads_pending(full, [search])  # another rule's read: not the card's
