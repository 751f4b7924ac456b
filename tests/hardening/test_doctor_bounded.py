"""``opsmate doctor`` is bounded: each probe has a total deadline of 5 s, the probes run
at once, and the whole doctor ends in under 10 s whatever the servers do (a slow drip
of bytes, a port that accepts and stays silent, a port where connect itself hangs)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hardening_util import blackhole_port, drip_server, run_cli, syn_blackhole_port

from opsmate.health import Probes


def _kubeconfig(tmp_path: Path, port: int) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: hole\n"
        f"clusters:\n- name: hole\n  cluster: {{server: 'http://127.0.0.1:{port}'}}\n"
        "users:\n- name: u\n  user: {token: t}\n"
        "contexts:\n- name: hole\n  context: {cluster: hole, user: u}\n",
        encoding="utf-8",
    )
    return path


def test_doctor_ends_within_10_s_against_hostile_servers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with drip_server() as drip, blackhole_port() as silent, syn_blackhole_port() as hole:
        cfg = tmp_path / "config.yaml"
        cfg.write_text(
            f"model: 'openai:{drip}/v1#m'\n"
            "environments:\n"
            "  test:\n"
            f"    prometheus: {{url: '{drip}', timeout: 60}}\n"
            f"    elasticsearch: {{url: 'http://127.0.0.1:{hole}', timeout: 60}}\n"
            f"    kubernetes: {{kubeconfig: '{_kubeconfig(tmp_path, silent)}', timeout: 60}}\n"
            "embedding: {backend: none}\n",
            encoding="utf-8",
        )
        started = time.monotonic()
        code, out, err = run_cli(["--config", str(cfg), "doctor", "--json"], capsys)
        elapsed = time.monotonic() - started
    assert elapsed < 10.0, f"doctor took {elapsed:.1f} s"
    checks = {c["check"]: c for c in json.loads(out)}
    for name in ("prometheus[test]", "elasticsearch[test]", "kubernetes[test]", "model"):
        assert checks[name]["status"] == "fail", checks[name]
    assert code == 3  # a source unreachable (contracts: doctor exit codes)
    assert "Traceback" not in err


def test_a_probe_that_never_returns_is_a_failed_check_after_its_deadline() -> None:
    probes = Probes(deadline_s=0.3)
    gate = __import__("threading").Event()
    probes.start("stuck[test]", "check it", lambda: gate.wait(30))
    started = time.monotonic()
    (check,) = probes.results()
    gate.set()
    assert time.monotonic() - started < 1.0
    assert check.status == "fail" and check.unreachable and "0.3 s" in check.detail


def test_kubernetes_probe_makes_one_attempt_not_four(tmp_path: Path) -> None:
    """retries = 0 must be set before the client is built (a blackholed API server cost
    21 s: four attempts of 5 s)."""
    from opsmate.health import REQUEST_TIMEOUT, check_kubernetes

    with blackhole_port() as silent:
        started = time.monotonic()
        check = check_kubernetes("test", None, str(_kubeconfig(tmp_path, silent)), 60.0)
        elapsed = time.monotonic() - started
    assert check.status == "fail" and check.unreachable
    assert elapsed < REQUEST_TIMEOUT + 2.0, f"{elapsed:.1f} s: retried?"
