"""Replay of an incident bundle: the stable tools answered from captured data.

Each public method of :class:`Replay` is a tool implementation
(``run(args, ctx) -> ToolOutput``) with the same name and argument model as the
live tool, shaped with the same functions (:mod:`opsmate.tools.shaping`), so a
planner cannot tell (and need not care) whether it is looking at a bundle.

Rules shared by every tool: a call for another environment than the bundle's is
``no_data`` with error ``not_available``; relative times are relative to the
bundle's ``captured_at``; absent times default to the task window, else the
bundle window; every answer has ``scope`` (what was searched) and ``source_refs``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from opsmate.timeparse import format_time, parse_time
from opsmate.tools import schemas as s
from opsmate.tools.base import CallContext, ToolErrorInfo, ToolFailure, ToolOutput
from opsmate.tools.bundle.load import LoadedData, RecordedQuery
from opsmate.tools.shaping import (
    alerts_output,
    metric_ref,
    normalize_promql,
    summarize_prom_data,
)

# kept importable from here for existing callers; the shared definition is in shaping

MAX_POINTS = 20  # raw samples kept per series in a replayed metrics answer


def not_available(message: str, data: dict[str, Any] | None = None, **scope: Any) -> ToolOutput:
    """A ``no_data`` answer whose error says the bundle cannot answer this (not retryable)."""
    return ToolOutput(
        status="no_data",
        data=data or {},
        scope={"source": "bundle", **scope},
        complete=True,
        error=ToolErrorInfo(code="not_available", message=message, retryable=False),
    )


_HELD_NOUN = {
    "logs": "log records",
    "kubernetes": "Kubernetes objects",
    "metrics": "metrics",
    "alerts": "alerts",
}
_SOURCE_WORDS = {  # how capture.not_captured names what it left out, per source
    "logs": ("log",),
    "kubernetes": ("k8s", "kubernetes", "pod", "object"),
    "metrics": ("metric", "query", "series", "prometheus"),
    "alerts": ("alert",),
}


def _by(captured_by: str | None) -> str:
    return f" (written by {captured_by})" if captured_by else ""


class Replay:
    """The tool implementations over one loaded bundle."""

    def __init__(self, data: LoadedData) -> None:
        self.d = data
        self.env = data.meta.environment
        self.tz = data.meta.captured_at.tzinfo
        self.texts: dict[int, str] = {}  # lower-cased searchable text of log records

    # ------------------------------------------------------------------ shared helpers
    def check_env(self, asked: str | None, ctx: CallContext) -> ToolOutput | None:
        """None when the call targets the bundle's environment, else the answer to give."""
        env = asked or ctx.constraints.environment or self.env
        if env == self.env:
            return None
        return not_available(
            f"bundle holds only environment {self.env!r}; {env!r} cannot be answered from it",
            {"available_environments": [self.env]},
            environment=env,
        )

    def _time(self, raw: str | None, name: str) -> datetime | None:
        if raw is None:
            return None
        try:
            return parse_time(raw, self.d.meta.captured_at)
        except ValueError as exc:
            raise ToolFailure("bad_request", f"argument '{name}': {exc}") from exc

    def window(
        self, start_raw: str | None, end_raw: str | None, ctx: CallContext, names: tuple[str, str]
    ) -> tuple[datetime, datetime]:
        """The time range of a call: its arguments (relative to captured_at), else the task
        window, else the bundle window."""
        c = ctx.constraints
        start = self._time(start_raw, names[0]) or c.window_from or self.d.meta.window_from
        end = self._time(end_raw, names[1]) or c.window_to or self.d.meta.window_to
        if start > end:
            raise ToolFailure("bad_request", f"'{names[0]}' is after '{names[1]}'")
        return start, end

    def fmt(self, dt: datetime) -> str:
        """RFC 3339 in the bundle's own offset (that of captured_at)."""
        return format_time(dt.astimezone(self.tz) if self.tz else dt)

    def namespaces(self, asked: str | None, ctx: CallContext) -> list[str] | None:
        """Namespaces to search: the asked one, else the task's, else None (all)."""
        if asked:
            return [asked]
        return list(ctx.constraints.namespaces) or None

    def objects(self, kind: str, namespaces: list[str] | None = None) -> list[dict[str, Any]]:
        """Captured objects of ``kind`` (case-insensitive), optionally in ``namespaces``."""
        out = []
        for obj in self.d.objects:
            if str(obj.get("kind", "")).lower() != kind.lower():
                continue
            ns = (obj.get("metadata") or {}).get("namespace")
            if namespaces is not None and ns not in namespaces:
                continue
            out.append(obj)
        return sorted(
            out,
            key=lambda o: (o["metadata"].get("namespace") or "", o["metadata"]["name"]),
        )

    # ------------------------------------------------------------------ not captured
    def not_captured(self, source: str, asked: str | None, ctx: CallContext) -> ToolOutput | None:
        """``not_available`` when the bundle holds nothing at all of ``source`` (``logs``,
        ``kubernetes``, ``metrics``, ``alerts``): it was not captured, which says nothing
        about whether there was any (never "no matching data"). Only for a bundle opsmate
        captured (``capture`` in ``bundle.yaml``): a bundle written by hand answers as it
        always did. None when it holds some, or when the call targets another environment
        (:meth:`check_env` answers that)."""
        if self.d.meta.captured_by is None:
            return None
        if (asked or ctx.constraints.environment or self.env) != self.env:
            return None
        held = {
            "logs": bool(self.d.logs),
            "kubernetes": bool(self.d.objects),
            "metrics": bool(self.d.metrics),
            "alerts": self.d.alerts is not None
            or any(re.match(r"ALERTS\s*($|\{)", r.query.strip()) for r in self.d.metrics),
        }
        if held.get(source, True):
            return None
        what = _HELD_NOUN[source]
        words = _SOURCE_WORDS[source]
        why = [
            f"{x['what']}: {x['why']}"
            for x in self.d.meta.not_captured
            if any(w in x["what"].lower() for w in words)
        ]
        msg = f"not captured: this bundle holds no {what}"
        msg += f" ({'; '.join(why[:3])})" if why else ""
        msg += f", so it cannot say whether there were any{_by(self.d.meta.captured_by)}"
        data: dict[str, Any] = {"not_captured": source}
        if source in ("metrics", "alerts"):  # the contract's listing, empty
            data.update(self._recorded_listing())
        return not_available(msg, data, environment=self.env)

    # ------------------------------------------------------------------ metrics
    def recorded_queries(self) -> list[str]:
        """Distinct recorded query texts, in file order."""
        seen: dict[str, str] = {}
        for r in self.d.metrics:
            seen.setdefault(normalize_promql(r.query), r.query)
        return list(seen.values())

    def _recorded_listing(self) -> dict[str, Any]:
        desc = {r.query: r.description for r in self.d.metrics if r.description}
        return {"recorded_queries": self.recorded_queries(), "descriptions": desc}

    def query_metrics(self, args: s.QueryMetricsArgs, ctx: CallContext) -> ToolOutput:
        """A recorded PromQL result when the query text (whitespace-normalised) and type
        match a recording; else ``not_available`` with the recorded queries."""
        if (bad := self.check_env(args.environment, ctx)) is not None:
            return bad
        want = normalize_promql(args.query)
        same_text = [r for r in self.d.metrics if normalize_promql(r.query) == want]
        matches = [r for r in same_text if r.type == args.type]
        scope: dict[str, Any] = {"query": args.query, "type": args.type, "environment": self.env}
        if not matches:
            if same_text:
                other = same_text[0].type
                msg = (
                    f"this query was recorded only as a {other} query; "
                    f"call again with type={other!r}"
                )
            else:
                msg = (
                    "query not recorded in this bundle; use one of data.recorded_queries "
                    "(text must match, whitespace aside)"
                )
            return not_available(msg, self._recorded_listing(), **scope)
        start, end = self.window(args.start, args.end, ctx, ("start", "end"))
        rec = self._best_recording(matches, start, end)
        result, scope_extra = self._trim(rec, start, end, args.step)
        scope.update(scope_extra)
        shaped = summarize_prom_data(result, tz=self.tz, max_points=MAX_POINTS)
        data: dict[str, Any] = {"query": rec.query}
        if rec.description:
            data["description"] = rec.description
        data.update(shaped)
        status = "success" if shaped["series_total"] or shaped.get("value") else "no_data"
        return ToolOutput(
            status=status,
            data=data,
            scope={"source": "bundle", **scope},
            source_refs=[metric_ref(rec.query)],
        )

    @staticmethod
    def _best_recording(recs: list[RecordedQuery], start: datetime, end: datetime) -> RecordedQuery:
        def overlap(r: RecordedQuery) -> float:
            if r.start is None or r.end is None:
                return 0.0
            lo, hi = max(r.start, start), min(r.end, end)
            return max((hi - lo).total_seconds(), 0.0)

        return max(recs, key=lambda r: (overlap(r), -r.index))

    def _trim(
        self, rec: RecordedQuery, start: datetime, end: datetime, step: int | None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The recording cut to [start, end] (range queries), and the scope to report."""
        scope: dict[str, Any] = {}
        if rec.type == "instant":
            if rec.time is not None:
                scope["time"] = self.fmt(rec.time)
            return rec.result, scope
        lo, hi = start.timestamp(), end.timestamp()
        result = rec.result
        if result.get("resultType") == "matrix":
            series = []
            for item in result.get("result", []):
                vals = [p for p in item["values"] if lo <= float(p[0]) <= hi]
                if vals:
                    series.append({"metric": item.get("metric") or {}, "values": vals})
            result = {"resultType": "matrix", "result": series}
        rec_from = rec.start or start
        rec_to = rec.end or end
        scope["start"] = self.fmt(max(start, rec_from))
        scope["end"] = self.fmt(min(end, rec_to))
        if rec.step is not None:
            scope["step"] = rec.step
            if step is not None and step != rec.step:
                scope["step_asked"] = step
        if rec.start is not None and rec.end is not None:
            scope["recorded"] = {"start": self.fmt(rec.start), "end": self.fmt(rec.end)}
        return result, scope

    # ------------------------------------------------------------------ alerts
    def list_alerts(self, args: s.ListAlertsArgs, ctx: CallContext) -> ToolOutput:
        """Alerts from ``alerts.yaml``, else from a recorded ``ALERTS`` query."""
        if (bad := self.check_env(args.environment, ctx)) is not None:
            return bad
        scope: dict[str, Any] = {"source": "bundle", "environment": self.env}
        if args.state:
            scope["state"] = args.state
        if self.d.alerts is not None:
            alerts = [self._alert_from_api(a) for a in self.d.alerts]
            scope["from"] = "alerts.yaml"
        else:
            recs = [r for r in self.d.metrics if re.match(r"ALERTS\s*($|\{)", r.query.strip())]
            if not recs:
                return not_available(
                    "this bundle recorded no alerts (no alerts.yaml, no ALERTS query)",
                    self._recorded_listing(),
                    environment=self.env,
                )
            alerts = [a for r in recs for a in self._alerts_from_series(r)]
            scope["from"] = "metrics.yaml: " + ", ".join(r.query for r in recs)
        return alerts_output(alerts, args.state, scope)

    def _alert_from_api(self, a: Mapping[str, Any]) -> dict[str, Any]:
        labels = dict(a.get("labels") or {})
        name = str(labels.pop("alertname"))
        active = a.get("activeAt")
        out = {
            "name": name,
            "state": str(a.get("state") or "firing"),
            "severity": labels.pop("severity", None),
            "labels": labels,
            "annotations": dict(a.get("annotations") or {}),
            "active_at": self.fmt(parse_time(str(active))) if active else None,
            "value": a.get("value"),
        }
        # captured from an Alertmanager: its silence state, as the live answer had it
        for key, name_ in (("silenced", "silenced"), ("silencedBy", "silenced_by"),
                           ("inhibited", "inhibited"), ("fingerprint", "fingerprint")):  # fmt: skip
            if key in a:
                out[name_] = a[key]
        out["_ref"] = f"alert://{name}"
        return out

    def _alerts_from_series(self, rec: RecordedQuery) -> list[dict[str, Any]]:
        out = []
        items = rec.result.get("result")
        for item in items if isinstance(items, list) else []:
            labels = dict(item.get("metric") or {})
            points = item.get("values") or ([item["value"]] if item.get("value") else [])
            active = [p for p in points if str(p[1]) not in ("0", "NaN")]
            if not active:
                continue
            name = str(labels.pop("alertname", "unknown"))
            labels.pop("__name__", None)
            out.append(
                {
                    "name": name,
                    "state": str(labels.pop("alertstate", "firing")),
                    "severity": labels.pop("severity", None),
                    "labels": labels,
                    "annotations": {},
                    "active_at": self.fmt(parse_time(float(active[0][0]))),
                    "last_seen": self.fmt(parse_time(float(active[-1][0]))),
                    "_ref": metric_ref(rec.query),
                }
            )
        return out
