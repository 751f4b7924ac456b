"""The evidence / runbook viewer: a list of ids beside the whole entry of the one selected.

Opened with an id (``E3``: from a click, the command palette, or typing ``E3`` in
the question line) or from the bindings for all evidence / all runbooks. Up/Down
move through the list; PgUp/PgDn scroll the entry (the whole result, however long);
``j`` switches evidence between rendered and raw JSON; ``c`` copies the excerpt; Esc
closes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from opsmate.tui.widgets.evidence_view import EvidenceDetail


def _label(entry: Any) -> Content:
    if hasattr(entry, "heading_path"):
        name = entry.source.rsplit("/", 1)[-1].removesuffix(".md")
        name = name if len(name) <= 16 else name[:15] + "…"
        return Content.from_markup("[b]$id[/b] $name", id=entry.id, name=name)
    return Content.from_markup("[b]$id[/b] $tool", id=entry.id, tool=entry.tool)


class EvidenceScreen(ModalScreen[None]):
    """Browse evidence (E ids) or runbooks (R ids); the selected one is shown in full."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("j", "toggle_raw", "Raw JSON"),
        # priority: the list keeps the focus (and its own up/down), the entry scrolls
        Binding("pagedown", "scroll_detail(1)", "Scroll", priority=True),
        Binding("pageup", "scroll_detail(-1)", "Scroll up", priority=True, show=False),
        Binding("c", "copy", "Copy excerpt"),
    ]

    def __init__(
        self,
        entries: list[Any],
        selected: str | None = None,
        *,
        title: str = "Evidence",
        full_text: Callable[[str], str | None] | None = None,
        full_result: Callable[[str], dict[str, Any] | None] | None = None,
        document: Callable[[str], str | None] | None = None,
    ) -> None:
        super().__init__(id="evidence-screen")
        self.entries = {e.id: e for e in entries}
        self.selected = (
            selected if selected in self.entries else (entries[0].id if entries else None)
        )
        self.heading = title
        self.full_text = full_text
        self.full_result = full_result
        self.document = document
        self.raw = False  # evidence as raw JSON instead of rendered
        self.title_bar = Static(title, id="evidence-title", classes="dialog-title")
        self.options = OptionList(
            *[Option(_label(e), id=i) for i, e in self.entries.items()], id="evidence-list"
        )
        self.detail = EvidenceDetail(id="evidence-detail")

    def compose(self) -> ComposeResult:
        with Vertical(id="evidence-dialog", classes="dialog"):
            yield self.title_bar
            with Horizontal(id="evidence-body"):
                yield self.options
                yield self.detail
            yield Footer()

    def on_mount(self) -> None:
        if self.selected is not None:
            self.options.highlighted = self.options.get_option_index(self.selected)
            self.show(self.selected)
        else:
            self.title_bar.update(f"{self.heading}: none yet")
        self.call_after_refresh(self.options.focus)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id is not None:
            self.show(event.option.id)

    def show(self, ident: str) -> None:
        self.selected = ident
        entry = self.entries[ident]
        if ident.startswith("R"):
            self.detail.show(
                entry,
                document=self.document(ident) if self.document else None,
                full_text=self.full_text(ident) if self.full_text else None,
            )
        else:
            envelope = self.full_result(ident) if self.full_result else None
            self.detail.show(entry, envelope=envelope, raw=self.raw)

    def action_toggle_raw(self) -> None:
        """Evidence: switch between the rendered result and its raw JSON."""
        if self.selected is not None and self.selected.startswith("E"):
            self.raw = not self.raw
            self.show(self.selected)

    def action_scroll_detail(self, pages: int) -> None:
        """Scroll the shown entry by a page (the list keeps the focus)."""
        if pages > 0:
            self.detail.scroll_page_down(animate=False)
        else:
            self.detail.scroll_page_up(animate=False)

    def action_copy(self) -> None:
        if self.selected is not None:
            self.app.copy_to_clipboard(self.entries[self.selected].excerpt or "")
            self.notify(f"{self.selected} copied to the clipboard")

    def action_close(self) -> None:
        self.dismiss(None)
