"""Links under a runbook folder: a symlink loop (a folder linking to itself or to a folder
above it, files linking round in a circle) or a broken link is skipped with a warning that
names it, and the rest is indexed and searchable (exit 0: a warning is no error). A
linked folder of runbooks is followed, once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hardening_util import assert_no_traceback, run_cli

from opsmate.knowledge.sources import discover


def _tree(tmp_path: Path) -> Path:
    rb = tmp_path / "runbooks"
    (rb / "team").mkdir(parents=True)
    shared = tmp_path / "shared"
    shared.mkdir()
    (rb / "pool.md").write_text("# Pool\n\n## Check\nPoolTimeout: the pool is full.\n", "utf-8")
    (rb / "team" / "disk.md").write_text("# Disk\n\n## Check\nDiskPressure on a node.\n", "utf-8")
    (shared / "dns.md").write_text("# DNS\n\n## Check\nNXDOMAIN from CoreDNS.\n", "utf-8")
    (rb / "team" / "up").symlink_to("..", target_is_directory=True)  # loop to a parent
    (rb / "team" / "self").symlink_to(".", target_is_directory=True)  # loop to itself
    (rb / "me.md").symlink_to("me.md")  # a file linking to itself
    (rb / "a.md").symlink_to("b.md")
    (rb / "b.md").symlink_to("a.md")  # round in a circle
    (rb / "gone.md").symlink_to("nowhere.md")  # broken
    (rb / "shared").symlink_to(shared, target_is_directory=True)  # followed
    (rb / "shared-again").symlink_to(shared, target_is_directory=True)  # followed once
    return rb


def test_discover_skips_loops_with_warnings(tmp_path: Path) -> None:
    rb = _tree(tmp_path)
    warnings: list[str] = []
    files, errors = discover([rb], warnings)
    assert sorted(f.source for f in files) == ["pool.md", "shared/dns.md", "team/disk.md"]
    assert errors == []
    text = "\n".join(warnings)
    for name in ("team/up", "team/self", "me.md", "a.md", "b.md"):
        assert f"{name}: a symlink loop" in text, text
    assert "gone.md: a broken link" in text
    assert "shared-again: links to" in text and "already indexed" in text


def test_index_warns_and_indexes_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rb = _tree(tmp_path)
    idx = tmp_path / "idx"
    code, out, err = run_cli(
        ["index", str(rb), "--index-dir", str(idx), "--embedding", "none", "--json"], capsys
    )
    assert code == 0, err
    summary = json.loads(out)
    assert summary["documents"] == 3 and summary["errors"] == []
    assert any("team/up: a symlink loop" in w for w in summary["warnings"])
    assert "opsmate: warning:" in err and "symlink loop" in err
    assert_no_traceback(err)
    code, out, err = run_cli(["search", "NXDOMAIN", "--index-dir", str(idx), "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["hits"][0]["source"] == "shared/dns.md"


def test_a_folder_of_nothing_but_a_loop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rb = tmp_path / "runbooks"
    rb.mkdir()
    (rb / "loop").symlink_to(".", target_is_directory=True)
    code, _out, err = run_cli(["index", str(rb), "--index-dir", str(tmp_path / "i")], capsys)
    assert code == 2
    assert "loop: a symlink loop" in err and "no Markdown files" in err
    assert_no_traceback(err)
