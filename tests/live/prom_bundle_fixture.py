"""A Prometheus protocol fixture over a bundle's recorded queries (not a mock of our code).

:class:`BundlePrometheus` is a threaded HTTP server on 127.0.0.1 that answers the HTTP API
paths a Prometheus client uses, from what an incident bundle recorded (``metrics.yaml``:
PromQL texts and the ``data`` each returned). A bundle holds query *results*, not raw
samples, so the fixture serves:

- ``/api/v1/query_range`` and ``/api/v1/query``: a query whose text is a recorded one
  (whitespace aside) gets its recorded result, cut to ``[start, end]`` (instant: the last
  point at or before ``time``). Any other query is answered from the recorded query over
  the same metrics whose selector agrees with it (equality matchers of the same value, or
  labels its result series carry, which are then filtered; the same function family: a
  quantile, a rate, a plain gauge), re-aggregated to the asked ``by (...)`` labels when the
  recording is finer (``sum`` / ``max`` / ``min`` / ``avg``). No such recording: an empty
  result, as Prometheus answers a selector that matches no series. ``answers`` records,
  per asked query, ``exact``, ``mapped`` (with the recording used) or ``none``.
- discovery: ``/api/v1/label/__name__/values``, ``/api/v1/labels``,
  ``/api/v1/label/<name>/values``, ``/api/v1/series`` (``match[]`` selectors with ``=``,
  ``!=``, ``=~``, ``!~``) and ``/api/v1/metadata``, over series rebuilt from the
  recordings: per metric a query reads and per result series, the equality matchers of
  its selector plus the series' labels (a ``_bucket`` metric gets ``le``; a bundle of one
  namespace gives every series without one its ``namespace``, as Kubernetes service
  discovery labels what it scrapes). The metric
  type is what the query does with it (``rate`` of it: a counter; a quantile over its
  buckets: a histogram; else a gauge).
- ``/api/v1/alerts`` and ``/api/v1/rules`` from the bundle's ``alerts.yaml`` (none: empty),
  ``/api/v1/status/buildinfo`` and ``/-/ready`` for health probes.

Answers have Prometheus' envelope (``{"status": "success", "data": ...}``; errors
``{"status": "error", "errorType": "bad_data", ...}`` with HTTP 400). Only GET and POST
(form-encoded, as the client sends long queries) are served.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

from http_fixture import LoopbackServer

from opsmate.tools.shaping import normalize_promql

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_SELECTOR = re.compile(r"(?<![\w:])([a-zA-Z_:][\w:]*)?\s*\{([^}]*)\}")
_IDENT = re.compile(r"(?<![\w:.])([a-zA-Z_:][\w:]*)(?![\w:])")
_MATCHER = re.compile(r'([a-zA-Z_][\w]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
_AGG_BY = re.compile(r"\b(sum|max|min|avg|count)\b\s*(?:by\s*\(([^)]*)\))?\s*\(")
_BY_AFTER = re.compile(r"\)\s*by\s*\(([^)]*)\)")
_WORDS = {
    "sum", "max", "min", "avg", "count", "rate", "irate", "increase", "by", "without",
    "histogram_quantile", "topk", "bottomk", "on", "ignoring", "and", "or", "unless",
    "offset", "abs", "round", "delta", "deriv", "clamp_min", "clamp_max", "avg_over_time",
    "max_over_time", "min_over_time", "sum_over_time", "quantile_over_time", "label_replace",
    "group_left", "group_right", "bool", "time", "vector", "scalar", "absent", "changes",
    "resets", "sort", "sort_desc", "quantile", "stddev", "count_over_time", "last_over_time",
    "predict_linear", "ceil", "floor", "exp", "ln", "log2", "log10", "sqrt", "timestamp",
    "inf", "nan", "group", "count_values", "stdvar",
}  # fmt: skip

Matcher = tuple[str, str, str]  # (label, op, value)


# --------------------------------------------------------------------------- PromQL reading


def _unquote(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def selectors(query: str) -> list[tuple[str, list[Matcher]]]:
    """``(metric name, matchers)`` of every vector selector in ``query``."""
    out: list[tuple[str, list[Matcher]]] = []
    masked = _STRING.sub(lambda m: '"' + "x" * (len(m.group(0)) - 2) + '"', query)
    spans: list[tuple[int, int]] = []
    for m in _SELECTOR.finditer(masked):
        body = query[m.start(2) : m.end(2)]
        matchers = [(k, op, _unquote(v)) for k, op, v in _MATCHER.findall(body)]
        name = m.group(1) or ""
        if not name:
            name = next((v for k, op, v in matchers if k == "__name__" and op == "="), "")
        if name in _WORDS:  # ``sum{...}`` cannot occur; a function call never has braces
            continue
        out.append((name, [x for x in matchers if x[0] != "__name__"]))
        spans.append((m.start(), m.end()))
    grouped = {s.strip() for g in _GROUPING.findall(masked) for s in g.split(",")}
    for m in _IDENT.finditer(masked):
        if any(a <= m.start() < b for a, b in spans):
            continue
        word = m.group(1)
        rest = masked[m.end() :].lstrip()
        if word in _WORDS or word in grouped or rest.startswith("(") or word.isdigit():
            continue
        if re.fullmatch(r"\d+[smhdwy]", word) or '"' in masked[max(m.start() - 1, 0) : m.start()]:
            continue
        out.append((word, []))
    return [(n, ms) for n, ms in out if n]


def family(query: str) -> str:
    """What a query does with its series: ``quantile``, ``rate`` or ``raw``."""
    if "histogram_quantile" in query:
        return "quantile"
    if re.search(r"\b(?:rate|irate|increase)\s*\(", query):
        return "rate"
    return "raw"


def grouping(query: str) -> tuple[str, list[str]] | None:
    """The outermost aggregation and its ``by`` labels (``le`` left out), when it has some."""
    masked = _STRING.sub('""', query)
    m = _AGG_BY.search(masked)
    if not m:
        return None
    labels = m.group(2)
    if labels is None:
        after = _BY_AFTER.search(masked, m.end())
        labels = after.group(1) if after else ""
    return m.group(1), [x.strip() for x in labels.split(",") if x.strip() and x.strip() != "le"]


def matches(labels: dict[str, str], ms: Iterable[Matcher]) -> bool:
    """Prometheus matcher semantics (regexes fully anchored; absent label = "")."""
    for key, op, want in ms:
        have = labels.get(key, "")
        if op == "=" and have != want:
            return False
        if op == "!=" and have == want:
            return False
        if op in ("=~", "!~"):
            try:
                hit = re.fullmatch(want, have) is not None
            except re.error:
                return False
            if hit != (op == "=~"):
                return False
    return True


# --------------------------------------------------------------------------- the server


class BundlePrometheus(LoopbackServer):
    """The server over ``recordings`` (``metrics.yaml`` entries as dicts or RecordedQuery)
    and ``alerts`` (``alerts.yaml`` entries, or None)."""

    def __init__(
        self,
        recordings: Iterable[Any],
        alerts: list[dict[str, Any]] | None = None,
        namespace: str | None = None,
    ) -> None:
        self.recs: list[dict[str, Any]] = []
        for r in recordings:
            d = r.model_dump() if hasattr(r, "model_dump") else dict(r)
            d["norm"] = normalize_promql(str(d["query"]))
            self.recs.append(d)
        self.alerts = list(alerts or [])
        self.namespace = namespace  # the bundle's one namespace: a matcher on it always holds
        self.series, self.types = self._rebuild()
        self.requests: list[dict[str, Any]] = []
        self.answers: dict[str, str] = {}  # asked query -> exact | mapped: <query> | none
        self._serve()

    # -- discovery data --------------------------------------------------------------------
    def _rebuild(self) -> tuple[list[dict[str, str]], dict[str, str]]:
        seen: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
        types: dict[str, str] = {}
        for rec in self.recs:
            fam = family(rec["query"])
            results = rec["result"].get("result")
            items = results if isinstance(results, list) else []
            for name, ms in selectors(rec["query"]):
                if name == "ALERTS":
                    continue
                if fam == "rate":
                    types.setdefault(name, "counter")
                elif fam == "quantile" and name.endswith("_bucket"):
                    types.setdefault(name.removesuffix("_bucket"), "histogram")
                else:
                    types.setdefault(name, "gauge")
                base = {k: v for k, op, v in ms if op == "="}
                for item in items or [{}]:
                    metric = item.get("metric") if isinstance(item, dict) else None
                    labels = {**base, **{k: str(v) for k, v in (metric or {}).items()}}
                    labels.pop("__name__", None)
                    if self.namespace and not any(k.endswith("namespace") for k in labels):
                        labels["namespace"] = self.namespace  # as Kubernetes discovery adds
                    if name.endswith("_bucket"):
                        labels.setdefault("le", "+Inf")
                    labels["__name__"] = name
                    seen.setdefault(tuple(sorted(labels.items())), labels)
        return list(seen.values()), types

    # -- HTTP ----------------------------------------------------------------------------
    def respond(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(target)
        params = parse_qs(parts.query, keep_blank_values=True)
        if method == "POST" and body:
            for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items():
                params.setdefault(k, []).extend(v)
        self.requests.append({"method": method, "path": parts.path, "params": params})
        if method not in ("GET", "POST"):
            return self._error(405, "bad_data", f"method {method} not allowed")
        try:
            data = self.route(parts.path, params)
        except ValueError as exc:
            return self._error(400, "bad_data", str(exc))
        except KeyError:
            return 404, {"Content-Type": "text/plain"}, b"404 page not found\n"
        if isinstance(data, bytes):
            return 200, {"Content-Type": "text/plain"}, data
        payload = {"status": "success", "data": data}
        return 200, {"Content-Type": "application/json"}, json.dumps(payload).encode()

    @staticmethod
    def _error(status: int, kind: str, msg: str) -> tuple[int, dict[str, str], bytes]:
        body = {"status": "error", "errorType": kind, "error": msg}
        return status, {"Content-Type": "application/json"}, json.dumps(body).encode()

    def route(self, path: str, params: dict[str, list[str]]) -> Any:
        one = {k: v[-1] for k, v in params.items() if v}
        if path in ("/-/ready", "/-/healthy"):
            return b"Prometheus Server is Ready.\n"
        if path == "/api/v1/status/buildinfo":
            return {"version": "2.42.0", "revision": "fixture", "branch": "fixture"}
        if path == "/api/v1/query_range":
            return self.query(one, instant=False)
        if path == "/api/v1/query":
            return self.query(one, instant=True)
        if path == "/api/v1/series":
            return self._select(params.get("match[]") or [])
        if path == "/api/v1/labels":
            return sorted({k for s in self._select(params.get("match[]") or [], True) for k in s})
        m = re.fullmatch(r"/api/v1/label/([^/]+)/values", path)
        if m:
            found = self._select(params.get("match[]") or [], True)
            return sorted({s[m.group(1)] for s in found if m.group(1) in s})
        if path == "/api/v1/metadata":
            want = one.get("metric")
            meta = {
                n: [{"type": t, "help": f"{n} (rebuilt from the bundle)", "unit": ""}]
                for n, t in sorted(self.types.items())
                if want in (None, "", n)
            }
            limit = int(one.get("limit") or 0)
            return dict(list(meta.items())[:limit]) if limit > 0 else meta
        if path == "/api/v1/alerts":
            return {"alerts": [a for a in self.alerts if a.get("state") != "inactive"]}
        if path == "/api/v1/rules":
            return {"groups": []}
        raise KeyError(path)

    def _select(self, match: list[str], everything: bool = False) -> list[dict[str, str]]:
        if not match:
            if everything:
                return self.series
            raise ValueError("no match[] parameter provided")
        out: dict[int, dict[str, str]] = {}
        for sel in match:
            found = selectors(sel)
            if not found:
                m = _SELECTOR.search(sel)
                raw = m.group(2) if m else ""
                ms = [(k, op, _unquote(v)) for k, op, v in _MATCHER.findall(raw)]
                name = ""
            else:
                name, ms = found[0]
                raw_ms = [(k, op, _unquote(v)) for k, op, v in _MATCHER.findall(sel)]
                ms = [x for x in raw_ms if x[0] != "__name__"] if name else raw_ms
            for i, s in enumerate(self.series):
                if name and s["__name__"] != name:
                    continue
                if matches(s, ms):
                    out[i] = s
        return list(out.values())

    # -- queries ---------------------------------------------------------------------------
    def query(self, p: dict[str, str], *, instant: bool) -> dict[str, Any]:
        q = p.get("query")
        if not q:
            raise ValueError("invalid parameter 'query': missing")
        norm = normalize_promql(q)
        exact = [r for r in self.recs if r["norm"] == norm]
        if exact:
            rec, result = exact[0], exact[0]["result"]
            self.answers[q] = "exact"
        else:
            rec, result = self._equivalent(q)
        if rec is None:
            self.answers[q] = "none"
            return {"resultType": "vector" if instant else "matrix", "result": []}
        if instant:
            t = float(p.get("time") or 0) or float("inf")
            return {"resultType": "vector", "result": _at(result, t)}
        start, end = _num(p.get("start")), _num(p.get("end"))
        return {"resultType": "matrix", "result": _between(result, start, end)}

    def _equivalent(self, q: str) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """The recordings over the same metrics (the same function family) whose selectors
        agree with ``q``'s: one per distinct selector (the one keeping the asked ``by``
        labels, else the best overlap), their series filtered to what ``q`` asks and
        labelled with their selector's values, re-aggregated to ``q``'s ``by`` labels."""
        asked = selectors(q)
        names = {n for n, _ in asked}
        fam = family(q)
        by = grouping(q)
        best: dict[tuple[tuple[str, str], ...], tuple[tuple[float, int], dict[str, Any], Any]] = {}
        for rec in self.recs:
            if family(rec["query"]) != fam:
                continue
            theirs = selectors(rec["query"])
            their_names = {n for n, _ in theirs}
            overlap = len(names & their_names) / len(names | their_names) if names else 0.0
            if overlap < 0.5:
                continue
            kept = self._agreeing(asked, theirs, rec)
            if kept is None:
                continue
            fixed = {k: v for _, ms in theirs for k, op, v in ms if op == "=" and k != "namespace"}
            carried = set().union(*[set(i.get("metric") or {}) for i in kept]) if kept else set()
            keeps_by = int(by is not None and set(by[1]) <= carried | set(fixed))
            key = tuple(sorted(fixed.items()))
            score = (overlap, keeps_by)
            if key not in best or score > best[key][0]:
                best[key] = (score, rec, kept)
        if not best:
            return None, {}
        top = max(best.values(), key=lambda x: x[0])
        chosen = [v for v in best.values() if v[0][0] == top[0][0]]
        self.answers[q] = "mapped: " + " | ".join(v[1]["query"] for v in chosen)
        series = []
        for _, rec, kept in chosen:
            fixed = {k: v for _, ms in selectors(rec["query"]) for k, op, v in ms if op == "="}
            for item in kept:
                metric = {**fixed, **(item.get("metric") or {})}
                metric.pop("namespace", None) if "namespace" not in (by[1] if by else []) else None
                series.append({**item, "metric": metric if len(chosen) > 1 else item.get("metric")})
        result = {"resultType": top[1]["result"].get("resultType", "matrix"), "result": series}
        return top[1], _regroup(result, by, None if len(chosen) > 1 else grouping(top[1]["query"]))

    def _agreeing(
        self,
        asked: list[tuple[str, list[Matcher]]],
        theirs: list[tuple[str, list[Matcher]]],
        rec: dict[str, Any],
    ) -> list[dict[str, Any]] | None:
        """The recording's result series that satisfy every matcher of ``asked`` (None: the
        recording cannot say, or contradicts it)."""
        fixed: dict[str, str] = {}
        for _, ms in theirs:
            fixed.update({k: v for k, op, v in ms if op == "="})
        items = [i for i in rec["result"].get("result") or [] if isinstance(i, dict)]
        carried = set().union(*[set(i.get("metric") or {}) for i in items]) if items else set()
        later: list[Matcher] = []
        for _, ms in asked:
            for key, op, want in ms:
                if op == "!=" and want == "":
                    continue  # container!="": every recorded container series holds it
                if key in fixed:
                    if not matches({key: fixed[key]}, [(key, op, want)]):
                        return None
                elif key in carried:
                    later.append((key, op, want))
                elif (
                    key == "namespace"
                    and self.namespace
                    and matches({key: self.namespace}, [(key, op, want)])
                ):
                    continue
                else:
                    return None
        return [i for i in items if matches({**fixed, **(i.get("metric") or {})}, later)]


def _num(raw: str | None) -> float | None:
    if raw in (None, ""):
        return None
    try:
        return float(raw)  # type: ignore[arg-type]
    except ValueError:
        return datetime.fromisoformat(str(raw).replace("Z", "+00:00")).timestamp()


def _points(item: dict[str, Any]) -> list[list[Any]]:
    if "values" in item:
        return [list(p) for p in item["values"]]
    return [list(item["value"])] if item.get("value") else []


def _between(result: dict[str, Any], start: float | None, end: float | None) -> list[Any]:
    out = []
    for item in result.get("result") or []:
        if not isinstance(item, dict):
            continue
        pts = [
            p
            for p in _points(item)
            if (start is None or float(p[0]) >= start) and (end is None or float(p[0]) <= end)
        ]
        if pts:
            out.append({"metric": dict(item.get("metric") or {}), "values": pts})
    return out


def _at(result: dict[str, Any], t: float) -> list[Any]:
    out = []
    for item in result.get("result") or []:
        if not isinstance(item, dict):
            continue
        pts = [p for p in _points(item) if float(p[0]) <= t]
        if pts:
            out.append({"metric": dict(item.get("metric") or {}), "value": pts[-1]})
    return out


def _regroup(
    result: dict[str, Any],
    asked: tuple[str, list[str]] | None,
    recorded: tuple[str, list[str]] | None,
) -> dict[str, Any]:
    """Series summed (max / min / avg) to the asked ``by`` labels when the recording keeps
    more labels than asked and every series carries the asked ones."""
    items = [i for i in result.get("result") or [] if isinstance(i, dict)]
    if asked is None or not items:
        return result
    op, by = asked
    if recorded is not None and set(recorded[1]) == set(by):
        return result
    if not all(set(by) <= set(i.get("metric") or {}) for i in items):
        return result
    groups: dict[tuple[str, ...], dict[float, list[float]]] = {}
    for i in items:
        key = tuple(str((i.get("metric") or {})[b]) for b in by)
        acc = groups.setdefault(key, {})
        for t, v in _points(i):
            try:
                acc.setdefault(float(t), []).append(float(v))
            except (TypeError, ValueError):
                continue
    combine = {"sum": sum, "count": sum, "max": max, "min": min}.get(
        op, lambda xs: sum(xs) / len(xs)
    )
    out = []
    for key, acc in groups.items():
        vals = [[t, f"{combine(xs):g}"] for t, xs in sorted(acc.items())]
        out.append({"metric": dict(zip(by, key, strict=True)), "values": vals})
    return {"resultType": result.get("resultType", "matrix"), "result": out}
