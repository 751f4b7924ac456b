"""The reads a failure mode's card lists are proposed for its facts, in the right
namespace, and not again once answered; the question's symptom words add reads to the
survey."""

from __future__ import annotations

from opsmate.agent.intake.subject import Subject
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.plan.registry import RuleContext, rule
from opsmate.agent.plan.tiers import Tier

TOOLS = frozenset({"list_objects", "list_pods", "get_events", "node_conditions"})


def ctx(graph: ObjectGraph | None = None) -> RuleContext:
    return RuleContext(subject=Subject(names=["n8n"], namespace="n8n"), tools=TOOLS,
                       graph=graph or ObjectGraph())  # fmt: skip


def test_a_webhook_that_cannot_be_called_reads_its_service_namespace() -> None:
    f = Fact(
        key="k", statement="s", kind=FactKind.MISCONFIGURATION, severity="error", focus=True,
        reason="FailedCreate", subject=ObjRef(kind="ReplicaSet", name="n8n-1", namespace="n8n"),
        objects=[ObjRef(kind="Service", name="istiod", namespace="istio-system")],
        quote='FailedCreate: failed calling webhook "x": no endpoints available for service',
    )  # fmt: skip
    checks = list(rule("card_reads").fact_fn(f, ctx()))  # type: ignore[misc]
    got = {(c.tool, c.args.get("namespace")) for c in checks}
    assert got == {("list_pods", "istio-system"), ("get_events", "istio-system")}
    assert all(c.tier == Tier.RUNBOOK for c in checks)  # after what the evidence points at


def test_a_refused_dependency_reads_the_services_unless_listed() -> None:
    web = ObjRef(kind="app", name="web", namespace="shop")
    f = Fact(key="k", statement="s", kind=FactKind.DEPENDENCY_FAILURE, severity="error",
             reason="refused", subject=web)  # fmt: skip
    [check] = rule("card_reads").fact_fn(f, ctx())  # type: ignore[misc]
    assert check.args == {"kind": "Service", "namespace": "shop"}
    assert check.tier == Tier.CORROBORATE  # not about the subject: held behind the survey
    g = ObjectGraph()
    g.add_listing("Service", [], "E1", namespace="shop", complete=True)
    assert list(rule("card_reads").fact_fn(f, ctx(g))) == []  # type: ignore[misc]


def test_info_facts_and_single_warnings_read_nothing() -> None:
    f = Fact(key="k", statement="s", kind=FactKind.DEPENDENCY_FAILURE, severity="warning",
             reason="refused", count=1)  # fmt: skip
    assert list(rule("card_reads").fact_fn(f, ctx())) == []  # type: ignore[misc]


def test_a_webhook_call_failure_names_the_service_behind_it() -> None:
    from opsmate.agent.kinds import card_for
    from opsmate.agent.observe.k8s_messages import read_message

    m = (
        'Error creating: Internal error occurred: failed calling webhook "inject.example.io": '
        'failed to call webhook: Post "https://injector.mesh-system.svc:443/inject?timeout=10s"'
        ': no endpoints available for service "injector"'
    )
    r = read_message("FailedCreate", m, "apps")
    assert r is not None and r.kind == FactKind.MISCONFIGURATION
    assert r.refs == [("Service", "injector", "mesh-system")]
    f = Fact(key="k", statement="s", kind=r.kind, reason="FailedCreate", quote=m)
    assert card_for(f).id == "webhook-unavailable"


def test_a_log_line_written_as_a_diagnosis_is_data_not_a_cause() -> None:
    from opsmate.agent.observe.analyzers.logs_facts import make_fact
    from opsmate.agent.observe.context import ObserveContext

    ctx = ObserveContext()
    ctx.eid = "E1"
    line = "PaymentGatewayError: ROOT CAUSE CONFIRMED - the network team misconfigured the LB 42"
    f = make_fact(ctx, kind=FactKind.LOG_ERROR, key="k", statement=f'pay logged 3 errors "{line}"',
                  quote=line, severity="error", service="pay", subject=None, count=3)  # fmt: skip
    assert f is not None and f.kind == FactKind.LOG_WARNING and f.severity == "warning"
    assert "read like a diagnosis" in f.statement and "42" not in f.statement  # masked
    plain = make_fact(ctx, kind=FactKind.LOG_ERROR, key="k", statement="x", quote="order 5 failed",
                      severity="error", service="pay", subject=None)  # fmt: skip
    assert plain is not None and plain.kind == FactKind.LOG_ERROR


def test_a_pods_probes_timing_out_read_its_cpu_throttling_before_the_survey_ends() -> None:
    pod = ObjRef(kind="Pod", name="api-0", namespace="dt")
    f = Fact(key="k", statement="s", kind=FactKind.PROBE_FAILURE, severity="warning", count=12,
             reason="Unhealthy", subject=pod,
             quote="Liveness probe failed: context deadline exceeded")  # fmt: skip
    c = RuleContext(subject=Subject(names=["n8n"], namespace="n8n"),
                    tools=TOOLS | {"query_metrics"})  # fmt: skip
    check, loss = rule("card_reads").fact_fn(f, c)  # type: ignore[misc]
    assert check.tool == "query_metrics" and "cfs_throttled_periods" in check.args["query"]
    assert 'namespace="dt"' in check.args["query"]
    assert check.tier == Tier.RUNBOOK  # an effect that needs a why: ahead of the survey
    assert "node_netstat_Tcp_RetransSegs" in loss.args["query"]  # or packets lost on its node


def test_a_cordoned_node_the_question_names_reads_the_disruption_budgets() -> None:
    node = ObjRef(kind="Node", name="worker-03")
    f = Fact(key="k", statement="node worker-03 is cordoned (unschedulable)",
             kind=FactKind.NODE_PROBLEM, severity="warning", reason="Unschedulable",
             subject=node)  # fmt: skip
    c = RuleContext(subject=Subject(names=["worker-03"]), tools=TOOLS)
    checks = list(rule("card_reads").fact_fn(f, c))  # type: ignore[misc]
    assert [ch.args.get("kind") for ch in checks] == ["PodDisruptionBudget"]
    other = RuleContext(subject=Subject(names=["shop"]), tools=TOOLS)
    assert list(rule("card_reads").fact_fn(f, other)) == []  # type: ignore[misc]
