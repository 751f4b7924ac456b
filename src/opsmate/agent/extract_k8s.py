"""Fact extractors for Kubernetes results: pods, events, nodes, rollouts."""

from __future__ import annotations

from typing import Any

from opsmate.agent.extract_base import ExtractContext, in_window, max_time, min_time
from opsmate.agent.extract_base import hm as _hm
from opsmate.agent.signals import error_core, looks_like_instruction, match_terms, to_time
from opsmate.agent.state import Fact
from opsmate.tools.base import ToolResult

ERROR_WAITING = {
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "InvalidImageName",
    "OOMKilled",
}
ERROR_EVENTS = {
    "BackOff",
    "Failed",
    "FailedScheduling",
    "Evicted",
    "OOMKilling",
    "FailedMount",
    "FailedAttachVolume",
    "FailedCreatePodSandBox",
    "NodeNotReady",
    "FreeDiskSpaceFailed",
    "EvictionThresholdMet",
    "ImageGCFailed",
    "NodeHasDiskPressure",
    "SystemOOM",
    "FailedCreate",
    "FailedSync",
    "ContainerGCFailed",
    "Preempting",
    "FailedKillPod",
}


def app_of(pod: dict[str, Any]) -> str:
    labels = pod.get("labels") or {}
    for key in ("app", "app.kubernetes.io/name", "k8s-app", "job-name"):
        if labels.get(key):
            return str(labels[key])
    owner = str(pod.get("owner") or "")
    return owner.split("/", 1)[-1] if owner else str(pod.get("name"))


def pods(eid: str, r: ToolResult, ctx: ExtractContext) -> list[Fact]:
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    facts: list[Fact] = []
    for p in r.data.get("pods") or r.data.get("items") or []:
        app = app_of(p)
        problems: list[tuple[str, str, Any]] = []  # (reason, severity, time)
        for c in p.get("containers") or []:
            last = c.get("last_termination") or {}
            reason = last.get("reason")
            code = last.get("exit_code")
            if reason and (reason != "Completed" or (code not in (0, None))):
                label = f"{reason} (exit code {code})" if code is not None else str(reason)
                problems.append(
                    (
                        f"container {c.get('name')} last terminated {label}",
                        "error",
                        last.get("finished_at"),
                    )
                )
            if c.get("state") == "waiting" and c.get("reason"):
                sev = "error" if c.get("reason") in ERROR_WAITING else "warning"
                problems.append(
                    (
                        f"container {c.get('name')} waiting in {c.get('reason')}",
                        sev,
                        p.get("start_time"),
                    )
                )
            if c.get("state") == "terminated" and c.get("reason") not in (None, "Completed"):
                problems.append(
                    (
                        f"container {c.get('name')} terminated {c.get('reason')}",
                        "error",
                        c.get("finished_at"),
                    )
                )
        if p.get("reason"):
            problems.append(
                (
                    f"pod {p.get('reason')}: {str(p.get('message') or '')[:120]}".rstrip(": "),
                    "error",
                    p.get("start_time"),
                )
            )
        elif p.get("phase") in ("Pending", "Failed", "Unknown"):
            problems.append((f"pod phase {p.get('phase')}", "warning", p.get("start_time")))
        for text, sev, when in problems:
            g = groups.setdefault(
                (app, text), {"pods": [], "sev": sev, "time": None, "restarts": 0}
            )
            g["pods"].append(p.get("name"))
            g["time"] = max_time(g["time"], when)
            g["restarts"] += int(p.get("restarts") or 0)
        started = to_time(p.get("start_time"))
        owner = str(p.get("owner") or "")
        if (
            started
            and in_window(started, ctx)
            and (owner.startswith(("Job/", "CronJob/")) or not owner)
        ):
            images = ", ".join(
                str(c.get("image")) for c in p.get("containers") or [] if c.get("image")
            )
            when = _hm(p.get("start_time"))
            quote = f"{owner or 'pod'} {p.get('name')} (image {images}) started at {when}"
            facts.append(
                Fact(
                    key=f"change:pod:{p.get('name')}",
                    statement=f"a one-off workload started during the incident window: {quote}",
                    evidence=[eid],
                    kind="change",
                    severity="info",
                    service=app,
                    time=started,
                    quote=quote,
                    terms=list(match_terms(f"{app} {images}"))[:16],
                    focus=ctx.is_focus(app, p.get("name")),
                )
            )
    by_app: dict[str, dict[str, Any]] = {}
    for (app, text), g in groups.items():
        a = by_app.setdefault(
            app, {"pods": [], "texts": [], "sev": "warning", "time": None, "restarts": 0}
        )
        a["texts"].append(text)
        a["pods"] += [p for p in g["pods"] if p not in a["pods"]]
        a["sev"] = "error" if "error" in (a["sev"], g["sev"]) else a["sev"]
        a["time"] = max_time(a["time"], g["time"])
        a["restarts"] = max(a["restarts"], g["restarts"])
    for app, a in by_app.items():
        n = len(a["pods"])
        restarts = f"; {a['restarts']} restarts" if a["restarts"] else ""
        reasons = "; ".join(a["texts"])
        names = ", ".join(a["pods"][:3]) + (" ..." if n > 3 else "")
        facts.append(
            Fact(
                key=f"pod:{app}:{reasons}",
                statement=f"{n} pod{'s' if n != 1 else ''} of {app} ({names}): {reasons}{restarts}",
                evidence=[eid],
                kind="pod_problem",
                severity=a["sev"],
                service=app,
                time=to_time(a["time"]),
                quote=reasons,
                terms=list(match_terms(reasons))[:16],
                focus=ctx.is_focus(app, *a["pods"]),
                count=n,
            )
        )
    return facts


