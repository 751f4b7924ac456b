"""The Textual app: composition, bindings, commands and message handlers. No investigation logic.

Workers (threads) run the :class:`~opsmate.tui.bridge.Bridge`, which drives the
engine's Session and posts :mod:`opsmate.tui.messages`; the handlers here update
the widgets. The UI thread never waits on the engine, so keys work while a slow
model runs. Errors arrive as ``EngineFailed`` and become a modal or a notification.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import Input, Markdown
from textual.worker import Worker

from opsmate.tui import messages as m
from opsmate.tui.actions import AppActions
from opsmate.tui.bridge import SETUP_HINT, Bridge, LaunchOptions
from opsmate.tui.display import Formatter
from opsmate.tui.screens.main import MainScreen
from opsmate.tui.widgets.transcript import ReportEntry

# benchmarks/bench_tui_startup.py: write the times of construction, first paint and (with
# ..._UNTIL=ready) the session being open to this file as JSON, then exit
STARTUP_PROBE_ENV = "OPSMATE_TUI_STARTUP_PROBE"
STARTUP_PROBE_UNTIL_ENV = "OPSMATE_TUI_STARTUP_PROBE_UNTIL"
_ID_ONLY = re.compile(r"^[ERer]\d+$")
_SAFE_ID = re.compile(r"^[A-Za-z0-9_.-]+$")  # session ids that may go into a markup action
# which budget a turn ran out of (``stopped_by``; never a status: the status is the report's)
_BUDGETS = {
    "max_steps": ("step", "budget.max_steps"),
    "token_budget": ("token", "budget.max_tokens"),
    "timeout": ("time", "budget.timeout_seconds"),
}


class OpsmateApp(AppActions):
    """``opsmate tui``: investigate, watch each step, inspect evidence, leave with a report."""

    TITLE = "opsmate"
    CSS_PATH = "theme.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        # the footer shows what fits 80 columns (a hidden key is in the help and the palette):
        # f1 Help, esc Stop (while running), ^b Bundle (else), ^g ^r ^s ^f, ^q Quit
        Binding("f1", "help", "Help"),
        Binding("question_mark", "help", "Help", show=False),
        Binding("escape", "stop", "Stop"),
        Binding("ctrl+b", "switch_bundle", "Bundle"),
        Binding("ctrl+g", "evidence", "Evidence"),
        Binding("ctrl+r", "runbooks", "Runbooks"),
        Binding("ctrl+s", "save", "Save"),
        Binding("ctrl+f", "full_report", "Report"),
        Binding("f2", "alerts", "Alerts"),
        Binding("ctrl+n", "new", "New", show=False),
        Binding("ctrl+o", "resume", "Resume", show=False),
        Binding("ctrl+y", "copy_report", "Copy report", show=False),
        Binding("ctrl+t", "toggle_dark", "Theme", show=False),
        # priority: checked before any screen's bindings, so it quits from modal screens
        # (evidence and runbook viewers, dialogs) too
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(
        self, options: LaunchOptions | None = None, *, formatter: Formatter | None = None
    ) -> None:
        super().__init__()
        self.options = options or LaunchOptions()
        self.formatter = formatter or Formatter()
        self.bridge = Bridge(self.options, self.post_message)
        self.evidence: dict[str, Any] = {}
        self.report: Any = None
        self.current_turn = 0
        self.sessions: list[dict[str, Any]] = []
        self.ready = False
        self.session_id = ""
        self.default_question: str | None = None
        self.investigation: Worker[None] | None = None
        self._pending: str | None = None  # asked before the session was open
        self._open_error: str | None = None  # why no session could be opened
        self._open_notes: list[m.EngineNotice] = []  # notices while a session opens
        self._probe: dict[str, float] = {"app_created": time.time()}

    # -- composition ----------------------------------------------------------------------
    async def on_mount(self) -> None:
        self._main = MainScreen(self.formatter)
        await self.push_screen(self._main)
        header = self.main.header
        header.target = self.options.target_title()
        header.model = self.options.model or "default"
        header.loading = True
        self.main.state_pane.preset(self.options.env)
        self._welcome()
        if os.environ.get(STARTUP_PROBE_ENV):
            self.call_after_refresh(self._startup_probe)
        # the engine's imports and the bundle load start once the first frame is out
        self.call_after_refresh(self.open_session)
        self.call_after_refresh(self.list_sessions)

    def _startup_probe(self, event: str = "first_paint") -> None:
        self._probe[event] = time.time()
        until = os.environ.get(STARTUP_PROBE_UNTIL_ENV, "first_paint")
        if event == until or (until == "session_ready" and event == "failed"):
            Path(os.environ[STARTUP_PROBE_ENV]).write_text(json.dumps(self._probe))
            self.bridge.cancel()
            self.exit()

    def _welcome(self) -> None:
        lines = [Content.from_markup("[b]opsmate[/b] — read-only investigation assistant")]
        if self._open_error and not self.ready:
            self.main.transcript.add_welcome(
                Content.from_markup(
                    "[b]opsmate[/b] — read-only investigation assistant\n\n"
                    "[$warning]$e[/]\n\nWhat to do:\n"
                    "  [b]open a bundle:[/b] ctrl+b  [dim](the demo bundles are listed there)[/]\n"
                    "  [b]configure sources:[/b] `opsmate doctor`  [dim](says what the config "
                    "needs)[/]\n  [b]resume a saved session:[/b] ctrl+o\n\n"
                    "[dim]Every key: ? or F1.[/]",
                    e=self._open_error,
                ),
                wrap=True,
            )
            return
        elif not self.ready:
            lines.append(Content.from_markup("[dim]opening $t …[/]", t=self.options.target_title()))
        elif self.default_question:
            lines.append(
                Content.from_markup(
                    "Press [b]Enter[/b] to investigate: [i]$q[/]", q=self.default_question
                )
            )
        else:
            lines.append(
                Content("Type a question below, e.g. “checkout 5xx since 10:00, test only”.")
            )
        if self.sessions:
            lines.append(Content.from_markup("[b]Saved sessions[/b] [dim](ctrl+o to resume)[/]"))
            for s in self.sessions[:4]:
                when = self.formatter.timestamp(s.get("saved_at"))
                goal = str(s.get("goal") or "")[:70]
                sid = str(s.get("id"))
                link = f"@click=app.resume_id('{sid}')" if _SAFE_ID.match(sid) else "dim"
                lines.append(Content.from_markup(f"  [{link}]$when $goal[/]", when=when, goal=goal))
        self.main.transcript.add_welcome(Content("\n").join(lines))

    def action_alerts(self) -> None:
        """The firing alerts of the configured Alertmanager; Enter investigates one."""
        from opsmate.tui.screens.alerts import open_alerts

        open_alerts(self)

    # -- input ------------------------------------------------------------------------------
    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "question":
            return
        text = event.value.strip()
        if _ID_ONLY.match(text):
            self.main.question.value = ""
            self.action_open_evidence(text.upper())
            return
        if self.bridge.running:
            self.notify(
                "An investigation is running: press Esc to stop it first.", severity="warning"
            )
            return
        if not text and (self.report is not None or (self.ready and not self.default_question)):
            return
        if not self.ready and self._open_error is not None:
            # nothing is opening: say what to do now; the text stays in the question line
            self.notify(
                f"{self._open_error}\n{SETUP_HINT}", title="Nothing to ask yet", severity="warning"
            )
            return
        self.main.question.remember(text)
        self.main.question.value = ""
        if not self.ready:
            self._pending = text
            self.notify("The session is still opening: the question runs as soon as it is ready.")
            return
        self.investigation = self.investigate(text or None)

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        if event.href.startswith("opsmate:"):
            self.action_open_evidence(event.href.removeprefix("opsmate:"))

    # -- engine messages ----------------------------------------------------------------------
    def on_setup_needed(self, msg: m.SetupNeeded) -> None:
        """No bundle and no configured source: the main screen says what to do."""
        self.main.header.loading = False
        self.main.header.target = "nothing open"  # not "live sources": none is configured
        self._pending = None
        self._open_error = msg.reason
        self._welcome()
        self.main.state_pane.nothing_open()
        self.refresh_bindings()
        if os.environ.get(STARTUP_PROBE_ENV):
            self._startup_probe("failed")

    def on_session_opened(self, msg: m.SessionOpened) -> None:
        self.ready = True
        self._open_error = None
        self.session_id = msg.session_id
        self.default_question = msg.default_question
        self.evidence.clear()
        self.report = None
        header = self.main.header
        header.loading = False
        header.status = ""
        header.target = msg.title
        header.model = msg.model
        self.main.transcript.clear()
        self.main.state_pane.reset(msg.environment)
        self._welcome()
        notes, self._open_notes = self._open_notes, []
        for note in notes:
            self.on_engine_notice(note)
        self.refresh_bindings()
        if os.environ.get(STARTUP_PROBE_ENV):
            self._startup_probe("session_ready")
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self.investigation = self.investigate(pending or None)

    async def on_session_restored(self, msg: m.SessionRestored) -> None:
        self.main.question.seed(msg.questions)
        for e in [*msg.evidence, *msg.runbooks]:
            self.evidence[e.id] = e
        transcript = self.main.transcript
        transcript.add_notice(
            "info",
            f"resumed session {self.session_id}: {len(msg.evidence)} evidence, "
            f"{len(msg.reports)} report(s); ask a follow-up to continue",
        )
        entry = None
        for report in msg.reports:
            transcript.add_question(report.question, follow_up=False)
            entry = await transcript.add_report(self.formatter.report_markdown(report))
            self.report = report
        if msg.state is not None and self.report is not None:
            b = self.report.budget
            self.main.state_pane.show(
                msg.state, msg.runbooks, b.steps, b.max_steps, b.tokens, b.seconds
            )
        if entry is not None:
            self.call_after_refresh(transcript.show_report_top, entry)
        if self.report is not None:
            self.main.header.status = self.report.status
        self.main.header.status = self.report.status if self.report is not None else ""
        self.refresh_bindings()

    def on_health_checked(self, msg: m.HealthChecked) -> None:
        self.main.header.set_checks(msg.checks)

    def on_sessions_listed(self, msg: m.SessionsListed) -> None:
        self.sessions = msg.sessions
        if self.report is None and not self.bridge.running:
            self._welcome()

    def on_turn_started(self, msg: m.TurnStarted) -> None:
        self.current_turn = msg.turn
        self.main.header.busy = True
        self.main.transcript.add_question(msg.question, msg.follow_up)
        self.refresh_bindings()

    def on_step_announced(self, msg: m.StepAnnounced) -> None:
        if msg.turn == self.current_turn:
            self.main.transcript.add_step(
                msg.turn, msg.step, msg.tool, msg.args, msg.reason, msg.source
            )

    def on_tool_started(self, msg: m.ToolStarted) -> None:
        if msg.turn == self.current_turn:
            self.main.transcript.step_started(msg.turn, msg.step, msg.call_id)

    def on_tool_finished(self, msg: m.ToolFinished) -> None:
        if msg.turn != self.current_turn:
            return
        if msg.evidence is not None:
            first = not any(i.startswith("E") for i in self.evidence)
            self.evidence[msg.evidence.id] = msg.evidence
            if first:
                self.refresh_bindings()  # ctrl+g Evidence is no longer dimmed
        self.main.transcript.step_finished(
            msg.turn,
            msg.step,
            msg.status,
            msg.elapsed_ms,
            msg.summary,
            msg.evidence_id,
            msg.rejected_reason,
        )
        if msg.status == "error":
            self.notify(
                f"{msg.summary}\nSee the source health in the header; `opsmate doctor` helps.",
                title=f"{msg.call_id} failed",
                severity="warning",
            )

    def on_model_stream(self, msg: m.ModelStream) -> None:
        if msg.turn == self.current_turn:
            self.main.transcript.model_text(msg.turn, msg.stream, msg.purpose, msg.text)

    def on_state_updated(self, msg: m.StateUpdated) -> None:
        if msg.turn != self.current_turn:
            return
        first = msg.runbooks and not any(i.startswith("R") for i in self.evidence)
        for r in msg.runbooks:
            self.evidence.setdefault(r.id, r)
        if first:
            self.refresh_bindings()
        self.main.state_pane.show(
            msg.state, msg.runbooks, msg.steps, msg.max_steps, msg.tokens, msg.seconds
        )

    async def on_report_arrived(self, msg: m.ReportArrived) -> None:
        if msg.turn != self.current_turn:
            return
        report = self.report = msg.report
        for e in [*report.evidence, *report.runbooks]:
            self.evidence[e.id] = e
        b = report.budget
        self.main.header.status = report.status
        self.main.state_pane.show_budget(b.steps, b.max_steps, b.tokens, b.seconds)
        # a follow-up shows its answer; the whole report is one key away (ctrl+f)
        shown = (
            self.formatter.follow_up_markdown(report)
            if getattr(report, "follow_up", None) is not None
            else self.formatter.report_markdown(report)
        )
        entry: ReportEntry = await self.main.transcript.add_report(shown)
        self.call_after_refresh(self.main.transcript.show_report_top, entry)
        self.refresh_bindings()

    def on_engine_notice(self, msg: m.EngineNotice) -> None:
        if not self.ready:  # said while the session opens: shown once it is open
            self._open_notes.append(msg)
            return
        self.main.transcript.add_notice(msg.level, msg.text)
        if msg.level in ("warning", "error"):
            self.notify(msg.text, severity="warning" if msg.level == "warning" else "error")

    def on_turn_ended(self, msg: m.TurnEnded) -> None:
        self.main.header.busy = False
        if msg.report is not None and msg.turn == self.current_turn:
            self.report = msg.report  # the final report: copy and save give what was saved
            self.main.header.status = msg.report.status
        if msg.stopped_by == "cancelled":
            self.main.transcript.turn_stopped(msg.turn)
            self.notify(
                f"Stopped; the report's status is {msg.status}. Everything found so far is "
                "kept; ask a follow-up to continue."
            )
        elif msg.stopped_by in _BUDGETS and not self._answered_from_state(msg.report):
            self._budget_notice(msg.stopped_by, msg.status, follow_up=_is_follow_up(msg.report))
        self.refresh_bindings()
        self.list_sessions()

    @staticmethod
    def _answered_from_state(report: Any) -> bool:
        """A follow-up answered from what was already read: nothing ran, no budget was used
        (its report carries the previous turn's budget)."""
        fu = getattr(report, "follow_up", None)
        return fu is not None and not fu.new_calls

    def _budget_notice(self, stopped_by: str, status: str, *, follow_up: bool = False) -> None:
        """Which budget ran out, said in the words of the report's status (one status). After
        a follow-up it is said in the transcript, under the answer: a toast would cover it."""
        what, key = _BUDGETS[stopped_by]
        if status == "complete":
            text = (
                f"Status complete: the cause is confirmed. The {what} budget ran out before "
                "every pending check ran; ask a follow-up to run them."
            )
            level = "information"
        else:
            text = (
                f"Status {status}: the {what} budget ran out first. Ask a follow-up, or raise "
                f"{key}."
            )
            level = "warning"
        if follow_up:
            self.main.transcript.add_notice("info" if level == "information" else level, text)
            return
        title = f"The {what} budget is used up"
        if level == "information":
            self.notify(text, title=title)
        else:
            self.notify(text, title=title, severity="warning", timeout=10)

    def on_engine_failed(self, msg: m.EngineFailed) -> None:
        from opsmate.tui.screens.error import ErrorScreen

        self.main.header.loading = False
        self._pending = None
        if os.environ.get(STARTUP_PROBE_ENV):
            self._startup_probe("failed")
        if msg.kind == "input" and self.ready:
            self.notify(f"{msg.message}\n{msg.hint}".strip(), title=msg.title, severity="error")
            return
        choices: list[tuple[str, str]] = []
        if msg.kind == "model":
            choices.append(("Continue without a model", "no-model"))
        if not self.ready and msg.turn is None:
            self._open_error = msg.message
            self._open_notes.clear()
            self._welcome()
            if msg.kind in ("config", "bundle"):
                choices.append(("Open the demo bundle", "demo"))
        self.push_screen(ErrorScreen(msg.title, msg.message, msg.hint, choices), self._after_error)

    def _after_error(self, choice: str | None) -> None:
        options = {
            "no-model": replace(self.bridge.options, model="none"),
            "demo": replace(self.bridge.options, bundle=None, demo=True),
        }.get(choice or "")
        if options is not None:
            self.begin_open()
            self.open_session(options)


def _is_follow_up(report: Any) -> bool:
    return getattr(report, "follow_up", None) is not None
