"""Session files on disk: read with limits and a schema, written atomically.

A session file is JSON that a user can point ``--session`` (or the TUI) at, so it is
read as untrusted input: only a regular file (never a FIFO, a device such as
``/dev/zero``, or a directory; opened without blocking), at most
:data:`MAX_SESSION_BYTES`, strict UTF-8, JSON no deeper than :data:`MAX_DEPTH` and
without lone UTF-16 surrogates, then validated against :class:`SessionFile`. Every
refusal is an :class:`~opsmate.errors.InputError` (exit 2) naming the file and the reason
(for a schema error: the field, e.g. ``state.constraints.environment``).

Writing goes to a temporary file beside the target (mode 0600), then replaces it: a
failed write (read-only folder, full disk) leaves the previous file as it was and no
temporary file behind, and is an InputError naming the file.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from opsmate import paths
from opsmate.agent.evidence import Evidence, RunbookRef
from opsmate.agent.report.model import Report
from opsmate.agent.state import TaskState
from opsmate.errors import InputError
from opsmate.tools.base import ToolResult

SESSION_FORMAT = "opsmate-session/v1"
MAX_SESSION_BYTES = 64 << 20  # a long session with many results stays far below this
MAX_DEPTH = 64  # sessions opsmate writes nest about 12 levels deep
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")
_SURROGATE = re.compile("[\ud800-\udfff]")


class StoredSource(BaseModel):
    """Where the session looks: a bundle (its resolved path and the digest of its
    bundle.yaml) or the live sources."""

    model_config = ConfigDict(extra="forbid")
    bundle: str | None = None
    live: bool
    bundle_digest: str | None = None


class StoredFlags(BaseModel):
    """The flags the session was started with."""

    model_config = ConfigDict(extra="forbid")
    env: str | None = None
    services: list[str] = Field(default_factory=list)
    since: str | None = None


class StoredExchange(BaseModel):
    """One model step kept for the next turn's context."""

    model_config = ConfigDict(extra="forbid")
    action: str
    result: str


class SessionFile(BaseModel):
    """The schema of a saved session (``format: opsmate-session/v1``)."""

    model_config = ConfigDict(extra="forbid")
    format: str
    id: str
    saved_at: str | None = None
    source: StoredSource
    model: str | None = None
    flags: StoredFlags = Field(default_factory=StoredFlags)
    scope: dict[str, Any] | None = None  # the signed scope (agent/session/scope.py)
    scope_mac: str | None = None
    state: TaskState | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    results: dict[str, ToolResult] = Field(default_factory=dict)
    runbooks: list[RunbookRef] = Field(default_factory=list)
    runbook_text: dict[str, str] = Field(default_factory=dict)
    exchanges: list[StoredExchange] = Field(default_factory=list)
    reports: list[Report] = Field(default_factory=list)


class SessionSaveError(InputError, OSError):
    """A session file that could not be written (exit 2; an OSError for callers that
    treat a failed save as a warning, like the TUI)."""


def valid_id(value: str) -> bool:
    """Whether ``value`` can name a session (and its file in the sessions folder)."""
    return bool(_ID.match(value)) and ".." not in value


def session_path(path_or_id: str | Path) -> Path:
    """The file ``path_or_id`` names: a path that exists, else ``<sessions dir>/<id>.json``."""
    p = Path(path_or_id).expanduser()
    if p.exists() or p.is_symlink():
        return p
    text = str(path_or_id)
    if valid_id(text):
        q = paths.sessions_dir() / f"{text}.json"
        if q.exists():
            return q
    raise InputError(
        f"{path_or_id}: no such session file or saved session id",
        hint=f"saved sessions are in {paths.sessions_dir()}; --session FILE with a new "
        "FILE starts a session there",
    )


def read_bytes_limited(path: Path, limit: int = MAX_SESSION_BYTES) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``); InputError otherwise.

    Opened non-blocking, so a FIFO never hangs; checked with ``fstat`` on what was
    opened, so a symlink to ``/dev/zero`` is refused like ``/dev/zero``."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise InputError(f"{path}: cannot open the session file: {_why(exc)}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(
                f"{path}: not a regular file ({_file_kind(st.st_mode)}); a session is a "
                "JSON file written by opsmate"
            )
        if st.st_size > limit:
            raise InputError(
                f"{path}: {st.st_size} bytes, more than the {limit >> 20} MiB a session "
                "file may have"
            )
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:  # the file grew while it was read
                raise InputError(f"{path}: more than the {limit >> 20} MiB a session may have")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the session file: {_why(exc)}") from exc
    finally:
        os.close(fd)


