"""``opsmate watch`` as a service, end to end: a real watch process (demo bundle,
deterministic engine) receives two firing groups for the same service; a REAL Prometheus
scrapes its ``/metrics`` and answers queries over what happened; a Slack-compatible
receiver and a webhook receiver (local HTTP servers) get the reports while a dead sink
loses none (they stay in --out, listed in undelivered.jsonl); the incident history makes
the second report name the first as ``H1``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from service_fixture import (
    Prometheus,
    Watch,
    free_port,
    notification,
    run_prometheus,
    start_watch,
    wait_for,
)
from sink_receiver import Receiver

from opsmate.agent.report.model import Report, validate_citations
from opsmate.history.store import HistoryStore


def stamp(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


FIRST_START = datetime.now(UTC) - timedelta(hours=3)
SECOND_START = datetime.now(UTC) - timedelta(minutes=5)


@dataclass
class Service:
    watch: Watch
    prom: Prometheus
    receiver: Receiver
    first: dict[str, Any]
    second: dict[str, Any]
    first_path: Path
    second_path: Path


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, session_home: Path) -> Iterator[Service]:
    root = tmp_path_factory.mktemp("service")
    dead = f"http://127.0.0.1:{free_port()}/gone"  # nothing listens there
    with Receiver() as rx:
        config = f"""
alerting: {{require_token: true, workers: 1}}
sinks:
  - {{type: slack, url: "{rx.url}/slack", report_url: "https://reports.example/{{json}}"}}
  - {{type: webhook, name: archive, url: "{rx.url}/hook"}}
  - {{type: webhook, name: dead, url: "{dead}", attempts: 2, backoff_seconds: 0.1}}
