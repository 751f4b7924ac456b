"""Elasticsearch aggregations behind ``log_stats``: counted by the server, not pulled.

One search carries every aggregation (the answer's ``size`` is a small sample of recent
records for templates, see :mod:`opsmate.tools.elasticsearch.tools`):

- ``by_level``: terms on the level field (exact counts of every matching record);
- ``timeline``: a date_histogram over the call's window (``fixed_interval``,
  ``min_doc_count: 0``, ``extended_bounds``) with the levels of each bucket;
- ``dur<i>``: per configured duration field, a ``filter`` on its existence holding
  ``percentiles`` (50, 99), ``max``, a date_histogram of the median, and (with an
  ``endpoint_field``) the slowest endpoints;
- ``status_codes`` / ``status_by_endpoint``: terms on the ``status_field`` (with a
  timeline per code) and per endpoint, when those fields are configured;
- ``templates``: terms on the ``template_field`` (levels, first and last time), when set.

:func:`apply_aggs` turns the answer into the same sections bundle replay produces
(``by_level``, ``timeline``, ``latency``, ``status``, template groups), so the engine
reads live and replayed answers alike.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from statistics import median
from typing import TYPE_CHECKING, Any

from opsmate.loganalysis.parse import canonical_level, duration_unit_ms
from opsmate.loganalysis.stats import ERROR_OUTCOMES
from opsmate.timeparse import format_time

if TYPE_CHECKING:
    from opsmate.config import ElasticsearchSource

__all__ = ["Grid", "apply_aggs", "error_query", "grid", "stats_aggs"]

ERROR_WORDS = (
    "error errors exception failed failure fail refused timeout unable cannot undefined denied "
    "unreachable resolve unavailable invalid missing fatal panic killed expired exhausted "
    "traceback"
)


class Grid:
    """The time buckets of an answer: start, step (whole seconds), count."""

    def __init__(self, start: datetime, step_s: int, count: int) -> None:
        self.start, self.step_s, self.count = start, step_s, count

    @property
    def end(self) -> datetime:
        return datetime.fromtimestamp(self.start.timestamp() + self.step_s * self.count, tz=UTC)

    def histogram(self, src: ElasticsearchSource, **aggs: Any) -> dict[str, Any]:
        """A date_histogram over the grid (empty buckets included)."""
        spec: dict[str, Any] = {
            "date_histogram": {
                "field": src.time_field,
                "fixed_interval": f"{self.step_s}s",
                "min_doc_count": 0,
                "extended_bounds": {
                    "min": int(self.start.timestamp() * 1000),
                    "max": int(self.end.timestamp() * 1000) - 1,
                },
            }
        }
        if aggs:
            spec["aggs"] = aggs
        return spec

    def index(self, key_ms: Any) -> int | None:
        try:
            k = int((float(key_ms) / 1000 - self.start.timestamp()) // self.step_s)
        except (TypeError, ValueError):
            return None
        return k if 0 <= k < self.count else None


def grid(start: datetime, end: datetime, count: int = 12) -> Grid:
    """Buckets aligned as Elasticsearch aligns a fixed interval (multiples from the epoch)."""
    span = max((end - start).total_seconds(), 1.0)
    step = max(math.ceil(span / count), 1)
    first = math.floor(start.timestamp() / step) * step
    n = math.floor(end.timestamp() / step) * step
    buckets = int((n - first) / step) + 1
    return Grid(datetime.fromtimestamp(first, tz=UTC), step, buckets)


def stats_aggs(src: ElasticsearchSource, g: Grid) -> dict[str, Any]:
    """The aggregations of one log_stats search."""
    levels = {"terms": {"field": src.level_field, "size": 10}}
    aggs: dict[str, Any] = {
        "by_level": {"terms": {"field": src.level_field, "size": 50}},
        "timeline": g.histogram(src, levels=levels),
    }
    for i, f in enumerate(src.duration_fields):
        pct = {"percentiles": {"field": f, "percents": [50, 99]}}
        inner: dict[str, Any] = {
            "pct": pct,
            "max": {"max": {"field": f}},
            "first": {"min": {"field": src.time_field}},
            "last": {"max": {"field": src.time_field}},
            "timeline": g.histogram(src, p50={"percentiles": {"field": f, "percents": [50]}}),
        }
        if src.endpoint_field:
            inner["by_endpoint"] = {
                "terms": {"field": src.endpoint_field, "size": 5},
                "aggs": {"pct": pct, "max": {"max": {"field": f}}},
            }
        aggs[f"dur{i}"] = {"filter": {"exists": {"field": f}}, "aggs": inner}
    if src.status_field:
        aggs["status_codes"] = {
            "terms": {"field": src.status_field, "size": 20},
            "aggs": {"timeline": g.histogram(src)},
        }
        if src.endpoint_field:
            aggs["status_by_endpoint"] = {
                "terms": {"field": src.endpoint_field, "size": 10},
                "aggs": {"codes": {"terms": {"field": src.status_field, "size": 10}}},
            }
    if src.template_field:
        aggs["templates"] = {
            "terms": {"field": src.template_field, "size": 30},
            "aggs": {
                "levels": levels,
                "first": {"min": {"field": src.time_field}},
                "last": {"max": {"field": src.time_field}},
            },
        }
    return aggs


def error_query(src: ElasticsearchSource, base: dict[str, Any]) -> dict[str, Any]:
    """``base`` narrowed to error-like records: an error level, or no level and an error
    word in the message (unleveled lines count)."""
    filters = list(base["bool"].get("filter") or [])
    names = ("error", "err", "fatal", "critical", "crit", "panic", "severe", "emerg")
    lv = [{"term": {src.level_field: {"value": v, "case_insensitive": True}}} for v in names]
    unleveled = {
        "bool": {
            "must_not": [{"exists": {"field": src.level_field}}],
            "must": [{"match": {src.message_field: {"query": ERROR_WORDS, "operator": "or"}}}],
        }
    }
    out: dict[str, Any] = {
        "bool": {"filter": filters, "should": [*lv, unleveled], "minimum_should_match": 1}
    }
    for key in ("must", "must_not"):
        if base["bool"].get(key):
            out["bool"][key] = base["bool"][key]
    return out


def _r(x: float) -> float:
    return float(f"{x:.4g}")


def _ms_time(value: Any) -> str | None:
    try:
        return format_time(datetime.fromtimestamp(float(value) / 1000, tz=UTC))
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def _pct(agg: Any, key: str) -> float | None:
    values = (agg or {}).get("values") or {}
    v = values.get(key) if isinstance(values, dict) else None
    return float(v) if isinstance(v, int | float) else None


def _shift(series: list[float | None], g: Grid) -> dict[str, Any] | None:
    best: tuple[float, int, float, float] | None = None
    for k in range(1, len(series)):
        before = [v for v in series[:k] if v is not None]
        after = [v for v in series[k:] if v is not None]
        if len(before) < 2 or len(after) < 2:
            continue
        b50, a50 = median(before), median(after)
        cost = sum(abs(v - b50) for v in before) + sum(abs(v - a50) for v in after)
        if best is None or cost < best[0]:
            best = (cost, k, b50, a50)
    if best is None or max(best[2] + 1, best[3] + 1) / min(best[2] + 1, best[3] + 1) < 1.5:
        return None
    at = datetime.fromtimestamp(g.start.timestamp() + best[1] * g.step_s, tz=UTC)
    return {"at": format_time(at), "before_p50_ms": _r(best[2]), "after_p50_ms": _r(best[3])}


def _latency(aggs: dict[str, Any], src: ElasticsearchSource, g: Grid) -> list[dict[str, Any]]:
    out = []
    for i, f in enumerate(src.duration_fields):
        a = aggs.get(f"dur{i}") or {}
        n = int(a.get("doc_count") or 0)
        if n < 2:
            continue
        unit = duration_unit_ms(f)
        p50, p99 = _pct(a.get("pct"), "50.0"), _pct(a.get("pct"), "99.0")
        mx = (a.get("max") or {}).get("value")
        series: list[float | None] = [None] * g.count
        for b in (a.get("timeline") or {}).get("buckets") or []:
            k = g.index(b.get("key"))
            v = _pct(b.get("p50"), "50.0")
            if k is not None and v is not None and b.get("doc_count"):
                series[k] = _r(v * unit)
        entry: dict[str, Any] = {
            "key": f,
            "source": f,
            "count": n,
            "p50_ms": _r(p50 * unit) if p50 is not None else None,
            "p99_ms": _r(p99 * unit) if p99 is not None else None,
            "max_ms": _r(float(mx) * unit) if isinstance(mx, int | float) else None,
            "first_seen": _ms_time((a.get("first") or {}).get("value")),
            "last_seen": _ms_time((a.get("last") or {}).get("value")),
            "timeline_p50_ms": series,
        }
        shift = _shift(series, g)
        if shift:
            entry["shift"] = shift
        out.append(entry)
        for b in (a.get("by_endpoint") or {}).get("buckets") or []:
            e50, e99 = _pct(b.get("pct"), "50.0"), _pct(b.get("pct"), "99.0")
            emx = (b.get("max") or {}).get("value")
            out.append({
                "key": str(b.get("key")), "source": f, "count": int(b.get("doc_count") or 0),
                "p50_ms": _r(e50 * unit) if e50 is not None else None,
                "p99_ms": _r(e99 * unit) if e99 is not None else None,
                "max_ms": _r(float(emx) * unit) if isinstance(emx, int | float) else None,
            })  # fmt: skip
    out.sort(key=lambda d: (-(d.get("p99_ms") or 0.0), -d["count"]))
    return out[:6]


def _is_error_code(code: str) -> bool:
    return (code.isdigit() and len(code) == 3 and code[0] == "5") or code.lower() in ERROR_OUTCOMES


def _status(aggs: dict[str, Any], g: Grid) -> list[dict[str, Any]]:
    codes_agg = aggs.get("status_codes")
    if not codes_agg:
        return []
    out = []
    codes: dict[str, int] = {}
    errors_tl = [0] * g.count
    for b in codes_agg.get("buckets") or []:
        code = str(b.get("key_as_string") or b.get("key"))
        codes[code] = int(b.get("doc_count") or 0)
        if _is_error_code(code):
            for hb in (b.get("timeline") or {}).get("buckets") or []:
                k = g.index(hb.get("key"))
                if k is not None:
                    errors_tl[k] += int(hb.get("doc_count") or 0)
    total = sum(codes.values())
    errors = sum(n for c, n in codes.items() if _is_error_code(c))
    overall: dict[str, Any] = {"key": "(all)", "total": total, "codes": codes, "errors": errors}
    if errors:
        overall["error_ratio"] = _r(errors / total)
        overall["timeline_errors"] = errors_tl
        hit = [i for i, n in enumerate(errors_tl) if n]
        if hit:
            overall["first_error"] = format_time(
                datetime.fromtimestamp(g.start.timestamp() + hit[0] * g.step_s, tz=UTC)
            )
    out.append(overall)
    for b in (aggs.get("status_by_endpoint") or {}).get("buckets") or []:
        ec = {str(c.get("key_as_string") or c.get("key")): int(c.get("doc_count") or 0)
              for c in (b.get("codes") or {}).get("buckets") or []}  # fmt: skip
        err = sum(n for c, n in ec.items() if _is_error_code(c))
        tot = int(b.get("doc_count") or 0)
        entry = {"key": str(b.get("key")), "total": tot, "codes": ec, "errors": err}
        if err and tot:
            entry["error_ratio"] = _r(err / tot)
        out.append(entry)
    out.sort(key=lambda d: (-d["errors"], -d["total"], d["key"]))
    return out[:6]


def _templates(aggs: dict[str, Any], sample_groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    examples = {str(gr.get("pattern")): gr for gr in sample_groups}
    out = []
    for b in (aggs.get("templates") or {}).get("buckets") or []:
        levels = {str(x.get("key")).lower(): int(x.get("doc_count") or 0)
                  for x in (b.get("levels") or {}).get("buckets") or []}  # fmt: skip
        canon = [canonical_level(k) for k in levels]
        errors = sum(n for k, n in levels.items() if canonical_level(k) in ("error", "fatal"))
        rank = {"debug": 1, "info": 2, "warn": 3, "error": 4, "fatal": 5}
        sev = max((c for c in canon if c), key=lambda c: rank[c], default=None)
        key = str(b.get("key"))
        g: dict[str, Any] = {"pattern": key, "count": int(b.get("doc_count") or 0),
                             "levels": levels}  # fmt: skip
        if sev:
            g["severity"] = sev
        if errors:
            g["errors"] = errors
        g["first_seen"] = _ms_time((b.get("first") or {}).get("value"))
        g["last_seen"] = _ms_time((b.get("last") or {}).get("value"))
        g["example"] = (examples.get(key) or {}).get("example") or key
        out.append(g)
    return out


def apply_aggs(
    stats: dict[str, Any],
    resp: dict[str, Any],
    src: ElasticsearchSource,
    g: Grid,
    total: int,
) -> None:
    """Put the exact, server-side figures of ``resp`` into ``stats`` (in place)."""
    aggs = resp.get("aggregations") or {}
    counts: dict[str, int] = {}
    agg = aggs.get("by_level") or {}
    for bucket in agg.get("buckets") or []:
        key = str(bucket["key"]).lower() or "unknown"
        counts[key] = counts.get(key, 0) + int(bucket["doc_count"])
    if agg.get("sum_other_doc_count"):  # levels beyond the 50 most frequent
        counts["other"] = int(agg["sum_other_doc_count"])
    missing = total - sum(counts.values())
    if missing > 0:  # records without a level
        counts["unknown"] = counts.get("unknown", 0) + missing
    stats["by_level"] = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    stats["total"] = total
    tl = {k: [0] * g.count for k in ("total", "error", "warn")}
    for b in (aggs.get("timeline") or {}).get("buckets") or []:
        k = g.index(b.get("key"))
        if k is None:
            continue
        tl["total"][k] += int(b.get("doc_count") or 0)
        for lb in (b.get("levels") or {}).get("buckets") or []:
            lvl = canonical_level(lb.get("key"))
            if lvl in ("error", "fatal"):
                tl["error"][k] += int(lb.get("doc_count") or 0)
            elif lvl == "warn":
                tl["warn"][k] += int(lb.get("doc_count") or 0)
    stats["timeline"] = {k: v for k, v in tl.items() if any(v)}
    latency = _latency(aggs, src, g)
    if latency:
        text = [e for e in stats.get("latency") or [] if e.get("source") == "text"]
        stats["latency"] = (latency + text)[:6]
    status = _status(aggs, g)
    if status:
        stats["status"] = status
    if src.template_field:
        stats["top_messages"] = _templates(aggs, list(stats.get("top_messages") or []))[:10]
    stats["buckets"] = {"from": format_time(g.start), "to": format_time(g.end),
                        "step_seconds": float(g.step_s), "count": g.count}  # fmt: skip
