"""--model none on every demo bundle (and the fixture bundle) meets its expected.yaml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opsmate import paths
from opsmate.agent.session.session import Session
from opsmate.config import Settings
from opsmate.tools.bundle import load_bundle

DEMOS = sorted(p for p in paths.demo_dir().glob("0*") if (p / "expected.yaml").is_file())
MINI = Path(__file__).parent / "data" / "mini-bundle"


def test_there_are_three_demo_bundles() -> None:
    assert len(DEMOS) >= 3
    assert DEMOS[0].name.startswith("01-")


@pytest.mark.parametrize("bundle", [*DEMOS, MINI], ids=lambda p: p.name)
def test_model_none_meets_expected(bundle: Path, check_expected) -> None:  # type: ignore[no-untyped-def]
    expected = load_bundle(bundle).expected
    assert expected is not None
    session = Session.open(settings=Settings(), bundle=bundle, model="none", env=expected.env)
    report = session.ask(expected.question)
    assert check_expected(report, expected) == [], report.root_cause
    assert report.root_cause is not None and report.root_cause.evidence
    # every tool call stayed in the constrained environment
    assert {c.args.get("environment") for c in report.tool_calls} == {expected.env}
    # the JSON of the contract round-trips through the pydantic model
    assert type(report).model_validate(json.loads(json.dumps(report.to_json()))) == report


def test_report_names_the_runbook_and_quotes_the_error(mini_bundle: Path) -> None:
    report = Session.open(settings=Settings(), bundle=mini_bundle, model="none").ask()
    rc = report.root_cause
    assert rc is not None
    assert "RedisTimeoutError: Timeout reading from redis-cart:6379" in rc.statement
    named = [
        r for r in report.runbooks if r.title == "cart-service: Redis timeouts (RedisTimeoutError)"
    ]
    assert named and named[0].id in rc.evidence  # the runbook is cited by the root cause
    assert any(e.startswith("R") for e in rc.evidence) and any(
        e.startswith("E") for e in rc.evidence
    )
    # state-changing runbook commands are next steps for a person, never calls
    mitigations = [s for s in report.next_steps if s.kind == "mitigation"]
    assert mitigations and all(s.requires_human for s in mitigations)
    assert any("rollout undo" in s.action for s in mitigations)
    assert not any(
        c.tool
        not in {
            "query_metrics",
            "search_logs",
            "log_stats",
            "list_pods",
            "get_events",
            "rollout_history",
            "list_alerts",
            "list_objects",
            "get_object",
            "node_conditions",
            "pod_logs",
            "search_runbooks",
        }
        for c in report.tool_calls
    )
    # the prod-only runbook is a conflict resolved by environment, not the explanation
    assert report.conflicts and "applies" in report.conflicts[0].statement
    prod_rb = next(r for r in report.runbooks if r.source == "cart-service/restart-prod.md")
    assert prod_rb.id in report.conflicts[0].sources and prod_rb.id not in rc.evidence
    # the steady red herring (catalog-service 404 warnings) is not the root cause
    assert "catalog" not in rc.statement


def test_no_call_is_repeated(mini_bundle: Path) -> None:
    report = Session.open(settings=Settings(), bundle=mini_bundle, model="none").ask()
    keys = [json.dumps([c.tool, c.args], sort_keys=True) for c in report.tool_calls]
    assert len(keys) == len(set(keys))
