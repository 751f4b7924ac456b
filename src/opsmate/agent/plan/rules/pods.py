"""Rules about pods: explain what a pod's state shows.

- an OOM-killed container: its memory use against its limit (metrics);
- a crash-looping or exiting container: its log, previous instance first (its last words);
- a pod that cannot be scheduled or was evicted: the nodes' conditions;
- an alert firing about a pod or a claim in a namespace not read yet: that namespace's pods
  and events (the alert is where the trouble of a dependency elsewhere shows first).
"""

from __future__ import annotations

from collections.abc import Iterable

from opsmate.agent.kinds import too_few
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.text import workload_of
from opsmate.agent.plan.registry import Check, RuleContext, fact_rule
from opsmate.agent.plan.tiers import Tier

_MEMORY_QUERIES = (
    'max by (pod) (container_memory_working_set_bytes{{pod=~"{svc}-.*", container!=""}})',
    'max by (pod) (kube_pod_container_resource_limits{{pod=~"{svc}-.*", resource="memory"}})',
)


@fact_rule("oom_memory_metrics", Tier.EXPLAIN, K.OOM_KILLED)
def oom_memory_metrics(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """An OOM-killed container: memory use against its limit."""
    svc = fact.service
    if not svc or "query_metrics" not in ctx.tools:
        return []
    reason = f"{svc} was OOMKilled: memory use against its limit"
    if ctx.recorded is not None:
        mem = [r for r in ctx.recorded if "memory" in r.query.lower()]
        mine = [r for r in mem if svc in r.query]
        picked = (mine + [r for r in mem if r not in mine][:1])[:2]
        return [Check("query_metrics", {"query": r.query, "type": r.type}, reason) for r in picked]
    return [
        Check("query_metrics", {"query": q.format(svc=svc), "type": "range"}, reason)
        for q in _MEMORY_QUERIES
    ]


@fact_rule("nodes_of_unschedulable", Tier.EXPLAIN, K.SCHEDULING, K.EVICTED, K.POD_PENDING)
def nodes_of_unschedulable(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """A pod that cannot be scheduled, or was evicted: what the nodes offer and report."""
    if "node_conditions" not in ctx.tools:
        return []
    return [Check("node_conditions", {}, "pods unschedulable / evicted: the nodes")]


_RESTARTED = (K.CRASH_LOOP, K.CONTAINER_EXIT, K.SATURATION, K.PROBE_FAILURE, K.NOT_READY)


@fact_rule("node_events_of_restarts", Tier.CORROBORATE, *_RESTARTED)
def node_events_of_restarts(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """Pods in focus that restart, exit or run out of a resource: the events of the nodes
    they run on. The kernel's and the node's own account (node-problem-detector's
    ``OOMKilling``, ``KernelOops``, ``TaskHung``, a read-only filesystem) is recorded on the
    Node, in the ``default`` namespace, where a namespace's event list never looks."""
    if not fact.focus or fact.severity == "info" or "get_events" not in ctx.tools:
        return []
    if too_few(fact):
        return []  # a probe blip says nothing about the node
    names = {o.name for o in (fact.subject, *fact.objects) if o and o.kind == "Pod"}
    nodes: list[str] = []
    for pod in ctx.graph.pods():
        mine = pod.name in names or (fact.service and workload_of(pod.name) == fact.service)
        if mine and pod.node and pod.node not in nodes:
            nodes.append(pod.node)
    return [
        Check(
            "get_events",
            {"kind": "Node", "name": n, "namespace": "default"},
            f"the node {n} that runs the pods: its kernel and node events",
        )
        for n in nodes[:2]
    ]


_ALERTED = ("Pod", "PersistentVolumeClaim", "StatefulSet", "Deployment", "DaemonSet", "Job")


@fact_rule("alerted_namespace", Tier.FOLLOW, K.ALERT)
def alerted_namespace(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """An alert firing about a workload's pod or claim in a namespace whose pods were not
    listed: that namespace's pods and warning events (what the alert is about, read)."""
    if "list_pods" not in ctx.tools:
        return []
    spaces = [o.namespace for o in fact.objects if o.kind in _ALERTED and o.namespace]
    out: list[Check] = []
    for ns in list(dict.fromkeys(spaces))[:1]:
        if ctx.graph.listed("Pod", ns):
            continue
        why = f"alert {fact.reason} is about namespace {ns}"
        out.append(Check("list_pods", {"namespace": ns}, f"{why}: its pods"))
        if "get_events" in ctx.tools:
            out.append(Check("get_events", {"namespace": ns}, f"{why}: its warning events"))
    return out
