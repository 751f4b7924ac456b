"""Configuration edges: a password written into a configured URL (``doctor`` warns, names
the key, says how to move it to the keyring, and never prints the password), and
``--config /dev/null`` (an empty configuration, as an empty file would be)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hardening_util import assert_no_traceback, run_cli

from opsmate.commands.doctor import check_config_passwords
from opsmate.config import Settings, load_settings

CONFIG = """\
model: "openai:https://llm:LlmPw0rd@llm.example/v1#qwen"
environments:
  test:
    prometheus: {url: "http://admin:Pr0mPw0rd@127.0.0.1:9"}
    elasticsearch: {url: "https://elastic:E1asticPw@127.0.0.1:9", index: "logs-*"}
    alertmanager: {url: "http://127.0.0.1:9"}
embedding: {backend: none, url: "https://emb:EmbPw0rd@emb.example/v1"}
"""


def test_doctor_warns_about_passwords_in_urls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(CONFIG, encoding="utf-8")
    _code, out, err = run_cli(["doctor", "--config", str(cfg), "--json"], capsys)
    assert_no_traceback(err)
    checks = {c["check"]: c for c in json.loads(out)}
    prom = checks["config environments.test.prometheus.url"]
    assert prom["status"] == "warn" and "carries a password" in prom["detail"]
    assert "opsmate auth set prometheus --env test --username admin" in prom["fix"]
    assert "http://127.0.0.1:9" in prom["fix"]  # the URL to put back, without user:pass@
    es = checks["config environments.test.elasticsearch.url"]
    assert "opsmate auth set elasticsearch --env test --username elastic" in es["fix"]
    for key in ("model", "embedding.url"):
        assert checks[f"config {key}"]["status"] == "warn"
        assert "keyring" in checks[f"config {key}"]["fix"]
    assert "config environments.test.alertmanager.url" not in checks  # no password there
    for secret in ("LlmPw0rd", "Pr0mPw0rd", "E1asticPw", "EmbPw0rd"):
        assert secret not in out + err


def test_no_warning_without_a_password() -> None:
    settings = Settings(
        environments={"test": {"prometheus": {"url": "http://user@127.0.0.1:9090"}}},
        model="openai:http://127.0.0.1:8080/v1#m",
    )
    assert check_config_passwords(settings) == []


def test_config_dev_null_is_an_empty_config(capsys: pytest.CaptureFixture[str]) -> None:
    assert load_settings("/dev/null") == Settings()
    code, out, err = run_cli(["--config", "/dev/null", "tool", "--list", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)  # the tools are listed
    code, _out, err = run_cli(["--config", "/dev/zero", "tool", "--list"], capsys)
    assert code == 2 and "/dev/zero" in err  # any other device is still no config file
