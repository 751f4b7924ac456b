"""Loki as a log source: ``search_logs``, ``log_stats`` and ``pod_logs`` over Loki's HTTP API.

Per environment, ``environments.<env>.loki`` gives the URL, the tenant and which stream
labels hold the service, namespace, pod, container, level (and, optionally, environment
and record id); an environment has either ``elasticsearch`` or ``loki``. The tools take
the same arguments as the Elasticsearch ones and answer with the same envelope and data
shapes (:mod:`opsmate.tools.loki.tools`); queries are LogQL built from the same filters
(:mod:`opsmate.tools.loki.logql`). ``pod_logs`` serves environments whose pods' logs come
from Loki; where Kubernetes is configured too, the Kubernetes API serves it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opsmate.tools import schemas as s
from opsmate.tools.base import ToolSpec
from opsmate.tools.source import Source

if TYPE_CHECKING:
    from opsmate.config import Settings
    from opsmate.health import Check

__all__ = ["SOURCE", "tool_specs"]


def tool_specs(settings: Settings) -> list[ToolSpec]:
    """``search_logs``, ``log_stats`` and ``pod_logs``; none when no environment has Loki."""
    from opsmate.tools.loki.tools import tool_specs_for

    return [
        ToolSpec(name, s.DESCRIPTIONS[name], s.ARGS_MODELS[name], run)
        for name, run in tool_specs_for(settings)
    ]


def _probe(env: str, block: Any) -> Check:
    from opsmate.tools.loki.health import check_loki

    return check_loki(env, block)


SOURCE = Source(
    key="loki",
    kind="logs",
    order=30,  # before Kubernetes: the Kubernetes API serves pod_logs where both are configured
    tool_specs=tool_specs,
    probe=_probe,
)
