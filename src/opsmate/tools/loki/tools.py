"""``search_logs``, ``log_stats`` and ``pod_logs`` over Loki, shaped as the other log sources.

- ``search_logs``: one ``query_range`` (``direction=backward``, ``limit`` = page + 1) for
  the page, and one metric query (``sum(count_over_time(...))``) for ``total``. Paging
  moves ``end`` (exclusive in Loki) to just after the last entry shown and skips the
  entries of that same nanosecond already shown, as logcli does.
- ``log_stats``: levels and the level timeline counted by Loki
  (``sum by (level) (count_over_time(... [step]))`` over the buckets Elasticsearch uses,
  each evaluated at the bucket's last nanosecond, since a range covers ``(t - range, t]``);
  templates, rare errors, durations and status codes from two samples, the
  :data:`STATS_SAMPLE` most recent records and the :data:`ERROR_SAMPLE` most recent
  error-like ones, grouped by the shared :class:`opsmate.loganalysis.stats.StatsBuilder`.
- ``pod_logs``: the newest ``tail_lines`` of one pod (``{pod="..."}``), for environments
  whose pods' logs are read from Loki rather than the Kubernetes API.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import opsmate.tools.loki.logql as logql
from opsmate.timeparse import format_time, parse_time
from opsmate.tools import schemas as s
from opsmate.tools.base import CallContext, ToolFailure, ToolOutput, call_environment
from opsmate.tools.loki.client import LokiClient
from opsmate.tools.loki.records import (
    Entry,
    decode_cursor,
    encode_cursor,
    entries_of,
    ns_of,
    ref_of,
    to_record,
)

if TYPE_CHECKING:
    from opsmate.config import LokiSource, Settings

STATS_SAMPLE = 500  # most recent records whose messages log_stats groups
ERROR_SAMPLE = 300  # most recent error-like records grouped beside them
MESSAGE_CHARS = 2000  # a message longer than this is cut in search results
DEFAULT_RANGE = timedelta(hours=1)
POD_LOGS_RANGE = timedelta(days=1)  # how far back pod_logs looks without since_seconds


class LokiTools:
    """The log tools over the Loki of each configured environment."""

    def __init__(self, settings: Settings) -> None:
        from opsmate.loganalysis.parse import configure

        self.settings = settings
        configure(getattr(settings, "logs", None))
        self._clients: dict[str, LokiClient] = {}
        self._lock = threading.Lock()

    # -- plumbing ------------------------------------------------------------------------
    def _source(self, asked: str | None, ctx: CallContext) -> tuple[str, LokiSource]:
        env = call_environment(asked, ctx, self.settings.default_environment)
        env_cfg = self.settings.environments.get(env)
        if env_cfg is None or env_cfg.loki is None:
            raise ToolFailure(
                "not_configured",
                f"no Loki configured for environment '{env}'; set environments.{env}.loki.url "
                "in the config",
            )
        return env, env_cfg.loki

    def client(self, env: str, src: LokiSource) -> LokiClient:
        with self._lock:
            c = self._clients.get(env)
            if c is None:
                c = self._clients[env] = LokiClient(env, src)
            return c

    @staticmethod
    def _window(from_: str | None, to: str | None, ctx: CallContext) -> tuple[datetime, datetime]:
        try:
            end = parse_time(to, ctx.now) if to else (ctx.constraints.window_to or ctx.now)
            start = parse_time(from_, ctx.now) if from_ else None
        except ValueError as exc:
            raise ToolFailure("bad_request", f"argument 'from'/'to': {exc}") from exc
        if start is None:
            wf = ctx.constraints.window_from
            start = wf if wf is not None and wf < end else end - DEFAULT_RANGE
        if start > end:
            raise ToolFailure("bad_request", "argument 'from' is after 'to'")
        return start, end

    @staticmethod
    def _scope(env: str, start: datetime, end: datetime, **items: Any) -> dict[str, Any]:
        scope = {"source": "loki", "environment": env, **items,
                 "from": format_time(start), "to": format_time(end)}  # fmt: skip
        return {k: v for k, v in scope.items() if v is not None}

    def _entries(
        self, env: str, src: LokiSource, q: str, start_ns: int, end_ns: int, limit: int,
        ctx: CallContext,
    ) -> list[Entry]:  # fmt: skip
        data = self.client(env, src).query_range(
            q, start_ns=start_ns, end_ns=end_ns, limit=limit, ctx=ctx
        )
        if data["resultType"] != "streams":
            raise ToolFailure(
                "bad_response", f"Loki answered a log query with {data['resultType']}"
            )
        try:
            return entries_of(data)
        except (ValueError, TypeError) as exc:
            raise ToolFailure("bad_response", f"Loki sent a malformed stream: {exc}") from exc

    def _matrix(
        self, env: str, src: LokiSource, q: str, start_ns: int, end_ns: int, step_s: float,
        ctx: CallContext,
    ) -> list[tuple[dict[str, str], list[tuple[float, float]]]]:  # fmt: skip
        data = self.client(env, src).query_range(
            q, start_ns=start_ns, end_ns=end_ns, step_s=step_s, ctx=ctx
        )
        out = []
        try:
            for series in data["result"]:
                points = [(float(t), float(v)) for t, v in series.get("values") or []]
                out.append(({str(k): str(v) for k, v in series["metric"].items()}, points))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ToolFailure("bad_response", f"Loki sent a malformed matrix: {exc}") from exc
        return out

    def _count(
        self, env: str, src: LokiSource, q: logql.LogQuery, start: datetime, end: datetime,
        ctx: CallContext, *, by_level: bool,
    ) -> list[tuple[dict[str, str], float]]:  # fmt: skip
        """Records of ``q`` in ``[start, end]`` (ms precision), per level when asked."""
        t = ns_of(end)
        expr = logql.count_by(q, src, t - ns_of(start) + 1_000_000, by_level=by_level)
        return [(m, sum(v for _, v in pts[-1:])) for m, pts in self._matrix(
            env, src, expr, t, t, 1.0, ctx)]  # fmt: skip

    # -- search_logs ---------------------------------------------------------------------
    def search_logs(self, args: s.SearchLogsArgs, ctx: CallContext) -> ToolOutput:
        """One page of matching records, newest first; ``next_cursor`` for the next page."""
        from opsmate.loganalysis.parse import parse_record, parsed_extras

        env, src = self._source(args.environment, ctx)
        ident = hashlib.sha256(
            json.dumps([env, src.url, args.service, args.level, args.query]).encode()
        ).hexdigest()[:12]
        cursor = decode_cursor(args.cursor, ident) if args.cursor else None
        if cursor is not None and cursor.get("f") and cursor.get("t"):
            start, end = self._window(cursor["f"], cursor["t"], ctx)
        else:
            start, end = self._window(args.from_, args.to, ctx)
        # one more than a page must fit in Loki's max_entries_limit_per_query (max_lines)
        page_size = max(min(args.page_size, ctx.constraints.max_page_size, src.max_lines - 1), 1)
        q = logql.log_query(src, environment=env, service=args.service, level=args.level,
                            terms=args.query)  # fmt: skip
        end_ns = int(cursor["e"]) if cursor else ns_of(end) + 1  # Loki's end is exclusive
        skip = int(cursor.get("k", 0)) if cursor else 0
        got = self._entries(env, src, q.render(), ns_of(start), end_ns, page_size + 1 + skip, ctx)
        got = got[skip:]
        more = len(got) > page_size
        page = got[:page_size]
        items = []
        for e in page:
            rec = to_record(e, src)
            pl = parse_record(rec)
            msg = rec.get("message")
            if isinstance(msg, str) and len(msg) > MESSAGE_CHARS:
                rec["message"] = msg[:MESSAGE_CHARS] + "…"
            items.append({"ref": ref_of(e, rec, src), **rec, **parsed_extras(pl, rec)})
        offset = int(cursor.get("o", 0)) if cursor else 0
        counted = self._count(env, src, q, start, end, ctx, by_level=False)
        total = int(sum(n for _, n in counted))
        data: dict[str, Any] = {"items": items, "total": max(total, offset + len(items)),
                                "offset": offset}  # fmt: skip
        if not items and not offset and args.service:
            data["hint"] = self._service_hint(env, src, ctx)
        next_cursor = None
        if more and page:
            last = page[-1].ns
            same = sum(1 for e in page if e.ns == last)
            if cursor is not None and end_ns == last + 1:
                same += skip
            next_cursor = encode_cursor({"e": last + 1, "k": same, "o": offset + len(page),
                                         "h": ident, "f": format_time(start),
                                         "t": format_time(end)})  # fmt: skip
        scope = self._scope(env, start, end, service=args.service, level=args.level,
                            query=args.query, page_size=page_size)  # fmt: skip
        return ToolOutput(
            status="success" if items or offset else "no_data",
            data=data,
            scope=scope,
            complete=not more,
            next_cursor=next_cursor,
            source_refs=[item["ref"] for item in items],
        )

    def _service_hint(self, env: str, src: LokiSource, ctx: CallContext) -> str:
        try:
            known = self.client(env, src).label_values(src.labels.service, ctx)
        except ToolFailure:
            return "no record of this service"
        shown = ", ".join(known[:20]) or "none"
        return f"no record of this service; services with logs ({src.labels.service}): {shown}"

    # -- log_stats -----------------------------------------------------------------------
    def log_stats(self, args: s.LogStatsArgs, ctx: CallContext) -> ToolOutput:
        """Levels and their timeline counted by Loki; templates, rare errors, durations and
        status codes from the most recent records and the most recent error-like ones."""
        from opsmate.tools.loki.stats import level_counts, stats_from_sample

        env, src = self._source(args.environment, ctx)
        start, end = self._window(args.from_, args.to, ctx)
        q = logql.log_query(src, environment=env, service=args.service, level=args.level)

        def matrix(expr: str, a: int, b: int, step: float) -> Any:
            return self._matrix(env, src, expr, a, b, step, ctx)

        by_level, timeline, g = level_counts(matrix, src, q, start, end)
        total = sum(by_level.values())
        lo, hi = ns_of(start), ns_of(end) + 1
        recent = self._entries(env, src, q.render(), lo, hi, STATS_SAMPLE, ctx)
        errors: list[Entry] = []
        if total > len(recent):  # the sample missed records: read the error-like ones too
            seen = {e.identity(src) for e in recent}
            picked = logql.with_levels(q, src, list(logql.ERROR_LEVELS))
            found = self._entries(env, src, picked.render(), lo, hi, ERROR_SAMPLE, ctx)
            bare = logql.unleveled_errors(q, src)
            found += self._entries(env, src, bare.render(), lo, hi, ERROR_SAMPLE, ctx)
            found.sort(key=Entry.sort_key)
            for e in found[:ERROR_SAMPLE]:
                if e.identity(src) not in seen:
                    seen.add(e.identity(src))
                    errors.append(e)
        stats = stats_from_sample(recent, errors, src, g)
        stats["by_level"] = dict(sorted(by_level.items(), key=lambda kv: (-kv[1], kv[0])))
        stats["total"] = total
        stats["timeline"] = timeline
        stats["coverage"] = {
            "records_matching": total,
            "messages_grouped": len(recent) + len(errors),
            "sample": len(recent) + len(errors) < total,
            "note": "by_level and the level timeline count every matching record (Loki metric "
            f"queries); templates, latency and status codes group the {len(recent)} most "
            f"recent records and the {len(errors)} most recent error-like ones",
        }
        refs = [g.get("example_ref") for g in stats["top_messages"] + stats.get("rare_errors", [])]
        return ToolOutput(
            status="success" if total else "no_data",
            data=stats,
            scope=self._scope(env, start, end, service=args.service, level=args.level),
            source_refs=list(dict.fromkeys(r for r in refs if r)),
        )

    # -- pod_logs ------------------------------------------------------------------------
    def pod_logs(self, args: s.PodLogsArgs, ctx: CallContext) -> ToolOutput:
        """The newest ``tail_lines`` lines of one pod (``{pod="<name>"}``), oldest first."""
        from opsmate.tools.loki.stats import pod_tail

        env, src = self._source(args.environment, ctx)
        if not src.labels.pod:
            raise ToolFailure(
                "not_configured",
                f"pod_logs needs the pod label: set environments.{env}.loki.labels.pod",
            )
        q = logql.LogQuery([(src.labels.pod, "=", args.name)])
        if args.namespace and src.labels.namespace:
            q = q.with_matcher(src.labels.namespace, "=", args.namespace)
        if args.container and src.labels.container:
            q = q.with_matcher(src.labels.container, "=", args.container)
        end = ctx.constraints.window_to or ctx.now
        since = timedelta(seconds=args.since_seconds) if args.since_seconds else POD_LOGS_RANGE
        start = end - since
        got = self._entries(env, src, q.render(), ns_of(start), ns_of(end) + 1,
                            args.tail_lines + 1, ctx)  # fmt: skip
        scope = self._scope(env, start, end, pod=args.name, namespace=args.namespace,
                            container=args.container, tail_lines=args.tail_lines,
                            previous=True if args.previous else None)  # fmt: skip
        if args.previous:
            scope["previous_basis"] = "Loki keeps no container instances: the newest lines"
        return pod_tail(got, args, src, scope)


def tool_specs_for(settings: Settings) -> list[tuple[str, Callable[..., ToolOutput]]]:
    """The tools and their functions when some environment configures Loki."""
    if not any(e.loki for e in settings.environments.values()):
        return []
    tools = LokiTools(settings)
    return [
        ("search_logs", tools.search_logs),
        ("log_stats", tools.log_stats),
        ("pod_logs", tools.pod_logs),
    ]
