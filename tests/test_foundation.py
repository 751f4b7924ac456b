"""Foundation: config strictness, error tree, time parsing, CLI entry."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from opsmate.config import load_settings
from opsmate.errors import ConfigError, ExitCode
from opsmate.timeparse import parse_duration, parse_time


def test_unknown_key_is_named(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("environments:\n  test:\n    promethues: {url: 'http://x'}\n")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg)
    assert "environments.test.promethues" in str(err.value)
    assert err.value.exit_code == ExitCode.USAGE


def test_yaml_error_names_line(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("model: none\nruns: [\n")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg)
    assert f"{cfg}:" in str(err.value)


def test_env_overrides_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("budget: {max_steps: 5}\ndefault_environment: test\n")
    monkeypatch.setenv("OPSMATE_BUDGET__MAX_STEPS", "9")
    s = load_settings(cfg)
    assert s.budget.max_steps == 9
    assert s.default_environment == "test"


def test_missing_explicit_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "nope.yaml")


def test_example_config_is_valid(repo_root: Path) -> None:
    s = load_settings(repo_root / "configs" / "example.yaml")
    assert "test" in s.environments


def test_parse_time_relative_and_absolute() -> None:
    now = datetime(2026, 10, 21, 2, 0, tzinfo=UTC)
    assert parse_time("-30m", now) == now - timedelta(minutes=30)
    assert parse_time("now", now) == now
    assert parse_time("2026-10-21T10:00:00+08:00") == now
    assert parse_time("2026-10-21T02:00:00Z") == now
    assert parse_duration("1.5h") == timedelta(minutes=90)
    with pytest.raises(ValueError):
        parse_time("yesterday-ish", now)


def test_help_is_fast_and_light() -> None:
    code = (
        "import sys; from opsmate.cli import app; "
        "heavy = [m for m in ('chromadb','llama_cpp','kubernetes','elasticsearch','textual',"
        "'onnxruntime','jieba') if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_usage_error_exit_code() -> None:
    exe = Path(sys.executable).parent / "opsmate"
    r = subprocess.run([str(exe), "search", "--bogus"], capture_output=True, text=True)
    assert r.returncode == 2
    assert "No such option" in r.stderr
