"""What pods refer to and what is proven not to exist: Secrets, ConfigMaps, keys, claims,
ServiceAccounts.

For every pod in the graph (and every workload's pod template: a Deployment whose pods
were never created still names what they would need), each reference — env
``valueFrom`` (ConfigMap / Secret key), ``envFrom``, ``configMap`` / ``secret`` /
``persistentVolumeClaim`` volumes (and projected sources), ``serviceAccountName``,
``imagePullSecrets`` — is checked against the graph. A MISSING_REFERENCE is emitted only
with the E id proving absence (a complete listing of that kind in that namespace, or a
get that found nothing); a missing *key* only when the ConfigMap is present and its keys
are known (Secrets are read as metadata: their keys are never known). References marked
``optional`` are skipped. Pods of one workload missing the same thing are one fact.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, quoted, ref
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, ObjRef
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.observe.registry import over_graph
from opsmate.records.k8s import ObjectRef, Pod
from opsmate.records.k8s_objects import ConfigMap, CronJob, Job, Workload

_TEMPLATE_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob")
_OTHER = {"Secret": "ConfigMap", "ConfigMap": "Secret"}


@dataclass(frozen=True)
class Reference:
    kind: str  # Secret | ConfigMap | PersistentVolumeClaim | ServiceAccount
    name: str
    key: str | None  # a key of a ConfigMap / Secret, when one is named
    how: str  # "mounts ... as volume `x`", "reads env `DB_URL` from ..."
    pull_secret: bool = False


def references(pod: Pod) -> list[Reference]:
    """Every non-optional reference of a pod (or pod template) to another object."""
    out: list[Reference] = []
    kinds = {"configmap": "ConfigMap", "secret": "Secret"}
    for c in pod.all_containers():
        who = f"container `{c.name}`"
        for e in c.env:
            if e.source in kinds and e.ref_name and not e.optional:
                out.append(
                    Reference(
                        kinds[str(e.source)],
                        e.ref_name,
                        e.ref_key,
                        f"{who} reads env `{e.name}` from",
                    )
                )
        for ef in c.env_from:
            if ef.source in kinds and ef.name and not ef.optional:
                out.append(
                    Reference(
                        kinds[str(ef.source)],
                        ef.name,
                        None,
                        f"{who} loads its environment (envFrom) from",
                    )
                )
    vtypes = {
        "configMap": "ConfigMap",
        "secret": "Secret",
        "persistentVolumeClaim": "PersistentVolumeClaim",
    }
    for v in pod.volumes:
        if v.type in vtypes and v.ref_name and not v.optional:
            keys: list[str | None] = list(v.keys) or [None]
            for key in keys:
                out.append(
                    Reference(
                        vtypes[str(v.type)], v.ref_name, key, f"mounts volume `{v.name}` from"
                    )
                )
    if pod.service_account and pod.service_account != "default":
        out.append(Reference("ServiceAccount", pod.service_account, None, "runs as"))
    for s in pod.image_pull_secrets:
        out.append(Reference("Secret", s, None, "pulls its images with", pull_secret=True))
    return out


@dataclass
class _Group:
    holder: tuple[str, str | None, str]  # (kind, namespace, name) of the pod / workload
    owner: ObjectRef | None
    pods: list[str] = field(default_factory=list)


def _holders(g: ObjectGraph) -> list[tuple[tuple[str, str | None, str], Pod, ObjectRef | None]]:
    out = []
    for p in g.pods():
        if p.name:
            out.append((("Pod", p.namespace, str(p.name)), p, p.owner_ref()))
    for kind in _TEMPLATE_KINDS:
        for w in g.all(kind):
            if isinstance(w, Workload | Job | CronJob) and w.template is not None and w.name:
                out.append(((kind, w.namespace, str(w.name)), w.template, None))
    return out


@over_graph
@graph_cached
def missing_references(ctx: ObserveContext) -> list[Fact]:
    """Pods and pod templates referring to an object or key proven not to exist."""
    g = ctx.graph
    groups: dict[tuple[str, ...], tuple[_Group, Reference, str, str | None]] = {}
    for holder, pod, owner in _holders(g):
        ns = holder[1] or pod.namespace
        for r in references(pod):
            proof = g.absent(r.kind, ns, r.name)
            missing_key = None
            if not proof and r.key and r.kind == "ConfigMap":
                cm = g.get("ConfigMap", ns, r.name)
                if isinstance(cm, ConfigMap) and r.key not in cm.keys:
                    missing_key, proof = r.key, g.source_of("ConfigMap", ns, r.name)
            if not proof:
                continue
            by = owner.name if owner else holder[2]
            gkey = (r.kind, str(ns), r.name, missing_key or "", r.how, str(by))
            if gkey not in groups:
                groups[gkey] = (_Group(holder, owner), r, proof, missing_key)
            groups[gkey][0].pods.append(holder[2])
    return [_fact(ctx, grp, r, proof, key) for grp, r, proof, key in groups.values()]


def _fact(ctx: ObserveContext, grp: _Group, r: Reference, proof: str, key: str | None) -> Fact:
    g = ctx.graph
    kind, ns, name = grp.holder
    who = f"{kind} `{name}`"
    if kind == "Pod" and len(grp.pods) > 1:
        who += (
            f" (and {len(grp.pods) - 1} more pod(s) of {grp.owner.kind} {grp.owner.name})"
            if (grp.owner)
            else f" (and {len(grp.pods) - 1} more pod(s))"
        )
    if key:
        statement = (
            f"{who} {r.how} {r.kind} `{r.name}` key `{key}`, but {r.kind} `{r.name}` "
            f"has no key `{key}` (keys: {quoted(_keys(g, r, ns)) or 'none'})"
        )
        reason = "KeyNotFound"
    else:
        existing = sorted(str(o.name) for o in g.all(r.kind, ns) if getattr(o, "name", None))
        other = _OTHER.get(r.kind)
        twin = (
            f"; a {other} named `{r.name}` does exist" if other and g.get(other, ns, r.name) else ""
        )
        what = f" key `{r.key}` of" if r.key else ""
        statement = (
            f"{who} {r.how}{what} {r.kind} `{r.name}`, which does not exist in "
            f"namespace {ns} ({r.kind}s there: {quoted(existing) or 'none'}{twin})"
        )
        reason = f"{r.kind}NotFound"
    objects: list[ObjRef] = [ref(r.kind, r.name, ns)]
    if grp.owner and grp.owner.kind:
        objects.append(ref(grp.owner.kind, grp.owner.name, ns))
    objects += [ref("Pod", p, ns) for p in grp.pods[1:6]]
    return k8s_fact(
        ctx,
        K.MISCONFIGURATION if r.pull_secret else K.MISSING_REFERENCE,
        f"ref:{r.kind}:{ns}:{r.name}:{key or ''}:{grp.owner.name if grp.owner else name}",
        statement,
        subject=ref(kind, name, ns),
        evidence=evidence(g, grp.holder, proof),
        objects=objects,
        severity="warning" if r.pull_secret else "error",
        reason=reason,
        service=grp.owner.name if grp.owner else name,
        count=max(len(grp.pods), 1),
        detail={"ref_kind": r.kind, "ref_name": r.name, "key": key or r.key, "pods": grp.pods[:20]},
    )


def _keys(g: ObjectGraph, r: Reference, ns: str | None) -> list[str]:
    cm = g.get("ConfigMap", ns, r.name)
    return list(cm.keys) if isinstance(cm, ConfigMap) else []
