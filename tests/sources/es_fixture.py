"""A protocol fixture for the Elasticsearch search API (not a mock of our code).

:class:`ESFixture` is a small threaded HTTP server on 127.0.0.1 that answers the real
``elasticsearch`` client with the request and response shapes of an 8.x / 9.x server:
``GET /`` (cluster info), ``GET|POST /<index pattern>/_search`` over in-memory documents,
the ``X-Elastic-Product: Elasticsearch`` header the client checks, and ES-shaped errors.

It implements, honestly, the subset of the query DSL the log tools send: ``bool``
(filter / must / should / must_not / minimum_should_match), ``range`` (dates, numbers),
``term`` (with ``case_insensitive``), ``terms``, ``exists``, ``match`` (operator),
``match_phrase``, ``match_all``; ``size``, ``from``, ``sort`` (fields, ``_doc``),
``search_after``, ``track_total_hits``, ``_source`` filtering, and the aggregations
``terms``, ``filter``, ``missing``, ``date_histogram`` (``fixed_interval``,
``min_doc_count``, ``extended_bounds``), ``percentiles`` (keyed ``values``), ``min`` and
``max`` (``value`` / ``value_as_string`` on dates), with sub-aggregations nested in each
bucket as the server nests them (shapes recorded from the Elasticsearch reference
documentation of each aggregation). Anything else is answered HTTP 400 with an ES-shaped error, so a
query the fixture does not understand fails loudly instead of matching silently.
Text fields use a simplified standard analyzer (lower-cased word tokens).

Fault modes (``fixture.mode``): ``unauthorized`` (401), ``forbidden`` (403),
``server_error`` (500), ``slow`` (answers after ``delay`` s), ``malformed`` (200 with
truncated JSON), ``enormous`` (every message padded to 50 kB) and
``no_product_header``.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

from http_fixture import LoopbackServer

CONTENT_TYPE = "application/vnd.elasticsearch+json;compatible-with=9"
MAPPING = {
    "@timestamp": "date",
    "message": "text",
    "service": "keyword",
    "environment": "keyword",
    "level": "keyword",
    "pod": "keyword",
    "namespace": "keyword",
    "trace_id": "keyword",
    "duration_ms": "long",
}
KNOWN_PARAMS = {
    "typed_keys",
    "ignore_unavailable",
    "allow_no_indices",
    "_source_includes",
    "_source_excludes",
    "track_total_hits",
    "filter_path",
    "rest_total_hits_as_int",
    "pretty",
    "error_trace",
    "human",
    "expand_wildcards",
}
KNOWN_BODY = {
    "query",
    "size",
    "from",
    "sort",
    "search_after",
    "aggs",
    "aggregations",
    "track_total_hits",
    "_source",
}
_TOKEN = re.compile(r"\w+(?:[.']\w+)*")
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


class ESError(Exception):
    def __init__(self, status: int, kind: str, reason: str, **extra: Any) -> None:
        super().__init__(reason)
        cause = {"type": kind, "reason": reason, **extra}
        self.status = status
        self.body = {"error": {"root_cause": [cause], **cause}, "status": status}


def analyze(text: Any) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(str(text))]


def _field(src: dict[str, Any], name: str) -> Any:
    if name in src:
        return src[name]
    cur: Any = src
    for part in name.removesuffix(".keyword").split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _date_ms(value: Any) -> int:
    if isinstance(value, int | float):
        return int(value)
    text = str(value)
    if text.isdigit():
        return int(text)
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return int((dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp() * 1000)


class Doc:
    __slots__ = ("id", "index", "pos", "source")

    def __init__(self, index: str, pos: int, doc_id: str, source: dict[str, Any]) -> None:
        self.index, self.pos, self.id, self.source = index, pos, doc_id, source


class Searcher:
    """Query evaluation over one set of documents (pure; no HTTP)."""

    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping

    def ftype(self, name: str) -> str:
        if name.endswith(".keyword"):
            return "keyword"
        return self.mapping.get(name, "keyword")

    def matches(self, q: Any, doc: Doc) -> bool:
        if not isinstance(q, dict) or len(q) != 1:
            raise ESError(400, "parsing_exception", "query malformed, must start with a single key")
        kind, spec = next(iter(q.items()))
        handler = getattr(self, f"q_{kind}", None)
        if handler is None:
            raise ESError(400, "parsing_exception", f"unknown query [{kind}]")
        return bool(handler(spec, doc))

    def q_match_all(self, spec: Any, doc: Doc) -> bool:
        return True

    def q_bool(self, spec: dict[str, Any], doc: Doc) -> bool:
        unknown = set(spec) - {"filter", "must", "should", "must_not", "minimum_should_match"}
        if unknown:
            raise ESError(
                400, "parsing_exception", f"[bool] query does not support [{unknown.pop()}]"
            )

        def clauses(key: str) -> list[Any]:
            v = spec.get(key) or []
            return v if isinstance(v, list) else [v]

        if not all(self.matches(c, doc) for c in clauses("filter") + clauses("must")):
            return False
        if any(self.matches(c, doc) for c in clauses("must_not")):
            return False
        should = clauses("should")
        default = 0 if (spec.get("filter") or spec.get("must")) else 1
        need = int(spec.get("minimum_should_match", default if should else 0))
        return sum(self.matches(c, doc) for c in should) >= need

    def _one_field(self, kind: str, spec: Any) -> tuple[str, Any]:
        if not isinstance(spec, dict) or len(spec) != 1:
            raise ESError(
                400, "parsing_exception", f"[{kind}] query doesn't support multiple fields"
            )
        return next(iter(spec.items()))

    def q_range(self, spec: Any, doc: Doc) -> bool:
        name, opts = self._one_field("range", spec)
        unknown = set(opts) - {"gte", "gt", "lte", "lt", "format", "time_zone"}
        if unknown:
            raise ESError(
                400, "parsing_exception", f"[range] query does not support [{unknown.pop()}]"
            )
        value = _field(doc.source, name)
        if value is None:
            return False
        conv = _date_ms if self.ftype(name) == "date" else float
        v = conv(value)
        ops = {"gte": v.__ge__, "gt": v.__gt__, "lte": v.__le__, "lt": v.__lt__}
        return all(ops[op](conv(bound)) for op, bound in opts.items() if op in ops)

    def q_term(self, spec: Any, doc: Doc) -> bool:
        name, opts = self._one_field("term", spec)
        if isinstance(opts, dict):
            unknown = set(opts) - {"value", "case_insensitive", "boost"}
            if unknown:
                raise ESError(
                    400, "parsing_exception", f"[term] query does not support [{unknown.pop()}]"
                )
            want, ci = opts["value"], bool(opts.get("case_insensitive"))
        else:
            want, ci = opts, False
        return self._term_eq(name, doc, want, ci)

    def _term_eq(self, name: str, doc: Doc, want: Any, ci: bool) -> bool:
        value = _field(doc.source, name)
        if value is None:
            return False
        if self.ftype(name) == "text":  # terms of a text field are its analysed tokens
            tokens = analyze(value)
            return (str(want).lower() if ci else str(want)) in tokens
        a, b = str(value), str(want)
        return a.lower() == b.lower() if ci else a == b

    def q_terms(self, spec: Any, doc: Doc) -> bool:
        name, values = self._one_field("terms", spec)
        return any(self._term_eq(name, doc, v, False) for v in values)

    def q_exists(self, spec: Any, doc: Doc) -> bool:
        value = _field(doc.source, spec["field"])
        return value is not None and value != []

    def q_match(self, spec: Any, doc: Doc) -> bool:
        name, opts = self._one_field("match", spec)
        text, op = (
            (opts.get("query"), opts.get("operator", "or"))
            if isinstance(opts, dict)
            else (opts, "or")
        )
        value = _field(doc.source, name)
        if value is None:
            return False
        if self.ftype(name) != "text":
            return str(value) == str(text)
        have, want = set(analyze(value)), analyze(text)
        return all(t in have for t in want) if op.lower() == "and" else any(t in have for t in want)

    def q_match_phrase(self, spec: Any, doc: Doc) -> bool:
        name, opts = self._one_field("match_phrase", spec)
        text = opts.get("query") if isinstance(opts, dict) else opts
        value = _field(doc.source, name)
        if value is None:
            return False
        if self.ftype(name) != "text":
            return str(value) == str(text)
        have, want = analyze(value), analyze(text)
        return any(have[i : i + len(want)] == want for i in range(len(have) - len(want) + 1))

    # -- sorting -----------------------------------------------------------------------
    def sort_spec(self, sort: Any) -> list[tuple[str, bool]]:
        out = []
        for entry in sort if isinstance(sort, list) else [sort]:
            if isinstance(entry, str):
                name, order = entry, "desc" if entry == "_score" else "asc"
            elif isinstance(entry, dict) and len(entry) == 1:
                name, opt = next(iter(entry.items()))
                order = opt.get("order", "asc") if isinstance(opt, dict) else opt
            else:
                raise ESError(400, "parsing_exception", f"malformed sort entry {entry!r}")
            if name not in ("_doc", "_score") and self.ftype(name) == "text":
                raise ESError(
                    400, "illegal_argument_exception", f"Fielddata is disabled on [{name}]"
                )
            out.append((name, order == "desc"))
        return out

    def sort_value(self, name: str, desc: bool, doc: Doc) -> Any:
        if name == "_doc":
            return doc.pos
        if name == "_score":
            return 1.0
        value = _field(doc.source, name)
        if value is None:
            return LONG_MIN if desc else LONG_MAX
        if self.ftype(name) == "date":
            return _date_ms(value)
        return value


def _cmp(a: Any, b: Any) -> int:
    return (a > b) - (a < b)


class ESFixture(LoopbackServer):
    """The server. ``indices`` maps index name → documents (``_id`` key optional)."""

    def __init__(
        self, indices: dict[str, list[dict[str, Any]]], mapping: dict[str, str] | None = None
    ):
        self.searcher = Searcher(mapping or MAPPING)
        self.docs: list[Doc] = []
        for index, docs in indices.items():
            for i, d in enumerate(docs):
                src = {k: v for k, v in d.items() if k != "_id"}
                self.docs.append(Doc(index, len(self.docs), str(d.get("_id", f"{index}-{i}")), src))
        self.indices = set(indices)
        self.mode = "ok"
        self.delay = 3.0
        self.requests: list[dict[str, Any]] = []
        self._serve()

    # -- HTTP --------------------------------------------------------------------------
    def respond(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        status, payload, out_headers = self.handle(method, target, body, headers)
        return status, out_headers, payload

    def handle(
        self, method: str, target: str, raw: bytes, headers: dict[str, str]
    ) -> tuple[int, bytes, dict[str, str]]:
        parts = urlsplit(target)
        params = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        body = json.loads(raw) if raw else {}
        self.requests.append(
            {
                "method": method,
                "path": parts.path,
                "params": params,
                "body": body,
                "headers": headers,
            }
        )
        out_headers = {"Content-Type": CONTENT_TYPE}
        if self.mode != "no_product_header":
            out_headers["X-Elastic-Product"] = "Elasticsearch"
        try:
            status, payload = self._route(method, parts.path, params, body)
        except ESError as exc:
            status, payload = exc.status, exc.body
        if self.mode == "malformed" and status == 200:
            return 200, b'{"took": 3, "timed_out": false, "hits": {"hits": [{"_id": ', out_headers
        return status, json.dumps(payload).encode(), out_headers

    def _route(self, method: str, path: str, params: dict[str, str], body: Any) -> tuple[int, Any]:
        if self.mode == "unauthorized":
            raise ESError(
                401,
                "security_exception",
                "missing authentication credentials for REST request [/_search]",
                header={"WWW-Authenticate": ['Basic realm="security"', "ApiKey"]},
            )
        if self.mode == "forbidden":
            raise ESError(
                403,
                "security_exception",
                "action [indices:data/read/search] is unauthorized for user [opsmate]",
            )
        if self.mode == "server_error":
            raise ESError(500, "null_pointer_exception", "fixture: simulated internal error")
        if self.mode == "slow":
            time.sleep(self.delay)
        if method == "GET" and path == "/":
            return 200, {
                "name": "fixture-node",
                "cluster_name": "opsmate-fixture",
                "cluster_uuid": "fixture-uuid",
                "version": {
                    "number": "9.1.0",
                    "build_flavor": "default",
                    "build_type": "docker",
                    "lucene_version": "10.2.2",
                    "minimum_wire_compatibility_version": "8.19.0",
                    "minimum_index_compatibility_version": "8.0.0",
                },
                "tagline": "You Know, for Search",
            }
        m = re.fullmatch(r"/([^/]+)/_search", path)
        if m and method in ("GET", "POST"):
            return 200, self.search(m.group(1), params, body)
        raise ESError(
            400,
            "illegal_argument_exception",
            f"no handler found for uri [{path}] and method [{method}]",
        )

    # -- search ------------------------------------------------------------------------
    def _resolve(self, expr: str) -> set[str]:
        names: set[str] = set()
        for part in expr.split(","):
            if "*" in part:
                names.update(fnmatch.filter(self.indices, part))
            elif part in self.indices:
                names.add(part)
            else:
                raise ESError(
                    404,
                    "index_not_found_exception",
                    f"no such index [{part}]",
                    index=part,
                    **{"resource.type": "index_or_alias", "resource.id": part},
                )
        return names

    def search(self, expr: str, params: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
        for p in params:
            if p not in KNOWN_PARAMS:
                raise ESError(
                    400,
                    "illegal_argument_exception",
                    f"request [/{expr}/_search] contains unrecognized parameter: [{p}]",
                )
        for k in body:
            if k not in KNOWN_BODY:
                raise ESError(400, "parsing_exception", f"Unknown key for a START_OBJECT in [{k}].")
        names = self._resolve(expr)
        s = self.searcher
        query = body.get("query", {"match_all": {}})
        hits = [d for d in self.docs if d.index in names and s.matches(query, d)]
        sort = s.sort_spec(body["sort"]) if "sort" in body else None
        if sort:
            for name, desc in reversed(sort):
                hits.sort(key=lambda d, n=name, r=desc: s.sort_value(n, r, d), reverse=desc)
        total = len(hits)
        after = body.get("search_after")
        if after is not None:
            if not sort or len(after) != len(sort):
                raise ESError(
                    400,
                    "illegal_argument_exception",
                    f"search_after has {len(after)} value(s) but sort has {len(sort or [])}.",
                )
            if body.get("from", 0):
                raise ESError(
                    400,
                    "illegal_argument_exception",
                    "[from] parameter must be set to 0 when [search_after] is used",
                )
            hits = [d for d in hits if self._after(d, sort, after)]
        start, size = int(body.get("from", 0)), int(body.get("size", 10))
        page = hits[start : start + size]
        includes = self._includes(body, params)
        out_hits = []
        for d in page:
            hit: dict[str, Any] = {
                "_index": d.index,
                "_id": d.id,
                "_score": None if sort else 1.0,
                "_source": self._filter_source(d.source, includes),
            }
            if sort:
                hit["sort"] = [s.sort_value(n, r, d) for n, r in sort]
            if self.mode == "enormous":
                hit["_source"]["message"] = str(hit["_source"].get("message", "")) + " x" * 25_000
            out_hits.append(hit)
        result: dict[str, Any] = {
            "took": 2,
            "timed_out": False,
            "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
            "hits": {"max_score": None if sort else (1.0 if page else None), "hits": out_hits},
        }
        track = body.get("track_total_hits", params.get("track_total_hits", 10_000))
        if track in (True, "true"):
            result["hits"]["total"] = {"value": total, "relation": "eq"}
        elif track not in (False, "false"):
            cap = int(track)
            result["hits"]["total"] = {
                "value": min(total, cap),
                "relation": "eq" if total <= cap else "gte",
            }
        aggs = body.get("aggs", body.get("aggregations"))
        if aggs:
            matched = [d for d in self.docs if d.index in names and s.matches(query, d)]
            result["aggregations"] = {name: self._agg(spec, matched) for name, spec in aggs.items()}
        return result

    def _after(self, doc: Doc, sort: list[tuple[str, bool]], after: list[Any]) -> bool:
        for (name, desc), bound in zip(sort, after, strict=True):
            c = _cmp(self.searcher.sort_value(name, desc, doc), bound)
            if c:
                return c < 0 if desc else c > 0
        return False

    def _agg(self, spec: dict[str, Any], docs: list[Doc]) -> dict[str, Any]:
        """One aggregation (and its sub-aggregations) over ``docs``, in ES response shape."""
        kinds = [k for k in spec if k not in ("aggs", "aggregations")]
        if len(kinds) != 1:
            raise ESError(400, "parsing_exception", "Expected [START_OBJECT] under aggregation")
        kind = kinds[0]
        subs = spec.get("aggs", spec.get("aggregations")) or {}
        handler = getattr(self, f"_agg_{kind}", None)
        if handler is None:
            raise ESError(400, "parsing_exception", f"Unknown aggregation type [{kind}]")
        if subs and kind in ("percentiles", "max", "min"):
            raise ESError(
                400, "aggregation_initialization_exception",
                f"Aggregator [{kind}] of type [{kind}] cannot accept sub-aggregations",
            )  # fmt: skip
        return handler(spec[kind], docs, subs)

    def _subs(self, subs: dict[str, Any], docs: list[Doc]) -> dict[str, Any]:
        return {name: self._agg(sub, docs) for name, sub in subs.items()}

    def _no_fielddata(self, field: str) -> None:
        if self.searcher.ftype(field) == "text":
            raise ESError(
                400,
                "illegal_argument_exception",
                f"Fielddata is disabled on [{field}]. Text fields are not optimised for operations "
                "that require per-document field data like aggregations and sorting",
            )

    def _agg_terms(self, spec: dict[str, Any], docs: list[Doc], subs: dict[str, Any]) -> Any:
        field, size = spec["field"], int(spec.get("size", 10))
        self._no_fielddata(field)
        groups: dict[str, list[Doc]] = {}
        raw: dict[str, Any] = {}
        for d in docs:
            v = _field(d.source, field)
            if v is not None:
                groups.setdefault(str(v), []).append(d)
                raw.setdefault(str(v), v)
        ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        buckets = []
        for k, members in ranked[:size]:
            numeric = self.searcher.ftype(field) in ("long", "integer", "double")
            bucket: dict[str, Any] = {"key": raw[k] if numeric else k, "doc_count": len(members)}
            bucket.update(self._subs(subs, members))
            buckets.append(bucket)
        return {
            "doc_count_error_upper_bound": 0,
            "sum_other_doc_count": sum(len(m) for _, m in ranked[size:]),
            "buckets": buckets,
        }

    def _agg_filter(self, spec: dict[str, Any], docs: list[Doc], subs: dict[str, Any]) -> Any:
        members = [d for d in docs if self.searcher.matches(spec, d)]
        return {"doc_count": len(members), **self._subs(subs, members)}

    def _agg_missing(self, spec: dict[str, Any], docs: list[Doc], subs: dict[str, Any]) -> Any:
        members = [d for d in docs if _field(d.source, spec["field"]) in (None, [])]
        return {"doc_count": len(members), **self._subs(subs, members)}

    def _numbers(self, field: str, docs: list[Doc]) -> list[float]:
        conv = _date_ms if self.searcher.ftype(field) == "date" else float
        out = []
        for d in docs:
            v = _field(d.source, field)
            if isinstance(v, int | float | str) and not isinstance(v, bool):
                try:
                    out.append(float(conv(v)))
                except ValueError:
                    continue
        return out

    def _metric(self, field: str, value: float | None) -> dict[str, Any]:
        out: dict[str, Any] = {"value": value}
        if value is not None and self.searcher.ftype(field) == "date":
            dt = datetime.fromtimestamp(value / 1000, tz=UTC)
            out["value_as_string"] = dt.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        return out

    def _agg_max(self, spec: dict[str, Any], docs: list[Doc], subs: dict[str, Any]) -> Any:
        vals = self._numbers(spec["field"], docs)
        return self._metric(spec["field"], max(vals) if vals else None)

    def _agg_min(self, spec: dict[str, Any], docs: list[Doc], subs: dict[str, Any]) -> Any:
        vals = self._numbers(spec["field"], docs)
        return self._metric(spec["field"], min(vals) if vals else None)

    def _agg_percentiles(self, spec: dict[str, Any], docs: list[Doc], subs: dict[str, Any]) -> Any:
        """Keyed percentiles (``{"values": {"50.0": v}}``; null without values). Exact, with
        linear interpolation between ranks, as TDigest is on sets this small."""
        vals = sorted(self._numbers(spec["field"], docs))
        percents = spec.get("percents") or [1, 5, 25, 50, 75, 95, 99]
        out: dict[str, Any] = {}
        for p in percents:
            key = f"{float(p)}"
            if not vals:
                out[key] = None
                continue
            pos = (len(vals) - 1) * float(p) / 100
            lo, hi = int(pos), min(int(pos) + 1, len(vals) - 1)
            out[key] = vals[lo] + (vals[hi] - vals[lo]) * (pos - lo)
        return {"values": out}

    def _agg_date_histogram(
        self, spec: dict[str, Any], docs: list[Doc], subs: dict[str, Any]
    ) -> Any:
        unknown = set(spec) - {"field", "fixed_interval", "min_doc_count", "extended_bounds",
                               "format", "time_zone"}  # fmt: skip
        if unknown or "fixed_interval" not in spec:
            raise ESError(
                400, "illegal_argument_exception",
                "date_histogram: this fixture needs [fixed_interval] "
                f"and knows no [{', '.join(sorted(unknown))}]",
            )  # fmt: skip
        m = re.fullmatch(r"(\d+)(ms|s|m|h|d)", str(spec["fixed_interval"]))
        if not m:
            raise ESError(400, "illegal_argument_exception", "failed to parse [fixed_interval]")
        step = int(m.group(1)) * {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000,
                                  "d": 86_400_000}[m.group(2)]  # fmt: skip
        field = spec["field"]
        groups: dict[int, list[Doc]] = {}
        for d in docs:
            v = _field(d.source, field)
            if v is not None:
                key = _date_ms(v) // step * step
                groups.setdefault(key, []).append(d)
        keys = set(groups)
        min_count = int(spec.get("min_doc_count", 1))
        bounds = spec.get("extended_bounds")
        if min_count == 0:
            lows = [*keys]
            highs = [*keys]
            if bounds:
                lows.append(_date_ms(bounds["min"]) // step * step)
                highs.append(_date_ms(bounds["max"]) // step * step)
            if lows:
                keys = set(range(min(lows), max(highs) + 1, step))
        buckets = []
        for key in sorted(keys):
            members = groups.get(key, [])
            if len(members) < min_count:
                continue
            dt = datetime.fromtimestamp(key / 1000, tz=UTC)
            bucket: dict[str, Any] = {
                "key_as_string": dt.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                "key": key,
                "doc_count": len(members),
            }
            bucket.update(self._subs(subs, members))
            buckets.append(bucket)
        return {"buckets": buckets}

    @staticmethod
    def _includes(body: dict[str, Any], params: dict[str, str]) -> list[str] | None:
        src = body.get("_source", True)
        if "_source_includes" in params:
            return params["_source_includes"].split(",")
        if src is True:
            return None
        if isinstance(src, str):
            return [src]
        if isinstance(src, list):
            return src
        if isinstance(src, dict):
            return list(src.get("includes") or [])
        return []

    @staticmethod
    def _filter_source(src: dict[str, Any], includes: list[str] | None) -> dict[str, Any]:
        if includes is None:
            return dict(src)
        return {
            k: v
            for k, v in src.items()
            if any(k == i or fnmatch.fnmatch(k, i) or i.startswith(k + ".") for i in includes)
        }


# --------------------------------------------------------------------------- fixture data

WINDOW_FROM = datetime(2026, 10, 21, 1, 30, tzinfo=UTC)
WINDOW_TO = datetime(2026, 10, 21, 2, 6, tzinfo=UTC)
RELEASE = datetime(2026, 10, 21, 2, 0, tzinfo=UTC)
ORDER_PODS = ("order-service-7d9f8b6c4-x2x9k", "order-service-7d9f8b6c4-q8w7e")


def sample_logs() -> list[dict[str, Any]]:
    """~330 records of the order-service incident (deterministic), oldest first."""
    docs: list[dict[str, Any]] = []

    def add(
        t: datetime, service: str, level: str, message: str, env: str | None = "test", **extra: Any
    ) -> None:
        rec = {
            "@timestamp": t.isoformat().replace("+00:00", "Z"),
            "service": service,
            "level": level,
            "message": message,
            "namespace": "shop",
            **extra,
        }
        if env is not None:
            rec["environment"] = env
        docs.append({"_id": f"evt-{len(docs):04d}", **rec})

    t = WINDOW_FROM
    i = 0
    while t < WINDOW_TO:
        pod = ORDER_PODS[i % 2]
        add(
            t,
            "order-service",
            "INFO",
            f"GET /api/orders/{1000 + i} 200 in {20 + i % 17}ms",
            pod=pod,
        )
        if i % 3 == 0:
            add(
                t + timedelta(seconds=5),
                "payment-service",
                "INFO",
                f"charge {i} ok",
                pod="payment-service-5c6d7e8f9-abcde",
            )
        if t >= RELEASE:
            add(
                t + timedelta(seconds=7),
                "order-service",
                "ERROR",
                f"PoolTimeout: could not acquire connection from pool orders-db after {5000 + i}ms "
                f"(in use 20/20) trace_id={i:08x}deadbeef",
                pod=pod,
            )
            if i % 2 == 0:
                add(
                    t + timedelta(seconds=9),
                    "order-service",
                    "WARNING",
                    "connection pool exhausted, queueing request",
                    pod=pod,
                )
        elif i % 20 == 0:
            add(
                t + timedelta(seconds=3),
                "order-service",
                "WARN",
                f"slow query took {900 + i} ms",
                pod=pod,
            )
        t += timedelta(seconds=15)
        i += 1
    add(RELEASE + timedelta(minutes=1), "order-service", "ERROR", "PoolTimeout in prod", env="prod")
    add(
        RELEASE + timedelta(minutes=2),
        "order-service",
        "error",
        "legacy record without environment field",
        env=None,
    )
    return docs


@contextlib.contextmanager
def es_server(indices: dict[str, list[dict[str, Any]]] | None = None) -> Iterator[ESFixture]:
    """A running fixture with ``sample_logs()`` in index ``logs-test-2026.10.21``."""
    with ESFixture(indices or {"logs-test-2026.10.21": sample_logs(), "other-index": []}) as fx:
        yield fx
