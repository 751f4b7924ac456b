"""How a :class:`~opsmate.capture.recorder.Recorder` sees what the live sources answer.

The tools of a live registry are methods of one object per source (``PrometheusTools``,
``LogTools``, ``KubernetesTools``). :func:`instrument` wraps, on that object only, the one
seam each source already has between its tools and its client:

- Kubernetes: the API objects of a connected cluster (``_connect``): every ``list_*`` /
  ``read_*`` answer's bytes as the tool reads them (objects as the API server sent them,
  pod logs as text with the kubelet's timestamps);
- Elasticsearch: ``_search``: the hits of every search;
- Loki: ``_entries``: the entries of every log query (with the labels they came with);
- Prometheus: the client (``_client``): ``custom_query`` / ``custom_query_range`` with the
  query text, time, window and step, and the alerts and rules API answers (also of the
  Prometheus Alertmanager's ``list_alerts`` falls back to for pending alerts and rules).

Where the registry joined several sources' specs into one (``run.candidates``), each
source is watched. Nothing a tool returns changes. Three tools are also wrapped at the
registry level: ``list_alerts`` (the alerts Alertmanager answered, with their silence
state), and, to register a follow-up read made only when a bundle is written
(:meth:`Recorder.run_followups`), ``log_stats`` (Elasticsearch and Loki count
server-side, so the records counted are read then, bounded) and ``get_object`` answering
"does not exist" (the list of that kind that proves the absence in replay).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from datetime import UTC, datetime
from typing import Any

from opsmate.capture.recorder import PromRead, Recorder
from opsmate.records.payloads import AlertsPayload, ObjectsPayload
from opsmate.timeparse import format_time
from opsmate.tools.base import CallContext, ToolOutput, ToolSpec
from opsmate.tools.registry import ToolRegistry

FOLLOWUP_PAGE = 1000  # records per search when reading what log_stats counted
FOLLOWUP_SECONDS = 60.0  # time-out of each follow-up request


def owner_of(run: Any) -> Any:
    """The object a tool function is bound to (a bound method, or a partial's first arg)."""
    if hasattr(run, "__self__"):
        return run.__self__
    args = getattr(run, "args", None)
    return args[0] if args else None


def owners(spec: ToolSpec) -> list[Any]:
    """The source objects serving ``spec``: its function's, and where the registry joined
    several sources' specs into one (``run.candidates``), each of theirs."""
    runs = [spec.run, *(c.run for c in getattr(spec.run, "candidates", None) or [])]
    return [o for o in (owner_of(r) for r in runs) if o is not None]


def instrument(registry: ToolRegistry, rec: Recorder) -> None:
    """Watch every live source behind ``registry`` (see the module docstring)."""
    from opsmate.tools.alertmanager.tools import AlertmanagerTools
    from opsmate.tools.elasticsearch.tools import LogTools
    from opsmate.tools.kubernetes.tools import KubernetesTools
    from opsmate.tools.loki.tools import LokiTools
    from opsmate.tools.prometheus.tools import PrometheusTools

    seen: set[int] = set()
    for spec in registry.specs():
        for owner in owners(spec):
            if id(owner) in seen:
                continue
            seen.add(id(owner))
            if isinstance(owner, KubernetesTools):
                _kubernetes(owner, rec)
            elif isinstance(owner, LogTools):
                _logs(owner, rec)
            elif isinstance(owner, LokiTools):
                _loki(owner, rec)
            elif isinstance(owner, PrometheusTools):
                _prometheus(owner, rec)
            elif isinstance(owner, AlertmanagerTools):
                # its Prometheus answers pending alerts and the alerting rules
                _prometheus(owner._prometheus(), rec)
    for spec in registry.specs():
        if spec.name == "log_stats":
            stats = [o for o in owners(spec) if isinstance(o, LogTools | LokiTools)]
            if stats:
                registry.register(_with(spec, _log_stats_followup(stats, rec)))
        elif spec.name == "list_alerts":
            registry.register(_with(spec, _alertmanager_alerts(rec)))
        elif spec.name == "get_object" and registry.get("list_objects") is not None:
            lister = registry.get("list_objects")
            assert lister is not None
            registry.register(_with(spec, _absence_followup(lister, rec)))


def _with(spec: ToolSpec, after: Any) -> ToolSpec:
    """``spec`` whose run calls ``after(args, ctx, output)`` once it answered."""
    run = spec.run

    def wrapped(args: Any, ctx: CallContext) -> ToolOutput:
        out = run(args, ctx)
        with contextlib.suppress(Exception):  # recording must never change an answer
            after(args, ctx, out)
        return out

    return dataclasses.replace(spec, run=wrapped)


def _followup_ctx(ctx: CallContext) -> CallContext:
    return CallContext(
        call_id=f"{ctx.call_id}-capture",
        constraints=ctx.constraints,
        now=ctx.now,
        deadline=time.monotonic() + FOLLOWUP_SECONDS,
    )


# ----------------------------------------------------------------------------- Kubernetes


class _K8sApi:
    """A kubernetes client API object whose ``list_*`` / ``read_*`` answers are recorded."""

    def __init__(self, inner: Any, rec: Recorder, env: str) -> None:
        self._inner, self._rec, self._env = inner, rec, env

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._inner, name)
        if not callable(target) or not name.startswith(("list_", "read_")):
            return target
        rec, env = self._rec, self._env

        def call(*args: Any, **kwargs: Any) -> Any:
            resp = target(*args, **kwargs)
            if kwargs.get("_preload_content") is False:
                # the tool reads the body itself (by a deadline): record what it read
                return _TeeBody(resp, lambda body: rec.add_k8s(env, name, args, kwargs, body))
            return resp

        return call


