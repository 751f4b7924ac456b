"""Elasticsearch as a read-only log source (``search_logs``, ``log_stats``).

- :mod:`.tools`: the client and the tools (``_search`` with ``search_after`` paging).
- :mod:`.aggs`: the aggregations ``log_stats`` asks for and how their answers are read.

Parsing, templates and statistics are shared with the other log sources
(:mod:`opsmate.loganalysis`). The doctor's probe is ``GET /``
(:func:`opsmate.health.check_elasticsearch`).
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
    from opsmate.tools.elasticsearch.tools import tool_specs

    return tool_specs(settings)


def _probe(env: str, block: Any) -> Check:
    from opsmate.health import check_elasticsearch

    return check_elasticsearch(env, block.url, block.timeout, block.verify_tls)


SOURCE = Source(key="elasticsearch", kind="logs", order=20, tool_specs=_tool_specs, probe=_probe)
