"""Helpers the Kubernetes object analyzers share (no analyzer is registered here).

- :func:`ingest`: a ``list_objects`` / ``get_object`` answer into the object graph, as
  listings (complete or not, per namespace) and explicit misses, so absence is provable;
- :func:`evidence`: the E ids a graph fact rests on (the objects' own answers and the
  answer proving an absence), never the unrelated result that triggered the re-run;
- :func:`k8s_fact`: one :class:`Fact` with terms, focus and a stable key;
- :func:`graph_cached`: a graph analyzer re-runs only when the graph (or the focus)
  changed since its last run — most results (logs, metrics) add no object;
- :class:`LabelIndex`: the pods of a namespace by label, so that matching many selectors
  against many pods stays cheap.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.graph import CLUSTER_SCOPED, ObjectGraph
from opsmate.agent.observe.text import clip
from opsmate.agent.signals import match_terms
from opsmate.records.base import Record
from opsmate.records.k8s import Pod
from opsmate.records.payloads import ObjectsPayload
from opsmate.tools.base import ToolResult


def scope_namespaces(result: ToolResult) -> list[str | None]:
    """The namespaces an answer covers (``[None]``: all of them, or a cluster-scoped kind)."""
    scope = result.scope or {}
    if isinstance(scope.get("namespace"), str):
        return [scope["namespace"]]
    many = scope.get("namespaces")
    if isinstance(many, list) and many:
        return [str(n) for n in many]
    arg = result.args.get("namespace") if isinstance(result.args, dict) else None
    if isinstance(arg, str) and arg:
        return [arg]
    return [None] if many == "all" or scope.get("source") == "bundle" else []


def ingest(result: ToolResult, ctx: ObserveContext) -> tuple[str | None, list[Record]]:
    """Add the records of a ``list_objects`` / ``get_object`` answer to ``ctx.graph``.

    A list is a listing per namespace it covered (complete only when the answer was, and
    never when a label selector narrowed it); a get that found nothing is a miss in each
    namespace it searched. A ``not_available`` or failed answer adds nothing: it proves
    nothing. Returns the kind and the records."""
    payload = result.payload_as(ObjectsPayload) or ObjectsPayload()
    kind, records = payload.kind, list(payload.items)
    if kind is None or result.error is not None or result.status in ("error", "rejected"):
        return kind, []
    g = ctx.graph
    cluster = kind in CLUSTER_SCOPED
    if result.tool == "get_object":
        for r in records:
            g.add(kind, r, ctx.eid)
        name = payload.name
        if not records and payload.found is False and isinstance(name, str):
            for ns in [None] if cluster else (scope_namespaces(result) or []):
                g.add_miss(kind, ns, name, ctx.eid)
        return kind, records
    selector = result.args.get("label_selector") or None
    covered: list[str | None] = [None] if cluster else scope_namespaces(result)
    if not cluster and covered == [None]:  # "all namespaces" of a bundle: each one it holds
        held = {str(getattr(r, "namespace", None) or "") for r in records} - {""}
        covered = list(sorted(held))
    for ns in covered:
        mine = [r for r in records if ns is None or getattr(r, "namespace", None) == ns]
        g.add_listing(
            kind, mine, ctx.eid, namespace=ns, selector=selector, complete=bool(result.complete)
        )
    return kind, records


def evidence(g: ObjectGraph, *refs: tuple[str, str | None, str | None] | str | None) -> list[str]:
    """E ids of the objects ``(kind, namespace, name)`` (their answers) and of plain ids."""
    out: list[str] = []
    for ref in refs:
        if ref is None:
            continue
        if isinstance(ref, str):
            eid: str | None = ref
        else:
            kind, ns, name = ref
            eid = g.source_of(kind, ns, name) if name else None
        if eid and eid not in out:
            out.append(eid)
    return out


def ref(kind: str, name: str | None, namespace: str | None = None) -> ObjRef:
    ns = None if kind in CLUSTER_SCOPED else namespace
    return ObjRef(kind=kind, name=str(name or "?"), namespace=ns)


def k8s_fact(
    ctx: ObserveContext,
    kind: FactKind,
    key: str,
    statement: str,
    *,
    subject: ObjRef,
    evidence: list[str],
    objects: Iterable[ObjRef] = (),
    severity: str = "error",
    service: str | None = None,
    reason: str | None = None,
    message: str | None = None,
    detail: dict[str, Any] | None = None,
    quote: str | None = None,
    count: int = 1,
    conclusive: bool = False,
) -> Fact:
    """A fact about a Kubernetes object (``key`` is prefixed ``k8s:``; terms from the
    statement, the reason and the message; focus when any named object is in focus)."""
    objs = [o for o in objects if o.key() != subject.key()]
    objs = list({o.key(): o for o in objs}.values())
    names = [subject.name, *(o.name for o in objs), service]
    return Fact(
        key=f"k8s:{key}",
        statement=statement,
        evidence=evidence or ([ctx.eid] if ctx.eid else []),
        kind=kind,
        severity=severity,  # type: ignore[arg-type,unused-ignore]
        service=service,
        quote=quote
        or (f"{reason}: {clip(message, 200)}" if reason and message else clip(statement, 240)),
        terms=list(match_terms(f"{statement} {reason or ''} {message or ''}"))[:24],
        focus=ctx.is_focus(*names),
        count=count,
        subject=subject,
        objects=objs,
        reason=reason,
        message=message,
        conclusive=conclusive,
        detail=detail or {},
    )


def quoted(values: Iterable[str], limit: int = 4) -> str:
    """```a`, `b`, `c` and 2 more`` (empty text when there is nothing)."""
    vals = [v for v in values if v]
    shown = ", ".join(f"`{v}`" for v in vals[:limit])
    return shown + (f" and {len(vals) - limit} more" if len(vals) > limit else "")


def labels_text(labels: dict[str, str], keys: Iterable[str] | None = None) -> str:
    keys = list(keys) if keys is not None else sorted(labels)
    return ",".join(f"{k}={labels[k]}" for k in keys if k in labels)


_CACHE: dict[int, tuple[weakref.ref[ObjectGraph], dict[str, tuple[Any, list[Fact]]]]] = {}


def _fingerprint(ctx: ObserveContext) -> tuple[Any, ...]:
    g = ctx.graph
    return (
        len(g.listings),
        len(g.misses),
        len(g.events),
        frozenset(g.sources.values()),
        sum(len(v) for v in g.objects.values()),
        tuple(ctx.focus),
        ctx.subject.model_dump_json(),
    )


def graph_cached(
    fn: Callable[[ObserveContext], list[Fact]],
) -> Callable[[ObserveContext], list[Fact]]:
    """Run ``fn`` only when the graph changed since its last run on that graph (the facts
    of the last run are returned, as copies, otherwise)."""

    @functools.wraps(fn)
    def wrapper(ctx: ObserveContext) -> list[Fact]:
        g = ctx.graph
        entry = _CACHE.get(id(g))
        if entry is None or entry[0]() is not g:
            for k in [k for k, (r, _) in _CACHE.items() if r() is None]:
                del _CACHE[k]
            entry = (weakref.ref(g), {})
            _CACHE[id(g)] = entry
        key = _fingerprint(ctx)
        hit = entry[1].get(fn.__name__)
        if hit is not None and hit[0] == key:
            return [f.model_copy(deep=True) for f in hit[1]]
        facts = fn(ctx)
        entry[1][fn.__name__] = (key, [f.model_copy(deep=True) for f in facts])
        return facts

    return wrapper


class LabelIndex:
    """Pods by (label, value): the pods a selector's ``matchLabels`` match, by set
    intersection instead of a scan per selector."""

    def __init__(self, pods: Iterable[Pod]) -> None:
        self.pods = [p for p in pods if p.name]
        self.by: dict[tuple[str, str], set[int]] = {}
        for i, p in enumerate(self.pods):
            for k, v in p.labels.items():
                self.by.setdefault((k, v), set()).add(i)

    def matching(self, labels: dict[str, str]) -> list[Pod]:
        """Pods carrying every ``labels`` pair (an empty map matches every pod)."""
        if not labels:
            return list(self.pods)
        sets = [self.by.get((k, v), set()) for k, v in labels.items()]
        hit = set.intersection(*sets) if sets else set()
        return [self.pods[i] for i in sorted(hit)]
