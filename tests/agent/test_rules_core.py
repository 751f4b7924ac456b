"""Rules of plan/rules/pods.py, results.py and evidence.py; propose(); the baseline survey."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from opsmate.agent.intake.subject import Subject
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.plan.planner import Planner, Recorded
from opsmate.agent.plan.registry import Check, RuleContext, propose, rule
from opsmate.agent.plan.survey import baseline
from opsmate.agent.plan.tiers import Tier
from opsmate.agent.state import TaskState
from opsmate.records.k8s import Pod
from opsmate.tools.base import Constraints, ToolErrorInfo, ToolResult

NS = "shop"
ALL_TOOLS = frozenset(
    {
        "list_pods",
        "get_events",
        "node_conditions",
        "rollout_history",
        "query_metrics",
        "list_alerts",
        "log_stats",
        "search_logs",
        "pod_logs",
        "search_runbooks",
        "list_objects",
        "get_object",
    }
)


def fact(kind: FactKind, **kw: Any) -> Fact:
    kw.setdefault("key", f"test:{kind}:{kw.get('service')}")
    kw.setdefault("statement", f"a {kind} fact")
    kw.setdefault("evidence", ["E4"])
    return Fact(kind=kind, **kw)


def rctx(**kw: Any) -> RuleContext:
    kw.setdefault("tools", ALL_TOOLS)
    return RuleContext(**kw)


def fact_checks(name: str, f: Fact, ctx: RuleContext) -> list[Check]:
    r = rule(name)
    assert r.fact_fn is not None
    assert f.kind in r.on
    return list(r.fact_fn(f, ctx))


def result_checks(name: str, res: ToolResult, ctx: RuleContext) -> list[Check]:
    r = rule(name)
    assert r.result_fn is not None
    assert res.tool in r.tools
    return list(r.result_fn(res, ctx))


def envelope(tool: str, **kw: Any) -> ToolResult:
    return ToolResult(call_id="c9", tool=tool, status=kw.pop("status", "success"), **kw)


# ----------------------------------------------------------------------------- tiers


@pytest.mark.parametrize(
    ("name", "tier"),
    [
        ("oom_memory_metrics", Tier.EXPLAIN),
        ("nodes_of_unschedulable", Tier.EXPLAIN),
        ("recorded_queries_instead", Tier.CORROBORATE),
        ("errors_when_summary_cut", Tier.EXPLAIN),
        ("subject_pods_when_list_cut", Tier.FOLLOW),
        ("subject_events_when_cut", Tier.FOLLOW),
        ("runbooks_for_cause", Tier.RUNBOOK),
        ("occurrences_of_error", Tier.CORROBORATE),
    ],
)
def test_rule_tiers(name: str, tier: Tier) -> None:
    assert rule(name).tier == tier
    assert rule(name).doc  # every rule says what it is for


def test_unknown_rule() -> None:
    with pytest.raises(KeyError):
        rule("no_such_rule")


def test_tier_order() -> None:
    assert Tier.FOLLOW < Tier.EXPLAIN < Tier.RUNBOOK < Tier.SURVEY
    assert Tier.SURVEY < Tier.CORROBORATE < Tier.BACKGROUND


# ----------------------------------------------------------------------------- pods.py

OOM = fact(FactKind.OOM_KILLED, service="ledger", severity="error", focus=True)


def test_oom_memory_metrics_live() -> None:
    checks = fact_checks("oom_memory_metrics", OOM, rctx())
    reason = "ledger was OOMKilled: memory use against its limit"
    assert checks == [
        Check(
            "query_metrics",
            {
                "query": 'max by (pod) (container_memory_working_set_bytes{pod=~"ledger-.*", '
                'container!=""})',
                "type": "range",
            },
            reason,
        ),
        Check(
            "query_metrics",
            {
                "query": "max by (pod) (kube_pod_container_resource_limits"
                '{pod=~"ledger-.*", resource="memory"})',
                "type": "range",
            },
            reason,
        ),
    ]


def test_oom_memory_metrics_recorded_prefers_the_service() -> None:
    recorded = [
        Recorded('sum(rate(http_requests_total{service="ledger"}[5m]))', "range"),
        Recorded('container_memory_working_set_bytes{pod=~"tally-.*"}', "range"),
        Recorded('container_memory_working_set_bytes{pod=~"ledger-.*"}', "range"),
        Recorded('container_memory_rss{pod=~"ledger-.*"}', "instant"),
    ]
    checks = fact_checks("oom_memory_metrics", OOM, rctx(recorded=recorded))
    assert [(c.tool, c.args) for c in checks] == [
        ("query_metrics", {"query": 'container_memory_working_set_bytes{pod=~"ledger-.*"}',
                           "type": "range"}),
        ("query_metrics", {"query": 'container_memory_rss{pod=~"ledger-.*"}', "type": "instant"}),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("f", "tools"),
    [
        (fact(FactKind.OOM_KILLED, service=None), ALL_TOOLS),
        (OOM, ALL_TOOLS - {"query_metrics"}),
    ],
)
def test_oom_memory_metrics_not_triggered(f: Fact, tools: frozenset[str]) -> None:
    assert fact_checks("oom_memory_metrics", f, rctx(tools=tools)) == []


@pytest.mark.parametrize("kind", [FactKind.SCHEDULING, FactKind.EVICTED, FactKind.POD_PENDING])
def test_nodes_of_unschedulable(kind: FactKind) -> None:
    checks = fact_checks("nodes_of_unschedulable", fact(kind, service="ledger"), rctx())
    assert [(c.tool, c.args) for c in checks] == [("node_conditions", {})]


def test_nodes_of_unschedulable_without_the_tool() -> None:
    f = fact(FactKind.SCHEDULING, service="ledger")
    assert fact_checks("nodes_of_unschedulable", f, rctx(tools=frozenset({"list_pods"}))) == []
    assert FactKind.CRASH_LOOP not in rule("nodes_of_unschedulable").on


# ----------------------------------------------------------------------------- results.py

RECORDED = [
    Recorded('sum(rate(http_requests_total{service="tally"}[5m]))', "range", "tally requests"),
    Recorded('sum(rate(http_requests_total{service="ledger"}[5m]))', "range", "ledger requests"),
    Recorded("sum(ledger_queue_depth)", "instant", "queue of the ledger"),
    Recorded('histogram_quantile(0.99, x{service="ledger"})', "range", "ledger p99"),
]


def _not_available() -> ToolResult:
    return envelope(
        "query_metrics",
        status="no_data",
        error=ToolErrorInfo(code="not_available", message="query not recorded in this bundle"),
        args={"query": 'rate(ledger_http_errors_total{service="ledger"}[5m])'},
    )


def test_recorded_queries_instead() -> None:
    ctx = rctx(recorded=RECORDED, services=["ledger"])
    checks = result_checks("recorded_queries_instead", _not_available(), ctx)
    assert checks == [
        Check(
            "query_metrics",
            {"query": 'sum(rate(http_requests_total{service="ledger"}[5m]))', "type": "range"},
            "a recorded query about the service",
        ),
        Check(
            "query_metrics",
            {"query": "sum(ledger_queue_depth)", "type": "instant"},
            "a recorded query about the service",
        ),
    ]


def test_recorded_queries_instead_by_subject() -> None:
    ctx = rctx(recorded=RECORDED, subject=Subject(names=["tally"]))
    checks = result_checks("recorded_queries_instead", _not_available(), ctx)
    assert [c.args["query"] for c in checks] == [RECORDED[0].query]


@pytest.mark.parametrize(
    ("res", "recorded"),
    [
        (envelope("query_metrics", data={"series": []}), RECORDED),  # it answered
        (_not_available(), None),  # live: nothing recorded to fall back on
        (_not_available(), []),
    ],
)
def test_recorded_queries_instead_not_triggered(
    res: ToolResult, recorded: list[Recorded] | None
) -> None:
    ctx = rctx(recorded=recorded, services=["ledger"])
    assert result_checks("recorded_queries_instead", res, ctx) == []


def _cut_log_stats(**kw: Any) -> ToolResult:
    data = kw.pop(
        "data",
        {
            "by_level": {"info": 9120, "warn": 40, "error": 12},
            "top_messages": [
                {"template": "GET /health 200", "count": 9000, "levels": {"info": 9000}},
                {"template": "cache miss for <*>", "count": 40, "levels": {"warn": 40}},
            ],
        },
    )
    args = kw.pop("args", {"service": "ledger", "from": "-1h", "to": "now", "page_size": 20})
    return envelope("log_stats", data=data, args=args, complete=kw.pop("complete", False))


def test_errors_when_summary_cut() -> None:
    checks = result_checks("errors_when_summary_cut", _cut_log_stats(), rctx())
    assert checks == [
        Check(
            "log_stats",
            {"service": "ledger", "from": "-1h", "to": "now", "level": "error"},
            "the summary was truncated before the errors",
        )
    ]


@pytest.mark.parametrize(
    "res",
    [
        _cut_log_stats(complete=True),
        _cut_log_stats(args={"service": "ledger", "level": "warn"}),
        _cut_log_stats(data={"by_level": {"info": 10}, "top_messages": []}),
        _cut_log_stats(
            data={
                "by_level": {"info": 10, "error": 3},
                "top_messages": [{"template": "boom", "levels": {"error": 3}}],
            }
        ),
    ],
)
def test_errors_when_summary_cut_not_triggered(res: ToolResult) -> None:
    assert result_checks("errors_when_summary_cut", res, rctx()) == []


def _pods_page(names: list[str], *, complete: bool = False, **args: Any) -> ToolResult:
    return envelope(
        "list_pods",
        data={"pods": [{"name": n, "namespace": NS} for n in names], "count": len(names)},
        args={"namespace": NS, **args},
        complete=complete,
    )


def test_subject_pods_when_list_cut() -> None:
    ctx = rctx(subject=Subject(names=["ledger"]))
    res = _pods_page(["alpha-0", "beta-5f6a7b8c9-q1w2e"])
    assert result_checks("subject_pods_when_list_cut", res, ctx) == [
        Check(
            "list_pods",
            {"namespace": NS, "name": "ledger"},
            "the pod list was cut before ledger: its pods",
        )
    ]


def test_subject_pods_when_list_cut_uses_the_subject_namespace() -> None:
    ctx = rctx(subject=Subject(names=["ledger"], namespace="billing"))
    res = envelope("list_pods", data={"pods": [{"name": "alpha-0"}]}, complete=False)
    checks = result_checks("subject_pods_when_list_cut", res, ctx)
    assert [c.args for c in checks] == [{"namespace": "billing", "name": "ledger"}]


@pytest.mark.parametrize(
    ("res", "subject"),
    [
        (_pods_page(["alpha-0"], complete=True), Subject(names=["ledger"])),
        (_pods_page(["alpha-0", "ledger-6b7c8d9f0-x2x1q"]), Subject(names=["ledger"])),
        (_pods_page(["alpha-0"]), Subject()),
        (_pods_page(["alpha-0"], label_selector="tier=web"), Subject(names=["ledger"])),
    ],
)
def test_subject_pods_when_list_cut_not_triggered(res: ToolResult, subject: Subject) -> None:
    assert result_checks("subject_pods_when_list_cut", res, rctx(subject=subject)) == []


def test_subject_events_when_cut_names_the_subject_pods() -> None:
    ctx = rctx(subject=Subject(names=["ledger"]))
    for name in ("ledger-6b7c8d9f0-x2x1q", "ledger-6b7c8d9f0-k9z8w", "tally-5f6a7b8c9-q1w2e"):
        ctx.graph.add("Pod", Pod(name=name, namespace=NS), "E1")
    res = envelope("get_events", data={"events": []}, args={"namespace": NS}, complete=False)
    checks = result_checks("subject_events_when_cut", res, ctx)
    assert checks == [
        Check(
            "get_events",
            {"namespace": NS, "name": "ledger-6b7c8d9f0-x2x1q"},
            "the event list was cut: events of ledger-6b7c8d9f0-x2x1q",
        ),
        Check(
            "get_events",
            {"namespace": NS, "name": "ledger-6b7c8d9f0-k9z8w"},
            "the event list was cut: events of ledger-6b7c8d9f0-k9z8w",
        ),
    ]


def test_subject_events_when_cut_without_known_pods() -> None:
    ctx = rctx(subject=Subject(names=["ledger"]), namespace=NS)
    res = envelope("get_events", data={"events": []}, complete=False)
    checks = result_checks("subject_events_when_cut", res, ctx)
    assert [c.args for c in checks] == [{"namespace": NS, "name": "ledger"}]


@pytest.mark.parametrize(
    ("args", "complete", "subject"),
    [
        ({"namespace": NS}, True, Subject(names=["ledger"])),
        ({"namespace": NS, "name": "ledger-0"}, False, Subject(names=["ledger"])),
        ({"namespace": NS}, False, Subject()),
    ],
)
def test_subject_events_when_cut_not_triggered(
    args: dict[str, Any], complete: bool, subject: Subject
) -> None:
    res = envelope("get_events", data={"events": []}, args=args, complete=complete)
    assert result_checks("subject_events_when_cut", res, rctx(subject=subject)) == []


# ----------------------------------------------------------------------------- evidence.py

MISSING = fact(
    FactKind.MISSING_REFERENCE,
    key="pod:missing:ledger",
    service="ledger",
    severity="error",
    focus=True,
    quote='CreateContainerConfigError: secret "ledger-db-creds" not found',
    message='secret "ledger-db-creds" not found',
    subject=ObjRef(kind="Pod", name="ledger-0", namespace=NS),
)


def test_runbooks_for_cause() -> None:
    ctx = rctx(subject=Subject(names=["ledger"]), facts=[MISSING])
    checks = fact_checks("runbooks_for_cause", MISSING, ctx)
    assert checks == [
        Check(
            "search_runbooks",
            {"query": 'CreateContainerConfigError secret "ledger-db-creds" not found'},
            "runbooks about CreateContainerConfigError",
        )
    ]


def test_runbooks_for_cause_without_a_subject_takes_any_cause() -> None:
    f = MISSING.model_copy(update={"focus": False})
    assert len(fact_checks("runbooks_for_cause", f, rctx())) == 1


@pytest.mark.parametrize(
    ("f", "ctx"),
    [
        # a warning is not a cause worth a runbook search
        (
            MISSING.model_copy(update={"severity": "warning"}),
            rctx(subject=Subject(names=["ledger"])),
        ),
        # not about the subject
        (MISSING.model_copy(update={"focus": False}), rctx(subject=Subject(names=["tally"]))),
        # no runbook tool
        (MISSING, rctx(subject=Subject(names=["ledger"]), tools=frozenset({"list_pods"}))),
        # the same kind of cause already had its search
        (
            MISSING,
            rctx(
                subject=Subject(names=["ledger"]),
                facts=[MISSING.model_copy(update={"key": "pod:missing:other"}), MISSING],
            ),
        ),
    ],
)
def test_runbooks_for_cause_not_triggered(f: Fact, ctx: RuleContext) -> None:
    assert fact_checks("runbooks_for_cause", f, ctx) == []


def test_runbooks_for_two_causes_of_one_kind_found_together() -> None:
    """Two causes of one kind that arrive in the same result: the loop passes every fact so
    far (the new ones included) as ``ctx.facts``; one runbook search is still proposed."""
    other = MISSING.model_copy(
        update={
            "key": "pod:missing:ledger-cache",
            "quote": 'CreateContainerConfigError: secret "ledger-cache-creds" not found',
            "message": 'secret "ledger-cache-creds" not found',
        }
    )
    ctx = rctx(subject=Subject(names=["ledger"]), facts=[MISSING, other])
    proposals = [p for p in propose([MISSING, other], None, ctx) if p.rule == "runbooks_for_cause"]
    assert len(proposals) == 1


POOL = fact(
    FactKind.LOG_ERROR,
    key="log:ledger:pool",
    service="ledger",
    severity="error",
    focus=True,
    count=40,
    quote="PoolTimeout: QueuePool limit of size 5 overflow 10 reached, connection timed out",
)


def test_occurrences_of_error() -> None:
    checks = fact_checks("occurrences_of_error", POOL, rctx(services=["ledger"]))
    assert checks == [
        Check(
            "search_logs",
            {"query": "PoolTimeout", "page_size": 20, "service": "ledger"},
            "occurrences of PoolTimeout",
        )
    ]


def test_occurrences_of_error_not_triggered() -> None:
    other = POOL.model_copy(update={"focus": False, "service": "tally"})
    assert fact_checks("occurrences_of_error", other, rctx(services=["ledger"])) == []
    vague = POOL.model_copy(update={"quote": "x"})
    assert fact_checks("occurrences_of_error", vague, rctx(services=["ledger"])) == []


def test_runbooks_once_per_log_error_of_the_service() -> None:
    """For log errors, only the most frequent one of the focus gets the runbook search."""
    rarer = POOL.model_copy(update={"key": "log:ledger:rare", "count": 2, "quote": "KeyError: x"})
    ctx = rctx(subject=Subject(names=["ledger"]), facts=[POOL, rarer])
    assert fact_checks("runbooks_for_cause", rarer, ctx) == []
    assert len(fact_checks("runbooks_for_cause", POOL, ctx)) == 1


# ----------------------------------------------------------------------------- propose


def test_propose_on_a_mix() -> None:
    tools = frozenset({"query_metrics", "node_conditions", "search_runbooks", "log_stats"})
    sched = fact(
        FactKind.SCHEDULING,
        key="pod:sched:ledger",
        service="ledger",
        severity="error",
        focus=True,
        evidence=["E6", "E1"],
        quote="Unschedulable: 0/3 nodes are available: 3 Insufficient memory.",
    )
    oom = OOM.model_copy(update={"evidence": ["E5"], "quote": "OOMKilled: exit code 137"})
    quiet = fact(FactKind.NO_CHANGE, service="ledger", evidence=["E7"])
    ctx = rctx(tools=tools, subject=Subject(names=["ledger"]))
    proposals = propose([oom, sched, quiet], _cut_log_stats(), ctx)
    got = Counter((p.rule, p.tier, p.check.tool, p.trigger) for p in proposals)
    assert got == Counter(
        {
            ("oom_memory_metrics", Tier.EXPLAIN, "query_metrics", "E5"): 2,
            ("runbooks_for_cause", Tier.RUNBOOK, "search_runbooks", "E5"): 1,
            ("nodes_of_unschedulable", Tier.EXPLAIN, "node_conditions", "E6"): 1,
            ("card_reads", Tier.RUNBOOK, "node_conditions", "E6"): 1,  # the card's read
            ("runbooks_for_cause", Tier.RUNBOOK, "search_runbooks", "E6"): 1,
            ("errors_when_summary_cut", Tier.EXPLAIN, "log_stats", None): 1,
        }
    )


def test_propose_nothing_for_nothing() -> None:
    assert propose([], None, rctx()) == []
    quiet = fact(FactKind.NO_CHANGE, service="ledger")
    assert propose([quiet], None, rctx()) == []


# ----------------------------------------------------------------------------- survey


def survey(
    *,
    question: str = "why is ledger failing",
    services: list[str] | None = None,
    subject: Subject | None = None,
    namespace: str | None = None,
    nodes: list[str] | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    state = TaskState(
        goal=question,
        questions=[question],
        constraints=Constraints(services=services or []),
        subject=subject or Subject(),
        mentioned_nodes=nodes or [],
    )
    planner = Planner(state, tools=ALL_TOOLS)
    baseline(state, planner, namespace)
    priorities = [p.priority for p in state.pending]
    assert priorities == sorted(priorities)
    return [(p.tool, p.args) for p in state.pending]


def test_survey_in_the_subject_namespace() -> None:
    got = survey(services=["ledger"], subject=Subject(names=["ledger"], namespace=NS))
    assert got == [
        ("list_pods", {"namespace": NS}),
        ("get_events", {"namespace": NS}),
        ("log_stats", {"service": "ledger"}),
        ("rollout_history", {"name": "ledger", "namespace": NS}),
        ("list_objects", {"kind": "Service", "namespace": NS}),  # requests cross Services
        ("list_alerts", {}),
    ]


def test_survey_log_stats_per_focus_service_and_rollout_of_the_subject() -> None:
    got = survey(
        services=["ledger", "tally"],
        subject=Subject(names=["ledger-api"]),
        namespace="billing",
    )
    assert ("list_pods", {"namespace": "billing"}) in got
    assert ("get_events", {"namespace": "billing"}) in got
    assert [a for t, a in got if t == "log_stats"] == [{"service": "ledger"}, {"service": "tally"}]
    assert [a["name"] for t, a in got if t == "rollout_history"] == [
        "ledger",
        "tally",
        "ledger-api",
    ]
    assert ("search_logs", {"level": "error", "page_size": 50}) not in got
    assert all(t != "node_conditions" for t, _ in got)


def test_survey_without_focus() -> None:
    got = survey(subject=Subject(names=["ledger"]))
    assert ("list_pods", {}) in got
    assert ("log_stats", {}) in got
    assert ("search_logs", {"level": "error", "page_size": 50}) in got
    assert ("rollout_history", {"name": "ledger"}) in got


def test_survey_essential_checks() -> None:
    state = TaskState(goal="q", questions=["q"], subject=Subject(names=["ledger"]))
    planner = Planner(state, tools=ALL_TOOLS)
    baseline(state, planner, NS)
    essential = {p.tool: p.essential for p in state.pending}
    assert essential["list_pods"] and essential["get_events"] and essential["rollout_history"]
    assert essential["list_alerts"] is False
    alerts = next(p for p in state.pending if p.tool == "list_alerts")
    assert alerts.priority == int(Tier.BACKGROUND) - 5
    first = state.pending[0]
    assert (first.tool, first.priority) == ("list_pods", int(Tier.SURVEY))


@pytest.mark.parametrize(
    ("question", "nodes", "wanted"),
    [
        ("ledger pods were evicted overnight", [], True),
        ("is a node under disk pressure?", [], True),
        ("为什么 ledger 的节点不可用", [], True),
        ("ledger is slow", ["worker-7"], True),
        ("ledger is slow since 09:00", [], False),
        ("ledger returns 503", [], False),
    ],
)
def test_survey_nodes_only_when_mentioned(question: str, nodes: list[str], wanted: bool) -> None:
    got = survey(question=question, subject=Subject(names=["ledger"]), nodes=nodes)
    assert (("node_conditions", {}) in got) is wanted


def test_a_symptom_only_in_the_question_reads_where_its_causes_live() -> None:
    """A question saying "cannot resolve" with no log line saying so: the policies that may
    drop DNS and the cluster DNS pods are read (the failure modes the words select bring
    their reads)."""
    got = survey(question="checkout cannot resolve DNS names since 10:00", namespace=NS)
    assert ("list_objects", {"kind": "NetworkPolicy", "namespace": NS}) in got
    assert ("list_pods", {"namespace": "kube-system"}) in got
    plain = survey(question="what is wrong with ledger", namespace=NS)
    assert ("list_pods", {"namespace": "kube-system"}) not in plain


def test_a_configmap_setting_that_names_where_a_failing_caller_connects_is_walked_into() -> None:
    from opsmate.tools.kubernetes.shaping_objects import config_addresses

    data = {"BROKER_URL": "pulsar://proxy.messaging.svc.cluster.local:6650", "LOG_LEVEL": "info",
            "CACHE_URL": "redis://user:secret@kv:6379/0", "app.yaml": "a: 1"}  # fmt: skip
    addresses = config_addresses(data)
    assert addresses == {"BROKER_URL": "pulsar://proxy.messaging.svc.cluster.local:6650",
                         "CACHE_URL": "redis://***@kv:6379/0"}  # fmt: skip
    res = envelope("list_objects", data={"kind": "ConfigMap", "items": [
        {"name": "orders-config", "namespace": NS, "keys": sorted(data),
         "addresses": addresses}]})  # fmt: skip
    failing = fact(FactKind.DEPENDENCY_FAILURE, service="orders", focus=True, reason="timeout",
                   quote="PulsarClientException$TimeoutException: could not send within timeout "
                   "to messaging")  # fmt: skip
    got = result_checks("configured_dependency", res, rctx(facts=[failing]))
    assert [(c.tool, c.args) for c in got] == [("list_pods", {"namespace": "messaging"})]
    other = fact(
        FactKind.DEPENDENCY_FAILURE,
        service="orders",
        focus=True,
        reason="timeout",
        quote="payment gateway timed out",
    )  # names nothing the settings point at
    assert result_checks("configured_dependency", res, rctx(facts=[other])) == []


def test_a_subject_that_logs_no_error_widens_the_log_survey_to_every_service() -> None:
    quiet = envelope("log_stats", args={"service": "loki"}, data={
        "total": 40, "top_messages": [{"pattern": "request served", "count": 40,
                                       "severity": "info", "levels": {"info": 40}}]})  # fmt: skip
    got = result_checks("quiet_subject_logs", quiet, rctx())
    assert [(c.tool, c.args) for c in got] == [("log_stats", {})]
    noisy = envelope("log_stats", args={"service": "loki"}, data={
        "total": 3, "top_messages": [{"pattern": "flush failed", "count": 3, "errors": 3,
                                      "severity": "error", "levels": {"error": 3}}]})  # fmt: skip
    assert result_checks("quiet_subject_logs", noisy, rctx()) == []
    everyone = envelope("log_stats", args={}, data={"total": 0, "top_messages": []})
    assert result_checks("quiet_subject_logs", everyone, rctx()) == []  # already every service


def test_an_ingress_with_an_address_is_served_its_class_is_not_read() -> None:
    def listing(addresses: list[str]) -> ToolResult:
        return envelope("list_objects", data={"kind": "Ingress", "items": [
            {"name": "web", "namespace": NS, "class_name": "nginx", "addresses": addresses,
             "rules": [{"host": "web.example.org", "service": "web"}]}]})  # fmt: skip

    served = result_checks("ingress_references", listing(["203.0.113.7"]), rctx())
    assert all(c.args.get("kind") != "IngressClass" for c in served)
    unserved = result_checks("ingress_references", listing([]), rctx())
    assert ("list_objects", {"kind": "IngressClass"}) in [(c.tool, c.args) for c in unserved]


def test_an_ingress_that_names_no_class_reads_the_classes_whatever_address_it_kept() -> None:
    # served by a default class only: the address it kept from an earlier controller proves
    # nothing about the controller running now
    classless = envelope("list_objects", data={"kind": "Ingress", "items": [
        {"name": "web", "namespace": NS, "addresses": ["203.0.113.7"],
         "rules": [{"host": "web.example.org", "service": "web"}]}]})  # fmt: skip
    got = result_checks("ingress_references", classless, rctx())
    assert ("list_objects", {"kind": "IngressClass"}) in [(c.tool, c.args) for c in got]


def test_each_candidate_cards_most_telling_read_comes_before_the_generic_series() -> None:
    state = TaskState(goal="q", questions=["items disappear and reappear a few minutes later"],
                      subject=Subject(names=["ledger"]))  # fmt: skip
    planner = Planner(state, tools=ALL_TOOLS)
    baseline(state, planner, NS)
    lag = [p for p in state.pending if "replication_lag" in str(p.args.get("query", ""))]
    assert lag and lag[0].priority == int(Tier.SURVEY) + 4
    assert not lag[0].essential
    later = [p for p in state.pending if "symptom fits" in p.reason and p not in lag[:1]]
    assert all(p.priority > int(Tier.SURVEY) + 4 for p in later)


def test_what_was_over_before_the_window_began_is_not_followed_up() -> None:
    from datetime import UTC, datetime

    from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
    from opsmate.agent.plan.registry import RuleContext, propose

    t = datetime(2026, 7, 8, 10, 59, tzinfo=UTC)
    oom = Fact(key="oom", statement="pod db-1: container mongod was OOMKilled",
               kind=FactKind.OOM_KILLED, severity="error", service="db", time=t,
               subject=ObjRef(kind="Pod", name="db-1"), focus=True)  # fmt: skip
    ctx = RuleContext(tools=ALL_TOOLS)
    assert propose([oom], None, ctx)  # in the window: its memory is read
    ctx.window_from = datetime(2026, 7, 8, 16, 0, tzinfo=UTC)
    assert propose([oom], None, ctx) == []  # five hours before the window: context
    down = Fact(key="node", statement="node w1 reports Ready=Unknown since 10:59",
                kind=FactKind.NODE_PROBLEM, severity="error", time=t, focus=True,
                subject=ObjRef(kind="Node", name="w1"))  # fmt: skip
    still = propose([down], None, ctx)
    assert still and still == propose([down], None, RuleContext(tools=ALL_TOOLS))  # may hold


def test_a_cards_series_written_for_a_namespace_is_not_asked_without_one() -> None:
    full = fact(FactKind.SATURATION, severity="error", reason="disk_full", focus=True,
                quote="no space left on device")  # fmt: skip
    none = fact_checks("card_reads", full, rctx(facts=[full]))
    assert not [c for c in none if c.tool == "query_metrics"]  # no query: nothing to ask
    known = fact_checks("card_reads", full, rctx(facts=[full], namespace="registry"))
    queries = [str(c.args.get("query")) for c in known if c.tool == "query_metrics"]
    assert queries and all('namespace="registry"' in q for q in queries)
