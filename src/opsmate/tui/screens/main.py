"""The main screen: header, transcript beside the task-state pane, question line, footer.

At 80 columns the state pane takes its minimum width and the footer gets compact
(without the palette key, so the keys it shows fit whole);
on short terminals the question line loses its border (see ``theme.tcss``). The
question line keeps the focus, so a person can type at once; Tab moves to the
transcript and the state pane for scrolling.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer

from opsmate.tui.display import Formatter
from opsmate.tui.widgets.header import HeaderBar
from opsmate.tui.widgets.question_input import QuestionInput
from opsmate.tui.widgets.state_pane import StatePane
from opsmate.tui.widgets.transcript import Transcript

PLACEHOLDER = "Ask a question or a follow-up (Enter) · ↑/↓ history · E3 opens evidence"


class MainScreen(Screen[None]):
    """The investigation screen; the app fills its widgets from engine messages."""

    AUTO_FOCUS = "#question"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]

    def __init__(self, formatter: Formatter) -> None:
        super().__init__(id="main")
        self.formatter = formatter
        # built here, so the app can fill them before they have mounted
        self.header = HeaderBar(formatter, id="header")
        self.transcript = Transcript(formatter, id="transcript")
        self.state_pane = StatePane(formatter, id="state")
        self.question = QuestionInput(placeholder=PLACEHOLDER, id="question")
        self.footer = Footer()

    def compose(self) -> ComposeResult:
        yield self.header
        with Horizontal(id="body"):
            yield self.transcript
            yield self.state_pane
        yield self.question
        yield self.footer

    def on_resize(self, event: events.Resize) -> None:
        # below 100 columns the footer is compact and leaves out the palette key (ctrl+p,
        # listed in the key help), so that every key it shows fits whole
        narrow = event.size.width < 100
        self.footer.compact = narrow
        self.footer.show_command_palette = not narrow
