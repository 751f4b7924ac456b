"""Checks of the directories a user names for opsmate to write, and plain words for
write failures, so a bad ``--index-dir`` or a full disk is exit 2 with a message
instead of a traceback.

- :func:`check_writable_dir`: refuses a path that is a file, lies under ``/proc``,
  ``/sys`` or ``/dev``, cannot be created, or sits on a read-only mount.
- :func:`check_readable_dir`: refuses a file or a pseudo-filesystem path for reading.
- :func:`write_failure`: turns ``OSError`` (``ENOSPC``, ``EFBIG``, ``EDQUOT``,
  ``EROFS``, ``EACCES``) and SQLite errors raised while writing into an
  :class:`~opsmate.errors.InputError` that names the directory and the cause.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from opsmate.errors import InputError

#: pseudo filesystems: nothing opsmate keeps belongs there
PSEUDO_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))

_WHY = {
    errno.ENOSPC: "no space left on the device",
    errno.EFBIG: "a file grew past the size limit (see `ulimit -f`)",
    errno.EDQUOT: "the disk quota is exhausted",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
}

#: the errors that mean "the storage refused the write", whatever was being written
_STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS})


def _pseudo_root(path: Path) -> Path | None:
    try:
        resolved = path.expanduser().resolve()
    except (OSError, RuntimeError):
        resolved = path.expanduser().absolute()
    for root in PSEUDO_ROOTS:
        if resolved == root or resolved.is_relative_to(root):
            return root
    return None


def check_readable_dir(path: Path, what: str = "--index-dir") -> None:
    """InputError when ``path`` is a file or lies in a pseudo filesystem."""
    root = _pseudo_root(path)
    if root is not None:
        raise InputError(f"{what} {path}: lies under {root}, which cannot hold an index")
    if path.exists() and not path.is_dir():
        raise InputError(f"{what} {path}: is a file, not a directory")


def check_writable_dir(path: Path, what: str = "--index-dir") -> None:
    """Create ``path`` if needed; InputError when it cannot be a writable directory."""
    check_readable_dir(path, what)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{what} {path}: cannot create the directory: {_why(exc)}") from exc
    if not os.access(path, os.W_OK):
        raise InputError(
            f"{what} {path}: cannot write there (read-only file system or no permission)",
            hint="choose another --index-dir; an index there can still be searched",
        )


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        known = _WHY.get(exc.errno or 0)
        if known:
            return known
        return exc.strerror or str(exc)
    return str(exc)


def write_failure(exc: BaseException, where: Path, what: str = "the index") -> InputError | None:
    """An InputError for a failure while writing ``what`` under ``where``; None when
    ``exc`` is not a storage failure (let it propagate)."""
    if isinstance(exc, OSError):
        if exc.errno not in _STORAGE_ERRNOS:
            return None  # not a storage failure (a missing model file, say)
        why = _why(exc)
    elif isinstance(exc, sqlite3.Error):
        why = f"the database could not be written ({exc})"
    else:
        return None
    return InputError(
        f"cannot write {what} in {where}: {why}",
        hint="free some space or choose another --index-dir, then run it again; "
        "the index published before this run is kept",
    )
