"""What a log line is: its level, message, fields, durations, status and shape.

Applications write logs in many shapes, and a record's ``message`` is often a whole line
of another format. :func:`parse_line` reads one line (and :func:`parse_record` one
stored record) into a :class:`ParsedLine`:

- **JSON** in the message (``{"level": "ERROR", "message": ..., "path": ...}``) is
  parsed into fields: level, message, error, logger, HTTP status, durations, endpoint,
  method, trace / request ids, the emitting service and a dependency host;
- **logfmt** (``time=... level=error msg="..." duration=35ms``);
- **text layouts**: ``[ERROR]``, ``ERROR:``, ``INFO:logger:``, `` - ERROR - ``,
  ``|WARN|``, ``<ERROR>``, a level after a leading timestamp, klog (``E1120 11:55:03...``),
  lower-case ``error:`` / ``fatal:`` at the start;
- **access lines** (uvicorn, gunicorn, werkzeug, nginx / Apache combined, and
  ``"GET /x HTTP/1.1" 200 45ms``): method, endpoint, status and a duration when given;
- **stack shapes**: Python ``Traceback`` headers and ``File ...`` frames, Java / Go frames
  (``\tat ...``, ``goroutine N [...]``), exception lines (``FooError: ...``,
  ``Caused by: ...``), Go ``panic:``, ``exit status N``.

A line with no written level gets one inferred from its content (``could not resolve``,
``connection refused``, ``is undefined`` ... → error), flagged ``inferred``; a written
level always wins. The original line is kept in ``raw`` for quoting.

Field names differ between sites: :class:`~opsmate.loganalysis.fields.LogFieldNames` holds
the names looked up (built-in defaults plus the ``logs`` section of the config, see
:func:`configure`); reading JSON / logfmt objects lives in :mod:`opsmate.loganalysis.fields`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from opsmate.loganalysis.fields import (
    _SKIP_KEYS,
    _UNIT_MS,
    LEVEL_RANK,
    LogFieldNames,
    ParsedLine,
    _apply_fields,
    _get,
    _has_extra,
    _level_of,
    canonical_level,
    configure,
    context_of,
    default_fields,
    duration_unit_ms,
    endpoint_key,
    is_error_level,
)

try:  # orjson parses JSON-in-message several times faster; json is the fallback
    import orjson

    _loads: Any = orjson.loads
    _JSON_ERRORS: tuple[type[Exception], ...] = (orjson.JSONDecodeError, ValueError, TypeError)
except ImportError:  # pragma: no cover - orjson ships with the project's dependencies
    _loads = json.loads
    _JSON_ERRORS = (ValueError, TypeError)

__all__ = [
    "LEVEL_RANK",
    "NEEDS_PARSE",
    "LogFieldNames",
    "ParsedLine",
    "canonical_level",
    "configure",
    "default_fields",
    "duration_unit_ms",
    "endpoint_key",
    "infer_level",
    "is_error_level",
    "line_names_no_service",
    "parse_line",
    "parse_record",
    "parsed_extras",
    "record_level",
    "strip_timestamp",
]

# --------------------------------------------------------------------------- regexes

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_UPPER = r"TRACE|DEBUG|INFO|NOTICE|WARN(?:ING)?|ERROR|ERR|CRITICAL|CRIT|FATAL|PANIC|SEVERE|EMERG"
_MARKER = re.compile(
    r"^(?P<pre>.{0,72}?)(?:"
    rf"[\[(](?P<b>(?i:{_UPPER}))[\])]:?"  # [ERROR] (Error)
    rf"|(?P<c>{_UPPER}):(?:(?P<logger>[A-Za-z_][\w.\-]*):(?!\d))?"  # ERROR: / INFO:app:
    rf"|\s-\s(?P<d>(?i:{_UPPER}))\s-\s?"  # - ERROR -
    rf"|\|\s?(?P<e>(?i:{_UPPER}))\s?\|"  # |WARN|
    rf"|<(?P<f>(?i:{_UPPER}))>"  # <ERROR>
    rf"|(?<![\w.\-])(?P<g>{_UPPER})(?=\s)"  # ERROR after a timestamp
    r")"
)
# PostgreSQL's own severities below WARNING, after its "[pid]" prefix (log_line_prefix)
_PG_INFO = re.compile(
    r"^.{0,72}?\[\d+\](?:-\d+)?:?\s+(?:\S+@\S+\s+)?(?P<l>LOG|DETAIL|HINT|STATEMENT|CONTEXT):\s"
)
_LEVEL_HINT = re.compile(r"(?i)trac|debu|info|noti|warn|err|crit|fata|pani|seve|emer")


def _level_hint(text: str) -> bool:
    """Whether the first 100 characters of ``text`` hold a level word's start
    (:data:`_LEVEL_HINT`); ASCII text is checked with substring tests, several times
    faster than the case-insensitive regex and the same answer."""
    head = text[:100]
    if not head.isascii():  # Unicode case folding ("ſ", "ı", "K"): the regex decides
        return _LEVEL_HINT.search(head) is not None
    low = head.lower()
    return (
        "err" in low or "info" in low or "warn" in low or "debu" in low or "trac" in low
        or "noti" in low or "crit" in low or "fata" in low or "pani" in low
        or "seve" in low or "emer" in low
    )  # fmt: skip


_LOWER_START = re.compile(
    r"^(?P<l>[Ee]rror|[Ff]atal|[Ww]arning|[Ww]arn|[Pp]anic|[Cc]ritical)(?:\[\d+\])?:\s"
)
_TS_PREFIX = re.compile(
    r"^\s*\[?(?:\d{4}([-/.])\d{2}\1\d{2}[T ]\d{2}:\d{2}(?::\d{2})?(?:[.,]\d+)?"
    r"(?:Z|[+-]\d{2}:?\d{2})?(?:\.\d+Z?)?"
    r"|\d{2}/[A-Z][a-z]{2}/\d{4}[: ]\d{2}:\d{2}:\d{2}(?: [+-]\d{4})?"
    r"|(?:[A-Z][a-z]{2} )?[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2}(?: [A-Z]{2,5})?(?: \d{4})?"
    r"|\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)\]?"
)
_CLOCK = re.compile(r"\d{1,2}:\d{2}(?::\d{2})?(?:AM|PM)?")  # zerolog's default "3:04PM"
_PRE_OK = re.compile(r"^[\s\d:\-T.,+Z/\[\]()A-Za-z]*$")
# zerolog's console writer: "2025-04-22T02:33:10Z FTL cmd/geo/db.go:52 > message"
_ZEROLOG = re.compile(
    r"^(?P<ts>\S+) (?P<l>TRC|DBG|INF|WRN|ERR|FTL|PNC) (?:(?P<src>[\w./\-]+:\d+) > )?"
)
# Envoy / Istio access logs: the response flags after the status say why a request failed
# (a gRPC call answered "200" with "UH no_healthy_upstream" never reached its upstream)
_ENVOY_FLAGS = re.compile(r"^\s+(?P<f>[A-Z]{2,5}(?:,[A-Z]{2,5})*)\s+(?P<detail>[\w\-{}.:]+)")
_ENVOY_FLAG_TEXT = {
    "UH": "no healthy upstream", "UF": "upstream connection failure",
    "UO": "upstream overflow (circuit breaker)", "NR": "no route configured",
    "URX": "upstream retry limit exceeded", "NC": "upstream cluster not found",
    "UT": "upstream request timeout", "LR": "connection locally reset",
    "UR": "upstream remote reset", "UC": "upstream connection termination",
    "LH": "local service failed health check", "FI": "fault injected (abort)",
    "DI": "fault injected (delay)", "RL": "rate limited", "UAEX": "unauthorized external service",
    "RLSE": "rate limit service error", "SI": "stream idle timeout",
    "UPE": "upstream protocol error", "UMSDR": "upstream max stream duration reached",
    "OM": "overload manager", "DF": "DNS resolution failed", "DT": "request duration timeout",
}  # fmt: skip
_ENVOY_NOT_FAILURES = {"DC", "DI", "DPE", "IH"}  # the client's doing, or a delay only
_ENVOY_UPSTREAM = re.compile(r"\boutbound\|\d+\|[^|\s]*\|(?P<h>[a-z0-9][a-z0-9\-]*)")
_KLOG = re.compile(r"^(?P<k>[IWEF])\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+\s+(?P<src>[\w.\-]+:\d+)\]\s?")
_LOGFMT_PAIR = re.compile(r'([A-Za-z_][\w.\-/@]*)=("(?:[^"\\]|\\.)*"|\S*)')
_LOGFMT_START = re.compile(r"^\s*[A-Za-z_][\w.\-/@]*=")
_ACCESS = re.compile(
    r'"(?P<method>[A-Z]{3,7}) (?P<path>\S+) HTTP/[\d.]+"\s+(?P<status>[1-5]\d\d)\b(?P<after>.*)$'
)
_ACCESS_DUR = re.compile(
    r"(?:^|[\s,;])(?:(?:rt|request_time|upstream_response_time|duration|took|elapsed|time)[=:]\s*)?"
    r"(?P<n>\d+(?:\.\d+)?)\s?(?P<u>ms|s|us|µs)\b"
)
_ACCESS_RT = re.compile(r"\b(?:rt|request_time|upstream_response_time)=(?P<n>\d+(?:\.\d+)?)\b")
_TEXT_DUR = re.compile(
    r"\b(?:in|took|elapsed|duration|latency|time|after)\b[:=]?\s*(?P<n>\d+(?:\.\d+)?)\s?"
    r"(?P<u>ms|milliseconds?|msec|s|secs?|seconds?|us|µs|microseconds?|ns|m|mins?|minutes?)\b",
    re.I,
)
_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):")
_CONTINUATION = re.compile(r"^(?: {4,}|\t)\S")  # an indented line continues the one before
_NOISE_PREFIX = re.compile(r"^[\s\d:%.\-|/#=>*]{10,}?(?=[A-Za-z][\w\-]*[:(\s])")
_FRAME = re.compile(
    r"^(?:\s+File \".*\", line \d+|\s+at [\w$<>/\-]+(?:\.[\w$<>/\-]+)+\(|\tat |\s*\.\.\. \d+ more"
    r"|goroutine \d+ \[|\s+\S+\.go:\d+|\s+\^+\s*$|created by |\s*main\.\w+\()"
)
_EXCEPTION = re.compile(
    r"^(?:Caused by: |Exception in thread \"[^\"]*\" )?"
    r"(?P<cls>(?:[a-zA-Z_$][\w$]*\.)*[A-Z][\w$]*(?:Error|Exception|Exit|Interrupt|Fault|Failure|Throwable))"
    r"(?::\s?(?P<msg>.*))?$"
)
_PANIC = re.compile(r"^(?:panic|fatal error): ")
_EXIT = re.compile(
    r"\b(?:exit(?:ed)?(?: with)? (?:status|code)|exit code)[ :=]*(?P<code>-?\d+)\b", re.I
)


# --------------------------------------------------------------------------- inference

_ERROR_WORDS = re.compile(
    r"\b(?:error|errors|exception|fail(?:ed|ure|ures|ing|s)?|refused|timed[ -]?out|timeout|"
    r"unable to|could ?not|couldn't|cannot|can't|can not|denied|unreachable|undefined|"
    r"not found|no such|not set|invalid|missing|unauthori[sz]ed|forbidden|expired|exhausted|"
    r"crash(?:ed|ing)?|abort(?:ed|ing)?|errno|segfault|segmentation fault|killed|oom|"
    r"out of memory|unavailable|unhealthy|rejected|broken pipe|reset by peer|no route to host|"
    r"not resolve|unknown host|nxdomain|econnrefused|econnreset|etimedout|bad gateway|"
    r"traceback|panic(?:ked)?|deadlock|corrupt(?:ed)?|violation|lost connection)\b",
    re.I,
)
_FATAL_WORDS = re.compile(r"\b(?:panic(?:ked)?|segmentation fault|core dumped|fatal)\b", re.I)
_WARN_WORDS = re.compile(
    r"\b(?:warn(?:ing)?|deprecated|retry(?:ing)?|retries|slow|degraded|back-?off|throttl\w*|"
    r"high (?:latency|memory|cpu|load)|critical|near(?:ing)? (?:the )?limit)\b",
    re.I,
)
_NOT_ERROR = re.compile(
    r"\b(?:no|0|zero|without|ignoring|ignored|recovered from)\s+(?:errors?|failures?|exceptions?)\b"
    r"|\b(?:errors?|failures?|failed|exceptions?)[\"']?\s*[=:]\s*[\"']?(?:0|none|null|false)\b"
    r"|\bexit(?:ed)?(?: with)? (?:status|code)[ :=]*0\b|\bexit code[ :=]*0\b",
    re.I,
)
_DIGITS = re.compile(r"\d+")
_HAS_DIGIT = re.compile(r"\d")
_INFER_CACHE: dict[str, tuple[str | None, bool]] = {}


def infer_level(text: str) -> str | None:
    """A level read from a message's content: ``fatal``, ``error``, ``warn`` or None.

    Negations (``0 errors``, ``failed=0``, ``exit status 0``) do not count.
    """
    key = _DIGITS.sub("0", text[:240])
    hit = _INFER_CACHE.get(key)
    if hit is not None:
        return hit[0]
    low = _NOT_ERROR.sub(" ", text[:2000]) if _NOT_ERROR.search(text[:2000]) else text[:2000]
    level: str | None = None
    if _ERROR_WORDS.search(low):
        level = "fatal" if _FATAL_WORDS.search(low) else "error"
    elif _WARN_WORDS.search(low):
        level = "warn"
    else:
        m = _EXIT.search(low)
        if m and m.group("code") not in ("0", "-0"):
            level = "error"
    if len(_INFER_CACHE) > 50_000:
        _INFER_CACHE.clear()
    _INFER_CACHE[key] = (level, True)
    return level


# --------------------------------------------------------------------------- parsing


def parse_line(
    line: str,
    *,
    level: Any = None,
    names: LogFieldNames | None = None,
) -> ParsedLine:
    """Understand one line; ``level`` is a level given beside it (a record's field)."""
    return _parse_line(line if isinstance(line, str) else str(line), level,
                       names or default_fields())  # fmt: skip


def _parse_line(raw: str, level: Any, names: LogFieldNames) -> ParsedLine:
    if not raw.isascii() and _SURROGATE.search(raw):  # not valid text: no lone surrogates
        raw = raw.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    text = _ANSI.sub("", raw) if "\x1b" in raw else raw
    text = text.rstrip("\r\n")
    pl = ParsedLine(raw, text.strip())  # positional: a third cheaper than by keyword
    if level is not None and level != "" and level is not True and level is not False:
        given, given_raw = _level_of(level)
        if given is not None:
            pl.level, pl.level_raw = given, given_raw
    stripped = text.lstrip()
    if stripped.startswith("{") and stripped.rstrip().endswith("}"):
        try:
            obj = _loads(stripped)
        except _JSON_ERRORS:
            obj = None
        if isinstance(obj, dict):
            pl.kind = "json"  # its fields are read below, not kept (memory of big bundles)
            pl.message = ""
            _apply_fields(pl, obj, names, top=False)
            if not pl.message:
                pl.message = pl.error or _json_summary(obj, names)
            _finish(pl)
            return pl
    if text.count("=") >= 2 and _LOGFMT_START.match(text):
        pairs = _LOGFMT_PAIR.findall(text)
        if len(pairs) >= 2:
            obj = {k: (_unquote(v) if v.startswith('"') else v) for k, v in pairs}
            pl.kind = "logfmt"
            pl.fields = obj
            pl.message = ""
            _apply_fields(pl, obj, names, top=False)
            if not pl.message:
                pl.message = text.strip()
            _finish(pl)
            return pl
    _text_layout(pl, text, stripped)
    _finish(pl)
    return pl


def _unquote(v: str) -> str:
    try:
        out = json.loads(v)
        return out if isinstance(out, str) else v[1:-1]
    except ValueError:
        return v[1:-1]


def _json_summary(obj: Mapping[str, Any], names: LogFieldNames) -> str:
    skip = set(names.time) | set(names.level) | set(names.trace)
    parts = [f"{k}={v}" for k, v in obj.items() if k not in skip and not isinstance(v, dict | list)]
    return " ".join(parts)[:500]


def _text_layout(pl: ParsedLine, text: str, stripped: str) -> None:
    """Layouts of plain text lines: stack shapes, klog, level markers, access lines."""
    if _TRACEBACK.match(text):
        pl.kind = "traceback"
        return
    if _FRAME.match(text) or (_CONTINUATION.match(text) and not _MARKER.match(text.lstrip())):
        pl.kind = "frame"
        return
    noise = _NOISE_PREFIX.match(text)
    if noise and noise.group(0).count(" ") >= 3 and not _TS_PREFIX.match(text):  # a meter
        text = text[noise.end() :]
        pl.message = text.strip()
        stripped = text.lstrip()
    zm = _ZEROLOG.match(text)
    if zm and (_TS_PREFIX.match(zm.group("ts")) or _CLOCK.fullmatch(zm.group("ts"))):
        word = zm.group("l").lower()
        if pl.level is None:
            pl.level, pl.level_raw = canonical_level(word), word
        pl.time_text = zm.group("ts")
        if zm.group("src"):
            pl.logger = zm.group("src")
        pl.message = text[zm.end() :].strip() or text.strip()
        text = pl.message
        stripped = text
    m = _KLOG.match(text)
    if m:
        lvl = {"I": "info", "W": "warn", "E": "error", "F": "fatal"}[m.group("k")]
        if pl.level is None:
            pl.level, pl.level_raw = lvl, lvl
        pl.logger = m.group("src")
        pl.message = text[m.end() :].strip()
        text = pl.message
    else:
        lm = _LOWER_START.match(stripped)
        if lm:
            word = lm.group("l").lower()
            if pl.level is None:
                pl.level, pl.level_raw = canonical_level(word), word
            if word == "panic":
                pl.kind = "panic"
            pl.message = stripped  # "error: ..." stays whole: the word is part of the text
        else:
            mk = _MARKER.match(text) if _level_hint(text) else None
            if mk:
                word = next(mk.group(g) for g in "bcdefg" if mk.group(g))
                pre = mk.group("pre")
                if mk.group("g") is None or _only_timestamp(pre):
                    if pl.level is None:
                        pl.level, pl.level_raw = canonical_level(word), word.lower()
                    if mk.group("logger"):
                        pl.logger = mk.group("logger")
                    if pre.strip():
                        ts = _TS_PREFIX.match(pre)
                        if ts:
                            pl.time_text = ts.group(0).strip(" []")
                    rest = text[mk.end() :].lstrip(" \t:-]|")
                    pl.message = rest or text.strip()
            else:
                pg = _PG_INFO.match(text)
                if pg and pl.level is None:  # PostgreSQL's "[pid] LOG:  ...": informational
                    pl.level, pl.level_raw = "info", pg.group("l").lower()
                ts = _TS_PREFIX.match(text)
                if ts and ts.end() < len(text):
                    pl.time_text = ts.group(0).strip(" []")
                    pl.message = text[ts.end() :].lstrip(" \t:-]|") or pl.message
    msg = pl.message
    if '"' in msg and "HTTP/" in msg:
        am = _ACCESS.search(msg)
        if am:
            pl.kind = "access"
            pl.status = am.group("status")
            pl.endpoint = endpoint_key(am.group("method"), am.group("path"))
            after = am.group("after")
            _envoy_flags(pl, after)
            rt = _ACCESS_RT.search(after)
            if rt:
                pl.duration_ms, pl.duration_field = float(rt.group("n")) * 1000.0, "text"
            else:
                dm = _ACCESS_DUR.search(after)
                if dm:
                    unit = _UNIT_MS.get(dm.group("u"), 1.0)
                    pl.duration_ms, pl.duration_field = float(dm.group("n")) * unit, "text"
            return
    if _PANIC.match(msg):
        pl.kind = "panic"
        if pl.level is None:
            pl.level, pl.level_raw = "fatal", None
            pl.inferred = True
        return
    em = _EXCEPTION.match(msg.strip())
    if em and (em.group("msg") is not None or "." in em.group("cls") or msg.startswith("Caused")):
        pl.kind = "exception"
        pl.error = msg.strip()
        return
    xm = _EXIT.search(msg) if not msg.isascii() or "exit" in msg.lower() else None
    if xm:
        pl.kind = "exit"
        try:
            pl.exit_code = int(xm.group("code"))
        except ValueError:
            pl.exit_code = None


def _envoy_flags(pl: ParsedLine, after: str) -> None:
    """An Envoy access line's response flags: a failure whatever the status said."""
    fm = _ENVOY_FLAGS.match(after)
    if fm is None:
        return
    flags = fm.group("f").split(",")
    if not all(f in _ENVOY_FLAG_TEXT or f in _ENVOY_NOT_FAILURES for f in flags):
        return  # not Envoy's flags
    failed = [f for f in flags if f not in _ENVOY_NOT_FAILURES]
    if not failed:
        return
    detail = fm.group("detail")
    said = "; ".join(f"{f}: {_ENVOY_FLAG_TEXT[f]}" for f in failed)
    pl.error = f"{said} ({detail})" if detail and detail != "-" else said
    if pl.level is None or pl.inferred:
        pl.level, pl.inferred = "error", True
    up = _ENVOY_UPSTREAM.search(after)
    if up and pl.host is None:
        pl.host = up.group("h")


def strip_timestamp(text: str) -> str:
    """``text`` without a leading timestamp (``2031-04-02 08:00:01,123 - ERROR - x`` keeps
    ``ERROR - x``)."""
    m = _TS_PREFIX.match(text)
    if not m or m.end() >= len(text):
        return text.strip()
    return text[m.end() :].lstrip(" \t-|:]").strip() or text.strip()


def _only_timestamp(pre: str) -> bool:
    """Whether the text before a bare level word is empty or a timestamp."""
    bare = pre.strip()
    if not bare:
        return True
    m = _TS_PREFIX.match(bare)
    return m is not None and m.end() >= len(bare) and bool(_PRE_OK.match(bare))


def _finish(pl: ParsedLine) -> None:
    """Infer a level when none was written; read a duration written in the text."""
    if pl.level is None and pl.kind not in ("frame", "traceback", "access"):
        inferred = infer_level(pl.message if not pl.error else f"{pl.message} {pl.error}")
        if inferred is None and pl.kind == "exception":
            inferred = "error"  # "KeyError: 'X'": an exception line is an error
        if inferred is not None:
            pl.level, pl.inferred = inferred, True
    if pl.duration_ms is None and pl.kind not in ("frame", "traceback"):
        msg = pl.message
        if len(msg) < 4000 and _HAS_DIGIT.search(msg):
            dm = _TEXT_DUR.search(msg)
            if dm and not _after_is_timeout(msg, dm):
                unit = _UNIT_MS.get(
                    dm.group("u").lower(), _UNIT_MS.get(dm.group("u")[0].lower(), 1.0)
                )
                pl.duration_ms, pl.duration_field = float(dm.group("n")) * unit, "text"


def _after_is_timeout(msg: str, m: re.Match[str]) -> bool:
    """``... after 30s`` is a limit that was hit and ``retrying in 5s`` a pause, not a
    measured duration."""
    before = msg[max(0, m.start() - 14) : m.start()].lower()
    return m.group(0).lower().startswith("after") or (
        "retry" in before or "again" in before or "every" in before or "next" in before
        or "wait" in before
    )  # fmt: skip


_LEVEL_KEYS: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[str, ...]] = {}


