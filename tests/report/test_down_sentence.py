"""The first sentence of a report when sources failed says how they failed."""

from __future__ import annotations

from opsmate.agent.report.assemble import down_sentence
from opsmate.tools.executor import SourceDown


def _down(code: str, label: str = "Loki (test, http://loki:3100)") -> SourceDown:
    return SourceDown(key="loki@test", label=label, code=code, message="m", first_call="c")


def test_each_way_of_failing_is_said_as_it_was() -> None:
    assert "(answered with errors)" in down_sentence([_down("server_error")])
    assert "(did not answer)" in down_sentence([_down("timeout")])
    assert "(could not be reached)" in down_sentence([_down("unreachable")])
    both = down_sentence([_down("timeout"), _down("unreachable", "Prometheus (test, http://p)")])
    assert "Loki (test, http://loki:3100) and Prometheus (test, http://p) (failed)" in both
    assert down_sentence([_down("server_error")]).startswith("Could not read Loki")
