"""``opsmate snapshot`` keeps what it read, whatever the sources: the alerts of an
Alertmanager (and, with ``--alert``, a question ``diagnose --bundle`` answers), Loki's
records, a Prometheus's series without any Kubernetes; it says what a missing
``--namespace`` left out; a replay of a source that left nothing says "not captured".
Against the real Prometheus and Alertmanager and the protocol fixtures (``servers``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from capture_env import Servers, bundle_files, config_for, opsmate, since_incident
from prom_fixture import RULES


def snapshot(config: Path, out: Path, *args: str) -> tuple[Any, dict[str, bytes]]:
    run = opsmate(config, "snapshot", "--env", "test", "--out", str(out), *args)
    assert run.returncode == 0, run.stderr[-3000:]
    return run, bundle_files(out)


def test_alert_snapshot_keeps_the_alerts_and_a_question(servers: Servers, tmp_path: Path) -> None:
    assert "FixtureAlwaysFiring" in RULES  # loaded and firing in the real Prometheus
    from am_fixture import post_alerts

    labels = {"alertname": "FixtureAlwaysFiring", "severity": "critical",
              "service": "order-service"}  # fmt: skip
    post_alerts(servers.am.url, [{"labels": labels, "annotations": {"summary": "always"}}])
    config = config_for(tmp_path, "prometheus", "alertmanager", s=servers)
    out = tmp_path / "alert.tar.gz"
    _run, files = snapshot(config, out, "--alert", "FixtureAlwaysFiring", "--since", "1h")
    meta = yaml.safe_load(files["bundle.yaml"])
    alerts = yaml.safe_load(files["alerts.yaml"])
    firing = {a["labels"]["alertname"] for a in alerts if a.get("state") == "firing"}
    assert {"FixtureAlwaysFiring", "OrderServiceErrors"} <= firing
    assert any(a.get("fingerprint") for a in alerts)  # Alertmanager's, with its state
    missing = " ".join(n["what"] + ": " + n["why"] for n in meta["capture"]["not_captured"])
    assert "no alerting rule" not in missing and "FixtureAlwaysFiring" not in missing
    queries = [m["query"] for m in yaml.safe_load(files["metrics.yaml"])]
    assert "vector(1)" in queries  # the alert's expression
    assert "FixtureAlwaysFiring" in meta["question"]
    assert meta["capture"]["sources"] == ["alertmanager", "prometheus"]
    d = opsmate(None, "diagnose", "--bundle", str(out), "--json", "--model", "none")
    assert d.returncode in (0, 1), d.stderr[-2000:]
    report = json.loads(d.stdout)
    assert "FixtureAlwaysFiring" in report["question"]


def test_loki_snapshot_writes_the_records_it_read(servers: Servers, tmp_path: Path) -> None:
    config = config_for(tmp_path, "loki", s=servers)
    run, files = snapshot(config, tmp_path / "loki.tar.gz",
                          "--service", "order-service", "--since", since_incident())  # fmt: skip
    records = [json.loads(x) for x in files["logs.ndjson"].decode().splitlines()]
    assert sum(1 for r in records if r.get("service") == "order-service") > 100
    assert all(r.get("_id") and r.get("environment") == "test" for r in records)
    assert "Kubernetes objects" in run.stdout  # not captured: no Kubernetes configured


def test_prometheus_alone_records_the_services_series(servers: Servers, tmp_path: Path) -> None:
    config = config_for(tmp_path, "prometheus", s=servers)
    _run, files = snapshot(config, tmp_path / "prom.tar.gz",
                          "--service", "order-service", "--since", since_incident())  # fmt: skip
    queries = [m["query"] for m in yaml.safe_load(files["metrics.yaml"])]
    assert 'sum by (code) (rate(http_requests_total{service="order-service"}[5m]))' in queries
    assert any("db_pool_connections_in_use" in q for q in queries)
    # and with no flag at all: the request series of every service, aggregated
    _run, files = snapshot(config, tmp_path / "all.tar.gz", "--since", since_incident())
    queries = [m["query"] for m in yaml.safe_load(files["metrics.yaml"])]
    assert any("http_requests_total" in q and "by (service" in q for q in queries), queries


def test_without_a_namespace_it_says_what_is_missing(servers: Servers, tmp_path: Path) -> None:
    config = config_for(tmp_path, "kubernetes", s=servers, kubernetes={"namespaces": []})
    run, files = snapshot(config, tmp_path / "cluster.tar.gz")
    assert "no --namespace given" in run.stdout
    assert "k8s/node.yaml" in files  # the cluster-wide kinds are still read
    bare = config_for(tmp_path, "elasticsearch", s=servers)
    empty = opsmate(bare, "snapshot", "--env", "test", "--since", "1m",
                    "--out", str(tmp_path / "none.tar.gz"))  # fmt: skip
    assert empty.returncode == 2, (empty.returncode, empty.stderr)
    assert "nothing was captured" in empty.stderr and "--namespace" in empty.stderr
    assert not (tmp_path / "none.tar.gz").exists()


def test_a_replay_of_a_source_left_out_says_not_captured(servers: Servers, tmp_path: Path) -> None:
    config = config_for(tmp_path, "elasticsearch", "kubernetes", s=servers)
    out = tmp_path / "nologs.tar.gz"
    _run, files = snapshot(config, out, "--namespace", "shop", "--max-log-records", "0",
                          "--max-pod-log-lines", "0")  # fmt: skip
    assert "logs.ndjson" not in files
    t = opsmate(None, "tool", "search_logs", "--args", '{"query": "PoolTimeout"}',
                "--bundle", str(out), "--json")  # fmt: skip
    envelope = json.loads(t.stdout)
    assert envelope["status"] == "no_data" and envelope["error"]["code"] == "not_available"
    message = envelope["error"]["message"]
    assert message.startswith("not captured") and "--max-log-records is 0" in message
    assert "no matching data" not in t.stdout
