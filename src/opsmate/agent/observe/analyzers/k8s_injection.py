"""A pod created without the containers admission injected into its siblings.

A mutating webhook (a secrets agent, a service-mesh proxy, a log shipper) adds containers to
pods as they are created; they are in no workload template. When the webhook cannot be
called and fails open (``failurePolicy: Ignore``), new pods are created without them: the
application then misses what they provided (a secrets file, a proxy, a mount) and fails,
while the older pods, injected when they were created, keep working. A rollout at that
moment looks like the cause; the new template did not drop the containers.

Read from the pods and the workload's revisions: a container of a pod whose image is not
among the images of its own revision's template was injected; a failing pod of another
revision that has none of the containers injected into its siblings was not injected.
"""

from __future__ import annotations

from collections import defaultdict

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, ref
from opsmate.agent.observe.analyzers.k8s_drift import image_repo, revision_of
from opsmate.agent.observe.analyzers.k8s_node_split import failing
from opsmate.agent.observe.analyzers.k8s_services import pod_ready
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.registry import over_graph
from opsmate.agent.observe.text import workload_of
from opsmate.records.k8s import Pod, Rollout


def _revision_images(ro: Rollout, p: Pod) -> set[str] | None:
    rev = revision_of(ro, p)
    return {image_repo(i) for i in rev.images} if rev is not None and rev.images else None


def _injected(p: Pod, template: set[str]) -> set[str]:
    """Names of the containers (init or not) whose image no container of the template has."""
    return {
        c.name
        for c in [*p.init_containers, *p.containers]
        if c.name and c.image and image_repo(c.image) not in template
    }


@over_graph
@graph_cached
def missing_injection(ctx: ObserveContext) -> list[Fact]:
    g = ctx.graph
    rollouts = {(r.namespace, r.name): r for r in g.rollouts() if isinstance(r, Rollout)}
    by_workload: dict[tuple[str | None, str], list[Pod]] = defaultdict(list)
    for p in g.pods():
        w = workload_of(p.name) if p.name else None
        if w and (p.namespace, w) in rollouts:
            by_workload[(p.namespace, w)].append(p)
    facts: list[Fact] = []
    for (ns, w), pods in sorted(by_workload.items(), key=lambda kv: (kv[0][0] or "", kv[0][1])):
        ro = rollouts[(ns, w)]
        injected: dict[str, list[Pod]] = defaultdict(list)  # container name -> pods with it
        for p in pods:
            template = _revision_images(ro, p)
            if template is not None and pod_ready(p):
                for name in _injected(p, template):
                    injected[name].append(p)
        if not injected:
            continue
        for p in pods:
            own = {c.name for c in [*p.init_containers, *p.containers] if c.name}
            if not failing(p) or own & set(injected):
                continue
            had = sorted({q.name for qs in injected.values() for q in qs if q.name})
            names = sorted(injected)
            facts.append(
                k8s_fact(
                    ctx, K.MISCONFIGURATION, f"not-injected:{ns}:{p.name}",
                    f"Pod `{p.name}` of {w} was created without the container(s) "
                    f"{', '.join(names[:4])} that admission injected into its ready siblings "
                    f"({', '.join(had[:3])}) and that its template does not declare: the "
                    "mutating webhook (injector) did not act on it — an injector that fails "
                    "open while it is down — so what they provide (secrets, a proxy) is missing",
                    subject=ref("Pod", p.name, p.namespace),
                    evidence=evidence(g, ("Pod", p.namespace, p.name),
                                      ("Pod", p.namespace, had[0]) if had else None),
                    objects=[ref("Pod", n, ns) for n in had[:2]],
                    service=w, reason="NotInjected", conclusive=True,
                    detail={"missing": names, "injected_in": had[:5]},
                )
            )  # fmt: skip
    return facts
