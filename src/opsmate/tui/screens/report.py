"""The whole report in a screen of its own (a follow-up's answer shows first; this is one
key away: ``ctrl+f``)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Markdown


class ReportScreen(ModalScreen[None]):
    """The full report, scrollable; Esc (or ctrl+f again) closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("ctrl+f", "close", "Close", show=False),
    ]

    def __init__(self, markdown: str) -> None:
        super().__init__(id="report-screen")
        self.markdown = markdown

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="report-dialog", classes="dialog"):
            yield Markdown(self.markdown, id="report-full")
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)