"""
        with (
            start_watch(root, session_home, config) as watch,
            run_prometheus(root / "prom", watch.url.removeprefix("http://")) as prom,
        ):
            labels = {"service": "order-service", "namespace": "shop"}
            first = notification("a", "OrderServiceHigh5xxRate", stamp(FIRST_START), **labels)
            assert watch.post(first) == 200
            wait_for(lambda: len(watch.reports()) == 1, "report 1", 120, watch.tail)
            second = notification("b", "OrderServiceErrorBudgetBurn", stamp(SECOND_START), **labels)
            assert watch.post(second) == 200
            wait_for(lambda: len(watch.reports()) == 2, "report 2", 120, watch.tail)
            wait_for(lambda: len(list(watch.out.glob("*.md"))) == 2, "the Markdown files")
            by_name = {p.name.split("-", 1)[1]: p for p in watch.reports()}
            p1 = by_name["OrderServiceHigh5xxRate.json"]
            p2 = by_name["OrderServiceErrorBudgetBurn.json"]
            yield Service(
                watch=watch,
                prom=prom,
                receiver=rx,
                first=json.loads(p1.read_text(encoding="utf-8")),
                second=json.loads(p2.read_text(encoding="utf-8")),
                first_path=p1,
                second_path=p2,
            )


def test_a_second_alert_for_the_same_subject_and_cause_names_the_first_as_h1(
    service: Service,
) -> None:
    first, second = service.first, service.second
    assert first["status"] == "complete" and second["status"] == "complete"
    assert first["seen_before"] == []
    (h1,) = second["seen_before"]
    assert h1["id"] == "H1"
    assert h1["subject"] == "order-service" and h1["cause_kind"] == "saturation"
    assert h1["time"] == stamp(FIRST_START)  # when that incident started
    assert h1["report"] == str(service.first_path)
    assert h1["alertnames"] == ["OrderServiceHigh5xxRate"]
    assert h1["outcome"].startswith("complete: ")
    assert "(E" not in h1["outcome"] and "(E" not in (h1["root_cause"] or "")  # not its ids
    # context, never evidence: no claim cites H1 and the citation check is unaffected
    report = Report.model_validate(second)
    assert validate_citations(report) == []
    assert "H1" not in report.cited_ids() and "H1" not in report.known_ids()
    md = service.second_path.with_suffix(".md").read_text(encoding="utf-8")
    assert "## Seen before (past incidents, not evidence for this one)" in md
    assert "**H1**" in md


def test_opsmate_history_lists_both_incidents(service: Service) -> None:
    proc = service.watch.opsmate("history", "--json", "--service", "order-service")
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(proc.stdout)
    assert listed["count"] == 2
    newest, oldest = listed["incidents"]
    assert newest["alertnames"] == ["OrderServiceErrorBudgetBurn"]
    assert oldest["id"] == service.second["seen_before"][0]["incident"]
    assert oldest["report_path"] == str(service.first_path)
    for inc in listed["incidents"]:
        assert inc["origin"] == "watch" and inc["status"] == "complete"
        assert inc["cause_kind"] == "saturation" and inc["subject"] == "order-service"
        assert inc["alert_labels"][0]["namespace"] == "shop" and inc["chain"]
    store = HistoryStore(Path(service.watch.env["OPSMATE_DATA_DIR"]) / "history.sqlite3")
    assert store.incidents(service="payment-service") == []


def test_the_slack_compatible_receiver_gets_each_report(service: Service) -> None:
    rx = service.receiver
    wait_for(lambda: len(rx.posts("/slack")) == 2 and len(rx.posts("/hook")) == 2, "deliveries")
    texts = {p["body"]["blocks"][0]["text"]["text"]: p["body"]["text"] for p in rx.posts("/slack")}
    text = texts["[complete] OrderServiceErrorBudgetBurn"]
    assert "*Root cause:* " in text and "*From symptom to cause:* " in text
    assert "*Next step:* " in text
    assert f"<https://reports.example/{service.second_path.name}|Full report>" in text
    hooks = {p["headers"]["x-opsmate-report"]: p["body"] for p in rx.posts("/hook")}
    assert hooks[service.first_path.name] == service.first  # the report JSON as written


def test_a_dead_receiver_loses_no_report(service: Service) -> None:
    listed = service.watch.out / "undelivered.jsonl"
    wait_for(lambda: listed.exists() and len(listed.read_text().splitlines()) == 2, "failures")
    lines = [json.loads(x) for x in listed.read_text().splitlines()]
    assert {x["sink"] for x in lines} == {"dead"} and {x["attempts"] for x in lines} == {2}
    assert {x["report"] for x in lines} == {service.first_path.name, service.second_path.name}
    for x in lines:
        assert (service.watch.out / x["report"]).is_file()  # still in --out
    assert "not delivered" in service.watch.log.read_text()


def test_a_real_prometheus_scrapes_and_queries_watch_metrics(service: Service) -> None:
    watch, prom = service.watch, service.prom
    assert watch.post(notification("c", "X", stamp(SECOND_START)), token=None) == 401
    assert watch.post({"version": "4"}) == 400
    want = {
        'up{job="opsmate"}': 1,
        'opsmate_watch_diagnoses_total{status="complete"}': 2,
        "opsmate_watch_diagnosis_duration_seconds_count": 2,
        "opsmate_watch_notifications_received_total": 2,
        "opsmate_watch_notifications_queued_total": 2,
        'opsmate_watch_notifications_rejected_total{reason="unauthorized"}': 1,
        'opsmate_watch_notifications_rejected_total{reason="bad_request"}': 1,
        'opsmate_watch_sink_deliveries_total{sink="dead",outcome="failed"}': 2,
        'opsmate_watch_sink_deliveries_total{sink="slack1",outcome="delivered"}': 2,
        'opsmate_watch_history_writes_total{outcome="ok"}': 2,
        "opsmate_watch_queue_depth": 0,
    }
    for expr, value in want.items():
        wait_for(lambda e=expr, v=value: prom.value(e) == v, f"{expr} == {value}", 60)
    calls = prom.query(
        'sum by (source, outcome) (opsmate_watch_source_calls_total{source="bundle"})'
    )
    assert {r["metric"]["outcome"] for r in calls} >= {"success"}
    assert sum(float(r["value"][1]) for r in calls) > 0
    buckets = prom.query("opsmate_watch_diagnosis_duration_seconds_bucket")
    assert {r["metric"]["le"] for r in buckets} >= {"1.0", "+Inf"}


def test_a_resolved_notification_becomes_the_incidents_outcome(service: Service) -> None:
    """Runs last (it adds a notification the metrics test does not count)."""
    labels = {"service": "order-service", "namespace": "shop"}
    resolved = notification("a", "OrderServiceHigh5xxRate", stamp(FIRST_START), **labels)
    ended = FIRST_START + timedelta(minutes=42)
    resolved["status"] = "resolved"
    resolved["alerts"][0].update(status="resolved", endsAt=stamp(ended))
    assert service.watch.post(resolved) == 200

    store = HistoryStore(Path(service.watch.env["OPSMATE_DATA_DIR"]) / "history.sqlite3")
    first = wait_for(lambda: (i := store.incidents()[-1]).resolved_at and i, "the resolution")
    assert first.resolved_at == ended.replace(microsecond=0)
    assert first.outcome().startswith(f"complete, resolved {stamp(ended)}: ")
    assert len(service.watch.reports()) == 2  # a resolved group is not investigated
