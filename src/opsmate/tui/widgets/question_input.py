"""The question line: an Input with shell-like history (Up / Down).

Up recalls earlier questions, newest first; Down walks forward again and finally
restores what was being typed. Submitting adds the text to the history (not
repeating the previous entry). The history lives for the app's lifetime and is
seeded from a resumed session's questions. ``?`` on an empty line opens the key help.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.widgets import Input


class QuestionInput(Input):
    """An Input for questions and follow-ups, with history on Up / Down."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "history(-1)", "Previous question", show=False),
        Binding("down", "history(1)", "Next question", show=False),
    ]

    def __init__(self, *, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(placeholder=placeholder, id=id)
        self.history: list[str] = []
        self._pos: int | None = None  # index into history while browsing
        self._draft = ""

    async def _on_key(self, event: events.Key) -> None:
        """``?`` on an empty line opens the key help; anywhere else it is typed (Input's
        own handler runs after this one unless the default is prevented)."""
        if event.character == "?" and not self.value:
            event.stop()
            event.prevent_default()
            await self.run_action("app.help")

    def remember(self, text: str) -> None:
        """Add a submitted question to the history."""
        text = text.strip()
        if text and (not self.history or self.history[-1] != text):
            self.history.append(text)
        self._pos = None
        self._draft = ""

    def seed(self, questions: list[str]) -> None:
        for q in questions:
            self.remember(q)

    def action_history(self, direction: int) -> None:
        """Move through the history: -1 older, +1 newer (past the newest: the draft)."""
        if not self.history:
            return
        if self._pos is None:
            if direction > 0:
                return
            self._draft = self.value
            self._pos = len(self.history) - 1
        else:
            self._pos += direction
        if self._pos < 0:
            self._pos = 0
        if self._pos >= len(self.history):
            self._pos = None
            self.value = self._draft
        else:
            self.value = self.history[self._pos]
        self.cursor_position = len(self.value)
