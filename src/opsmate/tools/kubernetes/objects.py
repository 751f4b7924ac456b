"""``list_objects`` and ``get_object``: the allow-listed kinds, live (GET and LIST only).

Each call reads one kind of :mod:`opsmate.tools.k8s_kinds` through the kubernetes
client's typed API method for it, with ``_preload_content=False`` (the JSON the server
sent; the typed models reject objects lacking a field the OpenAPI spec marks required),
and shapes it with :func:`~opsmate.tools.kubernetes.shaping_objects.shape_object`, as bundle
replay does. Secrets are requested as ``PartialObjectMetadata`` (the ``Accept`` header
below), so their data never leaves the API server. Namespaced kinds are read in the
call's namespace(s) (see :class:`~opsmate.tools.kubernetes.tools.KubernetesTools`), cluster-
scoped kinds cluster-wide. A 403 on one kind is an ``auth`` error of that call only.

``data``: ``{"kind", "items": [record ...], "count"}``; a get adds ``name`` and ``found``
(false, with status ``no_data``, when the object does not exist: the proof of absence).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from opsmate.tools import schemas as s
from opsmate.tools.base import CallContext, ToolFailure, ToolOutput
from opsmate.tools.k8s_kinds import KINDS, KindInfo
from opsmate.tools.kubernetes.shaping import parse_label_selector
from opsmate.tools.kubernetes.shaping_common import k8s_ref, object_name, object_namespace
from opsmate.tools.kubernetes.shaping_objects import shape_object


class _Session(Protocol):
    """What these tools use of one call's cluster session (:mod:`opsmate.tools.kubernetes.tools`
    provides it; a protocol here, so this module does not import that one back)."""

    cl: Any

    @property
    def tz(self) -> Any: ...  # the zone the task's times are in

    def namespaces(self, asked: str | None) -> list[str]: ...

    def call(
        self, where: str, fn: Callable[..., Any], *args: Any, text: bool = False, **kwargs: Any
    ) -> Any: ...

    def items(
        self, where: str, fn: Callable[..., Any], *args: Any, **kw: Any
    ) -> tuple[list, bool]: ...

    def list_all(self, what: str, fn: Callable[..., Any], namespaces: list[str], **kw: Any
                 ) -> tuple[list[dict[str, Any]], bool]: ...  # fmt: skip

    def scope(self, namespaces: list[str] | None, **items: Any) -> dict[str, Any]: ...


class KubernetesTools(Protocol):
    """The live Kubernetes tools, as far as these two use them."""

    def _session(self, asked: str | None, ctx: CallContext) -> _Session: ...


PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
PARTIAL_ONE = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"


def _check_selector(selector: str | None) -> None:
    if selector:
        try:
            parse_label_selector(selector)
        except ValueError as exc:
            raise ToolFailure("bad_request", f"argument 'label_selector': {exc}") from exc


def _method(ss: _Session, info: KindInfo, which: str) -> Any:
    api = ss.cl.api_of(info.api)
    if info.custom:
        return _custom(api, info, which)
    return getattr(api, info.list_method() if which == "list" else info.read_method())


def _custom(api: Any, info: KindInfo, which: str) -> Any:
    """A custom resource's list / get with the call shape of the typed APIs: ``(namespace,
    **kw)`` / ``(**kw)`` to list, ``(name, namespace, **kw)`` / ``(name, **kw)`` to get."""
    g, v, plural = info.group, info.version, info.resource
    if which == "list":
        if info.namespaced:
            return lambda ns, **kw: api.list_namespaced_custom_object(g, v, ns, plural, **kw)
        return lambda **kw: api.list_cluster_custom_object(g, v, plural, **kw)
    if info.namespaced:
        return lambda name, ns, **kw: api.get_namespaced_custom_object(g, v, ns, plural, name, **kw)
    return lambda name, **kw: api.get_cluster_custom_object(g, v, plural, name, **kw)


def _headers(info: KindInfo, many: bool) -> dict[str, Any]:
    if not info.metadata_only:
        return {}
    return {"_headers": {"Accept": PARTIAL_LIST if many else PARTIAL_ONE}}


def object_ref(info: KindInfo, obj: dict[str, Any]) -> str:
    ns = object_namespace(obj) if info.namespaced else None
    return k8s_ref(ns or None, info.kind, object_name(obj))


def list_objects(tools: KubernetesTools, args: s.ListObjectsArgs, ctx: CallContext) -> ToolOutput:
    """Objects of one allow-listed kind in the namespace(s) (cluster-wide for cluster kinds)."""
    info = KINDS[args.kind]
    _check_selector(args.label_selector)
    ss = tools._session(args.environment, ctx)
    fn = _method(ss, info, "list")
    kw = {"label_selector": args.label_selector, **_headers(info, True)}
    namespaces: list[str] | None = None
    try:
        if info.namespaced:
            namespaces = ss.namespaces(args.namespace)
            items, complete = ss.list_all(info.resource, fn, namespaces, **kw)
        else:
            items, complete = ss.items(f"list {info.resource}", fn, **kw)
    except ToolFailure as exc:
        if exc.code != "not_found":
            raise
        raise _not_served(info, exc) from exc
    items.sort(key=lambda o: (object_namespace(o), object_name(o)))
    return ToolOutput(
        status="success" if items else "no_data",
        data={
            "kind": info.kind,
            "items": [shape_object(info.kind, o, tz=ss.tz) for o in items],
            "count": len(items),
        },
        scope=ss.scope(namespaces, kind=info.kind, label_selector=args.label_selector),
        complete=complete,
        source_refs=[object_ref(info, o) for o in items],
    )


def _object_missing(exc: ToolFailure, name: str) -> bool:
    """Whether a 404 says the object does not exist (its Status names it), rather than that
    the API server does not serve the resource at all."""
    from kubernetes.client.exceptions import ApiException

    cause = exc.__cause__
    if exc.code != "not_found" or not isinstance(cause, ApiException):
        return False
    try:
        details = json.loads(cause.body or "{}").get("details") or {}
    except (ValueError, AttributeError, TypeError):
        return False
    return isinstance(details, dict) and details.get("name") == name


def _not_served(info: KindInfo, exc: ToolFailure) -> ToolFailure:
    """A 404 that is not about one object: the resource is not served (an older cluster)."""
    return ToolFailure(
        "not_available",
        f"the API server does not serve {info.resource} ({info.api_version}): {exc.message}",
    )


def get_object(tools: KubernetesTools, args: s.GetObjectArgs, ctx: CallContext) -> ToolOutput:
    """One object by name; ``found: false`` (status ``no_data``) when it does not exist."""
    info = KINDS[args.kind]
    ss = tools._session(args.environment, ctx)
    fn = _method(ss, info, "read")
    kw = _headers(info, False)
    namespaces = ss.namespaces(args.namespace) if info.namespaced else None
    found: tuple[Any, str | None] | None = None
    spaces: list[str | None] = list(namespaces) if namespaces else [None]
    for ns in spaces:
        where = f"get {info.resource} {ns + '/' if ns else ''}{args.name}"
        call_args = (args.name, ns) if ns else (args.name,)
        try:
            found = ss.call(where, fn, *call_args, **kw), ns
            break
        except ToolFailure as exc:
            if _object_missing(exc, args.name):
                continue
            if exc.code != "not_found":
                raise
            raise _not_served(info, exc) from exc
    base = {"kind": info.kind, "name": args.name}
    if found is None or not isinstance(found[0], dict):
        inside = f" in {', '.join(namespaces)}" if namespaces else ""
        return ToolOutput(
            status="no_data",
            data={
                **base,
                "found": False,
                "items": [],
                "count": 0,
                "message": f"{info.kind} {args.name!r} does not exist{inside}",
            },
            scope=ss.scope(namespaces, kind=info.kind, name=args.name),
        )
    obj, ns = found
    shaped = shape_object(info.kind, obj, tz=ss.tz)
    return ToolOutput(
        status="success",
        data={**base, "found": True, "items": [shaped], "count": 1},
        scope=ss.scope([ns] if ns else None, kind=info.kind, name=args.name),
        source_refs=[object_ref(info, obj)],
    )
