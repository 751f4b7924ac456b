"""``opsmate alerts``: the firing alerts of an environment's Alertmanager (or Prometheus).

A table (severity, name, subject labels, age, silenced) or, with ``--json``,
``{"environment", "source", "count", "alerts": [...]}`` where each alert has ``name``,
``severity``, ``state``, ``silenced``, ``silenced_by``, ``inhibited``, ``fingerprint``,
``starts_at``, ``age_seconds``, ``labels``, ``annotations`` and ``subject``. Without an
Alertmanager in that environment, Prometheus' firing alerts are listed (no silence state).
Exit codes: 0 (also with no alert firing), 2 configuration, 3 the source is unreachable.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from opsmate.alerting.listing import age_text, fetch_alerts
from opsmate.config import load_settings
from opsmate.textsafe import dumps_json
from opsmate.tools.alertmanager.model import Alert


def _subject(alert: Alert) -> str:
    return " ".join(f"{k}={v}" for k, v in alert.subject_labels().items())


def _print_table(env: str, source: str, alerts: list[Alert], now: datetime) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    if not alerts:
        console.print(f"no alerts firing in {escape(env)} ({source})")
        return
    table = Table(title=f"firing alerts: {env} ({source})")
    for col in ("severity", "name", "subject", "age", "silenced"):
        table.add_column(col, overflow="fold")
    style = {"critical": "red", "error": "red", "warning": "yellow"}
    for a in alerts:
        sev = a.severity or "-"
        silenced = "silenced" if a.silenced else ("inhibited" if a.inhibited else "")
        table.add_row(
            f"[{style.get(sev, 'default')}]{escape(sev)}[/]",
            escape(a.name),
            escape(_subject(a)),
            age_text(a.age_seconds(now)),
            silenced,
        )
    console.print(table)


def run_alerts(*, env: str | None, json_out: bool, config_path: Path | None) -> None:
    """Implements ``opsmate alerts`` (see the module docstring)."""
    from opsmate.tools.redact import default_redactor

    settings = load_settings(config_path)
    name, source, alerts = fetch_alerts(settings, env)
    now = datetime.now(UTC)
    if json_out:
        payload: dict[str, Any] = {
            "environment": name,
            "source": source,
            "count": len(alerts),
            "alerts": [a.to_json(now) for a in alerts],
        }
        payload = default_redactor().clean(payload)
        sys.stdout.write(dumps_json(payload, indent=2) + "\n")
        sys.stdout.flush()
        return
    _print_table(name, source, alerts, now)
