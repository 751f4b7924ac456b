"""The model's place: its proposals go through the same executor and evidence rules as the
plan's, and what they find is used like anything else the investigation found."""

from __future__ import annotations

from pathlib import Path

from opsmate.agent.session.session import Session
from opsmate.config import Settings


def test_a_check_only_the_model_proposes_runs_and_its_result_is_used(
    mini_bundle: Path, write_script
) -> None:  # type: ignore[no-untyped-def]
    proposal = {
        "action": "call_tool",
        "tool": "search_logs",
        "args": {"query": "Timeout reading", "service": "cart-service", "page_size": 10},
        "reason": "how often the cart times out on its cache",
    }
    spec = write_script(
        {
            "replies": [
                {"schema": "NextAction", "reply": proposal},
                {"schema": "NextAction", "reply": {"action": "finish", "reason": "enough"}},
            ],
            "defaults": {"NextAction": {"action": "finish", "reason": "script exhausted"}},
        }
    )
    session = Session.open(settings=Settings(), bundle=mini_bundle, model=spec, max_steps=20)
    plan_only = Session.open(settings=Settings(), bundle=mini_bundle, model="none", max_steps=20)
    baseline = plan_only.ask()
    report = session.ask()
    # the rules never make this call on their own
    assert not any(
        c.tool == "search_logs" and c.args.get("query") == "Timeout reading"
        for c in baseline.tool_calls
    )
    made = [
        c
        for c in report.tool_calls
        if c.tool == "search_logs" and c.args.get("query") == "Timeout reading"
    ]
    assert len(made) == 1 and made[0].status in ("success", "partial")
    # the executor scoped it like any call: the task's environment and window were added
    assert made[0].args.get("environment") == "test" and made[0].args.get("from")
    eid = next(e.id for e in report.evidence if e.call_id == made[0].call_id)
    cited = {i for f in report.facts for i in f.evidence}
    cited |= set(report.root_cause.evidence if report.root_cause else [])
    assert eid in cited, "the model's result must be used in the report"
