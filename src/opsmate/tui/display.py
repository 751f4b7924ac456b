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
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~])")


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
        from opsmate.agent.report.model import render_markdown

        known = report.known_ids()
        return linkify_ids(render_markdown(report), known)

    def full_report_markdown(self, report: Any) -> str:
        """The whole report (ctrl+f): :meth:`report_markdown` with the report's ``chain`` as a
        numbered list after the root cause, when the report has one the renderer left out."""
        markdown = self.report_markdown(report)
        chain = chain_markdown(report)
        if not chain or _all_present(chain_statements(report), markdown):
            return markdown
        chain = linkify_ids(chain, report.known_ids())
        marker = "\n## Root cause\n"
        at = markdown.find(marker)
        nxt = markdown.find("\n## ", at + len(marker)) if at >= 0 else -1
        if nxt < 0:
            return markdown.rstrip("\n") + "\n\n" + chain
        return markdown[:nxt] + "\n\n" + chain.rstrip("\n") + "\n" + markdown[nxt:]

    def follow_up_markdown(self, report: Any) -> str:
        """A follow-up's answer alone (the whole report is one key away), ids clickable."""
        from opsmate.agent.report.model import render_follow_up
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


def md_escape(text: str) -> str:
    """``text`` as one line of literal Markdown (no heading, link, HTML or code from data)."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def _link_parts(link: Any) -> tuple[str, list[str]]:
    if isinstance(link, dict):
        return str(link.get("statement") or ""), [str(e) for e in link.get("evidence") or []]
    statement = getattr(link, "statement", None)
    if statement is None:
        return str(link), []
    return str(statement), [str(e) for e in getattr(link, "evidence", None) or []]


def chain_statements(report: Any) -> list[str]:
    """The statements of the report's ``chain`` (symptom to cause), [] when it has none."""
    return [s for s, _ in map(_link_parts, getattr(report, "chain", None) or []) if s.strip()]


def chain_markdown(report: Any) -> str:
    """The report's ``chain`` as a numbered Markdown list ("" when there is none).

    Read with getattr: reports made before the field existed have no chain.
    """
    links = [_link_parts(x) for x in getattr(report, "chain", None) or []]
    lines = []
    for i, (statement, evidence) in enumerate((x for x in links if x[0].strip()), 1):
        ids = f" \\[{', '.join(evidence)}\\]" if evidence else ""
        lines.append(f"{i}. {md_escape(statement)}{ids}")
    return "## From symptom to cause\n\n" + "\n".join(lines) + "\n" if lines else ""


def _all_present(statements: list[str], markdown: str) -> bool:
    """True when each statement already appears in ``markdown`` (escaped or not)."""
    flat = " ".join(markdown.replace("\\", "").split())
    return all(" ".join(s.split())[:80] in flat for s in statements)


def evidence_ids(text: str) -> list[str]:
    """Every E/R id mentioned in ``text``, in order, without repeats."""
    return list(dict.fromkeys(_ID.findall(text or "")))
