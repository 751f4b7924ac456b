"""safe_text / dumps_json / fences: what is removed, what is kept."""

from __future__ import annotations

import json

import pytest

from opsmate.textsafe import dumps_json, has_control, neutralise_fences, safe_obj, safe_text


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("\x1b[31mERROR\x1b[0m pool exhausted", "ERROR pool exhausted"),
        ("line one\r\nline two", "line one\nline two"),
        ("progress 10%\rprogress 100%", "progress 10%progress 100%"),
        ("a\tb\nc", "a\tb\nc"),  # tab and newline stay
        ("数据库连接超时 🚨 café", "数据库连接超时 🚨 café"),  # text is text
        ("open \x1b]0;title-no-end\nnext line", "open \nnext line"),  # unterminated OSC
        ("x\x1b", "x"),  # a lone ESC at the end
        ("a\x00b\x7fc\x85d", "abcd"),  # NUL, DEL, C1 NEL
        ("\u202eevil\u202c name \u2066iso\u2069", "evil name iso"),
        ("\x1bPq#0;2;0;0;0\x1b\\sixel", "sixel"),  # DCS
        ("\x1b7saved\x1b8", "saved"),  # two-byte ESC sequences
    ],
)
def test_safe_text(raw: str, clean: str) -> None:
    assert safe_text(raw) == clean
    assert not has_control(safe_text(raw))


def test_clean_text_is_returned_as_is() -> None:
    text = "nothing to do here " * 100
    assert safe_text(text) is text


def test_safe_obj_cleans_keys_and_values_without_changing_the_input() -> None:
    obj = {"k\x1b[2J": ["v\x07", ("t\x9b1m",)], "n": 3}
    assert safe_obj(obj) == {"k": ["v", ("t",)], "n": 3}
    assert "k\x1b[2J" in obj


def test_dumps_json_escapes_what_json_leaves_raw() -> None:
    text = dumps_json({"m": "a\x9bb\u2028c\u202ed"})
    assert text == '{"m": "a\\u009bb\\u2028c\\u202ed"}'
    assert json.loads(text) == {"m": "a\x9bb\u2028c\u202ed"}
    assert dumps_json({"z": "中文"}) == '{"z": "中文"}'  # UTF-8, not \\u escapes


def test_neutralise_fences_keeps_short_runs() -> None:
    assert neutralise_fences("a << b >> c -> d") == "a << b >> c -> d"
    assert neutralise_fences("<<<<DATA x DATA>>>") == "<<DATA x DATA>>"
