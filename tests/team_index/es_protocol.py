"""A protocol fixture for the Elasticsearch APIs the team runbook index uses (not a mock).

:class:`ESKnowledgeFixture` is a threaded HTTP server on 127.0.0.1 answering the real
``elasticsearch`` client with the request and response shapes of an 8.x / 9.x server
(recorded from the Elasticsearch REST reference): ``GET /``; ``PUT /<index>`` (create,
with ``mappings`` and ``_meta``; ``resource_already_exists_exception``); ``GET
/<pattern>`` (indices); ``DELETE /<index>``; ``GET /<index>/_mapping``; ``GET
/_alias/<name>`` (404 ``alias [x] missing``); ``POST /_aliases`` (add / remove actions
applied atomically); ``PUT|POST /_bulk`` (NDJSON ``index`` actions, per-item results,
``strict_dynamic_mapping_exception`` for unmapped fields, ``dense_vector`` dimension
checks); ``POST /<index>/_refresh``; ``/<index>/_count``; ``POST /<index>/_mget``
(``_source_includes``); ``POST /<index>/_search`` and ``POST /<index>/_msearch`` (NDJSON)
with the query DSL subset the adapter sends - ``bool`` (filter / should / must_not /
minimum_should_match), ``term``, ``terms``, ``combined_fields`` (BM25F over the listed
fields with ``^boost``: tf and lengths combined with the field boosts, Lucene's IDF and
BM25 saturation, k1 1.2, b 0.75), top-level ``knn`` (``field``, ``query_vector``, ``k``,
``num_candidates``, ``filter`` applied before the nearest are chosen; score ``(1 +
cosine) / 2``), ``size``, ``_source`` lists and ``terms`` aggregations. Like the real
server, term statistics are index-wide: a filter limits which documents match, not
the IDF. Anything else is answered 400 ``parsing_exception``, so a query the fixture
does not understand fails loudly.

It also checks what it receives: every search of a runbook index is recorded in
``searches`` (index, body), and with ``require_domains`` set a search whose lexical query
lacks the domain ``terms`` clause in ``bool.filter``, or whose ``knn`` lacks it in its
``filter``, is refused with HTTP 400 - the filter must be inside the query, before scoring.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import math
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, unquote, urlsplit

CONTENT_TYPE = "application/vnd.elasticsearch+json;compatible-with=9"
K1, B = 1.2, 0.75


class ESError(Exception):
    def __init__(self, status: int, kind: str, reason: str) -> None:
        super().__init__(reason)
        cause = {"type": kind, "reason": reason}
        self.status = status
        self.body = {"error": {"root_cause": [cause], **cause}, "status": status}


class Index:
    def __init__(self, name: str, mappings: dict[str, Any]) -> None:
        self.name = name
        self.mappings = mappings
        self.docs: dict[str, dict[str, Any]] = {}
        self.visible: dict[str, dict[str, Any]] = {}  # after the last refresh

    @property
    def props(self) -> dict[str, Any]:
        return dict(self.mappings.get("properties") or {})


class ESKnowledgeFixture:
    """Serve on ``self.url`` while used as a context manager (see the module docstring)."""

    def __init__(self) -> None:
        self.indices: dict[str, Index] = {}
        self.aliases: dict[str, str] = {}
        self.requests: list[dict[str, Any]] = []
        self.searches: list[tuple[str, dict[str, Any]]] = []
        self.require_domains: bool = False
        self.lock = threading.Lock()
        fixture = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                status, payload = fixture.handle(self.command, self.path, raw)
                self.send_response(status)
                self.send_header("Content-Type", CONTENT_TYPE)
                self.send_header("X-Elastic-Product", "Elasticsearch")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                with contextlib.suppress(OSError):
                    self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- routing -------------------------------------------------------------------------
    def handle(self, method: str, target: str, raw: bytes) -> tuple[int, bytes]:
        parts = urlsplit(target)
        params = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        path = unquote(parts.path)
        self.requests.append({"method": method, "path": path, "params": params})
        try:
            with self.lock:
                status, payload = self._route(method, path, params, raw)
        except ESError as exc:
            status, payload = exc.status, exc.body
        except (ValueError, KeyError, TypeError) as exc:
            status, payload = 400, ESError(400, "parsing_exception", repr(exc)).body
        return status, json.dumps(payload).encode()

    def _route(self, method: str, path: str, params: dict[str, str], raw: bytes) -> tuple[int, Any]:
        segs = [s for s in path.split("/") if s]
        if not segs:
            return 200, {"name": "fixture", "cluster_name": "opsmate-fixture",
                         "version": {"number": "9.1.0", "build_flavor": "default"},
                         "tagline": "You Know, for Search"}  # fmt: skip
        if segs == ["_bulk"] and method in ("PUT", "POST"):
            return 200, self._bulk(raw)
        if segs == ["_aliases"] and method == "POST":
            return 200, self._update_aliases(json.loads(raw))
        if segs[0] == "_alias" and len(segs) == 2 and method == "GET":
            if segs[1] not in self.aliases:
                return 404, {"error": f"alias [{segs[1]}] missing", "status": 404}
            return 200, {self.aliases[segs[1]]: {"aliases": {segs[1]: {}}}}
        if len(segs) == 1:
            return self._index_api(method, segs[0], json.loads(raw) if raw else {})
        index = self._resolve(segs[0])
        action = segs[1]
        if action == "_mapping" and method == "GET":
            return 200, {index.name: {"mappings": index.mappings}}
        if action == "_refresh":
            index.visible = dict(index.docs)
            return 200, {"_shards": {"total": 1, "successful": 1, "failed": 0}}
        if action == "_count":
            shards = {"total": 1, "successful": 1, "skipped": 0, "failed": 0}
            return 200, {"count": len(index.visible), "_shards": shards}
        if action == "_mget" and method in ("GET", "POST"):
            return 200, self._mget(index, json.loads(raw), params)
        if action == "_search" and method in ("GET", "POST"):
            return 200, self._search(index, json.loads(raw) if raw else {})
        if action == "_msearch" and method in ("GET", "POST"):
            lines = [json.loads(x) for x in raw.decode().splitlines() if x.strip()]
            responses = []
            for header, body in zip(lines[0::2], lines[1::2], strict=True):
                target = self._resolve(header["index"]) if header.get("index") else index
                try:
                    responses.append({**self._search(target, body), "status": 200})
                except ESError as exc:
                    responses.append({**exc.body, "status": exc.status})
            return 200, {"took": 1, "responses": responses}
        raise ESError(400, "illegal_argument_exception", f"fixture: no route {method} {path}")

    def _resolve(self, name: str) -> Index:
        real = self.aliases.get(name, name)
        if real not in self.indices:
            raise ESError(404, "index_not_found_exception", f"no such index [{name}]")
        return self.indices[real]

    def _index_api(self, method: str, name: str, body: dict[str, Any]) -> tuple[int, Any]:
        if method == "PUT":
            if name in self.indices or name in self.aliases:
                raise ESError(400, "resource_already_exists_exception",
                              f"index [{name}/uuid] already exists")  # fmt: skip
            if set(body) - {"mappings", "settings"}:
                raise ESError(400, "parsing_exception", f"unknown keys {sorted(body)}")
            _check_mappings(body.get("mappings") or {})
            self.indices[name] = Index(name, body.get("mappings") or {})
            return 200, {"acknowledged": True, "shards_acknowledged": True, "index": name}
        if method == "DELETE":
            if name not in self.indices:
                raise ESError(404, "index_not_found_exception", f"no such index [{name}]")
            del self.indices[name]
            self.aliases = {a: i for a, i in self.aliases.items() if i != name}
            return 200, {"acknowledged": True}
        if method == "GET":
            names = [n for n in self.indices if fnmatch.fnmatchcase(n, name)]
            if not names and "*" not in name:
                raise ESError(404, "index_not_found_exception", f"no such index [{name}]")
            return 200, {
                n: {"aliases": {a: {} for a, i in self.aliases.items() if i == n},
                    "mappings": self.indices[n].mappings, "settings": {}}
                for n in names
            }  # fmt: skip
        raise ESError(405, "method_not_allowed", f"{method} /{name}")

    def _update_aliases(self, body: dict[str, Any]) -> dict[str, Any]:
        new = dict(self.aliases)
        for action in body["actions"]:
            ((kind, spec),) = action.items()
            if spec["index"] not in self.indices:
                raise ESError(404, "index_not_found_exception", f"no such index [{spec['index']}]")
            if kind == "add":
                new[spec["alias"]] = spec["index"]
            elif kind == "remove":
                if new.get(spec["alias"]) != spec["index"]:
                    raise ESError(404, "aliases_not_found_exception",
                                  f"aliases [{spec['alias']}] missing")  # fmt: skip
                del new[spec["alias"]]
            else:
                raise ESError(400, "parsing_exception", f"unknown alias action {kind}")
        self.aliases = new  # all actions at once, or none
        return {"acknowledged": True, "errors": False}

    def _bulk(self, raw: bytes) -> dict[str, Any]:
        lines = [json.loads(x) for x in raw.decode().splitlines() if x.strip()]
        items, errors = [], False
        for action, doc in zip(lines[0::2], lines[1::2], strict=True):
            ((kind, meta),) = action.items()
            if kind != "index":
                raise ESError(400, "illegal_argument_exception", f"fixture: bulk {kind}")
            name, doc_id = meta["_index"], meta["_id"]
            item: dict[str, Any] = {"_index": name, "_id": doc_id}
            try:
                index = self._resolve(name)
                _check_doc(index, doc)
                created = doc_id not in index.docs
                index.docs[doc_id] = doc
                item.update(_version=1, result="created" if created else "updated",
                            status=201 if created else 200)  # fmt: skip
            except ESError as exc:
                errors = True
                item.update(status=exc.status, error=exc.body["error"]["root_cause"][0])
            items.append({"index": item})
        return {"took": 1, "errors": errors, "items": items}

    def _mget(self, index: Index, body: dict[str, Any], params: dict[str, str]) -> dict[str, Any]:
        keep = params.get("_source_includes")
        docs = []
        for doc_id in body["ids"]:
            src = index.visible.get(doc_id)
            if src is None:
                docs.append({"_index": index.name, "_id": doc_id, "found": False})
                continue
            if keep:
                src = {k: v for k, v in src.items() if k in keep.split(",")}
            docs.append({"_index": index.name, "_id": doc_id, "_version": 1, "found": True,
                         "_source": src})  # fmt: skip
        return {"docs": docs}

    # -- search --------------------------------------------------------------------------
    def _search(self, index: Index, body: dict[str, Any]) -> dict[str, Any]:
        unknown = set(body) - {"size", "query", "knn", "_source", "aggs", "aggregations"}
        if unknown:
            raise ESError(400, "parsing_exception", f"unknown search keys {sorted(unknown)}")
        self.searches.append((index.name, body))
        if self.require_domains and (body.get("query") or body.get("knn")):
            _require_domain_filter(body)
        docs = index.visible
        size = int(body.get("size", 10))
        if "knn" in body:
            scored = self._knn(index, body["knn"])
        elif "query" in body:
            stats = _Stats(index)
            scored = []
            for doc_id, src in docs.items():
                s = self._score(body["query"], src, stats)
                if s is not None:
                    scored.append((doc_id, s))
            scored.sort(key=lambda x: (-x[1], x[0]))
        else:
            scored = [(d, 1.0) for d in docs]
        hits = [{"_index": index.name, "_id": d, "_score": s,
                 "_source": _source(docs[d], body.get("_source"))}
                for d, s in scored[:size]]  # fmt: skip
        out: dict[str, Any] = {
            "took": 1, "timed_out": False,
            "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
            "hits": {"total": {"value": len(scored), "relation": "eq"},
                     "max_score": hits[0]["_score"] if hits else None, "hits": hits},
        }  # fmt: skip
        aggs = body.get("aggs") or body.get("aggregations")
        if aggs:
            matched = [docs[d] for d, _ in scored]
            out["aggregations"] = {name: _terms_agg(spec, matched) for name, spec in aggs.items()}
        return out

    def _knn(self, index: Index, knn: dict[str, Any]) -> list[tuple[str, float]]:
        unknown = set(knn) - {"field", "query_vector", "k", "num_candidates", "filter"}
        if unknown:
            raise ESError(400, "parsing_exception", f"unknown knn keys {sorted(unknown)}")
        field = index.props.get(knn["field"]) or {}
        if field.get("type") != "dense_vector" or not field.get("index"):
            raise ESError(400, "illegal_argument_exception", f"[{knn['field']}] is not an "
                          "indexed dense_vector field")  # fmt: skip
        q = [float(x) for x in knn["query_vector"]]
        if len(q) != field["dims"]:
            raise ESError(400, "illegal_argument_exception", "query vector has the wrong dims")
        if int(knn["num_candidates"]) < int(knn["k"]):
            raise ESError(400, "illegal_argument_exception", "num_candidates must be >= k")
        flt = knn.get("filter") or []
        flt = flt if isinstance(flt, list) else [flt]
        stats = _Stats(index)
        out = []
        for doc_id, src in index.visible.items():
            if all(self._score(f, src, stats) is not None for f in flt):  # pre-filter
                out.append((doc_id, (1.0 + _cosine(q, src[knn["field"]])) / 2.0))
        out.sort(key=lambda x: (-x[1], x[0]))
        return out[: int(knn["k"])]

    def _score(self, q: dict[str, Any], src: dict[str, Any], stats: _Stats) -> float | None:
        """The score of ``src`` for query ``q``; None when it does not match."""
        ((kind, spec),) = q.items()
        if kind == "term":
            ((field, value),) = spec.items()
            return 0.0 if value in _values(src, field) else None
        if kind == "terms":
            ((field, values),) = spec.items()
            return 0.0 if set(values) & set(_values(src, field)) else None
        if kind == "bool":
            unknown = set(spec) - {"filter", "should", "must_not", "must", "minimum_should_match"}
            if unknown:
                raise ESError(400, "parsing_exception", f"unknown bool keys {sorted(unknown)}")
            for f in _as_list(spec.get("filter")) + _as_list(spec.get("must")):
                if self._score(f, src, stats) is None:
                    return None
            for f in _as_list(spec.get("must_not")):
                if self._score(f, src, stats) is not None:
                    return None
            total, matched = 0.0, 0
            for f in _as_list(spec.get("should")):
                s = self._score(f, src, stats)
                if s is not None:
                    total, matched = total + s, matched + 1
            # the server's default: 1 when there are should clauses and no must / filter
            alone = bool(spec.get("should")) and not (spec.get("filter") or spec.get("must"))
            need = int(spec.get("minimum_should_match", 1 if alone else 0))
            return total if matched >= need else None
        if kind == "combined_fields":
            return stats.bm25f(spec, src)
        raise ESError(400, "parsing_exception", f"unknown query [{kind}]")


class _Stats:
    """Index-wide BM25F statistics for ``combined_fields`` (filters do not change them)."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self._cache: dict[tuple[str, ...], tuple[Counter[str], float, int]] = {}

    def _fields(self, fields: list[str]) -> tuple[list[tuple[str, float]], tuple[str, ...]]:
        out = []
        for f in fields:
            name, _, boost = f.partition("^")
            prop = self.index.props.get(name) or {}
            if prop.get("type") != "text" or prop.get("analyzer") != "whitespace":
                why = f"[{name}] is not a text field with the whitespace analyzer"
                raise ESError(400, "illegal_argument_exception", why)
            out.append((name, float(boost or 1.0)))
        return out, tuple(fields)

    def bm25f(self, spec: dict[str, Any], src: dict[str, Any]) -> float | None:
        unknown = set(spec) - {"query", "fields", "boost", "operator"}
        if unknown:
            raise ESError(400, "parsing_exception", f"unknown combined_fields keys {unknown}")
        fields, key = self._fields(list(spec["fields"]))
        if key not in self._cache:
            df: Counter[str] = Counter()
            total = 0.0
            for d in self.index.visible.values():
                seen: set[str] = set()
                for name, w in fields:
                    toks = str(d.get(name) or "").split()
                    total += w * len(toks)
                    seen.update(toks)
                df.update(seen)
            n = len(self.index.visible)
            self._cache[key] = (df, total / max(n, 1), n)
        df, avg, n = self._cache[key]
        toks = {name: str(src.get(name) or "").split() for name, _ in fields}
        length = sum(w * len(toks[name]) for name, w in fields)
        score, matched = 0.0, False
        for t in str(spec["query"]).split():
            tf = sum(w * toks[name].count(t) for name, w in fields)
            if tf <= 0:
                continue
            matched = True
            idf = math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5))
            score += idf * tf / (tf + K1 * (1 - B + B * length / max(avg, 1e-9)))
        return score * float(spec.get("boost", 1.0)) if matched else None


