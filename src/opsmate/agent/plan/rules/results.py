"""Rules about results themselves: answers that were not available or were cut short.

- a PromQL query the bundle did not record: the recorded queries about the service;
- a log summary cut short before its errors: the errors alone;
- a pod list cut by its page budget without the subject: the subject's pods alone;
- an event list cut short: the subject's events alone.
"""

from __future__ import annotations

from collections.abc import Iterable

from opsmate.agent.observe.depgraph import workload_of as depgraph_workload
from opsmate.agent.plan.registry import Check, RuleContext, result_rule
from opsmate.agent.plan.tiers import Tier
from opsmate.records.payloads import LogStatsPayload, pods_in
from opsmate.tools.base import ToolResult


@result_rule("recorded_queries_instead", Tier.CORROBORATE, "query_metrics")
def recorded_queries_instead(result: ToolResult, ctx: RuleContext) -> Iterable[Check]:
    """A query the source does not have: recorded queries about the service or subject."""
    if not (result.error and result.error.code == "not_available") or not ctx.recorded:
        return []
    words = [w.lower() for w in [*ctx.services, *ctx.subject.names] if w and len(w) >= 3]
    out = []
    for r in ctx.recorded:
        text = f"{r.query} {r.description}".lower()
        if any(w in text for w in words):
            out.append(
                Check(
                    "query_metrics",
                    {"query": r.query, "type": r.type},
                    "a recorded query about the service",
                )
            )
    return out[:2]


@result_rule("errors_when_summary_cut", Tier.EXPLAIN, "log_stats")
def errors_when_summary_cut(result: ToolResult, ctx: RuleContext) -> Iterable[Check]:
    """A log summary truncated before its errors: ask for the errors alone."""
    if result.complete or result.args.get("level"):
        return []
    stats = result.payload_as(LogStatsPayload) or LogStatsPayload()
    levels = {str(k).lower() for k in stats.by_level}
    shown = {str(lv).lower() for m in stats.top_messages for lv in m.levels}
    errs = {"error", "fatal", "critical"}
    if not (levels & errs) or shown & errs:
        return []
    kept = {k: v for k, v in result.args.items() if k in ("service", "from", "to")}
    return [
        Check(
            "log_stats", {**kept, "level": "error"}, "the summary was truncated before the errors"
        )
    ]


@result_rule("subject_pods_when_list_cut", Tier.FOLLOW, "list_pods")
def subject_pods_when_list_cut(result: ToolResult, ctx: RuleContext) -> Iterable[Check]:
    """A pod list cut short that does not show (all of) the subject: list its pods."""
    if result.complete or not ctx.subject.names:
        return []
    if result.args.get("label_selector") or result.args.get("name"):
        return []
    shown = [str(p.name or "") for p in pods_in(result.payload)]
    missing = [
        name
        for name in ctx.subject.names[:3]
        if not any(n == name or n.startswith(name + "-") for n in shown)
    ]
    ns = {"namespace": result.args["namespace"]} if result.args.get("namespace") else ctx.ns()
    return [
        Check("list_pods", {**ns, "name": name}, f"the pod list was cut before {name}: its pods")
        for name in missing
    ]


@result_rule("subject_events_when_cut", Tier.FOLLOW, "get_events")
def subject_events_when_cut(result: ToolResult, ctx: RuleContext) -> Iterable[Check]:
    """An event list cut short: the events of the subject's pods alone."""
    if result.complete or result.args.get("name") or not ctx.subject.names:
        return []
    ns = {"namespace": result.args["namespace"]} if result.args.get("namespace") else ctx.ns()
    out = []
    names = [p.name for p in ctx.graph.pods() if ctx.subject.matches(p.name)]
    for name in (names or ctx.subject.names)[:3]:
        out.append(
            Check("get_events", {**ns, "name": name}, f"the event list was cut: events of {name}")
        )
    return out


@result_rule("logs_under_the_workload_name", Tier.FOLLOW, "log_stats")
def logs_under_the_workload_name(result: ToolResult, ctx: RuleContext) -> Iterable[Check]:
    """No log line for a service by the name the question (or a pod label) gives it: the
    logs are often kept under the workload's own name (``app: worker`` pods of the
    Deployment ``shop-worker-all-v2``; an application made of ``app-server`` and
    ``app-scheduler``). The workloads of the pods that carry the name: the three the
    evidence speaks of most."""
    svc = str(result.args.get("service") or "").lower()
    if result.status != "no_data" or not svc:
        return []
    owners = {
        w
        for p in ctx.graph.pods()
        if p.name
        and (svc in {str(v).lower() for v in p.labels.values()} or f"-{svc}-" in f"-{p.name}-")
        and (w := depgraph_workload(p))
        and w != svc
    }
    if not owners:
        return []
    # the ones the evidence speaks of first (their pods fail, their errors were seen)
    said = " ".join(f.statement for f in ctx.facts if f.severity != "info").lower()
    ranked = sorted(owners, key=lambda w: (-said.count(w), w))[:3]
    args = {k: v for k, v in result.args.items() if k == "level"}
    return [
        Check("log_stats", {**args, "service": owner},
              f"no log line under {svc}: the logs of its workload {owner}")
        for owner in ranked
    ]  # fmt: skip
