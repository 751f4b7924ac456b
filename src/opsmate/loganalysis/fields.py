"""Structured log fields: levels, the site's field names, and reading JSON / logfmt objects.

:class:`LogFieldNames` holds the field names looked up in structured lines (built-in
defaults plus the ``logs`` section of the config, see :func:`configure`); for each set of
keys a line has, the place of every kind of field is found once and cached (a bundle of
150,000 JSON lines written by a few log statements has a few key sets). :class:`ParsedLine`
is what :mod:`opsmate.loganalysis.parse` makes of a line; this module fills its structured
part: level, message, error, logger, status, duration (with its unit), endpoint, trace id,
service, dependency host, numeric gauges.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "LEVEL_RANK",
    "LogFieldNames",
    "ParsedLine",
    "canonical_level",
    "configure",
    "default_fields",
    "duration_unit_ms",
    "endpoint_key",
    "is_error_level",
]

# --------------------------------------------------------------------------- levels

_LEVEL_NAMES = {
    "trace": "debug", "debug": "debug", "dbg": "debug", "verbose": "debug", "fine": "debug",
    "info": "info", "information": "info", "informational": "info", "notice": "info",
    "inf": "info", "i": "info",
    "warn": "warn", "warning": "warn", "wrn": "warn", "w": "warn",
    "error": "error", "err": "error", "eror": "error", "severe": "error", "e": "error",
    "fatal": "fatal", "critical": "fatal", "crit": "fatal", "panic": "fatal", "dpanic": "fatal",
    "emerg": "fatal", "emergency": "fatal", "alert": "fatal", "f": "fatal",
    "trc": "debug", "ftl": "fatal", "pnc": "fatal",  # zerolog's console writer
}  # fmt: skip
# bunyan / pino numeric levels; syslog severities 0-7
_NUMERIC_LEVELS = {10: "debug", 20: "debug", 30: "info", 40: "warn", 50: "error", 60: "fatal"}
_SYSLOG = ["fatal", "fatal", "fatal", "error", "warn", "info", "info", "debug"]

LEVEL_RANK = {"debug": 10, "info": 20, "warn": 30, "error": 40, "fatal": 50}
"""Severity order of the canonical levels."""


def canonical_level(value: Any) -> str | None:
    """``WARNING`` → ``warn``, ``critical`` → ``fatal``, ``50`` → ``error``; None when unknown."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        n = int(value)
        if n in _NUMERIC_LEVELS:
            return _NUMERIC_LEVELS[n]
        return _SYSLOG[n] if 0 <= n < len(_SYSLOG) else None
    text = str(value).strip().lower()
    if text.isdigit():
        return canonical_level(int(text))
    return _LEVEL_NAMES.get(text)


def is_error_level(level: str | None) -> bool:
    """Whether a canonical level is error or fatal."""
    return level in ("error", "fatal")


# --------------------------------------------------------------------------- field names


def _tup(*names: str) -> tuple[str, ...]:
    return names


