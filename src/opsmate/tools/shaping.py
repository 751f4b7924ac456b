"""Pure shaping functions shared by the live tools and bundle replay.

Raw answers from Prometheus, Elasticsearch and Kubernetes are far too large and too
irregular to hand to a model. These functions turn them into small, stable
dictionaries: a per-series summary for metrics, counts by level and normalised
message for logs, and compact pod / event / rollout / node views for Kubernetes
(those live in :mod:`opsmate.tools.kubernetes.shaping` and are re-exported here).

Everything here is pure: no I/O, no clients, no clocks; the same input always
gives the same output, so live tools and replay agree exactly.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, tzinfo
from typing import Any

from opsmate.loganalysis.templates import ID_MASKS
from opsmate.timeparse import format_time, parse_time
from opsmate.tools.base import ToolOutput
from opsmate.tools.kubernetes.shaping import (
    event_summary,
    k8s_ref,
    matches_label_selector,
    node_summary,
    parse_label_selector,
    pod_summary,
    rollout_history,
)

__all__ = [
    "choose_step",
    "downsample_indices",
    "event_summary",
    "expand_levels",
    "get_field",
    "is_prom_data",
    "k8s_ref",
    "log_stats",
    "matches_label_selector",
    "metric_ref",
    "node_summary",
    "normalize_message",
    "normalize_promql",
    "parse_label_selector",
    "parse_terms",
    "pod_summary",
    "record_ref",
    "rollout_history",
    "summarize_prom_data",
    "summarize_series",
]

# --------------------------------------------------------------------------- metrics

_NICE_STEPS: tuple[int, ...] = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600)
_NICE_STEPS += (7200, 10800, 21600, 43200, 86400)


def choose_step(start: datetime, end: datetime, max_points: int = 120) -> int:
    """A range-query step (seconds) that keeps ``(end - start) / step`` under ``max_points``.

    The raw step is rounded *up* to a nice value (1 s, 5 s, 15 s, 1 m, 5 m, ... 1 d;
    whole days beyond), so series line up with human-readable boundaries.
    """
    if max_points < 1:
        raise ValueError("max_points must be >= 1")
    span = max((end - start).total_seconds(), 0.0)
    raw = span / max_points
    for nice in _NICE_STEPS:
        if nice >= raw:
            return nice
    return math.ceil(raw / 86400.0) * 86400


def _to_float(value: Any) -> float | None:
    """A Prometheus sample value ("0.4", "NaN", "+Inf") as a finite float, else None."""
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _ts(ts: Any, tz: tzinfo | None) -> str:
    dt = datetime.fromtimestamp(float(ts), tz=UTC)
    return format_time(dt.astimezone(tz) if tz else dt)


def _round(x: float) -> float:
    """Round to 6 significant digits so summaries stay short and stable."""
    if x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.6g}")


def downsample_indices(n: int, max_points: int, keep: Iterable[int] = ()) -> list[int]:
    """Indices of an evenly strided subset of ``n`` points (first and last kept).

    ``keep`` names indices that must survive (e.g. the minimum, maximum and the
    largest change), so a spike never disappears from the downsampled view.
    """
    if n <= max_points or max_points <= 0:
        return list(range(n))
    chosen = {0, n - 1}
    chosen.update(i for i in keep if 0 <= i < n)
    slots = max(max_points - len(chosen), 0)
    if slots:
        stride = (n - 1) / (slots + 1)
        chosen.update(round(stride * (k + 1)) for k in range(slots))
    return sorted(chosen)


def summarize_series(
    metric: Mapping[str, Any],
    values: list[list[Any]],
    *,
    tz: tzinfo | None = None,
    max_points: int | None = 30,
) -> dict[str, Any]:
    """Summarise one Prometheus series (``values`` as ``[[unix_ts, "value"], ...]``).

    Returns labels, the number of points, first / last (time and value), min, max,
    mean and the largest change between consecutive points (time of the later point,
    signed size, from -> to). Non-finite samples (NaN, Inf) are counted in
    ``non_finite`` and left out of the statistics. ``points`` holds the raw points
    (``[rfc3339, value]``), downsampled to ``max_points`` (``None``: all of them;
    ``0``: none).
    """
    labels = dict(metric)
    parsed: list[tuple[float, float]] = []
    non_finite = 0
    for pair in values:
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            continue
        v = _to_float(pair[1])
        if v is None:
            non_finite += 1
            continue
        parsed.append((float(pair[0]), v))
    out: dict[str, Any] = {"labels": labels, "points": len(parsed)}
    if non_finite:
        out["non_finite"] = non_finite
    if not parsed:
        out.update(first=None, last=None, min=None, max=None, mean=None, largest_change=None)
        out["samples"] = []
        return out
    vals = [v for _, v in parsed]
    i_min = min(range(len(vals)), key=vals.__getitem__)
    i_max = max(range(len(vals)), key=vals.__getitem__)
    out["first"] = {"time": _ts(parsed[0][0], tz), "value": _round(parsed[0][1])}
    out["last"] = {"time": _ts(parsed[-1][0], tz), "value": _round(parsed[-1][1])}
    out["min"] = {"time": _ts(parsed[i_min][0], tz), "value": _round(vals[i_min])}
    out["max"] = {"time": _ts(parsed[i_max][0], tz), "value": _round(vals[i_max])}
    out["mean"] = _round(sum(vals) / len(vals))
    i_chg: int | None = None
    if len(parsed) > 1:
        i_chg = max(range(1, len(vals)), key=lambda i: abs(vals[i] - vals[i - 1]))
        out["largest_change"] = {
            "time": _ts(parsed[i_chg][0], tz),
            "size": _round(vals[i_chg] - vals[i_chg - 1]),
            "from": _round(vals[i_chg - 1]),
            "to": _round(vals[i_chg]),
        }
    else:
        out["largest_change"] = None
    if max_points == 0:
        out["samples"] = []
    else:
        keep = [i_min, i_max] + ([i_chg - 1, i_chg] if i_chg is not None else [])
        idx = downsample_indices(len(parsed), max_points or len(parsed), keep)
        out["samples"] = [[_ts(parsed[i][0], tz), _round(parsed[i][1])] for i in idx]
        if len(idx) < len(parsed):
            out["samples_downsampled_from"] = len(parsed)
    return out


def summarize_prom_data(
    data: Mapping[str, Any],
    *,
    tz: tzinfo | None = None,
    max_points: int | None = 30,
    max_series: int | None = None,
) -> dict[str, Any]:
    """Shape the ``data`` object of a Prometheus query response for a model.

    Handles ``matrix`` (range), ``vector`` (instant: one point per series),
    ``scalar`` and ``string``. Returns ``{"result_type", "series": [summary...],
    "series_total"}``; when ``max_series`` is set and exceeded, the series with the
    largest maximum are kept and ``series_dropped`` says how many were left out.
    Raises ``ValueError`` when ``data`` is not a Prometheus data object.
    """
    rtype = data.get("resultType")
    result = data.get("result")
    series: list[dict[str, Any]] = []
    if rtype == "matrix":
        if not isinstance(result, list):
            raise ValueError("matrix result must be a list")
        for item in result:
            if not isinstance(item, Mapping) or not isinstance(item.get("values"), list):
                raise ValueError("each matrix element needs 'metric' and 'values'")
            series.append(
                summarize_series(
                    item.get("metric") or {}, item["values"], tz=tz, max_points=max_points
                )
            )
    elif rtype == "vector":
        if not isinstance(result, list):
            raise ValueError("vector result must be a list")
        for item in result:
            if not isinstance(item, Mapping) or not isinstance(item.get("value"), list):
                raise ValueError("each vector element needs 'metric' and 'value'")
            series.append(
                summarize_series(
                    item.get("metric") or {}, [item["value"]], tz=tz, max_points=max_points
                )
            )
    elif rtype in ("scalar", "string"):
        if not isinstance(result, list) or len(result) != 2:
            raise ValueError(f"{rtype} result must be [time, value]")
        if rtype == "string":
            return {
                "result_type": "string",
                "series": [],
                "series_total": 0,
                "value": {"time": _ts(result[0], tz), "value": str(result[1])},
            }
        series.append(summarize_series({}, [list(result)], tz=tz, max_points=max_points))
    else:
        raise ValueError(f"unknown resultType {rtype!r} (expected matrix, vector, scalar, string)")
    out: dict[str, Any] = {"result_type": rtype, "series_total": len(series)}
    if max_series is not None and len(series) > max_series:
        ranked = sorted(
            series,
            key=lambda s: s["max"]["value"] if s.get("max") else -math.inf,
            reverse=True,
        )
        out["series_dropped"] = len(series) - max_series
        series = ranked[:max_series]
    out["series"] = series
    return out


def is_prom_data(data: Any) -> str | None:
    """None when ``data`` is a valid Prometheus data object, else what is wrong with it."""
    if not isinstance(data, Mapping):
        return "result is not a mapping with resultType and result"
    try:
        summarize_prom_data(data, max_points=0)
    except (ValueError, TypeError) as exc:
        return str(exc)
    return None


_PROMQL_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`|\s+|[^\s"\'`]+')


def normalize_promql(query: str) -> str:
    """A PromQL expression with insignificant whitespace removed, for comparing queries.

    Whitespace inside string literals is kept; elsewhere it is dropped, except a
    single space between two word characters (``sum by (code)`` and
    ``sum by(code)`` and ``sum  by ( code )`` all compare equal).
    """
    out: list[str] = []
    pending_space = False
    for tok in _PROMQL_TOKEN.findall(query.strip()):
        if tok.isspace():
            pending_space = True
            continue
        if pending_space and out and _is_word_end(out[-1]) and _is_word_start(tok):
            out.append(" ")
        pending_space = False
        out.append(tok)
    return "".join(out)


def _is_word_end(tok: str) -> bool:
    return bool(tok) and (tok[-1].isalnum() or tok[-1] in "_:.")


def _is_word_start(tok: str) -> bool:
    return bool(tok) and (tok[0].isalnum() or tok[0] in "_:.")


def metric_ref(query: str) -> str:
    """The source reference of a PromQL query: ``metric://<12 hex of sha256>`` of the
    normalised query text, so live and replayed answers to one query share a ref."""
    digest = hashlib.sha256(normalize_promql(query).encode("utf-8")).hexdigest()[:12]
    return f"metric://{digest}"


# --------------------------------------------------------------------------- logs

_MASKS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r'"(?:[^"\\]|\\.)*"'), '"<str>"'),
    (re.compile(r"(?<![A-Za-z0-9])'(?:[^'\\]|\\.)*'"), "'<str>'"),
    *ID_MASKS,
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ns|us|µs|ms|s|sec|secs|seconds|m|min|mins|h)\b"), "<dur>"),
    (re.compile(r"(?<![A-Za-z])\d+(?:\.\d+)?(?![A-Za-z])"), "<num>"),
)
_SPACES = re.compile(r"\s+")


def normalize_message(msg: str) -> str:
    """Mask the variable parts of a log message so that similar messages group together.

    Quoted values become ``"<str>"``, UUIDs ``<uuid>``, timestamps ``<ts>``, IPv4 /
    IPv6 addresses ``<ip>``, hex and other long ids ``<id>``, durations ``<dur>``
    and remaining numbers ``<num>``; whitespace is collapsed. Letters glued to
    digits in short words (``http2``, ``v1``, ``5xx``) are kept. Only the first
    line of a multi-line message (e.g. a stack trace) is used.
    """
    first = msg.strip().splitlines()[0] if msg.strip() else ""
    out = first
    for pattern, repl in _MASKS:
        out = pattern.sub(repl, out)
    return _SPACES.sub(" ", out).strip()[:300]


def get_field(record: Mapping[str, Any], name: str) -> Any:
    """A record's field by name, falling back to a dotted path (``log.level``)."""
    if name in record:
        return record[name]
    cur: Any = record
    for part in name.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return None
        cur = cur[part]
    return cur


