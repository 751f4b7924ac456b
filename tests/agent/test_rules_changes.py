"""Rules about changes: a failing workload's rollout, a rollout seen in the events."""

from __future__ import annotations

from opsmate.agent.intake.subject import Subject
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.plan.registry import RuleContext, rule
from opsmate.agent.plan.tiers import Tier

TOOLS = frozenset({"rollout_history"})


def f(kind: FactKind, **kw: object) -> Fact:
    return Fact(key=str(kw), statement="s", evidence=["E1"], kind=kind, severity="error", **kw)  # type: ignore[arg-type]


def test_a_failing_workload_gets_its_rollout_checked() -> None:
    r = rule("rollout_of_failing_workload")
    assert r.tier == Tier.EXPLAIN
    fact = f(FactKind.LOG_ERROR, service="thumbs", subject=ObjRef(kind="app", name="thumbs"))
    checks = list(r.fact_fn(fact, RuleContext(tools=TOOLS, namespace="media")))  # type: ignore[misc]
    assert [(c.tool, c.args) for c in checks] == [
        ("rollout_history", {"name": "thumbs", "namespace": "media"})
    ]
    # the question names another subject: not this workload's business
    ctx = RuleContext(tools=TOOLS, subject=Subject(names=["web"]))
    assert list(r.fact_fn(fact, ctx)) == []  # type: ignore[misc]
    assert list(r.fact_fn(f(FactKind.LOG_ERROR), RuleContext(tools=TOOLS))) == []  # type: ignore[misc]


def test_a_rollout_seen_in_the_events_gets_its_changes_read() -> None:
    r = rule("rollout_seen_in_events")
    scaled = f(
        FactKind.OBSERVATION,
        reason="ScalingReplicaSet",
        message="Scaled up replica set thumbs-7d9 to 1",
        subject=ObjRef(kind="Deployment", name="thumbs", namespace="media"),
    )
    checks = list(r.fact_fn(scaled, RuleContext(tools=TOOLS)))  # type: ignore[misc]
    assert [(c.tool, c.args["name"]) for c in checks] == [("rollout_history", "thumbs")]
    down = scaled.model_copy(update={"message": "Scaled down replica set thumbs-6c8 to 0"})
    assert list(r.fact_fn(down, RuleContext(tools=TOOLS))) == []  # type: ignore[misc]


def test_a_failing_database_client_reads_the_logs_of_the_database_it_connects_to() -> None:
    """The subject's pool runs dry: the workload its env points at runs a database image, so
    what that database logs is read (disk full, locks); a non-database neighbour is not."""
    from opsmate.agent.observe.graph import ObjectGraph
    from opsmate.records.k8s import Container, EnvVar, Pod
    from opsmate.records.k8s_objects import Service

    graph = ObjectGraph()
    env = [EnvVar(name="SPRING_DATASOURCE_URL", value="jdbc:mariadb://orders-db:3306/orders"),
           EnvVar(name="AUTH_URL", value="http://auth:8080")]  # fmt: skip
    graph.add("Pod", Pod(name="orders-7d9f8-abcde", namespace="shop",
                         owner="ReplicaSet/orders-7d9f8", labels={"app": "orders"},
                         containers=[Container(name="orders", env=env)]), "E9")  # fmt: skip
    for name, image in (("orders-db", "docker.io/bitnami/mariadb:11.4"), ("auth", "acme/auth:2")):
        graph.add("Pod", Pod(name=f"{name}-0", namespace="shop", owner=f"StatefulSet/{name}",
                             labels={"app": name},
                             containers=[Container(name=name, image=image)]), "E9")  # fmt: skip
        graph.add("Service", Service(name=name, namespace="shop", selector={"app": name}), "E9")
    pool = f(FactKind.SATURATION, service="orders", focus=True, reason="pool_exhausted",
             subject=ObjRef(kind="app", name="orders"),
             quote="HikariPool-1 - Connection is not available, request timed out")  # fmt: skip
    r = rule("backing_store_logs")
    ctx = RuleContext(tools=frozenset({"log_stats"}), graph=graph)
    checks = list(r.fact_fn(pool, ctx))  # type: ignore[misc]
    assert [(c.tool, c.args) for c in checks] == [("log_stats", {"service": "orders-db"})]
    # an error that is not its database client's says nothing about the database
    other = pool.model_copy(update={"reason": None, "kind": FactKind.LOG_ERROR,
                                    "quote": "template not found: checkout.html"})  # fmt: skip
    assert list(r.fact_fn(other, ctx)) == []  # type: ignore[misc]
