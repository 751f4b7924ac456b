"""The app's actions (bindings and command palette) and the workers they start.

:class:`AppActions` is the half of the app a person drives: stop, open evidence
or runbooks, save or copy the report, new investigation, resume a session, switch
bundle, quit. :class:`~opsmate.tui.app.OpsmateApp` adds composition and the
handlers of engine messages. Workers run the bridge in threads and never touch
widgets.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App, SystemCommand
from textual.screen import Screen
from textual.worker import Worker

from opsmate.tui import messages as m
from opsmate.tui.bridge import Bridge, LaunchOptions
from opsmate.tui.display import Formatter
from opsmate.tui.screens.main import MainScreen


class AppActions(App[None]):
    """Actions, palette commands and workers (state is set up by OpsmateApp)."""

    bridge: Bridge
    formatter: Formatter
    evidence: dict[str, Any]
    report: Any
    sessions: list[dict[str, Any]]
    session_id: str
    ready: bool
    investigation: Worker[None] | None
    _main: MainScreen
    _open_error: str | None  # why nothing is open (None while a session opens or is open)

    @property
    def main(self) -> MainScreen:
        return self._main

    # -- workers ----------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="session")
    def open_session(self, options: LaunchOptions | None = None) -> None:
        self.bridge.open(options)

    @work(thread=True, exclusive=True, exit_on_error=False, group="session")
    def resume_session(self, session_id: str) -> None:
        self.bridge.resume(session_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="sessions")
    def list_sessions(self) -> None:
        self.bridge.list_sessions()

    @work(thread=True, exclusive=True, exit_on_error=False, group="engine")
    def investigate(self, question: str | None) -> None:
        self.bridge.ask(question)

    def begin_open(self) -> None:
        """A session starts opening: questions asked now wait for it (not refused)."""
        self.ready = False
        self._open_error = None
        self.main.header.loading = True

    # -- actions ------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """True: enabled; None: shown dimmed; False: hidden (the footer fits 80 columns)."""
        if action == "stop":
            return self.bridge.running
        if action in ("save", "copy_report", "full_report"):
            return True if self.report is not None else None
        if action in ("new", "resume", "switch_bundle"):
            return not self.bridge.running
        if action in ("evidence", "runbooks"):
            kind = "E" if action == "evidence" else "R"
            return True if any(i.startswith(kind) for i in self.evidence) else None
        return True

    def disabled_reason(self, action: str) -> str | None:
        """What to say when the key of a dimmed or hidden action is pressed (None: say
        nothing): a key that does nothing must not look broken."""
        if action in ("save", "copy_report", "full_report") and self.report is None:
            return "No report yet: ask a question first."
        if action in ("evidence", "runbooks"):
            what = "evidence" if action == "evidence" else "runbooks"
            return f"No {what} yet: ask a question first."
        if action in ("new", "resume", "switch_bundle") and self.bridge.running:
            return "An investigation is running: press Esc to stop it first."
        return None

    async def run_action(
        self,
        action: str | Any,
        default_namespace: Any = None,
        namespaces: Any = None,
    ) -> bool:
        """Run ``action``; the app's own action whose key is dimmed or hidden says why
        instead of doing nothing."""
        own = default_namespace is None or default_namespace is self
        simple = own and isinstance(action, str) and action.isidentifier()
        if simple and not self.check_action(action, ()):
            why = self.disabled_reason(action)
            if why is not None:
                self.notify(why, severity="warning")
                return True
        return await super().run_action(action, default_namespace, namespaces)

    def action_help(self) -> None:
        """opsmate's key help: every key and what it does."""
        from opsmate.tui.screens.help import HelpScreen, key_rows

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(key_rows(self)))

    def action_stop(self) -> None:
        """Stop the running investigation at its next safe point; what was found is kept."""
        if not self.bridge.cancel():
            return
        if self.investigation is not None:
            self.investigation.cancel()
        self.notify("Stopping after the current step…")

    def action_open_evidence(self, ident: str) -> None:
        from opsmate.tui.screens.evidence import EvidenceScreen

        if ident not in self.evidence:
            self.notify(f"{ident} is not known (yet) in this session", severity="warning")
            return
        kind = ident[0]
        entries = [e for i, e in sorted(self.evidence.items(), key=_id_order) if i[0] == kind]
        title = "Evidence" if kind == "E" else "Runbooks"
        self.push_screen(
            EvidenceScreen(
                entries,
                ident,
                title=title,
                full_text=self._runbook_text,
                full_result=self.bridge.full_result,
                document=self.bridge.runbook_document,
            )
        )

    def _open_kind(self, kind: str) -> None:
        ids = [i for i in sorted(self.evidence, key=lambda x: _id_order((x, None))) if i[0] == kind]
        if not ids:
            what = "evidence" if kind == "E" else "runbooks"
            self.notify(f"No {what} yet: ask a question first.", severity="warning")
            return
        self.action_open_evidence(ids[0])

    def action_evidence(self) -> None:
        self._open_kind("E")

    def action_runbooks(self) -> None:
        self._open_kind("R")

    def _runbook_text(self, ident: str) -> str | None:
        """The whole runbook behind ``ident``, redacted and without terminal control."""
        from opsmate.tools.redact import clean

        session = self.bridge.session
        text = session.store.runbook_text.get(ident) if session is not None else None
        return clean(text, session.sources.executor.redactor) if session and text else text

    def action_save(self) -> None:
        from opsmate.tui.screens.save import SaveScreen

        if self.report is None:
            return
        self.push_screen(
            SaveScreen(Path.cwd() / f"opsmate-report-{self.session_id or 'latest'}"), self._save_to
        )

    def _save_to(self, target: Path | None) -> None:
        if target is None:
            return
        try:
            written = self.bridge.save_report(target)
        except Exception as exc:  # disk full, no permission: say so, keep going
            self.notify(str(exc), title="The report was not saved", severity="error")
            return
        self.notify("\n".join(str(p) for p in written), title="Report saved")
        self.post_message(m.ReportSaved([str(p) for p in written]))

    def action_copy_report(self) -> None:
        from opsmate.agent.report.model import render_markdown

        if self.report is not None:
            self.copy_to_clipboard(render_markdown(self.report))
            self.notify("The report (Markdown) was copied to the clipboard.")

    def action_full_report(self) -> None:
        """The whole report of the latest answer, in a screen of its own."""
        from opsmate.tui.screens.report import ReportScreen

        if self.report is not None and not isinstance(self.screen, ReportScreen):
            self.push_screen(ReportScreen(self.formatter.full_report_markdown(self.report)))

    def action_new(self) -> None:
        if self.bridge.running:
            return
        self.begin_open()
        self.open_session(self.bridge.options)

    def action_resume(self) -> None:
        from opsmate.tui.screens.sessions import SessionsScreen

        if not self.bridge.running:
            self.push_screen(SessionsScreen(self.sessions, self.formatter), self._resume_chosen)

    def action_resume_id(self, session_id: str) -> None:
        self._resume_chosen(session_id)

    def _resume_chosen(self, session_id: str | None) -> None:
        if session_id and not self.bridge.running:
            self.begin_open()
            self.resume_session(session_id)

    def action_switch_bundle(self) -> None:
        from opsmate.paths import demo_dir
        from opsmate.tui.screens.bundle import BundleScreen

        if not self.bridge.running:
            self.push_screen(BundleScreen(demo_dir()), self._bundle_chosen)

    def _bundle_chosen(self, path: Path | None) -> None:
        if path is not None:
            self.begin_open()
            self.open_session(replace(self.bridge.options, bundle=path, demo=False))

    async def action_quit(self) -> None:
        self.bridge.cancel()
        self.exit()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Keys", "Every key and what it does (? or F1)", self.action_help)
        yield SystemCommand("Stop", "Stop the running investigation (state kept)", self.action_stop)
        yield SystemCommand("Evidence", "Open the evidence viewer", self.action_evidence)
        yield SystemCommand("Runbooks", "Open the runbooks consulted", self.action_runbooks)
        yield SystemCommand(
            "Save report", "Write the report as Markdown and JSON", self.action_save
        )
        yield SystemCommand(
            "Copy report", "Copy the report (Markdown) to the clipboard", self.action_copy_report
        )
        yield SystemCommand(
            "Full report", "The whole report of the latest answer", self.action_full_report
        )
        yield SystemCommand("New investigation", "Start over on the same source", self.action_new)
        yield SystemCommand("Resume session", "Resume a saved session", self.action_resume)
        yield SystemCommand(
            "Switch bundle", "Investigate a demo bundle or a bundle path", self.action_switch_bundle
        )
        yield SystemCommand(
            "Toggle light/dark", "Switch between the light and dark theme", self.action_toggle_dark
        )
        for ident, entry in sorted(self.evidence.items(), key=_id_order):
            what = getattr(entry, "tool", None) or getattr(entry, "source", "")
            yield SystemCommand(
                f"Open {ident}",
                f"{ident}: {what}",
                lambda i=ident: self.action_open_evidence(i),
                discover=False,
            )


def _id_order(item: tuple[str, Any]) -> tuple[str, int]:
    """Sort key of ``(id, entry)``: E before R, then by number (E2 before E10)."""
    ident = item[0]
    return ident[0], int(ident[1:]) if ident[1:].isdigit() else 0
