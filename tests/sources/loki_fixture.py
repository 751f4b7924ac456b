"""A protocol fixture for Loki's HTTP query API (not a mock of our code).

:class:`LokiFixture` is a threaded HTTP server on 127.0.0.1 that answers with the request
and response shapes of Loki's documented HTTP API:

- ``GET /ready`` → ``ready``;
- ``GET /loki/api/v1/labels`` and ``GET /loki/api/v1/label/<name>/values`` →
  ``{"status": "success", "data": [...]}``;
- ``GET /loki/api/v1/query_range`` → for a log query ``{"status": "success", "data":
  {"resultType": "streams", "result": [{"stream": {labels}, "values": [["<ns>", "<line>"],
  ...]}], "stats": {...}}}`` (``direction`` backward / forward, ``limit``, ``start``
  inclusive, ``end`` exclusive, nanosecond epochs); for a metric query ``resultType:
  "matrix"`` with ``[[<epoch seconds>, "<value>"], ...]`` per series, evaluated at
  ``start + i*step`` up to ``end``, each over ``(t - range, t]``.

It implements, honestly, the LogQL the log tools send, parsed from the query text: a
stream selector of label matchers (``=``, ``!=``, ``=~``, ``!~``; regexes fully anchored;
at least one matcher that cannot match the empty string, as Loki demands), line filters
(``|=``, ``!=``, ``|~``, ``!~``), the ``| json`` parser (top-level and nested fields,
joined with ``_``; a line that is not JSON gets ``__error__``), label filters after it,
and ``sum [by (labels)] (count_over_time(<log query> [<range>]))``. Strings are backtick
raw strings or double-quoted ones. Anything else is answered HTTP 400 with Loki's
plain-text ``parse error`` reason, so a query the fixture does not understand fails
loudly instead of matching silently. Regular expressions are evaluated with Python's
``re``, which agrees with RE2 on the subset used (``(?i)``, escapes, ``\\b``, groups).

Records become streams as a log shipper makes them: ``label_fields`` maps record fields
to stream labels, ``metadata_fields`` to structured metadata (returned merged into the
stream labels, as Loki does without the ``categorize-labels`` flag), and the line is the
record as JSON (without ``_id``).

Fault modes (``fixture.mode``): ``unauthorized`` (401), ``forbidden`` (403),
``server_error`` (500), ``slow`` (answers after ``delay`` s), ``malformed`` (200 with
truncated JSON), ``enormous`` (every line's message padded to 50 kB).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from http_fixture import LoopbackServer

MAX_ENTRIES = 5000  # Loki's default max_entries_limit_per_query


class LogQLError(Exception):
    """A query the fixture (like Loki) cannot parse: HTTP 400."""


class Entry:
    __slots__ = ("labels", "line", "meta", "ns")

    def __init__(self, labels: dict[str, str], ns: int, line: str, meta: dict[str, str]) -> None:
        self.labels, self.ns, self.line, self.meta = labels, ns, line, meta


def to_ns(stamp: str) -> int:
    dt = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    whole = int(dt.timestamp())
    return whole * 1_000_000_000 + dt.microsecond * 1000


# ----------------------------------------------------------------------------- LogQL parser

_TOKEN = re.compile(
    r"\s*(?:(?P<str>`[^`]*`|\"(?:[^\"\\]|\\.)*\")|(?P<op>\|=|\|~|!=|!~|=~|=|\||[{}(),\[\]])"
    r"|(?P<dur>\d+(?:ms|s|m|h))(?=\s*\])|(?P<name>[A-Za-z_][A-Za-z0-9_]*))"
)
_DUR = {"ms": 1_000_000, "s": 1_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000}


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise LogQLError(f"parse error at line 1, col {pos + 1}: syntax error: unexpected "
                             f"{text[pos:pos + 10]!r}")  # fmt: skip
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


def _string(tok: tuple[str, str]) -> str:
    kind, raw = tok
    if kind != "str":
        raise LogQLError(f"parse error: syntax error: unexpected {raw}, expecting STRING")
    return raw[1:-1] if raw.startswith("`") else json.loads(raw)


def _compare(op: str, value: str, want: str) -> bool:
    if op == "=":
        return value == want
    if op == "!=":
        return value != want
    matched = re.fullmatch(want, value) is not None
    return matched if op == "=~" else not matched


class LogSelector:
    """A parsed log query: matchers, then pipeline stages (applied in order)."""

    def __init__(self) -> None:
        self.matchers: list[tuple[str, str, str]] = []
        self.stages: list[tuple[str, ...]] = []

    def check(self) -> None:
        if not self.matchers:
            raise LogQLError("parse error : syntax error: unexpected }, expecting IDENTIFIER")
        if all(_compare(op, "", v) for _, op, v in self.matchers):
            raise LogQLError(
                "parse error : queries require at least one regexp or equality matcher that "
                'does not have an empty-compatible value. For instance, app=~".*" does not '
                'meet this requirement, but app=~".+" will'
            )

    def apply(self, e: Entry) -> dict[str, str] | None:
        """The entry's labels after the pipeline, or None when a stage drops it."""
        if not all(_compare(op, e.labels.get(n, ""), v) for n, op, v in self.matchers):
            return None
        labels = {**e.labels, **e.meta}
        for stage in self.stages:
            kind = stage[0]
            if kind == "line":
                op, want = stage[1], stage[2]
                found = (want in e.line) if op in ("|=", "!=") else bool(re.search(want, e.line))
                if found != (op in ("|=", "|~")):
                    return None
            elif kind == "json":
                labels = _json_labels(labels, e.line)
            else:
                if not _compare(stage[2], labels.get(stage[1], ""), stage[3]):
                    return None
        return labels


