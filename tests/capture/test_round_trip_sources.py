"""Capture keeps everything it read, for each kind of live source alone: a REAL Prometheus
(backfilled fixture TSDB) and a REAL Alertmanager (Debian packages), and the protocol
fixtures of Elasticsearch, Loki and the Kubernetes API server. For each, a live
investigation, the bundle ``--save-bundle`` writes of it and the replay of that bundle give
the same report; the bundle holds that source's part (``metrics.yaml``, ``logs.ndjson``,
``k8s/``, ``alerts.yaml``). Runs in-process through the API ``opsmate diagnose`` uses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from capture_env import QUESTION, Servers, bundle_files, settings_for
from es_fixture import sample_logs

from opsmate.agent.session.session import Session
from opsmate.capture.save import save_session_bundle
from opsmate.config import Settings

SAME = ("status", "root_cause", "facts", "hypotheses", "chain")


def ask(settings: Settings, **kw: Any) -> tuple[Session, dict[str, Any]]:
    session = Session.open(settings=settings, model="none", **kw)
    return session, session.ask(QUESTION).to_json()


PART = {
    "prometheus": "metrics.yaml",
    "elasticsearch": "logs.ndjson",
    "loki": "logs.ndjson",
    "kubernetes": "k8s/pod.yaml",
    "alertmanager": "alerts.yaml",
}


@pytest.mark.parametrize("kind", list(PART))
def test_live_run_saved_and_replayed_gives_the_same_report(
    kind: str, servers: Servers, tmp_path: Path
) -> None:
    session, live = ask(settings_for(kind, servers, tmp_path))
    out = tmp_path / f"{kind}.tar.gz"
    try:
        written = save_session_bundle(session, out, by="opsmate diagnose --save-bundle")
    finally:
        session.close()
    read = [c for c in live["tool_calls"] if c["status"] in ("success", "partial")]
    assert read, f"the live {kind} run read nothing: {live['tool_calls']}"
    files = bundle_files(out)
    assert PART[kind] in files, (kind, sorted(files), written.not_captured)
    replay_session, replay = ask(Settings(), bundle=out)
    replay_session.close()
    for key in SAME:
        assert live.get(key) == replay.get(key), (kind, key, _debug_calls(live, replay))


def test_alertmanager_alerts_keep_their_state_in_the_bundle(
    servers: Servers, tmp_path: Path
) -> None:
    session, _live = ask(settings_for("alertmanager", servers, tmp_path))
    out = tmp_path / "am.tar.gz"
    written = save_session_bundle(session, out, by="opsmate diagnose --save-bundle")
    session.close()
    assert {"what": "alerts", "count": 2} in written.captured
    alerts = yaml.safe_load(bundle_files(out)["alerts.yaml"])
    names = {a["labels"]["alertname"] for a in alerts}
    assert names == {"OrderServiceErrors", "OrderDbPoolSaturated"}
    assert all(a["state"] == "firing" and a["fingerprint"] for a in alerts)
    replay_session, replay = ask(Settings(), bundle=out)
    replay_session.close()
    listed = [c for c in replay["tool_calls"] if c["tool"] == "list_alerts"]
    assert listed and listed[0]["status"] == "success"


def test_loki_records_are_written_with_their_live_references(
    servers: Servers, tmp_path: Path
) -> None:
    session, _live = ask(settings_for("loki", servers, tmp_path))
    out = tmp_path / "loki.tar.gz"
    save_session_bundle(session, out, by="opsmate diagnose --save-bundle")
    session.close()
    import json

    records = [json.loads(x) for x in bundle_files(out)["logs.ndjson"].decode().splitlines()]
    # log_stats counted every record of order-service: the bundle holds them all
    expected = sum(1 for r in sample_logs() if r["service"] == "order-service"
                   and r.get("environment") == "test")  # fmt: skip
    assert sum(1 for r in records if r.get("service") == "order-service") >= expected
    assert all(r["environment"] == "test" and r.get("_id") for r in records)


def _debug_calls(live: dict[str, Any], replay: dict[str, Any]) -> str:
    rows = []
    for rep in (live, replay):
        rows.append(
            [
                f"{c['tool']} {str(c['args'].get('query') or c['args'])[:70]} {c['status']}"
                for c in rep["tool_calls"]
            ]
        )
    return "\n".join(["LIVE", *rows[0], "REPLAY", *rows[1]])
