"""opsmate's own key help (``?`` or F1): every key and what it does.

The list is built from the app's bindings when it opens, so a binding added later
shows up too (with the longer text of :data:`HELP_TEXT`, else its own description);
keys that are not app bindings (Enter, ↑/↓, typing an id, the viewers' keys) are
listed by hand in :data:`OTHER_KEYS`. Esc, ``?``, F1 or ``q`` close it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

HELP_TEXT: dict[str, str] = {
    "help": "this help",
    "stop": "stop the running investigation at its next safe point; what was found is kept",
    "evidence": "the evidence viewer: every tool result in full, rendered or as raw JSON",
    "runbooks": "the runbooks consulted, rendered as Markdown",
    "save": "save the report as Markdown and JSON (NAME.md and NAME.json)",
    "full_report": "the whole report of the latest answer (a follow-up shows its answer first)",
    "copy_report": "copy the report (Markdown) to the clipboard",
    "switch_bundle": "open a bundle: a demo bundle, or a bundle directory / .tar.gz",
    "new": "a new investigation over the same bundle or sources",
    "resume": "resume a saved session (its state, evidence and reports come back)",
    "toggle_dark": "switch between the light and the dark theme",
    "alerts": "the firing alerts of the configured Alertmanager; Enter investigates one",
    "quit": "quit opsmate (from any screen)",
}

OTHER_KEYS: list[tuple[str, str]] = [
    ("enter", "ask the question typed; empty: the bundle's own question. A follow-up keeps "
     "the constraints, facts and evidence of the session"),
    ("↑ / ↓", "earlier questions (in the question line)"),
    ("E3 / R1, enter", "open that evidence or runbook (clicking an id does the same)"),
    ("? (empty line)", "this help, from the question line"),
    ("ctrl+p", "the command palette: every action, and each evidence id by name"),
    ("tab", "move between the question line, the transcript and the task-state pane"),
    ("esc (in a viewer)", "close the viewer or dialog"),
    ("j", "evidence viewer: switch between the rendered result and its raw JSON"),
    ("pgup / pgdn", "evidence viewer: scroll the result (the list keeps ↑/↓)"),
    ("c", "evidence viewer: copy the excerpt"),
]  # fmt: skip


def key_rows(app: App[Any]) -> list[tuple[str, str]]:
    """``(keys, what they do)`` for every binding of ``app``, in declaration order, then the
    keys that are not bindings. Keys bound to the same action share a row."""
    rows: dict[str, tuple[list[str], str]] = {}
    for item in type(app).BINDINGS:
        if not isinstance(item, Binding):
            key, action, *rest = item
            item = Binding(key, action, rest[0] if rest else "")
        for key in item.key.split(","):
            one = Binding(key.strip(), item.action, item.description, key_display=None)
            shown = item.key_display if item.key_display else app.get_key_display(one)
            keys, _ = rows.setdefault(
                item.action, ([], HELP_TEXT.get(item.action) or item.tooltip or item.description)
            )
            if shown not in keys:
                keys.append(shown)
    out = [(" / ".join(keys), text) for keys, text in rows.values()]
    return out + OTHER_KEYS


class HelpScreen(ModalScreen[None]):
    """The key help: a scrollable table of keys and what each does."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,f1,question_mark", "close", "Close"),
    ]

    def __init__(self, rows: list[tuple[str, str]]) -> None:
        super().__init__(id="help-screen")
        self.rows = rows

    def compose(self) -> ComposeResult:
        from rich.table import Table

        table = Table(box=None, show_header=False, expand=True, pad_edge=False)
        table.add_column("key", style="bold", no_wrap=True, min_width=12)
        table.add_column("what it does", ratio=1)
        for keys, text in self.rows:
            table.add_row(keys, text)
        with Vertical(id="help-dialog", classes="dialog"):
            yield Static("opsmate keys", classes="dialog-title")
            with VerticalScroll(id="help-body"):
                yield Static(table, id="help-table")
            yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)