@dataclass(frozen=True)
class LogFieldNames:
    """Field names read from structured records (JSON, logfmt, flat documents).

    Each tuple is searched in order; dotted names (``log.level``) also match nested
    objects. ``duration_units`` maps a duration field to its unit (``ms``, ``s``, ``us``,
    ``ns``); other duration fields take the unit from their name's suffix (``_ms``,
    ``_seconds`` ...) or, for a bare number, milliseconds.
    """

    level: tuple[str, ...] = _tup(
        # CloudNativePG wraps each PostgreSQL record: {"level": "info", "msg": "record",
        # "record": {"error_severity": "ERROR", "message": ...}}; the record's own first
        "record.error_severity",
        "level", "severity", "lvl", "log.level", "loglevel", "log_level", "levelname",
        "@l", "severity_text", "severityText", "SeverityText", "Level", "Severity",
    )  # fmt: skip
    message: tuple[str, ...] = _tup(
        "message",
        "record.message",
        "msg",
        "event",
        "@m",
        "log",
        "text",
        "Message",
        "MESSAGE",
        "body",
        "@mt",
    )
    error: tuple[str, ...] = _tup(
        "error", "err", "error.message", "exception", "exc_info", "error_message",
        # logrus-style fields of Go services (the Distribution registry): the detail first
        "err.detail", "err.message", "error.detail",
        "errorMessage", "stack_trace", "stacktrace", "stack", "@x", "error.stack_trace",
        # structured logs that put the detail under an attributes object (MongoDB's attr)
        "attr.message", "attr.error.errmsg", "attr.errmsg", "attr.reason", "attributes.error",
        # lager (Cloud Foundry, Concourse) and other loggers that nest a record's context
        # under one object: {"message": "atc.db.failed-to-open", "data": {"error": ...}}
        "data.error", "data.err", "fields.error", "context.error", "ctx.error",
    )  # fmt: skip
    logger: tuple[str, ...] = _tup("logger", "logger_name", "loggerName", "log.logger", "caller")
    status: tuple[str, ...] = _tup(
        "status", "status_code", "statusCode", "http_status", "http.status_code",
        "http.response.status_code", "http.response.status", "response_status", "response_code",
        "outcome",
    )  # fmt: skip
    duration: tuple[str, ...] = _tup(
        "response_time_ms", "duration_ms", "latency_ms", "elapsed_ms", "took_ms",
        "request_time_ms", "processing_time_ms", "time_ms", "response_time", "responseTime",
        "duration", "latency", "elapsed", "took", "request_time", "upstream_response_time",
        "event.duration", "http.duration",
    )  # fmt: skip
    duration_units: tuple[tuple[str, str], ...] = (
        ("request_time", "s"),
        ("upstream_response_time", "s"),
        ("event.duration", "ns"),
    )
    endpoint: tuple[str, ...] = _tup(
        "endpoint", "path", "route", "http.route", "url.path", "uri", "request_uri", "url",
        "http.target", "http.url", "request_path", "request",
    )  # fmt: skip
    method: tuple[str, ...] = _tup(
        "method", "http_method", "http.method", "http.request.method", "request_method", "verb"
    )
    trace: tuple[str, ...] = _tup(
        "trace_id", "traceId", "trace.id", "traceID", "request_id", "requestId", "req_id",
        "correlation_id", "span_id",
    )  # fmt: skip
    # not "component": go-kit programs (Prometheus, Loki, Thanos) name an internal subsystem
    # with it (component=remote, component=tsdb), not the service that wrote the line
    service: tuple[str, ...] = _tup("service", "service.name", "service_name", "app", "application")
    host: tuple[str, ...] = _tup(
        "upstream", "dependency", "peer.service", "peer", "target_host", "remote_host",
        "db.host", "server.address", "net.peer.name", "host", "target",
    )  # fmt: skip
    time: tuple[str, ...] = _tup("timestamp", "time", "ts", "@timestamp", "@t", "datetime", "date")

    def with_extra(
        self, extra: Mapping[str, Iterable[str]], units: Mapping[str, str]
    ) -> LogFieldNames:
        """These names with site-specific ones put first (``{"level": ["sev"], ...}``)."""
        changes: dict[str, Any] = {}
        for key, names in extra.items():
            if not hasattr(self, key) or key == "duration_units":
                raise ValueError(f"unknown log field kind {key!r}")
            extra_names = tuple(str(n) for n in names)
            if extra_names:
                current = getattr(self, key)
                changes[key] = extra_names + tuple(n for n in current if n not in extra_names)
        if units:
            merged = dict(self.duration_units)
            merged.update({str(k): str(v) for k, v in units.items()})
            changes["duration_units"] = tuple(merged.items())
            dur = changes.get("duration", self.duration)
            changes["duration"] = tuple(k for k in units if k not in dur) + dur
        return LogFieldNames(**{**self.__dict__, **changes})


_DEFAULT = LogFieldNames()
_current = _DEFAULT


def default_fields() -> LogFieldNames:
    """The field names in use (built-in, or as set by :func:`configure`)."""
    return _current


def configure(cfg: Any | None) -> LogFieldNames:
    """Use the ``logs`` section of the config (:class:`opsmate.config.LogsConfig`) from now
    on; ``None`` restores the built-in names. Returns the names in use."""
    global _current
    if cfg is None:
        _current = _DEFAULT
        return _current
    extra = {
        kind: list(getattr(cfg, f"{kind}_fields", None) or [])
        for kind in ("level", "message", "error", "logger", "status", "duration", "endpoint",
                     "method", "trace", "service", "host", "time")
    }  # fmt: skip
    units = dict(getattr(cfg, "duration_units", None) or {})
    _current = _DEFAULT.with_extra(extra, units)
    _NAME_CACHE.clear()
    _UNITS_CACHE.clear()
    return _current


