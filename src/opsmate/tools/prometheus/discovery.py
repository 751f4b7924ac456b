"""Metric discovery on a live Prometheus: which series describe the subject, and the PromQL
worth asking about them.

A replayed bundle hands the planner the queries it recorded; a live Prometheus holds
thousands of metrics under names no one told us. ``discover_metrics`` finds, for the
services of the question (or its namespace, or the whole server), the series that are
there and builds the request / error / duration / resource survey from them:

1. ``/api/v1/label/__name__/values`` (every metric name in the window) and
   ``/api/v1/metadata`` (types: counter, histogram, gauge);
2. ``/api/v1/series`` for the subject's labels: a service's name under any of
   :data:`SERVICE_LABELS`, its pods (``pod=~"<service>-.*"``, in the namespace when one is
   known); without a service, the namespace's request and container series; without
   either, the label names of the request metrics (``/api/v1/labels``);
3. candidates (:func:`build_candidates`): the rate of each request counter by its status
   code label, the p99 of each duration histogram, the error counters, the saturation
   gauges (pools, queues, lag), and per pod the container CPU, throttling, memory and
   restarts; and what could not be built (no duration histogram, no container series ...).

The answer's ``candidates`` are ordered (errors and requests, durations, resources, the
rest) and capped; ``not_found`` says what is missing. Nothing here shapes series values:
the queries run later through ``query_metrics``, as a bundle's recorded ones do.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from opsmate.records.base import Record
from opsmate.records.payloads import Payload
from opsmate.records.types import Count, StrList, Text, items
from opsmate.timeparse import format_time, parse_time
from opsmate.tools.base import CallContext, ToolFailure, ToolOutput, call_environment

if TYPE_CHECKING:
    from datetime import datetime

# labels that name the service a series is about (application, mesh, ingress, cAdvisor)
SERVICE_LABELS = ("service", "app", "app_kubernetes_io_name", "service_name", "application",
                  "deployment", "workload", "k8s_deployment_name", "destination_workload",
                  "destination_service_name", "destination_app", "exported_service", "ingress",
                  "job", "container")  # fmt: skip
CODE_LABELS = ("code", "status", "status_code", "http_status", "response_code",
               "http_response_status_code", "grpc_code")  # fmt: skip
MAX_CANDIDATES = 40
MAX_SERVICES = 5
_REQUESTS = re.compile(r"request|calls|handled|http_server|grpc_server|hits|responses", re.I)
_ERRORS = re.compile(r"error|fail|exception|timeout|reject|drop", re.I)
_SATURATION = re.compile(
    r"pool|queue|lag|in_use|inflight|in_flight|active|pending|waiting|saturation|utili[sz]ation"
    r"|connections|threads|backlog|_ratio$",
    re.I,
)
_RESOURCE_NAMES = re.compile(
    r"^(?:container_cpu_usage_seconds_total|container_memory_working_set_bytes"
    r"|container_cpu_cfs_(?:throttled_)?periods_total|kube_pod_container_status_restarts_total"
    r"|kube_pod_container_resource_limits|container_oom_events_total)$"
)
_NAMESPACE_NAMES = (  # the request, error, saturation and container series of a namespace
    ".*(?:requests?|calls|handled)(?:_total)?|.*requests?.*_count|.*_bucket|.*errors?_total"
    "|.*(?:_lag|_in_use|pool_.*|queue_.*)|container_cpu_usage_seconds_total"
    "|container_memory_working_set_bytes|container_cpu_cfs_(?:throttled_)?periods_total"
    "|kube_pod_container_status_restarts_total"
)
# the order candidates come in (and are capped in)
FAMILY_ORDER = ("errors", "requests", "duration", "saturation", "resource", "other")


class DiscoverMetricsArgs(BaseModel):
    """Arguments of ``discover_metrics``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    services: list[str] = Field(
        default_factory=list, max_length=MAX_SERVICES, description="services to find series of"
    )
    namespace: str | None = Field(None, description="the Kubernetes namespace of the services")
    from_: str | None = Field(None, alias="from", description="window start (default: task's)")
    to: str | None = Field(None, description="window end (default: the task's)")
    limit: int = Field(MAX_CANDIDATES, ge=1, le=200, description="most candidate queries")
    environment: str | None = Field(None, description="defaults to the task's environment")


class CandidateRecord(Record):
    """One candidate query of a ``discover_metrics`` answer."""

    query: Text = None
    description: Text = None
    family: Text = None
    service: Text = None


