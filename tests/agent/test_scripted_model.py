"""A scripted model driving a multi-step investigation through the executor."""

from __future__ import annotations

from pathlib import Path

from opsmate.agent.loop.events import ModelToken, ReportReady, StepPlanned, ToolCallFinished
from opsmate.agent.session.session import Session
from opsmate.config import Settings


def test_scripted_model_drives_steps_and_the_executor_decides(
    mini_bundle: Path, write_script
) -> None:  # type: ignore[no-untyped-def]
    spec = write_script(
        {
            "replies": [
                {
                    "action": "call_tool",
                    "tool": "pod_logs",
                    "args": {"name": "cart-service-8a9b7-mm2qz", "tail_lines": 50},
                    "reason": "the new pod's own log",
                    "facts": [
                        {"statement": "the new pod logs Redis timeouts", "evidence": ["E2"]},
                        {"statement": "made-up claim", "evidence": ["E99"]},
                    ],
                },
                {
                    "action": "call_tool",
                    "tool": "log_stats",
                    "args": {"service": "cart-service", "environment": "prod"},
                    "reason": "compare with prod",
                },
                {
                    "action": "call_tool",
                    "tool": "search_logs",
                    "args": {
                        "query": "RedisTimeoutError",
                        "service": "cart-service",
                        "level": "error",
                    },
                    "reason": "repeat of an earlier call",
                },
                {
                    "action": "call_tool",
                    "tool": "node_conditions",
                    "args": {},
                    "reason": "nodes healthy?",
                },
                {"action": "finish", "reason": "enough evidence"},
                {
                    "schema": "Narrative",
                    "reply": {
                        "summary": "Redis timeouts after the 12:00 release (E2, R1).",
                        "root_cause": None,
                    },
                },
            ]
        }
    )
    events: list[object] = []
    session = Session.open(
        settings=Settings(), bundle=mini_bundle, model=spec, max_steps=20, on_event=events.append
    )
    report = session.ask("cart-service returns 500 since the 12:00 release, test environment only")
    calls = [(c.tool, c.status) for c in report.tool_calls]
    # the model's proposals ran after the runbook checks and the survey, through the executor
    assert ("pod_logs", "success") in calls
    assert ("log_stats", "rejected") in calls  # another environment: the executor said no
    rejected = next(c for c in report.tool_calls if c.status == "rejected")
    assert rejected.args.get("environment") == "prod" and "limited to environment 'test'" in (
        rejected.rejected_reason or ""
    )
    assert ("node_conditions", "no_data") in calls  # the bundle has no nodes: looked, found none
    # the repeated call was not made again
    repeats = [
        c
        for c in report.tool_calls
        if c.tool == "search_logs"
        and c.args.get("level") == "error"
        and c.args.get("query") == "RedisTimeoutError"
    ]
    assert len(repeats) == 1
    assert any("already made" in n for n in report.notes)
    assert report.budget.stopped_by == "done" and report.status == "complete"
    assert report.summary.startswith("Redis timeouts after the 12:00 release")
    # model facts: the cited one kept, the one citing an unknown id dropped
    statements = [f.statement for f in report.facts]
    assert "the new pod logs Redis timeouts" in statements and "made-up claim" not in statements
    assert report.budget.tokens > 0
    # events: planned steps, finished calls, streamed tokens, the final report
    assert any(isinstance(e, StepPlanned) and e.source == "model" for e in events)
    assert any(isinstance(e, ToolCallFinished) and e.status == "rejected" for e in events)
    assert any(isinstance(e, ModelToken) for e in events)
    assert isinstance(events[-1], ReportReady) and events[-1].report is report
    # prompts: stable prefix first, the state with the constraint, data fenced
    prompts = session.model.prompts  # type: ignore[attr-defined]
    assert len({p[0]["content"] for p in prompts}) == 1  # the system + tools prefix never changes
    assert all("environment: test ONLY" in p[-1]["content"] for p in prompts)
    assert any("<<<DATA" in m["content"] for p in prompts for m in p)


def test_model_citations_of_unknown_ids_are_repaired(mini_bundle: Path, write_script) -> None:  # type: ignore[no-untyped-def]
    spec = write_script(
        {
            "replies": [
                {"action": "finish", "reason": "done"},
                {
                    "schema": "Narrative",
                    "reply": {
                        "summary": "It was the database.",
                        "root_cause": {"statement": "database", "evidence": ["E77"]},
                    },
                },
            ]
        }
    )
    session = Session.open(settings=Settings(), bundle=mini_bundle, model=spec)
    report = session.ask()
    # the model's claim cited nothing that exists: dropped, and the report says so
    assert all(h.statement != "database" for h in report.hypotheses)
    assert any("E77" in n for n in report.notes)
    assert report.cited_ids() <= report.known_ids()
    # the deterministic root cause stands
    assert report.root_cause is not None and "RedisTimeoutError" in report.root_cause.statement


def test_invalid_model_answer_falls_back_to_the_plan(mini_bundle: Path, write_script) -> None:  # type: ignore[no-untyped-def]
    spec = write_script(
        {"replies": [{"action": "call_tool", "tool": "kubectl_delete", "args": {}, "reason": "x"}]}
    )
    session = Session.open(settings=Settings(), bundle=mini_bundle, model=spec, max_steps=30)
    report = session.ask()
    assert all(c.tool != "kubectl_delete" for c in report.tool_calls)
    assert any("not usable" in n for n in report.notes)


def test_a_looping_model_summary_is_not_used(mini_bundle: Path, write_script) -> None:  # type: ignore[no-untyped-def]
    spec = write_script(
        {
            "replies": [
                {"action": "finish", "reason": "done"},
                {
                    "schema": "Narrative",
                    "reply": {"summary": "On-call engineer: " * 40, "root_cause": None},
                },
            ]
        }
    )
    report = Session.open(settings=Settings(), bundle=mini_bundle, model=spec).ask()
    assert report.summary.startswith("Root cause (")  # the engine's own summary
    assert any("summary was not used" in n for n in report.notes)
