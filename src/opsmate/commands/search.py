"""``opsmate search``: ranked runbook chunks from the published index.

- ``QUERY``: a table on stdout (``--json``: ``{"query", "hits": [...], "low_evidence"}``
  plus ``mode`` and ``warnings``, contracts section 1).
- ``--batch FILE.jsonl``: one query per line (``{"id": ..., "query": ...}``; optional
  ``top_k``, ``mode``, ``filters`` override the flags; other keys are ignored). The whole
  file is checked first - a bad line is an error naming ``FILE:LINE`` and nothing is
  searched - then one JSON object per line is printed, in input order, with ``id`` added.
  The index and the embedding model are loaded once.
- ``--filter key=value`` (repeatable; service, environment, status) is applied inside
  both BM25 and vector search.

A missing or empty index is exit 2 with a message saying to run ``opsmate index``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from opsmate.config import load_settings
from opsmate.errors import InputError, UsageError
from opsmate.knowledge.corpus import normalize_filters
from opsmate.knowledge.retrieve import MODES, open_retriever
from opsmate.knowledge.types import SearchResponse


def parse_filters(items: list[str]) -> dict[str, list[str]]:
    """``["service=a", "environment=test"]`` -> ``{"service": ["a"], ...}`` (validated)."""
    out: dict[str, list[str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"--filter expects key=value, got '{item}'")
        out.setdefault(key.strip(), []).append(value.strip())
    normalize_filters(out)  # unknown keys -> UsageError naming the key
    return out


def _check_mode(mode: str, where: str = "--mode") -> str:
    if mode not in MODES:
        raise UsageError(f"{where}: unknown mode '{mode}'", hint="use hybrid, bm25 or vector")
    return mode


def read_batch(path: Path) -> list[dict[str, Any]]:
    """Parse and validate a JSONL batch file; errors name FILE:LINE."""
    try:
        raw = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise InputError(f"{path}: cannot read batch file: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not valid UTF-8 ({exc.reason})") from exc
    items: list[dict[str, Any]] = []
    for no, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{no}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}: not a JSON object: {exc.msg}") from exc
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected a JSON object with a query")
        query = obj.get("query")
        if not isinstance(query, str) or not query.strip():
            raise InputError(f"{where}: `query` must be a non-empty string")
        item: dict[str, Any] = {"id": obj.get("id"), "query": query}
        if "top_k" in obj:
            top_k = obj["top_k"]
            if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= 100:
                raise InputError(f"{where}: `top_k` must be an integer from 1 to 100")
            item["top_k"] = top_k
        if "mode" in obj:
            item["mode"] = _check_mode(str(obj["mode"]), where)
        if "filters" in obj:
            if not isinstance(obj["filters"], dict):
                raise InputError(f"{where}: `filters` must be an object")
            try:
                normalize_filters(obj["filters"])
            except UsageError as exc:
                raise InputError(f"{where}: {exc.message}") from exc
            item["filters"] = obj["filters"]
        items.append(item)
    if not items:
        raise InputError(f"{path}: no queries in batch file")
    return items


def run_search(
    *,
    query: str | None,
    index_dir: Path | None,
    top_k: int,
    mode: str,
    filters: list[str],
    batch: Path | None,
    include_deprecated: bool,
    json_out: bool,
    config_path: Path | None,
) -> None:
    """Search the index; see the module docstring."""
    if (query is None or not query.strip()) and batch is None:
        raise UsageError("give a QUERY or --batch FILE.jsonl")
    if query is not None and batch is not None:
        raise UsageError("give either a QUERY or --batch FILE.jsonl, not both")
    _check_mode(mode)
    flt = parse_filters(filters)
    items = read_batch(batch) if batch is not None else []
    settings = load_settings(config_path)
    retriever = open_retriever(index_dir, settings)

    if batch is not None:
        for item in items:
            resp = retriever.search(
                item["query"],
                top_k=item.get("top_k", top_k),
                mode=item.get("mode", mode),
                filters=item.get("filters", flt),
                include_deprecated=include_deprecated,
            )
            _write_json({"id": item["id"], **resp.model_dump(mode="json")})
        sys.stdout.flush()
        return
    assert query is not None
    resp = retriever.search(
        query,
        top_k=top_k,
        mode=mode,  # type: ignore[arg-type]
        filters=dict(flt),
        include_deprecated=include_deprecated,
    )
    for w in resp.warnings:
        sys.stderr.write(f"opsmate: warning: {w}\n")
    if json_out:
        _write_json(resp.model_dump(mode="json"))
    else:
        _print_table(resp)
    sys.stdout.flush()


def _write_json(obj: dict[str, Any]) -> None:
    line = json.dumps(obj, ensure_ascii=False) + "\n"
    buf = getattr(sys.stdout, "buffer", None)
    if buf is not None:
        sys.stdout.flush()
        buf.write(line.encode("utf-8"))
        buf.flush()
    else:
        sys.stdout.write(line)


def _print_table(resp: SearchResponse) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(soft_wrap=False)
    if not resp.hits:
        console.print(f"no runbook matches [bold]{escape(resp.query)}[/bold]")
        return
    table = Table(
        title=f"{resp.mode} search: {escape(resp.query)}", title_justify="left", expand=True
    )
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("runbook / section", ratio=2)
    table.add_column("text", ratio=3)
    for h in resp.hits:
        section = " › ".join(h.heading_path[1:]) or h.heading_path[0] if h.heading_path else ""
        snippet = " ".join(h.text.split())
        if len(snippet) > 220:
            snippet = snippet[:219] + "…"
        status = h.metadata.get("status")
        tag = escape(f" [{status}]") if status and status != "active" else ""
        where = f"[bold]{escape(h.source)}[/bold]{tag}\n{escape(section)}"
        table.add_row(str(h.rank), f"{h.score:.3f}", where, escape(snippet))
    console.print(table)
    if resp.low_evidence:
        console.print(
            "[yellow]low evidence: the best match is weak; the runbooks may not cover this[/]"
        )