class DiscoveredMetrics(Payload):
    """``discover_metrics``: what the Prometheus holds for the subject, and the queries
    worth asking (``candidates``, in order), and what it does not (``not_found``)."""

    names_total: Count = 0
    typed: Count = 0
    series_total: Count = 0
    metrics: dict[str, list[str]] = Field(default_factory=dict)
    candidates: Annotated[list[CandidateRecord], items(CandidateRecord)] = Field(
        default_factory=list
    )
    not_found: StrList = Field(default_factory=list)


@dataclass
class Candidate:
    """One query worth asking: its text, what it shows, its family and the service."""

    query: str
    description: str
    family: str
    service: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {"query": self.query, "description": self.description, "family": self.family}
        return {**out, "service": self.service} if self.service else out


@dataclass
class _Metric:
    name: str
    labels: set[str] = field(default_factory=set)
    selector: str = ""  # the matchers that found it: service="x", or pod=~"x-.*"
    by: str | None = None  # the label that tells services apart (namespace and overview)


def _q(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _re_escape(value: str) -> str:
    return re.sub(r"([.+*?()\[\]{}|^$\\])", r"\\\\\1", value)


def series_matchers(service: str, namespace: str | None) -> list[str]:
    """``match[]`` selectors finding a service's series: its name under each service label,
    and its pods' series (in ``namespace`` when known)."""
    out = [f'{{{label}="{_q(service)}"}}' for label in SERVICE_LABELS]
    ns = f', namespace="{_q(namespace)}"' if namespace else ""
    out.append(f'{{pod=~"{_re_escape(service)}-.*"{ns}}}')
    return out


def _kind(name: str, labels: set[str], types: dict[str, str], names: set[str]) -> str:
    if name.endswith("_bucket") and "le" in labels:
        return "histogram"
    base = re.sub(r"_(?:bucket|count|sum|total)$", "", name)
    meta = types.get(name) or types.get(base) or ""
    if name.endswith(("_count", "_sum")) and (f"{base}_bucket" in names or meta == "summary"):
        return "histogram_part"
    if name.endswith("_total") or meta == "counter" or name.endswith("_count"):
        return "counter"
    return "gauge"


def _resource_queries(sel: str, names: set[str]) -> list[Candidate]:
    """Per-pod CPU, throttling, memory (and its limit) and restarts, where they exist."""
    out = []
    c = f'{sel}, container!=""'
    if "container_cpu_usage_seconds_total" in names:
        q = f"sum by (pod) (rate(container_cpu_usage_seconds_total{{{c}}}[5m]))"
        out.append(Candidate(q, "CPU used per pod (cores)", "resource"))
    if {"container_cpu_cfs_throttled_periods_total", "container_cpu_cfs_periods_total"} <= names:
        q = (
            f"sum by (pod) (rate(container_cpu_cfs_throttled_periods_total{{{c}}}[5m])) / "
            f"sum by (pod) (rate(container_cpu_cfs_periods_total{{{c}}}[5m]))"
        )
        out.append(Candidate(q, "CPU throttling per pod (throttled / all CFS periods)", "resource"))
    if "container_memory_working_set_bytes" in names:
        q = f"max by (pod) (container_memory_working_set_bytes{{{c}}})"
        out.append(Candidate(q, "memory working set per pod (bytes)", "resource"))
    if "kube_pod_container_resource_limits" in names:
        q = f'max by (pod) (kube_pod_container_resource_limits{{{sel}, resource="memory"}})'
        out.append(Candidate(q, "memory limit per pod (bytes)", "resource"))
    if "kube_pod_container_status_restarts_total" in names:
        q = f"max by (pod) (kube_pod_container_status_restarts_total{{{sel}}})"
        out.append(Candidate(q, "container restarts per pod", "resource"))
    if "container_oom_events_total" in names:
        q = f"max by (pod) (container_oom_events_total{{{c}}})"
        out.append(Candidate(q, "OOM kills per pod", "resource"))
    return out


def _metric_candidates(m: _Metric, kind: str, who: str, by: str | None) -> list[Candidate]:
    """The queries one application metric of ``who`` is worth (``by``: labels to keep)."""
    name, sel = m.name, m.selector
    keep = f"{by}, " if by else ""
    code = next((c for c in CODE_LABELS if c in m.labels), None)
    if kind == "histogram":
        base = name.removesuffix("_bucket")
        q = f"histogram_quantile(0.99, sum by ({keep}le) (rate({name}{{{sel}}}[5m])))"
        return [Candidate(q, f"p99 of {base} of {who}", "duration")]
    if kind == "counter":
        family = "errors" if _ERRORS.search(name) else "requests" if code or _REQUESTS.search(
            name) else "other"  # fmt: skip
        group = ", ".join(x for x in (by, code) if x)
        agg = f"sum by ({group}) " if group else "sum "
        what = f"rate of {name} of {who}" + (f" by {code}" if code else "")
        if code:
            family = "errors"  # a status code shows the error rate beside the request rate
        return [Candidate(f"{agg}(rate({name}{{{sel}}}[5m]))", what, family)]
    if kind == "gauge":  # pools, queues, lag first; any other gauge of the service last
        q = f"max by ({by}) ({name}{{{sel}}})" if by else f"{name}{{{sel}}}"
        return [Candidate(q, f"{name} of {who}", "saturation" if _SATURATION.search(name)
                          else "other")]  # fmt: skip
    return []


def build_candidates(
    found: dict[str, list[_Metric]], types: dict[str, str], names: set[str]
) -> tuple[list[Candidate], list[str]]:
    """Candidates per subject (service name or ``namespace X``) from the metrics found for
    it, and the sentences saying what is missing."""
    out: list[Candidate] = []
    missing: list[str] = []
    for who, metrics in found.items():
        mine: list[Candidate] = []
        pods_sel = ""
        for m in metrics:
            if _RESOURCE_NAMES.match(m.name):
                pods_sel = pods_sel or m.selector
                continue
            kind = _kind(m.name, m.labels, types, names)
            mine += [
                Candidate(c.query, c.description, c.family, who)
                for c in _metric_candidates(m, kind, who, m.by)
            ]
        present = {m.name for m in metrics}
        if pods_sel and not who.startswith("all "):
            mine += [
                Candidate(c.query, f"{c.description} of {who}", c.family, who)
                for c in _resource_queries(pods_sel, present)
            ]
        families = {c.family for c in mine}
        if not metrics:
            missing.append(f"{who}: no series under the labels {', '.join(SERVICE_LABELS)} "
                           f"nor of pods named {who}-*")  # fmt: skip
            continue
        wanted = [
            ("errors", "no request counter with a status code (error rate)"),
            ("duration", "no request-duration histogram (latency)"),
            ("resource", "no container CPU / memory series of its pods"),
        ]
        if who.startswith("namespace "):  # its services are their own groups
            wanted = wanted[2:]
        for fam, what in wanted:
            if fam not in families:
                missing.append(f"{who}: {what}")
        out += mine
    order = {f: i for i, f in enumerate(FAMILY_ORDER)}
    out.sort(key=lambda c: (order.get(c.family, 9), len(c.query)))
    seen: set[str] = set()
    unique = [c for c in out if not (c.query in seen or seen.add(c.query))]  # type: ignore[func-returns-value]
    return unique, missing


def _collect(
    series: Iterable[Any], services: list[str], namespace: str | None
) -> dict[str, list[_Metric]]:
    """Series label sets grouped per service and metric (the label that named it)."""
    found: dict[str, dict[str, _Metric]] = {s: {} for s in services}
    for s in series:
        if not isinstance(s, dict) or not isinstance(s.get("__name__"), str):
            continue
        name = s["__name__"]
        labels = {k for k in s if k != "__name__"}
        for svc in services:
            label = next((lb for lb in SERVICE_LABELS if s.get(lb) == svc), None)
            pod = str(s.get("pod") or "")
            if label is not None and not _RESOURCE_NAMES.match(name):
                sel = f'{label}="{_q(svc)}"'
            elif pod.startswith(f"{svc}-"):
                ns = f'namespace="{_q(namespace)}", ' if namespace and "namespace" in s else ""
                sel = f'{ns}pod=~"{_re_escape(svc)}-.*"'
            else:
                continue
            m = found[svc].setdefault(name, _Metric(name, set(), sel))
            m.labels |= labels
    return {svc: list(ms.values()) for svc, ms in found.items()}


def discover_metrics(tools: Any, args: DiscoverMetricsArgs, ctx: CallContext) -> ToolOutput:
    """The ``discover_metrics`` tool (see the module docstring); ``tools`` is the
    source's :class:`~opsmate.tools.prometheus.tools.PrometheusTools` (its clients)."""
    env = call_environment(args.environment, ctx, tools.settings.default_environment)
    c = ctx.constraints
    end = _when(args.to, "to", ctx.now) or c.window_to or ctx.now
    start = _when(args.from_, "from", ctx.now) or c.window_from or end
    services = [s for s in dict.fromkeys(args.services) if s]
    scope: dict[str, Any] = {"source": "prometheus", "environment": env,
                             "services": services or None, "namespace": args.namespace,
                             "from": format_time(start), "to": format_time(end)}  # fmt: skip
    scope = {k: v for k, v in scope.items() if v is not None}
    span = {"start": start.timestamp(), "end": end.timestamp()}

    def run(cl: Any) -> ToolOutput:
        def get(path: str, params: dict[str, Any]) -> Any:
            timeout = float(cl.source.timeout)  # never past the call's deadline
            if ctx.deadline is not None:
                timeout = max(min(timeout, ctx.deadline - time.monotonic()), 0.05)
            return cl.get_json(path, params, timeout)

        names = {str(n) for n in get("/api/v1/label/__name__/values", span) or []}
        meta = get("/api/v1/metadata", {}) or {}
        types = {
            str(n): str(rows[0].get("type") or "")
            for n, rows in (meta.items() if isinstance(meta, dict) else [])
            if isinstance(rows, list) and rows and isinstance(rows[0], dict)
        }
        missing: list[str] = []
        series: list[Any] = []
        found: dict[str, list[_Metric]] = {}
        if services:
            match = [m for s in services for m in series_matchers(s, args.namespace)]
            series += get("/api/v1/series", {"match[]": match, **span}) or []
            found.update(_collect(series, services, args.namespace))
        if args.namespace:  # the services around them: what they call, what calls them
            ns = _q(args.namespace)
            match = [f'{{__name__=~"{_NAMESPACE_NAMES}", namespace="{ns}"}}']
            around = get("/api/v1/series", {"match[]": match, **span}) or []
            series += around
            found.update(_namespace_found(around, args.namespace))
        if not services and not args.namespace:
            found = _overview(names, lambda n: get("/api/v1/labels", {"match[]": [n], **span}))
            missing.append("no service or namespace named: the request series of every "
                           "service, aggregated")  # fmt: skip
        candidates, absent = build_candidates(found, types, names)
        shown = candidates[: args.limit]
        if len(candidates) > len(shown):
            missing.append(f"{len(candidates) - len(shown)} more candidate queries left out "
                           f"(limit {args.limit})")  # fmt: skip
        data = {
            "names_total": len(names),
            "typed": len(types),
            "series_total": len(series),
            "metrics": {who: sorted(m.name for m in ms) for who, ms in found.items()},
            "candidates": [x.as_dict() for x in shown],
            "not_found": absent + missing,
        }
        return ToolOutput(status="success" if shown else "no_data", data=data, scope=scope)

    return tools._run(env, run)


def _by(labels: set[str]) -> str | None:
    return next((lb for lb in SERVICE_LABELS if lb in labels), None)


def _namespace_found(series: Iterable[Any], namespace: str) -> dict[str, list[_Metric]]:
    """A namespace's request and container series, each application metric kept per the
    service label it carries (aggregated by it), container series per pod."""
    ns = _q(namespace)
    metrics: dict[str, _Metric] = {}
    for s in series:
        if isinstance(s, dict) and isinstance(s.get("__name__"), str):
            name = s["__name__"]
            m = metrics.setdefault(name, _Metric(name, set(), f'namespace="{ns}"'))
            m.labels |= {k for k in s if k != "__name__"}
    for m in metrics.values():
        m.by = _by(m.labels - {"container"}) if not _RESOURCE_NAMES.match(m.name) else None
    return {f"namespace {namespace}": list(metrics.values())}


def _overview(names: set[str], labels_of: Any) -> dict[str, list[_Metric]]:
    """Without a subject: the request counters and duration histograms, each aggregated by
    the service label it carries (their label names read per metric, at most eight)."""
    picked = sorted(n for n in names if re.search(r"(?:requests?|calls|handled)_total$", n))[:5]
    picked += sorted(n for n in names if n.endswith("_bucket") and _REQUESTS.search(n))[:3]
    metrics = []
    for name in picked:
        keys = {str(k) for k in labels_of(f'{{__name__="{name}"}}') or []}
        metrics.append(_Metric(name, keys, "", _by(keys)))
    return {"all services": metrics}


def _when(raw: str | None, name: str, now: datetime) -> datetime | None:
    if raw is None:
        return None
    try:
        return parse_time(raw, now)
    except ValueError as exc:
        raise ToolFailure("bad_request", f"argument '{name}': {exc}") from exc
