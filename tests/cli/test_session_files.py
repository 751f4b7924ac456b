"""`opsmate diagnose --session FILE` with files that are not sessions, and saves that fail.

Every bad file is exit 2 with the reason naming the file, never a traceback or a hang;
a session that cannot be saved still prints its report first (exit 2 after it), and a
failed save leaves the previous file as it was and no temporary file behind.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import stat
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from session_cli_util import isolated_env, run


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A demo session saved by the CLI, and the environment it was saved with (its key)."""
    root = tmp_path_factory.mktemp("session-files")
    env = isolated_env(root)
    path = root / "demo-session.json"
    proc = run("diagnose", "--demo", "--session", str(path), "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    return path, env


def _copy(saved: tuple[Path, dict[str, str]], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "s.json"
    shutil.copyfile(saved[0], target)
    return target


def test_a_saved_session_and_its_key_are_private(saved: tuple[Path, dict[str, str]]) -> None:
    path, env = saved
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    key = Path(env["OPSMATE_DATA_DIR"]) / "session.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["scope"]["constraints"]["environment"] == "test" and len(data["scope_mac"]) == 64
    assert data["source"]["bundle_digest"] and data["scope"]["source"] == data["source"]
    assert not list(path.parent.glob(".*.tmp"))


def _edited(edit: Callable[[dict[str, object]], object]) -> Callable[[Path, Path], Path]:
    def make(good: Path, tmp: Path) -> Path:
        data = json.loads(good.read_text(encoding="utf-8"))
        edit(data)
        out = tmp / "edited.json"
        out.write_text(json.dumps(data), encoding="utf-8")
        return out

    return make


def _raw(content: bytes) -> Callable[[Path, Path], Path]:
    def make(good: Path, tmp: Path) -> Path:
        out = tmp / "raw.json"
        out.write_bytes(content)
        return out

    return make


def _huge(good: Path, tmp: Path) -> Path:
    out = tmp / "huge.json"
    with out.open("wb") as fh:  # sparse: 65 MiB that take no room
        fh.truncate(65 << 20)
    return out


def _fifo(good: Path, tmp: Path) -> Path:
    out = tmp / "fifo.json"
    os.mkfifo(out)
    return out


def _symlink_to_zero(good: Path, tmp: Path) -> Path:
    out = tmp / "zero.json"
    out.symlink_to("/dev/zero")
    return out


def _directory(good: Path, tmp: Path) -> Path:
    out = tmp / "folder.json"
    out.mkdir()
    return out


def _surrogate(good: Path, tmp: Path) -> Path:
    text = good.read_text(encoding="utf-8").replace('"goal": "', '"goal": "\\ud800', 1)
    out = tmp / "surrogate.json"
    out.write_text(text, encoding="utf-8")
    return out


def _set(path: str, value: object) -> Callable[[dict[str, object]], None]:
    def edit(data: dict[str, object]) -> None:
        node: object = data
        keys = path.split(".")
        for k in keys[:-1]:
            node = node[int(k)] if isinstance(node, list) else node[k]  # type: ignore[index]
        node[keys[-1]] = value  # type: ignore[index]

    return edit


CASES = {
    "an array": (_raw(b"[1, 2, 3]"), "holds a JSON object, not an array"),
    "a string": (_raw(b'"opsmate"'), "holds a JSON object, not a string"),
    "not UTF-8": (_raw(b'{"format": "\xff\xfe"}'), "not UTF-8 text"),
    "not JSON": (_raw(b'{"format": '), "not valid JSON (line 1"),
    "facts of a wrong type": (_edited(_set("state.facts", "x")), "state.facts: Input should"),
    "an evidence id of a wrong type": (
        _edited(_set("evidence.0.id", 5)),
        "evidence.0.id: Input should be a valid string",
    ),
    "an unknown key": (_edited(_set("extra", 1)), "extra: Extra inputs are not permitted"),
    "another format": (_edited(_set("format", "x/v9")), "not an opsmate session file"),
    "an id that is a path": (_edited(_set("id", "../../etc/x")), "is not a session id"),
    "a 5,000-digit number": (
        _raw(b'{"format": "opsmate-session/v1", "n": ' + b"9" * 5000 + b"}"),
        "more than 4300 digits",
    ),
    "deep nesting": (_raw(b"[" * 50_000 + b"]" * 50_000), "nested too deeply"),
    "a lone surrogate": (_surrogate, "lone UTF-16 surrogate in state.goal"),
    "more than 64 MiB": (_huge, "more than the 64 MiB"),
    "a FIFO": (_fifo, "not a regular file (a FIFO)"),
    "a link to /dev/zero": (_symlink_to_zero, "not a regular file (a character device)"),
    "a directory": (_directory, "not a regular file (a directory)"),
}


# the cases the issue names, through the console script; the rest through Session.load
BY_CLI = ("an array", "not UTF-8", "facts of a wrong type", "a FIFO")


@pytest.mark.parametrize("case", BY_CLI)
def test_a_file_that_is_not_a_session_is_exit_2_naming_it(
    case: str, saved: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    make, needle = CASES[case]
    path = make(saved[0], tmp_path)
    started = time.monotonic()
    proc = run("diagnose", "--session", str(path), "anything new?", env=saved[1], timeout=30)
    assert time.monotonic() - started < 25  # a FIFO never blocks the read
    assert proc.returncode == 2, (case, proc.returncode, proc.stderr[-800:])
    assert str(path) in proc.stderr and needle in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize("case", [c for c in CASES if c not in BY_CLI])
def test_session_load_refuses_it_naming_the_file(
    case: str, saved: tuple[Path, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from opsmate.agent.session.session import Session
    from opsmate.errors import InputError

    make, needle = CASES[case]
    path = make(saved[0], tmp_path)
    monkeypatch.setenv("OPSMATE_DATA_DIR", saved[1]["OPSMATE_DATA_DIR"])  # its key
    with pytest.raises(InputError) as err:
        Session.load(path)
    assert err.value.exit_code == 2
    assert str(path) in err.value.message and needle in err.value.message, err.value.message


def test_dev_zero_is_refused_at_once() -> None:
    from opsmate.agent.session.session import Session
    from opsmate.errors import InputError

    with pytest.raises(InputError, match="/dev/zero: not a regular file"):
        Session.load("/dev/zero")


def test_a_session_that_cannot_be_saved_prints_its_report_first(
    saved: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    if os.geteuid() == 0:  # root writes through permissions: a pseudo filesystem refuses it
        target = Path("/sys/kernel/opsmate-test-session.json")
    else:
        ro = tmp_path / "read-only"
        ro.mkdir()
        ro.chmod(0o555)
        target = ro / "s.json"
    proc = run("diagnose", "--demo", "--session", str(target), "--json", env=saved[1])
    assert proc.returncode == 2, proc.stderr
    report = json.loads(proc.stdout)  # the whole report came first
    assert report["status"] == "complete" and report["root_cause"]
    assert f"{target}: the session could not be saved" in proc.stderr
    assert "Traceback" not in proc.stderr and not target.exists()
    assert not list(target.parent.glob(f".{target.name}.*"))


def test_a_follow_up_that_cannot_be_saved_keeps_the_old_file(
    saved: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    path = _copy(saved, tmp_path / "sessions")
    before = path.read_bytes()
    limit = len(before) // 2  # the new file cannot be written in full (a full disk)
    data = tmp_path / "data"  # the session's key only: the audit log stays small
    data.mkdir()
    shutil.copy2(Path(saved[1]["OPSMATE_DATA_DIR"]) / "session.key", data / "session.key")

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = run(
        "diagnose",
        "--session",
        str(path),
        "which pods restarted?",
        "--markdown",
        env=dict(saved[1], OPSMATE_DATA_DIR=str(data)),
        preexec_fn=small_files,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout.startswith("# Follow-up: which pods restarted?")
    assert f"{path}: the session could not be saved" in proc.stderr
    assert path.read_bytes() == before  # unchanged, and no temporary file left
    assert sorted(p.name for p in path.parent.iterdir()) == ["s.json"]
