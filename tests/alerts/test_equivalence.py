"""A webhook body for an alert gives the same diagnosis as the equivalent typed question.

For demo and scenario bundles, ``tests/alerts/data/<case>.json`` is the webhook body
Alertmanager would post for that incident. Investigating it (``--alert-file`` with the
bundle, through :func:`opsmate.alerting.resolve.alert_options`, the path ``diagnose``
takes) must give the same root cause as the bundle's own question: the same cause
clause, and the answer key's ``must_mention`` terms whenever the question finds them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from opsmate.agent.session.session import Session
from opsmate.alerting.resolve import alert_options
from opsmate.config import Settings
from opsmate.evaluation.scoring import check_root_cause_found
from opsmate.tools.bundle.load import load_expected

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"
CASES = {
    "01-pool-exhaustion": REPO / "src/opsmate/data/demo/01-pool-exhaustion",
    "02-oom-crashloop": REPO / "src/opsmate/data/demo/02-oom-crashloop",
    "03-node-disk-full": REPO / "src/opsmate/data/demo/03-node-disk-full",
    "bad-config-value": REPO / "evals/scenarios/bad-config-value",
    "downstream-timeouts": REPO / "evals/scenarios/downstream-timeouts",
    "log-prompt-injection": REPO / "evals/scenarios/log-prompt-injection",
    "kafka-consumer-lag": REPO / "evals/scenarios/kafka-consumer-lag",
}


def cause(statement: str) -> str:
    """The cause clause of a root-cause sentence: after "because", without ids, its
    first 60 characters (what follows may be cut or reworded by the report's budget)."""
    text = re.sub(r"\s*\((?:[ER]\d+(?:,\s*)?)+\)", "", statement)
    return " ".join(text.split(" because ", 1)[-1].split())[:60]


def investigate(bundle: Path, question: str | None, preferred: list[str], env: str | None):
    session = Session.open(
        settings=Settings(),
        bundle=bundle,
        model="none",
        env=env,
        services=[],
        preferred_runbooks=preferred,
    )
    try:
        return session.ask(question)
    finally:
        session.close()


@pytest.mark.parametrize("case", sorted(CASES))
def test_alert_file_gives_the_typed_questions_root_cause(case: str) -> None:
    bundle = CASES[case]
    typed = investigate(bundle, None, [], None)
    opts = alert_options(
        Settings(),
        question=None,
        env=None,
        alert=None,
        alert_file=DATA / f"{case}.json",
        offline=True,
    )
    assert opts.question.startswith(("Investigate this alert: ", "Investigate these "))
    alerted = investigate(bundle, opts.question, opts.preferred_runbooks, opts.env)
    assert typed.root_cause is not None and alerted.root_cause is not None
    assert alerted.status == typed.status == "complete"
    assert cause(alerted.root_cause.statement) == cause(typed.root_cause.statement)
    expected = load_expected(bundle)
    assert expected is not None
    # the answer key's terms: found from the alert whenever the typed question finds them
    by_question = check_root_cause_found(expected, typed.to_json())
    by_alert = check_root_cause_found(expected, alerted.to_json())
    assert by_alert.passed or not by_question.passed, by_alert.detail
