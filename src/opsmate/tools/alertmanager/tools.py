"""``list_alerts`` served by Alertmanager where an environment configures one.

Alertmanager knows the alerts that fire, and whether each is silenced or inhibited
(and by which silence); Prometheus knows pending alerts and the inactive rules. So
``list_alerts`` asks the environment's Alertmanager for firing alerts and falls back to
the Prometheus implementation (:class:`opsmate.tools.prometheus.tools.PrometheusTools`) for
``state=pending|inactive`` and for environments without an Alertmanager. The answer has
the shape bundle replay and Prometheus give (``alerts``, ``count``), each alert with
``silenced``, ``silenced_by``, ``inhibited`` and ``fingerprint`` added, plus the active
``silences`` the alerts refer to.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from opsmate.timeparse import format_time
from opsmate.tools import schemas as s
from opsmate.tools.alertmanager.client import AlertmanagerClient
from opsmate.tools.alertmanager.model import Alert
from opsmate.tools.base import (
    CallContext,
    SourceRoute,
    ToolFailure,
    ToolOutput,
    ToolSpec,
    call_environment,
)
from opsmate.tools.shaping import alerts_output

if TYPE_CHECKING:
    from opsmate.config import Settings


def alert_view(a: Alert, zone: Any = None) -> dict[str, Any]:
    """One Alertmanager alert in the ``list_alerts`` item shape (``_ref`` popped later); its
    time in ``zone`` (the task's) when given."""
    labels = dict(a.labels)
    labels.pop("alertname", None)
    start = a.starts_at
    if start is not None and zone is not None:
        start = start.astimezone(zone)
    severity = labels.pop("severity", None)
    return {
        "name": a.name,
        "state": "firing",
        "severity": severity,
        "labels": labels,
        "annotations": dict(a.annotations),
        "active_at": format_time(start) if start else None,
        "silenced": a.silenced,
        "silenced_by": list(a.silenced_by),
        "inhibited": a.inhibited,
        "fingerprint": a.fingerprint,
        "_ref": f"alert://{a.name}",
    }


class AlertmanagerTools:
    """``list_alerts`` over the configured Alertmanagers, Prometheus as the fallback."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._prom: Any = None

    def _prometheus(self) -> Any:
        if self._prom is None:
            from opsmate.tools.prometheus.tools import PrometheusTools

            self._prom = PrometheusTools(self.settings)
        return self._prom

    def list_alerts(self, args: s.ListAlertsArgs, ctx: CallContext) -> ToolOutput:
        """Firing alerts with their silence state (Alertmanager), else Prometheus' answer."""
        env = call_environment(args.environment, ctx, self.settings.default_environment)
        cfg = self.settings.environments.get(env)
        source = cfg.alertmanager if cfg else None
        has_prom = cfg is not None and cfg.prometheus is not None
        if source is None or (args.state in ("pending", "inactive") and has_prom):
            if not has_prom:
                raise ToolFailure(
                    "not_configured",
                    f"no Alertmanager or Prometheus configured for environment '{env}'",
                )
            out: ToolOutput = self._prometheus().list_alerts(args, ctx)
            return out
        scope: dict[str, Any] = {"source": "alertmanager", "environment": env}
        if args.state:
            scope["state"] = args.state
        if args.state == "inactive":
            raise ToolFailure(
                "not_available",
                "Alertmanager holds only firing alerts; inactive rules need a Prometheus "
                f"(environments.{env}.prometheus)",
            )
        client = AlertmanagerClient.from_source(source, env)
        timeout = _call_timeout(ctx, source.timeout)
        alerts = [] if args.state == "pending" else client.alerts(timeout=timeout)
        end = ctx.constraints.window_to
        views = [alert_view(a, end.tzinfo if end is not None else None) for a in alerts]
        out = alerts_output(views, args.state, scope)
        silence_ids = {sid for a in alerts for sid in a.silenced_by}
        if silence_ids:
            silences = [x for x in client.silences(timeout=timeout) if x["id"] in silence_ids]
            out.data["silences"] = silences
        silenced = sum(1 for a in alerts if a.silenced)
        if silenced:
            out.data["silenced"] = silenced
        return out


def _call_timeout(ctx: CallContext, configured: float) -> float:
    if ctx.deadline is None:
        return configured
    return max(min(configured, ctx.deadline - time.monotonic()), 0.05)


def tool_specs(settings: Settings) -> list[ToolSpec]:
    """``list_alerts`` when some environment configures an Alertmanager (it replaces the
    Prometheus one; environments without an Alertmanager still get Prometheus' answer)."""
    if not any(e.alertmanager for e in settings.environments.values()):
        return []
    tools = AlertmanagerTools(settings)

    def route(args: Any, env: str | None) -> SourceRoute | None:
        """Prometheus answers pending / inactive alerts where it is configured (as
        :meth:`AlertmanagerTools.list_alerts` does), Alertmanager the firing ones."""
        from opsmate.tools.registry import block_route

        state = getattr(args, "state", None)
        prom = block_route(settings, "prometheus", env)
        if prom is not None and state in ("pending", "inactive"):
            return prom
        return block_route(settings, "alertmanager", env) or prom

    return [
        ToolSpec(
            "list_alerts",
            "List firing alerts (Alertmanager: with silence / inhibition state; "
            "Prometheus: firing / pending).",
            s.ListAlertsArgs,
            tools.list_alerts,  # type: ignore[arg-type]
            route=route,
        )
    ]
