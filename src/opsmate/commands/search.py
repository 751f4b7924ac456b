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
- ``--explain``: how the query was understood (glossary expansions, environment /
  service / time / version hints, error signature, intents) and, per hit, its ranks in
  BM25, vectors and the fusion, its rerank features and their contributions. With
  ``--json`` it adds ``explain`` to the response and to each hit; the other keys are
  unchanged.

A missing or empty index is exit 2 with a message saying to run ``opsmate index``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from opsmate.config import load_settings
from opsmate.errors import InputError, UsageError
from opsmate.fsguard import check_readable_dir
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
    explain: bool = False,
) -> None:
    """Search the index; see the module docstring."""
    if (query is None or not query.strip()) and batch is None:
        raise UsageError("give a QUERY or --batch FILE.jsonl")
    if query is not None and batch is not None:
        raise UsageError("give either a QUERY or --batch FILE.jsonl, not both")
    if query is not None:
        _check_text(query)
    _check_mode(mode)
    flt = parse_filters(filters)
    items = read_batch(batch) if batch is not None else []
    settings = load_settings(config_path)
    check_readable_dir(  # a file, /proc: exit 2, naming the flag or the config key
        settings.resolved_index_dir(index_dir), "--index-dir" if index_dir else "index_dir"
    )
    retriever = open_retriever(index_dir, settings)
    from opsmate.tools.redact import Redactor

    redactor = Redactor(settings.tools.redact_patterns)  # runbook text is printed: redact it

    if batch is not None:
        for item in items:
            resp = redactor.clean(retriever.search(
                item["query"],
                top_k=item.get("top_k", top_k),
                mode=item.get("mode", mode),
                filters=item.get("filters", flt),
                include_deprecated=include_deprecated,
                explain=explain,
            ))  # fmt: skip
            _write_json(redactor.clean({"id": item["id"], **_dump(resp)}))
        sys.stdout.flush()
        return
    assert query is not None
    resp = redactor.clean(
        retriever.search(
            query,
            top_k=top_k,
            mode=mode,  # type: ignore[arg-type]
            filters=dict(flt),
            include_deprecated=include_deprecated,
            explain=explain,
        )
    )
    for w in resp.warnings:
        sys.stderr.write(f"opsmate: warning: {w}\n")
    if json_out:
        _write_json(_dump(resp))
    else:
        _print_table(resp)
        if explain:
            _print_explain(resp)
    sys.stdout.flush()


def _dump(resp: SearchResponse) -> dict[str, Any]:
    """The JSON of a response; ``explain`` keys only when asked for (the contract's keys stay)."""
    out = resp.model_dump(mode="json")
    if resp.explain is None:
        out.pop("explain", None)
        for h in out["hits"]:
            h.pop("explain", None)
    return out


def _check_text(query: str) -> None:
    """UsageError for a QUERY holding bytes that are not UTF-8 (they arrive as surrogates)."""
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = ord(query[exc.start])
        byte = f"byte 0x{bad - 0xDC00:02x}" if 0xDC80 <= bad <= 0xDCFF else f"U+{bad:04X}"
        raise UsageError(
            f"QUERY is not valid UTF-8 text ({byte} at character {exc.start + 1})",
            hint="check the terminal's encoding (LANG / LC_ALL), or put the query in a "
            "--batch file",
        ) from None


def _write_json(obj: dict[str, Any]) -> None:
    from opsmate.textsafe import dumps_json

    line = dumps_json(obj) + "\n"  # no raw control character in a JSON string
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


def _print_explain(resp: SearchResponse) -> None:
    """``--explain`` in words: the query as understood, then why each hit ranked there."""
    from rich.console import Console
    from rich.markup import escape

    ex = resp.explain or {}
    u = ex.get("understanding") or {}
    console = Console(soft_wrap=True, highlight=False)
    out: list[str] = ["[bold]how the query was understood[/bold]"]
    out.append(f"  searched   {escape(str(u.get('searched_text', resp.query)))}")
    out.extend(f"  embedded   {escape(str(t))}" for t in u.get("embedded_text") or [])
    for e in u.get("expansions") or []:
        added = ", ".join(str(a) for a in e.get("added") or [])
        out.append(f"  {e.get('kind', ''):<10} {escape(str(e.get('source')))} -> {escape(added)}")
    hints = u.get("hints") or {}
    parts = [
        f"{k} {v}"
        for k, v in (
            ("environment", hints.get("environment")),
            ("services", ", ".join(hints.get("services") or [])),
            ("time", ", ".join(hints.get("times") or [])),
            ("version", hints.get("version")),
            ("labels", ", ".join(f"{a}={b}" for a, b in (hints.get("labels") or {}).items())),
        )
        if v
    ]
    if hints.get("wants_old_version"):
        parts.append("asks about an old version (deprecated runbooks searched too)")
    if parts:
        out.append(f"  hints      {escape(' · '.join(parts))} (ranking boosts, never filters)")
    sig = u.get("signature")
    if sig:
        exc = sig.get("qualified") or sig.get("exception")
        bits = [b for b in (exc, ", ".join(sig.get("codes") or []), sig.get("template")) if b]
        out.append(f"  signature  {escape(' · '.join(bits))}")
    if u.get("intents"):
        out.append(f"  intents    {escape(' | '.join(u['intents']))} (searched apart, fused)")
    if u.get("follow_up_of"):
        out.append(f"  follow-up  completed from: {escape(str(u['follow_up_of']))}")
    if u.get("unknown_products"):
        out.append(f"  products   no runbook is about: {escape(', '.join(u['unknown_products']))}")
    ev = ex.get("evidence") or {}
    sig_txt = ", ".join(f"{k} {v}" for k, v in (ev.get("signals") or {}).items() if v is not None)
    verdict = "LOW" if ev.get("low") else "enough"
    out.append(f"  evidence   {ev.get('value')} vs threshold {ev.get('threshold')}: {verdict} "
               f"({escape(sig_txt)})")  # fmt: skip
    stages = " -> ".join(ex.get("stages") or [])
    out.append(f"  ranking    {ex.get('lexical')} + vectors, {stages}")
    model = ex.get("model_rerank")
    if model:
        what = f"ranking {model.get('ranking')}" if model.get("applied") else model.get("reason")
        out.append(f"  model      {escape(str(model.get('model', '')))}: {escape(str(what))}")
    out.append("[bold]why each hit ranked where it did[/bold]")
    for h in resp.hits:
        e = h.explain or {}
        where = " › ".join(h.heading_path[1:]) or (h.heading_path[0] if h.heading_path else "")
        out.append(f"  #{h.rank} {escape(h.source)} › {escape(where)}  score {h.score:.3f}")
        ranks = [f"{k.split('_')[0]} #{e[k]}" for k in ("bm25_rank", "vector_rank", "fused_rank")
                 if e.get(k) is not None]  # fmt: skip
        if e.get("model_rank") is not None:
            ranks.append(f"model #{e['model_rank']}")
        out.append(f"      {' · '.join(ranks) or 'no rank information'}")
        contrib = e.get("contributions") or {}
        feats = e.get("features") or {}
        if feats:
            top = sorted(feats, key=lambda k: -abs(contrib.get(k, 0.0)))
            out.append("      " + "  ".join(f"{k} {feats[k]:.2f}→{contrib.get(k, 0.0):+.2f}"
                                            for k in top if feats[k]))  # fmt: skip
    for line in out:
        console.print(line)
