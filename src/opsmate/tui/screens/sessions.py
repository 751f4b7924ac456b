"""The saved-sessions list: pick one to resume (its state, evidence and reports return).

Sessions are saved by the engine after every answered question, under the user
data dir; the list is newest first. Enter resumes, Esc closes.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from opsmate.tui.display import Formatter


def session_label(info: dict[str, Any], formatter: Formatter) -> Content:
    """One line for a saved session: when, status, what was asked, over which source."""
    source = info.get("source") or {}
    bundle = source.get("bundle")
    where = ("bundle " + str(bundle).rstrip("/").rsplit("/", 1)[-1]) if bundle else "live"
    return Content.from_markup(
        "[b]$when[/b] [dim]$status · $where[/]\n  $goal",
        when=formatter.timestamp(info.get("saved_at")),
        status=info.get("status") or "no report",
        where=where,
        goal=str(info.get("goal") or "(no question yet)")[:200],
    )


class SessionsScreen(ModalScreen[str | None]):
    """Choose a saved session; dismissed with its id (or None)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(self, sessions: list[dict[str, Any]], formatter: Formatter) -> None:
        super().__init__(id="sessions-screen")
        self.sessions = [s for s in sessions if s.get("id")]
        self.formatter = formatter
        self._list = OptionList(
            *[Option(session_label(s, formatter), id=str(s["id"])) for s in self.sessions],
            id="sessions-list",
        )

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions-dialog", classes="dialog"):
            title = "Resume a session" if self.sessions else "Resume a session: none saved yet"
            yield Static(title, classes="dialog-title")
            yield self._list
            yield Footer()

    def on_mount(self) -> None:
        self.call_after_refresh(self._list.focus)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_close(self) -> None:
        self.dismiss(None)
