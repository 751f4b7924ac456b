"""Reading the firing alerts of an environment: its Alertmanager, else its Prometheus.

:func:`fetch_alerts` is what ``opsmate alerts`` and the TUI's alerts screen list: the
environment (``--env``, the default, or the only one with an alert source), the source
used and the alerts, most severe then oldest first. Failures are ConfigError (exit 2) or
SourceUnreachableError (exit 3).
"""

from __future__ import annotations

from datetime import UTC, datetime

from opsmate.config import Settings
from opsmate.errors import ConfigError
from opsmate.tools.alertmanager.model import Alert
from opsmate.tools.base import ToolFailure

_SEVERITY_ORDER = {"critical": 0, "error": 1, "high": 1, "warning": 2, "warn": 2, "info": 3}


def _environment(settings: Settings, env: str | None) -> str:
    name = env or settings.default_environment
    if name is None:
        with_alerts = [
            e for e, c in settings.environments.items() if c.alertmanager or c.prometheus
        ]
        if len(with_alerts) == 1:
            return with_alerts[0]
        raise ConfigError(
            "no environment given and no default_environment set",
            hint=f"pass --env ({', '.join(with_alerts) or 'no environment has an alert source'})",
        )
    if name not in settings.environments:
        known = ", ".join(settings.environments) or "none"
        raise ConfigError(f"environment '{name}' is not configured (configured: {known})")
    return name


def _prometheus_alerts(settings: Settings, env: str) -> list[Alert]:
    """Firing alerts from Prometheus' ``/api/v1/alerts`` (no silence state there)."""
    from opsmate.tools.prometheus.tools import PrometheusTools, _failure

    tools = PrometheusTools(settings)
    client = tools._client(env)
    try:  # within the source's time-out of wall-clock time, answer included
        data = client.get_json("/api/v1/alerts", {}, client.source.timeout)
    except Exception as exc:  # refused, silent, dripping, malformed: a ToolFailure
        raise _failure(exc, client.url) from exc
    out = []
    for a in data.get("alerts") or []:
        if not isinstance(a, dict) or a.get("state") != "firing":
            continue
        item = {
            "labels": a.get("labels"),
            "annotations": a.get("annotations"),
            "startsAt": a.get("activeAt"),
        }
        out.append(Alert.from_api(item))
    return out


def fetch_alerts(settings: Settings, env: str | None) -> tuple[str, str, list[Alert]]:
    """(environment, source, firing alerts) — most severe, then oldest, first."""
    from opsmate.tools.alertmanager.client import AlertmanagerClient, unreachable_error

    name = _environment(settings, env)
    cfg = settings.environments[name]
    try:
        if cfg.alertmanager is not None:
            client = AlertmanagerClient.from_source(cfg.alertmanager, name)
            source, alerts = "alertmanager", client.alerts()
        elif cfg.prometheus is not None:
            source, alerts = "prometheus", _prometheus_alerts(settings, name)
        else:
            raise ConfigError(
                f"environment '{name}' has no Alertmanager or Prometheus",
                hint=f"set environments.{name}.alertmanager.url in the config",
            )
    except ToolFailure as exc:
        raise unreachable_error(exc) from exc
    far = datetime.max.replace(tzinfo=UTC)
    alerts.sort(
        key=lambda a: (_SEVERITY_ORDER.get(a.severity or "", 5), a.starts_at or far, a.name)
    )
    return name, source, alerts


def age_text(seconds: float | None) -> str:
    """``5m``, ``2h05m``, ``3d4h``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    s = max(int(seconds), 0)
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    return f"{s // 86400}d{(s % 86400) // 3600}h"
