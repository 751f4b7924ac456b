"""One alert as opsmate reads it, whether from Alertmanager's API v2 or a webhook body.

:class:`Alert` is the common shape of ``GET /api/v2/alerts`` items (``status.state``,
``silencedBy``, ``inhibitedBy``) and webhook v4 alerts (``status: firing|resolved``):
labels, annotations, start / end times, fingerprint, and whether it is silenced or
inhibited. Subject labels are the Kubernetes objects an alert is about.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from opsmate.timeparse import parse_time

# labels naming the object an alert is about, most specific first
SUBJECT_LABELS = (
    "pod",
    "deployment",
    "statefulset",
    "job",
    "persistentvolumeclaim",
    "service",
    "node",
    "container",
    "namespace",
)
# the word the engine's intake reads as that kind ("pod X", "deployment X", "pvc X")
KIND_WORDS = {
    "pod": "pod",
    "deployment": "deployment",
    "statefulset": "statefulset",
    "job": "job",
    "persistentvolumeclaim": "pvc",
    "service": "service",
    "node": "node",
}
ZERO_TIME = "0001-01-01T00:00:00Z"  # Alertmanager's "not set" time


def parse_am_time(value: Any) -> datetime | None:
    """An Alertmanager timestamp (RFC 3339, nanoseconds allowed) or None when unset / bad."""
    if not isinstance(value, str) or not value or value.startswith("0001-01-01"):
        return None
    text = value.strip()
    if "." in text:  # Go writes up to nine fraction digits; Python reads six
        head, _, rest = text.partition(".")
        digits = "".join(ch for ch in rest if ch.isdigit())
        zone = rest[len(digits) :]
        text = f"{head}.{digits[:6]}{zone}"
    try:
        return parse_time(text)
    except ValueError:
        return None


def _str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items() if v is not None}


@dataclass
class Alert:
    """An alert: its labels and annotations, times, fingerprint and silence state."""

    labels: dict[str, str]
    annotations: dict[str, str] = field(default_factory=dict)
    status: str = "firing"  # firing | resolved (webhook); firing for every API alert
    starts_at: datetime | None = None
    ends_at: datetime | None = None
    fingerprint: str = ""
    silenced_by: list[str] = field(default_factory=list)
    inhibited_by: list[str] = field(default_factory=list)
    state: str = "active"  # Alertmanager's: active | suppressed | unprocessed
    generator_url: str = ""

    @property
    def name(self) -> str:
        return self.labels.get("alertname", "") or "unknown"

    @property
    def severity(self) -> str | None:
        return self.labels.get("severity")

    @property
    def silenced(self) -> bool:
        return bool(self.silenced_by)

    @property
    def inhibited(self) -> bool:
        return bool(self.inhibited_by)

    def subject_labels(self) -> dict[str, str]:
        """The labels naming Kubernetes objects, most specific first."""
        return {k: self.labels[k] for k in SUBJECT_LABELS if self.labels.get(k)}

    def age_seconds(self, now: datetime | None = None) -> float | None:
        if self.starts_at is None:
            return None
        return ((now or datetime.now(UTC)) - self.starts_at).total_seconds()

    @classmethod
    def from_api(cls, item: dict[str, Any]) -> Alert:
        """An item of ``GET /api/v2/alerts`` (gettableAlert)."""
        status = item.get("status") if isinstance(item.get("status"), dict) else {}
        assert isinstance(status, dict)
        return cls(
            labels=_str_map(item.get("labels")),
            annotations=_str_map(item.get("annotations")),
            status="firing",
            starts_at=parse_am_time(item.get("startsAt")),
            ends_at=parse_am_time(item.get("endsAt")),
            fingerprint=str(item.get("fingerprint") or ""),
            silenced_by=[str(s) for s in status.get("silencedBy") or []],
            inhibited_by=[str(s) for s in status.get("inhibitedBy") or []],
            state=str(status.get("state") or "active"),
            generator_url=str(item.get("generatorURL") or ""),
        )

    def to_json(self, now: datetime | None = None) -> dict[str, Any]:
        """The shape ``opsmate alerts --json`` prints (one alert)."""
        age = self.age_seconds(now)
        return {
            "name": self.name,
            "severity": self.severity,
            "status": self.status,
            "state": self.state,
            "silenced": self.silenced,
            "silenced_by": list(self.silenced_by),
            "inhibited": self.inhibited,
            "inhibited_by": list(self.inhibited_by),
            "fingerprint": self.fingerprint,
            "starts_at": self.starts_at.isoformat() if self.starts_at else None,
            "age_seconds": round(age) if age is not None else None,
            "labels": dict(self.labels),
            "annotations": dict(self.annotations),
            "subject": self.subject_labels(),
            "generator_url": self.generator_url or None,
        }
