"""Prometheus as a live, read-only tool source (prometheus-api-client).

Tools: ``query_metrics`` (instant / range PromQL, summarised per series), ``list_alerts``
(``/api/v1/alerts``; ``state=inactive``: the alerting rules not active, from
``/api/v1/rules``), ``metric_names`` and ``metric_metadata`` (so a planner uses names that
exist). The server of an environment is ``environments.<env>.prometheus``; a bearer token
or basic auth comes from :mod:`opsmate.credentials`. Answers are shaped with
:mod:`opsmate.tools.shaping` as bundle replay shapes them; every failure is a
:class:`ToolFailure` with a stable code, and nothing else leaves a tool function.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from opsmate.records.payloads import MetricNamesPayload
from opsmate.timeparse import format_time, parse_time
from opsmate.tools import schemas as s
from opsmate.tools.base import (
    CallContext,
    ToolFailure,
    ToolOutput,
    ToolSpec,
    Truncation,
    call_environment,
    http_status_code,
)
from opsmate.tools.shaping import alerts_output, choose_step, metric_ref, summarize_prom_data

if TYPE_CHECKING:
    import requests

    from opsmate.config import PrometheusSource, Settings

MAX_POINTS = 20  # raw samples kept per series in an answer (as bundle replay keeps)
POINT_BUDGET = 120  # points per series a chosen step aims for
PROM_MAX_POINTS = 11_000  # Prometheus refuses range queries above this many points per series
DEFAULT_RANGE = timedelta(hours=1)


class MetricNamesArgs(BaseModel):
    """Arguments of ``metric_names``."""

    model_config = ConfigDict(extra="forbid")
    match: str | None = Field(None, description="case-insensitive substring of the metric name")
    limit: int = Field(200, ge=1, le=5000, description="most names returned")
    environment: str | None = Field(None, description="defaults to the task's environment")


class MetricMetadataArgs(BaseModel):
    """Arguments of ``metric_metadata``."""

    model_config = ConfigDict(extra="forbid")
    metric: str | None = Field(None, description="one metric name; all metrics when absent")
    limit: int = Field(100, ge=1, le=5000, description="most metrics returned")
    environment: str | None = Field(None, description="defaults to the task's environment")


def _status_failure(status: int, detail: str, url: str) -> ToolFailure:
    """A ToolFailure for an HTTP error status from Prometheus."""
    detail = detail.strip()[:500] or f"HTTP {status}"
    if status in (401, 403):
        return ToolFailure(
            "auth",
            f"Prometheus at {url} refused the credentials (HTTP {status}): {detail}; set a "
            "token with `opsmate auth set prometheus` or OPSMATE_PROMETHEUS_TOKEN",
        )
    code, retry = http_status_code(status)
    return ToolFailure(code, f"Prometheus at {url}: HTTP {status}: {detail}", retryable=retry)


def _error_detail(body: bytes | str) -> str:
    """The ``error`` field of a Prometheus error body, else the body itself."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        payload = json.loads(text)
    except ValueError:
        return text
    if isinstance(payload, dict) and payload.get("error"):
        kind = payload.get("errorType")
        return f"{kind}: {payload['error']}" if kind else str(payload["error"])
    return text


_CLIENT_STATUS = re.compile(r"^HTTP Status Code (\d+) \((.*)\)$", re.S)


