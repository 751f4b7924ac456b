"""One incident of the history, built from a finished report: subject, cause kind, outcome.

What makes two incidents "the same again" is their **subject** (the workload or service
the investigation was about, pod-name suffixes cut: ``order-service-7d9f8b6c4-x2x9k`` is
``order-service``) and their **cause kind** (the failure mode of the root cause). The
cause kind is taken, in this order, from:

1. a ``kind`` on the report's root cause or on a confirmed hypothesis (the engine's
   failure-mode id, once its hypotheses carry one) — source ``hypothesis``;
2. the engine's typed facts that cite the root cause's first tool evidence, when their
   kind is a cause (``saturation``, ``oom_killed``, ``image_pull`` ...) — source ``facts``;
3. words of the root-cause statement (``PoolTimeout`` -> ``saturation``) — ``statement``.

No root cause, no cause kind (source ``none``): such an incident is listed by
``opsmate history`` but never matched as "seen before".
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from opsmate.agent.report.model import Report

# the cause kinds of the engine's facts (agent/observe/facts.py FactKind, causes only)
CAUSE_KINDS = frozenset(
    {
        "oom_killed",
        "last_words",
        "image_pull",
        "scheduling",
        "missing_reference",
        "probe_failure",
        "quota_refusal",
        "dependency_failure",
        "config_error",
        "selector_mismatch",
        "network_policy",
        "rbac_denied",
        "misconfiguration",
        "saturation",
        "node_problem",
    }
)
# root-cause words -> cause kind, most specific first (the fallback of rule 3)
_STATEMENT_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(rx, re.I))
    for kind, rx in (
        ("oom_killed", r"\bOOM ?Kill|out of memory"),
        ("image_pull", r"ImagePull|pull(?:ing)? (?:the )?image|manifest unknown"),
        ("quota_refusal", r"exceeded quota|ResourceQuota|LimitRange"),
        ("scheduling", r"unschedulable|FailedScheduling|cannot be scheduled|untolerated taint"),
        ("network_policy", r"NetworkPolicy"),
        ("rbac_denied", r"\bforbidden\b|\bRBAC\b"),
        ("selector_mismatch", r"selector\b.*\bmatch|no (?:ready )?endpoints"),
        ("probe_failure", r"(?:liveness|readiness|startup) probe"),
        ("node_problem", r"(?:Disk|Memory|PID)Pressure|EvictionThreshold|node\b.*NotReady"),
        ("saturation", r"PoolTimeout|pool\b.*(?:exhaust|limit|saturat)|exhaust|saturat|no space"),
        ("dependency_failure", r"connection refused|no such host|\bUNAVAILABLE\b|cannot reach"),
        ("missing_reference", r"not found|does not exist"),
        ("config_error", r"configuration error|invalid (?:value|config)|misconfigur"),
    )
)
_POD_SUFFIX = re.compile(r"-(?:[a-z0-9]{8,10}-[a-z0-9]{5}|[a-z0-9]{5})$")
# alert labels naming the subject, most telling first
_SUBJECT_LABELS = ("service", "deployment", "statefulset", "daemonset", "job_name", "pod")


@dataclass
class IncidentRecord:
    """One row of the history (times are aware datetimes, UTC)."""

    time: datetime  # when it started (the earliest firing alert), else when it was diagnosed
    recorded_at: datetime
    origin: str  # watch | diagnose
    subject: str  # workload / service name, lower-case ("" when the report names none)
    status: str
    summary: str
    question: str
    namespace: str | None = None
    environment: str | None = None
    services: list[str] = field(default_factory=list)
    alertnames: list[str] = field(default_factory=list)
    alert_labels: list[dict[str, str]] = field(default_factory=list)
    group_key: str | None = None
    content_key: str | None = None  # the alerts (fingerprints, start times), hashed
    root_cause: str | None = None
    chain: list[str] = field(default_factory=list)
    cause_kind: str | None = None
    cause_kind_source: str = "none"  # hypothesis | facts | statement | none
    next_step: str | None = None
    report_path: str | None = None
    resolved_at: datetime | None = None
    id: int | None = None

    def outcome(self) -> str:
        """That diagnosis in one line: ``complete, resolved 2026-...Z: <root cause>``."""
        head = self.status
        if self.resolved_at is not None:
            head += ", resolved " + self.resolved_at.strftime("%Y-%m-%dT%H:%M:%SZ")
        what = self.root_cause or self.summary
        return f"{head}: {_clip(what, 200)}" if what else head

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data = {"id": data.pop("id"), **data}
        for key in ("time", "recorded_at", "resolved_at"):
            value = data[key]
            data[key] = value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None
        data["outcome"] = self.outcome()
        return data


def _clip(text: str, limit: int) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1].rstrip() + "…"


def workload_name(name: str) -> str:
    """``order-service-7d9f8b6c4-x2x9k`` -> ``order-service`` (lower-case); others as is."""
    low = name.strip().lower()
    return _POD_SUFFIX.sub("", low) or low


def cause_kind(report: Report, facts: Iterable[Any] = ()) -> tuple[str | None, str]:
    """(cause kind, where it came from): see the module docstring."""
    if report.root_cause is None:
        return None, "none"
    data = report.to_json()
    root_ids = set(report.root_cause.evidence)
    kind = (data.get("root_cause") or {}).get("kind")
    if isinstance(kind, str) and kind:
        return kind, "hypothesis"
    hyps = [h for h in data.get("hypotheses") or [] if h.get("status") == "confirmed"]
    hyps.sort(key=lambda h: not (set(h.get("evidence") or []) & root_ids))
    for h in hyps:
        kind = h.get("kind")
        if isinstance(kind, str) and kind:
            return kind, "hypothesis"
    first = next((i for i in report.root_cause.evidence if i.startswith("E")), None)
    if first is not None:
        for f in facts:
            kind = str(getattr(f, "kind", "") or "")
            if kind in CAUSE_KINDS and first in (getattr(f, "evidence", None) or []):
                return kind, "facts"
    for kind, rx in _STATEMENT_KINDS:
        if rx.search(report.root_cause.statement):
            return kind, "statement"
    return None, "none"


def subject_of(
    report: Report, subject: Any = None, alerts: Sequence[Any] = ()
) -> tuple[str, str | None]:
    """(subject, namespace): the engine's subject, else the alerts' object labels, else
    the services the report was limited to."""
    namespace = getattr(subject, "namespace", None)
    for alert in alerts:
        namespace = namespace or alert.labels.get("namespace")
    names = [str(n) for n in getattr(subject, "names", None) or [] if n]
    if names:
        return workload_name(names[0]), namespace
    for label in _SUBJECT_LABELS:
        for alert in alerts:
            value = alert.labels.get(label)
            if value:
                return workload_name(value), namespace
    if report.constraints.services:
        return workload_name(report.constraints.services[0]), namespace
    return "", namespace


def alerts_key(alerts: Sequence[Any]) -> str | None:
    """The firing alerts (fingerprint or labels, start time), hashed: the same notification
    diagnosed twice (watch and ``diagnose --alert-file``) is one incident, not a recurrence."""
    parts = sorted(
        f"{a.fingerprint or json.dumps(a.labels, sort_keys=True)}@{a.starts_at}"
        for a in alerts
        if a.status == "firing"
    )
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24] if parts else None


def build_record(
    report: Report,
    *,
    origin: str,
    facts: Iterable[Any] = (),
    subject: Any = None,
    alerts: Sequence[Any] = (),
    group_key: str | None = None,
    report_path: str | None = None,
    now: datetime | None = None,
) -> IncidentRecord:
    """The incident a finished report describes. ``facts`` and ``subject`` are the
    engine's (``session.state``), read if present; ``alerts`` the firing alerts it was
    about. Alert labels pass the redactor; the report's texts already have."""
    from opsmate.tools.redact import clean

    now = (now or datetime.now(UTC)).astimezone(UTC)
    firing = [a for a in alerts if a.status == "firing"]
    starts = [a.starts_at for a in firing if a.starts_at is not None]
    name, namespace = subject_of(report, subject, firing)
    kind, source = cause_kind(report, facts)
    mitigation = next((s for s in report.next_steps if s.kind == "mitigation"), None)
    step = mitigation or (report.next_steps[0] if report.next_steps else None)
    return IncidentRecord(
        time=min(starts).astimezone(UTC) if starts else now,
        recorded_at=now,
        origin=origin,
        subject=name,
        status=report.status,
        summary=report.summary,
        question=report.question,
        namespace=namespace,
        environment=report.constraints.environment,
        services=list(report.constraints.services),
        alertnames=sorted({a.name for a in firing}),
        alert_labels=clean([dict(a.labels) for a in firing]),
        group_key=group_key,
        content_key=alerts_key(firing),
        root_cause=report.root_cause.statement if report.root_cause else None,
        chain=[c.statement for c in report.chain],
        cause_kind=kind,
        cause_kind_source=source,
        next_step=step.action if step else None,
        report_path=report_path,
    )
