"""Prometheus as a read-only metrics source (``query_metrics``, ``list_alerts``).

- :mod:`.tools`: the HTTP API client and the tools over it (instant and range queries,
  shaped by :mod:`opsmate.tools.shaping`).

The doctor's probe is ``GET /api/v1/status/buildinfo`` (:func:`opsmate.health.check_prometheus`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opsmate.tools.source import Source

if TYPE_CHECKING:
    from opsmate.config import Settings
    from opsmate.health import Check
    from opsmate.tools.base import ToolSpec

__all__ = ["SOURCE"]


def _tool_specs(settings: Settings) -> list[ToolSpec]:
    from opsmate.tools.prometheus.tools import tool_specs

    return tool_specs(settings)


def _probe(env: str, block: Any) -> Check:
    from opsmate.health import check_prometheus

    return check_prometheus(env, block.url, block.timeout, block.verify_tls)


SOURCE = Source(key="prometheus", kind="metrics", order=10, tool_specs=_tool_specs, probe=_probe)