def parse_session_json(raw: bytes, path: Path) -> dict[str, Any]:
    """Strict UTF-8 JSON object, depth and surrogate checked (InputError naming ``path``)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: not UTF-8 text (invalid byte at offset {exc.start}); not a session file"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply; not a session file") from None
    except ValueError:  # an integer of thousands of digits
        raise InputError(
            f"{path}: holds a number of more than 4300 digits; not a session file"
        ) from None
    if not isinstance(data, dict):
        raise InputError(
            f"{path}: a session file holds a JSON object, not {_json_kind(data)}",
        )
    _check_tree(data, path)
    return data


def load_session_file(path: Path) -> SessionFile:
    """Read and validate the session file ``path`` (see the module docstring)."""
    return validate_session(parse_session_json(read_bytes_limited(path), path), path)


def validate_session(data: dict[str, Any], path: Path) -> SessionFile:
    """``data`` (a session file's JSON) checked against :class:`SessionFile`."""
    if data.get("format") != SESSION_FORMAT:
        raise InputError(
            f"{path}: not an opsmate session file (format {str(data.get('format'))[:40]!r}, "
            f"expected {SESSION_FORMAT!r})"
        )
    try:
        stored = SessionFile.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{path}: not a valid session file: {_first_error(exc)}") from None
    if not valid_id(stored.id):
        raise InputError(f"{path}: id {stored.id[:40]!r} is not a session id")
    return stored


def peek_session_file(path: Path) -> dict[str, Any] | None:
    """The JSON of a session file for listing, or None when it is not one (never hangs)."""
    try:
        data = parse_session_json(read_bytes_limited(path), path)
    except InputError:
        return None
    return data if data.get("format") == SESSION_FORMAT else None


def write_session_file(target: Path, text: str) -> Path:
    """Write ``text`` to ``target`` atomically (mode 0600 for a new file); InputError
    naming the file when it cannot be written (the old file is kept as it was)."""
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists() and not target.is_file():
            raise SessionSaveError(f"{target}: not a regular file; the session was not saved there")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise SessionSaveError(
            f"{target}: the session could not be saved: {_why(exc)}",
            hint="the report above is complete; choose another --session FILE to keep the "
            "session (a file that existed is unchanged)",
        ) from exc
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return target


# ----------------------------------------------------------------------------- helpers


def _check_tree(data: Any, path: Path) -> None:
    """Refuse nesting deeper than MAX_DEPTH and strings with lone surrogates (iterative)."""
    stack: list[tuple[Any, int, str]] = [(data, 1, "")]
    while stack:
        value, depth, where = stack.pop()
        if depth > MAX_DEPTH:
            raise InputError(f"{path}: nested more than {MAX_DEPTH} levels at {where or '/'}")
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise InputError(
                    f"{path}: a lone UTF-16 surrogate in {where or '/'}: not text opsmate wrote"
                )
        elif isinstance(value, dict):
            for k, v in value.items():
                if _SURROGATE.search(k):
                    raise InputError(f"{path}: a lone UTF-16 surrogate in a key under {where}")
                stack.append((v, depth + 1, f"{where}.{k}" if where else k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                stack.append((v, depth + 1, f"{where}[{i}]"))


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    loc = ".".join(str(p) for p in first.get("loc", ())) or "/"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{loc}: {first.get('msg', 'invalid')}{more}"


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


def _file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a plain file"


def _why(exc: OSError) -> str:
    words = {
        errno.ENOSPC: "no space left on the device",
        errno.EROFS: "the file system is read-only",
        errno.EACCES: "permission denied",
        errno.EPERM: "operation not permitted",
        errno.EDQUOT: "the disk quota is exhausted",
        errno.EFBIG: "the file is too large",
        errno.ENOENT: "no such file or directory",
        errno.EISDIR: "is a directory",
        errno.ELOOP: "too many levels of symbolic links",
    }
    return words.get(exc.errno or 0) or exc.strerror or str(exc)


def list_sessions() -> list[dict[str, Any]]:
    """Saved sessions, newest first: id, saved_at, goal, source, status of the last report
    (files that are not sessions are skipped; a FIFO or device there never blocks)."""
    out = []
    folder = paths.sessions_dir()
    files = []
    for f in folder.glob("*.json") if folder.is_dir() else []:
        try:
            files.append((f.stat().st_mtime, f))
        except OSError:
            continue
    for _, f in sorted(files, key=lambda x: x[0], reverse=True):
        data = peek_session_file(f)
        if data is None:
            continue
        reports = data.get("reports")
        reports = reports if isinstance(reports, list) else []
        state = data.get("state")
        state = state if isinstance(state, dict) else {}
        last = reports[-1] if reports and isinstance(reports[-1], dict) else {}
        out.append(
            {
                "id": data.get("id"),
                "path": str(f),
                "saved_at": data.get("saved_at"),
                "goal": state.get("goal"),
                "source": data.get("source"),
                "status": last.get("status"),
            }
        )
    return out
