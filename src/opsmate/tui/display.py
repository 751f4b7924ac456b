"""How the TUI turns engine values into short text: times, icons, arguments, citations.

Everything time-dependent the screen shows (elapsed milliseconds of a tool call,
seconds of a turn, the report's budget line, dates of saved sessions) goes through
one :class:`Formatter`, so a test can freeze it (:class:`FrozenFormatter`) and
SVG snapshots stay identical from run to run. No Textual import here.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

STATUS_ICONS: dict[str, str] = {
    "running": "⋯",
    "success": "✓",
    "partial": "◐",
    "no_data": "∅",
    "error": "✗",
    "rejected": "⊘",
}

SOURCE_LABELS: dict[str, str] = {
    "runbook_check": "runbook check",
    "runbook_command": "runbook command",
    "rule": "rule",
    "model": "model",
    "user": "you",
}

HYPOTHESIS_ICONS: dict[str, str] = {"confirmed": "✓", "open": "?", "refuted": "✗"}

_ID = re.compile(r"\b([ER]\d+)\b")
_CODE = re.compile(r"(`[^`]*`)")


class Formatter:
    """Formats times and reports for display; subclass to freeze them in tests."""

    def elapsed_ms(self, ms: int | None) -> str:
        if ms is None:
            return ""
        if ms < 1000:
            return f"{ms} ms"
        return f"{ms / 1000:.1f} s"

    def seconds(self, s: float) -> str:
        return f"{s:.1f} s"

    def timestamp(self, value: str | datetime | None) -> str:
        """A saved session's time as ``YYYY-MM-DD HH:MM`` (local time)."""
        if value is None:
            return "?"
        try:
            dt = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
        except ValueError:
            return str(value)[:16]
        if dt.tzinfo is not None:
            dt = dt.astimezone()
        return dt.strftime("%Y-%m-%d %H:%M")

    def report_markdown(self, report: Any) -> str:
        """The report as Markdown (the engine's renderer), with E/R ids made clickable."""
        from opsmate.agent.report import render_markdown

        known = report.known_ids()
        return linkify_ids(render_markdown(report), known)

    def follow_up_markdown(self, report: Any) -> str:
        """A follow-up's answer alone (the whole report is one key away), ids clickable."""
        from opsmate.agent.report import render_follow_up
        from opsmate.textsafe import safe_text

        lines = [*render_follow_up(report), "", "*ctrl+f: the whole report*"]
        return linkify_ids(safe_text("\n".join(lines) + "\n"), report.known_ids())


class FrozenFormatter(Formatter):
    """Constant times (tests and snapshots): elapsed and budget seconds never vary."""

    def elapsed_ms(self, ms: int | None) -> str:
        return "" if ms is None else "1 ms"

    def seconds(self, s: float) -> str:
        return "0.1 s"

    def timestamp(self, value: str | datetime | None) -> str:
        return "2026-01-01 00:00"

    def report_markdown(self, report: Any) -> str:
        frozen = report.model_copy(deep=True)
        frozen.budget.seconds = 0.1
        return super().report_markdown(frozen)


def model_label(spec: str | None) -> str:
    """A short name for a model spec: ``gguf:qwen.gguf``, ``openai:qwen2.5``, ``none``."""
    raw = (spec or "none").strip()
    kind, sep, rest = raw.partition(":")
    if not sep:
        return raw
    if kind == "openai":
        return f"openai:{rest.rpartition('#')[2] or rest}"
    return f"{kind}:{rest.rstrip('/').rsplit('/', 1)[-1]}"


def short_args(args: dict[str, Any], limit: int = 70) -> str:
    """``k=v k=v`` of the non-empty arguments, cut to ``limit`` characters."""
    text = " ".join(f"{k}={v}" for k, v in args.items() if v not in (None, "", [], {}))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def one_line(text: str, limit: int = 160) -> str:
    """The first line of ``text``, cut to ``limit`` characters."""
    first = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


def linkify_ids(markdown: str, known: set[str]) -> str:
    """Turn each known evidence/runbook id (outside code spans) into a Markdown link.

    The link target is ``opsmate:E3``; the report view opens the evidence viewer for it.
    """

    def link(match: re.Match[str]) -> str:
        ident = match.group(1)
        return f"[{ident}](opsmate:{ident})" if ident in known else ident

    out = []
    for part in _CODE.split(markdown):
        out.append(part if part.startswith("`") and part.endswith("`") else _ID.sub(link, part))
    return "".join(out)


def evidence_ids(text: str) -> list[str]:
    """Every E/R id mentioned in ``text``, in order, without repeats."""
    return list(dict.fromkeys(_ID.findall(text or "")))
