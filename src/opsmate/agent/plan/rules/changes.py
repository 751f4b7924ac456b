"""Rules about changes: what changed in a workload that fails or was just rolled.

- a workload whose logs or pods show a failure: its rollout history (did it change?);
- a Deployment that scaled a new ReplicaSet up (a rollout seen in the events): what the
  new revision changed.
"""

from __future__ import annotations

from collections.abc import Iterable

from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.plan.registry import Check, RuleContext, fact_rule
from opsmate.agent.plan.rules.k8s_graph import get_check, keep_checks
from opsmate.agent.plan.tiers import Tier
from opsmate.tools.k8s_kinds import KINDS

_FAILING = (
    K.LOG_ERROR,
    K.CONFIG_ERROR,
    K.DEPENDENCY_FAILURE,
    K.SATURATION,
    K.CRASH_LOOP,
    K.CONTAINER_EXIT,
    K.ERROR_RATE,
)


@fact_rule("rollout_of_failing_workload", Tier.EXPLAIN, *_FAILING)
def rollout_of_failing_workload(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """A workload that fails (the subject's, or any when the question names none): did it
    change just before? Its rollout history."""
    if "rollout_history" not in ctx.tools or not fact.service or fact.severity == "info":
        return []
    if ctx.subject.names and not fact.focus:
        return []
    ns = fact.subject.namespace if fact.subject is not None else None
    return [
        Check(
            "rollout_history",
            {"name": fact.service, **ctx.ns(ns)},
            f"{fact.service} fails: did it change just before?",
        )
    ]


@fact_rule("rollout_seen_in_events", Tier.EXPLAIN, K.OBSERVATION)
def rollout_seen_in_events(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """A Deployment scaled a new ReplicaSet up: what that revision changed."""
    if "rollout_history" not in ctx.tools or fact.reason != "ScalingReplicaSet":
        return []
    if fact.subject is None or fact.subject.kind != "Deployment":
        return []
    if "scaled up" not in (fact.message or "").lower():
        return []
    if ctx.subject.names and not fact.focus:
        return []
    name = fact.subject.name
    return [
        Check(
            "rollout_history",
            {"name": name, **ctx.ns(fact.subject.namespace)},
            f"Deployment {name} rolled a new ReplicaSet out: what changed",
        )
    ]


@fact_rule("config_of_failing_workload", Tier.EXPLAIN, K.LOG_ERROR, K.CONFIG_ERROR,
           K.DEPENDENCY_FAILURE, K.CRASH_LOOP, K.ERROR_RATE)  # fmt: skip
def config_of_failing_workload(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """A workload that fails: was the configuration it reads (its namespace's ConfigMaps:
    application configs, feature-flag files) edited just before? One listing covers all."""
    if "list_objects" not in ctx.tools:
        return []
    if fact.severity != "error" and not (fact.kind == K.ERROR_RATE and fact.detail.get("query")):
        return []
    if ctx.subject.names and not fact.focus:
        return []
    ns = fact.subject.namespace if fact.subject is not None else None
    args = {"kind": "ConfigMap", **ctx.ns(ns)}
    if ctx.graph.listed("ConfigMap", args.get("namespace")):
        return []
    return [
        Check("list_objects", args, f"{fact.service or 'a workload'} fails: was its config edited?")
    ]


@fact_rule("experiment_spec", Tier.EXPLAIN, K.CHANGE)
def experiment_spec(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """A fault-injection experiment seen in events: its spec says what it does (partition,
    loss, delay, a CPU hog, an I/O error) and to which pods; the events do not."""
    if fact.reason != "FaultInjection":
        return []
    exp = next((o for o in fact.objects if o.kind in KINDS and o.kind != "Pod"), None)
    if exp is None:
        return []
    why = f"{exp.kind} {exp.name}: what the experiment does and to whom"
    return keep_checks([get_check(ctx, exp.kind, exp.name, exp.namespace, why)])
