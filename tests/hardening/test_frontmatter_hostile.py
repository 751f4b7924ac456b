"""Hostile runbook front matter: a 5,000-deep document and a few-hundred-byte alias bomb are
rejected for that one file (named, with its line) and every other runbook is indexed
and published."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hardening_util import assert_no_traceback, run_cli

from opsmate.errors import InputError
from opsmate.knowledge.frontmatter import parse_front_matter

BOMB = """a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""  # ~350 bytes that walk as 9**9 = 387 million strings


def test_hostile_front_matter_rejects_one_file_and_indexes_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "runbooks"
    root.mkdir()
    (root / "good.md").write_text(
        "---\ntitle: Good\nservice: order-service\n---\n# Good\n\nPoolTimeout fix.\n",
        encoding="utf-8",
    )
    (root / "plain.md").write_text("# Plain\n\nDisk full on the node.\n", encoding="utf-8")
    (root / "deep.md").write_text(
        "---\ntitle: deep\nx: " + "[" * 5000 + "]" * 5000 + "\n---\n# Deep\n\ntext\n",
        encoding="utf-8",
    )
    (root / "bomb.md").write_text(f"---\n{BOMB}---\n# Bomb\n\ntext\n", encoding="utf-8")
    (root / "deep-block.md").write_text(
        "---\nx:\n" + "".join("  " * i + "y:\n" for i in range(1, 40)) + "---\n# D\n\nt\n",
        encoding="utf-8",
    )
    idx = tmp_path / "idx"
    started = time.monotonic()
    code, out, err = run_cli(
        ["index", str(root), "--index-dir", str(idx), "--embedding", "none", "--json"], capsys
    )
    assert time.monotonic() - started < 10.0
    assert code == 2  # some files rejected (commands/index.py), the rest published
    summary = json.loads(out)
    assert summary["documents"] == 2
    rejected = {e["source"]: e["message"] for e in summary["errors"]}
    assert set(rejected) == {"deep.md", "bomb.md", "deep-block.md"}
    assert rejected["bomb.md"].startswith("bomb.md:") and "alias" in rejected["bomb.md"]
    assert rejected["deep.md"].startswith("deep.md:3:") and "nest" in rejected["deep.md"]
    assert "nested deeper than" in rejected["deep-block.md"]
    assert_no_traceback(err)
    code, out, _ = run_cli(["search", "PoolTimeout", "--index-dir", str(idx), "--json"], capsys)
    assert code == 0 and json.loads(out)["hits"][0]["source"] == "good.md"


def test_aliases_are_refused_in_front_matter_even_small_ones() -> None:
    with pytest.raises(InputError) as info:
        parse_front_matter("service: &s order-service\nowner: *s\n", "r.md")
    assert str(info.value).startswith("r.md:2:") and "alias" in str(info.value)


def test_a_bomb_costs_milliseconds() -> None:
    started = time.monotonic()
    with pytest.raises(InputError):
        parse_front_matter(BOMB, "bomb.md")
    assert time.monotonic() - started < 1.0
