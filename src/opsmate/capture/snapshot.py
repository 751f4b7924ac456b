"""``opsmate snapshot``: capture an incident from the live sources before anyone asks.

:func:`take_snapshot` drives the live tools (read-only, the same clients, credentials and
time-outs as an investigation) through a :class:`~opsmate.capture.recorder.Recorder`, in
this order, each step on its own (a failure is listed in ``bundle.yaml`` under
``capture.not_captured`` with its reason, and the rest goes on):

1. the firing alerts and the alerting rules (the alert named by ``--alert`` gives its
   expression, and its ``namespace`` / ``service`` labels when no flag gave them);
2. every allow-listed Kubernetes kind in the namespace, the cluster-scoped ones (nodes,
   namespaces, volumes, classes, cluster roles), and the namespace's events;
3. the current and previous logs of the pods that are not healthy and of the services'
   pods (``--max-pod-log-lines`` each, at most :data:`MAX_PODS` pods);
4. the log source's records for the window and the services, paged, at most
   ``--max-log-records``;
5. the PromQL series that describe the services: metric discovery
   (:mod:`opsmate.tools.prometheus.discovery`), the runbooks' queries and the alert's
   expression (:mod:`opsmate.capture.snapshot_metrics`).

With ``--alert``, the bundle's question is the one ``diagnose --alert`` asks of that
alert, so ``diagnose --bundle`` of the snapshot investigates it.

Then everything is redacted and written as one bundle (:mod:`opsmate.capture.writer`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from opsmate.capture.attach import attach_recorder
from opsmate.capture.recorder import Recorder
from opsmate.capture.writer import BundleContent, WrittenBundle, write_bundle
from opsmate.records.payloads import LogsPayload, MetricNamesPayload
from opsmate.tools.base import CallContext, Constraints, ToolFailure, ToolOutput

MAX_PODS = 30  # pods whose logs a snapshot reads
MAX_METRIC_QUERIES = 40  # discovered queries a snapshot records
LOG_PAGE = 1000  # records per search_logs page
CALL_SECONDS = 60.0


@dataclass
class SnapshotOptions:
    """What to capture (the flags of ``opsmate snapshot``)."""

    env: str
    namespace: str | None
    services: list[str] = field(default_factory=list)
    since: timedelta = timedelta(hours=1)
    alert: str | None = None
    max_log_records: int = 20_000
    max_pod_log_lines: int = 500


class _Runner:
    """Runs live tools for the snapshot; a failure becomes a ``not_captured`` entry."""

    def __init__(self, registry: Any, constraints: Constraints, now: datetime) -> None:
        self.registry = registry
        self.constraints = constraints
        self.now = now
        self.not_captured: list[dict[str, str]] = []
        self.calls = 0

    def miss(self, what: str, why: str) -> None:
        self.not_captured.append({"what": what, "why": why})

    def call(self, tool: str, what: str, **args: Any) -> ToolOutput | None:
        spec = self.registry.get(tool)
        if spec is None:
            self.miss(what, f"no source configured for {tool} in this environment")
            return None
        self.calls += 1
        ctx = CallContext(
            call_id=f"snapshot_{self.calls:03d}",
            constraints=self.constraints,
            now=self.now,
            deadline=time.monotonic() + CALL_SECONDS,
        )
        try:
            out: ToolOutput = spec.run(spec.args_model.model_validate(args), ctx)
        except ToolFailure as exc:
            self.miss(what, f"{exc.code}: {exc.message}")
            return None
        except Exception as exc:
            self.miss(what, f"{type(exc).__name__}: {exc}")
            return None
        if out.status == "error" and out.error is not None:
            self.miss(what, f"{out.error.code}: {out.error.message}")
            return None
        return out


def _pods(rec: Recorder, namespace: str | None) -> list[dict[str, Any]]:
    from opsmate.capture.convert import k8s_objects

    objects, _ = k8s_objects(rec.k8s)
    return [
        o
        for o in objects
        if o.get("kind") == "Pod" and (o.get("metadata") or {}).get("namespace") == namespace
    ]


def unhealthy(pod: dict[str, Any]) -> bool:
    """Not running and ready, restarted, waiting, or terminated with an error."""
    status = pod.get("status") or {}
    if status.get("phase") not in ("Running", "Succeeded"):
        return True
    for cs in status.get("containerStatuses") or []:
        state = cs.get("state") or {}
        if cs.get("restartCount") or "waiting" in state:
            return True
        if status.get("phase") == "Running" and not cs.get("ready"):
            return True
        if (state.get("terminated") or {}).get("exitCode") not in (None, 0):
            return True
    return False


def of_service(pod: dict[str, Any], services: list[str]) -> bool:
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    name = str(meta.get("name") or "")
    return any(
        name.startswith(f"{s}-") or s in (labels.get("app"), labels.get("app.kubernetes.io/name"))
        for s in services
    )


def _pod_logs(
    run: _Runner, rec: Recorder, opts: SnapshotOptions, step: Callable[[str], None]
) -> None:
    if opts.max_pod_log_lines <= 0:
        run.miss("pod logs", "--max-pod-log-lines is 0")
        return
    pods = [p for p in _pods(rec, opts.namespace) if unhealthy(p) or of_service(p, opts.services)]
    if len(pods) > MAX_PODS:
        run.miss(f"logs of {len(pods) - MAX_PODS} more pods", f"at most {MAX_PODS} pods")
        pods = pods[:MAX_PODS]
    for pod in pods:
        name = pod["metadata"]["name"]
        step(f"logs of pod {name}")
        statuses = {
            cs.get("name"): cs for cs in (pod.get("status") or {}).get("containerStatuses") or []
        }
        for c in (pod.get("spec") or {}).get("containers") or []:
            cname = c.get("name")
            args = {"name": name, "namespace": opts.namespace, "container": cname,
                    "tail_lines": opts.max_pod_log_lines}  # fmt: skip
            run.call("pod_logs", f"log of {name}/{cname}", **args)
            cs = statuses.get(cname) or {}
            if cs.get("restartCount") or (cs.get("lastState") or {}).get("terminated"):
                run.call("pod_logs", f"previous log of {name}/{cname}", previous=True, **args)


def _logs(
    run: _Runner, opts: SnapshotOptions, start: datetime, step: Callable[[str], None]
) -> None:
    if opts.max_log_records <= 0:
        run.miss("log records", "--max-log-records is 0")
        return
    left = opts.max_log_records
    services: list[str | None] = list(opts.services) or [None]
    for svc in services:
        cursor: str | None = None
        while left > 0:
            step(f"log records of {svc or 'all services'} ({opts.max_log_records - left} so far)")
            args: dict[str, Any] = {"service": svc, "environment": opts.env,
                                    "from": start.isoformat(), "to": run.now.isoformat(),
                                    "page_size": min(LOG_PAGE, left)}  # fmt: skip
            if cursor:
                args["cursor"] = cursor
            out = run.call("search_logs", f"log records of {svc or 'all services'}", **args)
            if out is None:
                break
            page = out.payload_as(LogsPayload)
            left -= len(page.items) if page else 0
            cursor = out.next_cursor
            if not cursor:
                break
        if left <= 0:
            run.miss("more log records", f"--max-log-records {opts.max_log_records} reached")
            break


def _metrics(run: _Runner, rec: Recorder, opts: SnapshotOptions, settings: Any,
             step: Callable[[str], None]) -> None:  # fmt: skip
    """The series that describe the services: found by metric discovery (the request,
    error, duration, saturation and container series of the services, of the namespace
    around them, or, with neither, of every service aggregated), the runbooks' queries
    whose metrics exist, and the named alert's expression; each recorded over the window."""
    from opsmate.agent.runbooks.library import RunbookLibrary
    from opsmate.capture.snapshot_metrics import PlannedQuery, plan_queries
    from opsmate.tools.prometheus.discovery import DiscoveredMetrics

    if run.registry.get("discover_metrics") is None:
        run.miss("metrics", "no Prometheus configured for this environment")
        return
    step("metrics: discovery")
    args: dict[str, Any] = {"services": opts.services[:5], "environment": opts.env,
                            "limit": MAX_METRIC_QUERIES}  # fmt: skip
    if opts.namespace:
        args["namespace"] = opts.namespace
    out = run.call("discover_metrics", "metric discovery", **args)
    found = (out.payload_as(DiscoveredMetrics) if out is not None else None) or DiscoveredMetrics()
    names = set(_names(run, opts))
    discovered = [
        PlannedQuery(c.query, c.description or "discovered") for c in found.candidates if c.query
    ]
    for why in found.not_found:
        run.miss("metrics", why)
    alert_expr = None
    if opts.alert:
        rules = [r for g in rec.rules.get(opts.env, []) for r in g.get("rules") or []]
        for rule in rules:
            if rule.get("name") == opts.alert and rule.get("query"):
                alert_expr = (opts.alert, str(rule["query"]))
        if alert_expr is None:
            why = (f"no alerting rule of that name among the {len(rules)} rules Prometheus "
                   "holds" if rules else "the alerting rules could not be read")  # fmt: skip
            run.miss(f"expression of alert {opts.alert}", why)
    docs = RunbookLibrary(settings.runbook_paths()).all_docs()
    planned = plan_queries(discovered=discovered, services=opts.services, names=names,
                           runbook_docs=docs, alert_expr=alert_expr)  # fmt: skip
    for p in planned:
        step(f"metrics: {p.description}")
        q = {"query": p.query, "type": "instant" if p.instant else "range",
             "environment": opts.env}  # fmt: skip
        run.call("query_metrics", f"query {p.query}", **q)


