"""The integration environment of the capture tests: a REAL Prometheus over the backfilled
fixture TSDB, and the Kubernetes API and Elasticsearch protocol fixtures of tests/sources,
configured as environment ``test`` in a config file (``model: none``); and, for the tests
of one source kind at a time (``servers``), also the Loki protocol fixture and a REAL
Alertmanager holding two firing alerts, each configurable alone (:func:`config_for`)."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

LogMap = dict[tuple[str, str, str], list[tuple[datetime, str]]]

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sources"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "alerts"))

from am_fixture import AmServer, post_alerts, run_alertmanager  # noqa: E402
from es_fixture import ESFixture, es_server, sample_logs  # noqa: E402
from k8s_fixture import ORDER_PODS, K8sFixture, sample_objects, write_kubeconfig  # noqa: E402
from loki_fixture import LokiFixture  # noqa: E402
from prom_fixture import PromServer, run_prometheus  # noqa: E402

if TYPE_CHECKING:
    from opsmate.config import Settings

QUESTION = "order-service returns 500 errors after the release at 2026-10-21T10:00:00+08:00"
RELEASE = datetime(2026, 10, 21, 2, 0, tzinfo=UTC)


class InstanceLogs(K8sFixture):
    """The API-server fixture, with the ``previous`` parameter of the log subresource
    honoured as a real kubelet does: the log of the container's previous instance, which
    ended at its ``lastState.terminated.finishedAt``."""

    def __init__(self, objects: list[dict[str, Any]], current: LogMap, previous: LogMap) -> None:
        self.previous = previous
        super().__init__(objects, current)

    def _log(self, ns: str, name: str, q: dict[str, str]) -> str:
        if q.get("previous") != "true":
            return super()._log(ns, name, q)
        current, self.logs = self.logs, self.previous
        try:
            return super()._log(ns, name, q)
        finally:
            self.logs = current


def pod_logs() -> tuple[LogMap, LogMap]:
    """(current, previous) container logs of order-service's first pod, consistent with the
    fixture objects: the previous instance ran 02:02-02:04Z and died on PoolTimeouts."""
    previous, current = [], []
    for i in range(120):
        t = RELEASE + timedelta(minutes=2, seconds=i)
        msg = (
            "ERROR PoolTimeout: could not acquire connection"
            if i % 10 == 9
            else f"INFO GET /api/orders/{i} 200"
        )
        previous.append((t, f"{t.isoformat()} {msg}"))
    for i in range(60):
        t = RELEASE + timedelta(minutes=4, seconds=5 + i)
        current.append((t, f"{t.isoformat()} INFO GET /api/orders/{500 + i} 200"))
    key = ("shop", ORDER_PODS[0], "app")
    return {key: current}, {key: previous}


@dataclass
class LiveEnv:
    """The running sources and a config file pointing at them."""

    prom: PromServer
    k8s: K8sFixture
    es: ESFixture
    config: Path
    tmp: Path


@pytest.fixture(scope="session")
def prom(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PromServer]:
    with run_prometheus(tmp_path_factory.mktemp("prometheus")) as server:
        yield server


def write_config(tmp: Path, prom_url: str, k8s_url: str, es_url: str) -> Path:
    kube = write_kubeconfig(tmp / "kubeconfig", {"fx": k8s_url}, current="fx")
    cfg = {
        "model": "none",
        "default_environment": "test",
        "environments": {
            "test": {
                "prometheus": {"url": prom_url, "timeout": 10},
                "elasticsearch": {"url": es_url, "index": "logs-test-*", "timeout": 10},
                "kubernetes": {"kubeconfig": str(kube), "context": "fx", "namespaces": ["shop"],
                               "timeout": 10},
            }
        },
    }  # fmt: skip
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def live(prom: PromServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveEnv]:
    tmp = tmp_path_factory.mktemp("live")
    with InstanceLogs(sample_objects(), *pod_logs()) as k8s, es_server() as es:
        config = write_config(tmp, prom.url, k8s.url, es.url)
        yield LiveEnv(prom, k8s, es, config, tmp)


# --------------------------------------------------------------------------- one kind each

FIRING = [
    {
        "labels": {"alertname": "OrderServiceErrors", "severity": "critical",
                   "service": "order-service", "namespace": "shop"},
        "annotations": {"summary": "order-service answers 5xx on 12% of requests"},
    },
    {
        "labels": {"alertname": "OrderDbPoolSaturated", "severity": "warning",
                   "service": "order-service", "namespace": "shop"},
        "annotations": {"summary": "orders-db connection pool at 20 of 20"},
    },
]  # fmt: skip


@dataclass
class Servers:
    """Every kind of source running at once (each test configures the ones it uses)."""

    prom: PromServer
    es: ESFixture
    loki: LokiFixture
    k8s: InstanceLogs
    am: AmServer
    kubeconfig: Path


@pytest.fixture(scope="module")
def servers(prom: PromServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """The real Prometheus and Alertmanager (two firing alerts posted) and the protocol
    fixtures of Elasticsearch, Loki (the ``test`` records) and the Kubernetes API."""
    tmp = tmp_path_factory.mktemp("kinds")
    records = [r for r in sample_logs() if r.get("environment") in ("test", None)]
    with (
        ESFixture({"logs-test-2026.10.21": sample_logs()}) as es,
        LokiFixture(
            records, label_fields={"service": "app", "namespace": "namespace", "pod": "pod"}
        ) as loki,  # fmt: skip
        InstanceLogs(sample_objects(), *pod_logs()) as k8s,
        run_alertmanager(tmp / "am") as am,
    ):
        post_alerts(am.url, FIRING)
        kube = write_kubeconfig(tmp / "kubeconfig", {"fx": k8s.url}, current="fx")
        yield Servers(prom, es, loki, k8s, am, kube)


def block(kind: str, s: Servers) -> dict[str, Any]:
    """The ``environments.test`` config of one source kind alone."""
    return {
        "prometheus": {"prometheus": {"url": s.prom.url, "timeout": 10}},
        "elasticsearch": {"elasticsearch": {"url": s.es.url, "index": "logs-test-*",
                                            "timeout": 10}},
        "loki": {"loki": {"url": s.loki.url, "timeout": 10}},
        "kubernetes": {"kubernetes": {"kubeconfig": str(s.kubeconfig), "context": "fx",
                                      "namespaces": ["shop"], "timeout": 10}},
        "alertmanager": {"alertmanager": {"url": s.am.url, "timeout": 10}},
    }[kind]  # fmt: skip


def config_for(tmp: Path, *kinds: str, s: Servers, **extra: Any) -> Path:
    """A config file whose environment ``test`` has the sources ``kinds`` alone (each
    block may be amended: ``kubernetes={"namespaces": []}``)."""
    env: dict[str, Any] = {}
    for kind in kinds:
        blk = block(kind, s)
        blk[kind].update(extra.get(kind, {}))
        env.update(blk)
    cfg = {"model": "none", "default_environment": "test", "environments": {"test": env}}
    path = tmp / f"{'-'.join(kinds)}.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def settings_for(kind: str, s: Servers, tmp: Path) -> Settings:
    """The settings of :func:`config_for` one source kind."""
    from opsmate.config import load_settings

    return load_settings(config_for(tmp, kind, s=s))


OPSMATE = Path(sys.executable).parent / "opsmate"


def opsmate(
    config: Path | None, *args: str, timeout: int = 240
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI (user dirs isolated by the autouse fixture's environment)."""
    cmd = [str(OPSMATE), *(["--config", str(config)] if config else []), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def since_incident() -> str:
    """A ``--since`` reaching back to the fixtures' incident (2026-10-21 00:00Z)."""
    hours = (datetime.now(UTC) - datetime(2026, 10, 21, tzinfo=UTC)).total_seconds() / 3600
    return f"{int(hours) + 2}h"


def bundle_files(path: Path) -> dict[str, bytes]:
    """Every file of a written bundle archive, by name."""
    with tarfile.open(path) as tar:
        return {
            m.name: tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }


def same_cause(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Same status and root cause statement, evidence ids aside (``(E3, R1)``)."""

    def norm(rc: dict[str, Any] | None) -> str | None:
        return None if rc is None else re.sub(r"\s*\((?:[ER]\d+(?:, )?)+\)", "", rc["statement"])

    return a["status"] == b["status"] and norm(a["root_cause"]) == norm(b["root_cause"])


def same_cause_found(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """The same failure mode and cause (the statement after "because", its first clause up
    to where either was cut), whatever symptom each names first."""

    def cause(rc: dict[str, Any] | None) -> tuple[Any, str] | None:
        if rc is None:
            return None
        text = re.sub(r"\s*\((?:[ER]\d+(?:, )?)+\)", "", rc["statement"])
        return rc.get("failure_mode"), text.split(" because ", 1)[-1].split("…")[0]

    ca, cb = cause(a["root_cause"]), cause(b["root_cause"])
    if ca is None or cb is None:
        return ca == cb
    n = min(len(ca[1]), len(cb[1]))
    return ca[0] == cb[0] and ca[1][:n] == cb[1][:n]
