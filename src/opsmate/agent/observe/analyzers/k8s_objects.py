"""``list_objects`` / ``get_object`` answers into the object graph (listings and misses).

Every object kind read through the generic tools lands in the graph here, once; the
kind analyzers (``k8s_*.py``) relate the objects as graph analyzers, so the order in
which answers arrive does not matter. Pods and nodes read this way get the same facts as
from ``list_pods`` / ``node_conditions`` (the pod and node analyzers are reused).
"""

from __future__ import annotations

from opsmate.agent.observe.analyzers.k8s_common import ingest
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.registry import for_tools
from opsmate.records.payloads import ObjectsPayload
from opsmate.tools.base import ToolResult


@for_tools("list_objects", "get_object")
def objects(result: ToolResult, ctx: ObserveContext) -> list[Fact]:
    """Add the answer's objects to the graph; pods and nodes also get their own facts."""
    payload = result.payload_as(ObjectsPayload)
    kind = payload.kind if payload else None
    if kind == "Pod" and result.tool == "list_objects" and result.error is None:
        from opsmate.agent.observe.analyzers.pods import pods

        return pods(result, ctx)  # adds the listing itself
    if kind == "Node" and result.tool == "list_objects" and result.error is None:
        from opsmate.agent.observe.analyzers.nodes import nodes

        return nodes(result, ctx)
    ingest(result, ctx)  # a single pod or node read by name: the graph only
    return []
