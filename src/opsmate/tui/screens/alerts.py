"""The alerts screen: firing alerts of the configured Alertmanager; Enter investigates one.

Opened with its key (shown in the footer). The alerts are read in a thread worker
(:func:`opsmate.alerting.listing.fetch_alerts`: the environment's Alertmanager, else
Prometheus), most severe first, each with its subject labels, age and silence state.
Enter dismisses the screen with the chosen alert turned into an incident
(:func:`opsmate.alerting.incident.build_incident`); :func:`open_alerts` then asks that
question in the open session, with the alert's ``runbook_url`` as the preferred runbook.
Esc closes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from opsmate.alerting.incident import Incident, build_incident
from opsmate.tools.alertmanager.model import Alert


def _age(alert: Alert, now: datetime) -> str:
    from opsmate.alerting.listing import age_text

    return age_text(alert.age_seconds(now))


def alert_label(alert: Alert, now: datetime) -> Content:
    """Two lines: severity, name, age, silence state; the subject labels and summary."""
    state = " · silenced" if alert.silenced else (" · inhibited" if alert.inhibited else "")
    subject = " ".join(f"{k}={v}" for k, v in alert.subject_labels().items())
    summary = alert.annotations.get("summary") or alert.annotations.get("description") or ""
    return Content.from_markup(
        "[b]$name[/b] [dim]$severity · $age$state[/]\n  $subject  $summary",
        name=alert.name,
        severity=alert.severity or "no severity",
        age=_age(alert, now),
        state=state,
        subject=subject or "-",
        summary=summary[:120],
    )


class AlertsScreen(ModalScreen[Incident | None]):
    """Choose a firing alert; dismissed with its incident (or None)."""

    DEFAULT_CSS = """
    #alerts-list { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("r", "reload", "Reload"),
    ]

    def __init__(self, settings: Any, env: str | None) -> None:
        super().__init__(id="alerts-screen")
        self.settings = settings
        self.env = env
        self.alerts: list[Alert] = []
        self._title = Static("Firing alerts: reading…", classes="dialog-title", id="alerts-title")
        self._list = OptionList(id="alerts-list")

    def compose(self) -> ComposeResult:
        with Vertical(id="alerts-dialog", classes="dialog"):
            yield self._title
            yield self._list
            yield Footer()

    def on_mount(self) -> None:
        self.action_reload()

    def action_reload(self) -> None:
        self._title.update("Firing alerts: reading…")
        self._fetch()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _fetch(self) -> None:
        from opsmate.alerting.listing import fetch_alerts
        from opsmate.errors import OpsmateError

        try:
            env, source, alerts = fetch_alerts(self.settings, self.env)
        except OpsmateError as exc:
            self.app.call_from_thread(self._show_error, exc.message, exc.hint or "")
            return
        self.app.call_from_thread(self._show, env, source, alerts)

    def _show(self, env: str, source: str, alerts: list[Alert]) -> None:
        self.alerts = alerts
        now = datetime.now(UTC)
        self._list.clear_options()
        self._list.add_options(
            [Option(alert_label(a, now), id=str(i)) for i, a in enumerate(alerts)]
        )
        if alerts:
            self._list.highlighted = 0
        none = " none firing" if not alerts else f" {len(alerts)}"
        self._title.update(f"Firing alerts in {env} ({source}):{none} · Enter investigates")
        self.call_after_refresh(self._list.focus)

    def _show_error(self, message: str, hint: str) -> None:
        self.alerts = []
        self._list.clear_options()
        self._title.update(Content.from_markup("[b]Alerts unavailable:[/b] $m", m=message))
        if hint:
            self.notify(hint, title="Alerts", severity="warning")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        alert = self.alerts[int(event.option.id or 0)]
        self.dismiss(
            build_incident(
                [alert],
                config=self.settings.alerting,
                known_environments=self.settings.environments,
            )
        )

    def action_close(self) -> None:
        self.dismiss(None)


def open_alerts(app: Any) -> None:
    """Push the alerts screen; investigate the chosen alert in the open session."""
    from opsmate.config import load_settings
    from opsmate.errors import OpsmateError

    if app.bridge.running:
        app.notify("An investigation is running: press Esc to stop it first.", severity="warning")
        return
    options = app.bridge.options
    try:
        settings = load_settings(options.config_path)
    except OpsmateError as exc:
        app.notify(exc.message, title="Alerts", severity="error")
        return

    def chosen(incident: Incident | None) -> None:
        if incident is None or app.bridge.running:
            return
        if not app.ready:
            app.notify("The session is still opening: choose the alert again when it is ready.")
            return
        session = getattr(app.bridge, "session", None)
        engine = getattr(session, "engine", None)
        if engine is not None and session is not None and session.state is None:
            engine.preferred_runbooks = list(incident.runbook_urls)  # a first question only
        app.investigation = app.investigate(incident.question)

    app.push_screen(AlertsScreen(settings, options.env), chosen)
