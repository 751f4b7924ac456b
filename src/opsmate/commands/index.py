"""``opsmate index``: index Markdown runbooks into the versioned hybrid index.

Exit codes: 0 when every file was indexed (warnings, such as an empty file or a symlink
loop under a runbook folder, which is skipped, do not count); 2 when some files were
rejected (non-UTF-8, binary, over 2 MiB, broken front matter, a runbook the parser
chokes on, a folder with no Markdown) - the other files are indexed and published all
the same, each rejected file is named on stderr and listed in the JSON summary as
``errors: [{source, message}]`` - or when the index is locked by another running
``opsmate index`` (the message names the lock file), or nothing could be indexed, or
the index directory cannot be written: a file, a path under /proc, a read-only mount,
a full disk (ENOSPC), a file-size limit (EFBIG) - named, with the cause; the index
published before the run is kept.

``--to URL`` publishes the runbooks to the team's shared index instead (a Chroma server,
or Elasticsearch when ``knowledge.backend`` is ``elasticsearch``): a new generation is
written beside the published one, then the pointer flips to it (readers see the old one
until then); the JSON summary has ``backend``, ``server``, ``generation``, ``published``,
``reused``, ``embedded``, ``domains`` (documents per domain) and the counts.

``--json`` prints one summary object on stdout: ``documents``, ``chunks``, ``added``,
``updated``, ``removed``, ``unchanged``, ``seconds``, ``chunks_touched``, ``embedded``,
``errors``, ``warnings`` and the index settings. A progress bar is drawn on stderr
only when stderr is a terminal.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from opsmate.config import EmbeddingConfig, Settings, load_settings
from opsmate.errors import InputError, UsageError
from opsmate.fsguard import check_writable_dir, write_failure
from opsmate.knowledge.generation import Progress
from opsmate.knowledge.index import IndexSummary, KnowledgeIndex
from opsmate.knowledge.sources import discover

EMBEDDING_BACKENDS = ("onnx", "gguf", "openai", "none")


@contextmanager
def _progress_bar(enabled: bool) -> Iterator[Progress | None]:
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    labels = {"read": "reading runbooks", "embed": "embedding chunks",
              "publish": "writing to the server"}  # fmt: skip
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        tasks: dict[str, object] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(labels.get(stage, stage), total=total)
            bar.update(tasks[stage], completed=done, total=total)  # type: ignore[arg-type]

        yield update


def run_index(
    *,
    paths: list[Path],
    index_dir: Path | None,
    json_out: bool,
    embedding: str | None,
    config_path: Path | None,
    to: str | None = None,
) -> None:
    """Index ``paths`` (default: the configured runbook folders); see the module docstring."""
    if to is not None and index_dir is not None:
        raise UsageError(
            "--to publishes to a shared server; --index-dir names a local index: give one"
        )
    settings = load_settings(config_path)
    targets = list(paths) or settings.runbook_paths()
    if not targets:
        raise UsageError(
            "no runbook folder given",
            hint="opsmate index PATH, or set `runbooks:` in the config",
        )
    emb: EmbeddingConfig = settings.embedding
    if embedding is not None:
        if embedding not in EMBEDDING_BACKENDS:
            raise UsageError(
                f"unknown embedding backend '{embedding}'",
                hint=f"use one of: {', '.join(EMBEDDING_BACKENDS)}",
            )
        emb = emb.model_copy(update={"backend": embedding})
    skipped: list[str] = []  # symlink loops, broken links: warnings, the rest is indexed
    files, errors = discover(targets, skipped)
    for w in skipped:
        _stderr(f"opsmate: warning: {w}")
    if not files:
        for err in errors:
            _stderr(f"opsmate: error: {err['message']}")
        raise InputError("nothing to index: no Markdown files found", hint="check the paths")

    if to is not None:
        _publish(files, errors, skipped, settings, to, emb, json_out)
        return
    index_path = settings.resolved_index_dir(index_dir)
    # a file, /proc, a read-only mount: exit 2, naming the flag or the config key
    check_writable_dir(index_path, "--index-dir" if index_dir is not None else "index_dir")
    index = KnowledgeIndex(index_path)
    with _progress_bar(sys.stderr.isatty()) as progress:
        try:
            summary = index.update(
                files,
                embedding=emb,
                lexical_backend=settings.retrieval.bm25_backend,
                vector_backend=settings.retrieval.vector_backend,
                progress=progress,
            )
        except Exception as exc:  # a full disk (ENOSPC), a size limit (EFBIG), ...
            failure = write_failure(exc, index_path)
            if failure is None:
                raise
            raise failure from exc
    summary.errors = errors + summary.errors
    for w in summary.warnings:
        _stderr(f"opsmate: warning: {w}")
    summary.warnings = skipped + summary.warnings
    for err in summary.errors:
        _stderr(f"opsmate: error: {err['message']}")
    if json_out:
        sys.stdout.write(json.dumps(summary.to_json(), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(_human(summary) + "\n")
    sys.stdout.flush()
    if summary.errors:
        n = len(summary.errors)
        raise InputError(
            f"{n} file{'s' if n > 1 else ''} or folder{'s' if n > 1 else ''} not indexed "
            "(named above); everything else is indexed and searchable"
        )


def _publish(
    files: list[Any],
    errors: list[dict[str, str]],
    skipped: list[str],
    settings: Settings,
    url: str,
    emb: EmbeddingConfig,
    json_out: bool,
) -> None:
    """``--to URL``: publish to the shared index (Chroma server or Elasticsearch)."""
    if not re.match(r"https?://[^/\s]+", url):
        raise UsageError(f"--to {url!r} is not an http(s) URL", hint="e.g. --to http://chroma:8000")
    summary: Any
    with _progress_bar(sys.stderr.isatty()) as progress:
        if settings.knowledge.backend == "elasticsearch":
            from opsmate.knowledge.es_publish import publish_es

            summary = publish_es(files, settings, url=url, embedding=emb, progress=progress)
        else:
            from opsmate.knowledge.chroma_publish import publish

            summary = publish(files, settings, url=url, embedding=emb, progress=progress)
    summary.errors = errors + summary.errors
    summary.warnings = skipped + summary.warnings
    for w in summary.warnings[len(skipped) :]:
        _stderr(f"opsmate: warning: {w}")
    for err in summary.errors:
        _stderr(f"opsmate: error: {err['message']}")
    if json_out:
        sys.stdout.write(json.dumps(summary.to_json(), ensure_ascii=False) + "\n")
    else:
        what = "published" if summary.published else "unchanged, kept"
        doms = ", ".join(f"{d} {n}" for d, n in summary.domains.items())
        sys.stdout.write(
            f"{what} generation {summary.generation} of {summary.collection} on "
            f"{summary.server}: {summary.documents} runbooks, {summary.chunks} chunks in "
            f"{summary.seconds:.2f} s ({summary.reused} vectors reused, {summary.embedded} "
            f"embedded)\ndomains: {doms}\n"
        )
    sys.stdout.flush()
    if summary.errors:
        n = len(summary.errors)
        raise InputError(
            f"{n} file{'s' if n > 1 else ''} not published (named above); everything else is"
        )


def _human(s: IndexSummary) -> str:
    vectors = s.embedding_model or "none (BM25 only)"
    return (
        f"indexed {s.documents} runbooks, {s.chunks} chunks in {s.seconds:.2f} s: "
        f"{s.added} added, {s.updated} updated, {s.removed} removed, {s.unchanged} unchanged "
        f"({s.chunks_touched} chunks touched, {s.embedded} embedded)\n"
        f"index: {s.index_dir}  vectors: {vectors}"
    )


def _stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
