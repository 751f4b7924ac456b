"""Property-based tests: random bytes, JSON and YAML thrown at the bundle loader, the
config loader, the runbook front-matter parser and the time parser. Each either
succeeds or raises one of opsmate's own errors (:mod:`opsmate.errors`), which the CLI
turns into an exit code and a message; nothing else may escape (no ``ValueError``,
``RecursionError``, ``OverflowError``, ``TypeError`` ...).

Example counts are bounded so the file runs in well under 30 s on two cores.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from hardening_util import POOL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opsmate.config import load_settings
from opsmate.errors import OpsmateError
from opsmate.knowledge.frontmatter import parse_front_matter
from opsmate.timeparse import parse_duration, parse_time
from opsmate.tools.bundle import load_bundle

FAST = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# -- strategies ----------------------------------------------------------------------------
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
)
json_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
_YAML_ALPHABET = "abcdefnulrtsx019.-:[]{}&*!|>'\"#%@`?,~ \n\t<=+_/\\"
# pieces that trip YAML loaders: dates that are not dates, tags, anchors and aliases,
# flow brackets, huge numbers
_YAML_PIECES = [
    "[",
    "]",
    "{",
    "}",
    ": ",
    "\n",
    "- ",
    ", ",
    "&a ",
    "*a",
    "&b ",
    "*b",
    "? ",
    "2026-13-45",
    "2026-02-30T25:61:00",
    "1e999",
    "-.inf",
    "0x1F",
    "0o17",
    "!!binary ",
    "!!timestamp ",
    "!!python/object ",
    "!!set ",
    "!!omap ",
    "<<: ",
    "'",
    '"',
    "|\n  ",
    "key",
    "value",
    "~",
    "null",
    "yes",
]
yaml_like = st.text(alphabet=_YAML_ALPHABET, max_size=300) | st.lists(
    st.sampled_from(_YAML_PIECES), max_size=60
).map("".join)
deep_nesting = st.tuples(st.integers(min_value=1, max_value=6000), st.sampled_from("[{")).map(
    lambda t: "k: " + t[1] * t[0] + ("]" if t[1] == "[" else "}") * t[0] + "\n"
)
times = (
    st.text(max_size=40)
    | st.from_regex(r"\A[+-]?\d{1,25}(\.\d{1,5})?(ms|s|m|h|d|w)?\Z")
    | st.from_regex(r"\Anow ?[+-] ?\d{1,25}[smhdw]\Z")
    | st.from_regex(r"\A\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}([+-]\d{2}:\d{2}|Z)?\Z")
)


def _dump(value: Any, kind: str) -> str:
    if kind == "json":
        return json.dumps(value)
    return yaml.safe_dump(value, allow_unicode=True)


def _text_for(draw_kind: str, data: st.DataObject) -> bytes:
    if draw_kind == "bytes":
        return data.draw(st.binary(max_size=600))
    if draw_kind == "yaml_like":
        return data.draw(yaml_like).encode("utf-8")
    if draw_kind == "deep":
        return data.draw(deep_nesting).encode("utf-8")
    value = data.draw(json_values)
    return _dump(value, "json" if draw_kind == "json" else "yaml").encode("utf-8")


KINDS = st.sampled_from(["bytes", "yaml_like", "deep", "json", "yaml"])


def _only_project_errors(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except OpsmateError:
        return None


# -- the bundle loader ------------------------------------------------------------------------
@contextmanager
def _bundle_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "b"
        shutil.copytree(POOL, root)
        yield root


BUNDLE_FILES = ["bundle.yaml", "metrics.yaml", "logs.ndjson", "k8s/pods.yaml", "alerts.yaml"]


@FAST
@given(data=st.data(), target=st.sampled_from(BUNDLE_FILES), kind=KINDS)
def test_bundle_loader_raises_only_bundle_errors(
    data: st.DataObject, target: str, kind: str
) -> None:
    payload = _text_for(kind, data)
    with _bundle_dir() as root:
        (root / target).write_bytes(payload)
        _only_project_errors(load_bundle, root)


@FAST
@given(
    captured=times | json_values,
    window=json_values | st.fixed_dictionaries({"from": times, "to": times}),
    env=json_values,
    extra=st.dictionaries(st.sampled_from(["title", "cluster", "question"]), json_values),
)
def test_bundle_yaml_with_the_right_keys_and_random_values(
    captured: Any, window: Any, env: Any, extra: dict[str, Any]
) -> None:
    meta = {
        "format": "opsmate-bundle/v1",
        "captured_at": captured,
        "window": window,
        "environment": env,
        **extra,
    }
    with _bundle_dir() as root:
        (root / "bundle.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True))
        _only_project_errors(load_bundle, root)


@FAST
@given(record=st.dictionaries(st.text(max_size=10), json_values, max_size=5), ts=times | _scalars)
def test_log_records_with_random_fields(record: dict[str, Any], ts: Any) -> None:
    record = {"@timestamp": ts, "message": "m", **record}
    with _bundle_dir() as root:
        with (root / "logs.ndjson").open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
        _only_project_errors(load_bundle, root)


# -- the config loader -------------------------------------------------------------------------
@FAST
@given(data=st.data(), kind=KINDS)
def test_config_file_raises_only_config_errors(
    data: st.DataObject, kind: str, tmp_path: Path
) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_bytes(_text_for(kind, data))
    _only_project_errors(load_settings, cfg)


@FAST
@given(
    section=st.sampled_from(["budget", "tools", "llm", "retrieval", "embedding", "environments"]),
    value=json_values,
)
def test_config_sections_with_random_values(section: str, value: Any, tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml.safe_dump({section: value}, allow_unicode=True))
    _only_project_errors(load_settings, cfg)


_ENV_VARS = [
    "OPSMATE_ENVIRONMENTS",
    "OPSMATE_RUNBOOKS",
    "OPSMATE_MODEL",
    "OPSMATE_BUDGET__MAX_STEPS",
    "OPSMATE_BUDGET",
    "OPSMATE_TOOLS__REDACT_PATTERNS",
    "OPSMATE_LLM__TIMEOUT",
]


@FAST
@given(var=st.sampled_from(_ENV_VARS), data=st.data(), kind=KINDS)
def test_config_variables_raise_only_config_errors(
    var: str, data: st.DataObject, kind: str
) -> None:
    raw = _text_for(kind, data).decode("utf-8", "replace").replace("\0", "")
    old = os.environ.get(var)
    os.environ[var] = raw
    try:
        _only_project_errors(load_settings, None)
    finally:
        if old is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = old


# -- the front-matter parser ------------------------------------------------------------------
@FAST
@given(data=st.data(), kind=KINDS)
def test_front_matter_raises_only_input_errors(data: st.DataObject, kind: str) -> None:
    text = _text_for(kind, data).decode("utf-8", "replace")
    _only_project_errors(parse_front_matter, text, "r.md")


@FAST
@given(
    fields=st.dictionaries(
        st.sampled_from(
            ["title", "service", "environment", "status", "checks", "tags", "alerts", "version"]
        ),
        json_values,
    ),
    checks=st.lists(
        st.fixed_dictionaries(
            {"tool": st.sampled_from(["search_logs", "list_pods", "nope"]) | json_values},
            optional={"args": json_values, "name": json_values},
        ),
        max_size=3,
    ),
)
def test_front_matter_with_the_right_keys_and_random_values(
    fields: dict[str, Any], checks: list[dict[str, Any]]
) -> None:
    if checks:
        fields = {**fields, "checks": checks}
    _only_project_errors(parse_front_matter, yaml.safe_dump(fields, allow_unicode=True), "r.md")


# -- the time parser --------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(value=times | _scalars)
def test_time_parser_raises_only_its_own_error(value: Any) -> None:
    if isinstance(value, str):
        _only_project_errors(parse_duration, value)
    if value is not None and not isinstance(value, bool):
        _only_project_errors(parse_time, value)


@pytest.mark.parametrize("value", ["-999999999999d", "99999999999999999999", "1e20", "+inf"])
def test_known_nasty_times(value: str) -> None:
    with pytest.raises(OpsmateError):
        parse_time(value)


NASTY_YAML = [
    "start: 2026-13-45\n",  # a date that is not one: ValueError inside PyYAML
    "k: &a [*a]\n",  # a cycle
    "k: " + "[" * 5000 + "]" * 5000 + "\n",
    "k: !!binary 'not base64 ==='\n",
    "k: !!python/object:os.system x\n",
    "? [a, b]\n: c\n",  # an unhashable key
]


@pytest.mark.parametrize(
    "text", NASTY_YAML, ids=["bad-date", "cycle", "deep", "bad-binary", "python-tag", "key"]
)
def test_known_nasty_yaml_everywhere(text: str, tmp_path: Path) -> None:
    for target in ("bundle.yaml", "metrics.yaml", "k8s/pods.yaml", "alerts.yaml"):
        with _bundle_dir() as root:
            (root / target).write_text(text, encoding="utf-8")
            _only_project_errors(load_bundle, root)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text, encoding="utf-8")
    _only_project_errors(load_settings, cfg)
    _only_project_errors(parse_front_matter, text, "r.md")
