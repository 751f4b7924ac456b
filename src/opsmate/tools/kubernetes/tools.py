"""Kubernetes as a live, read-only tool source (the official kubernetes client).

Tools: ``list_pods``, ``get_events``, ``rollout_history``, ``node_conditions``,
``pod_logs``, and ``list_objects`` / ``get_object`` over the allow-listed kinds of
:mod:`opsmate.tools.k8s_kinds` (:mod:`opsmate.tools.kubernetes.objects`). Only read verbs
are used (get / list, the pod ``log`` subresource): no create, update, patch, delete or
exec. Requests can be stopped (:mod:`opsmate.tools.kubernetes.transport`): Ctrl-C and the
process ending abort the ones in flight instead of waiting for their time-out.

The cluster of an environment is ``environments.<env>.kubernetes``: ``kubeconfig`` (default
``$KUBECONFIG`` / ``~/.kube/config``; the in-cluster service account when there is none) and
``context``, overridden (like ``kubectl --context``) by ``tool_specs(settings,
kube_context=...)``, else by the ``OPSMATE_KUBE_CONTEXT`` environment variable; without any,
the kubeconfig's current context. Namespaces of a call: ``namespace``, else the task's
namespaces (all of them for lists; the first holding the object for gets), else the
configured ones, else the kubeconfig context's, else ``default``. Objects are the JSON the
API server sent (``_preload_content=False``), shaped as bundle replay shapes them: the
client's typed models are skipped because they reject objects lacking a field the OpenAPI
spec marks required (a node without ``nodeInfo.bootID`` would fail the whole call).
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

import opsmate.tools.kubernetes.transport as k8s_transport
from opsmate.timeparse import parse_time
from opsmate.tools import schemas as s
from opsmate.tools.base import (
    CallContext,
    ToolFailure,
    ToolOutput,
    ToolSpec,
    call_environment,
    http_status_code,
)
from opsmate.tools.kubernetes.shaping_common import name_matches, object_name, object_namespace
from opsmate.tools.shaping import (
    event_summary,
    k8s_ref,
    node_summary,
    parse_label_selector,
    pod_summary,
    rollout_history,
)

if TYPE_CHECKING:
    from opsmate.config import KubernetesSource, Settings

KUBE_CONTEXT_ENV = "OPSMATE_KUBE_CONTEXT"
LINE_CHARS = 2000  # a log line longer than this is cut
LIST_LIMIT = 500  # objects per list request
KINDS = {k.lower(): k for k in (
    "Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob", "Node",
    "Service", "Endpoints", "PersistentVolumeClaim", "PersistentVolume", "ConfigMap",
    "HorizontalPodAutoscaler", "Ingress", "Namespace",
)}  # fmt: skip


@dataclass
class _Cluster:
    """One environment's API client, its resolved context and default namespace."""

    api: Any  # kubernetes.client.ApiClient
    core: Any  # CoreV1Api
    apps: Any  # AppsV1Api
    context: str | None
    namespace: str | None
    source: KubernetesSource
    apis: dict[str, Any] = field(default_factory=dict)

    def api_of(self, name: str) -> Any:
        """The kubernetes client API object ``name`` (``NetworkingV1Api`` ...) on this cluster."""
        if name not in self.apis:
            from kubernetes import client

            self.apis[name] = getattr(client, name)(self.api)
        return self.apis[name]


