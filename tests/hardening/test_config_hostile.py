"""Hostile or clumsy configuration is exit 2 naming the key or variable: bad JSON in
``OPSMATE_`` variables, a 20,000-deep config, ``--config /dev/zero``, zero or negative
budgets and time-outs."""

from __future__ import annotations

from pathlib import Path

import pytest
from hardening_util import assert_no_traceback, run_cli

from opsmate.config import load_settings
from opsmate.errors import ConfigError


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str], *fragments: str) -> str:
    code, out, err = run_cli(argv, capsys)
    assert code == 2, (code, err)
    for fragment in fragments:
        assert fragment in err, err
    assert out == ""
    assert_no_traceback(err)
    return err


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("OPSMATE_ENVIRONMENTS", "{bad json"),
        ("OPSMATE_RUNBOOKS", "not-json"),
        ("OPSMATE_TOOLS__REDACT_PATTERNS", "also not json"),
        ("OPSMATE_ENVIRONMENTS", "[" * 20000),
    ],
)
def test_bad_json_in_a_variable_names_it(
    var: str, value: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(var, value)
    _fails(["tool", "--list"], capsys, var)


def test_20000_deep_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flow = tmp_path / "flow.yaml"
    flow.write_text("model: none\nretrieval: " + "[" * 20000 + "]" * 20000 + "\n")
    _fails(["--config", str(flow), "tool", "--list"], capsys, f"{flow}:2", "nest")
    block = tmp_path / "block.yaml"
    block.write_text("retrieval:\n" + "".join("  " * i + "x:\n" for i in range(1, 200)))
    _fails(["--config", str(block), "tool", "--list"], capsys, f"{block}:", "nested deeper")


def test_config_that_is_not_a_regular_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _fails(["--config", "/dev/zero", "tool", "--list"], capsys, "/dev/zero", "not a regular file")
    _fails(["--config", str(tmp_path), "tool", "--list"], capsys, "not a regular file")
    big = tmp_path / "big.yaml"
    big.write_bytes(b"# padding\n" * 200_000)
    _fails(["--config", str(big), "tool", "--list"], capsys, "larger than")


def test_alias_bomb_in_config_is_refused(tmp_path: Path) -> None:
    rows = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcdefg", "bcdefgh", strict=True):
        rows.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    cfg = tmp_path / "bomb.yaml"
    cfg.write_text("\n".join(rows) + "\n")
    with pytest.raises(ConfigError, match="alias"):
        load_settings(cfg)


@pytest.mark.parametrize(
    ("var", "value", "key"),
    [
        ("OPSMATE_BUDGET__MAX_STEPS", "-5", "budget.max_steps"),
        ("OPSMATE_BUDGET__MAX_STEPS", "0", "budget.max_steps"),
        ("OPSMATE_BUDGET__TIMEOUT_SECONDS", "0", "budget.timeout_seconds"),
        ("OPSMATE_TOOLS__MAX_PAGE_SIZE", "-1", "tools.max_page_size"),
        ("OPSMATE_TOOLS__TIMEOUT_SECONDS", "inf", "tools.timeout_seconds"),
    ],
)
def test_non_positive_budget_in_a_variable(
    var: str,
    value: str,
    key: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(var, value)
    _fails(["diagnose", "--demo", "--json"], capsys, var, key)


def test_negative_timeout_in_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("budget:\n  timeout_seconds: -1\nllm:\n  max_answer_tokens: 0\n")
    err = _fails(["--config", str(cfg), "diagnose", "--demo"], capsys, str(cfg))
    assert "budget.timeout_seconds" in err and "llm.max_answer_tokens" in err


def test_non_string_keys_are_a_config_error(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("1: x\n")
    with pytest.raises(ConfigError, match="unknown key 1"):
        load_settings(cfg)
