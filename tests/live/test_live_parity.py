"""Live parity: a bundle served by protocol fixtures as live sources and diagnosed live
names the same root cause as its replay (bundle_sources.py says how it is served).

A representative subset (benchmarks/bench_live_parity.py runs every bundle of evals/ and
peer-dev and prints how many differ and why): the demo bundles (metrics, logs, a
crash loop, a node) and scenarios of the project's own set that lean on Kubernetes
objects, on logs and on metrics, with Elasticsearch and, for two of them, Loki as the log
source. The live run must also have read the discovered series (``discover_metrics``)
and said what it did not check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bundle_sources import compare, live_report, replay_report, root_cause_text, serve_bundle

from opsmate.tools.bundle import load_bundle

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "src" / "opsmate" / "data" / "demo"
SCENARIOS = REPO / "evals" / "scenarios"
CASES = [
    (DEMO / "01-pool-exhaustion", "elasticsearch"),  # metrics + logs + a rollout
    (DEMO / "02-oom-crashloop", "loki"),  # a crash loop: pod logs, memory series
    (DEMO / "03-node-disk-full", "elasticsearch"),  # nodes, evictions
    (SCENARIOS / "bad-config-value", "elasticsearch"),  # a ConfigMap change
    (SCENARIOS / "downstream-timeouts", "loki"),  # latency by peer: a histogram
    (SCENARIOS / "red-herring-two-symptoms", "elasticsearch"),  # two symptoms, one cause
    (SCENARIOS / "tls-cert-expired", "elasticsearch"),  # logs only name the cause
]


@pytest.mark.parametrize(("path", "logs"), CASES, ids=[f"{p.name}-{lg}" for p, lg in CASES])
def test_live_report_names_the_replay_root_cause(path: Path, logs: str, tmp_path: Path) -> None:
    bundle = load_bundle(path)
    replay = replay_report(path)
    with serve_bundle(bundle, tmp_path, log_source=logs) as served:
        live = live_report(served)
        answered = dict(served.prom.answers) if served.prom is not None else {}
    outcome = compare(replay, live, bundle)
    assert outcome == "same", (outcome, root_cause_text(replay), root_cause_text(live))
    assert replay["status"] == live["status"]
    if bundle.metrics:
        _discovered(live, answered)


def _discovered(live: dict[str, Any], answered: dict[str, str]) -> None:
    """Metric discovery ran first and its queries were asked; what it did not find is said."""
    tools = [c["tool"] for c in live["tool_calls"]]
    assert "discover_metrics" in tools
    asked = [c for c in live["tool_calls"] if c["tool"] == "query_metrics"]
    assert asked and all(c["status"] in ("success", "no_data") for c in asked)
    assert any(q for q, how in answered.items() if how != "none")
    assert any(n.startswith("metrics discovered on Prometheus") for n in live["notes"])
