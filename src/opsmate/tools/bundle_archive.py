"""Safe extraction of a ``.tar.gz`` incident bundle into the user cache dir.

Every member is checked before anything is written: absolute paths, ``..``
components, links pointing outside the archive, device files and archives larger
than :data:`MAX_TOTAL_BYTES` are refused with a :class:`BundleError` naming the
member. Extractions are keyed by the archive's content hash
(``<cache>/bundles/<sha>/``), published atomically, reused when the same archive is
loaded again, and removed after :data:`KEEP_DAYS` days without use.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import shutil
import tarfile
import time
import uuid
from pathlib import Path

from opsmate.errors import BundleError
from opsmate.paths import cache_dir

MAX_TOTAL_BYTES = 1 << 30  # 1 GiB uncompressed
KEEP_DAYS = 7
_READY = ".opsmate-extracted"


def is_archive(path: Path) -> bool:
    """Whether ``path`` names a tar archive we accept (``.tar.gz``, ``.tgz``, ``.tar``)."""
    name = path.name.lower()
    return path.is_file() and name.endswith((".tar.gz", ".tgz", ".tar"))


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:20]


def _check_member(m: tarfile.TarInfo, archive: str) -> None:
    """Refuse a member that could write outside the extraction dir."""
    name = m.name
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise BundleError(f"{archive}: member {name!r} has an absolute path")
    parts = name.replace("\\", "/").split("/")
    if ".." in parts:
        raise BundleError(f"{archive}: member {name!r} points outside the bundle ('..')")
    if m.issym() or m.islnk():
        target = m.linkname.replace("\\", "/")
        if target.startswith("/"):
            raise BundleError(f"{archive}: link {name!r} points to an absolute path {target!r}")
        base = posixpath.dirname(name) if m.issym() else ""
        resolved = posixpath.normpath(posixpath.join(base, target))
        if resolved == ".." or resolved.startswith("../"):
            raise BundleError(f"{archive}: link {name!r} -> {target!r} points outside the bundle")
    elif not (m.isfile() or m.isdir()):
        raise BundleError(f"{archive}: member {name!r} is not a regular file or directory")


def _cleanup(base: Path, keep: Path) -> None:
    """Remove extractions unused for KEEP_DAYS and abandoned temp dirs (older than 1 h)."""
    now = time.time()
    try:
        entries = list(base.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry == keep or not entry.is_dir():
            continue
        try:
            age = now - entry.stat().st_mtime
        except OSError:
            continue
        limit = 3600 if entry.name.startswith("tmp-") else KEEP_DAYS * 86400
        if age > limit:
            shutil.rmtree(entry, ignore_errors=True)


def _bundle_root(extracted: Path, archive: str) -> Path:
    """The directory holding bundle.yaml: the top, or its single top-level folder."""
    if (extracted / "bundle.yaml").is_file():
        return extracted
    subdirs = [p for p in extracted.iterdir() if p.is_dir() and not p.name.startswith(".")]
    if len(subdirs) == 1 and (subdirs[0] / "bundle.yaml").is_file():
        return subdirs[0]
    raise BundleError(
        f"{archive}: bundle.yaml missing (expected at the top of the archive "
        "or inside its single top-level folder)"
    )


def extract_archive(path: Path) -> Path:
    """Extract the bundle archive ``path`` safely; return the directory holding bundle.yaml."""
    label = path.name
    try:
        digest = _digest(path)
    except OSError as exc:
        raise BundleError(f"{label}: cannot read: {exc}") from exc
    base = cache_dir() / "bundles"
    target = base / digest
    if (target / _READY).is_file():
        os.utime(target)
        _cleanup(base, target)
        return _bundle_root(target, label)
    base.mkdir(parents=True, exist_ok=True)
    tmp = base / f"tmp-{uuid.uuid4().hex}"
    tmp.mkdir()
    try:
        try:
            with tarfile.open(path, "r:*") as tar:
                members = tar.getmembers()
                total = 0
                for m in members:
                    _check_member(m, label)
                    total += max(m.size, 0)
                    if total > MAX_TOTAL_BYTES:
                        raise BundleError(f"{label}: larger than {MAX_TOTAL_BYTES >> 20} MiB")
                tar.extractall(tmp, members=members, filter="data")
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise BundleError(f"{label}: not a readable tar archive: {exc}") from exc
        (tmp / _READY).write_text(str(path), encoding="utf-8")
        try:
            tmp.rename(target)
        except OSError:
            # another process published the same archive first: use theirs
            shutil.rmtree(tmp, ignore_errors=True)
            if not (target / _READY).is_file():
                raise BundleError(f"{label}: cannot publish extraction to {target}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _cleanup(base, target)
    return _bundle_root(target, label)
