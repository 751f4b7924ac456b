"""Append-only audit log of tool calls: one JSON line per call, with a schema version.

Default location: ``tools.audit_log`` from the config, else ``<user data dir>/audit.jsonl``
(``opsmate.paths.audit_log_path()``). A record (schema version 1)::

    {"schema_version": 1, "time": "2026-10-21T10:01:02.345+00:00", "call_id": "call_003",
     "tool": "search_logs", "args": {...}, "scope": {...}, "status": "success",
     "error_code": null, "elapsed_ms": 41, "redactions": 0}

Arguments arrive already redacted (the executor redacts before recording); the record
passes the redactor once more anyway (``redactor``, default: the built-in patterns), so the
log holds no secret and no terminal control whoever calls it. Writing never raises: a
log that cannot be written is reported once on stderr and the call's result is
unaffected. :func:`read_records` reads a log back, upgrading older schema versions in
order (there is only version 1 so far).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from opsmate.textsafe import dumps_json
from opsmate.tools.base import ToolResult
from opsmate.tools.redact import Redactor, clean

SCHEMA_VERSION = 1

log = logging.getLogger(__name__)

# migrations[v] upgrades a record of version v to version v + 1
_MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


class AuditLog:
    """Appends one JSON line per tool call to ``path`` (created with its folder on demand)."""

    def __init__(self, path: Path, redactor: Redactor | None = None) -> None:
        self.path = Path(path).expanduser()
        self.redactor = redactor
        self._lock = threading.Lock()
        self._warned = False

    def record(self, result: ToolResult, args: dict[str, Any], scope: dict[str, Any]) -> None:
        """Append the record of one call; never raises."""
        entry = {
            "schema_version": SCHEMA_VERSION,
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "call_id": result.call_id,
            "tool": result.tool,
            "args": args,
            "scope": scope,
            "status": result.status,
            "error_code": result.error.code if result.error else None,
            "elapsed_ms": result.elapsed_ms,
            "redactions": result.redactions,
        }
        try:
            line = dumps_json(clean(entry, self.redactor))
            with self._lock:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(line + "\n")
        except Exception as exc:  # the audit must never break a call
            if not self._warned:
                self._warned = True
                log.warning("cannot write the audit log %s: %s", self.path, exc)


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the records of an audit log, upgraded to the current schema version.

    Lines that are not JSON objects (a torn last line after a crash) are skipped.
    """
    path = Path(path).expanduser()
    if not path.exists():
        return
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(record, dict):
                continue
            yield _upgrade(record)


def _upgrade(record: dict[str, Any]) -> dict[str, Any]:
    version = int(record.get("schema_version", 1))
    while version < SCHEMA_VERSION:
        record = _MIGRATIONS[version](record)
        version += 1
        record["schema_version"] = version
    return record
