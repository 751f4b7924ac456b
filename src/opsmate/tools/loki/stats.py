"""Counting and grouping behind Loki's ``log_stats`` and ``pod_logs`` answers.

:func:`level_counts` counts every matching record per level and bucket with metric
queries over the buckets Elasticsearch answers with (:func:`opsmate.tools.elasticsearch.aggs.grid`).
Loki evaluates ``count_over_time(... [r])`` at ``t`` over ``(t - r, t]``, so bucket
``[lo, hi)`` is the value at ``hi - 1 ns`` with ``r = hi - lo``: whole buckets come from
one range query (``step`` = the bucket width), the first and last bucket, cut by the
call's window, from one evaluation each. Ranges are whole milliseconds, so counts are
exact for record times of millisecond precision.

:func:`stats_from_sample` groups sampled records with the shared
:class:`opsmate.loganalysis.stats.StatsBuilder`; :func:`pod_tail` shapes a pod's lines as
the Kubernetes and bundle ``pod_logs`` do.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import opsmate.tools.loki.logql as logql
from opsmate.loganalysis.parse import canonical_level, parse_record
from opsmate.loganalysis.podlines import POD_LOGS_CHARS, fit_tail, line_record
from opsmate.loganalysis.stats import StatsBuilder, stream_of
from opsmate.timeparse import format_time, parse_time
from opsmate.tools import schemas as s
from opsmate.tools.base import ToolOutput
from opsmate.tools.elasticsearch.aggs import Grid, grid
from opsmate.tools.loki.records import Entry, entry_time, ns_of, ref_of, to_record

if TYPE_CHECKING:
    from opsmate.config import LokiSource

__all__ = ["level_counts", "pod_tail", "stats_from_sample"]

# a metric query's series: (expr, start ns, end ns, step s) -> [(labels, [(t s, value)])]
Matrix = Callable[[str, int, int, float], list[tuple[dict[str, str], list[tuple[float, float]]]]]

_MS = 1_000_000
_S = 1_000_000_000


def _ms_floor(ns: int) -> int:
    return ns - ns % _MS


def _ms_ceil(ns: int) -> int:
    return -((-ns) // _MS) * _MS


def level_counts(
    matrix: Matrix,
    src: LokiSource,
    q: logql.LogQuery,
    start: datetime,
    end: datetime,
) -> tuple[dict[str, int], dict[str, list[int]], Grid]:
    """Records of ``q`` in ``[start, end]`` per level (``by_level``) and per bucket."""
    g = grid(start, end)
    step = g.step_s * _S
    g0 = ns_of(g.start)
    lo, hi = _ms_floor(ns_of(start)), _ms_ceil(ns_of(end) + 1)
    per_bucket: list[dict[str, int]] = [{} for _ in range(g.count)]

    def take(series: list[tuple[dict[str, str], list[tuple[float, float]]]], first_t: float,
             first_k: int) -> None:  # fmt: skip
        key = logql.level_key(src)
        for metric, points in series:
            level = (metric.get(key) or "").lower() or "unknown"
            for t, v in points:
                k = first_k + round((t - first_t) / g.step_s)
                if 0 <= k < g.count and v:
                    per_bucket[k][level] = per_bucket[k].get(level, 0) + int(v)

    def evaluate(a: int, b: int, k: int) -> None:  # one bucket [a, b)
        if b <= a:
            return
        expr = logql.count_by(q, src, b - a)
        take(matrix(expr, b - 1, b - 1, 1.0), (b - 1) / _S, k)

    edges = sorted({0, g.count - 1})
    whole = [k for k in range(g.count)
             if k not in edges or (g0 + k * step >= lo and g0 + (k + 1) * step <= hi)]  # fmt: skip
    for k in range(g.count):
        if k not in whole:
            evaluate(max(g0 + k * step, lo), min(g0 + (k + 1) * step, hi), k)
    if whole:
        k0, k1 = whole[0], whole[-1]
        t0, t1 = g0 + (k0 + 1) * step - 1, g0 + (k1 + 1) * step - 1
        expr = logql.count_by(q, src, step)
        take(matrix(expr, t0, t1, float(g.step_s)), t0 / _S, k0)
    by_level: dict[str, int] = {}
    tl = {k: [0] * g.count for k in ("total", "error", "warn")}
    for k, levels in enumerate(per_bucket):
        for level, n in levels.items():
            by_level[level] = by_level.get(level, 0) + n
            tl["total"][k] += n
            canon = canonical_level(level)
            if canon in ("error", "fatal"):
                tl["error"][k] += n
            elif canon == "warn":
                tl["warn"][k] += n
    return by_level, {k: v for k, v in tl.items() if any(v)}, g


def record_time(rec: dict[str, Any], e: Entry) -> datetime:
    """The time the record says (with its offset, as Elasticsearch reads it), else the entry's."""
    raw = rec.get("@timestamp")
    if isinstance(raw, str) and raw:
        try:
            return parse_time(raw)
        except (ValueError, OverflowError):
            pass
    return entry_time(e.ns)


