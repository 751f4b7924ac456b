"""Fixtures for the engine tests: a private copy of the small fixture bundle, scripts."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

DATA = Path(__file__).parent / "data"
MINI = DATA / "mini-bundle"


@pytest.fixture
def mini_bundle(tmp_path: Path) -> Path:
    """A copy of ``data/mini-bundle`` that a test may change."""
    return Path(shutil.copytree(MINI, tmp_path / "mini-bundle"))


@pytest.fixture
def write_script(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Write a scripted-model file and return its ``scripted:PATH`` spec."""

    def write(data: Any, name: str = "script.yaml") -> str:
        path = tmp_path / name
        path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
        return f"scripted:{path}"

    return write


def expected_problems(report: Any, expected: Any) -> list[str]:
    """What in ``report`` falls short of an ``expected.yaml`` answer key (empty: it meets it)."""
    problems: list[str] = []
    texts = [report.root_cause.statement if report.root_cause else ""]
    texts += [h.statement for h in report.hypotheses if h.status == "confirmed"]
    blob = " ".join(texts).lower()
    problems += [
        f"must_mention {m!r} missing" for m in expected.must_mention if m.lower() not in blob
    ]
    cited = report.cited_ids()
    sources = {rb.source for rb in report.runbooks if rb.id in cited}
    if expected.runbooks and not any(s in sources for s in expected.runbooks):
        problems.append(f"none of {expected.runbooks} cited (cited: {sorted(sources)})")
    for call in report.tool_calls:
        if (
            call.args.get("environment") in expected.must_not_query_env
            and call.status != "rejected"
        ):
            problems.append(f"{call.call_id} queried {call.args.get('environment')}")
    if expected.max_steps and report.budget.steps > expected.max_steps:
        problems.append(f"{report.budget.steps} steps > {expected.max_steps}")
    if expected.status and report.status != expected.status:
        problems.append(f"status {report.status} != {expected.status}")
    unknown = report.cited_ids() - report.known_ids()
    if unknown:
        problems.append(f"unknown ids cited: {sorted(unknown)}")
    return problems


@pytest.fixture
def check_expected():  # type: ignore[no-untyped-def]
    return expected_problems
