"""Safe extraction of a ``.tar.gz`` incident bundle into the user cache dir.

Every member is checked before anything is written: absolute paths, ``..``
components, links pointing outside the archive, device files, a path that appears
twice (two ``bundle.yaml``: ``tar`` would silently keep the later one) and archives
larger than :data:`MAX_TOTAL_BYTES` are refused with a :class:`BundleError` naming
the member. Extractions are keyed by the archive's content hash
(``<cache>/bundles/<sha>/``), published atomically and reused when the same archive
is loaded again. The cache is bounded: an extraction is removed after
:data:`KEEP_DAYS` days without use, one larger than :data:`LARGE_BYTES` after
:data:`LARGE_KEEP_SECONDS`, and the least recently used ones go as soon as all
together exceed :data:`MAX_CACHE_BYTES` (the one in use is always kept).
"""

from __future__ import annotations

import hashlib
import json
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
LARGE_BYTES = 64 << 20  # an extraction this big is kept only LARGE_KEEP_SECONDS
LARGE_KEEP_SECONDS = 3600
MAX_CACHE_BYTES = 2 << 30  # all extractions together (least recently used go first)
_READY = ".opsmate-extracted"  # JSON {"archive": ..., "bytes": ...}, written last


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


def _extracted_bytes(entry: Path) -> int:
    """Size of an extraction: recorded in its ready marker, else summed from its files."""
    try:
        return int(json.loads((entry / _READY).read_text(encoding="utf-8"))["bytes"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    total = 0
    for dirpath, _dirs, files in os.walk(entry):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                continue
    return total


def _check_unique(m: tarfile.TarInfo, seen: dict[str, bool], archive: str) -> None:
    """Refuse a path that appears twice (a directory entry repeated is harmless)."""
    key = posixpath.normpath(m.name.replace("\\", "/")).lstrip("/")
    earlier = seen.get(key)
    if earlier is not None and not (earlier and m.isdir()):
        raise BundleError(
            f"{archive}: member {m.name!r} appears more than once; refusing to guess "
            "which copy is meant",
            hint="rebuild the archive with one copy of each file",
        )
    seen[key] = m.isdir()


def _cleanup(base: Path, keep: Path) -> None:
    """Bound the cache (module docstring): drop abandoned temp dirs (older than 1 h),
    extractions unused for KEEP_DAYS (LARGE_KEEP_SECONDS when larger than LARGE_BYTES),
    then the least recently used ones while the total exceeds MAX_CACHE_BYTES."""
    now = time.time()
    try:
        entries = list(base.iterdir())
    except OSError:
        return
    kept: list[tuple[float, int, Path]] = []  # (last use, bytes, path)
    total = 0
    for entry in entries:
        if not entry.is_dir():
            continue
        try:
            used = entry.stat().st_mtime
        except OSError:
            continue
        if entry.name.startswith("tmp-"):
            if now - used > 3600:
                shutil.rmtree(entry, ignore_errors=True)
            continue
        size = _extracted_bytes(entry)
        limit = LARGE_KEEP_SECONDS if size > LARGE_BYTES else KEEP_DAYS * 86400
        if entry != keep and now - used > limit:
            shutil.rmtree(entry, ignore_errors=True)
            continue
        total += size
        if entry != keep:
            kept.append((used, size, entry))
    for _used, size, entry in sorted(kept):  # oldest use first
        if total <= MAX_CACHE_BYTES:
            break
        shutil.rmtree(entry, ignore_errors=True)
        total -= size


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
                seen: dict[str, bool] = {}  # normalised path -> is a directory
                for m in members:
                    _check_member(m, label)
                    _check_unique(m, seen, label)
                    total += max(m.size, 0)
                    if total > MAX_TOTAL_BYTES:
                        raise BundleError(f"{label}: larger than {MAX_TOTAL_BYTES >> 20} MiB")
                tar.extractall(tmp, members=members, filter="data")
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise BundleError(f"{label}: not a readable tar archive: {exc}") from exc
        marker = {"archive": str(path), "bytes": total}
        (tmp / _READY).write_text(json.dumps(marker), encoding="utf-8")
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
