"""The baseline survey: the checks every investigation makes, narrowed to its subject.

Pods, events, logs of the services in focus, the rollout of the workload asked about,
alerts, and the nodes when the question mentions them. When the question names a
namespace, every Kubernetes call is made in it.
"""

from __future__ import annotations

import re

from opsmate.agent.plan.planner import Planner
from opsmate.agent.plan.tiers import Tier
from opsmate.agent.state import PendingCheck, TaskState

_NODE_WORDS = re.compile(r"\b(?:node|nodes|disk|evict\w*|kubelet|pressure)\b|节点|磁盘|驱逐", re.I)
_JOB_WORDS = re.compile(
    r"\b(?:jobs?|cron\w*|nightly|hourly|daily|scheduled|batch|backups?|did(?:n't| not) run"
    r"|never ran|didn't start)\b|定时|任务",
    re.I,
)


def baseline(state: TaskState, planner: Planner, namespace: str | None) -> None:
    """Queue the survey (essential checks: steps are held in reserve for them)."""
    subject = state.subject
    focus = list(dict.fromkeys([*state.constraints.services[:2]]))
    ns_name = subject.namespace or namespace
    ns = {"namespace": ns_name} if ns_name else {}
    prio = int(Tier.SURVEY)

    def add(tool: str, args: dict[str, object], reason: str, essential: bool = True) -> None:
        nonlocal prio
        planner.add(
            PendingCheck(
                tool=tool,
                args=args,
                reason=reason,
                source="rule",
                priority=prio,
                essential=essential,
            )
        )
        prio += 1

    add("list_pods", dict(ns), "pod phases, restarts and termination reasons")
    add("get_events", dict(ns), "warning events (back-offs, failed probes, scheduling, quotas)")
    for svc in focus:
        add("log_stats", {"service": svc}, f"which errors {svc} logs, how many, since when")
    if not focus:
        add("log_stats", {}, "which errors are logged, how many, since when")
        add("search_logs", {"level": "error", "page_size": 50}, "which services log errors")
    for name in dict.fromkeys([*focus, *subject.names[:1]]):
        add("rollout_history", {"name": name, **ns}, f"did {name} change recently")
    planner.add(
        PendingCheck(
            tool="list_alerts",
            args={},
            reason="alerts that are firing",
            source="rule",
            priority=int(Tier.BACKGROUND) - 5,
        )
    )
    if _NODE_WORDS.search(" ".join(state.questions)) or state.mentioned_nodes:
        add("node_conditions", {}, "the question mentions nodes or disks")
    if _JOB_WORDS.search(" ".join(state.questions)) and "list_objects" in planner.tools:
        for kind in ("CronJob", "Job"):
            add(
                "list_objects",
                {"kind": kind, **ns},
                f"the question is about scheduled work: {kind}s",
            )
