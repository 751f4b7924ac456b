"""The answer key and small contract slips: ``diagnose`` and ``tool`` never read
``expected.yaml``; ``eval`` takes ``status`` as a string or a list and warns about keys
it does not know; a forged cursor is ``rejected`` (exit 2); an Elasticsearch redirect
loop is ``bad_response`` naming the redirect."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from hardening_util import assert_no_traceback, copy_bundle, redirect_loop_server, run_cli

from opsmate.config import Settings
from opsmate.evaluation.scoring import accepted_statuses, check_root_cause_found
from opsmate.tools.audit import AuditLog
from opsmate.tools.base import Constraints
from opsmate.tools.bundle import load_bundle
from opsmate.tools.executor import Executor
from opsmate.tools.registry import live_registry


def _key(bundle: Path, text: str) -> None:
    (bundle / "expected.yaml").write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    "key",
    [
        "status: [complete]\n",  # the case that stopped diagnose with exit 2
        "max_steps: lots\nmust_mention: {a: b}\n",
        ": : not yaml [\n",
    ],
)
def test_diagnose_and_tool_never_read_the_answer_key(
    key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = copy_bundle(tmp_path)
    _key(bundle, key)
    code, out, err = run_cli(["diagnose", "--bundle", str(bundle), "--json"], capsys)
    assert code in (0, 1), err
    assert json.loads(out)["status"] in ("complete", "partial")
    code, out, err = run_cli(["tool", "list_pods", "--bundle", str(bundle), "--json"], capsys)
    assert code == 0, err
    assert "expected.yaml" not in err
    assert_no_traceback(err)


def test_eval_accepts_status_as_a_string_or_a_list_and_warns_on_unknown_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = copy_bundle(tmp_path)
    _key(bundle, "status: [complete, partial]\nmust_mention: []\nflavour: spicy\n")
    code, out, err = run_cli(["eval", str(bundle), "--model", "none", "--json"], capsys)
    assert code in (0, 1), err
    scenario = json.loads(out)["scenarios"][0]
    assert scenario["checks"]["status_as_expected"], scenario
    assert "error: " not in " ".join(scenario["failures"])
    assert "unknown key 'flavour'" in err and "warning" in err
    assert scenario["warnings"] == ["expected.yaml: unknown key 'flavour' (ignored)"]

    expected = load_bundle(bundle).expected
    assert expected is not None
    assert accepted_statuses(expected) == {"complete", "partial", "refused"}
    _key(bundle, "status: partial\n")
    expected = load_bundle(bundle).expected
    assert expected is not None and accepted_statuses(expected) == {"partial", "refused"}
    _key(bundle, "status: [refused]\n")
    expected = load_bundle(bundle).expected
    assert expected is not None and not expected.unknown_keys()
    no_rc = check_root_cause_found(expected, {"root_cause": None})
    assert no_rc.passed, no_rc.detail


def test_eval_reports_a_broken_answer_key_as_a_scenario_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = copy_bundle(tmp_path)
    _key(bundle, "max_steps: lots\n")
    code, out, err = run_cli(["eval", str(bundle), "--model", "none", "--json"], capsys)
    assert code == 1
    failures = json.loads(out)["scenarios"][0]["failures"]
    assert any("expected.yaml:1" in f and "max_steps" in f for f in failures), failures
    assert_no_traceback(err)


def _forge(cursor: str, inner: str) -> str:
    payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    payload["c"] = inner
    raw = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def test_a_forged_cursor_is_rejected_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = str(copy_bundle(tmp_path))
    args = {"service": "order-service", "page_size": 2}
    code, out, err = run_cli(
        ["tool", "search_logs", "--args", json.dumps(args), "--bundle", bundle, "--json"], capsys
    )
    assert code == 0, err
    cursor = json.loads(out)["next_cursor"]
    assert cursor
    for inner in ("forged-by-hand", "eyJub3QiOiAiYSBjdXJzb3IifQ"):
        forged = {**args, "cursor": _forge(cursor, inner)}
        code, out, err = run_cli(
            ["tool", "search_logs", "--args", json.dumps(forged), "--bundle", bundle, "--json"],
            capsys,
        )
        envelope = json.loads(out)
        assert envelope["status"] == "rejected", envelope
        assert envelope["error"]["code"] == "bad_cursor"
        assert code == 2


def test_elasticsearch_redirect_loop_is_a_bad_response(tmp_path: Path) -> None:
    with redirect_loop_server() as url:
        settings = Settings(environments={"test": {"elasticsearch": {"url": url, "timeout": 5}}})
        executor = Executor(
            live_registry(settings),
            Constraints(environment="test"),
            config=settings.tools,
            audit=AuditLog(tmp_path / "audit.jsonl"),
        )
        result = executor.call("search_logs", {"query": "error"})
    assert result.status == "error" and result.error is not None
    assert result.error.code == "bad_response", result.error
    assert "redirect" in result.error.message and "302" in result.error.message
