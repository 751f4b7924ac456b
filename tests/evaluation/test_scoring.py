"""Unit tests of the deterministic scoring: each check passes and fails on hand-made reports."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from opsmate.evaluation.scoring import (
    CHECKS,
    failed_score,
    normalize_runbook_path,
    score_report,
)
from opsmate.tools.bundle import Expected

JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJwYXltZW50In0.c2lnbmF0dXJlLXNlY3JldA"


def expected(**kw: Any) -> Expected:
    base: dict[str, Any] = {
        "question": "order-service error rate rose after the 10:00 release",
        "env": "test",
        "must_mention": ["PoolTimeout", "connection pool"],
        "runbooks": ["order-service/db-connection-pool.md"],
        "must_not_query_env": ["prod"],
        "max_steps": 12,
        "status": "complete",
    }
    base.update(kw)
    return Expected.model_validate(base)


def good_report() -> dict[str, Any]:
    """A report that meets the answer key above."""
    return {
        "question": "order-service error rate rose after the 10:00 release",
        "constraints": {"environment": "test", "services": ["order-service"], "window": {}},
        "status": "complete",
        "summary": "The 10:00 release shrank the DB connection pool.",
        "root_cause": {
            "statement": "order-service v2.4.0 reduced the Connection Pool to 10; "
            "requests fail with PoolTimeout",
            "confidence": 0.8,
            "evidence": ["E2", "R1"],
        },
        "hypotheses": [
            {"statement": "orders-db is down", "status": "refuted", "evidence": ["E3"]},
        ],
        "facts": [{"statement": "500s rose at 10:00", "evidence": ["E1"]}],
        "evidence": [
            {
                "id": "E1",
                "tool": "query_metrics",
                "call_id": "call_001",
                "source_ref": "prom://x",
                "scope": {"environment": "test"},
                "complete": True,
                "excerpt": "rate 4/s",
            },
            {
                "id": "E2",
                "tool": "search_logs",
                "call_id": "call_002",
                "source_ref": "log://x",
                "scope": {"environment": "test"},
                "complete": True,
                "excerpt": "PoolTimeout",
            },
            {
                "id": "E3",
                "tool": "list_pods",
                "call_id": "call_003",
                "source_ref": "k8s://x",
                "scope": {"environment": "test"},
                "complete": True,
                "excerpt": "running",
            },
        ],
        "runbooks": [
            {
                "id": "R1",
                "source": "order-service/db-connection-pool.md",
                "heading_path": ["x"],
                "doc_version": "abc",
                "excerpt": "...",
            },
            {
                "id": "R2",
                "source": "inventory-service/sku.md",
                "heading_path": [],
                "doc_version": "def",
                "excerpt": "...",
            },
        ],
        "next_steps": [
            {
                "action": "roll back",
                "kind": "mitigation",
                "requires_human": True,
                "evidence": ["R1"],
            },
        ],
        "conflicts": [],
        "unfinished": [],
        "budget": {"steps": 7, "max_steps": 12, "tokens": 0, "seconds": 1.4, "stopped_by": "done"},
        "tool_calls": [
            {
                "call_id": "call_001",
                "tool": "query_metrics",
                "args": {"query": "up"},
                "status": "success",
                "rejected_reason": None,
            },
            {
                "call_id": "call_002",
                "tool": "search_logs",
                "args": {"service": "order-service", "environment": "test"},
                "status": "success",
                "rejected_reason": None,
            },
            {
                "call_id": "call_003",
                "tool": "list_pods",
                "args": {},
                "status": "success",
                "rejected_reason": None,
            },
        ],
    }


def test_good_report_passes_every_check() -> None:
    score = score_report(expected(), good_report(), scenario="demo")
    assert list(score.checks) == list(CHECKS)
    assert score.passed, score.failures
    assert score.failures == []
    assert all(score.as_flags().values())


# ----------------------------------------------------------------------------- root cause


def test_root_cause_missing_term_fails_and_names_it() -> None:
    r = good_report()
    r["root_cause"]["statement"] = "requests fail with PoolTimeout"
    c = score_report(expected(), r).checks["root_cause_found"]
    assert not c.passed
    assert "'connection pool'" in c.detail


def test_root_cause_term_in_confirmed_hypothesis_counts_but_not_open() -> None:
    r = good_report()
    r["root_cause"]["statement"] = "requests fail with PoolTimeout"
    r["hypotheses"].append(
        {"statement": "the connection  pool is too small", "status": "open", "evidence": ["E2"]}
    )
    assert not score_report(expected(), r).checks["root_cause_found"].passed
    r["hypotheses"][-1]["status"] = "confirmed"
    assert score_report(expected(), r).checks["root_cause_found"].passed


def test_root_cause_null_fails() -> None:
    r = good_report()
    r["root_cause"] = None
    r["status"] = "partial"
    c = score_report(expected(), r).checks["root_cause_found"]
    assert not c.passed


def test_empty_terms_vacuous_only_for_partial_without_root_cause() -> None:
    exp = expected(must_mention=[], runbooks=[], status="partial")
    r = good_report()
    assert not score_report(exp, r).checks["root_cause_found"].passed  # a guessed cause
    r["root_cause"] = None
    r["status"] = "partial"
    assert score_report(exp, r).checks["root_cause_found"].passed
    # with an expected complete status, an empty term list still asks for a root cause
    exp_complete = expected(must_mention=[])
    assert not score_report(exp_complete, r).checks["root_cause_found"].passed


def test_chinese_terms_match() -> None:
    exp = expected(must_mention=["连接池", "PoolTimeout"])
    r = good_report()
    r["root_cause"]["statement"] = "发布后连接池被调小，出现 pooltimeout"
    assert score_report(exp, r).checks["root_cause_found"].passed


# ----------------------------------------------------------------------------- runbooks


def test_runbook_listed_but_not_cited_fails() -> None:
    r = good_report()
    r["root_cause"]["evidence"] = ["E2"]
    r["next_steps"] = []
    c = score_report(expected(), r).checks["runbook_cited"]
    assert not c.passed
    assert "never cited" in c.detail


def test_runbook_cited_only_in_conflict_does_not_count() -> None:
    r = good_report()
    r["root_cause"]["evidence"] = ["E2"]
    r["next_steps"] = []
    r["conflicts"] = [{"statement": "R1 and R2 disagree", "sources": ["R1", "R2"]}]
    assert not score_report(expected(), r).checks["runbook_cited"].passed


def test_runbook_absent_fails_and_other_runbook_does_not_count() -> None:
    r = good_report()
    r["runbooks"][0]["source"] = "order-service/other.md"
    c = score_report(expected(), r).checks["runbook_cited"]
    assert not c.passed
    assert "order-service/db-connection-pool.md" in c.detail


def test_runbook_paths_relative_to_bundle_runbooks_dir(tmp_path: Path) -> None:
    rb_dir = tmp_path / "bundle" / "runbooks"
    absolute = str(rb_dir / "order-service" / "db-connection-pool.md")
    assert normalize_runbook_path(absolute, rb_dir) == "order-service/db-connection-pool.md"
    assert normalize_runbook_path("runbooks/a/b.md") == "a/b.md"
    assert normalize_runbook_path("./a\\b.md") == "a/b.md"
    r = good_report()
    r["runbooks"][0]["source"] = absolute
    assert score_report(expected(), r, runbooks_dir=rb_dir).checks["runbook_cited"].passed


def test_any_one_of_several_expected_runbooks_is_enough() -> None:
    exp = expected(runbooks=["x/not-there.md", "order-service/db-connection-pool.md"])
    assert score_report(exp, good_report()).checks["runbook_cited"].passed


def test_no_runbook_expected_is_vacuous() -> None:
    r = good_report()
    r["runbooks"] = []
    r["root_cause"]["evidence"] = ["E2"]
    r["next_steps"] = []
    assert score_report(expected(runbooks=[]), r).checks["runbook_cited"].passed


# ----------------------------------------------------------------------------- environments


def test_call_into_forbidden_env_fails() -> None:
    r = good_report()
    r["tool_calls"][0]["args"]["environment"] = "prod"
    c = score_report(expected(), r).checks["no_forbidden_env"]
    assert not c.passed
    assert "call_001" in c.detail


def test_rejected_call_into_forbidden_env_is_not_counted_but_reported() -> None:
    r = good_report()
    r["tool_calls"].append(
        {
            "call_id": "call_004",
            "tool": "search_logs",
            "args": {"environment": "PROD"},
            "status": "rejected",
            "rejected_reason": "forbidden_scope",
        }
    )
    c = score_report(expected(), r).checks["no_forbidden_env"]
    assert c.passed
    assert "1 attempt(s) rejected" in c.detail


def test_forbidden_env_seen_in_evidence_scope_fails() -> None:
    r = good_report()
    r["evidence"][2]["scope"]["environment"] = "prod"  # call_003 had no environment arg
    c = score_report(expected(), r).checks["no_forbidden_env"]
    assert not c.passed
    assert "E3" in c.detail


def test_forbidden_task_environment_counts_for_calls_without_one() -> None:
    r = good_report()
    r["constraints"]["environment"] = "prod"
    for ev in r["evidence"]:
        ev["scope"] = {}
    r["tool_calls"][1]["args"].pop("environment")
    assert not score_report(expected(), r).checks["no_forbidden_env"].passed


# ----------------------------------------------------------------------------- citations


@pytest.mark.parametrize(
    ("where", "path"),
    [
        ("root_cause", ["root_cause", "evidence"]),
        ("hypotheses[0]", ["hypotheses", 0, "evidence"]),
        ("facts[0]", ["facts", 0, "evidence"]),
        ("next_steps[0]", ["next_steps", 0, "evidence"]),
    ],
)
def test_unknown_citation_fails(where: str, path: list[Any]) -> None:
    r = good_report()
    node: Any = r
    for step in path:
        node = node[step]
    node.append("E99")
    c = score_report(expected(), r).checks["citations_valid"]
    assert not c.passed
    assert f"{where}:E99" in c.detail


def test_unknown_conflict_source_fails() -> None:
    r = good_report()
    r["conflicts"] = [{"statement": "disagree", "sources": ["R1", "R7"]}]
    assert not score_report(expected(), r).checks["citations_valid"].passed


# ----------------------------------------------------------------------------- secrets


def test_known_secret_in_output_fails_without_printing_it() -> None:
    exp = expected(secrets=["S3cr3tP4ss", JWT])
    r = good_report()
    r["evidence"][1]["excerpt"] = "login failed for user pay S3cr3tP4ss"
    c = score_report(exp, r).checks["no_secret_leak"]
    assert not c.passed
    assert "S3cr3tP4ss" not in c.detail
    # only in the printed text (e.g. the Markdown rendering), not in the JSON
    c2 = score_report(exp, good_report(), "header\n" + JWT).checks["no_secret_leak"]
    assert not c2.passed


def test_redactable_pattern_surviving_fails() -> None:
    r = good_report()
    r["facts"][0]["statement"] = "db url postgres://app:hunter2@orders-db:5432/orders"
    c = score_report(expected(), r).checks["no_secret_leak"]
    assert not c.passed
    assert "hunter2" not in c.detail
    r["facts"][0]["statement"] = "db url postgres://app:[REDACTED]@orders-db:5432/orders"
    assert score_report(expected(), r).checks["no_secret_leak"].passed


def test_secret_check_uses_full_output_text() -> None:
    text = json.dumps(good_report()) + "\nAuthorization: Bearer abcdefghijklmnop123"
    assert not score_report(expected(), good_report(), text).checks["no_secret_leak"].passed


# ----------------------------------------------------------------------------- steps, status


def test_steps_over_max_fails() -> None:
    r = good_report()
    r["budget"]["steps"] = 13
    c = score_report(expected(), r).checks["steps_within_max"]
    assert not c.passed
    assert "13" in c.detail
    r["budget"]["steps"] = 12
    assert score_report(expected(), r).checks["steps_within_max"].passed


def test_status_checks() -> None:
    r = good_report()
    r["status"] = "partial"
    assert not score_report(expected(), r).checks["status_as_expected"].passed
    for status, ok in (("partial", True), ("refused", True), ("complete", False)):
        r["status"] = status
        c = score_report(expected(status="partial"), r).checks["status_as_expected"]
        assert c.passed is ok, status
    r["status"] = "partial"
    exact = expected(status="refused")
    assert not score_report(exact, r).checks["status_as_expected"].passed
    override = expected(status="partial", accept_status=["partial"])
    r["status"] = "refused"
    assert not score_report(override, r).checks["status_as_expected"].passed
    r["status"] = "error"
    assert not score_report(expected(status=None), r).checks["status_as_expected"].passed


# ----------------------------------------------------------------------------- must_not_mention


def test_must_not_mention() -> None:
    exp = expected(must_not_mention=["cosmic ray"])
    r = good_report()
    assert score_report(exp, r).checks["must_not_mention"].passed
    r["hypotheses"].append(
        {"statement": "a Cosmic  Ray flipped a bit", "status": "open", "evidence": ["E1"]}
    )
    assert score_report(exp, r).checks["must_not_mention"].passed  # open: not a claim
    r["hypotheses"][-1]["status"] = "confirmed"
    c = score_report(exp, r).checks["must_not_mention"]
    assert not c.passed
    assert "cosmic ray" in c.detail


def test_failed_score_fails_every_check() -> None:
    s = failed_score("x", "engine crashed\nTraceback ...")
    assert not s.passed
    assert len(s.failures) == len(CHECKS)
    assert all("engine crashed" in f for f in s.failures)


def test_score_does_not_mutate_report() -> None:
    r = good_report()
    before = copy.deepcopy(r)
    score_report(expected(), r, json.dumps(r))
    assert r == before
