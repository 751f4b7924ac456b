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

from typing import TYPE_CHECKING

from opsmate.tools import schemas as s
from opsmate.tools.base import ToolSpec

if TYPE_CHECKING:
    from opsmate.config import Settings

__all__ = ["SOURCE_KEY", "tool_specs"]

SOURCE_KEY = "loki"  # the key of an environment's config block this source serves


def tool_specs(settings: Settings) -> list[ToolSpec]:
    """``search_logs``, ``log_stats`` and ``pod_logs``; none when no environment has Loki."""
    from opsmate.tools.loki.tools import tool_specs_for

    return [
        ToolSpec(name, s.DESCRIPTIONS[name], s.ARGS_MODELS[name], run)
        for name, run in tool_specs_for(settings)
    ]
