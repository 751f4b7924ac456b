"""The live pod_logs with the real kubernetes client against the API-server fixture:
``previous`` reaches the server, typed records come back beside the lines."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sources"))

from k8s_fixture import ORDER_PODS, K8sFixture, sample_logs, sample_objects, write_kubeconfig

from opsmate.config import Settings
from opsmate.records.base import parse_list
from opsmate.records.logs import PodLogLine
from opsmate.tools import schemas as s
from opsmate.tools.base import CallContext, Constraints
from opsmate.tools.kubernetes.tools import tool_specs


@pytest.fixture
def run(tmp_path: Path) -> Iterator[tuple[K8sFixture, object]]:
    with K8sFixture(sample_objects(), sample_logs()) as fx:
        kubeconfig = write_kubeconfig(
            tmp_path / "kubeconfig", {"fixture": fx.url}, current="fixture"
        )
        settings = Settings(
            environments={"test": {"kubernetes": {"kubeconfig": str(kubeconfig),
                                                  "context": "fixture", "timeout": 5}}}
        )  # fmt: skip
        spec = {x.name: x for x in tool_specs(settings)}["pod_logs"]
        yield fx, spec


def _ctx() -> CallContext:
    return CallContext(
        call_id="c", constraints=Constraints(environment="test"), now=datetime.now(UTC)
    )


def test_previous_is_asked_of_the_server_and_lines_come_back_typed(run: tuple) -> None:
    fx, spec = run
    out = spec.run(s.PodLogsArgs(name=ORDER_PODS[0], tail_lines=20, previous=True), _ctx())
    assert fx.requests[-1]["query"].get("previous") == "true"
    assert out.scope["previous"] is True and len(out.data["lines"]) == 20
    records, skipped = parse_list(PodLogLine, out.data, "records")
    assert skipped == 0 and records and records[-1].message == out.data["lines"][-1]
    errors = [r for r in records if r.level == "error"]
    assert errors and all(not r.level_inferred and r.previous for r in errors)
    assert all(r.time is not None for r in records)  # read from the line's own timestamp
    current = spec.run(s.PodLogsArgs(name=ORDER_PODS[0], tail_lines=5), _ctx())
    assert "previous" not in fx.requests[-1]["query"] and "previous" not in current.scope
