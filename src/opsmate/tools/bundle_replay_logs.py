"""Log tools replayed from a bundle's ``logs.ndjson``: search_logs, log_stats, pod_logs.

Each tool is ``(replay, args, ctx) -> ToolOutput``. Filters match the live log tool:
time range, service, environment, level (``warn`` also matches ``warning``; a
comma-separated list matches any), and free-text terms that must all appear
(case-insensitive, anywhere in the record; ``"quoted phrases"`` kept whole,
``-term`` excludes). Records are returned newest first; a record's reference is
``log://<service>/<id>`` with its ``id`` field, else its line number in the file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from opsmate.tools import schemas as s
from opsmate.tools.base import CallContext, ToolFailure, ToolOutput
from opsmate.tools.bundle_replay import Replay
from opsmate.tools.shaping import expand_levels, get_field, parse_terms, record_ref
from opsmate.tools.shaping import log_stats as shape_log_stats


def _record_text(rec: Mapping[str, Any]) -> str:
    parts: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, Mapping):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif v is not None:
            parts.append(str(v))

    walk({k: v for k, v in rec.items() if k != "@timestamp"})
    return "\n".join(parts).lower()


def log_ref(r: Replay, i: int) -> str:
    """``log://<service>/<id>`` of record ``i``: its ``id`` / ``_id`` field, else its line."""
    rec = r.d.logs[i]
    rid = rec.get("id") or rec.get("_id") or r.d.log_lines[i]
    return record_ref(str(get_field(rec, "service") or "") or None, str(rid))


def filter_logs(
    r: Replay,
    *,
    start: datetime,
    end: datetime,
    env: str,
    service: str | None,
    level: str | None,
    query: str | None = None,
) -> list[int]:
    """Indices of matching log records (time range inclusive), newest first."""
    levels = expand_levels(level)
    must, must_not = parse_terms(query)
    svc = service.lower() if service else None
    hits: list[int] = []
    for i, rec in enumerate(r.d.logs):
        ts = r.d.log_times[i]
        if ts < start or ts > end:
            continue
        rec_env = get_field(rec, "environment")
        if rec_env is not None and str(rec_env) != env:
            continue
        if svc is not None and str(get_field(rec, "service") or "").lower() != svc:
            continue
        if levels is not None and str(get_field(rec, "level") or "").lower() not in levels:
            continue
        if must or must_not:
            text = r.texts.get(i)
            if text is None:
                text = r.texts[i] = _record_text(rec)
            if any(t not in text for t in must) or any(t in text for t in must_not):
                continue
        hits.append(i)
    hits.sort(key=lambda i: (r.d.log_times[i], r.d.log_lines[i]), reverse=True)
    return hits


def search_logs(r: Replay, args: s.SearchLogsArgs, ctx: CallContext) -> ToolOutput:
    """Matching log records, newest first, one page at a time."""
    env = args.environment or ctx.constraints.environment or r.env
    if (bad := r.check_env(env, ctx)) is not None:
        return bad
    start, end = r.window(args.from_, args.to, ctx, ("from", "to"))
    page_size = min(args.page_size, ctx.constraints.max_page_size)
    scope = {
        "source": "bundle",
        "environment": env,
        "service": args.service,
        "level": args.level,
        "query": args.query,
        "from": r.fmt(start),
        "to": r.fmt(end),
        "page_size": page_size,
    }
    scope = {k: v for k, v in scope.items() if v is not None}
    ident = hashlib.sha256(
        repr((env, args.service, args.level, args.query, start, end)).encode()
    ).hexdigest()[:8]
    offset = _offset(args.cursor, ident)
    hits = filter_logs(
        r, start=start, end=end, env=env, service=args.service, level=args.level, query=args.query
    )
    page = hits[offset : offset + page_size]
    items = [{"ref": log_ref(r, i), **_item(r.d.logs[i])} for i in page]
    more = offset + len(page) < len(hits)
    return ToolOutput(
        status="success" if hits else "no_data",
        data={"items": items, "total": len(hits), "offset": offset},
        scope=scope,
        complete=not more,
        next_cursor=f"{offset + len(page)}:{ident}" if more else None,
        source_refs=[item["ref"] for item in items],
    )