class _TeeBody:
    """A urllib3 answer whose body, once read to its end by the caller (``stream()`` or
    ``data``), is also handed to ``done``; an answer read only in part is not recorded.
    Everything else is the answer's own."""

    def __init__(self, inner: Any, done: Any) -> None:
        self._inner, self._done = inner, done
        self._buf = bytearray()
        self._recorded = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _finish(self, body: bytes) -> None:
        if not self._recorded:
            self._recorded = True
            with contextlib.suppress(Exception):  # recording never changes an answer
                self._done(body)

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        for chunk in self._inner.stream(*args, **kwargs):
            self._buf += chunk
            yield chunk
        self._finish(bytes(self._buf))

    @property
    def data(self) -> Any:
        body = getattr(self._inner, "data", None)  # urllib3's body, not a tool answer
        if isinstance(body, bytes | bytearray):
            self._finish(bytes(body))
        return body


def _kubernetes(owner: Any, rec: Recorder) -> None:
    connect = owner._connect

    def recording_connect(env: str, src: Any) -> Any:
        cl = connect(env, src)
        cl.core = _K8sApi(cl.core, rec, env)
        cl.apps = _K8sApi(cl.apps, rec, env)
        api_of = cl.api_of
        apis: dict[str, _K8sApi] = {}

        def recording_api_of(name: str) -> Any:
            if name not in apis:
                apis[name] = _K8sApi(api_of(name), rec, env)
            return apis[name]

        cl.api_of = recording_api_of
        return cl

    owner._connect = recording_connect


def _absence_followup(lister: ToolSpec, rec: Recorder) -> Any:
    def after(args: Any, ctx: CallContext, out: ToolOutput) -> None:
        answer = out.payload_as(ObjectsPayload)
        if out.status != "no_data" or answer is None or answer.found is not False:
            return
        list_args = lister.args_model.model_validate(
            {"kind": args.kind, "namespace": args.namespace, "environment": args.environment}
        )
        key = f"absent {args.environment} {args.kind} {args.namespace}"
        what = f"the {args.kind} list proving {args.name!r} absent"
        rec.follow_up(key, what, lambda: _ok(lister.run(list_args, _followup_ctx(ctx))))

    return after


def _ok(out: ToolOutput) -> None:
    if out.status == "error" and out.error is not None:
        raise RuntimeError(out.error.message)


# ----------------------------------------------------------------------------- Elasticsearch


