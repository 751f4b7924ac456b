"""One or several alerts turned into an investigation: question, environment, onset, runbook.

The question is written in the words the engine's intake already reads (as incident
tooling phrases it: ``Investigate this alert: KubePodCrashLooping (subject: pod X in
namespace Y)``): the alert name, the subject (the most specific Kubernetes object label:
pod, deployment, statefulset, job, pvc, service, node; the container; the namespace),
the severity, the start time as an ISO timestamp (the onset: intake anchors the time
window on it) and the summary / description annotations. A group of alerts is one
incident with several symptoms: each alert is listed, the earliest start time first.

The environment comes from the ``env`` / ``environment`` / ``cluster`` labels
(``alerting.environment_labels``), mapped through ``alerting.environments`` (a label
value that is itself a configured environment maps to itself). A ``runbook_url``
annotation becomes a preferred runbook (read first when it is indexed).

Label conventions: kube-state-metrics alerts carry ``job`` / ``service`` / ``instance``
labels naming the *exporter*; those are ignored when an object label (pod, deployment,
...) names the subject, and ``job_name`` is read as the Kubernetes Job.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from opsmate.config import AlertingConfig
from opsmate.tools.alertmanager.model import KIND_WORDS, Alert

MAX_ALERTS = 8  # alerts of one group written into the question (the rest are counted)
MAX_TEXT = 240  # characters of a summary / description kept
# scrape jobs and exporters whose names sit in job / service labels of Kubernetes alerts
_EXPORTER = re.compile(
    r"exporter|kube-state-metrics|kubelet|cadvisor|apiserver|prometheus|alertmanager|coredns",
    re.I,
)
_OBJECT_LABELS = ("pod", "deployment", "statefulset", "job", "persistentvolumeclaim", "node")
_SEVERITY_ORDER = {"critical": 0, "error": 1, "high": 1, "warning": 2, "warn": 2, "info": 3}


@dataclass
class Incident:
    """What an investigation of some alerts starts from."""

    question: str
    alerts: list[Alert]
    alertnames: list[str]
    environment: str | None = None
    services: list[str] = field(default_factory=list)
    namespace: str | None = None
    onset: datetime | None = None
    runbook_urls: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        return self.alertnames[0] if len(self.alertnames) == 1 else "+".join(self.alertnames[:3])


def _clean(text: str, limit: int = MAX_TEXT) -> str:
    """One line, at most ``limit`` characters, without a trailing full stop."""
    one = " ".join(text.split()).rstrip(". ")
    return one if len(one) <= limit else one[: limit - 1].rstrip() + "…"


def _k8s_job(alert: Alert) -> str | None:
    labels = alert.labels
    if labels.get("job_name"):
        return labels["job_name"]
    job = labels.get("job")
    if job and not _EXPORTER.search(job) and not any(labels.get(k) for k in ("pod", "instance")):
        return job
    return None


def subject_objects(alert: Alert) -> list[tuple[str, str]]:
    """(kind word, name) of the objects an alert names, most specific first."""
    labels = alert.labels
    out: list[tuple[str, str]] = []
    for key in _OBJECT_LABELS:
        value = _k8s_job(alert) if key == "job" else labels.get(key)
        if value:
            out.append((KIND_WORDS[key], value))
    service = labels.get("service")
    if service and not out and not _EXPORTER.search(service):
        out.append(("service", service))
    return out


def services_of(alert: Alert) -> list[str]:
    """Service names an alert names (its ``service`` label unless that is an exporter's)."""
    svc = alert.labels.get("service")
    if svc and not _EXPORTER.search(svc):
        return [svc]
    return []


def describe_subject(alert: Alert) -> str:
    """``pod X, container c in namespace N`` (empty when the alert names no object). A
    service is named without a kind word: a ``service`` label names an application more
    often than a Kubernetes Service object."""
    parts = [
        name if kind == "service" else f"{kind} {name}" for kind, name in subject_objects(alert)
    ]
    if alert.labels.get("container"):
        parts.append(f"container {alert.labels['container']}")
    text = ", ".join(parts)
    ns = alert.labels.get("namespace")
    if ns:
        text = f"{text} in namespace {ns}" if text else f"namespace {ns}"
    return text


def _iso(t: datetime | None) -> str | None:
    """UTC, to the minute (rounded down: an alert fires after its problem began)."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:00Z") if t else None


def _alert_phrase(alert: Alert, *, with_time: bool) -> str:
    subject = describe_subject(alert)
    text = alert.name + (f" (subject: {subject})" if subject else "")
    if alert.severity:
        text += f", severity {alert.severity}"
    if with_time and alert.starts_at:
        text += f", firing since {_iso(alert.starts_at)}"
    if alert.status == "resolved":
        text += " (resolved)"
    return text


def _annotations(alert: Alert) -> list[str]:
    out = []
    for key in ("summary", "description", "message"):
        value = alert.annotations.get(key)
        if value and _clean(value) not in out:
            out.append(_clean(value))
    return out


def map_environment(
    alerts: Sequence[Alert], config: AlertingConfig, known: Iterable[str]
) -> str | None:
    """The environment the alerts' env / cluster labels name (see module doc), or None."""
    known_set = set(known)
    for alert in alerts:
        for label in config.environment_labels:
            value = alert.labels.get(label)
            if not value:
                continue
            if value in config.environments:
                return config.environments[value]
            if value in known_set:
                return value
    return None


def _order(alerts: Sequence[Alert]) -> list[Alert]:
    """Earliest first (the onset leads the question), then the most severe."""
    far = datetime.max.replace(tzinfo=UTC)
    return sorted(
        alerts,
        key=lambda a: (a.starts_at or far, _SEVERITY_ORDER.get(a.severity or "", 5), a.name),
    )


def build_incident(
    alerts: Sequence[Alert],
    *,
    config: AlertingConfig | None = None,
    known_environments: Iterable[str] = (),
) -> Incident:
    """The incident of ``alerts`` (firing ones; all of them when every one is resolved)."""
    if not alerts:
        raise ValueError("an incident needs at least one alert")
    config = config or AlertingConfig()
    notes: list[str] = []
    firing = [a for a in alerts if a.status == "firing"]
    if not firing:
        notes.append("every alert of the notification is resolved; investigating it anyway")
        firing = list(alerts)
    ordered = _order(firing)
    shown = ordered[:MAX_ALERTS]
    if len(ordered) > len(shown):
        notes.append(f"{len(ordered) - len(shown)} more alerts of the group are not described")
    onset = shown[0].starts_at
    if len(shown) == 1:
        a = shown[0]
        question = f"Investigate this alert: {_alert_phrase(a, with_time=True)}."
    else:
        since = f", firing since {_iso(onset)}" if onset else ""
        head = f"Investigate these {len(shown)} alerts as one incident{since}: "
        question = head + "; ".join(_alert_phrase(a, with_time=False) for a in shown) + "."
    texts: list[str] = []
    for a in shown:
        for t in _annotations(a):
            if t not in texts:
                texts.append(t)
    if texts:
        question += " " + ". ".join(texts[:4]) + "."
    names = list(dict.fromkeys(a.name for a in shown))
    services = list(dict.fromkeys(s for a in shown for s in services_of(a)))
    namespaces = list(
        dict.fromkeys(a.labels["namespace"] for a in shown if a.labels.get("namespace"))
    )
    runbooks = list(
        dict.fromkeys(
            u
            for a in shown
            for u in (a.annotations.get("runbook_url"), a.annotations.get("runbook"))
            if u
        )
    )
    return Incident(
        question=question,
        alerts=list(shown),
        alertnames=names,
        environment=map_environment(shown, config, known_environments),
        services=services,
        namespace=namespaces[0] if namespaces else None,
        onset=onset,
        runbook_urls=runbooks,
        notes=notes,
    )
