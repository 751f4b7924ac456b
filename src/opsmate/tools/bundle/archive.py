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
import zlib
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


_MAGIC = (
    (b"PK\x03\x04", "a ZIP archive, not a tar.gz (unpack it and pass the folder)"),
    (b"PK\x05\x06", "an empty ZIP archive"),
    (b"BZh", "a bzip2 file"),
    (b"\xfd7zXZ\x00", "an xz file"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive, not a tar.gz"),
    (b"Rar!", "a RAR archive, not a tar.gz"),
    (b"\x28\xb5\x2f\xfd", "a zstd file, not a tar.gz"),
)


def looks_like(path: Path) -> str:
    """What a file that is not a readable tar archive looks like, in a few words:
    ``a ZIP archive``, ``a gzip file cut short after 3000 bytes``, ``text (JSON)`` ..."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(512)
    except OSError as exc:
        return f"an unreadable file ({exc.strerror or exc})"
    if size == 0:
        return "an empty file"
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return what
    if head.startswith(b"\x1f\x8b"):
        return _gzip_content(path, size)
    if len(head) > 262 and head[257:262] == b"ustar":
        return f"a tar archive cut short after {size} bytes (truncated)"
    return _text_or_binary(head, size)


def _gzip_content(path: Path, size: int) -> str:
    """A gzip file: cut short, or holding something other than a tar archive."""
    import gzip

    try:
        with gzip.open(path, "rb") as fh:
            inner = fh.read(512)
            while fh.read(1 << 20):  # to the end: a cut-short stream fails here
                pass
    except EOFError:
        return f"a gzip file cut short after {size} bytes (truncated)"
    except (OSError, zlib.error):
        return "a damaged gzip file"
    if len(inner) > 262 and inner[257:262] == b"ustar":
        return "a gzip file holding a tar archive cut short (truncated)"
    return f"a gzip file holding {_text_or_binary(inner, None)}, not a tar archive"


def _text_or_binary(head: bytes, size: int | None) -> str:
    try:
        text = head.decode("utf-8").lstrip()
    except UnicodeDecodeError:
        return "binary data" + (f" ({size} bytes)" if size is not None else "")
    if text.startswith(("{", "[")):
        return "text (JSON)"
    if text.lower().startswith(("<!doctype html", "<html")):
        return "text (an HTML page)"
    if text.startswith("<"):
        return "text (XML)"
    if text.startswith(("---", "format:", "apiVersion:")):
        return "text (YAML; a bundle is a folder or a .tar.gz of one)"
    return "a text file"


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


def _bundle_root(extracted: Path, archive: str, source: Path | None = None) -> Path:
    """The directory holding bundle.yaml: the top, or its single top-level folder."""
    if (extracted / "bundle.yaml").is_file():
        return extracted
    subdirs = [p for p in extracted.iterdir() if p.is_dir() and not p.name.startswith(".")]
    if len(subdirs) == 1 and (subdirs[0] / "bundle.yaml").is_file():
        return subdirs[0]
    if source is not None and _cut_short_tar(source):
        raise BundleError(
            f"{archive}: not a readable tar archive: it looks like a tar archive cut "
            f"short after {source.stat().st_size} bytes (truncated; no bundle.yaml in it)"
        )
    raise BundleError(
        f"{archive}: bundle.yaml missing (expected at the top of the archive "
        "or inside its single top-level folder)"
    )


def _cut_short_tar(path: Path) -> bool:
    """An uncompressed tar archive without its closing zero blocks (cut short)."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(512)
            fh.seek(max(size - 1024, 0))
            tail = fh.read(1024)
    except OSError:
        return False
    return head[257:262] == b"ustar" and (size % 512 != 0 or tail.strip(b"\x00") != b"")


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
        return _bundle_root(target, label, path)
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
        except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
            raise BundleError(
                f"{label}: not a readable tar archive: it looks like {looks_like(path)}"
            ) from exc
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
    return _bundle_root(target, label, path)
