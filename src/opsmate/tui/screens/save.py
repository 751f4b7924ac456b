"""The save dialog: where to write the report (Markdown and JSON side by side).

The path typed is a base name: ``incident.md`` or ``incident`` both write
``incident.md`` and ``incident.json``. Enter saves, Esc cancels.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static


class SaveScreen(ModalScreen[Path | None]):
    """Ask for a file name; dismissed with the Path (or None when cancelled)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, default: Path) -> None:
        super().__init__(id="save-screen")
        self.default = default
        self._path = Input(str(default), id="save-path")

    def compose(self) -> ComposeResult:
        with Vertical(id="save-dialog", classes="dialog"):
            yield Static("Save the report", classes="dialog-title")
            yield Static(
                "Writes NAME.md (for people) and NAME.json (contract format) side by side; "
                "NAME.tar.gz saves the investigation as a replayable bundle."
            )
            yield self._path
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Save", variant="primary", id="save")

    def on_mount(self) -> None:
        self.call_after_refresh(self._path.focus)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._finish(event.value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self._finish(self._path.value)
        else:
            self.dismiss(None)

    def _finish(self, value: str) -> None:
        value = value.strip()
        if not value:
            self.notify("type a file name", severity="warning")
            return
        self.dismiss(Path(value).expanduser())

    def action_cancel(self) -> None:
        self.dismiss(None)
