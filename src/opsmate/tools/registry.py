"""The tool registry: the explicit allow-list of tools an executor may run.

Only registered names run; anything else is ``rejected`` with ``unknown_tool``.
:func:`live_registry` assembles the tools served by the configured live sources
(Prometheus, Elasticsearch or Loki, Kubernetes) and, when a retriever is given, runbook
search; a tool several sources provide runs, per call, on the source of the call's environment.
:func:`catalog` describes every stable tool (contracts section 4) for
``opsmate tool --list``, whether or not a source serves it here.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from opsmate.tools.base import RouteFunc, SourceRoute, ToolSpec

if TYPE_CHECKING:
    from opsmate.config import Settings
    from opsmate.knowledge.types import Retriever

log = logging.getLogger(__name__)


def _strip_titles(schema: Any) -> Any:
    """Drop pydantic's generated ``title`` keys (noise in a prompt, not needed to validate)."""
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key == "title" and isinstance(value, str):
                continue
            if key == "properties" and isinstance(value, dict):
                out[key] = {name: _strip_titles(prop) for name, prop in value.items()}
            else:
                out[key] = _strip_titles(value)
        return out
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


def describe_spec(spec: ToolSpec) -> dict[str, Any]:
    """``{"name", "description", "parameters"}``: parameters is the argument JSON schema."""
    return {
        "name": spec.name,
        "description": spec.description,
        "parameters": _strip_titles(spec.json_schema()),
    }


class ToolRegistry:
    """An ordered allow-list of :class:`ToolSpec` by name."""

    def __init__(self, specs: Iterable[ToolSpec] = ()) -> None:
        self._specs: dict[str, ToolSpec] = {}
        self.skipped: dict[str, str] = {}  # source module -> why its tools are missing
        for spec in specs:
            self.register(spec)

    def register(self, spec: ToolSpec) -> None:
        """Allow ``spec``; a later registration of the same name replaces the earlier one."""
        if not spec.name or not spec.name.replace("_", "").isalnum():
            raise ValueError(f"invalid tool name: {spec.name!r}")
        self._specs[spec.name] = spec

    def get(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def names(self) -> list[str]:
        return list(self._specs)

    def specs(self) -> list[ToolSpec]:
        return list(self._specs.values())

    def describe(self) -> list[dict[str, Any]]:
        """Each tool's name, description and argument JSON schema (``parameters``)."""
        return [describe_spec(s) for s in self._specs.values()]

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __len__(self) -> int:
        return len(self._specs)


def block_route(settings: Settings, key: str, env: str | None) -> SourceRoute | None:
    """The route to source ``key`` of environment ``env`` (the default when None), with its
    configured time-out; None when that environment does not configure it."""
    cfg = settings.environments.get(env or settings.default_environment or "")
    block = getattr(cfg, key, None) if cfg is not None else None
    if block is None:
        return None
    timeout = getattr(block, "timeout", None)
    return SourceRoute(key, float(timeout) if isinstance(timeout, int | float) else None)


def _router(settings: Settings, candidates: list[tuple[str, ToolSpec]]) -> RouteFunc:
    """Which of ``candidates`` serves a call: the last whose block the call's environment
    configures (its own ``route`` refines it: Alertmanager's list_alerts hands pending
    alerts to Prometheus)."""

    def route(args: Any, env: str | None) -> SourceRoute | None:
        for key, spec in reversed(candidates):
            found = block_route(settings, key, env)
            if found is None:
                continue
            if spec.route is not None:
                return spec.route(args, env) or found
            return found
        return None

    return route


def _per_environment(settings: Settings, candidates: list[tuple[str, ToolSpec]]) -> ToolSpec:
    """One spec for a tool that several sources provide: each call runs the spec of the last
    source whose block its environment configures (else the last, which says what is missing)."""
    key, last = candidates[-1]
    if len(candidates) == 1 or any(c.args_model is not last.args_model for _, c in candidates):
        # the later registration replaces
        return dataclasses.replace(last, source=key, route=_router(settings, [(key, last)]))

    def run(args: Any, ctx: Any) -> Any:
        env = getattr(args, "environment", None) or ctx.constraints.environment
        cfg = settings.environments.get(env or settings.default_environment or "")
        for key, spec in reversed(candidates):
            if cfg is not None and getattr(cfg, key, None) is not None:
                return spec.run(args, ctx)
        return last.run(args, ctx)

    run.candidates = [spec for _, spec in candidates]  # type: ignore[attr-defined]  # capture
    keys = ",".join(dict.fromkeys(k for k, _ in candidates))
    return dataclasses.replace(last, run=run, source=keys, route=_router(settings, candidates))


def live_registry(settings: Settings, *, retriever: Retriever | None = None) -> ToolRegistry:
    """The live tools for ``settings``, plus ``search_runbooks`` over ``retriever`` if given.

    Sources are the ``SOURCE`` of each package under ``opsmate.tools``
    (:func:`opsmate.tools.source.discover`); one that fails to import (a broken optional
    dependency) is skipped with a warning and listed in ``registry.skipped``, so the other
    sources still work. Errors raised by a source's ``tool_specs`` propagate.
    """
    from opsmate.tools.source import discover

    registry = ToolRegistry()
    found = discover()
    registry.skipped.update(found.skipped)
    offered: dict[str, list[tuple[str, ToolSpec]]] = {}
    for _package, source in found.sources:
        for spec in source.tool_specs(settings):
            offered.setdefault(spec.name, []).append((source.key, spec))
    for candidates in offered.values():
        registry.register(_per_environment(settings, candidates))
    if retriever is not None:
        from opsmate.tools.runbooks import search_runbooks_spec

        registry.register(search_runbooks_spec(retriever))
    return registry


def catalog(registry: ToolRegistry | None = None) -> list[dict[str, Any]]:
    """Every stable tool (contracts section 4) plus any extra registered one.

    Entries are :func:`describe_spec` dicts with ``available``: whether ``registry``
    serves the tool. Stable tools not in the registry are described from
    :mod:`opsmate.tools.schemas`, so the list is complete even with no source configured.
    """
    from opsmate.tools.schemas import ARGS_MODELS, DESCRIPTIONS

    registry = registry or ToolRegistry()
    entries: list[dict[str, Any]] = []
    for name, model in ARGS_MODELS.items():
        spec = registry.get(name)
        if spec is not None:
            entry = describe_spec(spec)
        else:
            entry = {
                "name": name,
                "description": DESCRIPTIONS.get(name, ""),
                "parameters": _strip_titles(model.model_json_schema(by_alias=True)),
            }
        entry["available"] = spec is not None
        entries.append(entry)
    for spec in registry.specs():
        if spec.name not in ARGS_MODELS:
            entries.append({**describe_spec(spec), "available": True})
    return entries
