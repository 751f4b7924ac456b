"""One diagnosis per alert group: the choice deploy/ makes, tested.

The design (deploy/README.md): Alertmanager routes the groups to one receiver, the
``opsmate`` Service, backed by ONE watch replica (``replicas: 1``, ``strategy: Recreate``:
a rollout never runs two). What can still send a group twice is Alertmanager itself: an
HA pair whose peers do not see each other (or Prometheus sending to every Alertmanager)
notifies the same group from each instance. Here two REAL Alertmanagers, not clustered,
run the route and receiver of ``deploy/alertmanager/opsmate-receiver.yml`` (only the URL,
the token file and the waits changed) and both receive the alert, as Prometheus would
send it: watch gets the group twice and diagnoses it once.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from service_fixture import TOKEN, free_port, http, start_watch, wait_for

ALERTMANAGER = "/usr/bin/prometheus-alertmanager"
REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "deploy" / "alertmanager" / "opsmate-receiver.yml"


@contextlib.contextmanager
def alertmanager(root: Path, watch_url: str) -> Iterator[str]:
    if shutil.which(ALERTMANAGER) is None:
        pytest.fail(f"{ALERTMANAGER} not found: apt-get install -y prometheus-alertmanager")
    root.mkdir(parents=True)
    cfg = yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))
    token_file = root / "token"
    token_file.write_text(TOKEN, encoding="utf-8")
    hook = cfg["receivers"][0]["webhook_configs"][0]
    hook["url"] = watch_url + "/"
    hook["http_config"]["authorization"]["credentials_file"] = str(token_file)
    cfg["route"].update(group_wait="1s", group_interval="1s")
    (root / "am.yml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    port = free_port()
    with (root / "am.log").open("wb") as log:
        proc = subprocess.Popen(
            [
                ALERTMANAGER,
                f"--config.file={root / 'am.yml'}",
                f"--storage.path={root / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--cluster.listen-address=",  # not clustered: each instance notifies
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: http("GET", url + "/-/ready")[0] == 200 or proc.poll(), "Alertmanager")
        assert proc.poll() is None, (root / "am.log").read_text(errors="replace")[-2000:]
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def scrape(url: str) -> dict[str, float]:
    from prometheus_client.parser import text_string_to_metric_families

    status, raw = http("GET", url + "/metrics")
    assert status == 200
    out: dict[str, float] = {}
    for fam in text_string_to_metric_families(raw.decode()):
        for s in fam.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
            out[f"{s.name}{{{labels}}}" if labels else s.name] = s.value
    return out


def test_an_alert_group_sent_by_two_alertmanagers_is_diagnosed_once(
    tmp_path: Path, session_home: Path
) -> None:
    config = "alerting: {require_token: true}\n"
    with (
        start_watch(tmp_path / "w", session_home, config) as watch,
        alertmanager(tmp_path / "am1", watch.url) as am1,
        alertmanager(tmp_path / "am2", watch.url) as am2,
    ):
        starts = (datetime.now(UTC) - timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
        alert = [
            {
                "labels": {
                    "alertname": "OrderServiceHigh5xxRate",
                    "service": "order-service",
                    "namespace": "shop",
                },
                "annotations": {"summary": "order-service error rate rose"},
                "startsAt": starts,
            }
        ]
        for am in (am1, am2):  # Prometheus sends every alert to every Alertmanager
            assert http("POST", am + "/api/v2/alerts", alert)[0] == 200
        wait_for(
            lambda: scrape(watch.url)["opsmate_watch_notifications_received_total"] >= 2,
            "both Alertmanagers to notify",
        )
        wait_for(
            lambda: (
                scrape(watch.url)["opsmate_watch_investigations_in_flight"] == 0
                and len(watch.reports()) >= 1
            ),
            "the investigation to end",
        )
        m = scrape(watch.url)
    assert m["opsmate_watch_notifications_received_total"] == 2
    assert m["opsmate_watch_notifications_deduplicated_total"] == 1
    assert m["opsmate_watch_notifications_queued_total"] == 1
    assert m["opsmate_watch_diagnoses_total{status=complete}"] == 1
    assert len(watch.reports()) == 1
