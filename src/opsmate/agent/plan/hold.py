"""Holding back checks that chase problems unrelated to the question's subject.

A question about one workload ("ExportLatencyHigh, subject: deployment billing-exports")
often lands in a namespace where other pods are crash-looping for reasons of their own. Their
follow-ups (the crashed container's log, its owner) would otherwise run first, at
``FOLLOW`` tier, and spend the step budget before the subject's own logs are read. A
check prompted by a fact whose relation to the subject is ``unrelated``
(:func:`opsmate.agent.judge.links.relation`) is queued at ``CORROBORATE`` tier instead,
remembering its own tier; once a later fact links it to the subject (the subject's errors
name that pod's Service, the pod runs on the node asked about) it gets its tier back.
Questions without a subject hold nothing back.
"""

from __future__ import annotations

from collections.abc import Iterable

from opsmate.agent.intake.subject import Subject
from opsmate.agent.judge import links
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.plan.tiers import Tier
from opsmate.agent.state import PendingCheck

HELD_TIER = int(Tier.CORROBORATE)


def unrelated_facts(
    facts: Iterable[Fact], subject: Subject, graph: ObjectGraph, services: list[str]
) -> set[str]:
    """Keys of the facts unrelated to ``subject`` (none when the question names no subject)."""
    if subject.empty():
        return set()
    usable = [f for f in facts if f.kind != K.NO_CHANGE]
    deps = links.dependencies(usable)
    aliases = links.subject_aliases(subject, graph)
    dg, reach = links.dependency_view(usable, subject, graph, services)
    return {
        f.key
        for f in usable
        if links.relation(f, subject, graph, deps, services, aliases, reach, dg) == links.UNRELATED
    }


def hold(check: PendingCheck, unrelated: set[str]) -> PendingCheck:
    """``check`` held back to ``CORROBORATE`` when the fact that prompted it is unrelated."""
    if check.trigger_fact in unrelated and check.priority < HELD_TIER:
        check.held_from, check.priority = check.priority, HELD_TIER
    return check


def release(pending: list[PendingCheck], unrelated: set[str]) -> int:
    """Give held checks whose fact is no longer unrelated their own tier back (the queue is
    re-sorted); how many were released."""
    n = 0
    for p in pending:
        if p.held_from is not None and p.trigger_fact not in unrelated:
            p.priority, p.held_from = min(p.priority, p.held_from), None
            n += 1
    if n:
        pending.sort(key=lambda c: c.priority)
    return n