def log_stats(
    records: Iterable[Mapping[str, Any]],
    *,
    level_field: str = "level",
    message_field: str = "message",
    time_field: str = "@timestamp",
    top: int = 10,
    ref_of: Callable[[Mapping[str, Any]], str] | None = None,
    buckets: int = 12,
) -> dict[str, Any]:
    """Counts by level, message templates, rare errors, latency and status of ``records``.

    Each record's message is parsed (:mod:`opsmate.loganalysis.parse`: JSON-in-message,
    logfmt, text layouts, inferred levels) and mined into templates with Drain
    (:mod:`opsmate.loganalysis.templates`); :class:`opsmate.loganalysis.stats.StatsBuilder`
    builds the answer (a :class:`opsmate.records.logs.LogStats`): ``total``,
    ``by_level`` (levels as written, lower-cased; ``unknown`` when none was written),
    ``by_level_inferred``, ``distinct_messages``, ``top_messages`` and ``rare_errors``
    (``pattern``, ``count``, ``levels``, ``severity``, ``errors``, ``first_seen``,
    ``last_seen``, ``example``, ``signal`` ...), ``other_messages``, ``latency``,
    ``status`` and ``buckets`` (timelines span the records' own time range). Times are
    compared parsed, so mixed offsets order correctly; the example is the first
    record's message as written (the executor redacts it). With ``ref_of``, each group
    carries ``example_ref``.
    """
    from opsmate.loganalysis.parse import parse_record
    from opsmate.loganalysis.stats import StatsBuilder, stream_of

    rows: list[tuple[Mapping[str, Any], Any, datetime | None]] = []
    for rec in records:
        ts_raw = get_field(rec, time_field)
        ts: datetime | None = None
        if ts_raw is not None and ts_raw != "":
            try:
                ts = parse_time(ts_raw)
            except (ValueError, OverflowError, OSError):
                ts = None
        pl = parse_record(rec, message_field=message_field, level_field=level_field)
        rows.append((rec, pl, ts))
    times = [t for _, _, t in rows if t is not None]
    start, end = (min(times), max(times)) if times else (None, None)
    builder = StatsBuilder(
        start=start,
        end=end,
        buckets=buckets,
        top=top,
        ref_of=(lambda rec: ref_of(rec)) if ref_of else None,
    )
    for rec, pl, ts in rows:
        svc = rec.get("service") if isinstance(rec.get("service"), str) else None
        builder.add(pl, ts, svc, rec, stream=stream_of(rec))
    return builder.result()


