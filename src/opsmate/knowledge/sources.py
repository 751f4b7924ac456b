"""Finding and reading runbook files: what ``opsmate index`` and bundles index.

A folder contributes every ``*.md`` / ``*.markdown`` file below it (hidden folders such
as ``.git`` skipped; linked folders followed, each real folder once, a symlink loop
skipped with a warning), its ``source`` being the path relative to the folder with POSIX
separators. A file named directly is taken whatever its suffix, relative to its own
folder. Files over :data:`MAX_FILE_BYTES` are rejected (a 5 MB "runbook" is a dump,
and would take minutes to embed); encoding and binary checks are in
``markdown.load_runbook``.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from opsmate.errors import InputError

MARKDOWN_SUFFIXES = (".md", ".markdown")
MAX_FILE_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class SourceFile:
    """A runbook file to index: ``source`` is its path relative to ``root`` (POSIX)."""

    source: str
    path: Path
    root: Path


def _walk(root: Path, warnings: list[str]) -> list[Path]:
    """The Markdown files below ``root`` in path order, hidden folders skipped.

    Linked folders are followed (a team's runbooks linked into yours), each real folder
    once: a link back to a folder above it (a loop) or to one already walked is skipped
    with a warning, as is a link that leads nowhere or round in a circle (``a.md`` ->
    ``b.md`` -> ``a.md``); the rest is indexed.
    """
    found: list[Path] = []
    walked: dict[tuple[int, int], Path] = {}

    def visit(folder: Path, above: tuple[tuple[int, int], ...]) -> None:
        try:
            st = folder.stat()
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            warnings.append(f"{folder}: cannot read the folder ({exc.strerror or exc}); skipped")
            return
        me = (st.st_dev, st.st_ino)
        walked.setdefault(me, folder)
        for entry in entries:
            if entry.name.startswith("."):
                continue
            p = Path(entry.path)
            link = entry.is_symlink()
            try:
                is_dir = entry.is_dir()  # follows a link
                target = p.stat() if link else None
            except OSError as exc:
                if (link and p.suffix.lower() in MARKDOWN_SUFFIXES) or exc.errno == errno.ELOOP:
                    why = "a symlink loop" if exc.errno == errno.ELOOP else "a broken link"
                    warnings.append(f"{p}: {why}; skipped")
                continue
            if is_dir:
                key = (target.st_dev, target.st_ino) if target else None
                if key is not None and (key in above or key == me):
                    warnings.append(f"{p}: a symlink loop (links back to {walked[key]}); skipped")
                elif key is not None and key in walked:
                    warnings.append(f"{p}: links to {walked[key]}, already indexed; skipped")
                else:
                    visit(p, (*above, me))
            elif p.suffix.lower() in MARKDOWN_SUFFIXES and entry.is_file():
                found.append(p)

    visit(root, ())
    return found


def discover(
    paths: list[Path], warnings: list[str] | None = None
) -> tuple[list[SourceFile], list[dict[str, str]]]:
    """Markdown files under ``paths`` and the path errors (``{source, message}``).

    Two files with the same relative path from different roots cannot both be
    indexed: the later one is an error. What was skipped without being an error (a
    symlink loop, a broken link) is appended to ``warnings`` when given.
    """
    files: list[SourceFile] = []
    errors: list[dict[str, str]] = []
    notes: list[str] = [] if warnings is None else warnings
    seen: dict[str, Path] = {}
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_file():
            found = [(path.name, path, path.parent)]
        elif path.is_dir():
            found = [(p.relative_to(path).as_posix(), p, path) for p in _walk(path, notes)]
            if not found:
                errors.append(
                    {"source": str(path), "message": f"{path}: no Markdown files (*.md) in folder"}
                )
        else:
            errors.append({"source": str(path), "message": f"{path}: no such file or folder"})
            continue
        for source, p, root in found:
            if source in seen:
                errors.append(
                    {
                        "source": source,
                        "message": f"{p}: same relative path as {seen[source]}; not indexed",
                    }
                )
                continue
            seen[source] = p
            files.append(SourceFile(source, p, root))
    return files, errors


def read_checked(f: SourceFile) -> bytes:
    """The file's bytes; InputError (naming it) when unreadable or over the size limit."""
    try:
        size = f.path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InputError(
                f"{f.source}: {size / 1e6:.1f} MB is over the {MAX_FILE_BYTES // 2**20} MiB "
                "limit for one runbook; not indexed (split it into smaller files)"
            )
        return f.path.read_bytes()
    except OSError as exc:
        raise InputError(f"{f.source}: cannot read file: {exc.strerror or exc}") from exc
