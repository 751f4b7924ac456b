"""The detail of one evidence entry (``E3``) or runbook (``R1``), with its full excerpt.

Evidence excerpts are compact, redacted summaries of a tool result (the report's
``evidence`` entries); ``complete: false`` means the source had more than this
page, so the viewer says so plainly.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from opsmate.tui.widgets.runbook_view import runbook_content


def scope_content(scope: dict[str, Any]) -> Content:
    """The scope the call ran under, one ``key: value`` a line (long values cut)."""
    lines = [Content.from_markup("[b]scope[/b]")]
    for key, value in scope.items():
        if value in (None, "", [], {}):
            continue
        text = str(value)
        text = text if len(text) <= 160 else text[:159] + "…"
        lines.append(Content.from_markup("  [dim]$k:[/] $v", k=str(key), v=text))
    if len(lines) == 1:
        lines.append(Content.from_markup("  [dim]none recorded[/]"))
    return Content("\n").join(lines)


def evidence_content(e: Any) -> Content:
    """A header block describing evidence ``e`` (an Evidence model)."""
    complete = (
        "[$success]complete[/] — all the source returned for this call"
        if e.complete
        else "[$warning]truncated[/] — the source had more than this page"
    )
    return Content.from_markup(
        "[b $accent]$id[/]  [b]$tool[/b]  [dim]$call · $status[/]\n"
        "[b]source[/b] $ref\n"
        f"[b]data[/b]   {complete}",
        id=e.id,
        tool=e.tool,
        call=e.call_id,
        status=getattr(e, "status", "success"),
        ref=e.source_ref,
    )


class EvidenceDetail(VerticalScroll):
    """Shows one Evidence or RunbookRef entry: what it is, where it came from, its excerpt."""

    DEFAULT_CSS = """
    EvidenceDetail { padding: 0 1; }
    EvidenceDetail > #detail-head { margin-bottom: 1; }
    EvidenceDetail > #detail-body { background: $boost; padding: 0 1; }
    EvidenceDetail > #detail-scope { margin-top: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.head = Static("", id="detail-head")
        self.body = Static("", id="detail-body", markup=False)
        self.scope = Static("", id="detail-scope")

    def compose(self) -> ComposeResult:
        yield self.head
        yield self.body
        yield self.scope

    def show(self, entry: Any, full_text: str | None = None) -> None:
        """Show ``entry``; for a runbook, ``full_text`` (the whole document) follows the section."""
        is_runbook = hasattr(entry, "heading_path")
        head = runbook_content(entry) if is_runbook else evidence_content(entry)
        self.head.update(head)
        body = entry.excerpt or "(no excerpt)"
        if full_text and full_text.strip() != body.strip():
            body += "\n\n──── the whole runbook ────\n\n" + full_text.strip()
        self.body.update(body)
        scope = self.scope
        scope.display = not is_runbook
        if not is_runbook:
            scope.update(scope_content(entry.scope))
        self.scroll_home(animate=False)