_TERM = re.compile(r'(-?)"([^"]*)"|(\S+)')
_LEVEL_ALIASES = {
    "warn": ("warn", "warning"),
    "warning": ("warn", "warning"),
    "error": ("error", "err"),
    "err": ("error", "err"),
    "fatal": ("fatal", "critical", "crit", "panic"),
    "critical": ("fatal", "critical", "crit"),
    "debug": ("debug", "trace"),
}


def parse_terms(query: str | None) -> tuple[list[str], list[str]]:
    """Free-text terms → (must, must_not), lower-cased; ``"quoted phrases"`` stay whole and
    ``-word`` / ``-"phrase"`` exclude."""
    must: list[str] = []
    must_not: list[str] = []
    for neg, phrase, word in _TERM.findall(query or ""):
        if phrase or neg:
            (must_not if neg else must).append(phrase.lower())
        elif word.startswith("-") and len(word) > 1 and word[1].isalpha():
            must_not.append(word[1:].lower())
        else:
            must.append(word.strip('"').lower())
    return [t for t in must if t], [t for t in must_not if t]


def expand_levels(level: str | None) -> set[str] | None:
    """Level names a ``level`` filter matches: aliases (``warn``/``warning``, ``error``/``err``,
    ``fatal``/``critical``) and comma-separated lists; None for no filter."""
    if not level:
        return None
    out: set[str] = set()
    for part in level.lower().split(","):
        part = part.strip()
        if part:
            out.update(_LEVEL_ALIASES.get(part, (part,)))
    return out or None


def record_ref(service: str | None, record_id: str | int) -> str:
    """The source reference of one log record: ``log://<service>/<id>``."""
    svc = (service or "unknown").strip() or "unknown"
    return f"log://{svc}/{record_id}"


def alerts_output(
    alerts: list[dict[str, Any]], state: str | None, scope: dict[str, Any]
) -> ToolOutput:
    """The ``list_alerts`` answer, live or replayed: filtered by ``state``, firing first,
    each alert's ``_ref`` moved into ``source_refs``."""
    if state:
        alerts = [a for a in alerts if a["state"] == state]
    alerts.sort(key=lambda a: (a["state"] != "firing", a.get("active_at") or "", a["name"]))
    refs = sorted({a.pop("_ref") for a in alerts})
    return ToolOutput(
        status="success" if alerts else "no_data",
        data={"alerts": alerts, "count": len(alerts)},
        scope=scope,
        source_refs=refs,
    )
