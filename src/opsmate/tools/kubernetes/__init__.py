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


def api_server(block: Any) -> str:
    """``context dev-1, https://10.0.0.1:6443``: where a ``kubernetes`` block points (its
    kubeconfig's context and that cluster's server, read from the file without the
    client), for naming an API server that is down; the context alone when unreadable."""
    import os
    from pathlib import Path

    from opsmate.tools.kubernetes.tools import KUBE_CONTEXT_ENV

    context = os.environ.get(KUBE_CONTEXT_ENV) or getattr(block, "context", None)
    raw = getattr(block, "kubeconfig", None) or os.environ.get("KUBECONFIG", "").split(":")[0]
    path = Path(raw or "~/.kube/config").expanduser()
    server = None
    try:
        import yaml

        if path.is_file() and path.stat().st_size < (4 << 20):
            doc = yaml.safe_load(path.read_text(encoding="utf-8", errors="replace"))
            doc = doc if isinstance(doc, dict) else {}
            context = context or doc.get("current-context")
            ctx = next(
                (c.get("context") for c in doc.get("contexts") or []
                 if isinstance(c, dict) and c.get("name") == context),
                None,
            )  # fmt: skip
            cluster_name = ctx.get("cluster") if isinstance(ctx, dict) else None
            cluster = next(
                (c.get("cluster") for c in doc.get("clusters") or []
                 if isinstance(c, dict) and c.get("name") == cluster_name),
                None,
            )  # fmt: skip
            server = cluster.get("server") if isinstance(cluster, dict) else None
    except Exception:  # a name is a nicety: the context alone will do
        server = None
    where = f"context {context}" if context else "current context"
    if not isinstance(server, str) or not server:
        return where
    scheme, sep, rest = server.rpartition("://")
    return f"{where}, {scheme}{sep}{rest.rsplit('@', 1)[-1].split('?', 1)[0]}"  # no userinfo


SOURCE = Source(
    key="kubernetes",
    kind="cluster",
    order=40,  # after Loki: the Kubernetes API serves pod_logs where both are configured
    tool_specs=_tool_specs,
    probe=_probe,
    fix="is the cluster of environments.{env}.kubernetes reachable from here?",
)
