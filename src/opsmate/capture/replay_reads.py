"""Which parts of a bundle a replayed investigation read (the subset ``--save-bundle`` writes).

Each replayed tool is wrapped at the registry level; after a call answers, the whole
*scope* of the call is marked read: every object of the kinds it consulted in the
namespaces it consulted, every log record its filters match (time range, environment,
service, level, terms), every recording of its query text, the alerts. Replay answers
a call from exactly those items, so the subset answers the same calls with the same
results. Besides, the subset keeps what the sources layer derives from a whole bundle:
one object per namespace (whether the bundle holds one namespace), and the objects and
records that name the services it knows (the Deployments, StatefulSets, DaemonSets and
Services, one record per service).
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from typing import TYPE_CHECKING, Any

from opsmate.tools.base import CallContext, ToolOutput, ToolSpec
from opsmate.tools.kubernetes.shaping_common import object_name, object_namespace

if TYPE_CHECKING:
    from opsmate.tools.bundle import Bundle
    from opsmate.tools.bundle.replay import Replay
    from opsmate.tools.registry import ToolRegistry

_KINDS_OF = {
    "list_pods": ("Pod",),
    "get_events": ("Event",),
    "rollout_history": ("Deployment", "ReplicaSet"),
    "node_conditions": ("Node",),
}


class ReplayReads:
    """The indices of a bundle's objects, records and recordings that calls read."""

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle
        self.objects: set[int] = set()
        self.logs: set[int] = set()
        self.metrics: set[int] = set()
        self.alerts = False
        self.calls = 0
        self._pending: list[tuple[str, Any, CallContext]] = []
        self._lock = threading.Lock()

    @property
    def replay(self) -> Replay:
        return self.bundle.replay

    def wrap(self, registry: ToolRegistry) -> None:
        """Wrap every replayed tool of ``registry`` so its reads are marked."""
        for spec in registry.specs():
            if spec.name == "search_runbooks":
                continue
            registry.register(self._wrapped(spec))

    def _wrapped(self, spec: ToolSpec) -> ToolSpec:
        run, name = spec.run, spec.name

        def wrapped(args: Any, ctx: CallContext) -> ToolOutput:
            out = run(args, ctx)
            with contextlib.suppress(Exception):  # recording must never change an answer
                self.note(name, args, ctx)
            return out

        return dataclasses.replace(spec, run=wrapped)

    def empty(self) -> bool:
        return not self._pending and not (self.objects or self.logs or self.alerts)

    # -- marking ------------------------------------------------------------------------------
    def note(self, tool: str, args: Any, ctx: CallContext) -> None:
        """Remember one answered call; its scope is marked when the subset is asked for
        (:meth:`parts`), so a replay pays nothing for being recorded."""
        frozen = CallContext(call_id=ctx.call_id, now=ctx.now,
                             constraints=ctx.constraints.model_copy(deep=True))  # fmt: skip
        with self._lock:
            self.calls += 1
            self._pending.append((tool, args, frozen))

    def _mark(self, tool: str, args: Any, ctx: CallContext) -> None:
        """Mark the scope of one answered call as read."""
        r = self.replay
        if tool == "query_metrics":
            from opsmate.tools.shaping import normalize_promql

            want = normalize_promql(args.query)
            self.metrics |= {
                i for i, m in enumerate(r.d.metrics) if normalize_promql(m.query) == want
            }
        elif tool == "list_alerts":
            self.alerts = True
            self.metrics |= {
                i for i, m in enumerate(r.d.metrics) if m.query.strip().startswith("ALERTS")
            }
        elif tool in ("search_logs", "log_stats"):
            self._logs(tool, args, ctx)
        elif tool == "pod_logs":
            self._pod_logs(args, ctx)
        elif tool in _KINDS_OF:
            ns = None if tool == "node_conditions" else r.namespaces(args.namespace, ctx)
            for kind in _KINDS_OF[tool]:
                self._kind(kind, ns)
        elif tool in ("list_objects", "get_object"):
            from opsmate.tools.k8s_kinds import KINDS

            info = KINDS[args.kind]
            ns = r.namespaces(args.namespace, ctx) if info.namespaced else None
            self._kind(args.kind, ns)

    def _kind(self, kind: str, namespaces: list[str] | None) -> None:
        low = kind.lower()
        for i, o in enumerate(self.replay.d.objects):
            if str(o.get("kind", "")).lower() != low:
                continue
            if namespaces is None or object_namespace(o) in namespaces:
                self.objects.add(i)

    def _logs(self, tool: str, args: Any, ctx: CallContext) -> None:
        from opsmate.tools.bundle.replay_logs import filter_logs

        r = self.replay
        env = args.environment or ctx.constraints.environment or r.env
        if env != r.env:
            return
        start, end = r.window(args.from_, args.to, ctx, ("from", "to"))
        query = args.query if tool == "search_logs" else None
        hits, _ = filter_logs(r, start=start, end=end, env=env, service=args.service,
                              level=args.level, query=query)  # fmt: skip
        self.logs.update(hits)

    def _pod_logs(self, args: Any, ctx: CallContext) -> None:
        from opsmate.tools.shaping import get_field

        r = self.replay
        for i, rec in enumerate(r.d.logs):
            if str(get_field(rec, "pod") or "") == args.name:
                self.logs.add(i)
        for i, o in enumerate(r.d.objects):  # the termination time of ``previous``
            if o.get("kind") == "Pod" and object_name(o) == args.name:
                self.objects.add(i)

    # -- the subset ---------------------------------------------------------------------------
    def structural(self) -> tuple[set[int], set[int]]:
        """Objects and records that keep what the sources layer derives from the whole bundle
        (its namespaces, object names and services ground the question's names): every
        object but the Events, and the first record of each service."""
        d = self.replay.d
        objects = {i for i, o in enumerate(d.objects) if o.get("kind") != "Event"}
        logs: set[int] = set()
        seen: set[str] = set()
        for i, rec in enumerate(d.logs[:5000]):
            svc = rec.get("service")
            if isinstance(svc, str) and svc and svc not in seen:
                seen.add(svc)
                logs.add(i)
        return objects, logs

    def parts(self) -> dict[str, Any]:
        """The subset: ``objects``, ``logs``, ``metrics`` (metrics.yaml entries), ``alerts``."""
        from opsmate.timeparse import format_time

        d = self.replay.d
        with self._lock:
            for tool, args, ctx in self._pending:
                self._mark(tool, args, ctx)
            self._pending.clear()
            extra_objects, extra_logs = self.structural()
            objects = [d.objects[i] for i in sorted(self.objects | extra_objects)]
            logs = [_with_id(d.logs[i], d.log_lines[i]) for i in sorted(self.logs | extra_logs)]
            metrics = []
            for i in range(len(d.metrics)):  # all: the planner reads the list of recordings
                m = d.metrics[i]
                entry: dict[str, Any] = {"query": m.query, "type": m.type}
                for key in ("start", "end", "time"):
                    value = getattr(m, key)
                    if value is not None:
                        entry[key] = format_time(value)
                if m.step is not None:
                    entry["step"] = m.step
                if m.description:
                    entry["description"] = m.description
                entry["result"] = m.result
                metrics.append(entry)
            alerts = list(d.alerts) if self.alerts and d.alerts is not None else None
        return {"objects": objects, "logs": logs, "metrics": metrics, "alerts": alerts}


def _with_id(rec: dict[str, Any], line: int) -> dict[str, Any]:
    """The record with its replay id kept: without an ``id`` / ``_id`` field, replay names
    a record by its line in ``logs.ndjson``, which the subset changes."""
    if rec.get("id") or rec.get("_id"):
        return rec
    return {**rec, "_id": str(line)}