def events(eid: str, r: ToolResult, ctx: ExtractContext) -> list[Fact]:
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for e in r.data.get("events") or r.data.get("items") or []:
        if e.get("type") != "Warning" and e.get("reason") not in ERROR_EVENTS:
            continue
        obj = e.get("object") or {}
        name = str(obj.get("name") or "")
        if looks_like_instruction(str(e.get("message") or "")):
            ctx.notes.append(
                f"{eid}: an event message contains text addressed to an assistant; ignored"
            )
            continue
        g = groups.setdefault(
            (str(e.get("reason")), str(obj.get("kind"))),
            {"objects": [], "count": 0, "first": None, "last": None, "message": e.get("message")},
        )
        if name not in g["objects"]:
            g["objects"].append(name)
        g["count"] += int(e.get("count") or 1)
        g["first"] = min_time(g["first"], e.get("first_timestamp"))
        g["last"] = max_time(g["last"], e.get("last_timestamp"))
    facts = []
    for (reason, kind), g in groups.items():
        msg = error_core(str(g["message"] or ""), 180)
        objs = ", ".join(g["objects"][:3]) + (" ..." if len(g["objects"]) > 3 else "")
        facts.append(
            Fact(
                key=f"event:{reason}:{kind}:{','.join(sorted(g['objects'])[:3])}",
                statement=f"{g['count']} {reason} warning event(s) on {kind} {objs} "
                f"({_hm(g['first'])}-{_hm(g['last'])}): {msg}",
                evidence=[eid],
                kind="event",
                severity="error" if reason in ERROR_EVENTS else "warning",
                service=g["objects"][0] if g["objects"] else None,
                time=to_time(g["first"]),
                quote=f"{reason}: {msg}",
                terms=list(match_terms(f"{reason} {msg}"))[:20],
                focus=ctx.is_focus(*g["objects"]),
                count=g["count"],
            )
        )
    return facts


def nodes(eid: str, r: ToolResult, ctx: ExtractContext) -> list[Fact]:
    facts = []
    for n in r.data.get("nodes") or r.data.get("items") or []:
        for c in n.get("conditions") or []:
            bad = (c.get("type") == "Ready") != (c.get("status") == "True")
            if not bad:
                continue
            cond = f"{c.get('type')}={c.get('status')}"
            quote = f"{c.get('type')} ({c.get('reason')}: {str(c.get('message') or '')[:140]})"
            facts.append(
                Fact(
                    key=f"node:{n.get('name')}:{c.get('type')}",
                    statement=f"node {n.get('name')} reports {cond} since "
                    f"{_hm(c.get('last_transition_time'))}: {c.get('reason')}: {c.get('message')}",
                    evidence=[eid],
                    kind="node_condition",
                    severity="error",
                    service=n.get("name"),
                    time=to_time(c.get("last_transition_time")),
                    quote=quote,
                    terms=list(
                        match_terms(f"{c.get('type')} {c.get('reason')} {c.get('message')}")
                    )[:20],
                    focus=True,
                )
            )
    return facts


def rollouts(eid: str, r: ToolResult, ctx: ExtractContext) -> list[Fact]:
    revs = r.data.get("revisions") or []
    cur = next((x for x in revs if x.get("current")), revs[-1] if revs else None)
    if not cur:
        return []
    name = r.data.get("name") or r.args.get("name")
    created = to_time(cur.get("created"))
    cause = cur.get("change_cause")
    prev = [
        x for x in revs if x is not cur and (x.get("revision") or 0) < (cur.get("revision") or 0)
    ]
    before = prev[-1] if prev else None
    images = ", ".join(cur.get("images") or [])
    changed = ""
    if before and (before.get("images") or []) != (cur.get("images") or []):
        changed = f" (image {', '.join(before.get('images') or [])} -> {images})"
    elif before:
        changed = " (same image as before: a configuration change)"
    quote = f"revision {cur.get('revision')} of {name} at {_hm(cur.get('created'))}{changed}"
    if cause:
        quote += f", change cause: {cause}"
    recent = created is not None and in_window(created, ctx, slack_minutes=120)
    return [
        Fact(
            key=f"rollout:{name}:{cur.get('revision')}",
            statement=(
                f"deployment {name} rolled out {quote}"
                if recent
                else f"no recent rollout of {name}: current revision {cur.get('revision')} "
                f"dates from {cur.get('created')}"
            ),
            evidence=[eid],
            kind="change" if recent else "no_change",
            severity="info",
            service=name,
            time=created,
            quote=quote,
            terms=list(match_terms(f"{cause or ''} {images}"))[:20],
            focus=ctx.is_focus(name),
        )
    ]