def _names(run: _Runner, opts: SnapshotOptions) -> list[str]:
    """Every metric name (for the runbooks' queries: only those whose metrics exist)."""
    out = run.call("metric_names", "metric names", limit=5000, environment=opts.env)
    listed = out.payload_as(MetricNamesPayload) if out else None
    return list(listed.names if listed else [])


def _from_alert(rec: Recorder, opts: SnapshotOptions) -> None:
    """The namespace and services the named alert's labels give, when no flag gave them."""
    for alert in rec.alerts.get(opts.env, []):
        labels = alert.get("labels") or {}
        if labels.get("alertname") != opts.alert:
            continue
        opts.namespace = opts.namespace or labels.get("namespace")
        for key in ("service", "deployment", "app", "job"):
            if labels.get(key) and not opts.services:
                opts.services = [str(labels[key])]


def take_snapshot(settings: Any, opts: SnapshotOptions, out: Path,
                  step: Callable[[str], None] = lambda _: None) -> WrittenBundle:  # fmt: skip
    """Capture ``opts`` from the live sources of ``settings`` into the bundle ``out``."""
    from opsmate.capture.convert import live_parts
    from opsmate.capture.save import configured_sources
    from opsmate.loganalysis.parse import configure
    from opsmate.tools.k8s_kinds import KIND_TABLE
    from opsmate.tools.redact import Redactor
    from opsmate.tools.registry import live_registry

    configure(settings.logs)
    registry = live_registry(settings)
    rec = attach_recorder(registry)
    now = datetime.now(UTC)
    start = now - opts.since
    constraints = Constraints(environment=opts.env, window_from=start, window_to=now,
                              max_window=opts.since, max_page_size=LOG_PAGE)  # fmt: skip
    run = _Runner(registry, constraints, now)
    step("alerts")
    run.call("list_alerts", "firing alerts", environment=opts.env)
    run.call("list_alerts", "alerting rules", environment=opts.env, state="inactive")
    if opts.alert:
        _from_alert(rec, opts)
    question = _alert_question(rec, opts, run) if opts.alert else None
    if opts.namespace:
        constraints.namespaces = [opts.namespace]
    if registry.get("list_objects") is None:
        run.miss("Kubernetes objects", "no Kubernetes configured for this environment")
    else:
        if not opts.namespace:
            run.miss("Kubernetes objects of a namespace (pods, events, workloads, pod logs)",
                     "no --namespace given and none configured for the environment "
                     "(kubernetes.namespaces); only cluster-wide kinds were read")  # fmt: skip
        for info in KIND_TABLE:
            if info.namespaced and not opts.namespace:
                continue
            step(f"kubernetes {info.resource}")
            got = run.call("list_objects", f"k8s {info.kind}", kind=info.kind,
                           namespace=opts.namespace, environment=opts.env)  # fmt: skip
            if got is not None and not got.complete:
                run.miss(f"more {info.kind} objects", "only the first page (500) is read")
        if opts.namespace:
            step("kubernetes events")
            run.call("get_events", "k8s Event", namespace=opts.namespace, environment=opts.env)
            _pod_logs(run, rec, opts, step)
    if registry.get("search_logs") is not None:
        _logs(run, opts, start, step)
    else:
        run.miss("log records", "no log source configured for this environment")
    _metrics(run, rec, opts, settings, step)
    step("writing the bundle")
    parts = live_parts(rec, opts.env, max_pod_lines=opts.max_pod_log_lines)
    searched = [r for r in parts["logs"] if "_id" in r]  # oldest first
    if len(searched) > opts.max_log_records:  # a page reads one record more, to see if any
        drop = {id(r) for r in searched[: len(searched) - opts.max_log_records]}
        parts["logs"] = [r for r in parts["logs"] if id(r) not in drop]
    what = opts.namespace or "cluster"
    title = f"snapshot of {', '.join(opts.services) or what} ({opts.env})"
    content = BundleContent(
        title=title,
        captured_at=now,
        window_from=start,
        window_to=now,
        environment=opts.env,
        cluster=_context(settings, opts.env),
        question=question,
        by="opsmate snapshot",
        objects=parts["objects"],
        logs=parts["logs"],
        metrics=parts["metrics"],
        alerts=parts["alerts"],
        not_captured=run.not_captured + parts["not_captured"],
        sources=configured_sources(settings.environments.get(opts.env)),
    )
    return write_bundle(content, out, Redactor(settings.tools.redact_patterns))


