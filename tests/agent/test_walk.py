"""The walk to the deepest abnormal component (agent/judge/walk.py) on synthetic graphs:
a chain of three services, a cycle, a fan-out, and what it does to the candidates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from opsmate.agent.judge import links, walk
from opsmate.agent.judge.candidates import Candidate
from opsmate.agent.observe.depgraph import DependencyGraph
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef

T0 = datetime(2026, 5, 4, 10, 0, tzinfo=UTC)
K = FactKind


def graph(*pairs: tuple[str, str]) -> DependencyGraph:
    dg = DependencyGraph()
    for a, b in pairs:
        dg.aliases.setdefault(a, a)
        dg.aliases.setdefault(b, b)
        dg.add(a, b, f"env {b.upper()}_ADDR={b}:80", ["E1"])
    return dg


def fact(
    kind: FactKind, app: str, minutes: float = 1, severity: str = "error", **kw: object
) -> Fact:
    return Fact(
        key=f"{kind}:{app}:{minutes}",
        kind=kind,
        statement=f"{app}: {kind.value}",
        evidence=[f"E{abs(hash((kind, app))) % 90 + 2}"],
        severity=severity,  # type: ignore[arg-type]
        subject=ObjRef(kind="app", name=app),
        service=app,
        time=T0 + timedelta(minutes=minutes),
        count=kw.pop("count", 5),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def test_chain_of_three_ends_at_the_deepest_abnormal_component() -> None:
    dg = graph(("frontend", "checkout"), ("checkout", "payment"))
    facts = [
        fact(K.DEPENDENCY_FAILURE, "frontend", 2),
        fact(K.DEPENDENCY_FAILURE, "checkout", 1.5),
        fact(K.CRASH_LOOP, "payment", 1),
    ]
    w = walk.walk(facts, dg, {"frontend"}, T0)
    assert w.root == "payment" and w.start == "frontend"
    assert [(e.src, e.dst) for e in w.path] == [("frontend", "checkout"), ("checkout", "payment")]
    hops = walk.chain_facts(w)
    assert [f.service for f in hops] == ["frontend", "checkout"]  # the callers' errors, in order


def test_a_cycle_terminates_and_a_healthy_callee_is_not_blamed() -> None:
    dg = graph(("a", "b"), ("b", "c"), ("c", "a"))
    facts = [fact(K.DEPENDENCY_FAILURE, "a"), fact(K.LATENCY, "b", severity="warning")]
    # b's latency is a warning, not a shifted request series: b is not abnormal
    assert walk.walk(facts, dg, {"a"}, T0).root is None


def test_fan_out_with_two_sinks_picks_the_one_that_began_clearly_first() -> None:
    dg = graph(("edge", "x"), ("edge", "y"))
    both = [fact(K.DEPENDENCY_FAILURE, "edge", 3), fact(K.CRASH_LOOP, "x", 1),
            fact(K.CRASH_LOOP, "y", 1.2)]  # fmt: skip
    assert walk.walk(both, dg, {"edge"}, T0).root is None  # within a minute: ambiguous
    staggered = [fact(K.DEPENDENCY_FAILURE, "edge", 6), fact(K.CRASH_LOOP, "x", 1),
                 fact(K.CRASH_LOOP, "y", 4)]  # fmt: skip
    assert walk.walk(staggered, dg, {"edge"}, T0).root == "x"


def test_a_single_blip_does_not_make_a_component_abnormal() -> None:
    dg = graph(("edge", "x"))
    facts = [fact(K.DEPENDENCY_FAILURE, "edge"), fact(K.PROBE_FAILURE, "x", count=1)]
    assert "x" not in walk.abnormal_components(facts, dg, T0)


def test_apply_raises_the_deepest_and_lowers_the_callers() -> None:
    dg = graph(("frontend", "db"))
    caller = fact(K.DEPENDENCY_FAILURE, "frontend", 2)
    down = fact(K.CRASH_LOOP, "db", 1)
    w = walk.walk([caller, down], dg, {"frontend"}, T0)
    cands = [Candidate(lead=caller, relation=links.SUBJECT, score=5.0)]
    added = walk.apply(w, cands, dg, {caller.key: links.SUBJECT, down.key: links.UNRELATED})
    assert added is not None and added.lead is down and added.supported
    assert added.relation == links.LINKED  # the data shows the subject depends on it
    assert added.score > cands[0].score  # the caller's error is a link, not the root


def test_a_caller_off_the_walked_path_whose_error_names_the_root_loses_too() -> None:
    dg = graph(("frontend", "catalog"), ("recommend", "catalog"))
    crash = fact(K.CRASH_LOOP, "catalog", 1)
    front = fact(K.DEPENDENCY_FAILURE, "frontend", 2)
    other = fact(
        K.DEPENDENCY_FAILURE, "recommend", 2, objects=[ObjRef(kind="host", name="catalog:80")]
    )
    w = walk.walk([crash, front, other], dg, {"frontend"}, T0)
    assert w.root == "catalog" and [(e.src, e.dst) for e in w.path] == [("frontend", "catalog")]
    cands = [Candidate(lead=f, relation=links.SCOPE, score=5.0) for f in (front, other)]
    walk.apply(w, cands, dg, {front.key: links.SCOPE, other.key: links.SCOPE})
    assert all(c.score < 5.0 for c in cands[:2])  # both callers failed on the root


def test_a_client_name_extending_a_component_resolves_to_it() -> None:
    dg = graph(("timeline", "post-storage"), ("timeline", "post-storage-memcached"))
    assert dg.resolve("post-storage-client") == "post-storage"
    assert dg.resolve("post-storage-memcached-pool") == "post-storage-memcached"
    assert dg.resolve("unknown-client") is None and dg.resolve("10.0.0.1-x") is None


def test_a_service_routing_nowhere_is_abnormal_only_when_calls_fail_on_it() -> None:
    dg = graph(("web", "api"), ("web", "tracing"))
    latent = fact(K.MISCONFIGURATION, "tracing", reason="TargetPortNotListening")
    down = fact(K.CRASH_LOOP, "api")
    caller = fact(K.DEPENDENCY_FAILURE, "web", 2, objects=[ObjRef(kind="host", name="api:80")])
    ab = walk.abnormal_components([latent, down, caller], dg, T0)
    assert "tracing" not in ab and "api" in ab
