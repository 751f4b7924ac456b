"""Stuck, not failing: states in which nothing logs an error and the object itself is the
evidence (k8sgpt's CronJob and Job analyzers; the classic stuck Jobs):

- a CronJob whose schedule is not a valid cron expression (it never schedules);
- a Job that is suspended (``spec.suspend: true``: its pods are never created);
- a Job whose main container finished while another container of its pod keeps running
  (a sidecar that never exits holds the Job open forever);
- a pod bound to a node (``spec.nodeName``) that does not exist: no scheduler event
  ever comes, the pod stays Pending.
"""

from __future__ import annotations

import re

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, ref
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.registry import over_graph
from opsmate.records.k8s import Pod
from opsmate.records.k8s_objects import CronJob, Job

_MACROS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
_ITEM = r"(?:\*|\?|[0-9a-z]+(?:-[0-9a-z]+)?)(?:/\d+)?"
_FIELD = re.compile(rf"^{_ITEM}(?:,{_ITEM})*$", re.I)
_RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))
_NAMES = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
          "sun", "mon", "tue", "wed", "thu", "fri", "sat"}  # fmt: skip


def cron_problem(schedule: str) -> str | None:
    """Why a cron schedule is invalid (five fields, each in range), or None when it is valid."""
    s = schedule.strip()
    if s.lower() in _MACROS or s.lower().startswith("@every "):
        return None
    s = re.sub(r"^(?:CRON_)?TZ=\S+\s+", "", s)
    fields = s.split()
    if len(fields) != 5:
        return f"it has {len(fields)} fields, a cron schedule has 5"
    for text, (lo, hi) in zip(fields, _RANGES, strict=True):
        if not _FIELD.match(text):
            return f"field {text!r} is not a cron field"
        for num in re.findall(r"[0-9a-z]+", text.lower()):
            if num in _NAMES:
                continue
            if not num.isdigit():
                return f"field {text!r} is not a cron field"
            if not lo <= int(num) <= hi and "/" + num not in text:
                return f"{num} is out of range {lo}-{hi} in {text!r}"
    return None


@over_graph
@graph_cached
def stuck(ctx: ObserveContext) -> list[Fact]:
    g = ctx.graph
    facts: list[Fact] = []
    for cj in g.all("CronJob"):
        if not isinstance(cj, CronJob) or not cj.name or not cj.schedule:
            continue
        why = cron_problem(cj.schedule)
        if why:
            facts.append(
                k8s_fact(
                    ctx, K.MISCONFIGURATION, f"cronjob-schedule:{cj.namespace}:{cj.name}",
                    f"CronJob `{cj.name}` has schedule `{cj.schedule}`, which is not a valid cron "
                    f"expression ({why}): it never schedules a Job",
                    subject=ref("CronJob", cj.name, cj.namespace),
                    evidence=evidence(g, ("CronJob", cj.namespace, cj.name)),
                    reason="InvalidSchedule", conclusive=True,
                )
            )  # fmt: skip
    for job in g.all("Job"):
        if not isinstance(job, Job) or not job.name:
            continue
        done = any(c.type in ("Complete", "Failed") and c.status == "True" for c in job.conditions)
        if job.suspend and not done:
            facts.append(
                k8s_fact(
                    ctx, K.MISCONFIGURATION, f"job-suspended:{job.namespace}:{job.name}",
                    f"Job `{job.name}` is suspended (spec.suspend: true): it creates no pods",
                    subject=ref("Job", job.name, job.namespace),
                    evidence=evidence(g, ("Job", job.namespace, job.name)),
                    reason="Suspended",
                )
            )  # fmt: skip
        if not done:
            facts += _sidecar(ctx, job)
    facts += _missing_nodes(ctx)
    return facts


def _sidecar(ctx: ObserveContext, job: Job) -> list[Fact]:
    """A Job pod whose main container completed while another keeps running."""
    g = ctx.graph
    out: list[Fact] = []
    for p in g.pods(job.namespace):
        owner = p.owner_ref()
        if owner is None or owner.kind != "Job" or owner.name != job.name:
            continue
        main = [c for c in p.containers if c.state == "terminated" and (c.exit_code or 0) == 0]
        running = [c for c in p.containers if c.state == "running"]
        if not main or not running or p.phase not in ("Running", None):
            continue
        finished = max((c.finished_at for c in main if c.finished_at), default=None)
        out.append(
            k8s_fact(
                ctx, K.MISCONFIGURATION, f"job-sidecar:{job.namespace}:{job.name}",
                f"Job `{job.name}` never completes: in pod {p.name} container "
                f"{main[0].name} finished (exit 0"
                + (f" at {finished:%H:%M:%S}" if finished else "")
                + f") but its sidecar container {running[0].name} keeps running, so the pod "
                "and the Job stay active",
                subject=ref("Job", job.name, job.namespace),
                evidence=evidence(
                    g, ("Job", job.namespace, job.name), ("Pod", p.namespace, p.name)
                ),
                objects=[ref("Pod", p.name, p.namespace)],
                reason="SidecarNeverExits", conclusive=True,
            )
        )  # fmt: skip
        break
    return out


def _missing_nodes(ctx: ObserveContext) -> list[Fact]:
    """Pods bound by ``spec.nodeName`` to a node that is proven absent."""
    g = ctx.graph
    out: list[Fact] = []
    for p in g.pods():
        if not isinstance(p, Pod) or not p.name or not p.node or p.phase != "Pending":
            continue
        proof = g.absent("Node", None, p.node)
        if not proof:
            continue
        have = ", ".join(sorted(str(n.name) for n in g.nodes())[:6]) or "none"
        out.append(
            k8s_fact(
                ctx, K.SCHEDULING, f"node-missing:{p.namespace}:{p.name}",
                f"Pod `{p.name}` is bound to node `{p.node}` (spec.nodeName), which does not "
                f"exist (nodes: {have}): no scheduler places it and it stays Pending",
                subject=ref("Pod", p.name, p.namespace),
                evidence=evidence(g, ("Pod", p.namespace, p.name), proof),
                objects=[ref("Node", p.node, None)],
                reason="NodeNotFound", conclusive=True,
            )
        )  # fmt: skip
    return out