@dataclass
class _Session:
    """One tool call against one cluster: requests under the call's deadline, scope."""

    env: str
    cl: _Cluster
    ctx: CallContext

    @property
    def tz(self) -> Any:
        """The zone the task's times are in (its window's): the objects' times are written in
        it, as the other sources write theirs and a replay writes a bundle's."""
        end = self.ctx.constraints.window_to
        return end.tzinfo if end is not None else None

    def namespaces(self, asked: str | None) -> list[str]:
        if asked:
            return [asked]
        for candidates in (self.ctx.constraints.namespaces, self.cl.source.namespaces):
            if candidates:
                return list(candidates)
        return [self.cl.namespace or "default"]

    def call(
        self, where: str, fn: Callable[..., Any], *args: Any, text: bool = False, **kwargs: Any
    ) -> Any:
        """One API request under the call's remaining time: the JSON the server sent (a log:
        its text). Failures, including an answer that is not JSON, become ToolFailure."""
        from opsmate.tools.wallclock import urllib3_body

        timeout = self.cl.source.timeout
        if self.ctx.deadline is not None:
            timeout = max(min(timeout, self.ctx.deadline - time.monotonic()), 0.05)
        deadline = time.monotonic() + timeout  # the whole request, answer included
        try:
            with k8s_transport.tracked() as aborted:
                try:
                    resp = fn(*args, _request_timeout=timeout, _preload_content=False, **kwargs)
                    raw = urllib3_body(resp, deadline).decode("utf-8", "replace")
                except Exception as exc:
                    if aborted():
                        raise k8s_transport.Interrupted(where) from exc
                    raise
            return raw if text else json.loads(raw)
        except k8s_transport.Interrupted as exc:
            raise ToolFailure(
                "interrupted", f"{where}: stopped (interrupted, or the process is ending)"
            ) from exc
        except Exception as exc:
            raise _failure(exc, where) from exc

    def items(self, where: str, fn: Callable[..., Any], *args: Any, **kw: Any) -> tuple[list, bool]:
        """A list request's items, and whether the list was complete."""
        body = self.call(where, fn, *args, limit=LIST_LIMIT, **kw)
        if not isinstance(body, dict) or not isinstance(body.get("items") or [], list):
            raise ToolFailure("bad_response", f"{where}: the answer is not a list object")
        items = [i for i in body.get("items") or [] if isinstance(i, dict)]  # skip odd items
        meta = body.get("metadata")
        return items, not (meta.get("continue") if isinstance(meta, dict) else None)

    def list_all(self, what: str, fn: Callable[..., Any], namespaces: list[str], **kw: Any
             ) -> tuple[list[dict[str, Any]], bool]:  # fmt: skip
        """The items of a namespaced list in every namespace, and whether all were complete."""
        items: list[dict[str, Any]] = []
        complete = True
        for ns in namespaces:
            got, done = self.items(f"list {what} in {ns}", fn, ns, **kw)
            items += got
            complete &= done
        return items, complete

    def first(self, what: str, fn: Callable[..., Any], name: str, namespaces: list[str],
              **kw: Any) -> tuple[Any, str] | None:  # fmt: skip
        """The answer to a get of ``name`` in the first namespace holding it, else None."""
        from kubernetes.client.exceptions import ApiException

        for ns in namespaces:
            try:
                return self.call(f"{what} {ns}/{name}", fn, name, ns, **kw), ns
            except ToolFailure as exc:
                if exc.code != "not_found" or not isinstance(exc.__cause__, ApiException):
                    raise
        return None

    def scope(self, namespaces: list[str] | None, **items: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"source": "kubernetes", "environment": self.env,
                               "context": self.cl.context}  # fmt: skip
        if namespaces is not None:
            key = "namespace" if len(namespaces) == 1 else "namespaces"
            out[key] = namespaces[0] if len(namespaces) == 1 else namespaces
        out.update(items)
        return {k: v for k, v in out.items() if v is not None}


def _failure(exc: BaseException, where: str) -> ToolFailure:
    """Map an exception from the kubernetes client / urllib3 to a ToolFailure."""
    import urllib3
    from kubernetes.client.exceptions import ApiException

    if isinstance(exc, ToolFailure):
        return exc
    if isinstance(exc, ApiException):
        status = int(exc.status or 0)
        try:
            detail = json.loads(exc.body or "").get("message") or exc.reason
        except (ValueError, AttributeError, TypeError):
            detail = exc.reason or str(exc.body or "")[:300]
        if status in (401, 403):
            return ToolFailure(
                "auth",
                f"the API server ({where}) refused: HTTP {status}: {detail}; check the "
                "kubeconfig credentials and that the user may get/list this resource (RBAC)",
            )
        code, retry = http_status_code(status)
        return ToolFailure(code, f"{where}: HTTP {status}: {detail}", retryable=retry)
    if isinstance(exc, urllib3.exceptions.MaxRetryError) and exc.reason is not None:
        exc = exc.reason
    # NewConnectionError (refused, unresolvable) subclasses ConnectTimeoutError: test it first
    if isinstance(exc, urllib3.exceptions.NameResolutionError):
        return ToolFailure(
            "unreachable", f"{where}: the API server's host does not resolve", retryable=True
        )
    if isinstance(exc, urllib3.exceptions.NewConnectionError):
        return ToolFailure(
            "unreachable", f"{where}: the API server is unreachable: {exc}", retryable=True
        )
    if isinstance(exc, urllib3.exceptions.TimeoutError | TimeoutError):
        return ToolFailure(
            "timeout", f"{where}: the API server did not answer in time", retryable=True
        )
    if isinstance(exc, urllib3.exceptions.SSLError):
        return ToolFailure("unreachable", f"{where}: TLS error: {exc}")
    if isinstance(exc, urllib3.exceptions.HTTPError | ConnectionError):
        return ToolFailure(
            "unreachable", f"{where}: the API server is unreachable: {exc}", retryable=True
        )
    if isinstance(exc, ValueError | TypeError | KeyError | AttributeError):
        return ToolFailure("bad_response", f"{where}: unexpected answer: {str(exc)[:300]}")
    return ToolFailure("internal", f"kubernetes tool failed: {type(exc).__name__}: {exc}")


