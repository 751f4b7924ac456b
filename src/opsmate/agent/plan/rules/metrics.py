"""Rules about request series: a service slower or failing than before — why?

- a service whose requests got slower or fail more since the onset (a shifted request
  series, or slow records in its logs): its own resource series — CPU used and throttled,
  memory, network errors — the way a CPU hog, a throttled container, a leak or packet loss
  shows when the logs say nothing. Recorded series when replaying a bundle (whatever the
  instrumentation calls them), standard cAdvisor series live.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.plan.registry import Check, RuleContext, fact_rule
from opsmate.agent.plan.tiers import Tier

_RESOURCE = re.compile(
    r"cpu|throttl|cfs_|memory|working_set|network_.*(?:errors|dropped)|packets_dropped|retrans",
    re.I,
)
_LIVE = (
    'sum by (pod) (rate(container_cpu_cfs_throttled_periods_total{{pod=~"{svc}-.*"}}[5m]))'
    ' / sum by (pod) (rate(container_cpu_cfs_periods_total{{pod=~"{svc}-.*"}}[5m]))',
    'sum by (pod) (rate(container_cpu_usage_seconds_total{{pod=~"{svc}-.*", container!=""}}[5m]))',
)


def _telling(r: object) -> int:
    q = str(getattr(r, "query", "")).lower()
    return 0 if "throttl" in q else 1


@fact_rule("resources_of_slow_service", Tier.EXPLAIN, K.LATENCY, K.ERROR_RATE)
def resources_of_slow_service(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """A service that got slower (or fails more): what its containers consume."""
    svc = fact.service or (fact.subject.name if fact.subject is not None else None)
    if not svc or "query_metrics" not in ctx.tools:
        return []
    if fact.kind == K.ERROR_RATE and fact.severity != "error":
        return []  # a shifted error series alone: the request series says enough
    if ctx.subject.names and not fact.focus:
        return []  # another service than the one asked about
    reason = f"{svc} got slower: its CPU, throttling and memory"
    if ctx.recorded is not None:
        res = [r for r in ctx.recorded if _RESOURCE.search(f"{r.query} {r.description}")]
        res.sort(key=_telling)  # a throttled container says most (the rest as recorded)
        mine = [r for r in res if svc in r.query]
        picked = (mine + [r for r in res if r not in mine])[:2]
        return [Check("query_metrics", {"query": r.query, "type": r.type}, reason) for r in picked]
    return [
        Check("query_metrics", {"query": q.format(svc=svc), "type": "range"}, reason) for q in _LIVE
    ]
