"""A pod that does not run what its workload says: a container image that is not in any
image of the workload's revision the pod belongs to (a fault injector swapping the image
for ``pause``, a hand edit of a pod). The workload's template is the reference; the pod's
own spec says what runs. Containers a webhook adds at admission (a mesh's proxy, a runtime's
sidecar) are not in the template either: a pod with more containers than its template has
images is read as injected, not swapped, unless more containers differ than were added.
"""

from __future__ import annotations

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, ref
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.registry import over_graph
from opsmate.agent.observe.text import workload_of
from opsmate.records.k8s import Pod, Revision, Rollout

_HUB = ("docker.io/", "index.docker.io/", "registry-1.docker.io/")


def image_repo(image: str) -> str:
    """``registry/repo:tag@digest`` -> ``repo`` as Docker reads it (what an image is, not which
    build): ``docker.io/library/python:3.9`` and ``python:3.9`` are the same image."""
    base = image.split("@", 1)[0].lower()
    head, _, tail = base.rpartition(":")
    base = head if head and "/" not in tail else base
    for hub in _HUB:
        if base.startswith(hub):
            base = base[len(hub) :]
    return base.removeprefix("library/")


def revision_of(ro: Rollout, p: Pod) -> Revision | None:
    """The revision of workload ``ro`` that pod ``p`` belongs to (by its ReplicaSet)."""
    owner = p.owner_ref()
    rs = owner.name if owner is not None else None
    return next((r for r in ro.revisions if r.replicaset and r.replicaset == rs), None)


@over_graph
@graph_cached
def image_drift(ctx: ObserveContext) -> list[Fact]:
    g = ctx.graph
    facts: list[Fact] = []
    rollouts = {(r.namespace, r.name): r for r in g.rollouts() if isinstance(r, Rollout)}
    for p in g.pods():
        if not p.name:
            continue
        wl = workload_of(p.name)
        ro = rollouts.get((p.namespace, wl)) if wl else None
        if ro is None:
            continue
        rev = revision_of(ro, p)
        if rev is None or not rev.images:
            continue
        allowed = {image_repo(i) for i in rev.images}
        odd = [c for c in p.containers if c.image and image_repo(c.image) not in allowed]
        if len(odd) <= len(p.containers) - len(set(rev.images)):
            continue  # containers added at admission (a mesh or runtime sidecar), not swapped
        for c in odd:
            facts.append(
                k8s_fact(
                    ctx, K.MISCONFIGURATION, f"image-drift:{p.namespace}:{p.name}:{c.name}",
                    f"Pod `{p.name}` runs container {c.name} from image `{c.image}`, which is not "
                    f"the image of its workload {wl} (revision {rev.revision}: "
                    f"{', '.join(f'`{i}`' for i in rev.images[:3])}): the pod was changed "
                    "outside its workload (an image swapped in place, e.g. by a fault injector)",
                    subject=ref("Pod", p.name, p.namespace),
                    evidence=evidence(g, ("Pod", p.namespace, p.name))
                    + [e for e in [g.source_of("Deployment", p.namespace, str(wl))] if e],
                    objects=[ref("Deployment", str(wl), p.namespace)],
                    service=wl, reason="ImageDrift", conclusive=True,
                    detail={"image": c.image, "template_images": list(rev.images)},
                )
            )  # fmt: skip
    return facts
