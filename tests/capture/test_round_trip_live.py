"""Round trips against the integration environment (a real Prometheus, the Kubernetes and
Elasticsearch protocol fixtures): ``diagnose --save-bundle`` and ``snapshot``, then
``diagnose --bundle`` of what they wrote, compared with ``diagnose`` live."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from capture_env import (
    QUESTION,
    LiveEnv,
    bundle_files,
    opsmate,
    same_cause_found,
    since_incident,
)


@pytest.fixture(scope="module")
def runs(live: LiveEnv) -> dict[str, Any]:
    """The live report (saving a bundle), and a snapshot of the same sources."""
    saved, snap = live.tmp / "saved.tar.gz", live.tmp / "snap.tar.gz"
    a = opsmate(live.config, "diagnose", QUESTION, "--json", "--save-bundle", str(saved))
    assert a.returncode == 0, a.stderr[-3000:]
    s = opsmate(live.config, "snapshot", "--env", "test", "--namespace", "shop", "--service",
                "order-service", "--since", since_incident(), "--out", str(snap))  # fmt: skip
    assert s.returncode == 0, s.stderr[-3000:]
    return {"live": json.loads(a.stdout), "saved": saved, "snapshot": snap, "out": s.stdout}


def replay(config: Path, bundle: Path) -> dict[str, Any]:
    out = opsmate(config, "diagnose", QUESTION, "--json", "--bundle", str(bundle))
    assert out.returncode in (0, 1), out.stderr[-3000:]
    return json.loads(out.stdout)


def test_save_bundle_of_a_live_run_replays_to_the_same_report(
    live: LiveEnv, runs: dict[str, Any]
) -> None:
    a, b = runs["live"], replay(live.config, runs["saved"])
    assert a["status"] == "complete" and a["root_cause"] is not None
    for key in ("status", "root_cause", "facts", "hypotheses", "chain"):
        assert a.get(key) == b.get(key), key
    # the replay may plan the recorded series a live run could not list in advance, so
    # whether the step budget ran out can differ; everything the summary concludes cannot
    assert _concluded(a["summary"]) == _concluded(b["summary"])
    files = bundle_files(runs["saved"])
    meta = yaml.safe_load(files["bundle.yaml"])
    assert meta["question"] == QUESTION and meta["environment"] == "test"
    assert meta["capture"]["by"] == "opsmate diagnose --save-bundle"
    assert {"k8s/pod.yaml", "logs.ndjson", "metrics.yaml"} <= set(files)
    # the exact query text the run asked is what the bundle recorded
    asked = {c["args"]["query"] for c in a["tool_calls"] if c["tool"] == "query_metrics"}
    recorded = {m["query"] for m in yaml.safe_load(files["metrics.yaml"])}
    assert asked and asked <= recorded


def test_snapshot_then_replay_finds_the_live_root_cause(
    live: LiveEnv, runs: dict[str, Any]
) -> None:
    d = replay(live.config, runs["snapshot"])
    # the snapshot's series span its whole --since (weeks, at a coarse step): the symptom it
    # names first may differ from the live run's, the cause it finds may not
    assert same_cause_found(runs["live"], d), (runs["live"]["root_cause"], d["root_cause"])
    files = bundle_files(runs["snapshot"])
    meta = yaml.safe_load(files["bundle.yaml"])
    captured = {c["what"]: c for c in meta["capture"]["captured"]}
    assert {"k8s Pod", "k8s Node", "k8s Event", "k8s Deployment", "log records"} <= set(captured)
    assert captured["alerts"]["count"] >= 2  # the firing and pending fixture alerts
    queries = [m["query"] for m in yaml.safe_load(files["metrics.yaml"])]
    assert 'sum by (code) (rate(http_requests_total{service="order-service"}[5m]))' in queries
    assert any("db_pool_connections_in_use" in q for q in queries)  # discovered by its label
    # previous and current container logs of the unhealthy pods, and the service's records
    records = [json.loads(x) for x in files["logs.ndjson"].decode().splitlines()]
    assert any(r.get("pod") == "order-service-7d9f8b6c4-x2x9k" for r in records)
    assert sum(1 for r in records if r.get("service") == "order-service") > 100
    assert "bundle written" in runs["out"]


def test_limits_are_honoured_and_listed(live: LiveEnv, tmp_path: Path) -> None:
    out = tmp_path / "small.tar.gz"
    s = opsmate(live.config, "snapshot", "--env", "test", "--namespace", "shop",
                "--service", "order-service", "--since", since_incident(), "--out", str(out),
                "--max-log-records", "40", "--max-pod-log-lines", "7")  # fmt: skip
    assert s.returncode == 0, s.stderr[-3000:]
    files = bundle_files(out)
    records = [json.loads(x) for x in files["logs.ndjson"].decode().splitlines()]
    searched = [r for r in records if "_id" in r]
    assert 0 < len(searched) <= 40
    per_pod: dict[tuple[str, str], int] = {}
    for r in records:
        if "_id" not in r:
            per_pod[(r["pod"], r["@timestamp"] <= "2026-10-21T02:04:00")] = (
                per_pod.get((r["pod"], r["@timestamp"] <= "2026-10-21T02:04:00"), 0) + 1
            )
    assert per_pod and max(per_pod.values()) <= 7
    missing = yaml.safe_load(files["bundle.yaml"])["capture"]["not_captured"]
    assert any("--max-log-records 40" in m["why"] for m in missing)


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("missing-folder/x.tar.gz", "does not exist"),
        ("bundle.zip", "a bundle is written as a .tar.gz file"),
        (".", "a bundle is written as a .tar.gz file"),
    ],
)
def test_bad_out_path_is_a_clear_error(
    live: LiveEnv, tmp_path: Path, out: str, message: str
) -> None:
    target = tmp_path / out
    s = opsmate(
        live.config, "snapshot", "--env", "test", "--namespace", "shop", "--out", str(target)
    )
    assert s.returncode == 2 and message in s.stderr and str(target) in s.stderr, s.stderr
    assert not list(tmp_path.glob("*.tmp"))
    d = opsmate(live.config, "diagnose", QUESTION, "--save-bundle", str(target))
    assert d.returncode == 2 and message in d.stderr, d.stderr  # refused before any work


def _concluded(summary: str) -> str:
    return summary.split(" The investigation was cut short")[0]
