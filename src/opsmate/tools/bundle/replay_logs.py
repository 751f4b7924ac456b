"""Log tools replayed from a bundle's ``logs.ndjson``: search_logs, log_stats, pod_logs.

Each tool is ``(replay, args, ctx) -> ToolOutput``. Filters match the live log tool:
time range, service (the record's ``service``, or the service a JSON line names
itself), environment, level, and free-text terms that must all appear
(case-insensitive, anywhere in the record; ``"quoted phrases"`` kept whole, ``-term``
excludes). The level filter matches a record's level as understood
(:mod:`opsmate.loganalysis.parse`): the level field, else the level written in the line
(JSON, ``[ERROR]``, ``ERROR:`` ...), else the level inferred from its content, so an
unleveled ``Could not resolve host`` is found by ``level=error``; aliases (``warn`` /
``warning``, ``fatal`` / ``critical``) and comma-separated lists match as before.
Records are returned newest first; a record's reference is ``log://<service>/<id>``
with its ``id`` field, else its line number in the file.

Each line is parsed once per bundle (the parse is kept beside the replay), so a second
call over 150,000 records costs a fraction of the first. Every scan watches the call's
deadline: close to it, the answer so far is returned with ``complete: false``.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import time
import weakref
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any

from opsmate.loganalysis.parse import (
    NEEDS_PARSE,
    ParsedLine,
    canonical_level,
    line_names_no_service,
    parse_record,
    parsed_extras,
    record_level,
)
from opsmate.loganalysis.podlines import POD_LOGS_CHARS, fit_tail, line_record
from opsmate.loganalysis.stats import StatsBuilder, stream_of
from opsmate.loganalysis.templates import TemplateMiner
from opsmate.timeparse import parse_time
from opsmate.tools import schemas as s
from opsmate.tools.base import CallContext, ToolFailure, ToolOutput
from opsmate.tools.bundle.replay import Replay
from opsmate.tools.elasticsearch.aggs import grid
from opsmate.tools.shaping import expand_levels, get_field, parse_terms, record_ref

_CHECK_EVERY = 2048  # records between two looks at the deadline


_UNREAD = "\0unread"  # a level not looked at yet


class _Index:
    """What replay knows about the records beyond the loader: parses, times, services,
    and a level column read without parsing where the record's level field decides.
    Each column is built on first use; the levels one record by record (a call filtered
    by service looks at the levels of that service's records only)."""

    def __init__(self, r: Replay) -> None:
        self.times = r.d.log_times
        self._epochs: list[float] | None = None
        self.parsed: list[ParsedLine | None] = [None] * len(r.d.logs)
        self.miner = TemplateMiner()  # shared by every log_stats call on this bundle
        self._levels: list[str | None] | None = None
        self._levels_full = False
        self._services: list[str | None] | None = None
        self._by_service: dict[str, list[int]] = {}
        self._may_name: list[int] = []  # records whose line may name a service of its own
        self._candidates: dict[str, list[int]] = {}  # service -> service_candidates

    @property
    def epochs(self) -> list[float]:
        """Per record: its time as a POSIX timestamp."""
        if self._epochs is None:
            self._epochs = [t.timestamp() for t in self.times]
        return self._epochs

    def epoch(self, i: int) -> float:
        """``epochs[i]``, without building the column for a few records."""
        ep = self._epochs
        return ep[i] if ep is not None else self.times[i].timestamp()

    def parse(self, r: Replay, i: int) -> ParsedLine:
        pl = self.parsed[i]
        if pl is None:
            pl = self.parsed[i] = parse_record(r.d.logs[i])
        return pl

    def levels(self, r: Replay, *, every: bool = False) -> list[str | None]:
        """Per record: its parsed level, :data:`NEEDS_PARSE`, or ``_UNREAD`` (see
        :meth:`level`); ``every``: none left unread (a scan over all records)."""
        if self._levels is None:
            self._levels = [_UNREAD] * len(r.d.logs)
        if every and not self._levels_full:
            self._levels = [
                (record_level(rec) if pl is None else pl.level) if lv is _UNREAD else lv
                for rec, pl, lv in zip(r.d.logs, self.parsed, self._levels, strict=True)
            ]
            self._levels_full = True
        return self._levels

    def level(self, r: Replay, i: int) -> str | None:
        """The level of record ``i`` as parsing it gives (parsing only when needed)."""
        levels = self.levels(r)
        lv = levels[i]
        if lv is _UNREAD:
            pl = self.parsed[i]
            lv = record_level(r.d.logs[i]) if pl is None else pl.level
        if lv is NEEDS_PARSE:
            lv = self.parse(r, i).level
        levels[i] = lv
        return lv

    def services(self, r: Replay) -> list[str | None]:
        """Per record: its ``service`` field lower-cased (``""`` when absent), or None for a
        record whose line may name a service of its own (JSON, logfmt: parse to know)."""
        if self._services is None:
            column: list[str | None] = []
            lowered: dict[str, str] = {}
            by_service: dict[str, list[int]] = {}
            may_name = self._may_name
            for i, rec in enumerate(r.d.logs):
                if not line_names_no_service(rec):
                    column.append(None)
                    may_name.append(i)
                    continue
                raw = rec.get("service")
                if type(raw) is str:
                    own = lowered.get(raw)
                    if own is None:
                        own = lowered[raw] = raw.lower()
                else:
                    own = str(raw or "").lower()
                column.append(own)
                same = by_service.get(own)
                if same is None:
                    by_service[own] = [i]
                else:
                    same.append(i)
            self._by_service = by_service
            self._services = column
        return self._services

    def service_candidates(self, r: Replay, svc: str) -> list[int]:
        """Ascending indices of the records that may belong to service ``svc``: its
        ``service`` field names it and the line names none, or the line may name one."""
        self.services(r)
        found = self._candidates.get(svc)
        if found is None:
            if len(self._candidates) >= 64:
                self._candidates.clear()
            found = self._candidates[svc] = sorted(self._by_service.get(svc, []) + self._may_name)
        return found


_INDEXES: weakref.WeakKeyDictionary[Replay, _Index] = weakref.WeakKeyDictionary()


def index_of(r: Replay) -> _Index:
    """The per-bundle parse cache of ``r`` (built on first use)."""
    ix = _INDEXES.get(r)
    if ix is None:
        ix = _INDEXES[r] = _Index(r)
    return ix


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

    for k, v in rec.items():
        if k == "@timestamp":
            continue
        if isinstance(v, str):
            parts.append(v)
        else:
            walk(v)
    return "\n".join(parts).lower()


def log_ref(r: Replay, i: int) -> str:
    """``log://<service>/<id>`` of record ``i``: its ``id`` / ``_id`` field, else its line."""
    rec = r.d.logs[i]
    rid = rec.get("id") or rec.get("_id") or r.d.log_lines[i]
    return record_ref(str(get_field(rec, "service") or "") or None, str(rid))


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """No cyclic garbage collection during a scan: it allocates only acyclic parse results,
    and collections over a heap of 150,000 records would cost a quarter of the scan."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class _Deadline:
    """Whether a scan must stop now to answer inside the call's time-out."""

    def __init__(self, ctx: CallContext) -> None:
        self.at: float | None = None
        if ctx.deadline is not None:
            budget = ctx.deadline - time.monotonic()
            self.at = ctx.deadline - min(max(budget * 0.15, 0.25), 1.5)

    def passed(self) -> bool:
        return self.at is not None and time.monotonic() >= self.at


def _wanted_levels(level: str | None) -> set[str] | None:
    raw = expand_levels(level)
    if raw is None:
        return None
    return {canonical_level(v) or v for v in raw}


def filter_logs(
    r: Replay,
    *,
    start: datetime,
    end: datetime,
    env: str,
    service: str | None,
    level: str | None,
    query: str | None = None,
    deadline: _Deadline | None = None,
) -> tuple[list[int], bool]:
    """Indices of matching records (time range inclusive), newest first, and whether the
    whole bundle was scanned (False when the deadline stopped the scan)."""
    ix = index_of(r)
    levels = _wanted_levels(level)
    must, must_not = parse_terms(query)
    svc = service.lower() if service else None
    lo, hi = start.timestamp(), end.timestamp()
    logs, times = r.d.logs, ix.times
    services = ix.services(r) if svc is not None else []
    # records that can match: all, or (with a service) those of the service and those
    # whose line may name one; the others fail the service test below
    order: range | list[int] = range(len(logs)) if svc is None else ix.service_candidates(r, svc)
    few = len(order) * 8 < len(logs)  # a few records: their own times and levels
    epochs: list[float] | dict[int, float] = (
        {i: times[i].timestamp() for i in order} if few else ix.epochs
    )
    quick = ix.levels(r, every=not few) if levels is not None else []
    level_of = ix.level
    hits: list[int] = []
    complete = True
    for at in range(0, len(order), _CHECK_EVERY):
        if deadline is not None and at and deadline.passed():
            complete = False
            break
        for i in order[at : at + _CHECK_EVERY]:
            ts = epochs[i]
            if ts < lo or ts > hi:
                continue
            rec = logs[i]
            rec_env = rec.get("environment")
            if rec_env is not None and str(rec_env) != env:
                continue
            if svc is not None:
                own = services[i]
                if own is None:  # the line may name its service: the field, else the line's
                    if str(rec.get("service") or "").lower() != svc:
                        inner = ix.parse(r, i).service
                        if not inner or inner.lower() != svc:
                            continue
                elif own != svc:  # no service in the line: the field decides
                    continue
            if levels is not None:
                lv = quick[i]
                if lv is NEEDS_PARSE or lv is _UNREAD:
                    lv = level_of(r, i)
                if lv not in levels:
                    continue
            if must or must_not:
                text = r.texts.get(i)
                if text is None:
                    text = r.texts[i] = _record_text(rec)
                if any(t not in text for t in must) or any(t in text for t in must_not):
                    continue
            hits.append(i)
    hits.sort(key=epochs.__getitem__)  # stable: equal times stay in line order
    hits.reverse()  # newest first (equal times: the later line first)
    return hits, complete


def _stopped(data: dict[str, Any], scanned: int, total: int) -> None:
    data["scanned"] = scanned
    data["note"] = (
        f"stopped at the time-out after {scanned} of {total} records; narrow the time "
        "range or filter by service / level"
    )


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
    with _no_gc():
        hits, scanned_all = filter_logs(
            r, start=start, end=end, env=env, service=args.service, level=args.level,
            query=args.query, deadline=_Deadline(ctx),
        )  # fmt: skip
    ix = index_of(r)
    page = hits[offset : offset + page_size]
    items = [{"ref": log_ref(r, i), **_item(r.d.logs[i], ix.parse(r, i))} for i in page]
    more = offset + len(page) < len(hits)
    data: dict[str, Any] = {"items": items, "total": len(hits), "offset": offset}
    if not scanned_all:
        data["total_is_lower_bound"] = True
        _stopped(data, -1, len(r.d.logs))
        data.pop("scanned")
    return ToolOutput(
        status="success" if hits and scanned_all else ("no_data" if scanned_all else "partial"),
        data=data,
        scope=scope,
        complete=not more and scanned_all,
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


def _item(rec: Mapping[str, Any], pl: ParsedLine) -> dict[str, Any]:
    """The record as stored, plus what parsing it added (never overwriting a field)."""
    out = dict(rec)
    msg = out.get("message")
    if isinstance(msg, str) and len(msg) > 2000:
        out["message"] = msg[:2000] + "…"
    out.update(parsed_extras(pl, rec))
    return out


def log_stats(r: Replay, args: s.LogStatsArgs, ctx: CallContext) -> ToolOutput:
    """Templates, levels, rare errors, latency and status over the matching records."""
    env = args.environment or ctx.constraints.environment or r.env
    if (bad := r.check_env(env, ctx)) is not None:
        return bad
    start, end = r.window(args.from_, args.to, ctx, ("from", "to"))
    deadline = _Deadline(ctx)
    ix = index_of(r)
    g = grid(start, end)  # the buckets live Elasticsearch answers with
    builder = StatsBuilder(start=g.start, end=g.end, buckets=g.count, miner=ix.miner,
                           ref_of=lambda i: log_ref(r, i))  # fmt: skip
    counted = 0
    with _no_gc():
        hits, scanned_all = filter_logs(
            r, start=start, end=end, env=env, service=args.service, level=args.level,
            deadline=deadline,
        )  # fmt: skip
        hits.reverse()  # oldest first: the example is the first occurrence
        logs, times, parsed, epochs = r.d.logs, r.d.log_times, ix.parsed, ix._epochs

        def rows() -> Iterator[tuple[ParsedLine, datetime, str | None, int, float, str | None]]:
            nonlocal counted, scanned_all
            for n, i in enumerate(hits):
                if n % _CHECK_EVERY == 0 and n and deadline.passed():
                    scanned_all = False
                    return
                rec = logs[i]
                pl = parsed[i]
                if pl is None:
                    pl = parsed[i] = parse_record(rec)
                svc = rec.get("service")
                t = times[i]
                yield (
                    pl, t, svc if isinstance(svc, str) else None, i,
                    epochs[i] if epochs is not None else t.timestamp(), stream_of(rec),
                )  # fmt: skip
                counted += 1

        builder.add_many(rows())
    stats = builder.result()
    if not scanned_all:
        _stopped(stats, counted, len(r.d.logs))
    scope = {
        "source": "bundle",
        "environment": env,
        "service": args.service,
        "level": args.level,
        "from": r.fmt(start),
        "to": r.fmt(end),
    }
    refs = [g["example_ref"] for g in stats["top_messages"] + stats.get("rare_errors", [])]
    return ToolOutput(
        status=("success" if scanned_all else "partial")
        if counted
        else ("no_data" if scanned_all else "partial"),
        data=stats,
        scope={k: v for k, v in scope.items() if v is not None},
        complete=scanned_all,
        source_refs=list(dict.fromkeys(refs)),
    )


# --------------------------------------------------------------------------- pod_logs


def last_termination(
    r: Replay, pod: str, namespace: str | None, container: str | None
) -> datetime | None:
    """When the pod's container (any, when none is named) last terminated, from the
    bundle's Pod object (``lastState.terminated.finishedAt``), or None when unknown."""
    latest: datetime | None = None
    for obj in r.objects("Pod", [namespace] if namespace else None):
        if obj["metadata"].get("name") != pod:
            continue
        status = obj.get("status") or {}
        for cs in (status.get("containerStatuses") or []) + (
            status.get("initContainerStatuses") or []
        ):
            if not isinstance(cs, Mapping) or (container and cs.get("name") != container):
                continue
            term = (cs.get("lastState") or {}).get("terminated") or {}
            raw = term.get("finishedAt")
            if not raw:
                continue
            try:
                t = parse_time(str(raw))
            except (ValueError, OverflowError):
                continue
            if latest is None or t > latest:
                latest = t
    return latest


def pod_logs(r: Replay, args: s.PodLogsArgs, ctx: CallContext) -> ToolOutput:
    """The tail of one pod's log: bundle log records whose ``pod`` field is the pod.

    Bundle records carry no container-instance marker, so ``previous=true`` is answered
    with the lines up to the container's last termination (``lastState.terminated.
    finishedAt`` of the bundle's Pod object, plus one second) when that is known, else
    with all the pod's lines (``scope.previous_basis`` says which); ``previous=false``
    returns all the pod's lines, as the bundle cannot tell the instances apart.
    """
    if (bad := r.check_env(args.environment, ctx)) is not None:
        return bad
    previous = bool(getattr(args, "previous", False))
    since = None
    if args.since_seconds:
        since = r.d.meta.captured_at - timedelta(seconds=args.since_seconds)
    until = None
    basis = None
    if previous:
        until = last_termination(r, args.name, args.namespace, args.container)
        if until is not None:
            until = until + timedelta(seconds=1)
            basis = f"lines up to the last termination ({r.fmt(until)})"
        else:
            basis = "no termination time recorded for this pod: all its lines"
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
        t = r.d.log_times[i]
        if since is not None and t < since:
            continue
        if until is not None and t > until:
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
        "previous": True if previous else None,
        "previous_basis": basis,
    }
    scope = {k: v for k, v in scope.items() if v is not None}
    if not picked:
        pods = sorted({str(get_field(x, "pod")) for x in r.d.logs if get_field(x, "pod")})
        return ToolOutput(
            status="no_data",
            data={"lines": [], "records": [], "message": "no log lines recorded for this pod",
                  "pods_with_logs": pods},
            scope=scope,
        )  # fmt: skip
    tail = picked[-args.tail_lines :]
    ix = index_of(r)
    containers = {get_field(r.d.logs[i], "container") for i in tail}
    lines: list[str] = []
    records: list[dict[str, Any]] = []
    for i in tail:
        rec = r.d.logs[i]
        level = str(get_field(rec, "level") or "").upper()
        ts = r.fmt(r.d.log_times[i])
        lines.append(" ".join(p for p in (ts, level, str(rec["message"])) if p))
        cont = get_field(rec, "container")
        records.append(
            line_record(
                ix.parse(r, i),
                message=str(rec["message"]),
                time=r.d.log_times[i],
                container=str(cont) if cont and len(containers) > 1 else None,
                previous=previous,
                ref=log_ref(r, i),
            )
        )
    records = records[len(records) - fit_tail(lines, records, POD_LOGS_CHARS) :]
    ns = args.namespace or get_field(r.d.logs[tail[-1]], "namespace")
    refs = [f"k8s://{ns or '_cluster'}/Pod/{args.name}"]
    refs += [
        log_ref(r, i) for i in tail if (ix.parse(r, i).level or "") in ("error", "fatal", "warn")
    ][-20:]
    data: dict[str, Any] = {
        "lines": lines,
        "records": records,
        "returned": len(tail),
        "older_not_shown": len(picked) - len(tail),
    }
    if len(containers) == 1 and next(iter(containers)):
        data["container"] = next(iter(containers))
    if len(records) < len(lines):
        data["records_note"] = f"records: the newest {len(records)} of the lines"
    return ToolOutput(
        status="success",
        data=data,
        scope=scope,
        complete=len(tail) == len(picked),
        source_refs=refs,
    )
