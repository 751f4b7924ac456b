"""General investigation rules: a baseline survey, and reactions to what a result showed.

Nothing here is about one incident: the rules read facts and envelopes (an
OOMKilled container, an eviction, a query that was not available, a dominant error
message, a truncated summary) and queue read-only follow-ups.
"""

from __future__ import annotations

import re

from opsmate.agent.planner import Planner
from opsmate.agent.signals import error_core
from opsmate.agent.state import Fact, PendingCheck, TaskState
from opsmate.tools.base import ToolResult

_NODE_WORDS = re.compile(r"\b(?:node|nodes|disk|evict\w*|kubelet|pressure)\b|节点|磁盘|驱逐", re.I)
_MEMORY_QUERIES = (
    'max by (pod) (container_memory_working_set_bytes{{pod=~"{svc}-.*", container!=""}})',
    'max by (pod) (kube_pod_container_resource_limits{{pod=~"{svc}-.*", resource="memory"}})',
)


def baseline(state: TaskState, planner: Planner, namespace: str | None) -> None:
    """The survey every investigation needs: logs, pods, events, rollouts, alerts."""
    focus = state.constraints.services[:2]
    prio = 30
    ns = {"namespace": namespace} if namespace else {}

    def add(tool: str, args: dict[str, object], reason: str) -> None:
        nonlocal prio
        planner.add(
            PendingCheck(
                tool=tool, args=args, reason=reason, source="rule", priority=prio, essential=True
            )
        )
        prio += 1

    for svc in focus:
        add("log_stats", {"service": svc}, f"which errors {svc} logs, how many, since when")
    if not focus:
        add("log_stats", {}, "which errors are logged, how many, since when")
        add("search_logs", {"level": "error", "page_size": 50}, "which services log errors")
    add("list_pods", dict(ns), "pod phases, restarts and termination reasons")
    add("get_events", dict(ns), "warning events (back-offs, failed probes, evictions)")
    for svc in focus:
        add("rollout_history", {"name": svc, **ns}, f"did {svc} change recently")
    planner.add(
        PendingCheck(
            tool="list_alerts", args={}, reason="alerts that are firing", source="rule", priority=45
        )
    )
    if _NODE_WORDS.search(" ".join(state.questions)) or state.mentioned_nodes:
        add("node_conditions", {}, "the question mentions nodes or disks")


