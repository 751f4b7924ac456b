"""Finding and reading runbook files: what ``opsmate index`` and bundles index.

A folder contributes every ``*.md`` / ``*.markdown`` file below it (hidden folders such
as ``.git`` skipped), its ``source`` being the path relative to the folder with POSIX
separators. A file named directly is taken whatever its suffix, relative to its own
folder. Files over :data:`MAX_FILE_BYTES` are rejected (a 5 MB "runbook" is a dump,
and would take minutes to embed); encoding and binary checks are in
``markdown.load_runbook``.
"""

from __future__ import annotations

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


def discover(paths: list[Path]) -> tuple[list[SourceFile], list[dict[str, str]]]:
    """Markdown files under ``paths`` and the path errors (``{source, message}``).

    Two files with the same relative path from different roots cannot both be
    indexed: the later one is an error.
    """
    files: list[SourceFile] = []
    errors: list[dict[str, str]] = []
    seen: dict[str, Path] = {}
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_file():
            found = [(path.name, path, path.parent)]
        elif path.is_dir():
            found = [
                (p.relative_to(path).as_posix(), p, path)
                for p in sorted(path.rglob("*"))
                if p.suffix.lower() in MARKDOWN_SUFFIXES
                and p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            ]
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
