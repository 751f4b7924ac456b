"""Events: what the scheduler, the kubelet and the controllers reported.

Every warning event (and a few normal ones that matter) is read by
:func:`~opsmate.agent.observe.k8s_messages.read_message` into a fact kind with details.
Events group by reason, the workload of the object and the message's signature — which
keeps quoted names — so two pods missing two different Secrets are two facts, each
quoting its own message, and fifty identical back-offs are one fact with a count.
"""

from __future__ import annotations

import re
from typing import Any

from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.k8s_messages import read_message
from opsmate.agent.observe.registry import for_tools
from opsmate.agent.observe.text import clip_wrapped, message_signature, span, workload_of
from opsmate.agent.signals import looks_like_instruction, match_terms
from opsmate.records.k8s import Event
from opsmate.records.payloads import EventsPayload
from opsmate.tools.base import ToolResult

_NORMAL_THAT_MATTER = {
    "Killing", "SuccessfulDelete", "ScalingReplicaSet", "Preempted", "JobAlreadyActive",
}  # fmt: skip


@for_tools("get_events")
def events(result: ToolResult, ctx: ObserveContext) -> list[Fact]:
    """Facts from the warning events of a ``get_events`` answer."""
    payload = result.payload_as(EventsPayload)
    records = payload.events if payload else []
    ctx.graph.add_events(records, ctx.eid)
    groups: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for e in records:
        if e.type != "Warning" and e.reason not in _NORMAL_THAT_MATTER:
            continue
        msg = e.message or ""
        if looks_like_instruction(msg):
            ctx.notes.append(
                f"{ctx.eid}: an event message contains text addressed to an assistant; ignored"
            )
            continue
        obj_kind = e.object.kind or "object"
        name = e.object.name or ""
        group_name = workload_of(name) if obj_kind == "Pod" else name
        key = (str(e.reason), obj_kind, str(group_name), message_signature(msg))
        g = groups.setdefault(
            key, {"events": [], "objects": [], "count": 0, "first": None, "last": None}
        )
        g["events"].append(e)
        if name and name not in g["objects"]:
            g["objects"].append(name)
        g["count"] += max(e.count, 1)
        first, last = e.first_timestamp, e.last_timestamp or e.first_timestamp
        if first and (g["first"] is None or first < g["first"]):
            g["first"] = first
        if last and (g["last"] is None or last > g["last"]):
            g["last"] = last
    facts: list[Fact] = []
    for (reason, obj_kind, group_name, sig), g in groups.items():
        f = _fact(reason, obj_kind, group_name, sig, g, ctx)
        facts.append(f)
        if f.kind == FactKind.EVICTED and f.detail.get("container"):
            facts.append(eviction_cause(f))
    return facts


# what a resource named in an eviction is on the node, in the words people search for
_NODE_RESOURCE = {
    "ephemeral-storage": "disk (ephemeral-storage)",
    "nodefs.available": "disk (nodefs)",
    "imagefs.available": "image disk (imagefs)",
    "nodefs.inodesFree": "disk inodes (nodefs)",
    "memory.available": "memory",
    "pid.available": "process ids (PIDs)",
}


def eviction_cause(f: Fact) -> Fact:
    """What the kubelet says an evicted container did: used more of a resource than it
    requested while the node ran low (the kubelet's own account, so conclusive)."""
    d = f.detail
    res = d.get("resource") or "a resource"
    low = _NODE_RESOURCE.get(res, res)
    statement = (
        f"container {d['container']} of {f.subject.label() if f.subject else 'the pod'} used "
        f"{d.get('usage')} of {res} with a request of {d.get('request')}: the kubelet evicted "
        f"it when the node ran low on {low}"
    )
    return f.model_copy(
        update={
            "key": f"{f.key}:cause",
            "kind": FactKind.SATURATION,
            "severity": "error",
            "statement": statement,
            "quote": f"Evicted: {res} usage {d.get('usage')} over request {d.get('request')}",
            "container": d.get("container"),
            "conclusive": True,
        }
    )


# the scheduler's note after why no node fits: that evicting lower-priority pods would not
# help either (it adds nothing to why the pod has no node)
_NO_PREEMPTION = re.compile(
    r"\s*preemption: 0/\d+ nodes are available:.*?(?:Preemption is not helpful for scheduling"
    r"|No preemption victims found for incoming pod)\.?",
    re.S,
)


def _fact(
    reason: str, obj_kind: str, group_name: str, sig: str, g: dict[str, Any], ctx: ObserveContext
) -> Fact:
    ev: Event = g["events"][0]
    ns = ev.object.namespace or ev.namespace
    msg = ev.message or ""
    reading = read_message(reason, msg, ns)
    kind = reading.kind if reading else FactKind.OBSERVATION
    node_ref: ObjRef | None = None
    on_node = reading is not None and reading.detail.get("on_node")
    if reading is not None and obj_kind == "Pod" and (kind == FactKind.NODE_PROBLEM or on_node):
        # a pod suffering its node's state (a symptom of the node's problem), or what fails
        # on the pod's node (a driver not registered there): the node is named
        if kind == FactKind.NODE_PROBLEM:
            kind = FactKind.NOT_READY
        pod = ctx.graph.get("Pod", ns, g["objects"][0]) if g["objects"] else None
        node = getattr(pod, "node", None)
        node_ref = ObjRef(kind="Node", name=str(node)) if node else None
    if reading is None and ev.type == "Warning":
        kind = FactKind.OBSERVATION
    severity = reading.severity if reading else ("warning" if ev.type == "Warning" else "info")
    objs: list[str] = g["objects"]
    shown = ", ".join(objs[:3]) + (" ..." if len(objs) > 3 else "")
    count = g["count"]
    said = _NO_PREEMPTION.sub("", msg).strip() or msg  # the scheduler's note says nothing
    statement = (
        f"{count} {reason} event{'s' if count != 1 else ''} on {obj_kind} {shown}"
        f"{span(g['first'], g['last'])}: {clip_wrapped(said, 300)}"
    )
    condition = reading.detail.get("condition") if reading else None
    if condition and condition not in msg:
        statement += f" (node condition {condition})"
    if reading is not None and reading.meaning:
        statement += f" — {reading.meaning}"
    if node_ref is not None and on_node:
        statement += f" (node {node_ref.name})"
    subject = ObjRef(kind=obj_kind, name=objs[0], namespace=ns) if objs else None
    objects = [ObjRef(kind=obj_kind, name=o, namespace=ns) for o in objs[1:6]]
    if reading:
        objects += [ObjRef(kind=k, name=n, namespace=x) for k, n, x in reading.refs]
    if node_ref is not None:
        objects.append(node_ref)
    detail: dict[str, Any] = dict(reading.detail) if reading else {}
    detail["objects"] = objs[:20]
    detail["verbatim"] = True  # the controller's own words, counted as written
    return Fact(
        key=f"event:{reason}:{obj_kind}:{ns}:{group_name}:{sig}",
        statement=statement,
        evidence=[ctx.eid],
        kind=kind,
        severity=severity,
        service=group_name or None,
        time=g["first"],
        last_time=g["last"],
        quote=f"{reason}: {clip_wrapped(msg, 200)}",
        terms=list(match_terms(f"{reason} {msg}"))[:20],
        focus=ctx.is_focus(*objs, group_name),
        count=count,
        subject=subject,
        objects=objects,
        reason=reason,
        message=msg,
        detail=detail,
    )