def _failure(exc: BaseException, url: str, timeout: float | None = None) -> ToolFailure:
    """Map an exception from requests / prometheus-api-client to a ToolFailure (``timeout``:
    the client's time-out, said in the message when it ran out)."""
    import requests
    from prometheus_api_client import PrometheusApiClientException

    if isinstance(exc, ToolFailure):
        return exc
    if isinstance(exc, PrometheusApiClientException):
        m = _CLIENT_STATUS.match(str(exc))
        if m:
            try:
                body = ast.literal_eval(m.group(2))
            except (ValueError, SyntaxError):
                body = m.group(2)
            return _status_failure(int(m.group(1)), _error_detail(body), url)
        return ToolFailure("bad_response", f"Prometheus at {url}: {exc}")
    if isinstance(exc, requests.exceptions.Timeout):
        limit = f"within {timeout:.1f} s" if timeout else "in time"
        return ToolFailure("timeout", f"Prometheus at {url} did not answer {limit}", retryable=True)
    if isinstance(exc, requests.exceptions.SSLError):
        return ToolFailure(
            "unreachable",
            f"TLS error talking to Prometheus at {url}: {exc}; check the URL or "
            "prometheus.verify_tls",
        )
    if isinstance(exc, requests.exceptions.ConnectionError):
        text = str(exc).lower()
        why = "connection failed"
        if "resolve" in text or "name or service not known" in text:
            why = "its host name does not resolve"
        elif "refused" in text:
            why = "connection refused"
        return ToolFailure(
            "unreachable", f"Prometheus at {url} is unreachable: {why}", retryable=True
        )
    if isinstance(exc, ValueError | KeyError | TypeError | IndexError):
        return ToolFailure("bad_response", f"Prometheus at {url} sent an unexpected answer: {exc}")
    if isinstance(exc, requests.exceptions.RequestException):
        return ToolFailure("unreachable", f"Prometheus at {url}: {exc}", retryable=True)
    return ToolFailure("internal", f"Prometheus tool failed: {type(exc).__name__}: {exc}")


@dataclass
class _Client:
    """One environment's connection: the library client and its requests session."""

    source: PrometheusSource
    prom: Any  # prometheus_api_client.PrometheusConnect
    session: requests.Session
    headers: dict[str, str]
    url: str

    def get_json(self, path: str, params: dict[str, Any], timeout: float) -> Any:
        """GET an API path; the ``data`` of a successful answer."""
        resp = self.session.get(
            self.url + path, params=params, headers=self.headers, timeout=timeout
        )
        if resp.status_code != 200:
            raise _status_failure(resp.status_code, _error_detail(resp.content), self.url)
        payload = resp.json()
        if not isinstance(payload, dict) or payload.get("status") != "success":
            raise ToolFailure("bad_response", f"Prometheus at {self.url}: not a success answer")
        return payload["data"]


def _scope(env: str, **items: Any) -> dict[str, Any]:
    scope = {"source": "prometheus", "environment": env, **items}
    return {k: v for k, v in scope.items() if v is not None}


def _call_timeout(ctx: CallContext, configured: float) -> float:
    """The configured time-out, never past the call's deadline."""
    if ctx.deadline is None:
        return configured
    return max(min(configured, ctx.deadline - time.monotonic()), 0.05)


def _time(raw: str | None, name: str, now: datetime) -> datetime | None:
    if raw is None:
        return None
    try:
        return parse_time(raw, now)
    except ValueError as exc:
        raise ToolFailure("bad_request", f"argument '{name}': {exc}") from exc


def result_data(result: Any, instant: bool) -> dict[str, Any]:
    """The ``data`` object (resultType + result) from the client's bare ``result``."""
    if not instant:
        return {"resultType": "matrix", "result": result}
    if isinstance(result, list) and len(result) == 2 and not isinstance(result[0], dict):
        try:
            float(result[1])
        except (TypeError, ValueError):
            return {"resultType": "string", "result": result}
        return {"resultType": "scalar", "result": result}
    return {"resultType": "vector", "result": result}