# --------------------------------------------------------------------------- the parsed line


@dataclass(slots=True)
class ParsedLine:
    """One log line understood.

    ``level`` is canonical (debug / info / warn / error / fatal) or None; ``level_raw``
    the level as written (lower-cased) when there was one; ``inferred`` says the level
    was read from the content. ``kind`` is the line's shape: ``json``, ``logfmt``,
    ``access``, ``text``, ``traceback`` (a Python traceback header), ``frame`` (a stack
    frame or other continuation line), ``exception``, ``panic`` or ``exit``.
    """

    raw: str
    message: str
    level: str | None = None
    level_raw: str | None = None
    inferred: bool = False
    kind: str = "text"
    fields: dict[str, Any] = field(default_factory=dict)  # logfmt pairs
    error: str | None = None
    logger: str | None = None
    status: str | None = None  # HTTP status code ("503") or an outcome word ("timeout")
    duration_ms: float | None = None
    duration_field: str | None = None  # the field (or "text") the duration came from
    endpoint: str | None = None  # "GET /api/orders/{id}" (ids in the path masked)
    trace_id: str | None = None
    service: str | None = None  # the emitter named in the line (JSON "service" ...)
    host: str | None = None  # a dependency named by a field
    exit_code: int | None = None
    time_text: str | None = None  # a timestamp written in the line
    gauges: tuple[tuple[str, float, float | None], ...] | None = None  # (field, value, limit)
    context: str | None = None  # distinctive fields of the record beside a short message
    flagged: bool = False  # the record's own fields say it failed (``"error": true``)

    @property
    def is_error(self) -> bool:
        return self.level in ("error", "fatal")

    def http_status(self) -> int | None:
        """The status as an HTTP code (100-599), else None."""
        s = self.status
        if s and len(s) == 3 and s.isdigit() and "1" <= s[0] <= "5":
            return int(s)
        return None


_PATH_ID = re.compile(
    r"(?<=/)(?:\d+|[0-9a-fA-F]{8}-[0-9a-fA-F-]{27,}|[0-9a-fA-F]{16,}|[A-Za-z]+[-_]\d[\w-]*)(?=/|$)"
)


# --------------------------------------------------------------------------- structured

_KINDS = ("level", "message", "error", "logger", "status", "endpoint", "method", "trace",
          "service", "host", "time")  # fmt: skip
# a key; a dotted path's parts; or, where nested content decides (the plan is cached per
# top-level key set, and ``attr`` holds ``reason`` in one record, ``message`` in the next),
# the alternatives to try in order
_Path = str | tuple[str, ...] | tuple[tuple[str, ...] | str, ...]
_Gauge = tuple[str, str | None]  # a gauge field and the field holding its limit
# where each of _KINDS is (None: absent), the duration field, its unit in ms, the gauges
_Plan = tuple[tuple[_Path | None, ...], str | None, float | None, tuple[_Gauge, ...]]
_GAUGE_NAME = re.compile(
    r"(?i)(?:^|_|\.)(?:mem(?:ory)?|heap|rss|usage|used|percent(?:age)?|utili[sz]ation|"
    r"queue|backlog|lag|connections|conns|pool|threads|goroutines|open_files|fds|inflight|"
    r"in_flight|pending|cpu|disk)(?:_|\.|$)"
)
_LIMIT_NAME = re.compile(r"(?i)limit|max|capacity|total|size")
_NAME_CACHE: dict[tuple[int, tuple[str, ...]], _Plan] = {}


