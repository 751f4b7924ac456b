"""Pods: crash loops, exits, OOM kills, image pulls, missing references, pending pods.

Reads ``list_pods`` through :class:`~opsmate.records.k8s.Pod` records, adds every pod
to the object graph, and turns each container's state into facts: the symptom
(CrashLoopBackOff, an error exit, not ready, pending) and, where the pod itself says
why, the cause (OOMKilled with the memory limit, the registry's answer to an image
pull, the Secret or ConfigMap the kubelet could not find, the scheduler's message).
Pods of one workload with the same finding are one fact that names them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.depgraph import owner_workload
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.k8s_messages import read_message
from opsmate.agent.observe.registry import for_tools
from opsmate.agent.observe.text import clip, hm, message_signature, workload_of
from opsmate.agent.signals import match_terms
from opsmate.records.k8s import Container, Pod
from opsmate.records.payloads import pods_in
from opsmate.tools.base import ToolResult

_PULL_REASONS = {"ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull"}
_CONFIG_REASONS = {"CreateContainerConfigError", "CreateContainerError", "RunContainerError"}


def app_of(pod: Pod) -> str:
    """The workload a pod belongs to: its ``app``-style label, its owner, or its name stem."""
    owner = pod.owner_ref()
    owned = owner_workload(pod)
    for key in ("app", "app.kubernetes.io/name", "k8s-app", "job-name", "component"):
        label = pod.labels.get(key)
        if label:
            if owned and owned.startswith(label.lower() + "-"):
                return owned  # "app: teastore" on teastore-webui: the application's label
            return label
    if owner and owner.name:
        stem = workload_of(owner.name) if owner.kind == "ReplicaSet" else owner.name
        return stem or owner.name
    return workload_of(pod.name) or str(pod.name)


@dataclass
class _Finding:
    kind: FactKind
    severity: str
    what: str  # the sentence after "<container> of <pod>"
    container: str | None = None
    reason: str | None = None
    message: str | None = None
    exit_code: int | None = None
    time: datetime | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    refs: list[ObjRef] = field(default_factory=list)


def limit_defaulted(pod: Pod, container: str | None, what: str) -> bool:
    """Whether the LimitRanger filled in ``what`` ("memory limit") for ``container`` at
    admission: ``LimitRanger plugin set: cpu, memory limit for container app``."""
    note = pod.limit_ranger or ""
    for part in note.split(";"):
        head, _, who = part.partition(" for container ")
        kind = what.split()[-1]  # "limit" / "request"
        res = what.split()[0]  # "memory" / "cpu"
        if who.strip() == container and kind in head and res in head:
            return True
    return False


def _container_findings(pod: Pod, c: Container) -> list[_Finding]:
    out: list[_Finding] = []
    who = f"{'init container' if c.init else 'container'} {c.name}"
    limit = c.resources.limits.get("memory") if c.resources else None
    last = c.last_termination
    term_reason = c.reason if c.state == "terminated" else (last.reason if last else None)
    term_code = c.exit_code if c.state == "terminated" else (last.exit_code if last else None)
    term_msg = c.message if c.state == "terminated" else (last.message if last else None)
    term_time = c.finished_at if c.state == "terminated" else (last.finished_at if last else None)
    if term_reason == "OOMKilled" or (term_code == 137 and term_reason in (None, "OOMKilled")):
        at = f" at its memory limit of {limit}" if limit else ""
        if limit and limit_defaulted(pod, c.name, "memory limit"):
            at += (
                ", a limit the namespace's LimitRange set by default at admission (annotation "
                "kubernetes.io/limit-ranger), not one the workload asks for"
            )
        out.append(
            _Finding(
                FactKind.OOM_KILLED,
                "error",
                f"{who} was OOMKilled (exit code {term_code or 137}){at}",
                c.name,
                "OOMKilled",
                term_msg,
                term_code or 137,
                term_time,
                {"memory_limit": limit, "memory_request": _req(c, "memory")},
            )
        )
    elif term_reason is not None or term_code not in (None, 0):
        code = term_code if term_code is not None else "?"
        failed = term_code not in (0, None) or (term_code is None and term_reason == "Error")
        sev = "error" if failed else "info"
        out.append(
            _Finding(
                FactKind.CONTAINER_EXIT,
                sev,
                f"{who} exited with code {code} ({term_reason or 'no reason'})",
                c.name,
                term_reason,
                term_msg,
                term_code,
                term_time,
                {"restarts": c.restarts},
            )
        )
        if term_msg and term_msg.strip():
            out.append(
                _Finding(
                    FactKind.LAST_WORDS,
                    "error" if failed else "warning",
                    f'{who} ended with the termination message "{clip(term_msg, 240)}"',
                    c.name,
                    term_reason,
                    term_msg,
                    term_code,
                    term_time,
                    {"lines": [clip(term_msg, 400)], "source": "termination message"},
                )
            )
    if c.state == "waiting" and c.reason:
        reading = read_message(c.reason, c.message, pod.namespace)
        msg = f": {clip(c.message, 300)}" if c.message else ""
        if c.reason == "CrashLoopBackOff":
            out.append(
                _Finding(
                    FactKind.CRASH_LOOP,
                    "error",
                    f"{who} is in CrashLoopBackOff after {c.restarts} restart(s)",
                    c.name,
                    c.reason,
                    c.message,
                    detail={"restarts": c.restarts},
                )
            )
        elif c.reason in _PULL_REASONS or (reading and reading.kind == FactKind.IMAGE_PULL):
            out.append(
                _Finding(
                    FactKind.IMAGE_PULL,
                    "error",
                    f"{who} cannot pull its image {c.image} ({c.reason}){msg}",
                    c.name,
                    c.reason,
                    c.message,
                    detail={"image": c.image},
                )
            )
        elif reading and reading.kind == FactKind.MISSING_REFERENCE:
            refs = [ObjRef(kind=k, name=n, namespace=ns) for k, n, ns in reading.refs]
            out.append(
                _Finding(
                    FactKind.MISSING_REFERENCE,
                    "error",
                    f"{who} cannot start ({c.reason}){msg}",
                    c.name,
                    c.reason,
                    c.message,
                    detail=reading.detail,
                    refs=refs,
                )
            )
        elif c.reason in _CONFIG_REASONS:
            out.append(
                _Finding(
                    FactKind.CONFIG_ERROR,
                    "error",
                    f"{who} cannot start ({c.reason}){msg}",
                    c.name,
                    c.reason,
                    c.message,
                )
            )
        elif c.reason not in ("ContainerCreating", "PodInitializing"):
            out.append(
                _Finding(
                    FactKind.NOT_READY,
                    "warning",
                    f"{who} is waiting in {c.reason}{msg}",
                    c.name,
                    c.reason,
                    c.message,
                )
            )
    if c.state == "running" and not c.ready and not c.init and c.readiness is not None:
        out.append(
            _Finding(
                FactKind.NOT_READY,
                "warning",
                f"{who} is running but not ready (readiness probe {c.readiness.target or ''})",
                c.name,
                "NotReady",
                detail={"probe": "readiness", "target": c.readiness.target},
            )
        )
    return out


def _req(c: Container, resource: str) -> str | None:
    return c.resources.requests.get(resource) if c.resources else None


def _pod_findings(pod: Pod) -> list[_Finding]:
    out: list[_Finding] = []
    for c in pod.all_containers():
        out += _container_findings(pod, c)
    sched = next((x for x in pod.conditions if x.type == "PodScheduled"), None)
    if pod.phase == "Pending":
        if sched is not None and sched.status == "False" and sched.message:
            detail: dict[str, Any] = {"scheduler_message": sched.message}
            if pod.node_selector:
                detail["node_selector"] = dict(pod.node_selector)
            out.append(
                _Finding(
                    FactKind.SCHEDULING,
                    "error",
                    f"cannot be scheduled ({sched.reason or 'Unschedulable'}): "
                    f"{clip(sched.message, 300)}",
                    reason=sched.reason or "Unschedulable",
                    message=sched.message,
                    time=sched.last_transition_time,
                    detail=detail,
                )
            )
        stuck = next((c for c in pod.init_containers if c.state == "running" and not c.ready), None)
        if stuck is not None and pod.node is not None and not out:
            # scheduled, but an init container has not finished: the app containers wait
            run = " ".join(stuck.command + stuck.args).strip()
            out.append(
                _Finding(
                    FactKind.POD_PENDING,
                    "error",
                    f"is Pending: init container {stuck.name} has been running"
                    + (f" since {hm(stuck.started_at)}" if stuck.started_at else "")
                    + " without finishing"
                    + (f" (it runs `{clip(run, 160)}`)" if run else ""),
                    reason="InitContainerRunning",
                    container=stuck.name,
                    message=run or None,
                    time=stuck.started_at or pod.created,
                )
            )
        elif not any(f.kind in _CAUSE_OF_PENDING for f in out):
            out.append(
                _Finding(
                    FactKind.POD_PENDING,
                    "error",
                    "is Pending" + (" (not scheduled)" if pod.node is None else ""),
                    reason="Pending",
                    time=pod.created or pod.start_time,
                )
            )
    if pod.reason == "Evicted":
        out.append(
            _Finding(
                FactKind.EVICTED,
                "error",
                f"was evicted: {clip(pod.message, 300)}",
                reason="Evicted",
                message=pod.message,
                time=pod.start_time,
            )
        )
    elif pod.reason:
        out.append(
            _Finding(
                FactKind.OBSERVATION,
                "warning",
                f"reports {pod.reason}: {clip(pod.message, 300)}",
                reason=pod.reason,
                message=pod.message,
            )
        )
    return out


_CAUSE_OF_PENDING = {FactKind.SCHEDULING, FactKind.IMAGE_PULL, FactKind.MISSING_REFERENCE}
_SYMPTOM_FIRST = {FactKind.CRASH_LOOP, FactKind.POD_PENDING, FactKind.NOT_READY}


@for_tools("list_pods")
def pods(result: ToolResult, ctx: ObserveContext) -> list[Fact]:
    """Facts about the pods in a ``list_pods`` answer (grouped per workload and finding)."""
    records = pods_in(result.payload)
    ns_arg = result.args.get("namespace")
    ctx.graph.add_listing(
        "Pod",
        records,
        ctx.eid,
        namespace=ns_arg,
        selector=result.args.get("label_selector") or result.args.get("name") or None,
        complete=result.complete,
    )
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    facts: list[Fact] = []
    for pod in records:
        app = app_of(pod)
        for f in _pod_findings(pod):
            key = (app, f.kind, f.container, f.reason, f.exit_code, message_signature(f.message))
            g = groups.setdefault(key, {"finding": f, "pods": [], "app": app, "restarts": 0})
            g["pods"].append(pod)
            g["restarts"] += pod.restarts
            if f.time and (g["finding"].time is None or f.time > g["finding"].time):
                g["finding"].time = f.time
        facts += _one_off(pod, app, ctx)
    for key, g in groups.items():
        facts.append(_fact(g["finding"], g["pods"], g["app"], ctx, key[-1]))
    return facts


def _fact(f: _Finding, pods: list[Pod], app: str, ctx: ObserveContext, sig: str) -> Fact:
    first = pods[0]
    n = len(pods)
    names = [str(p.name) for p in pods]
    if n == 1:
        who = f"pod {first.name}"
    else:
        shown = ", ".join(names[:3]) + (" ..." if n > 3 else "")
        who = f"{n} pods of {app} ({shown})"
    statement = f"{who}: {f.what}" if f.container else f"{who} {f.what}"
    owner = first.owner_ref()
    objects = [ObjRef(kind="Pod", name=nm, namespace=first.namespace) for nm in names[1:6]]
    if owner and owner.kind and owner.name:
        objects.insert(0, ObjRef(kind=owner.kind, name=owner.name, namespace=first.namespace))
    objects += f.refs
    if first.node and f.kind in (FactKind.EVICTED, FactKind.SCHEDULING):
        objects.append(ObjRef(kind="Node", name=first.node))
    detail = dict(f.detail)
    detail.setdefault("pods", names[:20])
    if first.node_selector and f.kind in (FactKind.SCHEDULING, FactKind.POD_PENDING):
        detail["node_selector"] = dict(first.node_selector)
    quote = f"{f.reason}: {clip(f.message, 200)}" if f.reason and f.message else f.what
    return Fact(
        key=f"pod:{f.kind}:{first.namespace}:{app}:{f.container}:{f.reason}:{f.exit_code}:{sig}",
        statement=statement,
        evidence=[ctx.eid],
        kind=f.kind,
        severity=f.severity,
        service=app,
        time=f.time,
        quote=quote,
        terms=list(match_terms(f"{f.reason or ''} {f.message or ''} {f.what}"))[:20],
        focus=ctx.is_focus(app, *names, owner.name if owner else None),
        count=n,
        subject=ObjRef(kind="Pod", name=str(first.name), namespace=first.namespace),
        objects=objects,
        container=f.container,
        reason=f.reason,
        message=f.message,
        exit_code=f.exit_code,
        detail=detail,
    )


def _one_off(pod: Pod, app: str, ctx: ObserveContext) -> list[Fact]:
    """A one-off workload (a Job's or a bare pod) started during the incident window."""
    started = pod.start_time
    owner = pod.owner or ""
    if not started or not ctx.in_window(started) or (owner and not owner.startswith(("Job/",))):
        return []
    images = ", ".join(str(c.image) for c in pod.containers if c.image)
    quote = f"{owner or 'pod'} {pod.name} (image {images}) started at {hm(started)}"
    return [
        Fact(
            key=f"change:pod:{pod.name}",
            statement=f"a one-off workload started during the incident window: {quote}",
            evidence=[ctx.eid],
            kind=FactKind.CHANGE,
            severity="info",
            service=app,
            time=started,
            quote=quote,
            terms=list(match_terms(f"{app} {images}"))[:16],
            focus=ctx.is_focus(app, pod.name),
            subject=ObjRef(kind="Pod", name=str(pod.name), namespace=pod.namespace),
            detail={"change": "one-off workload", "images": images},
        )
    ]
