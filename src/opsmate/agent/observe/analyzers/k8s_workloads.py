"""Workloads: Jobs that failed, CronJobs that stopped, replica shortfalls, PDBs that block.

- a Job with a ``Failed`` condition (BackoffLimitExceeded, DeadlineExceeded) -> JOB_FAILED
  (a symptom) naming its failed pods and the limit it passed;
- a Deployment / StatefulSet / DaemonSet / ReplicaSet with fewer ready replicas than
  desired -> NOT_READY; a ``ReplicaFailure`` or ``Progressing=False`` condition is quoted,
  and read like an event message (a quota or a missing ServiceAccount is a cause);
- a suspended CronJob, or one whose last schedule has active Jobs piling up -> observation;
- a PodDisruptionBudget that can never allow a disruption (minAvailable >= expected
  pods, or maxUnavailable 0) -> MISCONFIGURATION (warning); one at 0 allowed now -> info.
"""

from __future__ import annotations

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, quoted, ref
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, ObjRef
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.k8s_messages import read_message
from opsmate.agent.observe.registry import over_graph
from opsmate.records.k8s import Pod
from opsmate.records.k8s_objects import CronJob, Job, PodDisruptionBudget, Workload

_WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet")


def _job_pods(pods: list[Pod], job: Job) -> list[Pod]:
    return [
        p
        for p in pods
        if p.owner == f"Job/{job.name}"
        or p.labels.get("job-name") == job.name
        or p.labels.get("batch.kubernetes.io/job-name") == job.name
    ]


@over_graph
@graph_cached
def jobs(ctx: ObserveContext) -> list[Fact]:
    """Failed Jobs and CronJobs that do not run."""
    g = ctx.graph
    facts: list[Fact] = []
    for job in g.all("Job"):
        if not isinstance(job, Job) or not job.name:
            continue
        failed = next(
            (c for c in job.conditions if c.type == "Failed" and c.status == "True"), None
        )
        if failed is None:
            continue
        ns = job.namespace
        pods = _job_pods(g.pods(ns), job)
        limit = (
            f"backoffLimit {job.backoff_limit}"
            if failed.reason == "BackoffLimitExceeded"
            else f"activeDeadlineSeconds {job.active_deadline_seconds}"
        )
        objects: list[ObjRef] = [ref("Pod", p.name, ns) for p in pods[:6]]
        if job.owner and "/" in job.owner:
            okind, oname = job.owner.split("/", 1)
            objects.insert(0, ref(okind, oname, ns))
        facts.append(_job_fact(ctx, job, failed.reason, failed.message, limit, pods, objects))
    for cj in g.all("CronJob"):
        if isinstance(cj, CronJob) and cj.name and cj.suspend:
            facts.append(
                k8s_fact(
                    ctx,
                    K.MISCONFIGURATION,
                    f"cronjob-suspended:{cj.namespace}:{cj.name}",
                    f"CronJob `{cj.name}` is suspended (spec.suspend: true): it schedules no Jobs",
                    subject=ref("CronJob", cj.name, cj.namespace),
                    severity="error",
                    evidence=evidence(g, ("CronJob", cj.namespace, cj.name)),
                    reason="Suspended",
                )
            )
    return facts


def _job_fact(
    ctx: ObserveContext,
    job: Job,
    reason: str | None,
    message: str | None,
    limit: str,
    pods: list[Pod],
    objects: list[ObjRef],
) -> Fact:
    ns = job.namespace
    names = [str(p.name) for p in pods]
    tail = f"; its pods: {quoted(names, 3)}" if names else ""
    return k8s_fact(
        ctx,
        K.JOB_FAILED,
        f"job:{ns}:{job.name}",
        f"Job `{job.name}` failed ({reason}: {message}): {job.failed} pod(s) failed, past its "
        f"{limit}{tail}",
        subject=ref("Job", job.name, ns),
        evidence=evidence(ctx.graph, ("Job", ns, job.name)),
        objects=objects,
        service=job.name,
        reason=reason,
        message=message,
        detail={"failed": job.failed, "backoff_limit": job.backoff_limit, "pods": names[:20]},
    )


@over_graph
@graph_cached
def replicas(ctx: ObserveContext) -> list[Fact]:
    """Workloads short of ready replicas, with the controller's own reason when it gave one."""
    g = ctx.graph
    facts: list[Fact] = []
    for kind in _WORKLOADS:
        for w in g.all(kind):
            if not isinstance(w, Workload) or not w.name:
                continue
            facts += _workload(ctx, kind, w)
    return facts


