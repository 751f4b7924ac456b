"""Which PromQL a snapshot records: discovered from what the Prometheus holds.

:func:`plan_queries` reads the metric names (``/api/v1/label/__name__/values``) and the
series that carry a service's name in any of the usual labels (``/api/v1/series``), and
builds, per service: request and error rates (by status code when a code label exists),
latency quantiles from histograms, each gauge as it is, per-pod CPU, memory (use and
limit) and restarts in the namespace; the queries the runbooks about a service write
(front-matter checks and PromQL blocks) whose metrics exist; and the expression of the
alert ``--alert`` names (``/api/v1/rules``). Each query is then recorded as a range
query over the window (and the alert's also as an instant query).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

SERVICE_LABELS = ("service", "app", "app_kubernetes_io_name", "job", "deployment", "container")
CODE_LABELS = ("code", "status", "status_code", "http_status")
POD_QUERIES = (  # the per-pod resource queries the engine's own rules ask
    'max by (pod) (container_memory_working_set_bytes{{pod=~"{svc}-.*", container!=""}})',
    'max by (pod) (kube_pod_container_resource_limits{{pod=~"{svc}-.*", resource="memory"}})',
    'sum by (pod) (rate(container_cpu_usage_seconds_total{{pod=~"{svc}-.*", container!=""}}[5m]))',
)
NAMESPACE_QUERIES = (
    'max by (pod) (kube_pod_container_status_restarts_total{{namespace="{ns}"}})',
    'sum by (pod) (rate(container_cpu_usage_seconds_total{{namespace="{ns}", container!=""}}[5m]))',
    'max by (pod) (container_memory_working_set_bytes{{namespace="{ns}", container!=""}})',
)
_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_COUNTER = ("_total", "_count", "_sum")


@dataclass
class PlannedQuery:
    query: str
    description: str
    instant: bool = False


def metric_names_in(query: str) -> set[str]:
    """Identifiers of ``query`` that may be metric names (words before ``{`` / ``[`` / end)."""
    words = set(_NAME.findall(re.sub(r'"[^"]*"', "", query)))
    return {w for w in words if "_" in w or ":" in w}


def _selector(label: str, value: str) -> str:
    return f'{label}="{value}"'


def service_queries(svc: str, series: list[dict[str, str]]) -> list[PlannedQuery]:
    """Queries describing ``svc`` from the series found for it (label sets with __name__)."""
    by_metric: dict[str, tuple[str, set[str]]] = {}
    for s in series:
        name = s.get("__name__")
        label = next((lb for lb in SERVICE_LABELS if s.get(lb) == svc), None)
        if not name or label is None:
            continue
        _, keys = by_metric.setdefault(name, (label, set()))
        keys.update(s)
    out: list[PlannedQuery] = []
    for name in sorted(by_metric):
        label, keys = by_metric[name]
        sel = _selector(label, svc)
        if name.endswith("_bucket"):
            q = f"histogram_quantile(0.99, sum by (le) (rate({name}{{{sel}}}[5m])))"
            out.append(PlannedQuery(q, f"p99 of {name.removesuffix('_bucket')} of {svc}"))
        elif name.endswith(_COUNTER):
            code = next((c for c in CODE_LABELS if c in keys), None)
            by = f"sum by ({code}) " if code else "sum "
            q = f"{by}(rate({name}{{{sel}}}[5m]))"
            out.append(
                PlannedQuery(q, f"rate of {name} of {svc}" + (f" by {code}" if code else ""))
            )
        else:
            out.append(PlannedQuery(f"{name}{{{sel}}}", f"{name} of {svc}"))
    return out


def runbook_queries(docs: Iterable[Any], services: list[str], names: set[str]) -> list[str]:
    """PromQL the runbooks about ``services`` write, when every metric in it exists."""
    from opsmate.agent.runbooks.commands import commands_in_section

    out: list[str] = []
    for doc in docs:
        if services and doc.service not in services:
            continue
        found = [str(c.args.get("query")) for c in doc.meta.checks if c.tool == "query_metrics"]
        for heading, text in doc.sections:
            found += [c.text for c in commands_in_section(text, heading) if c.tool]
        for q in found:
            used = metric_names_in(q)
            if q and "<" not in q and "$" not in q and used and used <= names and q not in out:
                out.append(q)
    return out


def plan_queries(
    *,
    services: list[str],
    namespace: str | None,
    names: set[str],
    series_of: Callable[[str], list[dict[str, str]]],
    runbook_docs: Iterable[Any] = (),
    alert_expr: tuple[str, str] | None = None,
) -> list[PlannedQuery]:
    """Every query a snapshot records (see the module docstring), without duplicates."""
    planned: list[PlannedQuery] = []
    if alert_expr is not None:
        name, expr = alert_expr
        planned.append(PlannedQuery(expr, f"expression of alert {name}"))
        planned.append(PlannedQuery(expr, f"expression of alert {name}", instant=True))
    for svc in services:
        planned += service_queries(svc, series_of(svc))
        for template in POD_QUERIES:
            q = template.format(svc=svc)
            if metric_names_in(q) <= names:
                planned.append(PlannedQuery(q, f"per-pod resources of {svc}"))
    if namespace:
        for template in NAMESPACE_QUERIES:
            q = template.format(ns=namespace)
            if metric_names_in(q) <= names:
                planned.append(PlannedQuery(q, f"per-pod resources in {namespace}"))
    planned += [
        PlannedQuery(q, "from a runbook") for q in runbook_queries(runbook_docs, services, names)
    ]
    seen: set[tuple[str, bool]] = set()
    unique = []
    for p in planned:
        key = (re.sub(r"\s+", "", p.query), p.instant)
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def series_matchers(svc: str) -> list[str]:
    """``match[]`` selectors finding the series of one service."""
    return [f'{{{label}="{svc}"}}' for label in SERVICE_LABELS]
