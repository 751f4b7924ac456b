"""Rollouts: a recent change of a Deployment (new image or new configuration), or none,
and replicas that are not available."""

from __future__ import annotations

from datetime import timedelta

from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.k8s_messages import read_message
from opsmate.agent.observe.registry import for_tools
from opsmate.agent.observe.text import clip, hm, workload_of
from opsmate.agent.signals import match_terms
from opsmate.records.k8s import RESTARTED, Revision, Rollout
from opsmate.records.payloads import RolloutPayload
from opsmate.tools.base import ToolResult


@for_tools("rollout_history")
def rollouts(result: ToolResult, ctx: ObserveContext) -> list[Fact]:
    payload = result.payload_as(RolloutPayload)
    if payload is None:
        return []
    ro = payload.rollout()  # a copy: named below, the result's payload stays as answered
    name = ro.name or str(result.args.get("name") or "")
    if name:
        ro.name = name
        ns = ro.namespace or result.args.get("namespace")
        known = ctx.graph.get("Deployment", ns, name)
        if known is None or isinstance(known, Rollout):  # a listed Deployment says more
            ctx.graph.add("Deployment", ro, ctx.eid, ns)
    facts: list[Fact] = []
    subject = ObjRef(kind="Deployment", name=name, namespace=ro.namespace)
    cur = ro.current()
    if cur is not None:
        prev = [r for r in ro.revisions if r is not cur and (r.revision or 0) < (cur.revision or 0)]
        before = prev[-1] if prev else None
        images = ", ".join(cur.images)
        changed = ""
        # ``kubectl rollout restart`` and nothing else: new pods, same template
        restart_only = bool(cur.changes) and all(c.startswith(RESTARTED) for c in cur.changes)
        if before and before.images != cur.images:
            changed = f" (image {', '.join(before.images)} -> {images})"
        elif restart_only:
            changed = " (a rollout restart: the same image and pod template as before)"
        elif before:
            changed = " (same image as before: a configuration change)"
        said = [
            c for c in cur.changes if ": image " not in c and not c.startswith(RESTARTED)
        ]  # the images and a restart are said above
        if said:
            changed += ": " + "; ".join(said[:4])
        quote = f"revision {cur.revision} of {name} at {hm(cur.created)}{changed}"
        if cur.change_cause:
            quote += f", change cause: {cur.change_cause}"
        recent = cur.created is not None and ctx.in_window(cur.created, slack_minutes=120)
        if before is None and recent and (cur.revision or 1) <= 1 and _recreated(ctx, ro, cur):
            # created at the incident while the rest of its namespace is older: deleted and
            # applied again — a change, and what its pods run now is what changed
            run = _what_runs(ctx, ro)
            facts.append(
                Fact(
                    key=f"rollout:{name}:{cur.revision}",
                    statement=f"deployment {name} was re-created at {hm(cur.created)} "
                    f"(revision {cur.revision}, image {images or 'not recorded'}"
                    + (f"; {'; '.join(run)}" if run else "")
                    + ") while the rest of its namespace is older",
                    evidence=[ctx.eid],
                    kind=FactKind.CHANGE,
                    severity="info",
                    service=name,
                    time=cur.created,
                    focus=ctx.is_focus(name),
                    subject=subject,
                    quote=f"deployment {name} re-created at {hm(cur.created)}",
                    detail={
                        "change": "re-created",
                        "revision": cur.revision,
                        "images": cur.images,
                        "previous_images": [],
                        "template_changes": run,
                    },
                )
            )
            cur = None
        elif before is None and recent and (cur.revision or 1) <= 1:
            # the first revision: the deployment was created, nothing changed
            facts.append(
                Fact(
                    key=f"rollout:{name}:{cur.revision}",
                    statement=f"deployment {name} was created at {hm(cur.created)} "
                    f"(revision {cur.revision}, image {images or 'not recorded'})",
                    evidence=[ctx.eid],
                    kind=FactKind.OBSERVATION,
                    severity="info",
                    service=name,
                    time=cur.created,
                    focus=ctx.is_focus(name),
                    subject=subject,
                    detail={"created": True, "images": cur.images},
                )
            )
            cur = None
    if cur is not None:
        facts.append(
            Fact(
                key=f"rollout:{name}:{cur.revision}",
                statement=(
                    f"deployment {name} rolled out {quote}"
                    if recent
                    else f"no recent rollout of {name}: current revision {cur.revision} "
                    f"dates from {cur.created.isoformat() if cur.created else '?'}"
                ),
                evidence=[ctx.eid],
                kind=FactKind.CHANGE if recent else FactKind.NO_CHANGE,
                severity="info",
                service=name,
                time=cur.created,
                quote=quote,
                terms=list(match_terms(f"{cur.change_cause or ''} {images} {cur.changes}"))[:20],
                focus=ctx.is_focus(name),
                subject=subject,
                detail={
                    "change": "rollout",
                    "revision": cur.revision,
                    "images": cur.images,
                    "previous_images": before.images if before else [],
                    "change_cause": cur.change_cause,
                    "template_changes": cur.changes,
                },
                routine=restart_only,
            )
        )
    rep = ro.replicas
    if rep is not None and rep.desired and (rep.unavailable or rep.ready < rep.desired):
        missing = rep.unavailable or (rep.desired - rep.ready)
        facts.append(
            Fact(
                key=f"rollout:{name}:unavailable",
                statement=f"deployment {name} has {rep.ready} of {rep.desired} replicas ready "
                f"({missing} unavailable)",
                evidence=[ctx.eid],
                kind=FactKind.NOT_READY,
                severity="warning",
                service=name,
                focus=ctx.is_focus(name),
                subject=subject,
                reason="ReplicasUnavailable",
                detail={"desired": rep.desired, "ready": rep.ready, "unavailable": missing},
            )
        )
    for c in ro.conditions:
        if c.status != "False" and c.type != "ReplicaFailure":
            continue
        reading = read_message(c.reason, c.message, ro.namespace)
        kind = reading.kind if reading else FactKind.OBSERVATION
        facts.append(
            Fact(
                key=f"rollout:{name}:cond:{c.type}:{c.reason}",
                statement=f"deployment {name} condition {c.type}={c.status} ({c.reason}): "
                f"{clip(c.message, 300)}",
                evidence=[ctx.eid],
                kind=kind,
                severity="error" if reading else "warning",
                service=name,
                time=c.last_transition_time,
                quote=f"{c.reason}: {clip(c.message, 200)}",
                terms=list(match_terms(f"{c.reason} {c.message}"))[:20],
                focus=ctx.is_focus(name),
                subject=subject,
                objects=[ObjRef(kind=k, name=n, namespace=x) for k, n, x in reading.refs]
                if reading
                else [],
                reason=c.reason,
                message=c.message,
                detail=dict(reading.detail) if reading else {},
            )
        )
    return facts


def _recreated(ctx: ObserveContext, ro: Rollout, cur: Revision) -> bool:
    """Whether a first revision created in the window belongs to a namespace whose other
    pods are an hour older or more (the workload was deleted and applied again)."""
    if cur.created is None:
        return False
    others = [
        p.created
        for p in ctx.graph.pods(ro.namespace)
        if p.created is not None and p.name and workload_of(p.name) != ro.name
    ]
    return bool(others) and min(others) <= cur.created - timedelta(hours=1)


def _what_runs(ctx: ObserveContext, ro: Rollout) -> list[str]:
    """The command and arguments the workload's pods run now (``container app: runs
    `route```), for a workload with no earlier revision to compare against."""
    out: list[str] = []
    for p in ctx.graph.pods(ro.namespace):
        if not p.name or workload_of(p.name) != ro.name:
            continue
        for c in p.containers:
            if c.command or c.args:
                run = " ".join([*c.command, *c.args])
                out.append(f"container {c.name}: runs `{run[:80]}`")
        break
    return out[:2]
