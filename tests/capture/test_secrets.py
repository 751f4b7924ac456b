"""Secrets planted in every source (Prometheus labels and alert annotations, Elasticsearch
records, Kubernetes events, annotations, Secret data and pod logs) appear in no file of a
bundle written by ``snapshot`` or ``diagnose --save-bundle``; a ``seen-XX`` marker beside
each proves the text was captured (and masked), not skipped."""

from __future__ import annotations

import copy
import json
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import prom_fixture
import pytest
import yaml
from capture_env import (
    QUESTION,
    RELEASE,
    InstanceLogs,
    bundle_files,
    opsmate,
    pod_logs,
    write_config,
)
from es_fixture import es_server, sample_logs
from k8s_fixture import ORDER_PODS, sample_objects

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "safety"))
from canary_bundle import plants

CLASSES = ("postgres_url", "bearer", "pair_password", "aws_secret", "jwt", "github")


def planted(tag: str) -> list[tuple[str, tuple[str, ...]]]:
    """(text with a seen-TAG marker, canaries) of a few secret classes."""
    return [(f"seen-{tag} {p.text}", p.canaries) for p in plants(tag) if p.cls in CLASSES]


TAGS = ("PL", "PA", "ES", "EV", "AN", "SD", "PO")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("canary")
    data = tmp / "data"
    data.mkdir()
    (tmp / "p").mkdir()
    for f in prom_fixture.DATA.glob("*.om"):
        (data / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    lines = ["# HELP app_dsn_info Connection string in use.", "# TYPE app_dsn_info gauge"]
    now = int(time.time())  # recent samples: the end of the snapshot's range query sees them
    for text, _ in planted("PL"):
        label = text.replace("\\", "").replace('"', "'")
        series = f'app_dsn_info{{service="order-service",dsn="{label}"}}'
        lines += [f"{series} 1 {t}" for t in range(now - 1800, now - 5, 30)]
    (data / "canary.om").write_text("\n".join([*lines, "# EOF", ""]), encoding="utf-8")
    rules = prom_fixture.RULES.replace(
        'annotations: {summary: "always firing (test fixture)"}',
        "annotations: {summary: " + json.dumps(" / ".join(t for t, _ in planted("PA"))) + "}",
    )
    objects = copy.deepcopy(sample_objects())
    pod = next(o for o in objects if o["metadata"]["name"] == ORDER_PODS[0])
    pod["metadata"]["annotations"] = {f"note-{i}": t for i, (t, _) in enumerate(planted("AN"))}
    for i, (text, _) in enumerate(planted("EV")):
        ev = copy.deepcopy(next(o for o in objects if o["kind"] == "Event"))
        ev["metadata"]["name"] = f"canary-{i}"
        ev["message"] = text
        objects.append(ev)
    secret_data = {f"k{i}": t for i, (t, _) in enumerate(planted("SD"))}
    objects.append({"kind": "Secret", "apiVersion": "v1", "type": "Opaque", "data": secret_data,
                    "metadata": {"name": "db-creds", "namespace": "shop"}})  # fmt: skip
    current, previous = pod_logs()
    key = ("shop", ORDER_PODS[0], "app")
    for i, (text, _) in enumerate(planted("PO")):
        t = RELEASE + timedelta(minutes=3, seconds=30 + i)
        previous[key].append((t, f"{t.isoformat()} ERROR {text}"))
    previous[key].sort()
    docs = sample_logs()
    recent = datetime.fromtimestamp(now - 600, UTC).isoformat()
    for i, (text, _) in enumerate(planted("ES")):
        docs.append({"_id": f"canary-{i}", "@timestamp": recent,
                     "service": "order-service", "level": "ERROR", "message": text,
                     "environment": "test"})  # fmt: skip
    saved = (prom_fixture.DATA, prom_fixture.RULES)
    prom_fixture.DATA, prom_fixture.RULES = data, rules
    try:
        with (
            prom_fixture.run_prometheus(tmp / "p") as prom,
            InstanceLogs(objects, current, previous) as k8s,
            es_server({"logs-test-2026.10.21": docs}) as es,
        ):
            prom_fixture.DATA, prom_fixture.RULES = saved
            config = write_config(tmp, prom.url, k8s.url, es.url)
            snap, diag = tmp / "snap.tar.gz", tmp / "diag.tar.gz"
            s = opsmate(config, "snapshot", "--env", "test", "--namespace", "shop",
                        "--service", "order-service", "--since", "1h",
                        "--out", str(snap))  # fmt: skip
            assert s.returncode == 0, s.stderr[-3000:]
            d = opsmate(config, "diagnose", QUESTION, "--json", "--save-bundle", str(diag))
            assert d.returncode in (0, 1), d.stderr[-3000:]
            yield tmp
    finally:
        prom_fixture.DATA, prom_fixture.RULES = saved


@pytest.mark.parametrize("name", ["snap.tar.gz", "diag.tar.gz"])
def test_no_planted_secret_in_any_file_of_the_bundle(env: Path, name: str) -> None:
    files = bundle_files(env / name)
    text = "\n".join(data.decode("utf-8", "replace") for data in files.values())
    leaked = [
        (tag, c) for tag in TAGS for _, canaries in planted(tag) for c in canaries if c in text
    ]
    assert not leaked
    if name == "snap.tar.gz":  # everything planted was captured, masked
        seen = {tag for tag in TAGS if f"seen-{tag}" in text}
        assert seen >= {"ES", "EV", "AN", "PO"}, seen
        # the Prometheus plants are masked whole (marker included): their series and alert
        # are in the bundle, with as many label values / annotations as were planted
        metrics = yaml.safe_load(files["metrics.yaml"])
        dsn = next(m for m in metrics if m["query"].startswith("app_dsn_info"))
        assert len(dsn["result"]["result"]) == len(planted("PL"))
        alerts = yaml.safe_load(files["alerts.yaml"])
        firing = next(a for a in alerts if a["labels"]["alertname"] == "FixtureAlwaysFiring")
        assert firing["annotations"]["summary"]
        assert "db-creds" in text  # the Secret's metadata only; its data never left the server
    assert "[REDACTED]" in text