def _plan(obj: Mapping[str, Any], names: LogFieldNames) -> _Plan:
    """Where each kind of field is in objects with these keys (cached per key set):
    kind -> the key (or dotted path) to read, and the duration field."""
    key = (id(names), tuple(obj))
    hit = _NAME_CACHE.get(key)
    if hit is not None:
        return hit
    found: dict[str, _Path] = {}
    for kind in _KINDS:
        alts: list[tuple[str, ...] | str] = []
        for name in getattr(names, kind):
            if name in obj:
                alts.append(name)
                break
            if "." in name:
                parts = tuple(name.split("."))
                if parts[0] in obj and isinstance(obj[parts[0]], Mapping):
                    alts.append(parts)
        if len(alts) == 1:
            found[kind] = alts[0]
        elif alts:
            found[kind] = tuple(alts)
    duration = next((n for n in names.duration if n in obj), None)
    if duration is None:
        duration = next((k for k in obj if _SUFFIX_UNIT.search(k) and _DUR_NAME.search(k)), None)
    mult = None
    if duration is not None:
        unit = _units(names).get(duration)
        if unit is None:
            m = _SUFFIX_UNIT.search(duration)
            unit = m.group(1).lower() if m else "ms"
        mult = _UNIT_MS.get(unit, 1.0)
    gauges: list[_Gauge] = []
    for k, v in obj.items():
        if (
            type(v) in (int, float)
            and k != duration
            and _GAUGE_NAME.search(k)
            and not _LIMIT_NAME.search(k)
            and not _DUR_NAME.search(k)
        ):
            unit = k.rsplit("_", 1)[-1] if "_" in k else ""
            limit = next(
                (
                    x
                    for x in obj
                    if x != k and _LIMIT_NAME.search(x) and (not unit or x.endswith(unit))
                    and type(obj[x]) in (int, float)
                ),
                None,
            )  # fmt: skip
            gauges.append((k, limit))
    plan = (tuple(found.get(kind) for kind in _KINDS), duration, mult, tuple(gauges[:4]))
    if len(_NAME_CACHE) > 4096:
        _NAME_CACHE.clear()
    _NAME_CACHE[key] = plan
    return plan


def _at(obj: Mapping[str, Any], path: _Path | None) -> Any:
    if path is None:
        return None
    if type(path) is tuple and path and type(path[0]) is not str:
        for alt in path:  # alternatives, in the order of the configured names
            v = _at(obj, alt)
            if v is not None:
                return v
        return None
    if type(path) is str:
        v = obj.get(path)
    else:
        v = obj
        for part in path:
            v = v.get(part) if isinstance(v, Mapping) else None
            if v is None:
                return None
    return None if v == "" else v


def _get(obj: Mapping[str, Any], names: tuple[str, ...]) -> tuple[str | None, Any]:
    """The first of ``names`` present (dotted names also walk nested objects)."""
    for name in names:
        v = _at(obj, name if name in obj or "." not in name else tuple(name.split(".")))
        if v is not None:
            return name, v
    return None, None


_UNIT_MS = {
    "ms": 1.0, "msec": 1.0, "millis": 1.0, "millisecond": 1.0, "milliseconds": 1.0,
    "s": 1000.0, "sec": 1000.0, "secs": 1000.0, "second": 1000.0, "seconds": 1000.0,
    "us": 0.001, "µs": 0.001, "microsecond": 0.001, "microseconds": 0.001,
    "ns": 0.000001, "nanos": 0.000001,
    "m": 60000.0, "min": 60000.0, "mins": 60000.0, "minute": 60000.0, "minutes": 60000.0,
}  # fmt: skip
_SUFFIX_UNIT = re.compile(
    r"(?:_|(?<=[a-z])(?=[A-Z]))(ms|Ms|millis|Millis|us|ns|s|sec|secs|seconds|Seconds)$"
)
_DUR_NAME = re.compile(r"(?i)(?:time|duration|latency|elapsed|took|pause|wait)")
_DUR_TEXT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|us|µs|ns|m|min)?\s*$")


def _duration_ms(name: str, value: Any, units: Mapping[str, str]) -> float | None:
    unit = units.get(name)
    if unit is None:
        m = _SUFFIX_UNIT.search(name)
        unit = m.group(1).lower() if m else None
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        mt = _DUR_TEXT.match(value)
        if not mt:
            return None
        number = float(mt.group(1))
        unit = mt.group(2) or unit
    else:
        return None
    if number < 0 or number != number or number > 1e12:
        return None
    return number * _UNIT_MS.get(unit or "ms", 1.0)


def duration_unit_ms(name: str, names: LogFieldNames | None = None) -> float:
    """Milliseconds per unit of the duration field ``name`` (its configured unit, else the
    suffix of its name, else milliseconds)."""
    unit = _units(names or _current).get(name)
    if unit is None:
        m = _SUFFIX_UNIT.search(name)
        unit = m.group(1).lower() if m else "ms"
    return _UNIT_MS.get(unit, 1.0)


_ENDPOINTS: dict[tuple[Any, str], str | None] = {}