def stats_from_sample(
    recent: list[Entry], errors: list[Entry], src: LokiSource, g: Grid
) -> dict[str, Any]:
    """Templates, rare errors, durations and status codes of the sampled records."""
    sample = sorted(recent + errors, key=lambda e: e.ns)  # oldest first: first occurrences
    records = [to_record(e, src) for e in sample]
    refs = [ref_of(e, rec, src) for e, rec in zip(sample, records, strict=True)]
    builder = StatsBuilder(start=g.start, end=g.end, buckets=g.count, ref_of=refs.__getitem__)
    for i, (e, rec) in enumerate(zip(sample, records, strict=True)):
        svc = rec.get("service")
        builder.add(parse_record(rec), record_time(rec, e), str(svc) if svc else None, i,
                    stream=stream_of(rec))  # fmt: skip
    stats = builder.result()
    stats.pop("timeline", None)
    stats["buckets"] = {"from": format_time(g.start), "to": format_time(g.end),
                        "step_seconds": float(g.step_s), "count": g.count}  # fmt: skip
    return stats


def pod_tail(
    got: list[Entry], args: s.PodLogsArgs, src: LokiSource, scope: dict[str, Any]
) -> ToolOutput:
    """The ``pod_logs`` answer from a pod's newest entries (newest first, one extra)."""
    if not got:
        return ToolOutput(
            status="no_data",
            data={"lines": [], "records": [], "message": "no log lines in Loki for this pod"},
            scope=scope,
        )
    more = len(got) > args.tail_lines
    tail = list(reversed(got[: args.tail_lines]))  # oldest first
    recs = [to_record(e, src) for e in tail]
    containers = {r.get("container") for r in recs}
    lines: list[str] = []
    records: list[dict[str, Any]] = []
    refs: list[str] = []
    for e, rec in zip(tail, recs, strict=True):
        t = entry_time(e.ns)
        msg = str(rec.get("message", e.line))
        level = str(rec.get("level") or "").upper()
        lines.append(" ".join(p for p in (format_time(t), level, msg) if p))
        pl = parse_record(rec)
        ref = ref_of(e, rec, src)
        cont = rec.get("container")
        shown = str(cont) if cont and len(containers) > 1 else None
        records.append(line_record(pl, message=msg, time=t, previous=bool(args.previous),
                                   ref=ref, container=shown))  # fmt: skip
        if (pl.level or "") in ("error", "fatal", "warn"):
            refs.append(ref)
    records = records[len(records) - fit_tail(lines, records, POD_LOGS_CHARS) :]
    ns = args.namespace or recs[-1].get("namespace")
    data: dict[str, Any] = {"lines": lines, "records": records, "returned": len(tail),
                            "older_not_shown": None if more else 0}  # fmt: skip
    if more:
        data["older_note"] = "older lines exist; raise tail_lines or since_seconds to see them"
    if len(containers) == 1 and next(iter(containers)):
        data["container"] = next(iter(containers))
    if len(records) < len(lines):
        data["records_note"] = f"records: the newest {len(records)} of the lines"
    return ToolOutput(
        status="success",
        data=data,
        scope=scope,
        complete=not more,
        source_refs=[f"k8s://{ns or '_cluster'}/Pod/{args.name}", *refs[-20:]],
    )
