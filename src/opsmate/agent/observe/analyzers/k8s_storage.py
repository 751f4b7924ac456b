"""Storage: claims that cannot bind (missing StorageClass or volume, no default class).

- a PersistentVolumeClaim (or a StatefulSet's volumeClaimTemplate) naming a StorageClass
  proven absent -> MISSING_REFERENCE, with the classes that do exist;
- a claim with no class set while no class is marked default (complete listing) and the
  claim is pending -> MISCONFIGURATION;
- a claim bound to (``volumeName``) a PersistentVolume proven absent -> MISSING_REFERENCE;
- a claim still Pending with an existing class -> NOT_READY, naming the class's binding
  mode (``WaitForFirstConsumer`` waits for a pod to be scheduled).

The pods that mount the claim (and their owners) are named as ``objects``, so the
judge links the claim to a pod that is Pending because of it.
"""

from __future__ import annotations

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, quoted, ref
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, ObjRef
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.observe.registry import over_graph
from opsmate.records.k8s import Pod
from opsmate.records.k8s_objects import PersistentVolumeClaim, StorageClass, Workload


def _users(g: ObjectGraph, claim: str, ns: str | None) -> list[ObjRef]:
    """Pods mounting ``claim`` and their owners; StatefulSets whose template makes it."""
    out: list[ObjRef] = []
    pod: Pod
    for pod in g.pods(ns):
        if any(v.type == "persistentVolumeClaim" and v.ref_name == claim for v in pod.volumes):
            out.append(ref("Pod", pod.name, pod.namespace))
            owner = pod.owner_ref()
            if owner and owner.kind and owner.name:
                out.append(ref(owner.kind, owner.name, pod.namespace))
    for sts in g.all("StatefulSet", ns):
        if (
            isinstance(sts, Workload)
            and sts.name
            and any(claim.startswith(f"{t.name}-{sts.name}-") for t in sts.volume_claim_templates)
        ):
            out.append(ref("StatefulSet", sts.name, sts.namespace))
    return out[:10]


def _classes(g: ObjectGraph) -> list[StorageClass]:
    return [c for c in g.all("StorageClass") if isinstance(c, StorageClass)]


def _missing_class(
    ctx: ObserveContext,
    owner: tuple[str, str | None, str],
    cls: str,
    users: list[ObjRef],
    what: str,
) -> Fact | None:
    g = ctx.graph
    proof = g.absent("StorageClass", None, cls)
    if not proof:
        return None
    kind, ns, name = owner
    have = quoted(sorted(str(c.name) for c in _classes(g))) or "none"
    default = next((c.name for c in _classes(g) if c.is_default), None)
    hint = f"; the default class is `{default}`" if default else ""
    return k8s_fact(
        ctx,
        K.MISSING_REFERENCE,
        f"storage-class:{kind}:{ns}:{name}:{cls}",
        f"{what} requests StorageClass `{cls}` (spec.storageClassName), which does not exist "
        f"(StorageClasses: {have}{hint}), so the claim cannot be provisioned or bound",
        subject=ref(kind, name, ns),
        evidence=evidence(g, owner, proof),
        objects=[ref("StorageClass", cls), *users],
        reason="StorageClassNotFound",
        detail={"storage_class": cls, "existing": sorted(str(c.name) for c in _classes(g))},
    )


@over_graph
@graph_cached
def claims(ctx: ObserveContext) -> list[Fact]:
    """Each claim (and claim template) against the StorageClasses and volumes in the graph."""
    g = ctx.graph
    facts: list[Fact] = []
    for pvc in g.all("PersistentVolumeClaim"):
        if not isinstance(pvc, PersistentVolumeClaim) or not pvc.name:
            continue
        ns, name = pvc.namespace, pvc.name
        mine = ("PersistentVolumeClaim", ns, name)
        users = _users(g, name, ns)
        what = f"PersistentVolumeClaim `{name}` ({pvc.phase or 'phase unknown'})"
        missing = None
        if pvc.storage_class and pvc.phase != "Bound":
            missing = _missing_class(ctx, mine, pvc.storage_class, users, what)
        if missing is not None:
            facts.append(missing)
            continue
        if pvc.volume_name and (proof := g.absent("PersistentVolume", None, pvc.volume_name)):
            facts.append(
                k8s_fact(
                    ctx,
                    K.MISSING_REFERENCE,
                    f"pvc-volume:{ns}:{name}",
                    f"{what} is bound to PersistentVolume `{pvc.volume_name}` (spec.volumeName), "
                    "which does not exist",
                    subject=ref("PersistentVolumeClaim", name, ns),
                    evidence=evidence(g, mine, proof),
                    objects=[ref("PersistentVolume", pvc.volume_name), *users],
                    reason="VolumeNotFound",
                    detail={"volume": pvc.volume_name},
                )
            )
            continue
        if pvc.phase != "Pending":
            continue
        classes = _classes(g)
        if (
            pvc.storage_class is None
            and g.listed("StorageClass")
            and not any(c.is_default for c in classes)
        ):
            facts.append(
                k8s_fact(
                    ctx,
                    K.MISCONFIGURATION,
                    f"pvc-noclass:{ns}:{name}",
                    f"{what} sets no storageClassName and no StorageClass is marked default "
                    f"(StorageClasses: {quoted(sorted(str(c.name) for c in classes)) or 'none'})",
                    subject=ref("PersistentVolumeClaim", name, ns),
                    evidence=evidence(g, mine, g.listed("StorageClass")),
                    objects=users,
                    reason="NoDefaultStorageClass",
                )
            )
            continue
        cls = g.get("StorageClass", None, pvc.storage_class or "")
        mode = (
            f" (StorageClass `{cls.name}` binds {cls.binding_mode})"
            if isinstance(cls, StorageClass) and cls.binding_mode
            else ""
        )
        facts.append(
            k8s_fact(
                ctx,
                K.NOT_READY,
                f"pvc-pending:{ns}:{name}",
                f"{what} is not bound yet{mode}",
                subject=ref("PersistentVolumeClaim", name, ns),
                evidence=evidence(g, mine),
                objects=users,
                severity="warning",
                reason="ClaimPending",
                detail={"storage_class": pvc.storage_class},
            )
        )
    facts += _claim_templates(ctx)
    return facts


def _claim_templates(ctx: ObserveContext) -> list[Fact]:
    out = []
    for sts in ctx.graph.all("StatefulSet"):
        if not isinstance(sts, Workload) or not sts.name:
            continue
        for t in sts.volume_claim_templates:
            if not t.storage_class:
                continue
            what = f"StatefulSet `{sts.name}`'s volumeClaimTemplate `{t.name}`"
            f = _missing_class(
                ctx, ("StatefulSet", sts.namespace, sts.name), t.storage_class, [], what
            )
            if f is not None:
                out.append(f)
    return out
