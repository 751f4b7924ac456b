"""The runbook index directory under hostile conditions: a query with undecodable bytes,
``--index-dir`` that is a file, lies under /proc or sits on a read-only mount (which
must still be searchable), and a disk that fills up (ENOSPC) or a file-size limit
(EFBIG) while indexing. Every case is exit 2 with a message, never a traceback."""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy
import pytest
from hardening_util import OPSMATE, assert_no_traceback, run_cli

RUNBOOK = """---
title: DB pool
service: order-service
---
# DB pool exhaustion

## Check
PoolTimeout means the connection pool is exhausted; compare in-use with max.
"""


def _runbooks(tmp_path: Path, n: int = 3) -> Path:
    root = tmp_path / "runbooks"
    root.mkdir()
    (root / "pool.md").write_text(RUNBOOK, encoding="utf-8")
    for i in range(n - 1):
        (root / f"r{i}.md").write_text(
            f"# Runbook {i}\n\n## Steps\nDisk full on node {i}: clean /var/log.\n", encoding="utf-8"
        )
    return root


def _index(root: Path, idx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run_cli(
        ["index", str(root), "--index-dir", str(idx), "--embedding", "none", "--json"], capsys
    )
    assert code == 0, err


def test_undecodable_bytes_in_a_search_query(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    idx = tmp_path / "idx"
    _index(_runbooks(tmp_path), idx, capsys)
    query = b"pool\xff\xfe".decode("utf-8", "surrogateescape")  # what argv holds
    code, out, err = run_cli(["search", query, "--index-dir", str(idx), "--json"], capsys)
    assert code == 2 and out == ""
    assert "QUERY is not valid UTF-8" in err and "0xff" in err
    assert_no_traceback(err)


@pytest.mark.parametrize("command", ["index", "search"])
def test_index_dir_that_is_a_file_or_under_proc(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _runbooks(tmp_path)
    a_file = tmp_path / "afile"
    a_file.write_text("x", encoding="utf-8")
    for where, words in ((a_file, "is a file"), (Path("/proc/self/idx"), "under /proc")):
        argv = ["index", str(root)] if command == "index" else ["search", "pool"]
        code, _out, err = run_cli([*argv, "--index-dir", str(where)], capsys)
        assert code == 2, err
        assert str(where) in err and words in err
        assert_no_traceback(err)


def _read_only(path: Path, command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run ``command`` while ``path`` is read-only: a read-only bind mount in a private
    mount namespace when root (permission bits do not stop root), else chmod."""
    if os.geteuid() == 0:
        if shutil.which("unshare") is None:
            pytest.fail("running as root needs `unshare` to make a read-only mount")
        script = 'mount --bind -o ro "$1" "$1" && shift && exec "$@"'
        argv = ["unshare", "-m", "sh", "-c", script, "sh", str(path), *command]
        return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    modes = {p: p.stat().st_mode for p in [path, *path.rglob("*")]}
    try:
        for p in modes:
            p.chmod(0o555 if p.is_dir() else 0o444)
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


def test_index_on_a_read_only_mount_is_searchable_and_not_writable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _runbooks(tmp_path)
    idx = tmp_path / "idx"
    _index(root, idx, capsys)
    env = dict(os.environ)
    found = _read_only(idx, [str(OPSMATE), "search", "PoolTimeout", "--index-dir", str(idx),
                             "--json"], env)  # fmt: skip
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert hits and hits[0]["source"] == "pool.md"
    again = _read_only(idx, [str(OPSMATE), "index", str(root), "--index-dir", str(idx)], env)
    assert again.returncode == 2, again.stderr
    assert "cannot write there" in again.stderr and str(idx) in again.stderr
    assert_no_traceback(again.stderr)


def test_no_space_left_while_indexing_keeps_the_published_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _runbooks(tmp_path)
    idx = tmp_path / "idx"
    _index(root, idx, capsys)
    (root / "pool.md").write_text(RUNBOOK.replace("exhausted", "saturated"), encoding="utf-8")
    calls: list[Any] = []

    def full_disk(*args: Any, **kwargs: Any) -> None:  # the generation's first file write
        calls.append(args)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(numpy, "save", full_disk)
    code, _out, err = run_cli(["index", str(root), "--index-dir", str(idx)], capsys)
    assert calls, "the fault was not injected: the indexer no longer writes with numpy.save"
    assert code == 2, err
    assert "no space left" in err and str(idx) in err
    assert_no_traceback(err)
    monkeypatch.undo()
    code, out, err = run_cli(["search", "exhausted", "--index-dir", str(idx), "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["hits"][0]["source"] == "pool.md"  # the old version still answers


def test_file_size_limit_while_indexing_is_exit_2(tmp_path: Path) -> None:
    """A real EFBIG: the indexer runs under RLIMIT_FSIZE (Python ignores SIGXFSZ, so the
    write fails with EFBIG instead of killing the process)."""
    root = _runbooks(tmp_path, n=40)
    idx = tmp_path / "idx"

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (48 << 10, 48 << 10))

    proc = subprocess.run(
        [str(OPSMATE), "index", str(root), "--index-dir", str(idx), "--embedding", "none"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        preexec_fn=limit,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert str(idx) in proc.stderr and "cannot" in proc.stderr
    assert_no_traceback(proc.stderr)