def react(
    state: TaskState,
    planner: Planner,
    result: ToolResult,
    eid: str | None,
    new_facts: list[Fact],
    namespace: str | None,
    runbook_text: str = "",
) -> None:
    """Queue follow-ups that ``result`` (and the facts it gave) call for."""
    focus = state.constraints.services
    ns = {"namespace": namespace} if namespace else {}

    def add(tool: str, args: dict[str, object], reason: str, prio: int = 20) -> None:
        planner.add(
            PendingCheck(
                tool=tool, args=args, reason=reason, source="rule", priority=prio, trigger=eid
            )
        )

    # a query the source does not have: pick recorded ones about the service / symptom
    if result.tool == "query_metrics" and result.error and result.error.code == "not_available":
        words = list(focus) + state.identifiers
        for r in planner.recorded_matching(words, limit=2):
            add(
                "query_metrics",
                {"query": r.query, "type": r.type},
                "a recorded query about the service",
                25,
            )

    # a summary cut short before the errors: ask for the errors alone
    if result.tool == "log_stats" and not result.complete:
        levels = {str(k).lower() for k in (result.data.get("by_level") or {})}
        shown = {
            str(lv).lower()
            for m in result.data.get("top_messages") or []
            for lv in (m.get("levels") or {})
        }
        if levels & {"error", "fatal", "critical"} and not shown & {"error", "fatal", "critical"}:
            kept = {k: v for k, v in result.args.items() if k in ("service", "from", "to")}
            add(
                "log_stats",
                {**kept, "level": "error"},
                "the summary was truncated before the errors",
                10,
            )

    for f in new_facts:
        text = f"{f.statement} {f.quote or ''}"
        if f.kind == "pod_problem" and re.search(r"OOMKilled|exit code 137", text):
            svc = f.service or (focus[0] if focus else None)
            if svc:
                for q in _memory_queries(planner, svc):
                    add(
                        "query_metrics", q, f"{svc} was OOMKilled: memory use against its limit", 15
                    )
        if (
            f.kind == "pod_problem"
            and re.search(r"CrashLoopBackOff|Error \(exit|exit code [1-9]", text)
            and "OOMKilled" not in text
        ):
            pod = _first_pod(f.statement)
            if pod:
                add(
                    "pod_logs",
                    {"name": pod, "tail_lines": 100, **ns},
                    f"why {pod} keeps crashing",
                    15,
                )
        if re.search(
            r"Evicted|FailedScheduling|DiskPressure|MemoryPressure|NodeNotReady|EvictionThresholdMet|FreeDiskSpaceFailed",
            text,
        ):
            add("node_conditions", {}, "pods were evicted / unschedulable: node conditions", 15)

    # the dominant error of a service in focus: its other occurrences and its runbooks
    if result.tool in ("log_stats", "search_logs") and any(
        f.kind == "log_error" for f in new_facts
    ):
        errors = [f for f in state.facts if f.kind == "log_error" and (f.focus or not focus)]
        errors.sort(key=lambda f: -f.count)
        if errors:
            top = errors[0]
            term = key_term(top.quote or "")
            if term:
                svc = top.service if top.service else None
                args: dict[str, object] = {"query": term}
                if svc:
                    args["service"] = svc
                add("search_logs", {**args, "page_size": 20}, f"occurrences of {term}", 40)
                if term.strip('"').lower() not in runbook_text:
                    add(
                        "search_runbooks",
                        {"query": f"{term} {error_core(top.quote or '', 80)}"[:200]},
                        f"runbooks about {term}",
                        12,
                    )


def key_term(quote: str) -> str | None:
    """The most distinctive token of an error text (exception name, error code, last clause)."""
    for pat in (
        r"(?:[A-Za-z_]\w*\.)*([A-Z][A-Za-z0-9]*(?:Error|Exception|Timeout|Fault|Failure|Refused|Exceeded|Denied|Killed))\b",
        r"\b([A-Z]{2,}[-_]?\d+[A-Z0-9]*|\d+[A-Z][A-Z0-9]+)\b",
        r"\b([A-Z][a-z]+(?:[A-Z][a-z0-9]+)+)\b",
        r"\b([a-z]+(?:_[a-z]+)+)\b",
    ):
        m = re.search(pat, quote)
        if m:
            return m.group(1)
    clauses = [c.strip(" .\"'") for c in re.split(r":\s", quote) if c.strip()]
    for clause in reversed(clauses):
        words = re.findall(r"[A-Za-z]{3,}", clause)
        if 2 <= len(words) <= 8 and not re.search(r"\d|/|…", clause):
            return f'"{clause}"'
    cjk = max(re.findall(r"[\u4e00-\u9fff]{4,}", quote), key=len, default="")
    if cjk:
        return cjk[:12]
    words = re.findall(r"[A-Za-z]{5,}", quote)
    return f'"{" ".join(words[:3])}"' if len(words) >= 2 else None


def _first_pod(statement: str) -> str | None:
    m = re.search(r"\(([a-z0-9][a-z0-9.-]+)", statement)
    return m.group(1) if m else None


def _memory_queries(planner: Planner, svc: str) -> list[dict[str, object]]:
    if planner.recorded is not None:
        found = [r for r in planner.recorded if "memory" in r.query.lower() and svc in r.query]
        found += [r for r in planner.recorded if "memory" in r.query.lower() and r not in found][:1]
        return [{"query": r.query, "type": r.type} for r in found[:2]]
    return [{"query": q.format(svc=svc), "type": "range"} for q in _MEMORY_QUERIES]
