"""What ``watch`` and ``diagnose`` call: name the past incidents a report has seen before,
then keep the report's incident.

::

    history = History.open(settings)        # None when history.enabled is false
    rec = build_record(report, origin="watch", facts=..., subject=..., alerts=...)
    report = history.annotate(report, rec)  # report.seen_before = H1, H2 ... (newest first)
    ...write or print the report...
    history.keep(rec)                       # with rec.report_path set when there is a file

The seen-before entries are context for the reader: they sit in their own report field
(``seen_before``), their ids are ``H1`` ... and never E/R ids, so the citation check
never accepts them as evidence for today's cause. Both calls raise
:class:`~opsmate.history.store.HistoryError`; callers log it and carry on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from opsmate import paths
from opsmate.agent.report.model import Report, SeenBefore
from opsmate.config import HistoryConfig, Settings
from opsmate.history.record import IncidentRecord, build_record
from opsmate.history.store import HistoryStore, utc_text


def history_path(config: HistoryConfig) -> Path:
    """``history.path``, else ``<user data dir>/history.sqlite3``."""
    if config.path:
        return Path(config.path).expanduser()
    return paths.data_dir() / "history.sqlite3"


# "(E7)", "(E3, E9)", "[E1, R2]": ids of that past report's own evidence, meaningless here
_PAST_IDS = re.compile(r"\s*[(\[](?:[ER]\d+(?:,\s*)?)+[)\]]")


def _without_ids(text: str) -> str:
    from opsmate.tools.redact import clean

    return clean(_PAST_IDS.sub("", text))


def seen_before(past: list[IncidentRecord]) -> list[SeenBefore]:
    """Past incidents as report entries ``H1`` (the most recent), ``H2`` ...; the evidence
    ids their texts cited (that report's E/R ids) are removed, so none is read as today's."""
    return [
        SeenBefore(
            id=f"H{n}",
            time=utc_text(rec.time),
            subject=rec.subject,
            cause_kind=rec.cause_kind,
            status=rec.status,
            outcome=_without_ids(rec.outcome()),
            root_cause=_without_ids(rec.root_cause) if rec.root_cause else None,
            alertnames=list(rec.alertnames),
            report=rec.report_path,
            incident=rec.id or 0,
        )
        for n, rec in enumerate(past, 1)
    ]


class History:
    """The configured incident history (module doc)."""

    def __init__(self, config: HistoryConfig) -> None:
        self.config = config
        self.store = HistoryStore(history_path(config))

    @classmethod
    def open(cls, settings: Settings) -> History | None:
        """The history, or None when ``history.enabled`` is false."""
        return cls(settings.history) if settings.history.enabled else None

    def annotate(self, report: Report, rec: IncidentRecord) -> Report:
        """A copy of ``report`` naming the stored incidents of the same subject and cause
        kind (at most ``history.seen_before``, within ``history.seen_before_days``)."""
        past = self.store.similar(
            rec,
            within=timedelta(days=self.config.seen_before_days),
            limit=self.config.seen_before,
        )
        return report.model_copy(update={"seen_before": seen_before(past)})

    def keep(self, rec: IncidentRecord) -> int:
        """Store the incident; returns its id (``rec.id`` is set too)."""
        rec.id = self.store.add(rec)
        return rec.id


def record_for(
    report: Report,
    session: Any,
    *,
    origin: str,
    alerts: Sequence[Any] = (),
    group_key: str | None = None,
    report_path: str | None = None,
) -> IncidentRecord:
    """The incident of a session's report: the engine's subject and typed facts are read
    from ``session.state`` when it has them (see :mod:`opsmate.history.record`)."""
    state = getattr(session, "state", None)
    return build_record(
        report,
        origin=origin,
        facts=getattr(state, "facts", None) or (),
        subject=getattr(state, "subject", None),
        alerts=alerts,
        group_key=group_key,
        report_path=report_path,
    )
