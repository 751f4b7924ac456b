"""NetworkPolicies against the calls the system actually makes.

A policy that denies traffic is doing its job unless the denied traffic is a call some
workload depends on. The dependency graph (``observe/depgraph.py``: env addresses,
arguments, Services) says who calls whom; for each such edge whose callee is isolated for
ingress, the caller's pods are judged against every policy selecting the callee's pods
(policies add up). A caller no policy admits has its calls dropped — they hang until the
client gives up — which explains timeouts that neither end logs a reason for.
"""

from __future__ import annotations

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, quoted, ref
from opsmate.agent.observe.analyzers.k8s_network_policy import _DENY, _sel, _verdict
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.depgraph import build, workload_of
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.registry import over_graph
from opsmate.records.k8s import Pod
from opsmate.records.k8s_objects import NetworkPolicy


@over_graph
@graph_cached
def blocked_dependencies(ctx: ObserveContext) -> list[Fact]:
    """Calls between workloads that the namespace's NetworkPolicies drop."""
    g = ctx.graph
    policies = [p for p in g.all("NetworkPolicy") if isinstance(p, NetworkPolicy)]
    if not policies:
        return []
    dg = build(g)
    by_workload: dict[str, list[Pod]] = {}
    for p in g.pods():
        by_workload.setdefault(workload_of(p), []).append(p)
    facts: list[Fact] = []
    for edge in dg.edges:
        callers, callees = by_workload.get(edge.src), by_workload.get(edge.dst)
        if not callers or not callees or not edge.via.startswith(("env", "argument")):
            continue
        target = callees[0]
        ns = target.namespace
        isolating = [
            pol
            for pol in policies
            if pol.namespace == ns
            and "Ingress" in pol.policy_types
            and _sel(pol.pod_selector, target.labels)
        ]
        if not isolating:
            continue
        rules = [r for pol in isolating for r in pol.ingress]
        caller = callers[0]
        if _verdict(g, rules, ns, caller) != _DENY:
            continue
        # the policy written for this callee first, a namespace-wide default after it
        isolating.sort(
            key=lambda pol: bool(pol.pod_selector.everything or pol.pod_selector.is_empty())
        )
        names = [str(pol.name) for pol in isolating]
        facts.append(
            k8s_fact(
                ctx,
                K.NETWORK_POLICY,
                f"netpol-edge:{ns}:{edge.src}:{edge.dst}",
                f"NetworkPolicy {quoted(names, 3)} isolates {edge.dst} for ingress, and no "
                f"rule admits {edge.src}, which calls it ({edge.via}): those calls are dropped "
                "and hang until the client times out",
                subject=ref("NetworkPolicy", names[0], ns),
                evidence=evidence(
                    g, *[("NetworkPolicy", ns, n) for n in names[:3]], *edge.evidence
                ),
                objects=[ref("Deployment", edge.dst, ns), ref("Deployment", edge.src, ns)],
                service=edge.dst,
                severity="error",
                reason="BlocksDependency",
                detail={"caller": edge.src, "callee": edge.dst, "policies": names},
            )
        )
    return facts