class KubernetesTools:
    """The Kubernetes tools over the configured environments (clients cached per env)."""

    def __init__(self, settings: Settings, kube_context: str | None = None) -> None:
        self.settings = settings
        self.kube_context = kube_context
        self._clusters: dict[str, _Cluster] = {}
        self._lock = threading.Lock()

    def _session(self, asked: str | None, ctx: CallContext) -> _Session:
        env = call_environment(asked, ctx, self.settings.default_environment)
        with self._lock:
            if env not in self._clusters:
                env_cfg = self.settings.environments.get(env)
                if env_cfg is None or env_cfg.kubernetes is None:
                    raise ToolFailure(
                        "not_configured",
                        f"no Kubernetes configured for environment '{env}'; set "
                        f"environments.{env}.kubernetes (context, kubeconfig) in the config",
                    )
                self._clusters[env] = self._connect(env, env_cfg.kubernetes)
            return _Session(env, self._clusters[env], ctx)

    def _connect(self, env: str, src: KubernetesSource) -> _Cluster:
        from kubernetes import client, config

        context = self.kube_context or os.environ.get(KUBE_CONTEXT_ENV) or src.context
        path = Path(src.kubeconfig).expanduser() if src.kubeconfig else None
        default = Path(os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep)[0])
        cfg = client.Configuration()
        namespace = None
        try:
            if (
                path is None
                and not default.expanduser().exists()
                and (os.environ.get("KUBERNETES_SERVICE_HOST"))
            ):
                config.load_incluster_config(client_configuration=cfg)
            else:
                file = str(path) if path else None
                config.load_kube_config(
                    file, context, client_configuration=cfg, persist_config=False
                )
                contexts, current = config.list_kube_config_contexts(file)
                chosen = next((c for c in contexts if c["name"] == context), current)
                context = chosen["name"] if chosen else context
                namespace = ((chosen or {}).get("context") or {}).get("namespace")
        except (config.ConfigException, OSError, ValueError, TypeError, KeyError) as exc:
            raise ToolFailure(
                "not_configured",
                f"cannot load the Kubernetes config for environment '{env}' (context "
                f"{context or 'current'}): {exc}; check environments.{env}.kubernetes."
                f"kubeconfig / context, or {KUBE_CONTEXT_ENV}",
            ) from exc
        cfg.retries = 0  # the executor retries retryable failures
        api = client.ApiClient(cfg)
        k8s_transport.install(api)  # Ctrl-C and exit stop requests in flight
        return _Cluster(api, client.CoreV1Api(api), client.AppsV1Api(api), context, namespace, src)

    def list_pods(self, args: s.ListPodsArgs, ctx: CallContext) -> ToolOutput:
        """Pods (phase, readiness, restarts, last termination) in the namespace(s)."""
        if args.label_selector:
            try:
                parse_label_selector(args.label_selector)
            except ValueError as exc:
                raise ToolFailure("bad_request", f"argument 'label_selector': {exc}") from exc
        ss = self._session(args.environment, ctx)
        namespaces = ss.namespaces(args.namespace)
        pods, complete = ss.list_all("pods", ss.cl.core.list_namespaced_pod, namespaces,
                                 label_selector=args.label_selector)  # fmt: skip
        pods = [p for p in pods if name_matches(object_name(p), args.name)]
        pods.sort(key=lambda p: (object_namespace(p), object_name(p)))
        return ToolOutput(
            status="success" if pods else "no_data",
            data={"pods": [pod_summary(p, tz=ss.tz) for p in pods], "count": len(pods)},
            scope=ss.scope(namespaces, label_selector=args.label_selector, name=args.name),
            complete=complete,
            source_refs=[_ref(p, "Pod") for p in pods],
        )

    def get_events(self, args: s.GetEventsArgs, ctx: CallContext) -> ToolOutput:
        """Events, newest first, optionally for one involved object (kind and / or name)."""
        ss = self._session(args.environment, ctx)
        namespaces = ss.namespaces(args.namespace)
        kind = KINDS.get(args.kind.lower(), args.kind) if args.kind else None
        parts = [f"involvedObject.kind={kind}"] if kind else []
        parts += [f"involvedObject.name={args.name}"] if args.name else []
        items, complete = ss.list_all("events", ss.cl.core.list_namespaced_event, namespaces,
                                  field_selector=",".join(parts) or None)  # fmt: skip
        items.sort(key=lambda ev: (object_namespace(ev), object_name(ev)))
        picked = sorted(
            ((ev, event_summary(ev, tz=ss.tz)) for ev in items),
            key=lambda p: p[1]["last_timestamp"] or "",
            reverse=True,
        )
        events = [summary for _, summary in picked]
        warnings = sum(1 for e in events if e["type"] == "Warning")
        return ToolOutput(
            status="success" if events else "no_data",
            data={"events": events, "count": len(events), "warnings": warnings},
            scope=ss.scope(namespaces, kind=kind, name=args.name),
            complete=complete,
            source_refs=[_ref(ev, "Event") for ev, _ in picked],
        )

    def rollout_history(self, args: s.RolloutHistoryArgs, ctx: CallContext) -> ToolOutput:
        """A Deployment's revisions from the ReplicaSets it owns."""
        ss = self._session(args.environment, ctx)
        namespaces = ss.namespaces(args.namespace)
        apps = ss.cl.apps
        found = ss.first("get deployment", apps.read_namespaced_deployment, args.name, namespaces)
        if found is None:
            items, _ = ss.list_all("deployments", apps.list_namespaced_deployment, namespaces)
            names = sorted(object_name(d) for d in items)
            return ToolOutput(
                status="no_data",
                data={"message": f"no deployment named {args.name!r}", "deployments": names},
                scope=ss.scope(namespaces, name=args.name),
            )
        ns = found[1]
        dep = found[0] if isinstance(found[0], dict) else {}
        match = _get(dep, "spec", "selector", "matchLabels")
        match = match if isinstance(match, dict) else {}
        selector = ",".join(f"{k}={v}" for k, v in sorted(match.items())) or None
        rs_all, _ = ss.items(f"list replicasets in {ns}", apps.list_namespaced_replica_set, ns,
                             label_selector=selector)  # fmt: skip
        uid = _get(dep, "metadata", "uid")

        def owned(rs: dict[str, Any]) -> bool:
            owners = _get(rs, "metadata", "ownerReferences")
            return any(
                isinstance(o, dict) and o.get("kind") == "Deployment" and o.get("name") == args.name
                and (not uid or not o.get("uid") or o.get("uid") == uid)
                for o in (owners if isinstance(owners, list) else [])
            )  # fmt: skip

        replicasets = [rs for rs in rs_all if owned(rs)] or (rs_all if selector else [])
        replicasets.sort(key=object_name)
        return ToolOutput(
            status="success",
            data=rollout_history(dep, replicasets, tz=ss.tz),
            scope=ss.scope([ns], name=args.name),
            source_refs=[k8s_ref(ns, "Deployment", args.name)]
            + [_ref(rs, "ReplicaSet") for rs in replicasets],
        )

    def node_conditions(self, args: s.NodeConditionsArgs, ctx: CallContext) -> ToolOutput:
        """Conditions, pressure flags and capacity of all nodes or one."""
        ss = self._session(args.environment, ctx)
        core, scope = ss.cl.core, ss.scope(None, name=args.name)
        selector = f"metadata.name={args.name}" if args.name else None
        nodes, complete = ss.items("list nodes", core.list_node, field_selector=selector)
        if args.name and not nodes:
            everything, _ = ss.items("list nodes", core.list_node)
            return ToolOutput(
                status="no_data",
                data={"nodes": [], "message": f"no node named {args.name!r}",
                      "node_names": sorted(object_name(n) for n in everything)},
                scope=scope,
            )  # fmt: skip
        nodes.sort(key=object_name)
        return ToolOutput(
            status="success" if nodes else "no_data",
            data={"nodes": [node_summary(n, tz=ss.tz) for n in nodes], "count": len(nodes)},
            scope=scope,
            complete=complete,
            source_refs=[_ref(n, "Node") for n in nodes],
        )

    def pod_logs(self, args: s.PodLogsArgs, ctx: CallContext) -> ToolOutput:
        """The last ``tail_lines`` lines of one container's log."""
        ss = self._session(args.environment, ctx)
        namespaces = ss.namespaces(args.namespace)
        found = ss.first(
            "log of pod", ss.cl.core.read_namespaced_pod_log, args.name, namespaces,
            container=args.container, tail_lines=args.tail_lines + 1,
            since_seconds=args.since_seconds, text=True, timestamps=True,
            **({"previous": True} if args.previous else {}),
        )  # fmt: skip
        if found is None:
            where = ", ".join(namespaces)
            raise ToolFailure(
                "not_found", f"no pod {args.name!r} in {where}; list_pods shows the pods"
            )
        text, ns = found
        if not isinstance(text, str):
            raise ToolFailure("bad_response", f"log of pod {ns}/{args.name}: not text")
        lines = text.splitlines()
        older = len(lines) > args.tail_lines  # one line more than asked: there is more
        lines = [ln[:LINE_CHARS] + ("…" if len(ln) > LINE_CHARS else "")
                 for ln in lines[-args.tail_lines :]]  # fmt: skip
        from opsmate.loganalysis.parse import parse_line
        from opsmate.loganalysis.podlines import POD_LOGS_CHARS, fit_tail, line_record

        # the kubelet's timestamp of each line is its time; the rest is what the app wrote
        stamped = [split_kubelet_stamp(ln) for ln in lines]
        records = [line_record(parse_line(rest), time=t, previous=args.previous)
                   for t, rest in stamped]  # fmt: skip
        records = records[len(records) - fit_tail(lines, records, POD_LOGS_CHARS) :]
        return ToolOutput(
            status="success" if lines else "no_data",
            data={"lines": lines, "records": records, "returned": len(lines),
                  "older_not_shown": None if older else 0},
            scope=ss.scope([ns], pod=args.name, container=args.container,
                           tail_lines=args.tail_lines, since_seconds=args.since_seconds,
                           previous=True if args.previous else None),
            complete=not older,
            source_refs=[k8s_ref(ns, "Pod", args.name)],
        )  # fmt: skip