def _require_domain_filter(body: dict[str, Any]) -> None:
    def has(clauses: Any) -> bool:
        return any("terms" in c and "domains" in c["terms"] for c in _as_list(clauses))

    if "query" in body and not has(body["query"].get("bool", {}).get("filter")):
        raise ESError(400, "fixture_domain_filter_missing",
                      "the lexical query has no domains clause in bool.filter")  # fmt: skip
    if "knn" in body and not has(body["knn"].get("filter")):
        raise ESError(400, "fixture_domain_filter_missing",
                      "the knn query has no domains clause in its filter")  # fmt: skip


def _check_mappings(m: dict[str, Any]) -> None:
    for name, prop in (m.get("properties") or {}).items():
        if prop.get("type") == "dense_vector":
            if not isinstance(prop.get("dims"), int) or prop.get("similarity") != "cosine":
                raise ESError(400, "mapper_parsing_exception", f"[{name}] dense_vector needs dims")
        elif prop.get("type") not in ("text", "keyword", "boolean", "integer", "object"):
            raise ESError(400, "mapper_parsing_exception", f"no handler for type [{prop}]")


def _check_doc(index: Index, doc: dict[str, Any]) -> None:
    props = index.props
    for key, value in doc.items():
        if key not in props:
            if index.mappings.get("dynamic") == "strict":
                raise ESError(400, "strict_dynamic_mapping_exception",
                              f"mapping set to strict, dynamic introduction of [{key}] "
                              "within [_doc] is not allowed")  # fmt: skip
            continue
        if props[key].get("type") == "dense_vector" and len(value) != props[key]["dims"]:
            why = f"[{key}] has {len(value)} dims, the mapping {props[key]['dims']}"
            raise ESError(400, "document_parsing_exception", why)


def _values(src: dict[str, Any], field: str) -> list[Any]:
    v = src.get(field)
    return v if isinstance(v, list) else [v]


def _as_list(x: Any) -> list[Any]:
    return [] if x is None else x if isinstance(x, list) else [x]


def _source(src: dict[str, Any], keep: Any) -> dict[str, Any]:
    if keep is None or keep is True:
        return src
    return {k: v for k, v in src.items() if k in keep}


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a)) or 1e-12
    nb = math.sqrt(sum(x * x for x in b)) or 1e-12
    return dot / (na * nb)


def _terms_agg(spec: dict[str, Any], docs: list[dict[str, Any]]) -> dict[str, Any]:
    ((kind, opts),) = spec.items()
    if kind != "terms":
        raise ESError(400, "parsing_exception", f"fixture: aggregation [{kind}]")
    counts: Counter[Any] = Counter()
    for d in docs:
        counts.update(v for v in _values(d, opts["field"]) if v is not None)
    top = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))[: int(opts.get("size", 10))]
    return {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0,
            "buckets": [{"key": k, "doc_count": c} for k, c in top]}  # fmt: skip
