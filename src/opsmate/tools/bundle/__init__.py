"""Incident bundles (contracts section 2): load one, and serve the stable tools from it.

A bundle is a captured, read-only picture of an incident (``bundle.yaml``,
``metrics.yaml``, ``logs.ndjson``, ``k8s/*.yaml``, ``runbooks/``, ``expected.yaml``,
optionally ``alerts.yaml``), as a directory or a ``.tar.gz``. :func:`load_bundle`
validates everything up front (errors name the file and line), and
:meth:`Bundle.tool_specs` serves the same tool names and argument models as the live
sources, so the engine investigates a bundle exactly as it would a cluster.

Replay callers should build their executor with ``now=bundle.meta.captured_at`` and
the task window defaulting to ``bundle.window``, so relative times (``-30m``) mean
what they meant at capture time.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, create_model

from opsmate.errors import BundleError
from opsmate.tools.base import ToolOutput, ToolSpec
from opsmate.tools.bundle import replay_k8s as k8s
from opsmate.tools.bundle import replay_logs as logs
from opsmate.tools.bundle.archive import extract_archive, is_archive
from opsmate.tools.bundle.load import (
    BUNDLE_FORMAT,
    BundleMeta,
    Expected,
    RecordedQuery,
    load_dir,
    load_expected,
)
from opsmate.tools.bundle.replay import Replay
from opsmate.tools.schemas import ARGS_MODELS, DESCRIPTIONS, QueryMetricsArgs

if TYPE_CHECKING:
    from opsmate.knowledge.types import Retriever

__all__ = [
    "BUNDLE_FORMAT",
    "Bundle",
    "BundleMeta",
    "Expected",
    "RecordedQuery",
    "load_bundle",
]

_TOOL_ORDER = (
    "query_metrics",
    "list_alerts",
    "search_logs",
    "log_stats",
    "list_pods",
    "get_events",
    "rollout_history",
    "node_conditions",
    "pod_logs",
    "list_objects",
    "get_object",
)


_SOURCE_OF = {  # which kind of source each replayed tool reads
    "query_metrics": "metrics",
    "list_alerts": "alerts",
    "search_logs": "logs",
    "log_stats": "logs",
    "pod_logs": "logs",
    **{t: "kubernetes" for t in ("list_pods", "get_events", "rollout_history",
                                 "node_conditions", "list_objects", "get_object")},
}  # fmt: skip

_SERVED_BY = {  # the live sources that serve each tool
    "query_metrics": {"prometheus"},
    "list_alerts": {"prometheus", "alertmanager"},
    "search_logs": {"elasticsearch", "loki"},
    "log_stats": {"elasticsearch", "loki"},
    "pod_logs": {"kubernetes", "loki"},
    **{t: {"kubernetes"} for t in ("list_pods", "get_events", "rollout_history",
                                   "node_conditions", "list_objects", "get_object")},
}  # fmt: skip

# replay reads a local bundle: nothing can hang, but a busy laptop can be slow (150k log
# records under load); the diagnosis's own deadline still bounds the whole run
REPLAY_TIMEOUT_S = 60.0


class Bundle:
    """A loaded, validated incident bundle and its replayed tools."""

    def __init__(self, root: Path, source: Path) -> None:
        name = source.name
        for suffix in (".tar.gz", ".tgz", ".tar"):
            name = name.removesuffix(suffix)
        data = load_dir(root, default_title=name)
        self.root = root  # the directory holding bundle.yaml (an extraction for archives)
        self.source = source  # what the user named: a directory or an archive
        self.meta: BundleMeta = data.meta
        self._expected: Expected | None = None
        self._expected_read = False
        runbooks = root / "runbooks"
        self.runbooks_dir: Path | None = runbooks if runbooks.is_dir() else None
        self.metrics: list[RecordedQuery] = data.metrics
        self.logs: list[dict[str, Any]] = data.logs
        self.objects: list[dict[str, Any]] = data.objects
        self.alerts: list[dict[str, Any]] | None = data.alerts
        self.replay = Replay(data)

    def __repr__(self) -> str:
        return f"Bundle({self.meta.title!r}, env={self.meta.environment!r}, root={self.root})"

    @property
    def expected(self) -> Expected | None:
        """The answer key (``expected.yaml``), read on first use: only ``opsmate eval`` asks
        for it, so a malformed key never stops ``diagnose`` or ``tool`` (BundleError here)."""
        if not self._expected_read:
            self._expected = load_expected(self.root)
            self._expected_read = True
        return self._expected

    @property
    def question(self) -> str | None:
        """The default question of ``bundle.yaml`` (``opsmate eval`` prefers the answer
        key's, see :mod:`opsmate.evaluation.runner`)."""
        return self.meta.question

    @property
    def window(self) -> tuple[datetime, datetime]:
        """The captured time window (from, to)."""
        return self.meta.window_from, self.meta.window_to

    def recorded_queries(self) -> list[str]:
        """The distinct recorded PromQL query texts (the only ones ``query_metrics`` answers)."""
        return self.replay.recorded_queries()

    def tool_specs(self, retriever: Retriever | None = None) -> list[ToolSpec]:
        """The replayed tools, with the live tools' names and argument models.

        ``query_metrics`` uses a subclass of :class:`QueryMetricsArgs` whose JSON schema
        lists the recorded queries as the ``enum`` of ``query`` (validation is unchanged:
        other text is answered ``not_available`` with the list). ``search_runbooks``
        is included only when a ``retriever`` (:class:`~opsmate.knowledge.types.Retriever`)
        is given.
        """
        runs: dict[str, Callable[..., ToolOutput]] = {
            "query_metrics": self.replay.query_metrics,
            "list_alerts": self.replay.list_alerts,
            "search_logs": functools.partial(logs.search_logs, self.replay),
            "log_stats": functools.partial(logs.log_stats, self.replay),
            "pod_logs": functools.partial(logs.pod_logs, self.replay),
            "list_pods": functools.partial(k8s.list_pods, self.replay),
            "get_events": functools.partial(k8s.get_events, self.replay),
            "rollout_history": functools.partial(k8s.rollout_history, self.replay),
            "node_conditions": functools.partial(k8s.node_conditions, self.replay),
            "list_objects": functools.partial(k8s.list_objects, self.replay),
            "get_object": functools.partial(k8s.get_object, self.replay),
        }
        specs = []
        for name in self._offered():
            model = self._query_model() if name == "query_metrics" else ARGS_MODELS[name]
            specs.append(
                ToolSpec(
                    name=name,
                    description=f"{DESCRIPTIONS[name]} (replayed from incident bundle)",
                    args_model=model,
                    run=self._captured(name, runs[name]),
                    timeout_s=REPLAY_TIMEOUT_S,
                )
            )
        if retriever is not None:
            from opsmate.tools.runbooks import search_runbooks_spec

            specs.append(search_runbooks_spec(retriever))
        return specs

    def _offered(self) -> list[str]:
        """The tools replay serves: all of them, or, for a bundle that lists the live
        sources its run had (``capture.sources``), those sources' tools only."""
        listed = self.meta.captured_sources
        if listed is None:
            return list(_TOOL_ORDER)
        return [t for t in _TOOL_ORDER if _SERVED_BY[t] & set(listed)]

    def _captured(self, name: str, run: Callable[..., ToolOutput]) -> Callable[..., ToolOutput]:
        """``run``, answered "not captured" when the bundle holds nothing of its source."""
        source = _SOURCE_OF[name]

        def guarded(args: Any, ctx: Any) -> ToolOutput:
            missing = self.replay.not_captured(source, getattr(args, "environment", None), ctx)
            return missing if missing is not None else run(args, ctx)

        return guarded

    def _query_model(self) -> type[BaseModel]:
        queries: list[Any] = list(self.recorded_queries())
        if not queries:
            return QueryMetricsArgs
        model: type[BaseModel] = create_model(
            "BundleQueryMetricsArgs",
            __base__=QueryMetricsArgs,
            query=(
                str,
                Field(
                    description="PromQL expression; this bundle answers only these recorded "
                    "queries (text must match, whitespace aside)",
                    json_schema_extra={"enum": queries},
                ),
            ),
        )
        return model


def load_bundle(path: Path | str) -> Bundle:
    """Load and validate a bundle directory or ``.tar.gz``; raise BundleError when invalid."""
    p = Path(path).expanduser()
    if p.is_dir():
        return Bundle(p, p)
    if is_archive(p):
        return Bundle(extract_archive(p), p)
    if not p.exists():
        raise BundleError(f"{p}: no such bundle directory or archive")
    raise BundleError(
        f"{p}: not a bundle (expected a directory with bundle.yaml, or a .tar.gz of one)"
    )
