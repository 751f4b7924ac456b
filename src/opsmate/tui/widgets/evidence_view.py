"""The detail of one evidence entry (``E3``) or runbook (``R1``): the whole result, scrollable.

Evidence shows the whole result the engine kept (not the report's cut excerpt), in
two views: rendered (every record on its own line) and raw JSON (``j`` switches).
The header says what the view covers (:func:`~opsmate.tui.result_view.coverage`),
so a cut view is never called complete. Long lines wrap; nothing is cut. A runbook
shows the section that matched and the whole document, rendered as Markdown.
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Markdown, Static

from opsmate.tui.result_view import coverage, raw_json, rendered
from opsmate.tui.widgets.runbook_view import runbook_content, runbook_markdown

_LEAD = re.compile(r"^(\s*(?:\d+\.|-|│|!)?\s+)(\S.*)$")


def hanging(text: str) -> RenderableType:
    """``text`` with a hanging indent: a wrapped record or step stays under its own start
    (plain Rich text would wrap back to the left edge). Nothing is cut; long words fold."""
    parts: list[RenderableType] = []
    for line in text.splitlines():
        m = _LEAD.match(line)
        if m is None:
            parts.append(Text(line, overflow="fold"))
            continue
        grid = Table.grid()
        grid.add_column(no_wrap=True, width=len(m.group(1)))
        grid.add_column(overflow="fold", ratio=1)
        grid.add_row(Text(m.group(1)), Text(m.group(2), overflow="fold"))
        parts.append(grid)
    return Group(*parts)


def scope_content(scope: dict[str, Any]) -> Content:
    """The scope the call ran under, one ``key: value`` a line (long values wrap)."""
    lines = [Content.from_markup("[b]scope[/b]")]
    for key, value in scope.items():
        if value in (None, "", [], {}):
            continue
        lines.append(Content.from_markup("  [dim]$k:[/] $v", k=str(key), v=str(value)))
    if len(lines) == 1:
        lines.append(Content.from_markup("  [dim]none recorded[/]"))
    return Content("\n").join(lines)


def evidence_content(e: Any, envelope: dict[str, Any] | None = None, raw: bool = False) -> Content:
    """A header block describing evidence ``e``: what, where from, and what the view covers."""
    level, covered = coverage(e, envelope)
    style = "$success" if level == "ok" else "$warning"
    word, _, rest = covered.partition(" — ")
    if envelope is None:
        view = "the report's excerpt"
    else:
        view = "raw JSON [dim](j: rendered)[/]" if raw else "rendered [dim](j: raw JSON)[/]"
    return Content.from_markup(
        "[b $accent]$id[/]  [b]$tool[/b]  [dim]$call · $status[/]\n"
        "[b]source[/b] $ref\n"
        f"[b]data[/b]   [{style}]$word[/] — $rest\n"
        f"[b]view[/b]   {view} [dim]· pgup/pgdn scroll[/]",
        id=e.id,
        tool=e.tool,
        call=e.call_id,
        status=getattr(e, "status", "success"),
        ref=e.source_ref,
        word=word,
        rest=rest,
    )


class EvidenceDetail(VerticalScroll):
    """Shows one Evidence or RunbookRef entry: what it is, where it came from, all of it."""

    DEFAULT_CSS = """
    EvidenceDetail { padding: 0 1; }
    EvidenceDetail > #detail-head { margin-bottom: 1; }
    EvidenceDetail > #detail-body {
        background: $boost; padding: 0 1; text-wrap: wrap; text-overflow: fold;
    }
    EvidenceDetail > #detail-doc { padding: 0 1; }
    EvidenceDetail MarkdownFence { overflow: hidden hidden; }
    EvidenceDetail MarkdownFence > Label {
        width: 1fr; padding: 0 1; text-wrap: wrap; text-overflow: fold;
    }
    EvidenceDetail > #detail-scope { margin-top: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.head = Static("", id="detail-head")
        self.body = Static("", id="detail-body", markup=False)
        self.doc = Markdown("", id="detail-doc", open_links=False)
        self.scope = Static("", id="detail-scope")
        self.text = ""  # what the body shows (tests and copy read it)

    def compose(self) -> ComposeResult:
        yield self.head
        yield self.body
        yield self.doc
        yield self.scope

    def show(
        self,
        entry: Any,
        *,
        envelope: dict[str, Any] | None = None,
        raw: bool = False,
        document: str | None = None,
        full_text: str | None = None,
    ) -> None:
        """Show ``entry``.

        Evidence: ``envelope`` is the whole result (None: only the excerpt exists), shown
        rendered or, with ``raw``, as JSON. Runbook: ``document`` is the file as written,
        ``full_text`` the text the engine kept (used when the file is not on disk).
        """
        is_runbook = hasattr(entry, "heading_path")
        self.body.display = not is_runbook
        self.doc.display = is_runbook
        self.scope.display = not is_runbook
        if is_runbook:
            self.head.update(runbook_content(entry))
            self.text = runbook_markdown(entry, document, full_text)
            self.doc.update(self.text)
        else:
            self.head.update(evidence_content(entry, envelope, raw))
            if envelope is None:
                self.text = entry.excerpt or "(no excerpt)"
            elif raw:
                self.text = raw_json(envelope)
            else:
                self.text = rendered(entry.tool, envelope.get("data") or {})
            self.body.update(Text(self.text, overflow="fold") if raw else hanging(self.text))
            self.scope.update(scope_content(entry.scope))
        self.scroll_home(animate=False)
