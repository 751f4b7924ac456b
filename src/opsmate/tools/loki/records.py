"""Loki answers as log records: entries of streams, records rebuilt from them, references.

A Loki entry is a line with a nanosecond time in a stream (its labels). The record the
log tools show is the JSON line's fields when the line is a JSON object (else
``{"message": line}``), with ``@timestamp`` from the entry when the line has none and
``service`` / ``namespace`` / ``pod`` / ``container`` / ``level`` / ``environment`` filled
from the stream labels that ``labels`` maps them to (a field the line carries wins), so
the same record reads the same from Elasticsearch, Loki or a bundle.

Structured metadata (Loki 3) arrives either merged into the stream labels, or as the
third element of a value (``{"structuredMetadata": {...}, "parsed": {...}}`` with the
``categorize-labels`` encoding flag); both are read as labels here.

References: ``log://<service>/<id>`` with the ``labels.id`` label, else the line's
``id`` / ``_id`` field, else ``<ns time>-<8 hex of the line's hash>`` (stable across
calls, as Loki has no record ids).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from opsmate.tools.cursor import decode_cursor as _decode
from opsmate.tools.cursor import encode_cursor
from opsmate.tools.shaping import record_ref

if TYPE_CHECKING:
    from opsmate.config import LokiSource

__all__ = [
    "Entry",
    "decode_cursor",
    "encode_cursor",
    "entries_of",
    "entry_time",
    "ns_of",
    "to_record",
]

FIELDS = ("service", "namespace", "pod", "container", "level", "environment")


@dataclass(frozen=True)
class Entry:
    """One log line of a stream."""

    ns: int
    line: str
    labels: Mapping[str, str]

    def identity(self, src: LokiSource) -> tuple[int, str, str, str]:
        """The same entry in the answers of different queries (whose parsers may have added
        labels): time, line, service and pod label."""
        pod = self.labels.get(src.labels.pod or "", "")
        return (self.ns, self.line, self.labels.get(src.labels.service, ""), pod)

    def sort_key(self) -> tuple[int, str, str]:
        """Newest first; equal times by labels, then line (the fixture orders alike)."""
        return (-self.ns, json.dumps(dict(sorted(self.labels.items()))), self.line)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def ns_of(dt: datetime) -> int:
    """Nanoseconds since the epoch of ``dt`` (microsecond precision)."""
    delta = dt - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


def entry_time(ns: int) -> datetime:
    """The time of a nanosecond epoch (microsecond precision)."""
    return _EPOCH + timedelta(microseconds=ns // 1000)


def _extra_labels(meta: Any) -> dict[str, str]:
    if not isinstance(meta, Mapping):
        return {}
    if "structuredMetadata" in meta or "parsed" in meta:
        out: dict[str, str] = {}
        for key in ("structuredMetadata", "parsed"):
            part = meta.get(key)
            if isinstance(part, Mapping):
                out.update({str(k): str(v) for k, v in part.items()})
        return out
    return {str(k): str(v) for k, v in meta.items()}


def entries_of(data: Mapping[str, Any]) -> list[Entry]:
    """Every entry of a ``streams`` answer, newest first."""
    out: list[Entry] = []
    for stream in data.get("result") or []:
        labels = stream.get("stream") if isinstance(stream, Mapping) else None
        if not isinstance(labels, Mapping):
            raise ValueError("a stream without labels")
        base = {str(k): str(v) for k, v in labels.items()}
        for value in stream.get("values") or []:
            if not isinstance(value, list | tuple) or len(value) < 2:
                raise ValueError(f"a value that is not [time, line]: {value!r}"[:200])
            extra = _extra_labels(value[2]) if len(value) > 2 else {}
            out.append(Entry(int(value[0]), str(value[1]), {**base, **extra} if extra else base))
    out.sort(key=Entry.sort_key)
    return out


def _stamp(ns: int) -> str:
    t = entry_time(ns)
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def to_record(entry: Entry, src: LokiSource) -> dict[str, Any]:
    """The log record an entry stands for (see the module docstring)."""
    rec: dict[str, Any] | None = None
    text = entry.line
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            rec = parsed
    if rec is None:
        rec = {"message": text}
    if "@timestamp" not in rec:
        rec = {"@timestamp": _stamp(entry.ns), **rec}
    mapping = src.labels
    for name in FIELDS:
        label = getattr(mapping, name)
        if label and name not in rec and entry.labels.get(label):
            rec[name] = entry.labels[label]
    return rec


def ref_of(entry: Entry, rec: Mapping[str, Any], src: LokiSource) -> str:
    """``log://<service>/<id>`` of one entry."""
    rid: Any = entry.labels.get(src.labels.id) if src.labels.id else None
    if not rid:
        rid = rec.get("id") or rec.get("_id")
    if not rid:
        digest = hashlib.sha1(entry.line.encode("utf-8", "replace")).hexdigest()[:8]
        rid = f"{entry.ns}-{digest}"
    svc = rec.get("service") or entry.labels.get(src.labels.service)
    return record_ref(str(svc) if svc else None, str(rid))


def _check_loki(payload: dict[str, Any]) -> None:
    int(payload["e"]), int(payload.get("k", 0)), int(payload.get("o", 0))


def decode_cursor(cursor: str, ident: str) -> dict[str, Any]:
    """The payload of a ``search_logs`` cursor of this query (else ``bad_cursor``)."""
    return _decode(cursor, ident, _check_loki)
