"""A workload that fails only on nodes of one CPU architecture: its failing pods all run
on nodes of one ``kubernetes.io/arch``, its ready pods on nodes of another — an image built
for one architecture only (the runtime's ``exec format error``), scheduled onto a new node
group (Graviton / arm64 nodes beside amd64 ones)."""

from __future__ import annotations

from collections import defaultdict

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, ref
from opsmate.agent.observe.analyzers.k8s_services import pod_ready
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.registry import over_graph
from opsmate.agent.observe.text import workload_of
from opsmate.records.k8s import Node, Pod

ARCH_LABELS = ("kubernetes.io/arch", "beta.kubernetes.io/arch")


def _arch(node: Node) -> str | None:
    return next((node.labels[k] for k in ARCH_LABELS if node.labels.get(k)), None)


def failing(p: Pod) -> bool:
    """A pod whose containers keep failing to run (restarted and not ready, or waiting in
    a back-off)."""
    return any(
        (c.state == "waiting" and c.reason in ("CrashLoopBackOff", "RunContainerError"))
        or (c.restarts > 0 and not c.ready and c.last_termination is not None)
        for c in p.containers
    )


@over_graph
@graph_cached
def architecture_split(ctx: ObserveContext) -> list[Fact]:
    g = ctx.graph
    arch = {n.name: a for n in g.nodes() if isinstance(n, Node) and n.name and (a := _arch(n))}
    if len(set(arch.values())) < 2:
        return []  # one architecture (or none known): nothing to split by
    groups: dict[tuple[str | None, str], list[Pod]] = defaultdict(list)
    for p in g.pods():
        w = workload_of(p.name) if p.name else None
        if w and p.node in arch:
            groups[(p.namespace, w)].append(p)
    facts: list[Fact] = []
    for (ns, w), pods in sorted(groups.items(), key=lambda kv: (kv[0][0] or "", kv[0][1])):
        bad = [p for p in pods if failing(p)]
        good = [p for p in pods if pod_ready(p)]
        bad_arch = {arch[str(p.node)] for p in bad}
        good_arch = {arch[str(p.node)] for p in good}
        if not bad or not good or len(bad_arch) != 1 or bad_arch & good_arch:
            continue
        (a,) = bad_arch
        nodes = sorted({str(p.node) for p in bad})
        first = bad[0]
        facts.append(
            k8s_fact(
                ctx, K.MISCONFIGURATION, f"arch-split:{ns}:{w}",
                f"{w}'s pods fail only on {a} nodes: {len(bad)} pod(s) on "
                f"{', '.join(nodes[:3])} (kubernetes.io/arch={a}) keep failing while "
                f"{len(good)} on {'/'.join(sorted(good_arch))} nodes are ready — its image "
                f"does not run on {a} (a single-architecture image: exec format error)",
                subject=ref("Pod", first.name, first.namespace),
                evidence=evidence(
                    g, ("Pod", first.namespace, first.name), ("Node", None, nodes[0])
                ),
                objects=[ref("Node", n) for n in nodes[:3]],
                service=w, reason="ArchitectureMismatch", conclusive=True,
                detail={"architecture": a, "ready_on": sorted(good_arch)},
            )
        )  # fmt: skip
    return facts
