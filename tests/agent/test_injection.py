"""A pod created without the containers a mutating webhook injected into its siblings (an
injector down, failing open): the missing injection, not the rollout that made the pod,
explains why it crashes."""

from __future__ import annotations

from opsmate.agent.kinds import card_for
from opsmate.agent.observe.analyzers.k8s_injection import missing_injection
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.records.k8s import Pod, Rollout

NS = "crm"


def _pod(name: str, rs: str, image: str, *, injected: bool, failing: bool) -> Pod:
    app: dict[str, object] = {"name": "app", "image": image, "ready": not failing,
                              "restarts": 9 if failing else 0}  # fmt: skip
    if failing:
        app.update(state="waiting", reason="CrashLoopBackOff",
                   last_termination={"reason": "Error", "exit_code": 1})  # fmt: skip
    else:
        app.update(state="running")
    containers = [app]
    inits: list[dict[str, object]] = []
    if injected:
        containers.append({"name": "agent", "image": "corp/secrets-agent:1.4", "ready": True,
                           "state": "running"})  # fmt: skip
        inits.append({"name": "agent-init", "image": "corp/secrets-agent:1.4",
                      "state": "terminated", "reason": "Completed"})  # fmt: skip
    return Pod.model_validate({
        "name": name, "namespace": NS, "phase": "Running", "owner": f"ReplicaSet/{rs}",
        "ready": "0/1" if failing else "2/2", "containers": containers,
        "init_containers": inits,
    })  # fmt: skip


def _graph(pods: list[Pod], new_template: list[str]) -> ObjectGraph:
    ro = Rollout.model_validate({"name": "crm", "namespace": NS, "revisions": [
        {"revision": 4, "replicaset": "crm-5f6d7c8b9", "images": ["corp/crm:3.4.1"]},
        {"revision": 5, "replicaset": "crm-6b7d5c9f84", "images": new_template,
         "current": True}]})  # fmt: skip
    g = ObjectGraph()
    g.add_listing("Pod", pods, "E1", namespace=NS)
    g.add("Deployment", ro, "E2", namespace=NS)
    return g


def test_a_new_pod_without_its_siblings_injected_containers_names_the_injector() -> None:
    old = [_pod(f"crm-5f6d7c8b9-x2k4{c}", "crm-5f6d7c8b9", "corp/crm:3.4.1", injected=True,
                failing=False) for c in "pq"]  # fmt: skip
    new = _pod("crm-6b7d5c9f84-h5tzq", "crm-6b7d5c9f84", "corp/crm:3.4.2", injected=False,
               failing=True)  # fmt: skip
    facts = missing_injection(ObserveContext(graph=_graph([*old, new], ["corp/crm:3.4.2"])))
    assert len(facts) == 1
    f = facts[0]
    assert f.subject is not None and f.subject.name == new.name
    assert f.detail["missing"] == ["agent", "agent-init"]
    card = card_for(f)
    assert card.id == "sidecar-not-injected" and card.conclusive and "injector" in card.phrase
    # injected into the new pod too: nothing is missing
    fine = _pod("crm-6b7d5c9f84-h5tzq", "crm-6b7d5c9f84", "corp/crm:3.4.2", injected=True,
                failing=True)  # fmt: skip
    assert missing_injection(ObserveContext(graph=_graph([*old, fine], ["corp/crm:3.4.2"]))) == []
    # the old template declared the agent itself: not an injection, nothing to say
    declared = _graph([*old, new], ["corp/crm:3.4.2"])
    ro = declared.rollouts()[0]
    ro.revisions[0].images.append("corp/secrets-agent:1.4")
    assert missing_injection(ObserveContext(graph=declared)) == []
