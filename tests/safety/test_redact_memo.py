"""The redactor remembers what it made of a string and of a dict key: a string seen again,
in any later call, is masked (and counted) exactly as the first time; a remembered
answer never crosses to a redactor with other patterns, nor changes a value's type."""

from __future__ import annotations

import enum
from typing import Any

from opsmate.tools import redact
from opsmate.tools.redact import MASK, Redactor

SECRETS = [
    "postgres://orders:S3cret!x@db.shop:5432/orders",
    "Authorization: Bearer abcdef1234567890",
    "DB_PASSWORD=hunter2",
    "token: ghp_0123456789abcdefghijABCDEFGHIJ0123",
]


class Word(enum.StrEnum):
    PLAIN = "running"
    SECRET = "password=hunter2hunter2"


def _pod(i: int) -> dict[str, Any]:
    return {
        "name": f"web-{i}",
        "namespace": "shop",
        "phase": "Running",
        "env": [{"name": "DB_PASSWORD", "value": "hunter2"}, {"name": "MODE", "value": "prod"}],
        "args": [SECRETS[i % len(SECRETS)], "--port=8080"],
        "password": "x" * (i + 1),
        "SECRET_KEY_BASE": "He8fG2kL9mQ4rT7vX1zB3nC" if i % 2 else "short",
    }


def test_a_string_seen_again_is_masked_and_counted_again() -> None:
    r = Redactor()
    first = [r.redact_text(s) for s in SECRETS]
    again = [r.redact_text(s) for s in SECRETS]
    assert first == again
    assert all(MASK in text and n >= 1 for text, n in again)
    fresh = Redactor()
    objs = [_pod(i) for i in range(12)]
    once = [fresh.redact_obj(o) for o in objs]
    twice = [fresh.redact_obj(o) for o in objs]
    assert once == twice == [Redactor().redact_obj(o) for o in objs]
    assert all(n >= 3 for _, n in twice)  # the env value, the arg, the password field


def test_memory_is_per_redactor() -> None:
    plain, custom = Redactor(), Redactor([r"acct-[0-9]+"])
    text = "moved acct-12345 to archive"
    assert plain.redact_text(text) == (text, 0)
    assert custom.redact_text(text) == (f"moved {MASK} to archive", 1)
    assert plain.redact_text(text) == (text, 0)


def test_types_are_kept_as_before() -> None:
    r = Redactor()
    for _ in range(2):
        text, n = r.redact_text(Word.PLAIN)
        assert type(text) is str and text == "running" and n == 0
        out, _ = r.redact_obj({"phase": Word.PLAIN, Word.PLAIN: "x", "note": Word.SECRET})
        assert type(out["phase"]) is Word
        assert [type(k) for k in out] == [str, Word, str]
        assert out["note"] == f"password={MASK}"
        out, _ = r.redact_obj({"running": 1})  # a plain key equal to a StrEnum seen before
        assert [type(k) for k in out] == [str]


def test_a_full_memory_starts_again(monkeypatch: Any) -> None:
    monkeypatch.setattr(redact, "_MEMO_SIZE", 3)
    r = Redactor()
    for i in range(10):
        assert r.redact_text(f"DB_PASSWORD=pw{i}") == (f"DB_PASSWORD={MASK}", 1)
    assert len(r._memo) <= 3
    monkeypatch.setattr(redact, "_MEMO_SIZE", 50_000)
    monkeypatch.setattr(redact, "_MEMO_CHARS", 100)
    for i in range(40):
        assert r.redact_text(f"token={i:08d}abcdefgh") == (f"token={MASK}", 1)
    assert r._memo_chars <= 100


def test_long_strings_are_scanned_not_remembered() -> None:
    r = Redactor()
    long = "x " * 2000 + "password=hunter2"
    assert r.redact_text(long) == ("x " * 2000 + f"password={MASK}", 1)
    assert long not in r._memo
