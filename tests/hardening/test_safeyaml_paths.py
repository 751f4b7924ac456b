"""The one-pass build of plain YAML documents (safeyaml) gives what PyYAML's safe
constructor gives after the full check, data and errors alike, and the cached tag
resolution resolves as PyYAML does."""

from __future__ import annotations

import datetime as dt
import pickle
from typing import Any

import pytest
import yaml

from opsmate import safeyaml
from opsmate.safeyaml import Limits, SafeYAMLError, iter_documents

DOCS = [
    "a: 1\nb: [x, y, {c: d}]\n",
    "kind: Pod\nmetadata: {name: web-1, labels: {app: web}}\nspec:\n  containers:\n"
    "  - name: c\n    image: nginx:1.25\n    ports: [{containerPort: 80}]\n",
    "a: yes\nb: no\nc: ~\nd: 1.5\ne: 0x1F\nf: 2026-01-02\ng: 2026-01-02T03:04:05Z\n"
    "h: !!binary aGVsbG8=\ni: '1'\nj: \"true\"\nk: .inf\nl: 1_000\nm: 017\nn: 0o17\n",
    "1: a\n1.0: b\ntrue: c\nnull: d\n2026-01-01: e\n",
    "key: value\nkey: other\n",
    "a: &x [1, 2]\nb: *x\n",
    "a: &s str\nb: *s\n",
    "&a [*a]",
    "<<: {a: 1}\nb: 2\n",
    "x:\n  <<: [{a: 1}, {b: 2}]\n  c: 3\n",
    "a: !!set {x, y}\n",
    "- !!omap [{a: 1}]\n- !!pairs [{a: 1}]\n",
    "a: !!str {b: 1}\n",
    "a: !!float 1\nb: !!null ''\nc: !!bool yes\nd: !!str 1\ne: !!int '7'\n",
    "? !!value x\n: y\n",
    "a: !!value x\n",
    "? [1]\n: x\n",
    "? {a: 1}\n: x\n",
    "a: !custom 1\n",
    "a: 2026-13-45\n",
    "a: !!int x\n",
    "x: " + "[" * 70 + "]" * 70,
    "x: " + "[" * 63 + "1" + "]" * 63,
    "x: " + "[" * 62 + "1" + "]" * 62,
    "a: {b: }\n---\n---\n- a\n- - b\n  - {c: d}\n",
    "a: [1, *b]\n",
    "bad: [\n",
    "",
    "a: &a {b: 1}\nc: *a\nd: *a\n",
    "x: &x [&y [1], *y]\n",
]
LIMITS = [Limits(), Limits(aliases=False), Limits(max_depth=3), Limits(max_alias_items=1)]


def _run(text: str, limits: Limits) -> Any:
    try:
        return [
            (data, None if node is None else (node.start_mark.line, node.end_mark.line))
            for data, node in iter_documents(text, limits)
        ]
    except yaml.YAMLError as exc:
        return (type(exc).__name__, str(exc))


def _general_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def give_up(*_: Any) -> Any:
        raise safeyaml._NotPlain

    monkeypatch.setattr(safeyaml, "_build_plain", give_up)


@pytest.mark.parametrize("limits", LIMITS, ids=repr)
@pytest.mark.parametrize("text", DOCS)
def test_one_pass_build_is_the_general_path(
    text: str, limits: Limits, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _run(text, limits)
    with monkeypatch.context() as m:
        _general_only(m)
        general = _run(text, limits)
    assert fast == general
    assert [type(x) for x in pickle.loads(pickle.dumps(fast))] == [type(x) for x in general]


def test_plain_documents_take_the_one_pass_build(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    build = safeyaml._build_plain

    def counted(*args: Any) -> Any:
        out = build(*args)
        seen.append(out)
        return out

    monkeypatch.setattr(safeyaml, "_build_plain", counted)
    docs = list(iter_documents("a: [1, {b: 2026-01-02}]\n---\nc: d\n"))
    assert [d for d, _ in docs] == [{"a": [1, {"b": dt.date(2026, 1, 2)}]}, {"c": "d"}]
    assert seen == [d for d, _ in docs]


def test_a_bad_scalar_reports_its_line_as_before() -> None:
    with pytest.raises(SafeYAMLError) as err:
        list(iter_documents("a: 1\nb: 2026-13-45\n"))
    assert "cannot build a value" in str(err.value)


@pytest.mark.parametrize(
    "value",
    ["yes", "No", "~", "null", "", "1", "-1.5e3", "0x1F", "2026-01-02", "12:30", "web", "=",
     "<<", ".NaN", "1_0", "0b101", "on", "y"],
)  # fmt: skip
def test_cached_resolution_is_pyyaml_resolution(value: str) -> None:
    for _ in range(2):  # the second time from the cache
        for implicit in ((True, False), (False, True), (False, False)):
            ours = safeyaml._CLoader or safeyaml._DepthLimitedLoader
            loader = ours("")
            plain = yaml.SafeLoader("")
            try:
                got = loader.resolve(yaml.ScalarNode, value, implicit)
                assert got == plain.resolve(yaml.ScalarNode, value, implicit)
            finally:
                loader.dispose()
                plain.dispose()
