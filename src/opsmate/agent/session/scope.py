"""A session's scope, fixed when it starts and signed, so a saved file cannot widen it.

The scope is what a session may read: the bundle it was opened on (its resolved path
and the SHA-256 of its ``bundle.yaml``) or the live sources, the flags it was started
with, the model spec its follow-ups use, and the constraints its first question set
(environment, allowed services, namespaces, window, page size). It is stored beside
the state with an HMAC-SHA256 made with a key kept in the user's data dir
(``session.key``, created 0600 on first save).

Loading a session checks, before anything is opened: the MAC (an edited scope, a file
from another machine or one saved without a scope is refused), that the stored source,
flags, model and state constraints are the signed ones, and, once the bundle is opened, that
its ``bundle.yaml`` still has the signed digest (a swapped bundle is refused). Every
refusal is an :class:`~opsmate.errors.InputError` (exit 2) naming the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import stat
import uuid
from pathlib import Path
from typing import Any

from opsmate import paths
from opsmate.agent.session.sources import bundle_digest, demo_bundle_path
from opsmate.errors import InputError, UsageError
from opsmate.tools.base import Constraints

KEY_FILE = "session.key"
_KEY_BYTES = 32
FIXED_FIELDS = (
    "environment",
    "allowed_services",
    "namespaces",
    "window_from",
    "window_to",
    "max_window",
    "max_page_size",
)


def key_path() -> Path:
    """Where the signing key lives (``<data dir>/session.key``)."""
    return paths.data_dir() / KEY_FILE


def session_key(*, create: bool) -> bytes | None:
    """The signing key; created (0600, race-safe) when ``create`` and missing, else None."""
    path = key_path()
    key = _read_key(path)
    if key is not None or not create:
        return key
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{KEY_FILE}.{uuid.uuid4().hex[:8]}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(os.urandom(_KEY_BYTES).hex() + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileExistsError):  # another process made one first
            os.link(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    key = _read_key(path)
    if key is None:
        raise InputError(f"{path}: the session key could not be created")
    return key


def _read_key(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the session key: {exc.strerror}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > 256:
            raise InputError(f"{path}: the session key is not a small regular file")
        text = os.read(fd, 256).decode("ascii", "replace").strip()
    finally:
        os.close(fd)
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != _KEY_BYTES:
        raise InputError(
            f"{path}: not a session key",
            hint="remove it; a new key is made at the next save (sessions signed with the "
            "old key can then no longer be resumed)",
        )
    return key


def fixed_constraints(c: Constraints) -> dict[str, Any]:
    """The constraints that never change after the first question (``services``, the
    focus, may grow; the rest may not)."""
    data = c.model_dump(mode="json")
    return {k: data[k] for k in FIXED_FIELDS}


def make_scope(
    session_id: str,
    source: dict[str, Any],
    flags: dict[str, Any],
    constraints: dict[str, Any] | None,
    model: str | None = None,
) -> dict[str, Any]:
    """The scope block a session stores: ``constraints`` as :func:`fixed_constraints`
    gave them when the first question was asked (None before that); ``model``: the model
    spec a follow-up uses unless ``--model`` names another (an edited one could send the
    session's data to another endpoint)."""
    return {
        "id": session_id,
        "source": dict(source),
        "flags": dict(flags),
        "constraints": dict(constraints) if constraints is not None else None,
        "model": model,
    }


def sign(scope: dict[str, Any], key: bytes) -> str:
    """HMAC-SHA256 of the canonical JSON of ``scope``."""
    blob = json.dumps(scope, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(key, blob.encode("ascii"), hashlib.sha256).hexdigest()


def verify(path: Path, data: dict[str, Any], constraints: Constraints | None) -> dict[str, Any]:
    """Check a session file's JSON ``data`` against its signed scope; return the scope.

    ``constraints``: the state's, as validated (their focus must stay inside the allowed
    services). Refuses an unsigned scope, a bad signature (an edited scope, another data
    dir's key), and a source, flags or state constraints other than the signed ones."""
    scope, mac = data.get("scope"), data.get("scope_mac")
    if not isinstance(scope, dict) or not isinstance(mac, str) or not mac:
        raise InputError(
            f"{path}: the session has no signed scope (saved by an older opsmate, or "
            "edited); it cannot be resumed",
            hint="start a new session: opsmate diagnose --session NEW_FILE ...",
        )
    key = session_key(create=False)
    if key is None:
        raise InputError(
            f"{path}: cannot check the session's scope: no session key at {key_path()}",
            hint="a session can be resumed only with the data dir that saved it; start a "
            "new session",
        )
    if not hmac.compare_digest(sign(scope, key), mac):
        raise InputError(
            f"{path}: the session's scope does not match its signature (edited, or saved "
            "with another data dir's key); refused",
            hint="start a new session; the scope of a session is fixed when it starts",
        )
    differs = []
    if scope.get("id") != data.get("id"):
        differs.append("id")
    if scope.get("source") != data.get("source"):
        differs.append("source (the bundle or the live sources)")
    if scope.get("flags") != data.get("flags"):
        differs.append("flags")
    if scope.get("model") != data.get("model"):
        differs.append("model")
    state = data.get("state")
    signed = scope.get("constraints")
    if not isinstance(state, dict) and isinstance(signed, dict):
        differs.append("state (removed: its constraints would be derived anew)")
    if isinstance(state, dict):
        stored = state.get("constraints")
        stored = stored if isinstance(stored, dict) else {}
        if not isinstance(signed, dict):
            differs.append("state.constraints (not signed)")
        else:
            differs += [
                f"state.constraints.{k}" for k in FIXED_FIELDS if stored.get(k) != signed.get(k)
            ]
    allowed = set(constraints.allowed_services) if constraints is not None else set()
    if constraints is not None and allowed and not set(constraints.services) <= allowed:
        differs.append("state.constraints.services (outside allowed_services)")
    if differs:
        raise InputError(
            f"{path}: the session was changed after it was saved: "
            + ", ".join(differs)
            + (" is" if len(differs) == 1 else " are")
            + " not as signed when it was saved; refused",
            hint="the constraints of a session are fixed when it starts; start a new session",
        )
    return scope


def check_bundle(path: Path, signed: dict[str, Any], opened_root: Path | None) -> None:
    """Refuse a session whose bundle changed since it was signed (another bundle.yaml)."""
    digest = signed.get("bundle_digest")
    if opened_root is None or digest is None:
        return
    try:
        now = bundle_digest(opened_root)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the session's bundle: {exc.strerror}") from exc
    if not hmac.compare_digest(now, str(digest)):
        raise InputError(
            f"{path}: the bundle {signed.get('bundle')} is not the one the session was "
            "opened on (its bundle.yaml changed); refused",
            hint="restore the original bundle, or start a new session on this one",
        )


def check_follow_up_flags(
    path: Path,
    stored: Any,
    *,
    env: str | None,
    services: list[str] | None,
    since: str | None,
) -> None:
    """Flags given with a follow-up must agree with the session's fixed scope."""
    from opsmate.agent.intake.question import map_environment

    c = stored.state.constraints if stored.state is not None else None
    session_env = (c.environment if c is not None else None) or stored.flags.env
    if env and env.strip():
        asked = map_environment(env.strip(), [session_env] if session_env else [])
        if session_env and asked != session_env:
            raise UsageError(
                f"--env {env.strip()}: the session {path} is limited to '{session_env}' "
                "(fixed when it started); its follow-ups cannot read another environment",
                hint=f"drop --env, or start a new session for {env.strip()}",
            )
        if not session_env and stored.state is not None:
            raise UsageError(
                f"--env {env.strip()}: the session {path} started without an environment; "
                "a follow-up cannot set one",
                hint="start a new session with --env",
            )
    allowed = c.allowed_services if c is not None else []
    outside = [s for s in services or [] if allowed and s not in allowed]
    if outside:
        raise UsageError(
            f"--service {', '.join(outside)}: the session {path} is limited to "
            f"{', '.join(allowed)} (fixed when it started)",
            hint="start a new session for other services",
        )
    if since and since.strip() and since.strip() != (stored.flags.since or "").strip():
        raise UsageError(
            f"--since {since.strip()}: the time window of the session {path} is fixed "
            "when it starts",
            hint="drop --since, or start a new session with it",
        )


def check_follow_up_bundle(
    path: Path, signed: str | None, *, bundle: str | Path | None, demo: bool
) -> None:
    """``--bundle`` / ``--demo`` with a follow-up must name the session's own bundle."""
    if bundle is None and not demo:
        return
    named = Path(bundle).expanduser() if bundle is not None else demo_bundle_path()
    try:
        same = signed is not None and named.resolve() == Path(signed)
    except OSError:
        same = False
    if not same:
        flag = f"--bundle {bundle}" if bundle is not None else "--demo"
        where = f"the bundle {signed}" if signed else "the live sources"
        raise UsageError(
            f"{flag}: the session {path} was opened on {where}; a follow-up cannot switch",
            hint=f"drop {flag.split()[0]}, or start a new session on it",
        )
