"""What a failure mode needs read: each new problem fact proposes the reads its card lists
(the objects that confirm the failure mode or rule it out), at the tier of how close the
fact is to the question — a fact about the subject or its dependencies first, others held
behind the survey (see :mod:`opsmate.agent.plan.hold`).

The reads are data on the cards (:mod:`opsmate.agent.kinds`): a new failure mode brings
its own checks with it, no rule to write.
"""

from __future__ import annotations

from collections.abc import Iterable

from opsmate.agent.kinds import Role, card_for
from opsmate.agent.observe.facts import Fact, FactKind
from opsmate.agent.observe.text import workload_of
from opsmate.agent.plan.registry import Check, RuleContext, fact_rule
from opsmate.agent.plan.tiers import Tier

_KINDS = tuple(FactKind)


def _known(tool: str, args: dict[str, str], ctx: RuleContext) -> bool:
    """Whether the read is already answered (a complete listing of that kind there)."""
    if tool == "list_objects" and args.get("kind"):
        return ctx.graph.listed(args["kind"], args.get("namespace")) is not None
    return False


def _target(fact: Fact, ctx: RuleContext) -> str | None:
    """The workload a failing call names (``customer:8081``, ``cart.shop.svc``), when the
    objects seen run a workload of that name."""
    workloads = {w for p in ctx.graph.pods() if p.name and (w := workload_of(p.name))}
    for o in fact.objects:
        if o.kind not in ("app", "host", "Service"):
            continue
        name = o.name.split("://")[-1].split(":")[0].split(".")[0].lower()
        if name in workloads:
            return name
    return None


def _pods_namespace(fact: Fact, ctx: RuleContext) -> str | None:
    """The namespace of the pods a fact about an application is about (a log template names
    its service, not where it runs), when they all run in one."""
    who = {n for n in (fact.service, fact.subject.name if fact.subject else None) if n}
    spaces = {p.namespace for p in ctx.graph.pods() if p.name and workload_of(p.name) in who}
    return spaces.pop() if len(spaces) == 1 else None


def _state(fact: Fact, ctx: RuleContext) -> bool:
    """A standing state (no time: a node cordoned) of an object the question names."""
    return fact.time is None and fact.subject is not None and ctx.subject.matches(fact.subject.name)


@fact_rule("card_reads", Tier.EXPLAIN, *_KINDS)
def card_reads(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """A problem fact (an error, or a warning seen several times): the reads of its card
    (the fact's own rules, at their tiers, come first)."""
    card = card_for(fact)
    if not card.reads or card.role not in (Role.CAUSE, Role.SYMPTOM):
        return []
    if fact.severity == "info" or (
        fact.severity == "warning" and fact.count < 3 and not _state(fact, ctx)
    ):
        return []  # a warning said once or twice, unless it is a state of what was asked about
    ns = (
        (fact.subject.namespace if fact.subject else None)
        or _pods_namespace(fact, ctx)
        or ctx.ns().get("namespace")
    )
    obj_ns = next((o.namespace for o in fact.objects if o.namespace), None)
    target = _target(fact, ctx)
    # what a card needs read runs after what the evidence points at, and does not hold a
    # supported root cause back (the investigation settles past it), unless that root is
    # weak (see kinds.registry.weak_root)
    tier = Tier.RUNBOOK if fact.focus else Tier.CORROBORATE
    if card.needs_deeper and (fact.focus or (fact.subject and fact.subject.kind == "Pod")):
        # an effect a pod shows (its probes time out): what would say why decides the
        # answer, before the survey's remaining reads
        tier = Tier.EXPLAIN if fact.focus else Tier.RUNBOOK
    out: list[Check] = []
    for r in card.reads:
        if r.tool not in ctx.tools:
            continue
        pod = fact.subject.name if fact.subject and fact.subject.kind == "Pod" else None
        values = {"{target}": target, "{pod}": pod, "{container}": fact.container}
        if any(slot in v and not values[slot] for _, v in r.args for slot in values):
            continue  # it needs what the fact does not name (no target, no pod)
        args = r.arguments(ns, obj_ns, target, pod=pod, container=fact.container)
        if r.tool == "query_metrics" and "query" not in args:
            continue  # a series written for a namespace, and none is known
        if _known(r.tool, args, ctx):
            continue
        # a pod's own recent lines come after the reads that measure (a throttled CPU says
        # why probes time out before a log tail does)
        when = Tier.RUNBOOK if r.tool == "pod_logs" and tier == Tier.EXPLAIN else tier
        check = Check(r.tool, dict(args), f"{card.title}: {r.why}", when)
        if check not in out:
            out.append(check)
    return out
