"""A workload that fails only on nodes of one CPU architecture (an image built for one
architecture scheduled onto another), the exec-format error that asks for it, and one pod's
last words read before its siblings'."""

from __future__ import annotations

from opsmate.agent.kinds import card_for
from opsmate.agent.observe.analyzers.k8s_node_split import architecture_split
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.plan.registry import RuleContext, rule
from opsmate.agent.plan.tiers import Tier
from opsmate.records.k8s import Node, Pod

NS = "translate"


def _node(name: str, arch: str) -> Node:
    return Node.model_validate({"name": name, "ready": True,
                                "labels": {"kubernetes.io/arch": arch}})  # fmt: skip


def _pod(name: str, node: str, failing: bool) -> Pod:
    c: dict[str, object] = {"name": "app", "image": "shop/app:2", "ready": not failing,
                            "restarts": 7 if failing else 0}  # fmt: skip
    if failing:
        c.update(state="waiting", reason="CrashLoopBackOff",
                 last_termination={"reason": "Error", "exit_code": 255})  # fmt: skip
    else:
        c.update(state="running")
    return Pod.model_validate({"name": name, "namespace": NS, "node": node, "phase": "Running",
                               "ready": "0/1" if failing else "1/1",
                               "containers": [c]})  # fmt: skip


def _graph(pods: list[Pod]) -> ObjectGraph:
    g = ObjectGraph()
    g.add_listing("Node", [_node("n-amd-1", "amd64"), _node("n-arm-1", "arm64"),
                           _node("n-arm-2", "arm64")], "E1", namespace=None)  # fmt: skip
    g.add_listing("Pod", pods, "E2", namespace=NS)
    return g


def test_a_workload_failing_only_on_one_architectures_nodes_runs_an_image_for_another() -> None:
    pods = [_pod("app-7d9f8c6b5d-a1b2c", "n-arm-1", True), _pod("app-7d9f8c6b5d-d3e4f",
            "n-arm-2", True), _pod("app-7d9f8c6b5d-g5h6i", "n-amd-1", False)]  # fmt: skip
    facts = architecture_split(ObserveContext(graph=_graph(pods)))
    assert len(facts) == 1
    f = facts[0]
    assert f.reason == "ArchitectureMismatch" and "arm64" in f.statement
    assert card_for(f).id == "image-architecture-mismatch" and card_for(f).conclusive
    assert {o.name for o in f.objects} == {"n-arm-1", "n-arm-2"}
    # failing on both architectures: not the image's platform
    mixed = [*pods[:1], _pod("app-7d9f8c6b5d-j7k8l", "n-amd-1", True), pods[2]]
    assert architecture_split(ObserveContext(graph=_graph(mixed))) == []


def test_an_exec_format_error_asks_for_the_nodes_architecture() -> None:
    said = Fact(key="lw", statement="s", kind=FactKind.LAST_WORDS, severity="error",
                quote="exec /app/bin/server: exec format error")  # fmt: skip
    card = card_for(said)
    assert card.id == "exec-format-last-words" and card.needs_deeper
    assert [r.tool for r in card.reads] == ["node_conditions"]


def test_a_sibling_pods_last_words_wait_for_the_first_pods() -> None:
    def crash(pod: str) -> Fact:
        where = ObjRef(kind="Pod", name=pod, namespace=NS)
        return Fact(key=f"crash:{pod}", statement="s", kind=FactKind.CRASH_LOOP,
                    severity="error", subject=where)  # fmt: skip

    first, second = crash("app-7d9f8c6b5d-a1b2c"), crash("app-7d9f8c6b5d-d3e4f")
    other = crash("db-0")
    ctx = RuleContext(tools=frozenset({"pod_logs"}), facts=[first, second, other])
    fn = rule("last_words_logs").fact_fn
    assert fn is not None
    assert all(c.tier is None for c in fn(first, ctx))
    assert {c.tier for c in fn(second, ctx)} == {Tier.CORROBORATE}
    assert all(c.tier is None for c in fn(other, ctx))  # another workload: its own tail