def _offset(cursor: str | None, ident: str) -> int:
    if not cursor:
        return 0
    raw, _, tag = cursor.partition(":")
    if not raw.isdigit() or tag != ident:
        raise ToolFailure(
            "bad_cursor",
            "cursor does not belong to this query; repeat the same arguments or drop cursor",
        )
    return int(raw)


def _item(rec: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(rec)
    msg = out.get("message")
    if isinstance(msg, str) and len(msg) > 2000:
        out["message"] = msg[:2000] + "…"
    return out


def log_stats(r: Replay, args: s.LogStatsArgs, ctx: CallContext) -> ToolOutput:
    """Counts by level and by normalised message over the matching records."""
    env = args.environment or ctx.constraints.environment or r.env
    if (bad := r.check_env(env, ctx)) is not None:
        return bad
    start, end = r.window(args.from_, args.to, ctx, ("from", "to"))
    hits = filter_logs(r, start=start, end=end, env=env, service=args.service, level=args.level)
    hits.reverse()  # oldest first: the example is the first occurrence
    index_of = {id(r.d.logs[i]): i for i in hits}
    stats = shape_log_stats(
        (r.d.logs[i] for i in hits), ref_of=lambda rec: log_ref(r, index_of[id(rec)])
    )
    scope = {
        "source": "bundle",
        "environment": env,
        "service": args.service,
        "level": args.level,
        "from": r.fmt(start),
        "to": r.fmt(end),
    }
    return ToolOutput(
        status="success" if hits else "no_data",
        data=stats,
        scope={k: v for k, v in scope.items() if v is not None},
        source_refs=[g["example_ref"] for g in stats["top_messages"]],
    )


def pod_logs(r: Replay, args: s.PodLogsArgs, ctx: CallContext) -> ToolOutput:
    """The tail of one pod's log: bundle log records whose ``pod`` field is the pod."""
    if (bad := r.check_env(args.environment, ctx)) is not None:
        return bad
    since = None
    if args.since_seconds:
        since = r.d.meta.captured_at - timedelta(seconds=args.since_seconds)
    picked = []
    for i, rec in enumerate(r.d.logs):
        if str(get_field(rec, "pod") or "") != args.name:
            continue
        ns = get_field(rec, "namespace")
        if args.namespace and ns is not None and ns != args.namespace:
            continue
        cont = get_field(rec, "container")
        if args.container and cont is not None and cont != args.container:
            continue
        if since is not None and r.d.log_times[i] < since:
            continue
        picked.append(i)
    picked.sort(key=lambda i: (r.d.log_times[i], r.d.log_lines[i]))
    scope = {
        "source": "bundle",
        "environment": r.env,
        "pod": args.name,
        "namespace": args.namespace,
        "container": args.container,
        "tail_lines": args.tail_lines,
        "since": r.fmt(since) if since else None,
    }
    scope = {k: v for k, v in scope.items() if v is not None}
    if not picked:
        pods = sorted({str(get_field(r, "pod")) for r in r.d.logs if get_field(r, "pod")})
        return ToolOutput(
            status="no_data",
            data={"lines": [], "message": "no log lines recorded for this pod",
                  "pods_with_logs": pods},
            scope=scope,
        )  # fmt: skip
    tail = picked[-args.tail_lines :]
    lines = []
    for i in tail:
        rec = r.d.logs[i]
        level = str(get_field(rec, "level") or "").upper()
        ts = r.fmt(r.d.log_times[i])
        lines.append(" ".join(p for p in (ts, level, str(rec["message"])) if p))
    ns = args.namespace or get_field(r.d.logs[tail[-1]], "namespace")
    refs = [f"k8s://{ns or '_cluster'}/Pod/{args.name}"]
    refs += [
        log_ref(r, i)
        for i in tail
        if str(get_field(r.d.logs[i], "level") or "").lower() in ("error", "fatal", "warn")
    ][-20:]
    return ToolOutput(
        status="success",
        data={
            "lines": lines,
            "returned": len(tail),
            "older_not_shown": len(picked) - len(tail),
        },
        scope=scope,
        complete=len(tail) == len(picked),
        source_refs=refs,
    )
