"""The baseline survey: the checks every investigation makes, narrowed to its subject.

Pods, events, logs of the services in focus, the rollout of the workload asked about,
alerts, and the nodes when the question mentions them. When the question names a
namespace, every Kubernetes call is made in it.
"""

from __future__ import annotations

import re
from typing import Any

from opsmate.agent.observe.facts import FactKind
from opsmate.agent.plan.planner import Planner
from opsmate.agent.plan.tiers import Tier
from opsmate.agent.state import PendingCheck, TaskState

_NODE_WORDS = re.compile(r"\b(?:node|nodes|disk|evict\w*|kubelet|pressure)\b|节点|磁盘|驱逐", re.I)
_JOB_WORDS = re.compile(
    r"\b(?:jobs?|cron\w*|nightly|hourly|daily|scheduled|batch|backups?|did(?:n't| not) run"
    r"|never ran|didn't start|every \d+ (?:min\w*|hours?)|every (?:minute|hour|night|day)"
    r"|periodic\w*)\b|定时|任务",
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
    _service_survey(state, planner, ns)
    _metric_survey(state, planner)
    _card_survey(state, planner, ns_name)
    if _JOB_WORDS.search(" ".join(state.questions)) and "list_objects" in planner.tools:
        for kind in ("CronJob", "Job"):
            add(
                "list_objects",
                {"kind": kind, **ns},
                f"the question is about scheduled work: {kind}s",
                essential=kind == "CronJob",  # its Jobs: when steps allow
            )


# what a recorded series describes: requests (rate, errors, duration) or resources
_RED = re.compile(
    r"request|calls_total|handled_total|http_server|grpc_server|duration|latency|response_time"
    r"|_bucket|5\.\.|5xx|status_code|response_code|grpc_code|errors?_total|error_ratio",
    re.I,
)
_LATENCY_Q = re.compile(r"duration|latency|response_time|_bucket|quantile|p9\d", re.I)
_ERROR_Q = re.compile(r"5\.\.|5xx|error|fail|status_code|response_code|grpc_code|code", re.I)
_RESOURCE_Q = re.compile(
    r"cpu|memory|throttl|working_set|restarts|oom|filesystem|disk|network_|packets|retrans", re.I
)
_SLOW_WORDS = re.compile(r"slow|latency|timeouts?|timing out|延迟|慢|超时", re.I)


def _metric_survey(state: TaskState, planner: Planner) -> None:
    """Read the request / error / duration series the bundle recorded (whatever the
    instrumentation calls them), and the resource series after them: when logs are quiet
    the fault shows there. The question's symptom chooses which come first: latency for
    "slow", errors otherwise. Three at survey tier, a few more later. Live, the queries
    come from metric discovery (:meth:`Planner.metric_candidates`), ranked the same way;
    those not read are listed as skipped."""
    if "query_metrics" not in planner.tools:
        return
    candidates = planner.metric_candidates()
    if not candidates:
        return
    slow = bool(_SLOW_WORDS.search(" ".join(state.questions)))

    def rank(r: object) -> tuple[int, int]:
        text = f"{getattr(r, 'query', '')} {getattr(r, 'description', '')}"
        if _RED.search(text):
            first = _LATENCY_Q.search(text) if slow else _ERROR_Q.search(text)
            return (0 if first else 1, len(text))
        if _RESOURCE_Q.search(text):
            return (2, len(text))
        return (9, len(text))

    ranked = sorted(candidates, key=rank)
    ranked = [r for r in ranked if rank(r)[0] < 9 and not _about_others(r, state)]
    if planner.recorded is None:  # live: say which discovered queries the survey leaves
        _list_unread(planner, ranked[6:])
    for i, r in enumerate(ranked[:6]):
        tier = Tier.SURVEY if i < 3 else Tier.CORROBORATE
        planner.add(
            PendingCheck(
                tool="query_metrics",
                args={"query": r.query, "type": r.type},
                reason="request, error and duration series per service"
                if rank(r)[0] < 2
                else "resource series per pod",
                source="rule",
                priority=int(tier) + 5 + i,
                essential=i < 2,  # the first two always run: logs may say nothing
            )
        )


def _list_unread(planner: Planner, rest: list[Any]) -> None:
    """Discovered queries beyond the survey's six: the first few by name, then a count."""
    lines = [f"{r.query} (discovered; the survey reads six)" for r in rest[:4]]
    if len(rest) > 4:
        lines.append(f"and {len(rest) - 4} more discovered queries (not read)")
    planner.skipped += [x for x in lines if x not in planner.skipped]


_HANG = re.compile(r"\bhang(?:s|ing)?\b|time[sd]? out|timeouts?|\bstuck\b|超时|卡住", re.I)
_REQUEST_SYMPTOMS = {FactKind.ERROR_RATE, FactKind.LATENCY, FactKind.NOT_READY, None}


def _service_survey(state: TaskState, planner: Planner, ns: dict[str, str]) -> None:
    """Requests that fail or crawl cross Services: their selectors, ports and endpoints say
    which callee does not serve and why (a targetPort nothing listens on, a selector that
    matches nothing). Calls that hang rather than fail also read the namespace's
    NetworkPolicies."""
    if "list_objects" not in planner.tools or state.subject.symptom not in _REQUEST_SYMPTOMS:
        return
    if state.subject.kind in ("Job", "CronJob", "Node"):
        return
    planner.add(
        PendingCheck(
            tool="list_objects",
            args={"kind": "Service", **ns},
            reason="which Services route the failing requests, to which pods and ports",
            source="rule",
            priority=int(Tier.SURVEY) + 4,
            # no object named: which callee fails is the question itself
            essential=not state.subject.names,
        )
    )
    hang = _HANG.search(" ".join(state.questions))
    if state.subject.symptom == FactKind.LATENCY or hang:
        planner.add(
            PendingCheck(
                tool="list_objects",
                args={"kind": "NetworkPolicy", **ns},
                reason="calls that hang: policies that may drop them",
                source="rule",
                priority=int(Tier.SURVEY) + 8,
                essential=bool(hang),
            )
        )


_SELECTED = re.compile(
    r'\b(?:service|app|job|deployment|application|service_name)\s*=\s*"([^"|*.]+)"'
)


def _about_others(r: object, state: TaskState) -> bool:
    """A recorded query that selects one service which is not the one asked about."""
    focus = {s.lower() for s in [*state.constraints.services, *state.subject.names]}
    if not focus:
        return False
    named = {m.lower() for m in _SELECTED.findall(str(getattr(r, "query", "")))}
    return bool(named) and not any(n in focus or any(n.startswith(f) for f in focus) for n in named)


_CARD_READS = 4  # reads the question's symptom words may add to the survey


def _card_survey(state: TaskState, planner: Planner, namespace: str | None) -> None:
    """The symptom the question states selects candidate failure modes (cards whose
    symptom words it uses: "cannot resolve", "throttling", "pending", "certificate");
    each brings the reads that confirm it or rule it out, so a symptom with no error line
    behind it is still checked where its causes live. Behind the survey, not essential."""
    from opsmate.agent.kinds.registry import candidates

    text = " ".join(state.questions)
    seen: set[str] = set()
    prio = int(Tier.SURVEY) + 12
    cands = candidates(text)
    # breadth first: each candidate's most telling read, then each one's next (a card with
    # several reads does not take the budget from the candidates after it)
    rounds = max((len(c.reads) for c in cands), default=0)
    for i, card, r in [
        (i, c, c.reads[i]) for i in range(rounds) for c in cands if i < len(c.reads)
    ]:
        if r.tool not in planner.tools or len(seen) >= _CARD_READS:
            continue
        args = r.arguments(namespace)
        key = planner.key(r.tool, args)
        if key in seen:
            continue
        added = planner.add(
            PendingCheck(
                tool=r.tool,
                args=dict(args),
                reason=f"the question's symptom fits {card.title.lower()}: {r.why}",
                source="rule",
                # each candidate's most telling read before the generic series
                priority=int(Tier.SURVEY) + 4 if i == 0 else prio,
                essential=False,
            )
        )
        if added:  # one already queued or done takes none of the reads the words add
            seen.add(key)
            prio += 1