_KUBELET_STAMP = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z) (.*)", re.S)


def split_kubelet_stamp(line: str) -> tuple[datetime | None, str]:
    """``(time, rest)`` of a line read with ``timestamps=true`` (the kubelet's RFC 3339
    prefix, always UTC); ``(None, line)`` when the line has none."""
    m = _KUBELET_STAMP.match(line)
    if not m:
        return None, line
    try:
        return parse_time(m.group(1)), m.group(2)
    except (ValueError, OverflowError):
        return None, line


def _ref(obj: dict[str, Any], kind: str) -> str:
    return k8s_ref(object_namespace(obj) or None, kind, object_name(obj))


def _get(obj: Any, *keys: str) -> Any:
    for key in keys:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def tool_specs(settings: Settings, *, kube_context: str | None = None) -> list[ToolSpec]:
    """The Kubernetes tools, or none when no environment configures a cluster.

    ``kube_context`` overrides the context of every environment (a ``--kube-context``
    flag); without it ``OPSMATE_KUBE_CONTEXT``, then the config, decide.
    """
    if not any(e.kubernetes for e in settings.environments.values()):
        return []
    from opsmate.tools.kubernetes.objects import get_object, list_objects

    tools = KubernetesTools(settings, kube_context)
    k8s_transport.hook_sigint()  # here: the registry is built in the main thread
    specs: list[tuple[str, type[BaseModel], Callable[..., ToolOutput]]] = [
        ("list_pods", s.ListPodsArgs, tools.list_pods),
        ("get_events", s.GetEventsArgs, tools.get_events),
        ("rollout_history", s.RolloutHistoryArgs, tools.rollout_history),
        ("node_conditions", s.NodeConditionsArgs, tools.node_conditions),
        ("pod_logs", s.PodLogsArgs, tools.pod_logs),
        ("list_objects", s.ListObjectsArgs, functools.partial(list_objects, tools)),
        ("get_object", s.GetObjectArgs, functools.partial(get_object, tools)),
    ]
    return [ToolSpec(name, s.DESCRIPTIONS[name], model, run) for name, model, run in specs]
