"""Fault-injection experiments: Chaos Mesh's kinds and LitmusChaos's ChaosEngine.

An experiment announces itself in events on its own object (Started, Applied, Injected,
ExperimentJobCreate): that it began, when, and — for Chaos Mesh — the pods it was applied
to. What it does (partition, loss 35 %, delay 1500 ms, a CPU hog, errno 28 on /data) is
written only in its spec; once the object itself is read, the fact says that too, and
whether the experiment was paused or has recovered. One fact per experiment, built from
everything read so far (the events and the object), so a later read makes it fuller.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from opsmate.agent.observe.analyzers.k8s_common import graph_cached
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.registry import over_graph
from opsmate.agent.observe.text import workload_of
from opsmate.agent.signals import match_terms
from opsmate.records.k8s_chaos import FAULT_EXPERIMENT_KINDS, FaultExperiment

_CHAOS_KIND = re.compile(r"^(?:[A-Z][A-Za-z]*Chaos|ChaosEngine|ChaosSchedule)$")
_CHAOS_STARTED = {
    "Started", "Applied", "Injected", "ExperimentJobCreate", "ChaosEngineInitialized",
    "ChaosInject", "PreChaosCheck",
}  # fmt: skip
_APPLIED_TO = re.compile(r"apply chaos for (?P<ns>[\w.-]+)/(?P<pod>[\w.-]+)")
_LITMUS_EXPERIMENT = re.compile(r"Chaos Experiment: (?P<exp>[\w.-]+)")


@over_graph
@graph_cached
def fault_experiments(ctx: ObserveContext) -> list[Fact]:
    """One change per experiment seen starting in the events or read as an object."""
    g = ctx.graph
    runs: dict[tuple[str, str, str], dict[str, Any]] = {}

    def run(kind: str, name: str, ns: str) -> dict[str, Any]:
        return runs.setdefault(
            (kind, name, ns), {"first": None, "pods": [], "experiment": None, "eids": []}
        )

    for e, eid in g.events:
        kind, name = e.object.kind or "", e.object.name or ""
        if not _CHAOS_KIND.match(kind) or not name or e.reason not in _CHAOS_STARTED:
            continue
        r = run(kind, name, e.object.namespace or e.namespace or "")
        _earliest(r, e.first_timestamp or e.last_timestamp)
        if eid not in r["eids"]:
            r["eids"].append(eid)
        msg = e.message or ""
        if (m := _APPLIED_TO.search(msg)) and m.group("pod") not in r["pods"]:
            r["pods"].append(m.group("pod"))
        if (m := _LITMUS_EXPERIMENT.search(msg)) and r["experiment"] is None:
            r["experiment"] = m.group("exp")
    for kind in FAULT_EXPERIMENT_KINDS:
        for x in g.all(kind):
            if not isinstance(x, FaultExperiment) or not x.name:
                continue
            r = run(kind, x.name, x.namespace or "")
            r["spec"] = x
            if r["first"] is None:  # created is not started: the events say when it began
                r["first"] = x.created
            src = g.source_of(kind, x.namespace, x.name)
            if src and src not in r["eids"]:
                r["eids"].append(src)
            r["pods"] += [p for p in x.pods if p not in r["pods"]]
            if x.tool == "LitmusChaos" and x.action and r["experiment"] is None:
                r["experiment"] = x.action
    return [_fact(kind, name, ns, r, ctx) for (kind, name, ns), r in runs.items()]


def _earliest(r: dict[str, Any], t: datetime | None) -> None:
    if t is not None and (r["first"] is None or t < r["first"]):
        r["first"] = t


def _fact(kind: str, name: str, ns: str, r: dict[str, Any], ctx: ObserveContext) -> Fact:
    spec: FaultExperiment | None = r.get("spec")
    tool = "LitmusChaos" if kind == "ChaosEngine" else "Chaos Mesh"
    what = f"{tool} {kind} `{name}`" + (f" ({r['experiment']})" if r["experiment"] else "")
    does = what_it_does(spec) if spec is not None and tool == "Chaos Mesh" else ""
    targets = list(dict.fromkeys(workload_of(p) or p for p in r["pods"]))
    if not targets and spec is not None:
        targets = _selected_workloads(spec, ctx)
    target = targets[0] if targets else _named_workload(name, ns, ctx)
    when = r["first"].strftime("%H:%M") if r["first"] else "in the window"
    onto = f" on {' and '.join(targets[:3]) if targets else target}" if target else ""
    text = f"fault-injection experiment {what}{does} started{onto} at {when}"
    if spec is not None and spec.state in ("recovered", "paused", "stopped"):
        text += f" (now {spec.state})"
    subject = (
        ObjRef(kind="Pod", name=r["pods"][0], namespace=ns)
        if r["pods"]
        else ObjRef(kind=kind, name=name, namespace=ns)
    )
    objects = [ObjRef(kind="Pod", name=p, namespace=ns) for p in r["pods"][1:6]]
    objects.append(ObjRef(kind=kind, name=name, namespace=ns))
    detail: dict[str, Any] = {"change": "fault injection", "experiment": r["experiment"] or kind}
    if spec is not None:
        detail.update(action=spec.action, state=spec.state, fuller_view=True)
    return Fact(
        key=f"chaos:{kind}:{ns}:{name}",
        statement=text,
        evidence=list(r["eids"]),
        kind=FactKind.CHANGE,
        severity="warning",
        service=target,
        time=r["first"],
        quote=text,
        reason="FaultInjection",
        terms=list(match_terms(f"{kind} {name} chaos {spec.action if spec else ''}"))[:20],
        focus=ctx.is_focus(*(r["pods"] or [name]), target or ""),
        subject=subject,
        objects=objects,
        detail=detail,
    )


def what_it_does(x: FaultExperiment) -> str:
    """`` (partition between app=a and app=b, both directions)``, `` (loss 35%)``: the
    action of a Chaos Mesh experiment and the settings that say how hard it hits."""
    if not x.action:
        return ""
    p = x.params
    words = [x.action]
    if x.action in ("loss", "corrupt", "duplicate") and p.get(x.action):
        words = [f"{x.action} {p[x.action].rstrip('%')}%"]
    elif x.action == "delay" and p.get("latency"):
        words = [f"delay {p['latency']}" + (f" ± {p['jitter']}" if p.get("jitter") else "")]
    elif x.action == "bandwidth" and p.get("rate"):
        words = [f"bandwidth limited to {p['rate']}"]
    elif p.get("errno"):
        words.append(f"errno {p['errno']}")
    elif p.get("time_offset"):
        words = [f"clock offset {p['time_offset']}"]
    elif p.get("exception"):
        words.append(f"throws {p['exception'][:120]}")
    if p.get("path") and x.kind in ("IOChaos", "HTTPChaos"):
        words.append(f"on {p['path']}")
    if x.target:
        sides = " and ".join(_labels(s) for s in (x.selector, x.target) if s)
        words.append(f"between {sides}")
    elif x.selector:
        words.append(f"on {_labels(x.selector)}")
    if x.direction and x.target:
        words.append("both directions" if x.direction == "both" else f"direction {x.direction}")
    if x.duration:
        words.append(f"for {x.duration}")
    return f" ({', '.join(words)})"


def _labels(sel: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sel.items())


def _selected_workloads(x: FaultExperiment, ctx: ObserveContext) -> list[str]:
    """The workloads of the pods the experiment's selector (and target) match."""
    out: list[str] = []
    for sel in (x.selector, x.target):
        if not sel:
            continue
        spaces: list[str | None] = [*x.namespaces] or [x.namespace]
        for ns in spaces:
            for p in ctx.graph.pods(ns):
                labels = p.labels or {}
                if p.name and all(labels.get(k) == v for k, v in sel.items()):
                    w = workload_of(p.name) or p.name
                    if w not in out:
                        out.append(w)
    return out


def _named_workload(name: str, ns: str, ctx: ObserveContext) -> str | None:
    """The workload a Litmus engine's name names (``authors-http-chaos`` -> ``authors``)."""
    names = {str(w) for p in ctx.graph.pods(ns or None) if p.name and (w := workload_of(p.name))}
    words = name.lower().split("-")
    hits = [w for w in names if w.lower() in {"-".join(words[:i]) for i in range(1, len(words))}]
    return max(hits, key=len) if hits else None