class PrometheusTools:
    """The Prometheus tools over the configured environments (clients cached per env)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._clients: dict[str, _Client] = {}
        self._lock = threading.Lock()

    def _client(self, env: str) -> _Client:
        with self._lock:
            cached = self._clients.get(env)
            if cached is not None:
                return cached
            env_cfg = self.settings.environments.get(env)
            src = env_cfg.prometheus if env_cfg else None
            if src is None:
                raise ToolFailure(
                    "not_configured",
                    f"no Prometheus configured for environment '{env}'; set "
                    f"environments.{env}.prometheus.url in the config",
                )
            from prometheus_api_client import PrometheusConnect
            from urllib3.util.retry import Retry

            from opsmate.credentials import get_credential

            cred = get_credential("prometheus", env)
            headers = cred.headers() if cred is not None else {}
            from opsmate.tools.wallclock import deadline_session

            # each request ends within its time-out of wall-clock time, answer included
            session = deadline_session()
            session.verify = src.verify_tls
            # no retries inside the client: the executor retries retryable failures
            prom = PrometheusConnect(
                url=src.url.rstrip("/"),
                headers=headers or None,
                disable_ssl=not src.verify_tls,
                retry=Retry(0, read=False),
                session=session,
                timeout=src.timeout,
            )
            client = _Client(src, prom, session, headers, src.url.rstrip("/"))
            self._clients[env] = client
            return client

    def _run(self, env: str, fn: Callable[[_Client], ToolOutput]) -> ToolOutput:
        """Run ``fn`` with the environment's client; every exception becomes a ToolFailure."""
        client = self._client(env)
        try:
            return fn(client)
        except Exception as exc:
            raise _failure(exc, client.url, client.source.timeout) from exc

    def query_metrics(self, args: s.QueryMetricsArgs, ctx: CallContext) -> ToolOutput:
        """An instant or range PromQL query, summarised per series."""
        env = call_environment(args.environment, ctx, self.settings.default_environment)
        c = ctx.constraints
        end = _time(args.end, "end", ctx.now) or c.window_to or ctx.now
        tz = end.tzinfo
        scope = _scope(env, query=args.query, type=args.type)
        if args.type == "instant":
            scope["time"] = format_time(end)
        else:
            start = _time(args.start, "start", ctx.now)
            if start is None:
                start = c.window_from if c.window_from and c.window_from < end else None
                start = start or end - DEFAULT_RANGE
            if start > end:
                raise ToolFailure("bad_request", "argument 'start' is after 'end'")
            step = args.step or choose_step(start, end, POINT_BUDGET)
            if (end - start).total_seconds() / step > PROM_MAX_POINTS:
                used = choose_step(start, end, PROM_MAX_POINTS)
                scope["clamped"] = {"step": {"asked": step, "used": used}}
                step = used
            scope.update(start=format_time(start), end=format_time(end), step=step)

        def run(cl: _Client) -> ToolOutput:
            timeout = _call_timeout(ctx, cl.source.timeout)
            if args.type == "instant":
                raw = cl.prom.custom_query(
                    args.query, params={"time": end.timestamp()}, timeout=timeout
                )
            else:
                raw = cl.prom.custom_query_range(args.query, start, end, str(step), timeout=timeout)
            shaped = summarize_prom_data(
                result_data(raw, args.type == "instant"), tz=tz, max_points=MAX_POINTS
            )
            data: dict[str, Any] = {"query": args.query, **shaped}
            found = bool(shaped["series_total"] or shaped.get("value"))
            if not found:
                data["message"] = (
                    "no series matched; check the metric and label names (metric_names)"
                )
            return ToolOutput(
                status="success" if found else "no_data",
                data=data,
                scope=scope,
                source_refs=[metric_ref(args.query)],
            )

        return self._run(env, run)

    def list_alerts(self, args: s.ListAlertsArgs, ctx: CallContext) -> ToolOutput:
        """Active alerts (firing / pending), or the inactive alerting rules."""
        env = call_environment(args.environment, ctx, self.settings.default_environment)
        scope = _scope(env, state=args.state)
        zone = task_zone(ctx)

        def run(cl: _Client) -> ToolOutput:
            timeout = _call_timeout(ctx, cl.source.timeout)
            if args.state == "inactive":
                data = cl.get_json("/api/v1/rules", {"type": "alert"}, timeout)
                alerts = [
                    _alert_view({**r, "state": "inactive", "activeAt": None}, zone)
                    for g in data["groups"]
                    for r in g["rules"]
                    if r.get("type", "alerting") == "alerting" and r.get("state") == "inactive"
                ]
            else:
                data = cl.get_json("/api/v1/alerts", {}, timeout)
                alerts = [_alert_view(a, zone) for a in data["alerts"]]
            return alerts_output(alerts, args.state, scope)

        return self._run(env, run)

    def metric_names(self, args: MetricNamesArgs, ctx: CallContext) -> ToolOutput:
        """Metric names known to Prometheus, optionally containing ``match``."""
        env = call_environment(args.environment, ctx, self.settings.default_environment)
        scope = _scope(env, match=args.match)

        def run(cl: _Client) -> ToolOutput:
            names = sorted(str(n) for n in cl.prom.get_label_values("__name__"))
            if args.match:
                needle = args.match.lower()
                names = [n for n in names if needle in n.lower()]
            shown = names[: args.limit]
            dropped = len(names) - len(shown)
            hint = "give a more specific match"
            return ToolOutput(
                status="success" if shown else "no_data",
                data={"names": shown, "count": len(shown), "total": len(names)},
                scope=scope,
                complete=dropped == 0,
                truncated=Truncation(items_dropped=dropped, hint=hint) if dropped else None,
            )

        return self._run(env, run)

    def metric_metadata(self, args: MetricMetadataArgs, ctx: CallContext) -> ToolOutput:
        """Type, help and unit of metrics (from Prometheus' scrape-target metadata)."""
        env = call_environment(args.environment, ctx, self.settings.default_environment)
        scope = _scope(env, metric=args.metric)

        def run(cl: _Client) -> ToolOutput:
            rows = cl.prom.get_metric_metadata(args.metric, limit=args.limit)
            seen: dict[str, dict[str, Any]] = {}
            for row in rows:  # one entry per metric (the first, as Prometheus orders them)
                name = str(row["metric_name"])
                unit = row.get("unit") or None
                seen.setdefault(
                    name,
                    {"name": name, "type": row.get("type"), "help": row.get("help"), "unit": unit},
                )
            metrics = sorted(seen.values(), key=lambda m: m["name"])
            data: dict[str, Any] = {"metrics": metrics, "count": len(metrics)}
            if not metrics:
                data["message"] = (
                    "no metadata: Prometheus keeps metadata only for metrics of its current "
                    "scrape targets (backfilled or remote-written series have none)"
                )
            return ToolOutput(status="success" if metrics else "no_data", data=data, scope=scope)

        return self._run(env, run)


