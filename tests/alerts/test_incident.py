"""Alerts -> incident: the question the intake reads, environment, onset, runbook."""

from __future__ import annotations

from datetime import UTC, datetime

from opsmate.agent.intake.question import run_intake
from opsmate.alerting.incident import build_incident, describe_subject, map_environment
from opsmate.config import AlertingConfig
from opsmate.tools.alertmanager.model import Alert

T = datetime(2026, 11, 3, 5, 52, 37, tzinfo=UTC)


def crashloop(**labels: str) -> Alert:
    base = {
        "alertname": "KubePodCrashLooping",
        "namespace": "shop",
        "pod": "payment-service-6d5f8b9c7-4xkqz",
        "container": "payment-service",
        "job": "kube-state-metrics",
        "service": "prometheus-kube-state-metrics",
        "severity": "warning",
    }
    return Alert(
        labels={**base, **labels},
        annotations={
            "summary": "Pod is crash looping.",
            "description": "Pod shop/payment-service-6d5f8b9c7-4xkqz is in waiting state.",
            "runbook_url": "https://runbooks.example/payment-service/oom-crashloop.md",
        },
        starts_at=T,
    )


def test_one_alert_becomes_a_question_the_intake_reads() -> None:
    inc = build_incident([crashloop()])
    q = inc.question
    assert q.startswith(
        "Investigate this alert: KubePodCrashLooping (subject: pod "
        "payment-service-6d5f8b9c7-4xkqz, container payment-service in namespace shop), "
        "severity warning, firing since 2026-11-03T05:52:00Z."
    )
    assert "Pod is crash looping" in q and "waiting state" in q
    assert "kube-state-metrics" not in q  # the exporter's job / service labels are not subjects
    assert inc.onset == T
    assert inc.namespace == "shop"
    assert inc.runbook_urls == ["https://runbooks.example/payment-service/oom-crashloop.md"]
    intake = run_intake(q, now=datetime(2026, 11, 3, 6, 16, tzinfo=UTC))
    assert intake.subject.kind == "Pod"
    assert intake.subject.names[0] == "payment-service-6d5f8b9c7-4xkqz"
    assert intake.subject.namespace == "shop"
    assert intake.onset == datetime(2026, 11, 3, 5, 52, tzinfo=UTC)  # to the minute


def test_subject_labels_most_specific_first() -> None:
    a = Alert(labels={"alertname": "X", "deployment": "api", "namespace": "web"})
    assert describe_subject(a) == "deployment api in namespace web"
    pvc = Alert(labels={"alertname": "X", "persistentvolumeclaim": "data-db-0", "namespace": "db"})
    assert describe_subject(pvc) == "pvc data-db-0 in namespace db"
    node = Alert(labels={"alertname": "X", "node": "worker-3", "job": "node-exporter"})
    assert describe_subject(node) == "node worker-3"
    job = Alert(labels={"alertname": "KubeJobFailed", "job_name": "nightly-export", "job": "ksm"})
    assert describe_subject(job).startswith("job nightly-export")
    svc = Alert(labels={"alertname": "X", "service": "order-service", "namespace": "shop"})
    assert describe_subject(svc) == "order-service in namespace shop"  # no kind word
    assert build_incident([svc]).services == ["order-service"]
    assert describe_subject(Alert(labels={"alertname": "Watchdog"})) == ""


def test_a_group_is_one_incident_earliest_first() -> None:
    later = Alert(
        labels={"alertname": "ApiGateway5xx", "service": "api-gateway", "severity": "critical"},
        starts_at=datetime(2026, 11, 3, 6, 0, tzinfo=UTC),
    )
    inc = build_incident([later, crashloop()])
    assert inc.question.startswith(
        "Investigate these 2 alerts as one incident, firing since 2026-11-03T05:52:00Z: "
        "KubePodCrashLooping (subject: pod payment-service-6d5f8b9c7-4xkqz"
    )
    assert "; ApiGateway5xx (subject: api-gateway), severity critical" in inc.question
    assert inc.alertnames == ["KubePodCrashLooping", "ApiGateway5xx"]
    assert inc.onset == T
    assert inc.title == "KubePodCrashLooping+ApiGateway5xx"


def test_resolved_alerts_are_left_out_unless_all_are_resolved() -> None:
    done = Alert(labels={"alertname": "Old"}, status="resolved", starts_at=T)
    inc = build_incident([done, crashloop()])
    assert inc.alertnames == ["KubePodCrashLooping"]
    only = build_incident([done])
    assert only.alertnames == ["Old"] and "(resolved)" in only.question
    assert only.notes and "resolved" in only.notes[0]


def test_environment_from_labels_through_config() -> None:
    cfg = AlertingConfig(environments={"stg-1": "staging"})
    assert map_environment([crashloop(cluster="stg-1")], cfg, ["staging", "prod"]) == "staging"
    assert map_environment([crashloop(env="prod")], cfg, ["staging", "prod"]) == "prod"
    # env is looked up before cluster; an unknown value maps to nothing
    assert map_environment([crashloop(env="qa", cluster="stg-1")], cfg, []) == "staging"
    assert map_environment([crashloop(cluster="elsewhere")], cfg, ["prod"]) is None
    ordered = AlertingConfig(environment_labels=["cluster"], environments={"p1": "prod"})
    assert map_environment([crashloop(env="test", cluster="p1")], ordered, ["test"]) == "prod"
    inc = build_incident([crashloop(cluster="stg-1")], config=cfg, known_environments=[])
    assert inc.environment == "staging"
