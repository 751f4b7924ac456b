"""A re-index that stops midway keeps the old index searchable, and the next run cleans up.

The new index is built beside the published one and swapped in by one transaction, so
until then searches answer from the old one. Here a re-index stops in each way a user
meets: killed (SIGKILL) while storing changed runbooks and while building the new
generation, a runbook the parser chokes on, an exception while the new generation is
written, a real full disk (a small tmpfs in a private mount namespace), and a first run
killed before its manifest existed. After each, ``opsmate search`` answers from the old
index (old wording), and a later ``opsmate index`` completes and leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hardening_util import OPSMATE, assert_no_traceback, run_cli

from opsmate.knowledge import index as index_mod
from opsmate.knowledge.index import GENS, TEST_SLEEP_ENV
from opsmate.knowledge.manifest import MANIFEST_NAME

OLD, NEW = "exhausted", "saturated"


def _runbooks(root: Path, word: str, n: int = 6) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (root / f"r{i}.md").write_text(
            f"---\ntitle: Runbook {i}\nservice: svc{i}\n---\n# Runbook {i}\n\n## Check\n"
            f"PoolTimeout {i}: the connection pool is {word}; compare in-use with max.\n",
            encoding="utf-8",
        )
    return root


def _cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(OPSMATE), *argv],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def _here(*argv: str) -> subprocess.CompletedProcess[str]:
    """``opsmate ARGV`` in this process (no start-up cost), as a completed process."""
    from opsmate.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv))
        except SystemExit as exc:
            code = int(exc.code or 0)
    return subprocess.CompletedProcess(list(argv), code, out.getvalue(), err.getvalue())


def _index(rb: Path, idx: Path) -> subprocess.CompletedProcess[str]:
    return _here("index", str(rb), "--index-dir", str(idx), "--embedding", "none", "--json")


def _texts(idx: Path, query: str = "PoolTimeout connection pool") -> str:
    found = _here("search", query, "--index-dir", str(idx), "--json", "--top-k", "20")
    assert found.returncode == 0, found.stderr
    assert_no_traceback(found.stderr)
    return " ".join(h["text"] for h in json.loads(found.stdout)["hits"])


def _assert_old(idx: Path) -> None:
    text = _texts(idx)
    assert OLD in text and NEW not in text, text


def _assert_clean_after_rerun(rb: Path, idx: Path) -> None:
    done = _index(rb, idx)
    assert done.returncode == 0, done.stderr
    text = _texts(idx)
    assert NEW in text and OLD not in text
    leftovers = [p.name for p in (idx / GENS).iterdir() if not p.name.isdigit()]
    assert not leftovers, leftovers
    assert not list(idx.glob(f"{MANIFEST_NAME}.new-*"))
    db = sqlite3.connect(idx / MANIFEST_NAME)
    try:
        rows = db.execute("SELECT count(*) FROM documents WHERE status != 'published'")
        assert rows.fetchone()[0] == 0
    finally:
        db.close()


def _kill_when(proc: subprocess.Popen[bytes], ready: Any, what: str) -> None:
    deadline = time.monotonic() + 90
    try:
        while not ready():
            assert proc.poll() is None, f"the indexer ended before {what}"
            assert time.monotonic() < deadline, f"the indexer never reached {what}"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)


def _building(idx: Path) -> bool:
    db = sqlite3.connect(idx / MANIFEST_NAME, timeout=10)
    try:
        row = db.execute("SELECT count(*) FROM documents WHERE status = 'building'").fetchone()
        return bool(row[0])
    finally:
        db.close()


def test_killed_while_storing_the_changed_runbooks(tmp_path: Path) -> None:
    rb, idx = _runbooks(tmp_path / "rb", OLD), tmp_path / "idx"
    assert _index(rb, idx).returncode == 0
    _runbooks(rb, NEW)
    proc = subprocess.Popen(
        [str(OPSMATE), "index", str(rb), "--index-dir", str(idx), "--embedding", "none"],
        env={**os.environ, TEST_SLEEP_ENV: "60"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _kill_when(proc, lambda: _building(idx), "storing a new version")
    _assert_old(idx)
    _assert_clean_after_rerun(rb, idx)


def test_killed_while_writing_the_new_generation(tmp_path: Path) -> None:
    """A child that stops (SIGSTOP, then SIGKILL) inside the generation's first write."""
    rb, idx = _runbooks(tmp_path / "rb", OLD), tmp_path / "idx"
    assert _index(rb, idx).returncode == 0
    _runbooks(rb, NEW)
    marker = tmp_path / "writing"
    code = (
        "import os, signal, sys, numpy\n"
        "real = numpy.save\n"
        "def save(*a, **k):\n"
        f"    open({str(marker)!r}, 'w').close()\n"
        "    os.kill(os.getpid(), signal.SIGSTOP)\n"
        "    return real(*a, **k)\n"
        "numpy.save = save\n"
        "from opsmate.cli import main\n"
        f"main(['index', {str(rb)!r}, '--index-dir', {str(idx)!r}, '--embedding', 'none'])\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], env=dict(os.environ))
    _kill_when(proc, marker.exists, "writing the new generation")
    assert any(p.name.endswith(".tmp") for p in (idx / GENS).iterdir())  # half-written
    _assert_old(idx)
    _assert_clean_after_rerun(rb, idx)


def test_a_runbook_the_parser_chokes_on_keeps_its_old_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rb, idx = _runbooks(tmp_path / "rb", OLD), tmp_path / "idx"
    assert _index(rb, idx).returncode == 0
    _runbooks(rb, NEW)
    real = index_mod._parse

    def parse(f: Any) -> Any:
        if f.source == "r0.md":
            raise RecursionError("maximum recursion depth exceeded")  # a parser bug
        return real(f)

    monkeypatch.setattr(index_mod, "_parse", parse)
    code, _out, err = run_cli(
        ["index", str(rb), "--index-dir", str(idx), "--embedding", "none"], capsys
    )
    assert code == 2, err
    assert "r0.md: could not be read as a runbook (RecursionError" in err
    assert "the previously indexed version is kept" in err
    assert_no_traceback(err)
    text = _texts(idx)
    assert "PoolTimeout 0: the connection pool is exhausted" in text  # its old version
    assert "PoolTimeout 1: the connection pool is saturated" in text  # the others: new
    monkeypatch.undo()
    _assert_clean_after_rerun(rb, idx)


def test_an_exception_while_building_keeps_the_old_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rb, idx = _runbooks(tmp_path / "rb", OLD), tmp_path / "idx"
    assert _index(rb, idx).returncode == 0
    _runbooks(rb, NEW)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("injected: the lexical index could not be built")

    monkeypatch.setattr(index_mod, "build_lexical", broken)
    code, _out, err = run_cli(
        ["index", str(rb), "--index-dir", str(idx), "--embedding", "none"], capsys
    )
    assert code == 4 and "injected" in err, err  # an internal error, named
    monkeypatch.undo()
    _assert_old(idx)
    _assert_clean_after_rerun(rb, idx)


def test_a_first_run_killed_before_its_manifest_existed(tmp_path: Path) -> None:
    """What a killed first run (or an older opsmate) left: an empty manifest file, a
    half-created one beside it. Search says there is no index yet; index starts over."""
    rb, idx = _runbooks(tmp_path / "rb", NEW), tmp_path / "idx"
    idx.mkdir()
    (idx / MANIFEST_NAME).write_bytes(b"")
    (idx / f"{MANIFEST_NAME}.new-12345").write_bytes(b"SQLite format 3\x00 half")
    found = _cli("search", "PoolTimeout", "--index-dir", str(idx))
    assert found.returncode == 2
    assert "no such table" not in found.stderr
    assert "did not finish" in found.stderr and "opsmate index" in found.stderr
    assert_no_traceback(found.stderr)
    _assert_clean_after_rerun(rb, idx)


def _tmpfs_driver() -> str:
    """A shell script run in a private mount namespace: a 2 MiB tmpfs, a first index
    that fits, a re-index of much larger runbooks that does not, then a search."""
    return r"""
set -u
mnt="$1"; rb="$2"; opsmate="$3"
mount -t tmpfs -o size=2m tmpfs "$mnt" || exit 90
"$opsmate" index "$rb" --index-dir "$mnt/idx" --embedding none --json > "$mnt/../first.json" \
    2> "$mnt/../first.err"
echo $? > "$mnt/../first.rc"
"$PY" -c "
import pathlib, sys
for p in pathlib.Path(sys.argv[1]).glob('*.md'):
    p.write_text(p.read_text().replace('exhausted', 'saturated') + ''.join(
        f'## Section {i}\nline {i} about PoolTimeout and the pool ' + 'x' * 300 + '\n'
        for i in range(150)))
" "$rb"
"$opsmate" index "$rb" --index-dir "$mnt/idx" --embedding none 2> "$mnt/../second.err"
echo $? > "$mnt/../second.rc"
"$opsmate" search "PoolTimeout connection pool" --index-dir "$mnt/idx" --json --top-k 20 \
    > "$mnt/../search.json" 2> "$mnt/../search.err"
echo $? > "$mnt/../search.rc"
"""


def test_a_full_disk_while_reindexing_keeps_the_old_index(tmp_path: Path) -> None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and `unshare` for a private tmpfs (run the suite as root)")
    rb = _runbooks(tmp_path / "rb", OLD, n=30)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    script = tmp_path / "driver.sh"
    script.write_text(_tmpfs_driver(), encoding="utf-8")
    env = {**os.environ, "PY": sys.executable}
    proc = subprocess.run(
        ["unshare", "-m", "sh", str(script), str(mnt), str(rb), str(OPSMATE)],
        capture_output=True, text=True, env=env, timeout=240,
    )  # fmt: skip
    if proc.returncode == 90:
        pytest.skip(f"cannot mount a tmpfs here ({proc.stderr.strip()[:200]})")

    def read(name: str) -> str:
        return (tmp_path / name).read_text(encoding="utf-8")

    assert read("first.rc").strip() == "0", read("first.err")
    assert read("second.rc").strip() == "2", read("second.err")
    assert "full" in read("second.err") and "kept" in read("second.err")
    assert_no_traceback(read("second.err"))
    assert read("search.rc").strip() == "0", read("search.err")
    hits = json.loads(read("search.json"))["hits"]
    text = " ".join(h["text"] for h in hits)
    assert OLD in text and NEW not in text