def _flatten(prefix: str, value: Any, out: dict[str, str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}_{k}" if prefix else str(k), v, out)
    elif isinstance(value, list):
        return
    else:
        key = re.sub(r"[^A-Za-z0-9_]", "_", prefix)
        out[key] = "" if value is None else (json.dumps(value) if isinstance(value, bool)
                                             else str(value))  # fmt: skip


def _json_labels(labels: dict[str, str], line: str) -> dict[str, str]:
    try:
        doc = json.loads(line)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        return {**labels, "__error__": "JSONParserErr"}
    found: dict[str, str] = {}
    _flatten("", doc, found)
    out = dict(labels)
    for k, v in found.items():
        out[f"{k}_extracted" if k in labels else k] = v
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise LogQLError("parse error : syntax error: unexpected end of query")
        if want is not None and tok[1] != want:
            raise LogQLError(f"parse error : syntax error: unexpected {tok[1]}, expecting {want}")
        self.i += 1
        return tok

    def log_query(self) -> LogSelector:
        sel = LogSelector()
        self.take("{")
        while self.peek() is not None and self.peek() != ("op", "}"):
            name = self.take()
            if name[0] != "name":
                raise LogQLError(f"parse error : syntax error: unexpected {name[1]}")
            op = self.take()[1]
            if op not in ("=", "!=", "=~", "!~"):
                raise LogQLError(f"parse error : syntax error: unexpected {op}")
            sel.matchers.append((name[1], op, _string(self.take())))
            if self.peek() == ("op", ","):
                self.take()
        self.take("}")
        sel.check()
        stages = ("|=", "|~", "!=", "!~", "|")
        while (tok := self.peek()) is not None and tok[0] == "op" and tok[1] in stages:
            self.take()
            if tok[1] != "|":
                want = _string(self.take())
                if tok[1] in ("|~", "!~"):
                    re.compile(want)
                sel.stages.append(("line", tok[1], want))
                continue
            name = self.take()
            if name == ("name", "json"):
                sel.stages.append(("json",))
                continue
            if name[0] != "name":
                raise LogQLError(f"parse error : syntax error: unexpected {name[1]}")
            op = self.take()[1]
            if op not in ("=", "!=", "=~", "!~"):
                raise LogQLError(f"parse error : unsupported label filter {op}")
            sel.stages.append(("label", name[1], op, _string(self.take())))
        return sel

    def done(self) -> None:
        if self.peek() is not None:
            raise LogQLError(f"parse error : syntax error: unexpected {self.peek()[1]}")  # type: ignore[index]


class MetricQuery:
    def __init__(self, by: list[str] | None, sel: LogSelector, range_ns: int) -> None:
        self.by, self.sel, self.range_ns = by, sel, range_ns


def parse(text: str) -> LogSelector | MetricQuery:
    """A log query or ``sum [by (...)] (count_over_time(<log query> [range]))``."""
    p = _Parser(text)
    if p.peek() == ("op", "{"):
        sel = p.log_query()
        p.done()
        return sel
    if p.take() != ("name", "sum"):
        raise LogQLError("parse error : only sum(count_over_time(...)) metric queries here")
    by: list[str] | None = None
    if p.peek() == ("name", "by"):
        p.take()
        p.take("(")
        by = []
        while p.peek() != ("op", ")"):
            by.append(p.take()[1])
            if p.peek() == ("op", ","):
                p.take()
        p.take(")")
    p.take("(")
    if p.take() != ("name", "count_over_time"):
        raise LogQLError("parse error : only count_over_time is implemented by the fixture")
    p.take("(")
    sel = p.log_query()
    p.take("[")
    kind, raw = p.take()
    if kind != "dur":
        raise LogQLError(f"parse error : not a duration: {raw}")
    unit = re.sub(r"\d+", "", raw)
    range_ns = int(raw[: -len(unit)]) * _DUR[unit]
    p.take("]")
    p.take(")")
    p.take(")")
    p.done()
    return MetricQuery(by, sel, range_ns)


# ----------------------------------------------------------------------------- the server


class LokiFixture(LoopbackServer):
    """The server, holding ``records`` as streams (see the module docstring)."""

    def __init__(
        self,
        records: list[dict[str, Any]],
        *,
        label_fields: dict[str, str] | None = None,
        metadata_fields: dict[str, str] | None = None,
    ) -> None:
        label_fields = label_fields if label_fields is not None else {"service": "app"}
        metadata_fields = metadata_fields or {}
        self.entries: list[Entry] = []
        for rec in records:
            labels = {lab: str(rec[f]) for f, lab in label_fields.items() if rec.get(f)}
            meta = {key: str(rec[f]) for f, key in metadata_fields.items() if rec.get(f)}
            line = json.dumps({k: v for k, v in rec.items() if k != "_id"}, ensure_ascii=False)
            self.entries.append(Entry(labels, to_ns(rec["@timestamp"]), line, meta))
        self.mode = "ok"
        self.delay = 3.0
        self.max_entries = MAX_ENTRIES
        self.requests: list[dict[str, Any]] = []
        self._serve()

    def respond(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(target)
        params = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        self.requests.append({"method": method, "path": parts.path, "params": params,
                              "headers": {k.lower(): v for k, v in headers.items()}})  # fmt: skip
        faults: dict[str, tuple[int, bytes]] = {
            "unauthorized": (401, b"no org id\n"),
            "forbidden": (403, b"access denied\n"),
            "server_error": (500, b"rpc error: code = Internal desc = ingester failed\n"),
        }
        if self.mode in faults:
            status, text = faults[self.mode]
            return status, {"Content-Type": "text/plain; charset=utf-8"}, text
        if self.mode == "slow":
            time.sleep(self.delay)
        try:
            payload = self._route(method, parts.path, params)
        except LogQLError as exc:
            return 400, {"Content-Type": "text/plain; charset=utf-8"}, str(exc).encode()
        except KeyError as exc:
            return 404, {"Content-Type": "text/plain"}, f"404 page not found {exc}\n".encode()
        if isinstance(payload, bytes):
            return 200, {"Content-Type": "text/plain"}, payload
        raw = json.dumps(payload).encode()
        if self.mode == "malformed":
            raw = raw[: len(raw) // 2]
        return 200, {"Content-Type": "application/json; charset=UTF-8"}, raw

    def _route(self, method: str, path: str, params: dict[str, str]) -> Any:
        if method != "GET":
            raise LogQLError(f"method {method} not allowed")
        if path == "/ready":
            return b"ready\n"
        if path == "/loki/api/v1/labels":
            names = sorted({k for e in self.entries for k in e.labels})
            return {"status": "success", "data": names}
        m = re.fullmatch(r"/loki/api/v1/label/([^/]+)/values", path)
        if m:
            name = unquote(m.group(1))
            values = sorted({e.labels[name] for e in self.entries if name in e.labels})
            return {"status": "success", "data": values}
        if path == "/loki/api/v1/query_range":
            return self.query_range(params)
        raise KeyError(path)

    def _param_ns(self, params: dict[str, str], key: str) -> int:
        raw = params.get(key)
        if raw is None or not raw.lstrip("-").isdigit():
            raise LogQLError(f"invalid parameter {key!r}: {raw!r} (nanosecond epoch expected)")
        return int(raw)

    def query_range(self, params: dict[str, str]) -> dict[str, Any]:
        known = {"query", "start", "end", "limit", "direction", "step", "interval"}
        if set(params) - known:
            raise LogQLError(f"unknown parameters {sorted(set(params) - known)}")
        q = parse(params.get("query", ""))
        start, end = self._param_ns(params, "start"), self._param_ns(params, "end")
        if end < start:
            raise LogQLError("end timestamp must not be before or equal to start time")
        stats = {"summary": {"bytesProcessedPerSecond": 0, "linesProcessedPerSecond": 0,
                             "totalBytesProcessed": 0, "totalLinesProcessed": 0,
                             "execTime": 0.001}}  # fmt: skip
        if isinstance(q, MetricQuery):
            return {
                "status": "success",
                "data": {
                    "resultType": "matrix",
                    "result": self._matrix(q, start, end, params.get("step")),
                    "stats": stats,
                },
            }
        limit = int(params.get("limit", "100"))
        if limit > self.max_entries:
            raise LogQLError(f"max entries limit per query exceeded, limit > max_entries_limit "
                             f"({limit} > {self.max_entries})")  # fmt: skip
        direction = params.get("direction", "backward")
        if direction not in ("backward", "forward"):
            raise LogQLError(f"invalid direction {direction!r}")
        hits: list[tuple[Entry, dict[str, str]]] = []
        for e in self.entries:
            if start <= e.ns < end and (labels := q.apply(e)) is not None:
                hits.append((e, labels))
        key: Callable[[tuple[Entry, dict[str, str]]], Any] = lambda h: (  # noqa: E731
            -h[0].ns if direction == "backward" else h[0].ns,
            json.dumps(dict(sorted(h[1].items()))),
            h[0].line,
        )
        hits.sort(key=key)
        streams: dict[str, dict[str, Any]] = {}
        for e, labels in hits[:limit]:
            k = json.dumps(labels, sort_keys=True)
            s = streams.setdefault(k, {"stream": labels, "values": []})
            line = e.line
            if self.mode == "enormous":
                doc = json.loads(line)
                doc["message"] = str(doc.get("message", "")) + " pad" * 12_500
                line = json.dumps(doc)
            s["values"].append([str(e.ns), line])
        return {"status": "success", "data": {"resultType": "streams",
                "result": list(streams.values()), "stats": stats}}  # fmt: skip

    def _matrix(self, q: MetricQuery, start: int, end: int, step: str | None) -> list[Any]:
        if not step:
            raise LogQLError("step is required for this fixture's metric queries")
        step_ns = int(float(step) * 1_000_000_000)
        if step_ns <= 0:
            raise LogQLError("zero or negative query resolution step widths are not accepted")
        series: dict[str, dict[str, Any]] = {}
        t = start
        while t <= end:
            counts: dict[str, int] = {}
            groups: dict[str, dict[str, str]] = {}
            for e in self.entries:
                if not (t - q.range_ns < e.ns <= t):
                    continue
                labels = q.sel.apply(e)
                if labels is None:
                    continue
                keep = ({} if q.by is None else
                        {n: labels[n] for n in q.by if labels.get(n)})  # fmt: skip
                k = json.dumps(keep, sort_keys=True)
                counts[k] = counts.get(k, 0) + 1
                groups[k] = keep
            for k, n in counts.items():
                s = series.setdefault(k, {"metric": groups[k], "values": []})
                s["values"].append([t / 1e9, str(n)])
            t += step_ns
        return list(series.values())


def loki_server(records: list[dict[str, Any]], **kwargs: Any) -> LokiFixture:
    """A fixture over ``records`` (use it as a context manager)."""
    return LokiFixture(records, **kwargs)
