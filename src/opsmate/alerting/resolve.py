"""From ``diagnose --alert`` / ``--alert-file`` to an :class:`~.incident.Incident`.

``--alert NAME_OR_FINGERPRINT`` reads the firing alerts of the environment's
Alertmanager (live) and takes the alert with that fingerprint, else every firing alert
of that name (one incident; silenced ones too, said in a note). ``--alert-file FILE``
reads an Alertmanager webhook body (version 4). :func:`alert_options` then gives
``diagnose`` the question, environment and preferred runbooks.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from opsmate.alerting.incident import Incident, build_incident
from opsmate.alerting.webhook import read_webhook_file
from opsmate.config import Settings
from opsmate.errors import InputError, UsageError
from opsmate.tools.alertmanager.model import Alert
from opsmate.tools.base import ToolFailure


def select_alerts(alerts: list[Alert], ref: str) -> list[Alert]:
    """The alert whose fingerprint is ``ref``, else the alerts named ``ref`` (any case)."""
    by_fp = [a for a in alerts if a.fingerprint and a.fingerprint == ref]
    if by_fp:
        return by_fp[:1]
    return [a for a in alerts if a.name == ref] or [
        a for a in alerts if a.name.lower() == ref.lower()
    ]


def live_alerts(settings: Settings, ref: str, env: str | None) -> list[Alert]:
    """The firing alerts ``ref`` names in the environment's Alertmanager (InputError: none)."""
    from opsmate.tools.alertmanager.client import client_for, unreachable_error

    client = client_for(settings, env)
    try:
        alerts = client.alerts()
    except ToolFailure as exc:
        raise unreachable_error(exc) from exc
    found = select_alerts(alerts, ref)
    if not found:
        names = sorted({a.name for a in alerts})
        raise InputError(
            f"--alert {ref}: no firing alert has that name or fingerprint in "
            f"{client.url} (firing: {', '.join(names) or 'none'})",
            hint="list them with: opsmate alerts",
        )
    return found


@dataclass
class AlertOptions:
    """What ``diagnose`` takes from the alerts."""

    question: str
    env: str | None
    preferred_runbooks: list[str] = field(default_factory=list)
    incident: Incident | None = None


def load_incident(
    settings: Settings,
    *,
    alert: str | None,
    alert_file: Path | None,
    env: str | None,
    offline: bool,
) -> Incident:
    """The incident of ``--alert`` (live) or ``--alert-file``."""
    if alert is not None and alert_file is not None:
        raise UsageError("--alert and --alert-file are exclusive")
    if alert is not None:
        if offline:
            raise UsageError(
                "--alert reads the live Alertmanager; with --bundle or --demo give the alert "
                "as a webhook body: --alert-file FILE"
            )
        alerts = live_alerts(settings, alert, env)
    else:
        assert alert_file is not None
        alerts = read_webhook_file(alert_file).alerts
    return build_incident(
        alerts, config=settings.alerting, known_environments=settings.environments
    )


def alert_options(
    settings: Settings,
    *,
    question: str | None,
    env: str | None,
    alert: str | None,
    alert_file: Path | None,
    offline: bool,
) -> AlertOptions:
    """Question, environment and preferred runbooks for ``diagnose`` from the alerts.

    A typed question is kept and follows the alert's description; ``--env`` wins over
    the environment the alert's labels name. Notes go to stderr."""
    incident = load_incident(settings, alert=alert, alert_file=alert_file, env=env, offline=offline)
    for note in incident.notes:
        sys.stderr.write(f"opsmate: {note}\n")
    text = incident.question
    if question and question.strip():
        text = f"{text} {question.strip()}"
    return AlertOptions(
        question=text,
        env=env or incident.environment,
        preferred_runbooks=list(incident.runbook_urls),
        incident=incident,
    )
