"""``opsmate alerts``: the firing alerts of an environment's Alertmanager (or Prometheus).

A table (severity, name, subject labels, age, silenced) or, with ``--json``,
``{"environment", "source", "count", "alerts": [...]}`` where each alert has ``name``,
``severity``, ``state``, ``silenced``, ``silenced_by``, ``inhibited``, ``fingerprint``,
``starts_at``, ``age_seconds``, ``labels``, ``annotations`` and ``subject``. Without an
Alertmanager in that environment, Prometheus' firing alerts are listed (no silence state).
Exit codes: 0 (also with no alert firing), 2 configuration, 3 the source is unreachable.

Both faces print the same redacted, terminal-safe text (:func:`opsmate.tools.redact.clean`
with the configured ``tools.redact_patterns``): a label holding a token, an escape
sequence, a C1 control or a bidi override is never printed raw.
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
from opsmate.tools.redact import Redactor


def _subject(alert: Alert) -> str:
    return " ".join(f"{k}={v}" for k, v in alert.subject_labels().items())


def _print_table(env: str, source: str, alerts: list[Alert], now: datetime, red: Redactor) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    env = red.clean(env)
    if not alerts:
        console.print(f"no alerts firing in {escape(env)} ({source})")
        return
    table = Table(title=escape(f"firing alerts: {env} ({source})"))
    for col in ("severity", "name", "subject", "age", "silenced"):
        table.add_column(col, overflow="fold")
    style = {"critical": "red", "error": "red", "warning": "yellow"}
    for a in alerts:
        sev = red.clean(a.severity or "-")
        silenced = "silenced" if a.silenced else ("inhibited" if a.inhibited else "")
        table.add_row(
            f"[{style.get(sev, 'default')}]{escape(sev)}[/]",
            escape(red.clean(a.name)),
            escape(red.clean(_subject(a))),
            age_text(a.age_seconds(now)),
            silenced,
        )
    console.print(table)


def run_alerts(*, env: str | None, json_out: bool, config_path: Path | None) -> None:
    """Implements ``opsmate alerts`` (see the module docstring)."""
    settings = load_settings(config_path)
    red = Redactor(settings.tools.redact_patterns)  # the site's own patterns too
    name, source, alerts = fetch_alerts(settings, env)
    now = datetime.now(UTC)
    if json_out:
        payload: dict[str, Any] = {
            "environment": name,
            "source": source,
            "count": len(alerts),
            "alerts": [a.to_json(now) for a in alerts],
        }
        payload = red.clean(payload)
        sys.stdout.write(dumps_json(payload, indent=2) + "\n")
        sys.stdout.flush()
        return
    _print_table(name, source, alerts, now, red)