def _logs(owner: Any, rec: Recorder) -> None:
    search = owner._search

    def recording_search(env: str, src: Any, ctx: CallContext, **body: Any) -> dict[str, Any]:
        out: dict[str, Any] = search(env, src, ctx, **body)
        rec.add_es(env, src, list(out["hits"]["hits"]))
        return out

    owner._search = recording_search


def _log_stats_followup(stats_owners: list[Any], rec: Recorder) -> Any:
    """After ``log_stats``: read, when the bundle is written, the records it counted (the
    source counts server-side; replay counts the records). The owner serving the call's
    environment does it (Elasticsearch or Loki)."""
    from opsmate.tools.base import ToolFailure
    from opsmate.tools.elasticsearch.tools import LogTools

    def after(args: Any, ctx: CallContext, out: ToolOutput) -> None:
        if out.status not in ("success", "partial"):
            return
        for owner in stats_owners:
            try:
                env, src = owner._source(args.environment, ctx)
            except ToolFailure:
                continue  # another source serves this environment
            if isinstance(owner, LogTools):
                _es_followup(owner, env, src, args, ctx, rec)
            else:
                _loki_followup(owner, env, src, args, ctx, rec)
            return

    return after


def _es_followup(owner: Any, env: str, src: Any, args: Any, ctx: CallContext, rec: Recorder
                 ) -> None:  # fmt: skip
    from opsmate.tools.elasticsearch.tools import _sort, build_query

    start, end = owner._window(args.from_, args.to, ctx)
    key = repr(("log_stats", env, args.service, args.level, start, end))
    query = build_query(src, start=start, end=end, environment=env, service=args.service,
                        level=args.level)  # fmt: skip

    def read_all() -> None:
        after_key: list[Any] | None = None
        read = 0
        while read < rec.limits.max_log_records:
            body: dict[str, Any] = {"query": query, "size": FOLLOWUP_PAGE, "sort": _sort(src)}
            if after_key is not None:
                body["search_after"] = after_key
            hits = owner._search(env, src, _followup_ctx(ctx), **body)["hits"]["hits"]
            read += len(hits)
            if len(hits) < FOLLOWUP_PAGE:
                return
            after_key = hits[-1].get("sort")
            if not after_key:
                return

    what = f"the log records log_stats counted ({args.service or 'all services'})"
    rec.follow_up(key, what, read_all)


def _loki_followup(owner: Any, env: str, src: Any, args: Any, ctx: CallContext, rec: Recorder
                   ) -> None:  # fmt: skip
    import opsmate.tools.loki.logql as logql
    from opsmate.tools.loki.records import ns_of

    start, end = owner._window(args.from_, args.to, ctx)
    key = repr(("log_stats", env, args.service, args.level, start, end))
    q = logql.log_query(src, environment=env, service=args.service, level=args.level).render()
    page = max(1, min(int(getattr(src, "max_lines", FOLLOWUP_PAGE)), FOLLOWUP_PAGE))

    def read_all() -> None:  # newest first, each page ending before the oldest one read
        lo, hi = ns_of(start), ns_of(end) + 1
        read = 0
        while read < rec.limits.max_log_records and hi > lo:
            got = owner._entries(env, src, q, lo, hi, page, _followup_ctx(ctx))
            read += len(got)
            if len(got) < page:
                return
            oldest = min(e.ns for e in got)
            hi = oldest if oldest < hi else hi - 1

    what = f"the log records log_stats counted ({args.service or 'all services'})"
    rec.follow_up(key, what, read_all)


# ----------------------------------------------------------------------------- Loki


def _loki(owner: Any, rec: Recorder) -> None:
    entries = owner._entries

    def recording_entries(env: str, src: Any, q: str, start_ns: int, end_ns: int, limit: int,
                          ctx: CallContext) -> list[Any]:  # fmt: skip
        out: list[Any] = entries(env, src, q, start_ns, end_ns, limit, ctx)
        rec.add_loki(env, src, list(out))
        return out

    owner._entries = recording_entries


# ----------------------------------------------------------------------------- Alertmanager