def _workload(ctx: ObserveContext, kind: str, w: Workload) -> list[Fact]:
    g, ns = ctx.graph, w.namespace
    out: list[Fact] = []
    me = ref(kind, w.name, ns)
    ev = evidence(g, (kind, ns, w.name))
    for c in w.conditions:
        bad = (c.type == "ReplicaFailure" and c.status == "True") or (
            c.type == "Progressing" and c.status == "False"
        )
        if not bad or not c.message:
            continue
        reading = read_message(c.reason, c.message, ns)
        fkind = reading.kind if reading and reading.kind != K.OBSERVATION else K.NOT_READY
        refs = [ref(k, n, x or ns) for k, n, x in reading.refs] if reading else []
        out.append(
            k8s_fact(
                ctx,
                fkind,
                f"workload-cond:{kind}:{ns}:{w.name}:{c.type}",
                f"{kind} `{w.name}` reports {c.type}={c.status} ({c.reason}): {c.message}",
                subject=me,
                evidence=ev,
                objects=refs,
                service=w.name,
                reason=c.reason,
                message=c.message,
                detail={**(reading.detail if reading else {}), "condition": c.type},
            )
        )
    r = w.replicas
    desired = r.desired or 0
    if kind == "ReplicaSet" and w.owner and g.get("Deployment", ns, w.owner.split("/", 1)[-1]):
        return out  # the Deployment's own fact covers it
    if r.desired == 0 and kind in ("Deployment", "StatefulSet"):
        out += _scaled_to_zero(ctx, kind, w)
    if desired > 0 and r.ready < desired:
        created = f", {r.current} created" if r.current is not None and r.current < desired else ""
        out.append(
            k8s_fact(
                ctx,
                K.NOT_READY,
                f"workload-replicas:{kind}:{ns}:{w.name}",
                f"{kind} `{w.name}` has {r.ready}/{desired} replicas ready"
                f"{created} ({r.unavailable} unavailable)",
                subject=me,
                evidence=ev,
                service=w.name,
                severity="error" if r.ready == 0 else "warning",
                reason="ReplicasUnavailable",
                detail={"desired": desired, "ready": r.ready, "current": r.current},
            )
        )
    return out


@over_graph
@graph_cached
def disruption_budgets(ctx: ObserveContext) -> list[Fact]:
    """PDBs that block every voluntary eviction (drains hang on them)."""
    g = ctx.graph
    facts = []
    for pdb in g.all("PodDisruptionBudget"):
        if not isinstance(pdb, PodDisruptionBudget) or not pdb.name or pdb.disruptions_allowed != 0:
            continue
        expected = pdb.expected_pods or 0
        never = (
            pdb.max_unavailable in ("0", "0%")
            or (
                pdb.min_available is not None
                and pdb.min_available.isdigit()
                and expected > 0
                and int(pdb.min_available) >= expected
            )
            or pdb.min_available == "100%"
        )
        rule = (
            f"minAvailable {pdb.min_available}"
            if pdb.min_available is not None
            else f"maxUnavailable {pdb.max_unavailable}"
        )
        facts.append(
            k8s_fact(
                ctx,
                K.MISCONFIGURATION if never else K.OBSERVATION,
                f"pdb:{pdb.namespace}:{pdb.name}",
                f"PodDisruptionBudget `{pdb.name}` ({rule}, pods `{pdb.selector.text()}`: "
                f"{pdb.current_healthy}/{expected} healthy) allows 0 disruptions"
                + (": it blocks every eviction and node drain" if never else " right now"),
                subject=ref("PodDisruptionBudget", pdb.name, pdb.namespace),
                # the pods it guards: a drain of the node they run on waits on it
                objects=[
                    ref("Pod", p.name, p.namespace)
                    for p in g.pods(pdb.namespace)
                    if p.name and not pdb.selector.is_empty() and pdb.selector.matches(p.labels)
                ][:6],
                evidence=evidence(g, ("PodDisruptionBudget", pdb.namespace, pdb.name)),
                severity="warning" if never else "info",
                reason="DisruptionsBlocked",
                detail={
                    "min_available": pdb.min_available,
                    "max_unavailable": pdb.max_unavailable,
                    "expected_pods": expected,
                },
            )
        )
    return facts


def template_labels(w: Workload) -> dict[str, str]:
    """The labels a workload gives its pods (the template's, else its selector's)."""
    labels = dict(w.template.labels) if w.template is not None else {}
    return labels or dict(getattr(w.selector, "match_labels", None) or {})


def _scaled_to_zero(ctx: ObserveContext, kind: str, w: Workload) -> list[Fact]:
    """A workload scaled to 0 replicas while a Service still sends traffic to its pods: the
    Service has no endpoints, every call to it fails, nothing crash-loops."""
    from opsmate.records.k8s_objects import Service

    g, ns = ctx.graph, w.namespace
    labels = template_labels(w)
    served = [
        s
        for s in g.all("Service", ns)
        if isinstance(s, Service)
        and s.selector
        and all(labels.get(k) == v for k, v in s.selector.items())
    ]
    if not served or not labels:
        return []
    names = [str(s.name) for s in served]
    return [
        k8s_fact(
            ctx,
            K.MISCONFIGURATION,
            f"scaled-to-zero:{kind}:{ns}:{w.name}",
            f"{kind} `{w.name}` is scaled to 0 replicas (spec.replicas: 0), so Service "
            f"{quoted(names, 3)} has no pods to send traffic to and every call to it fails",
            subject=ref(kind, w.name, ns),
            evidence=evidence(g, (kind, ns, w.name), *[("Service", ns, n) for n in names[:2]]),
            objects=[ref("Service", n, ns) for n in names[:3]],
            service=w.name,
            severity="error",
            reason="ScaledToZero",
            conclusive=True,
            detail={"replicas": 0, "services": names},
        )
    ]