def _app_level(rec: Mapping[str, Any], names: LogFieldNames) -> Any:
    """``_get(rec, names.level)[1]``: the first level field of ``names`` with a value. The
    names that can be present in records with these keys are found once per key set (most
    records have none: then nothing is looked up)."""
    key = (names.level, tuple(rec))
    present = _LEVEL_KEYS.get(key)
    if present is None:
        present = tuple(
            n for n in names.level if n in rec or ("." in n and n.split(".", 1)[0] in rec)
        )
        if len(_LEVEL_KEYS) > 4096:
            _LEVEL_KEYS.clear()
        _LEVEL_KEYS[key] = present
    return _get(rec, present)[1] if present else None


def parse_record(
    rec: Mapping[str, Any],
    *,
    names: LogFieldNames | None = None,
    message_field: str = "message",
    level_field: str = "level",
) -> ParsedLine:
    """Understand a stored record (a bundle line, an Elasticsearch document): its message
    line, with the record's own level field and any structured fields beside it."""
    names = names or default_fields()
    msg = rec.get(message_field)
    if msg is None and "." in message_field:
        _, msg = _get(rec, (message_field,))
    level = rec.get(level_field)
    if level is None and "." in level_field:
        _, level = _get(rec, (level_field,))
    if level is None:  # the application's own level field (severity, lvl, log.level ...)
        level = _app_level(rec, names)
    pl = _parse_line(msg if isinstance(msg, str) else ("" if msg is None else str(msg)), level,
                     names)  # fmt: skip
    if level is None:
        pass
    elif pl.kind == "json" and pl.level is not None and not pl.inferred:
        pass  # the line's own level (inside its JSON) wins over a collector's default
    elif level != "" and level is not True and level is not False:
        lvl, raw = _level_of(level)
        if lvl is not None:
            pl.level, pl.level_raw, pl.inferred = lvl, raw, False
    if len(rec) > 2 and _has_extra(rec):
        extra = {k: v for k, v in rec.items() if k not in _SKIP_KEYS}
        holder = ParsedLine(raw="", message="")
        _apply_fields(holder, extra, names, top=True)
        if len(pl.message or "") <= 60:
            pl.context = context_of(extra)
        for attr in ("error", "logger", "status", "endpoint", "trace_id", "host"):
            if getattr(pl, attr) is None and getattr(holder, attr) is not None:
                setattr(pl, attr, getattr(holder, attr))
        if pl.duration_ms is None and holder.duration_ms is not None:
            pl.duration_ms, pl.duration_field = holder.duration_ms, holder.duration_field
        if pl.level is None and holder.error:
            pl.level, pl.inferred = "error", True
        pl.flagged = pl.flagged or holder.flagged
    if pl.flagged and pl.error and pl.level in (None, "debug", "info"):
        # a record whose own fields say it failed: an error whatever level it was stored at
        pl.level, pl.inferred = "error", True
    return pl


