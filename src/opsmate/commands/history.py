"""``opsmate history``: the incidents ``watch`` and ``diagnose`` have kept, newest first.

A table on a terminal (one tab-separated line per incident when piped: id, time, status,
subject, cause kind, alerts, root cause) or, with ``--json``,
``{"path", "count", "incidents": [...]}`` where each incident has ``id``, ``time``,
``recorded_at``, ``origin``, ``subject``, ``namespace``, ``environment``, ``services``,
``alertnames``, ``alert_labels``, ``group_key``, ``status``, ``root_cause``, ``chain``,
``cause_kind``, ``cause_kind_source``, ``summary``, ``next_step``, ``question``,
``report_path``, ``resolved_at`` and ``outcome``. ``--service S`` keeps the incidents whose
subject or services include S; ``--since 30d`` those that started in the last 30 days.
No history yet is an empty list (exit 0); a file that is not a history is exit 2.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from opsmate.config import load_settings
from opsmate.history.record import IncidentRecord
from opsmate.textsafe import dumps_json


def _print_table(path: Path, incidents: list[IncidentRecord]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    if not incidents:
        console.print(f"no incidents in the history ({escape(str(path))})")
        return
    table = Table(title=f"incident history ({len(incidents)}): {path}")
    for col in ("id", "time (UTC)", "status", "subject", "cause kind", "alerts", "root cause"):
        table.add_column(col, overflow="fold")
    for rec in incidents:
        table.add_row(
            str(rec.id),
            rec.time.strftime("%Y-%m-%d %H:%M"),
            escape(rec.status + (" · resolved" if rec.resolved_at else "")),
            escape(rec.subject or "-"),
            escape(rec.cause_kind or "-"),
            escape(", ".join(rec.alertnames) or "-"),
            escape((rec.root_cause or rec.summary)[:160]),
        )
    console.print(table)


def run_history(
    *,
    service: str | None,
    since: str | None,
    limit: int,
    json_out: bool,
    config_path: Path | None,
) -> None:
    """Implements ``opsmate history`` (see the module docstring)."""
    from opsmate.history.keeper import history_path
    from opsmate.history.store import HistoryStore
    from opsmate.timeparse import parse_duration
    from opsmate.tools.redact import default_redactor

    settings = load_settings(config_path)
    from opsmate.errors import UsageError

    try:
        start = datetime.now(UTC) - parse_duration(since) if since else None
    except ValueError as exc:
        raise UsageError(f"--since {since!r}: {exc}") from exc
    path = history_path(settings.history)
    incidents: list[IncidentRecord] = []
    if path.exists():  # reading never creates the file
        store = HistoryStore(path)
        incidents = store.incidents(service=service, since=start, limit=limit)
    if json_out:
        payload: dict[str, Any] = {
            "path": str(path),
            "count": len(incidents),
            "incidents": [rec.to_json() for rec in incidents],
        }
        sys.stdout.write(dumps_json(default_redactor().clean(payload), indent=2) + "\n")
        sys.stdout.flush()
        return
    if sys.stdout.isatty():
        _print_table(path, incidents)
    else:  # piped: one incident a line, tab-separated, nothing wrapped
        _print_lines(incidents)


def _print_lines(incidents: list[IncidentRecord]) -> None:
    from opsmate.textsafe import safe_text

    for rec in incidents:
        fields = [
            str(rec.id),
            rec.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
            rec.status + (",resolved" if rec.resolved_at else ""),
            rec.subject or "-",
            rec.cause_kind or "-",
            ",".join(rec.alertnames) or "-",
            rec.root_cause or rec.summary,
        ]
        sys.stdout.write(safe_text("\t".join(" ".join(f.split()) for f in fields)) + "\n")
    sys.stdout.flush()
