"""Sessions: follow-ups keep the state; a 200-turn session keeps its constraint and budget."""

from __future__ import annotations

import json
from pathlib import Path

from opsmate.agent.loop.events import Notice
from opsmate.agent.session.session import Session, list_sessions
from opsmate.config import LLMConfig, Settings
from opsmate.llm.base import approx_tokens

TURNS = 200


def _script(turns: int) -> dict[str, object]:
    replies: list[dict[str, object]] = []
    for i in range(turns):
        other = ("prod", "staging")[i % 2]
        replies.append(
            {
                "schema": "NextAction",
                "reply": {
                    "action": "call_tool",
                    "tool": "search_logs",
                    "args": {"query": f"other{i}", "service": "cart-service", "environment": other},
                    "reason": f"try {other}",
                },
            }
        )
        replies.append(
            {
                "schema": "NextAction",
                "reply": {
                    "action": "call_tool",
                    "tool": "search_logs",
                    "args": {"query": f"term{i}", "service": "cart-service", "page_size": 5},
                    "reason": f"look for term{i}",
                },
            }
        )
        replies.append({"schema": "NextAction", "reply": {"action": "finish", "reason": "enough"}})
    return {"replies": replies}


def test_two_hundred_turns_keep_the_constraint_and_the_budget(
    mini_bundle: Path, write_script
) -> None:  # type: ignore[no-untyped-def]
    settings = Settings(llm=LLMConfig(n_ctx=3000, max_answer_tokens=300))
    notices: list[str] = []
    session = Session.open(
        settings=settings,
        bundle=mini_bundle,
        model=write_script(_script(TURNS)),
        max_steps=3,
        on_event=lambda e: notices.append(e.message) if isinstance(e, Notice) else None,
    )
    first = session.ask("cart-service returns 500 since the 12:00 release; test environment only")
    assert first.constraints.environment == "test"
    for i in range(1, TURNS):
        q = (
            f"follow-up {i}: and what about prod?"
            if i % 10 == 0
            else f"follow-up {i}: anything else?"
        )
        report = session.ask(q)
        assert report.constraints.environment == "test"
    assert session.state is not None
    rendered = session.state.render()
    assert "environment: test ONLY" in rendered
    assert len(session.state.questions) == TURNS
    calls = session.sources.executor.calls
    other_env = [c for c in calls if c.args.get("environment") not in (None, "test")]
    # the model kept trying ... (a follow-up naming prod is refused without any call)
    assert len(other_env) >= TURNS - TURNS // 10 - 5
    assert all(
        c.status == "rejected" and c.error and c.error.code == "forbidden_scope" for c in other_env
    )
    assert all(c.status != "rejected" for c in calls if c.args.get("environment") == "test")
    # every prompt fit its budget
    builder = session.engine.builder
    assert builder is not None and len(builder.sizes) >= TURNS
    limit = builder.budget.prompt_tokens
    assert max(builder.sizes) <= limit
    for prompt in session.model.prompts:  # type: ignore[attr-defined]
        assert sum(approx_tokens(m["content"]) + 4 for m in prompt) <= limit
        assert "environment: test ONLY" in prompt[-1]["content"]
    assert any("limited to 'test'" in n for n in notices)  # the prod follow-ups were answered


def test_follow_ups_keep_state_and_sessions_save_and_resume(mini_bundle: Path) -> None:
    session = Session.open(settings=Settings(), bundle=mini_bundle, model="none")
    first = session.ask()
    n_evidence = len(first.evidence)
    second = session.ask("what about catalog-service?")
    assert "catalog-service" in second.constraints.services
    assert len(second.evidence) >= n_evidence  # evidence accumulates across turns
    assert second.root_cause is not None  # the established cause is still supported
    path = session.save()
    assert (
        path.parent.name == "sessions"
        and json.loads(path.read_text(encoding="utf-8"))["id"] == session.id
    )
    listed = list_sessions()
    assert listed and listed[0]["id"] == session.id and listed[0]["status"] == second.status
    resumed = Session.load(session.id)
    assert resumed.state is not None and resumed.state.questions == session.state.questions  # type: ignore[union-attr]
    assert [e.id for e in resumed.store.evidence] == [e.id for e in session.store.evidence]
    third = resumed.ask("and the events?")
    calls = [c.call_id for c in third.tool_calls]
    assert len(calls) == len(set(calls))
    assert not any(
        c.status == "success" and c.tool == "list_pods"
        for c in third.tool_calls[len(second.tool_calls) :]
    )
