"""The Kubernetes API as a read-only cluster source (pods, events, rollouts, nodes,
objects, pod logs).

- :mod:`.transport`: the API client (kubeconfig, context, time-outs).
- :mod:`.tools`: the tools; :mod:`.objects`: ``get_k8s_objects`` kinds and listing.
- :mod:`.shaping` and ``shaping_*``: pure functions that turn API objects into the
  compact views the engine reads (shared with bundle replay).

The doctor's probe is ``/version`` (:func:`opsmate.health.check_kubernetes`).
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
    from opsmate.tools.kubernetes.tools import tool_specs

    return tool_specs(settings)


def _probe(env: str, block: Any) -> Check:
    from opsmate.health import check_kubernetes

    return check_kubernetes(env, block.context, block.kubeconfig, block.timeout)


SOURCE = Source(
    key="kubernetes",
    kind="cluster",
    order=40,  # after Loki: the Kubernetes API serves pod_logs where both are configured
    tool_specs=_tool_specs,
    probe=_probe,
    fix="is the cluster of environments.{env}.kubernetes reachable from here?",
)
