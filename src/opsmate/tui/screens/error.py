"""A modal that explains an error: what happened and what to do. Never a traceback.

``choices`` adds buttons beside OK (for example "Continue without a model"); the
screen is dismissed with the chosen value (``None`` for OK / Esc).
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ErrorScreen(ModalScreen[str | None]):
    """Title, message and a "what to do" line, with OK and optional extra choices."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(
        self, title: str, message: str, hint: str = "", choices: list[tuple[str, str]] | None = None
    ) -> None:
        super().__init__(id="error-screen")
        self.heading = title
        self.message = message
        self.hint = hint
        self.choices = choices or []
        self._ok = Button("OK", variant="primary", id="ok")

    def compose(self) -> ComposeResult:
        with Vertical(id="error-dialog", classes="dialog"):
            yield Static(
                Content.from_markup("[b]✗ $t[/b]", t=self.heading),
                classes="dialog-title",
                id="error-title",
            )
            yield Static(self.message, markup=False, id="error-message")
            if self.hint:
                yield Static(
                    Content.from_markup("[b]What to do:[/b] $h", h=self.hint), id="error-hint"
                )
            with Horizontal(classes="buttons"):
                for label, value in self.choices:
                    yield Button(label, id=f"choice-{value}", classes="choice")
                yield self._ok

    def on_mount(self) -> None:
        # children of nested containers may mount after this screen: focus after a refresh
        self.call_after_refresh(self._ok.focus)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        ident = event.button.id or ""
        self.dismiss(ident.removeprefix("choice-") if ident.startswith("choice-") else None)

    def action_close(self) -> None:
        self.dismiss(None)