def task_zone(ctx: CallContext) -> Any:
    """The zone of the task's window (None: none set): live times are written in it."""
    end = ctx.constraints.window_to
    return end.tzinfo if end is not None else None


def _in_zone(t: datetime, zone: Any) -> str:
    return format_time(t.astimezone(zone) if zone is not None else t)


def _alert_view(a: dict[str, Any], zone: Any = None) -> dict[str, Any]:
    """One alert in the shape bundle replay uses (``_ref`` is popped by the caller); its
    time in ``zone`` (the task's, as a replay writes a bundle's times in its zone)."""
    labels = dict(a.get("labels") or {})
    name = str(labels.pop("alertname", None) or a.get("name") or "unknown")
    active = a.get("activeAt")
    return {
        "name": name,
        "state": str(a.get("state") or "firing"),
        "severity": labels.pop("severity", None),
        "labels": labels,
        "annotations": dict(a.get("annotations") or {}),
        "active_at": _in_zone(parse_time(str(active)), zone) if active else None,
        "value": a.get("value"),
        "_ref": f"alert://{name}",
    }


def tool_specs(settings: Settings) -> list[ToolSpec]:
    """The Prometheus tools, or none when no environment configures a Prometheus."""
    if not any(e.prometheus for e in settings.environments.values()):
        return []
    tools = PrometheusTools(settings)
    specs: list[tuple[str, str, type[BaseModel], Callable[..., ToolOutput]]] = [
        ("query_metrics", s.DESCRIPTIONS["query_metrics"], s.QueryMetricsArgs, tools.query_metrics),
        ("list_alerts", s.DESCRIPTIONS["list_alerts"], s.ListAlertsArgs, tools.list_alerts),
        (
            "metric_names",
            "Metric names that exist in Prometheus (optionally containing a substring).",
            MetricNamesArgs,
            tools.metric_names,
        ),
        (
            "metric_metadata",
            "Type, help text and unit of metrics (Prometheus metadata API).",
            MetricMetadataArgs,
            tools.metric_metadata,
        ),
    ]
    from opsmate.tools.prometheus.discovery import (
        DiscoveredMetrics,
        DiscoverMetricsArgs,
        discover_metrics,
    )

    specs.append(
        (
            "discover_metrics",
            "The series a live Prometheus holds for services (or a namespace), and the "
            "request, error, duration and resource queries worth asking about them.",
            DiscoverMetricsArgs,
            functools.partial(discover_metrics, tools),
        )
    )
    payloads: dict[str, type[BaseModel]] = {
        "metric_names": MetricNamesPayload,
        "discover_metrics": DiscoveredMetrics,
    }
    budgets = {"discover_metrics": 4000}  # the candidate list is read whole by the planner
    return [
        ToolSpec(
            name, desc, model, run, payload_model=payloads.get(name), token_budget=budgets.get(name)
        )
        for name, desc, model, run in specs
    ]