def _alert_question(rec: Recorder, opts: SnapshotOptions, run: _Runner) -> str:
    """The question ``diagnose --alert`` would ask of the alert ``opts.alert`` (its labels,
    onset and annotations), so ``diagnose --bundle`` of the snapshot investigates it."""
    from opsmate.alerting.incident import build_incident
    from opsmate.timeparse import parse_time
    from opsmate.tools.alertmanager.model import Alert

    for a in rec.alerts.get(opts.env, []):
        labels = {str(k): str(v) for k, v in (a.get("labels") or {}).items()}
        if labels.get("alertname") != opts.alert and a.get("fingerprint") != opts.alert:
            continue
        try:
            start = parse_time(str(a["activeAt"])) if a.get("activeAt") else None
        except ValueError:
            start = None
        notes = {str(k): str(v) for k, v in (a.get("annotations") or {}).items()}
        alert = Alert(labels=labels, annotations=notes, starts_at=start)
        return build_incident([alert]).question
    run.miss(f"alert {opts.alert}", "not firing (or not found) when the snapshot was taken")
    return f"Why did the alert {opts.alert} fire?"


def _context(settings: Any, env: str) -> str | None:
    cfg = settings.environments.get(env)
    return cfg.kubernetes.context if cfg is not None and cfg.kubernetes is not None else None