def endpoint_key(method: Any, path: Any) -> str | None:
    """``GET /api/users/{id}``: the path without query, numeric / hex / uuid segments masked."""
    if not isinstance(path, str) or not path:
        return None
    key = (method if isinstance(method, str) else None, path)
    hit = _ENDPOINTS.get(key, False)
    if hit is not False:
        return hit  # type: ignore[return-value]
    if len(_ENDPOINTS) > 20_000:
        _ENDPOINTS.clear()
    out = _ENDPOINTS[key] = _endpoint_key(key[0], path)
    return out


def _endpoint_key(method: str | None, path: str) -> str | None:
    p = path.strip()
    if p.count(" ") >= 2 and "HTTP/" in p:  # nginx "request": "GET /x HTTP/1.1"
        parts = p.split(" ")
        method, p = method or parts[0], parts[1]
    if "://" in p:
        p = "/" + p.split("://", 1)[1].partition("/")[2]
    p = p.split("?", 1)[0].split("#", 1)[0][:120]
    p = _PATH_ID.sub("{id}", p)
    return f"{str(method).upper()} {p}" if isinstance(method, str) and method else p


_LEVEL_CACHE: dict[Any, tuple[str | None, str]] = {}


def _level_of(value: Any) -> tuple[str | None, str]:
    """(canonical, as written lower-cased) for a level value, cached."""
    try:
        hit = _LEVEL_CACHE.get(value)
    except TypeError:
        return canonical_level(value), str(value).lower()
    if hit is None:
        if len(_LEVEL_CACHE) > 1024:
            _LEVEL_CACHE.clear()
        hit = _LEVEL_CACHE[value] = (canonical_level(value), str(value).strip().lower())
    return hit


# isinstance with a tuple: ``str | int`` would build a union object on every call
_SCALARS = (str, int, float)
_COLLECTIONS = (dict, list)


def _failed_flag(obj: Mapping[str, Any]) -> bool:
    """An explicit failure flag in a structured record: ``error``/``failed`` true, or
    ``success``/``ok`` false."""
    return (
        obj.get("error") is True
        or obj.get("failed") is True
        or obj.get("success") is False
        or obj.get("ok") is False
    )


def _apply_fields(pl: ParsedLine, obj: Mapping[str, Any], names: LogFieldNames, top: bool) -> None:
    """Fill ``pl`` from a structured object (a JSON line or logfmt pairs); ``top``: the
    object is a stored record beside its message (its level, message, service and time
    are the record's own, read elsewhere).

    A value that is absent, empty or a boolean says nothing. Each kind of field is read
    straight, not in a loop over kinds: this runs once per JSON line of a bundle."""
    slots, duration, mult, gauges = _plan(obj, names)
    if gauges:
        vals = []
        for gname, lname in gauges:
            gv = obj.get(gname)
            if type(gv) is int or type(gv) is float:
                lv = obj.get(lname) if lname else None
                limit = float(lv) if type(lv) is int or type(lv) is float else None
                vals.append((gname, float(gv), limit))
        pl.gauges = tuple(vals) or None
    (w_level, w_message, w_error, w_logger, w_status, w_endpoint, w_method, w_trace, w_service,
     w_host, w_time) = slots  # fmt: skip
    v: Any
    if not top:
        if (w := w_level) is not None:
            v = obj.get(w) if type(w) is str else _at(obj, w)
            if v is not None and v != "" and v is not True and v is not False:
                lvl, raw = _level_of(v)
                if lvl is not None:
                    pl.level, pl.level_raw, pl.inferred = lvl, raw, False
        if (w := w_message) is not None:
            v = obj.get(w) if type(w) is str else _at(obj, w)
            if type(v) is str and v:
                pl.message = v
        if (w := w_service) is not None:
            v = obj.get(w) if type(w) is str else _at(obj, w)
            if type(v) is str and v:
                pl.service = v
        if (w := w_time) is not None:
            v = obj.get(w) if type(w) is str else _at(obj, w)
            if (
                v is not None
                and v != ""
                and v is not True
                and v is not False
                and (isinstance(v, _SCALARS))
            ):
                pl.time_text = str(v)
    if (w := w_error) is not None:
        v = obj.get(w) if type(w) is str else _at(obj, w)
        if v is not None and v != "" and v is not True and v is not False:
            pl.error = (v if type(v) is str else json.dumps(v, default=str))[:2000]
    if _failed_flag(obj):
        # the record says itself that it failed ({"error": true, "error_message": "..."},
        # {"success": false, ...}): its error text is the failure, whatever level it was
        # written at (a job's JSON report logged at INFO)
        if pl.error is None:
            for name in names.error:
                v = obj.get(name)
                if type(v) is str and v.strip():
                    pl.error = v[:2000]
                    break
        if pl.error is not None:
            pl.flagged = True
            if pl.level in (None, "debug", "info"):
                pl.level, pl.inferred = "error", True
    if (w := w_logger) is not None:
        v = obj.get(w) if type(w) is str else _at(obj, w)
        if type(v) is str and v:
            pl.logger = v
    if (w := w_status) is not None:
        v = obj.get(w) if type(w) is str else _at(obj, w)
        if (
            v is not None
            and v != ""
            and v is not True
            and v is not False
            and (not isinstance(v, _COLLECTIONS))
        ):
            text = v.strip().lower() if type(v) is str else str(v)
            if text and len(text) <= 24:
                pl.status = text[:-2] if text.endswith(".0") else text
    if (w := w_trace) is not None:
        v = obj.get(w) if type(w) is str else _at(obj, w)
        if (type(v) is str and v) or type(v) is int:
            pl.trace_id = str(v)
    if (w := w_host) is not None:
        v = obj.get(w) if type(w) is str else _at(obj, w)
        if type(v) is str and v and " " not in v:
            pl.host = v
    if (w := w_endpoint) is not None:
        path = obj.get(w) if type(w) is str else _at(obj, w)
        if type(path) is str and (path.startswith("/") or "://" in path or " /" in path):
            method: Any = None
            if (w := w_method) is not None:
                method = obj.get(w) if type(w) is str else _at(obj, w)
                if method is None or method == "" or method is True or method is False:
                    method = None
            pl.endpoint = endpoint_key(method, path)
    if duration is not None:
        dv = obj.get(duration)
        if type(dv) is int or type(dv) is float:
            if 0 <= dv <= 1e12:
                pl.duration_ms, pl.duration_field = dv * mult, duration  # type: ignore[operator]
        else:
            d = _duration_ms(duration, dv, _units(names))
            if d is not None:
                pl.duration_ms, pl.duration_field = d, duration


