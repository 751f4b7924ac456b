"""What log lines mean: an application that logs the API server's refusal it got back (a
Status body quoted as JSON, at WARN) is that refusal, named in the root cause; a batch run's
steps that take seconds wait on no dependency unless a line says they are slow."""

from __future__ import annotations

from opsmate.agent.evidence import EvidenceStore
from opsmate.agent.intake.subject import Subject
from opsmate.agent.judge.analysis import analyse
from opsmate.agent.kinds import card_for
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.observe.registry import observe
from opsmate.agent.state import TaskState
from opsmate.tools.base import ToolResult

STATUS = (
    '[{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods is '
    'forbidden: User \\"system:serviceaccount:shop:cart\\" cannot list resource \\"pods\\" in API '
    'group \\"\\" in the namespace \\"shop\\"","reason":"Forbidden","code":403}]'
)
LINE = (
    "[2026-03-24 13:40:23,026] [WARN] [discovery.KubeApiLookup] - Forbidden to list peers "
    f"from the Kubernetes API server. Response: {STATUS}"
)


def test_a_refusal_quoted_as_a_json_body_is_the_refusal() -> None:
    res = ToolResult(
        call_id="c1",
        tool="search_logs",
        status="success",
        data={
            "items": [
                {
                    "@timestamp": "2026-03-24T13:40:23Z",
                    "message": LINE,
                    "service": "cart",
                    "level": "warn",
                }
            ]
        },
    )
    facts = [x for x in observe(res, ObserveContext(eid="E1")) if x.kind == K.RBAC_DENIED]
    [fact] = facts
    assert "logged that Kubernetes refused it: pods is forbidden" in fact.statement
    assert fact.detail["verb"] == "list" and fact.detail["resource"] == "pods"
    assert card_for(fact).id == "rbac-denied"
    state = TaskState(goal="why", questions=["why"], subject=Subject(names=["cart"]))
    state.facts = [fact]
    an = analyse(state, EvidenceStore(), [], ObjectGraph())
    assert an.root_statement is not None
    assert "a missing RBAC permission (no Role or RoleBinding grants it): cart logged" in (
        an.root_statement
    )


def test_a_batch_runs_steps_taking_seconds_wait_on_no_dependency_unless_said_slow() -> None:
    from opsmate.agent.observe.analyzers.logs import _latency_facts
    from opsmate.records.k8s import Pod
    from opsmate.records.logs import LatencyStat

    ctx = ObserveContext(eid="E1")
    ctx.graph.add("Pod", Pod(name="marts-2947-b92q2", namespace="etl", owner="Job/marts-2947"),
                  "E0")  # fmt: skip
    step = LatencyStat(
        key="<num> of <num> OK created sql model <*> in <dur>",
        service="marts",
        count=40,
        p50_ms=4500,
        p99_ms=8700,
        example="45 of 60 OK created sql table model marts.orders in 8.70s",
    )
    kinds = {f.kind for f in _latency_facts(step, ctx, None, None, [step])}
    assert K.DEPENDENCY_FAILURE not in kinds and K.LATENCY in kinds
    said = step.model_copy(update={"example": "slow statement on sql partition 4 took 48s"})
    kinds = {f.kind for f in _latency_facts(said, ctx, None, None, [said])}
    assert K.DEPENDENCY_FAILURE in kinds
    server = ObserveContext(eid="E1")  # a server's pods (a Deployment's): the same steps wait
    server.graph.add("Pod", Pod(name="marts-5d8f9-x2x1a", namespace="etl",
                                owner="ReplicaSet/marts-5d8f9"), "E0")  # fmt: skip
    kinds = {f.kind for f in _latency_facts(step, server, None, None, [step])}
    assert K.DEPENDENCY_FAILURE in kinds
