"""From ``diagnose --alert`` / ``--alert-file`` to an :class:`~.incident.Incident`.

``--alert NAME_OR_FINGERPRINT`` reads the firing alerts of the environment's
Alertmanager (live) and takes the alert with that fingerprint, else every firing alert
of that name (one incident; silenced ones too, said in a note naming the silence, its
author, comment and end). ``--alert-file FILE`` reads an Alertmanager webhook body
(version 4). :func:`alert_options` then gives ``diagnose`` the question, environment
and preferred runbooks, and notes what the reader should know: an alert naming a
namespace the environment's Kubernetes block does not list is investigated in the
configured namespaces.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from opsmate.alerting.incident import Incident, build_incident
from opsmate.alerting.webhook import read_webhook_file
from opsmate.config import Settings
from opsmate.errors import InputError, OpsmateError, UsageError
from opsmate.tools.alertmanager.model import Alert
from opsmate.tools.base import ToolFailure
from opsmate.tools.redact import clean


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


def silence_notes(settings: Settings, alerts: list[Alert], env: str | None) -> list[str]:
    """One note per silenced (or inhibited) alert: which silence, by whom, why, until
    when (the silence is read from the environment's Alertmanager; unreadable: its id)."""
    silenced = [a for a in alerts if a.silenced]
    notes: list[str] = []
    if silenced:
        from opsmate.tools.alertmanager.client import client_for

        try:
            by_id = {s["id"]: s for s in client_for(settings, env).silences()}
        except (ToolFailure, OpsmateError):
            by_id = {}
        for a in silenced:
            parts = []
            for sid in a.silenced_by:
                s = by_id.get(sid) or {}
                text = f"silence {sid}"
                if s.get("created_by"):
                    text += f" by {s['created_by']}"
                if s.get("comment"):
                    text += f" ({_one_line(str(s['comment']))})"
                if s.get("ends_at"):
                    text += f" until {s['ends_at']}"
                parts.append(text)
            notes.append(
                f"{a.name} is silenced ({'; '.join(parts)}): nobody is being notified of it; "
                "investigated anyway"
            )
    for a in alerts:
        if a.inhibited and not a.silenced:
            notes.append(f"{a.name} is inhibited by another alert; investigated anyway")
    return notes


def namespace_notes(settings: Settings, incident: Incident, env: str | None) -> list[str]:
    """A note when the alerts name a namespace the environment's Kubernetes block does not
    list: the investigation stays in the configured namespaces."""
    name = env or settings.default_environment
    cfg = settings.environments.get(name) if name else None
    k8s = cfg.kubernetes if cfg is not None else None
    named = sorted({a.labels["namespace"] for a in incident.alerts if a.labels.get("namespace")})
    if k8s is None or not k8s.namespaces or not named:
        return []
    other = [ns for ns in named if ns not in k8s.namespaces]
    if not other:
        return []
    return [
        f"the alert names namespace {', '.join(other)}, which environments.{name}.kubernetes."
        f"namespaces does not list: investigated in {', '.join(k8s.namespaces)} instead (add "
        f"{other[0]} to that list to investigate it there)"
    ]


def _one_line(text: str, limit: int = 120) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


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
    incident = build_incident(
        alerts, config=settings.alerting, known_environments=settings.environments
    )
    if alert is not None:
        incident.notes += silence_notes(settings, incident.alerts, env or incident.environment)
    return incident


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
    incident.notes += namespace_notes(settings, incident, env or incident.environment)
    for note in incident.notes:
        sys.stderr.write(clean(f"opsmate: {note}\n"))  # redacted, no control characters
    text = incident.question
    if question and question.strip():
        text = f"{text} {question.strip()}"
    return AlertOptions(
        question=text,
        env=env or incident.environment,
        preferred_runbooks=list(incident.runbook_urls),
        incident=incident,
    )
