"""The incident history in SQLite: one row per diagnosed incident, schema-versioned.

The file (``history.path``, default ``<user data dir>/history.sqlite3``) is written by
``watch`` and ``diagnose`` and read by ``opsmate history`` and the ``seen_before`` look-up.
Each operation opens its own connection (WAL journal, a busy time-out), so the watch
workers and a user's ``opsmate history`` can use the file at once. The schema version is
SQLite's ``user_version``; :data:`MIGRATIONS` are applied in order, and a file written by
a newer opsmate is refused rather than changed. Times are stored as UTC RFC 3339 text
(``2026-10-21T02:02:00Z``), so text order is time order.

A file that is not a SQLite database, or cannot be opened, is a :class:`HistoryError`
naming the file (exit 2 for ``opsmate history``; ``watch`` / ``diagnose`` log it and go
on: a history problem never costs a report).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from opsmate.errors import UsageError
from opsmate.history.record import IncidentRecord

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1: incidents, matched by subject and cause kind, listed by time
    (
        """CREATE TABLE incidents (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            time TEXT NOT NULL,
            recorded_at TEXT NOT NULL,
            origin TEXT NOT NULL,
            subject TEXT NOT NULL,
            namespace TEXT,
            environment TEXT,
            services TEXT NOT NULL,
            alertnames TEXT NOT NULL,
            alert_labels TEXT NOT NULL,
            group_key TEXT,
            content_key TEXT,
            status TEXT NOT NULL,
            root_cause TEXT,
            chain TEXT NOT NULL,
            cause_kind TEXT,
            cause_kind_source TEXT NOT NULL,
            summary TEXT NOT NULL,
            next_step TEXT,
            question TEXT NOT NULL,
            report_path TEXT,
            resolved_at TEXT
        )""",
        "CREATE INDEX incidents_match ON incidents (subject, cause_kind, time)",
        "CREATE INDEX incidents_time ON incidents (time)",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)
_JSON_COLUMNS = ("services", "alertnames", "alert_labels", "chain")
_COLUMNS = (
    "time",
    "recorded_at",
    "origin",
    "subject",
    "namespace",
    "environment",
    *_JSON_COLUMNS,
    "group_key",
    "content_key",
    "status",
    "root_cause",
    "cause_kind",
    "cause_kind_source",
    "summary",
    "next_step",
    "question",
    "report_path",
    "resolved_at",
)


class HistoryError(UsageError):
    """The history file cannot be used (not SQLite, unreadable, from a newer opsmate)."""


def utc_text(dt: datetime) -> str:
    """``2026-10-21T02:02:00Z``: the stored form (text order is time order)."""
    aware = dt if dt.tzinfo else dt.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


class HistoryStore:
    """The SQLite file of past incidents (module doc)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    # -- connection ------------------------------------------------------------------
    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=10.0)
        except (OSError, sqlite3.Error) as exc:
            raise HistoryError(f"{self.path}: cannot open the incident history: {exc}") from exc
        try:
            conn.row_factory = sqlite3.Row
            # WAL + NORMAL: a commit survives a crash of opsmate, not always a power cut
            conn.execute("PRAGMA synchronous=NORMAL")
            self._migrate(conn)
            yield conn
            conn.commit()
        except sqlite3.DatabaseError as exc:
            raise HistoryError(
                f"{self.path}: not a usable incident history: {exc}",
                hint="move the file away (a new one is started) or set history.path",
            ) from exc
        finally:
            conn.close()

    def _migrate(self, conn: sqlite3.Connection) -> None:
        version = self._version(conn)
        if version == SCHEMA_VERSION:
            return
        with contextlib.suppress(sqlite3.OperationalError):  # a read-only file stays as is
            conn.execute("PRAGMA journal_mode=WAL")
        conn.isolation_level = None  # explicit transactions: the migration is one
        conn.execute("BEGIN IMMEDIATE")  # one writer migrates; others wait, then see it done
        try:
            for n in range(self._version(conn), SCHEMA_VERSION):
                for statement in MIGRATIONS[n]:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {n + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        finally:
            conn.isolation_level = "DEFERRED"

    def _version(self, conn: sqlite3.Connection) -> int:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise HistoryError(
                f"{self.path}: written by a newer opsmate (schema {version}, this one "
                f"knows {SCHEMA_VERSION})",
                hint="upgrade opsmate, or set history.path to another file",
            )
        return version

    # -- writing ---------------------------------------------------------------------
    def add(self, rec: IncidentRecord) -> int:
        """Store one incident; returns its id."""
        row = _row(rec)
        marks = ", ".join("?" for _ in _COLUMNS)
        with self._connect() as conn:
            cur = conn.execute(
                f"INSERT INTO incidents ({', '.join(_COLUMNS)}) VALUES ({marks})",
                [row[c] for c in _COLUMNS],
            )
            return int(cur.lastrowid or 0)

    def mark_resolved(self, group_key: str, when: datetime) -> int:
        """Note that the alert group ``group_key`` resolved (its open incidents); returns
        how many incidents were updated."""
        with self._connect() as conn:
            cur = conn.execute(
                "UPDATE incidents SET resolved_at = ? WHERE group_key = ? AND resolved_at IS NULL",
                (utc_text(when), group_key),
            )
            return int(cur.rowcount)

    # -- reading ---------------------------------------------------------------------
    def incidents(
        self,
        *,
        service: str | None = None,
        since: datetime | None = None,
        limit: int | None = None,
    ) -> list[IncidentRecord]:
        """Incidents newest first: of ``service`` (the subject or one of the services,
        case-insensitive), from ``since`` on, at most ``limit``."""
        where: list[str] = []
        args: list[str] = []
        if since is not None:
            where.append("time >= ?")
            args.append(utc_text(since))
        want = service.strip().lower() if service else None
        if want:  # narrowed in SQL (the JSON list holds the name quoted), checked below
            quoted = json.dumps(want, ensure_ascii=False).replace("\\", "\\\\").replace("%", "\\%")
            where.append("(lower(subject) = ? OR lower(services) LIKE ? ESCAPE '\\')")
            args += [want, "%" + quoted.replace("_", "\\_") + "%"]
        sql = "SELECT * FROM incidents"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY time DESC, id DESC"
        out: list[IncidentRecord] = []
        with self._connect() as conn:
            for row in conn.execute(sql, args):
                rec = _record(row)
                if want and want != rec.subject and want not in (s.lower() for s in rec.services):
                    continue
                out.append(rec)
                if limit is not None and len(out) >= limit:
                    break
        return out

    def similar(
        self, rec: IncidentRecord, *, within: timedelta, limit: int
    ) -> list[IncidentRecord]:
        """Stored incidents of the same subject and cause kind, newest first: the
        ``seen_before`` candidates (call it before :meth:`add` of ``rec``). Nothing without
        a subject or a cause kind; never the same notification again (same content key);
        a namespace that differs rules a past incident out."""
        if not rec.subject or not rec.cause_kind or limit <= 0:
            return []
        start = utc_text(rec.time - within)
        out: list[IncidentRecord] = []
        with self._connect() as conn:
            rows = conn.execute(  # every stored row was kept before this one
                "SELECT * FROM incidents WHERE subject = ? AND cause_kind = ? AND time >= ? "
                "ORDER BY time DESC, id DESC",
                (rec.subject, rec.cause_kind, start),
            )
            for row in rows:
                past = _record(row)
                if rec.content_key and past.content_key == rec.content_key:
                    continue
                if rec.namespace and past.namespace and rec.namespace != past.namespace:
                    continue
                out.append(past)
                if len(out) >= limit:
                    break
        return out


def _row(rec: IncidentRecord) -> dict[str, Any]:
    row: dict[str, Any] = {c: getattr(rec, c) for c in _COLUMNS}
    for c in _JSON_COLUMNS:
        row[c] = json.dumps(row[c], ensure_ascii=False)
    for c in ("time", "recorded_at", "resolved_at"):
        row[c] = utc_text(row[c]) if row[c] is not None else None
    return row


def _record(row: sqlite3.Row) -> IncidentRecord:
    data: dict[str, Any] = {k: row[k] for k in row.keys()}  # noqa: SIM118 (a Row)
    for c in _JSON_COLUMNS:
        try:
            data[c] = json.loads(data[c] or "[]")
        except ValueError:
            data[c] = []
    for c in ("time", "recorded_at", "resolved_at"):
        data[c] = _parse(data[c])
    return IncidentRecord(**data)
