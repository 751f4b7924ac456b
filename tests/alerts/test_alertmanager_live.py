"""Against a REAL Alertmanager: ``opsmate alerts``, ``doctor``, ``list_alerts`` (with
silence state) and ``diagnose --alert`` (live), through the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from am_fixture import AmServer, create_silence, free_port, post_alerts, run_alertmanager

OPSMATE = [str(Path(sys.executable).parent / "opsmate")]
TWO_ALERTS = [
    {
        "labels": {
            "alertname": "KubePodCrashLooping",
            "namespace": "shop",
            "pod": "payment-service-6d5f8b9c7-4xkqz",
            "container": "payment-service",
            "severity": "critical",
            "cluster": "dev-1",
        },
        "annotations": {"summary": "Pod is crash looping."},
    },
    {
        "labels": {"alertname": "OrderServiceHigh5xxRate", "service": "order-service"},
        "annotations": {"summary": "order-service 5xx above 5%"},
    },
]


@pytest.fixture(scope="module")
def am(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AmServer]:
    with run_alertmanager(tmp_path_factory.mktemp("am")) as server:
        post_alerts(server.url, TWO_ALERTS)
        yield server


def opsmate(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPSMATE_CONFIG": str(config)}
    return subprocess.run(
        [*OPSMATE, *args], capture_output=True, text=True, timeout=120, env=env, check=False
    )


def config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        "default_environment: test\n"
        "environments:\n"
        f"  test:\n    alertmanager: {{url: '{url}', timeout: 5}}\n"
        "alerting:\n  environments: {dev-1: test}\n",
        encoding="utf-8",
    )
    return path


def alerts_json(cfg: Path) -> dict:
    r = opsmate(cfg, "alerts", "--env", "test", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_alerts_lists_both_firing_alerts_with_labels(am: AmServer, tmp_path: Path) -> None:
    out = alerts_json(config(tmp_path, am.url))
    assert out["source"] == "alertmanager" and out["environment"] == "test"
    assert out["count"] == 2
    by_name = {a["name"]: a for a in out["alerts"]}
    crash = by_name["KubePodCrashLooping"]
    assert crash["labels"]["pod"] == "payment-service-6d5f8b9c7-4xkqz"
    assert crash["subject"] == {
        "pod": "payment-service-6d5f8b9c7-4xkqz",
        "container": "payment-service",
        "namespace": "shop",
    }
    assert crash["severity"] == "critical" and crash["silenced"] is False
    assert len(crash["fingerprint"]) == 16
    assert by_name["OrderServiceHigh5xxRate"]["labels"]["service"] == "order-service"
    assert out["alerts"][0]["name"] == "KubePodCrashLooping"  # most severe first
    table = opsmate(config(tmp_path, am.url), "alerts")
    assert table.returncode == 0
    assert "KubePodCrashLooping" in table.stdout and "pod=payment-service" in table.stdout


def test_doctor_reports_it(am: AmServer, tmp_path: Path) -> None:
    r = opsmate(config(tmp_path, am.url), "doctor", "--json")
    checks = {c["check"]: c for c in json.loads(r.stdout)}
    assert checks["alertmanager[test]"]["status"] == "ok"
    assert "Alertmanager 0.25" in checks["alertmanager[test]"]["detail"]
    assert checks["tools"]["detail"] == "list_alerts"
    assert r.returncode == 0, r.stdout


def test_doctor_and_alerts_when_it_is_down(tmp_path: Path) -> None:
    cfg = config(tmp_path, f"http://127.0.0.1:{free_port()}")
    r = opsmate(cfg, "doctor", "--json")
    assert r.returncode == 3
    check = next(c for c in json.loads(r.stdout) if c["check"] == "alertmanager[test]")
    assert check["status"] == "fail" and "unreachable" in check["detail"]
    a = opsmate(cfg, "alerts", "--json")
    assert a.returncode == 3 and "connection refused" in a.stderr and a.stdout == ""


def test_no_alerts_is_exit_0(tmp_path: Path) -> None:
    with run_alertmanager(tmp_path / "empty") as empty:
        out = alerts_json(config(tmp_path, empty.url))
        assert out["count"] == 0 and out["alerts"] == []
        r = opsmate(config(tmp_path, empty.url), "alerts")
        assert r.returncode == 0 and "no alerts firing" in r.stdout


def test_list_alerts_carries_the_silence(tmp_path: Path) -> None:
    with run_alertmanager(tmp_path / "am2") as server:
        post_alerts(server.url, TWO_ALERTS)
        silence = create_silence(server.url, {"alertname": "OrderServiceHigh5xxRate"}, "deploy")
        cfg = config(tmp_path, server.url)
        out = alerts_json(cfg)
        by_name = {a["name"]: a for a in out["alerts"]}
        assert by_name["OrderServiceHigh5xxRate"]["silenced"] is True
        assert by_name["OrderServiceHigh5xxRate"]["silenced_by"] == [silence]
        assert by_name["OrderServiceHigh5xxRate"]["state"] == "suppressed"
        assert by_name["KubePodCrashLooping"]["silenced"] is False
        r = opsmate(cfg, "tool", "list_alerts", "--args", "{}", "--json")
        assert r.returncode == 0, r.stderr
        env = json.loads(r.stdout)
        assert env["status"] == "success" and env["scope"]["source"] == "alertmanager"
        views = {a["name"]: a for a in env["data"]["alerts"]}
        assert views["OrderServiceHigh5xxRate"]["silenced"] is True
        assert env["data"]["silences"][0]["id"] == silence
        assert env["data"]["silences"][0]["comment"] == "deploy"


def test_diagnose_a_live_alert_by_name_and_fingerprint(am: AmServer, tmp_path: Path) -> None:
    cfg = config(tmp_path, am.url)
    fingerprint = next(
        a["fingerprint"] for a in alerts_json(cfg)["alerts"] if a["name"] == "KubePodCrashLooping"
    )
    for ref in ("KubePodCrashLooping", fingerprint):
        r = opsmate(cfg, "diagnose", "--alert", ref, "--model", "none", "--json")
        assert r.returncode in (0, 1), r.stderr
        report = json.loads(r.stdout)
        assert report["question"].startswith(
            "Investigate this alert: KubePodCrashLooping (subject: pod "
            "payment-service-6d5f8b9c7-4xkqz, container payment-service in namespace shop)"
        )
        assert report["constraints"]["environment"] == "test"  # cluster dev-1 -> test
        assert any(c["tool"] == "list_alerts" for c in report["tool_calls"])
    missing = opsmate(cfg, "diagnose", "--alert", "NoSuchAlert", "--model", "none")
    assert missing.returncode == 2
    assert "NoSuchAlert" in missing.stderr and "KubePodCrashLooping" in missing.stderr