def api_alert(alert: Any) -> dict[str, Any]:
    """A ``list_alerts`` item (an :class:`~opsmate.records.metrics.Alert`) as an
    ``alerts.yaml`` entry: the Prometheus API's shape (labels with ``alertname`` and
    ``severity``, annotations, state, ``activeAt``) with Alertmanager's silence state kept
    (``silenced``, ``silencedBy``, ``inhibited``, ``fingerprint``)."""
    labels = {"alertname": alert.name or "unknown", **alert.labels}
    if alert.severity:
        labels["severity"] = alert.severity
    out: dict[str, Any] = {"labels": labels, "annotations": dict(alert.annotations),
                           "state": alert.state or "firing"}  # fmt: skip
    if alert.active_at is not None:
        out["activeAt"] = format_time(alert.active_at)
    for key, name in (("silenced", "silenced"), ("silenced_by", "silencedBy"),
                      ("inhibited", "inhibited"), ("fingerprint", "fingerprint")):  # fmt: skip
        value = getattr(alert, key)
        if value not in (None, "", []):
            out[name] = value
    return out


def _alertmanager_alerts(rec: Recorder) -> Any:
    """After ``list_alerts``: the alerts Alertmanager answered (the Prometheus answers are
    recorded at the client, :class:`_PromClient`)."""

    def after(args: Any, ctx: CallContext, out: ToolOutput) -> None:
        if out.scope.get("source") != "alertmanager" or out.status not in ("success", "no_data"):
            return
        env = str(out.scope.get("environment") or ctx.constraints.environment or "")
        listed = out.payload_as(AlertsPayload)
        alerts = listed.alerts if listed is not None else []
        rec.add_alerts(env, [api_alert(a) for a in alerts], merge=True)

    return after


# ----------------------------------------------------------------------------- Prometheus


def _when(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromtimestamp(float(value), UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


class _PromApi:
    """A ``PrometheusConnect`` whose PromQL answers are recorded with their query."""

    def __init__(self, inner: Any, rec: Recorder, env: str) -> None:
        self._inner, self._rec, self._env = inner, rec, env

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def custom_query(self, query: str, params: dict[str, Any] | None = None, **kw: Any) -> Any:
        result = self._inner.custom_query(query, params=params, **kw)
        at = _when((params or {}).get("time")) or datetime.now(UTC)
        self._rec.add_prom(PromRead(self._env, query, "instant", result, time=at))
        return result

    def custom_query_range(
        self,
        query: str,
        start_time: datetime,
        end_time: datetime,
        step: str,
        params: dict[str, Any] | None = None,
        **kw: Any,
    ) -> Any:
        result = self._inner.custom_query_range(query, start_time, end_time, step, params, **kw)
        try:
            seconds: float | None = float(step)
        except (TypeError, ValueError):
            seconds = None
        read = PromRead(self._env, query, "range", result, start=start_time, end=end_time,
                        step=seconds)  # fmt: skip
        self._rec.add_prom(read)
        return result


class _PromClient:
    """The prometheus tools' per-environment client, recording what it reads."""

    def __init__(self, inner: Any, rec: Recorder, env: str) -> None:
        self._inner, self._rec, self._env = inner, rec, env
        self.prom = _PromApi(inner.prom, rec, env)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def get_json(self, path: str, params: dict[str, Any], timeout: float) -> Any:
        data = self._inner.get_json(path, params, timeout)
        if path.endswith("/api/v1/alerts") and isinstance(data, dict):
            self._rec.add_alerts(self._env, list(data.get("alerts") or []), merge=True)
        elif path.endswith("/api/v1/rules") and isinstance(data, dict):
            self._rec.add_rules(self._env, list(data.get("groups") or []))
        return data


def _prometheus(owner: Any, rec: Recorder) -> None:
    client = owner._client
    wrapped: dict[str, _PromClient] = {}

    def recording_client(env: str) -> Any:
        cl = client(env)
        w = wrapped.get(env)
        if w is None or w._inner is not cl:
            w = wrapped[env] = _PromClient(cl, rec, env)
        return w

    owner._client = recording_client
