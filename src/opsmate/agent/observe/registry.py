"""The analyzer registry: which analyzers read which tool's results.

Two sorts of analyzer, each a small function registered with a decorator:

- a *result analyzer* ``(result, ctx) -> list[Fact]`` reads one tool result (through
  the records of :mod:`opsmate.records`), may add its objects to ``ctx.graph``, and
  returns the facts it found, each citing ``ctx.eid``;
- a *graph analyzer* ``(ctx) -> list[Fact]`` relates objects already in the graph (a
  Service and the pods its selector matches); it runs after every result, so it must be
  idempotent (stable fact keys) and cheap.

An analyzer that raises is reported in ``ctx.notes`` and skipped: an odd object never
stops an investigation.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from functools import partial

from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact
from opsmate.tools.base import ToolResult

ResultAnalyzer = Callable[[ToolResult, ObserveContext], list[Fact]]
GraphAnalyzer = Callable[[ObserveContext], list[Fact]]

_RESULT: dict[str, list[ResultAnalyzer]] = {}
_GRAPH: list[GraphAnalyzer] = []
_loaded = False


def for_tools(*tools: str) -> Callable[[ResultAnalyzer], ResultAnalyzer]:
    """Register a result analyzer for the named tools."""

    def deco(fn: ResultAnalyzer) -> ResultAnalyzer:
        for t in tools:
            if fn not in _RESULT.setdefault(t, []):
                _RESULT[t].append(fn)
        return fn

    return deco


def over_graph(fn: GraphAnalyzer) -> GraphAnalyzer:
    """Register a graph analyzer."""
    if fn not in _GRAPH:
        _GRAPH.append(fn)
    return fn


def _load() -> None:
    global _loaded
    if _loaded:
        return
    from opsmate.agent.observe import analyzers

    for mod in pkgutil.iter_modules(analyzers.__path__):
        importlib.import_module(f"{analyzers.__name__}.{mod.name}")
    _loaded = True


def result_analyzers(tool: str) -> list[ResultAnalyzer]:
    _load()
    return list(_RESULT.get(tool, []))


def graph_analyzers() -> list[GraphAnalyzer]:
    _load()
    return list(_GRAPH)


def observe(result: ToolResult, ctx: ObserveContext) -> list[Fact]:
    """Facts in one result: one that looked (success or partial), or an empty answer without
    an error (a get that found nothing, an empty list: proof that something is absent)."""
    looked = result.status in ("success", "partial")
    empty = result.status == "no_data" and result.error is None
    if not (looked or empty):
        return []
    facts: list[Fact] = []
    for fn in result_analyzers(result.tool):
        facts += _guarded(fn.__name__, result.tool, ctx, partial(fn, result, ctx))
    return facts


def observe_graph(ctx: ObserveContext) -> list[Fact]:
    """Facts that relate objects in the graph (re-run after each result)."""
    facts: list[Fact] = []
    for fn in graph_analyzers():
        facts += _guarded(fn.__name__, "graph", ctx, partial(fn, ctx))
    return facts


def _guarded(
    name: str, what: str, ctx: ObserveContext, call: Callable[[], list[Fact]]
) -> list[Fact]:
    try:
        return list(call())
    except Exception as exc:  # an odd shape must never stop the investigation
        ctx.notes.append(f"analyzer {name} could not read {what} {ctx.eid}: {type(exc).__name__}")
        return []