_UNITS_CACHE: dict[int, dict[str, str]] = {}


def _units(names: LogFieldNames) -> dict[str, str]:
    units = _UNITS_CACHE.get(id(names))
    if units is None:
        units = _UNITS_CACHE[id(names)] = dict(names.duration_units)
    return units


_SKIP_KEYS = frozenset(
    {"@timestamp", "message", "service", "environment", "level", "pod", "namespace",
     "container", "job", "id", "_id", "ref", "host", "labels", "kubernetes", "stream"}
)  # fmt: skip


_EXTRA: dict[tuple[str, ...], bool] = {}


def _has_extra(rec: Mapping[str, Any]) -> bool:
    """Whether a record has fields beyond the usual ones (cached per key set)."""
    keys = tuple(rec)
    hit = _EXTRA.get(keys)
    if hit is None:
        if len(_EXTRA) > 4096:
            _EXTRA.clear()
        hit = _EXTRA[keys] = any(k not in _SKIP_KEYS for k in keys)
    return hit


_ID_LIKE = re.compile(r"^(?=.*\d)[0-9a-f-]{8,}$|^[0-9a-f]{16,}$", re.I)
_CONTEXT_SKIP = frozenset(
    {"rid", "request_id", "trace_id", "traceid", "span_id", "spanid", "user_id", "session_id",
     "thread", "timestamp", "time", "ts", "msg", "logger", "caller", "file", "line", "func",
     # what search_logs adds to an item from parsing it (not the record's own fields)
     "kind", "text", "level_inferred", "ref", "error", "duration_ms", "endpoint"}
)  # fmt: skip


def context_of(extra: Mapping[str, Any], limit: int = 3) -> str | None:
    """``key=value`` of a record's distinctive string fields (what a short message like "slow
    query" is about: ``query=orders_export``), ids and bookkeeping fields left out."""
    out: list[str] = []
    for k, v in extra.items():
        if len(out) >= limit:
            break
        if not isinstance(v, str) or not v or len(v) > 60 or k.lower() in _CONTEXT_SKIP:
            continue
        if _ID_LIKE.match(v) or "\n" in v:
            continue
        out.append(f"{k}={v}")
    return ", ".join(out) or None
