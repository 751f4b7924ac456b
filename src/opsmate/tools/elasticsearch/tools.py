"""Elasticsearch logs as a live, read-only tool source (the official elasticsearch client).

Tools: ``search_logs`` (time range, service, environment, level and free-text terms,
newest first, ``search_after`` pagination; each item also says what its line is, see
:mod:`opsmate.loganalysis.parse`) and ``log_stats``: levels, a level timeline, duration
percentiles and status codes counted by the server with aggregations
(:mod:`opsmate.tools.elasticsearch.aggs`), and message templates (Drain), rare errors and
durations written in the text from two samples: the :data:`STATS_SAMPLE` most recent
matching records and the :data:`ERROR_SAMPLE` most recent error-like ones (so a single
ERROR among 100,000 INFO records is still grouped).

Per environment, ``environments.<env>.elasticsearch`` gives the URL, the index pattern
and the field names; credentials (API key or basic auth) come from
:mod:`opsmate.credentials`. Query semantics follow bundle replay: free-text terms must
all match the message field (``"quoted phrases"`` as phrases, ``-word`` excluded), the
level matches its aliases (``warn`` / ``warning`` ...) case-insensitively, the service
case-insensitively, and records without an environment field are kept. Answers are
shaped with :mod:`opsmate.tools.shaping` as replay shapes them.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from opsmate.timeparse import format_time, parse_time
from opsmate.tools import schemas as s
from opsmate.tools.base import CallContext, ToolFailure, ToolOutput, ToolSpec, call_environment
from opsmate.tools.cursor import decode_cursor, encode_cursor
from opsmate.tools.shaping import expand_levels, get_field, parse_terms, record_ref

if TYPE_CHECKING:
    from opsmate.config import ElasticsearchSource, Settings

STATS_SAMPLE = 500  # most recent records whose messages log_stats groups
ERROR_SAMPLE = 300  # most recent error-like records grouped beside them
MESSAGE_CHARS = 2000  # a message longer than this is cut in search results
DEFAULT_RANGE = timedelta(hours=1)


def level_values(level: str | None) -> list[str]:
    """The level names a ``level`` argument matches (comma-separated, aliases expanded);
    the same table bundle replay uses (:func:`opsmate.tools.shaping.expand_levels`)."""
    return sorted(expand_levels(level) or ())


def _any_of(clauses: list[dict[str, Any]]) -> dict[str, Any]:
    return {"bool": {"should": clauses, "minimum_should_match": 1}}


def build_query(
    src: ElasticsearchSource,
    *,
    start: datetime,
    end: datetime,
    environment: str,
    service: str | None,
    level: str | None,
    terms: str | None = None,
) -> dict[str, Any]:
    """The bool query for these filters (what the fixture server must understand)."""
    env_f, span = src.environment_field, {"gte": format_time(start), "lte": format_time(end)}
    filters: list[dict[str, Any]] = [
        {"range": {src.time_field: {**span, "format": "strict_date_optional_time"}}},
        # the environment, or records that carry none (as bundle replay keeps them)
        _any_of([{"term": {env_f: {"value": environment}}},
                 {"bool": {"must_not": [{"exists": {"field": env_f}}]}}]),
    ]  # fmt: skip
    if service:
        filters.append({"term": {src.service_field: {"value": service, "case_insensitive": True}}})
    levels = level_values(level)
    if levels:
        ci = [{"term": {src.level_field: {"value": v, "case_insensitive": True}}} for v in levels]
        filters.append(_any_of(ci))
    must, must_not = parse_terms(terms)

    def clause(text: str) -> dict[str, Any]:
        if any(ch.isspace() for ch in text):
            return {"match_phrase": {src.message_field: text}}
        return {"match": {src.message_field: {"query": text, "operator": "and"}}}

    query: dict[str, Any] = {"filter": filters}
    if must:
        query["must"] = [clause(t) for t in must]
    if must_not:
        query["must_not"] = [clause(t) for t in must_not]
    return {"bool": query}


def _sort(src: ElasticsearchSource) -> list[dict[str, Any]]:
    """Newest first, ``_doc`` (Lucene's doc id) breaking ties of one millisecond.

    Without a point-in-time, records of the same millisecond on different shards (or
    replicas) may be ordered differently between pages; a PIT would make it exact.
    """
    return [{src.time_field: {"order": "desc"}}, {"_doc": {"order": "desc"}}]


def _encode_cursor(payload: dict[str, Any]) -> str:
    return encode_cursor(payload)


def _check_es(payload: dict[str, Any]) -> None:
    if not isinstance(payload.get("s"), list):
        raise ValueError("not a cursor")
    int(payload.get("o", 0))


def _decode_cursor(cursor: str, ident: str) -> dict[str, Any]:
    return decode_cursor(cursor, ident, _check_es)


def _deadline_node() -> type[Any]:
    """elastic-transport's urllib3 node whose requests end within their ``request_timeout``
    of wall-clock time, answer included (:func:`opsmate.tools.wallclock.bounded_urlopen`)."""
    from elastic_transport import Urllib3HttpNode

    from opsmate.tools.wallclock import bounded_urlopen

    class DeadlineNode(Urllib3HttpNode):
        def __init__(self, config: Any) -> None:
            super().__init__(config)
            bounded_urlopen(self.pool)

    return DeadlineNode


def _failure(exc: BaseException, src: ElasticsearchSource, env: str) -> ToolFailure:
    """Map an exception from the elasticsearch client to a ToolFailure."""
    import elastic_transport as et
    import elasticsearch as es

    url = src.url
    if isinstance(exc, ToolFailure):
        return exc
    if isinstance(exc, es.UnsupportedProductError):
        return ToolFailure("bad_response", f"the server at {url} is not Elasticsearch: {exc}")
    if isinstance(exc, es.AuthenticationException | es.AuthorizationException):
        return ToolFailure(
            "auth",
            f"Elasticsearch at {url} refused the credentials (HTTP {exc.meta.status}): "
            f"{exc.message}; set them with `opsmate auth set elasticsearch` or "
            "OPSMATE_ELASTICSEARCH_API_KEY",
        )
    if isinstance(exc, es.ApiError):
        status = exc.meta.status
        reason = _reason(exc.body) or str(exc.message)
        if status == 404:
            return ToolFailure(
                "not_found",
                f"Elasticsearch at {url}: {reason}; check environments.{env}."
                f"elasticsearch.index (now {src.index!r})",
            )
        if status == 429 or status >= 500:
            return ToolFailure(
                "server_error", f"Elasticsearch at {url}: HTTP {status}: {reason}", retryable=True
            )
        if 300 <= status < 400:  # the client follows no redirects: a loop or a proxy login
            where = exc.meta.headers.get("location") if exc.meta.headers else None
            return ToolFailure(
                "bad_response",
                f"Elasticsearch at {url} answered with a redirect (HTTP {status} to "
                f"{where or 'no Location'}); point environments.{env}.elasticsearch.url at "
                "the final address (a redirect loop or a login page is not Elasticsearch)",
            )
        if "fielddata" in reason.lower():
            reason += f" (set elasticsearch.level_field to a keyword field, e.g. {src.level_field}"
            reason += ".keyword)"
        return ToolFailure("bad_request", f"Elasticsearch rejected the search: {reason}")
    if isinstance(exc, et.ConnectionTimeout):
        return ToolFailure(
            "timeout", f"Elasticsearch at {url} did not answer in time", retryable=True
        )
    if isinstance(exc, et.TlsError):
        return ToolFailure(
            "unreachable", f"TLS error talking to Elasticsearch at {url}: {exc.message}"
        )
    if isinstance(exc, et.ConnectionError):
        text = str(exc.message or exc)
        if "resolve" in text.lower():
            why = "its host name does not resolve"
        elif "refused" in text.lower():
            why = "connection refused"
        else:
            why = text[:300]
        return ToolFailure(
            "unreachable", f"Elasticsearch at {url} is unreachable: {why}", retryable=True
        )
    if isinstance(exc, et.SerializationError | ValueError | KeyError | TypeError | IndexError):
        return ToolFailure("bad_response", f"Elasticsearch at {url} sent a malformed answer: {exc}")
    return ToolFailure("internal", f"log tool failed: {type(exc).__name__}: {exc}")


def _reason(body: Any) -> str | None:
    if not isinstance(body, Mapping) or not isinstance(body.get("error"), Mapping):
        return None
    err = body["error"]
    causes = err.get("root_cause") or [err]
    first = causes[0] if isinstance(causes, list) and causes else err
    return f"{first.get('type')}: {first.get('reason')}"


class LogTools:
    """``search_logs`` and ``log_stats`` over the configured environments."""

    def __init__(self, settings: Settings) -> None:
        from opsmate.loganalysis.parse import configure

        self.settings = settings
        configure(getattr(settings, "logs", None))  # site field names of JSON / logfmt lines
        self._clients: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _source(self, asked: str | None, ctx: CallContext) -> tuple[str, ElasticsearchSource]:
        env = call_environment(asked, ctx, self.settings.default_environment)
        env_cfg = self.settings.environments.get(env)
        if env_cfg is None or env_cfg.elasticsearch is None:
            raise ToolFailure(
                "not_configured",
                f"no Elasticsearch configured for environment '{env}'; set "
                f"environments.{env}.elasticsearch.url in the config",
            )
        return env, env_cfg.elasticsearch

    def _client(self, env: str, src: ElasticsearchSource) -> Any:
        with self._lock:
            client = self._clients.get(env)
            if client is None:
                from elasticsearch import Elasticsearch

                from opsmate.credentials import get_credential

                cred = get_credential("elasticsearch", env)
                auth: dict[str, Any] = {}
                if cred is not None and cred.token:
                    auth["api_key"] = cred.token
                elif cred is not None and cred.basic_auth():
                    auth["basic_auth"] = cred.basic_auth()
                client = Elasticsearch(
                    src.url,
                    node_class=_deadline_node(),  # a wall-clock limit, answer included
                    verify_certs=src.verify_tls,
                    request_timeout=src.timeout,
                    max_retries=0,  # the executor retries retryable failures
                    retry_on_timeout=False,
                    **auth,
                )
                self._clients[env] = client
            return client

    def _search(
        self, env: str, src: ElasticsearchSource, ctx: CallContext, **body: Any
    ) -> dict[str, Any]:
        timeout = src.timeout
        if ctx.deadline is not None:
            timeout = max(min(timeout, ctx.deadline - time.monotonic()), 0.05)
        try:
            client = self._client(env, src).options(request_timeout=timeout)
            resp = client.search(index=src.index, **body)
            out = resp.body
            if not isinstance(out, dict) or not isinstance(out["hits"]["hits"], list):
                raise ValueError("no hits.hits list in the answer")
            return out
        except Exception as exc:
            raise _failure(exc, src, env) from exc

    def _window(
        self, from_: str | None, to: str | None, ctx: CallContext
    ) -> tuple[datetime, datetime]:
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
    def _scope(env: str, src: ElasticsearchSource, start: datetime, end: datetime,
               **items: Any) -> dict[str, Any]:  # fmt: skip
        scope = {"source": "elasticsearch", "index": src.index, "environment": env, **items,
                 "from": format_time(start), "to": format_time(end)}  # fmt: skip
        return {k: v for k, v in scope.items() if v is not None}

    def _ref_of(self, src: ElasticsearchSource) -> Callable[[Mapping[str, Any]], str]:
        def ref(hit: Mapping[str, Any]) -> str:
            svc = get_field(hit.get("_source") or {}, src.service_field)
            return record_ref(str(svc) if svc else None, str(hit.get("_id")))

        return ref

    def search_logs(self, args: s.SearchLogsArgs, ctx: CallContext) -> ToolOutput:
        """One page of matching records, newest first; ``next_cursor`` for the next page."""
        env, src = self._source(args.environment, ctx)
        filters = [env, src.index, args.service, args.level, args.query]
        ident = hashlib.sha256(json.dumps(filters).encode()).hexdigest()[:12]
        cursor = _decode_cursor(args.cursor, ident) if args.cursor else None
        if cursor is not None and cursor.get("f") and cursor.get("t"):
            start, end = self._window(cursor["f"], cursor["t"], ctx)  # the first page's window
        else:
            start, end = self._window(args.from_, args.to, ctx)
        page_size = min(args.page_size, ctx.constraints.max_page_size)
        query = build_query(src, start=start, end=end, environment=env, service=args.service,
                            level=args.level, terms=args.query)  # fmt: skip
        body: dict[str, Any] = {"query": query, "size": page_size + 1, "sort": _sort(src)}
        if cursor is not None:
            body["search_after"] = cursor["s"]
        resp = self._search(env, src, ctx, **body)
        hits = resp["hits"]["hits"]
        more = len(hits) > page_size
        hits = hits[:page_size]
        ref = self._ref_of(src)
        items = []
        from opsmate.loganalysis.parse import parse_record, parsed_extras

        level_src = src.level_field.removesuffix(".keyword")
        for hit in hits:
            rec = dict(hit.get("_source") or {})
            pl = parse_record(rec, message_field=src.message_field, level_field=level_src)
            msg = rec.get(src.message_field)
            if isinstance(msg, str) and len(msg) > MESSAGE_CHARS:
                rec[src.message_field] = msg[:MESSAGE_CHARS] + "…"
            extra = parsed_extras(pl, rec, message_field=src.message_field, level_field=level_src)
            items.append({"ref": ref(hit), **rec, **extra})
        offset = int(cursor.get("o", 0)) if cursor else 0
        total = resp["hits"].get("total") or {}
        data: dict[str, Any] = {"items": items, "total": total.get("value"), "offset": offset}
        if total.get("relation") == "gte":
            data["total_is_lower_bound"] = True
        next_cursor = None
        if more and hits:
            next_cursor = _encode_cursor(
                {"s": hits[-1]["sort"], "o": offset + len(hits), "h": ident,
                 "f": format_time(start), "t": format_time(end)}
            )  # fmt: skip
        scope = self._scope(env, src, start, end, service=args.service, level=args.level,
                            query=args.query, page_size=page_size)  # fmt: skip
        return ToolOutput(
            status="success" if items or offset else "no_data",
            data=data,
            scope=scope,
            complete=not more,
            next_cursor=next_cursor,
            source_refs=[item["ref"] for item in items],
        )

    def log_stats(self, args: s.LogStatsArgs, ctx: CallContext) -> ToolOutput:
        """Counted by the server: levels, a level timeline, duration percentiles, status codes
        (and templates, with a ``template_field``); templates, rare errors and text durations
        from two samples: the most recent records and the most recent error-like ones."""
        from opsmate.loganalysis.parse import parse_record
        from opsmate.loganalysis.stats import StatsBuilder, stream_of
        from opsmate.tools.elasticsearch.aggs import apply_aggs, error_query, grid, stats_aggs

        env, src = self._source(args.environment, ctx)
        start, end = self._window(args.from_, args.to, ctx)
        level_src = src.level_field.removesuffix(".keyword")
        query = build_query(src, start=start, end=end, environment=env, service=args.service,
                            level=args.level)  # fmt: skip
        g = grid(start, end)
        resp = self._search(env, src, ctx, query=query, size=STATS_SAMPLE, sort=_sort(src),
                            track_total_hits=True, aggs=stats_aggs(src, g))  # fmt: skip
        hits = list(resp["hits"]["hits"])
        total = int((resp["hits"].get("total") or {}).get("value") or len(hits))
        seen = {h.get("_id") for h in hits}
        err_hits: list[dict[str, Any]] = []
        if total > len(hits):  # the sample missed records: read the error-like ones too
            err = self._search(env, src, ctx, query=error_query(src, query), size=ERROR_SAMPLE,
                               sort=_sort(src))  # fmt: skip
            err_hits = [h for h in err["hits"]["hits"] if h.get("_id") not in seen]
        ref = self._ref_of(src)
        # oldest first; records of the same time in the order they were written (_doc)
        sample = sorted(hits + err_hits, key=lambda h: (_hit_time(h, src), _doc_order(h)))
        builder = StatsBuilder(start=g.start, end=g.end, buckets=g.count, ref_of=ref)
        for h in sample:
            rec = h.get("_source") or {}
            pl = parse_record(rec, message_field=src.message_field, level_field=level_src)
            svc = get_field(rec, src.service_field)
            t = _hit_dt(h, src)
            builder.add(pl, t, str(svc) if svc else None, h, stream=stream_of(rec))
        stats = builder.result()
        stats.pop("timeline", None)
        apply_aggs(stats, resp, src, g, total)
        stats["coverage"] = {
            "records_matching": total,
            "messages_grouped": len(sample),
            "sample": len(sample) < total,
            "note": "by_level, timeline, latency percentiles and status codes count every "
            f"matching record; templates group the {len(hits)} most recent records and the "
            f"{len(err_hits)} most recent error-like ones",
        }
        refs = [
            gr.get("example_ref") for gr in stats["top_messages"] + stats.get("rare_errors", [])
        ]
        return ToolOutput(
            status="success" if total else "no_data",
            data=stats,
            scope=self._scope(env, src, start, end, service=args.service, level=args.level),
            source_refs=list(dict.fromkeys(r for r in refs if r)),
        )


def _hit_dt(hit: Mapping[str, Any], src: ElasticsearchSource) -> datetime | None:
    raw = get_field(hit.get("_source") or {}, src.time_field)
    if raw is None or raw == "":
        return None
    try:
        return parse_time(raw if isinstance(raw, int | float) else str(raw))
    except (ValueError, OverflowError, OSError):
        return None


def _doc_order(hit: Mapping[str, Any]) -> float:
    """The ``_doc`` value a sorted hit carries last (Lucene's order of writing), else 0."""
    keys = hit.get("sort")
    last = keys[-1] if isinstance(keys, list) and keys else 0
    return float(last) if isinstance(last, int | float) and not isinstance(last, bool) else 0.0


def _hit_time(hit: Mapping[str, Any], src: ElasticsearchSource) -> float:
    t = _hit_dt(hit, src)
    return t.timestamp() if t is not None else 0.0


def tool_specs(settings: Settings) -> list[ToolSpec]:
    """``search_logs`` and ``log_stats``, or none when no environment configures logs."""
    if not any(e.elasticsearch for e in settings.environments.values()):
        return []
    tools = LogTools(settings)
    specs: list[tuple[str, type[BaseModel], Callable[..., ToolOutput]]] = [
        ("search_logs", s.SearchLogsArgs, tools.search_logs),
        ("log_stats", s.LogStatsArgs, tools.log_stats),
    ]
    return [ToolSpec(name, s.DESCRIPTIONS[name], model, run) for name, model, run in specs]