NEEDS_PARSE = "\0parse"
"""What :func:`record_level` answers when only parsing the record's line can tell."""


def record_level(rec: Mapping[str, Any]) -> str | None:
    """The level :func:`parse_record` (default field names) gives ``rec``, read without
    parsing where the record decides it: a ``level`` field that names a level, beside a
    ``message`` that cannot be a JSON object (no ``{``: only a JSON line's own level would
    win over the field), is that level. Else :data:`NEEDS_PARSE`."""
    msg = rec.get("message")
    if type(msg) is not str or "{" in msg:
        return NEEDS_PARSE
    lv = rec.get("level")
    if lv is None or lv == "" or lv is True or lv is False:
        return NEEDS_PARSE
    canon = _level_of(lv)[0]
    return NEEDS_PARSE if canon is None else canon


def line_names_no_service(rec: Mapping[str, Any]) -> bool:
    """Whether the ``message`` of ``rec`` certainly names no service of its own (the
    ``service`` of :func:`parse_record` is None): only a JSON object (it needs a ``{``) or
    logfmt pairs (two ``=`` at least) can name one."""
    msg = rec.get("message")
    return type(msg) is str and "{" not in msg and msg.count("=") < 2


def parsed_extras(
    pl: ParsedLine,
    rec: Mapping[str, Any],
    *,
    message_field: str = "message",
    level_field: str = "level",
) -> dict[str, Any]:
    """What parsing a record's line adds to it in a search_logs item (never overwriting a
    field it has): a level when it has none (``level_inferred`` when read from the
    content), the line's shape and human message, error, status, duration, endpoint."""
    msg = rec.get(message_field)
    extra: dict[str, Any] = {}
    if rec.get(level_field) in (None, "") and pl.level is not None:
        extra[level_field] = pl.level
        if pl.inferred:
            extra["level_inferred"] = True
    if pl.kind != "text":
        extra["kind"] = pl.kind
        if pl.message and pl.message != msg:
            extra["text"] = pl.message[:2000]
    for key in ("error", "status", "duration_ms", "endpoint"):
        value = getattr(pl, key)
        if value is not None and not (key == "error" and pl.kind == "exception"):
            extra[key] = value[:1000] if isinstance(value, str) else value
    return {k: v for k, v in extra.items() if k not in rec}
