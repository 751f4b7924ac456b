"""An application that logs the API server's refusal it got back (a Status body quoted as
JSON, at WARN): the same failure mode as the refusal itself, named in the root cause."""

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
    "[2026-03-24 13:40:23,026] [WARN] [discovery.KubernetesApiServiceDiscovery] - Forbidden to "
    f"communicate with Kubernetes API server; check RBAC settings. Response: {STATUS}"
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
