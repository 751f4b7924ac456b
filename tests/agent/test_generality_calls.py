"""General readings of calls between services: a plural names a service, an RPC's full
method name names the service it calls, the callee's own account leads its caller's echo,
a quiet dependency widens nothing, and a caller's new build does not cut its path to a
dependency."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from opsmate.agent.intake.question import detect_services
from opsmate.agent.intake.subject import Subject
from opsmate.agent.judge import links
from opsmate.agent.judge.candidates import Candidate, change_for
from opsmate.agent.judge.chains import origin_over_echo
from opsmate.agent.observe import depgraph
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.plan.registry import RuleContext, rule
from opsmate.records.k8s import Pod
from opsmate.tools.base import ToolResult

T = datetime(2026, 1, 1, 10, tzinfo=UTC)
NS = "mall"
TOOLS = frozenset({"log_stats", "list_pods", "get_events"})


def _graph(*workloads: str) -> ObjectGraph:
    g = ObjectGraph()
    for i, w in enumerate(workloads):
        g.add("Pod", Pod(name=f"{w}-7d9f8c6b5d-x{i}q2z", namespace=NS, ip=f"10.0.0.{i + 2}"),
              "E1")  # fmt: skip
    return g


def _error(service: str, quote: str, **kw: object) -> Fact:
    return Fact(key=f"log:{service}:{quote[:20]}", statement=f"{service} logged errors "
                f'"{quote}"', kind=FactKind.LOG_ERROR, severity="error", service=service,
                quote=quote, time=T, evidence=["E4"],
                subject=ObjRef(kind="app", name=service, namespace=NS), **kw)  # fmt: skip


def test_a_plural_names_the_service_of_its_singular() -> None:
    known = ["checkout", "cart", "redis"]
    assert detect_services("a third of checkouts end on the error page", known) == ["checkout"]
    assert detect_services("carts are empty after login", known) == ["cart"]
    assert detect_services("checkoutsx fail", known) == []  # a longer word is another word


def test_an_rpc_method_name_names_the_service_it_calls() -> None:
    assert {"payment", "payment-service", "paymentservice"} <= links.rpc_services(
        "[happened in biz handler, method=PaymentService.Charge, please check the panic]"
    )
    assert "product-catalog" in links.rpc_services("/shop.ProductCatalogService/GetProduct")
    # a Java frame names a class and its method, not a call
    assert links.rpc_services("at com.shop.PaymentService.charge(PaymentService.java:42)") == set()
    g = _graph("checkout", "payment")
    echo = _error("checkout", "remote error: method=PaymentService.Charge: nil pointer dereference",
                  focus=True)  # fmt: skip
    dg = depgraph.build(g, [echo])
    assert links.named_components(echo, dg) == {"payment"}


def test_the_callee_an_error_names_is_read_and_its_own_account_leads() -> None:
    g = _graph("checkout", "payment")
    echo = _error("checkout", "remote error: method=PaymentService.Charge: runtime error: invalid "
                  "memory address or nil pointer dereference", focus=True)  # fmt: skip
    ctx = RuleContext(subject=Subject(names=["checkout"]), tools=TOOLS, graph=g, facts=[echo])
    fn = rule("callee_logs").fact_fn
    assert fn is not None
    got = list(fn(echo, ctx))
    assert [(c.tool, c.args) for c in got] == [("log_stats", {"service": "payment"})]
    origin = _error("payment", "KITEX: panic happened, error=runtime error: invalid memory "
                    "address or nil pointer dereference")  # fmt: skip
    dg = depgraph.build(g, [echo, origin])
    a = Candidate(lead=echo, relation=links.SUBJECT, score=6.0)
    b = Candidate(lead=origin, relation=links.LINKED, score=3.0)
    origin_over_echo([a, b], dg)
    assert b.score > a.score and echo in b.chain
    # told once: the server's log naming its caller does not turn the order back
    origin_over_echo([a, b], dg)
    assert b.score > a.score
    unrelated = _error("payment", "card declined by issuer")
    c = Candidate(lead=unrelated, relation=links.LINKED, score=3.0)
    a2 = Candidate(lead=echo, relation=links.SUBJECT, score=6.0)
    origin_over_echo([a2, c], dg)
    assert a2.score > c.score  # shares no words with the echo: not its origin


def test_a_quiet_dependency_widens_nothing_a_quiet_subject_does() -> None:
    quiet = {"total": 40, "top_messages": [{"pattern": "ok", "count": 40, "severity": "info",
                                            "levels": {"info": 40}}]}  # fmt: skip
    fn = rule("quiet_subject_logs").result_fn
    assert fn is not None
    ctx = RuleContext(subject=Subject(names=["cart"]), tools=TOOLS)
    dep = ToolResult(call_id="c1", tool="log_stats", status="success", args={"service": "redis"},
                     data=quiet)  # fmt: skip
    assert list(fn(dep, ctx)) == []
    own = ToolResult(call_id="c2", tool="log_stats", status="success", args={"service": "cart"},
                     data=quiet)  # fmt: skip
    assert [(c.tool, c.args) for c in fn(own, ctx)] == [("log_stats", {})]


def _rollout(diffs: list[str]) -> Fact:
    return Fact(key="rollout:web:7", statement="deployment web rolled out revision 7",
                kind=FactKind.CHANGE, service="web", time=T - timedelta(minutes=5),
                subject=ObjRef(kind="Deployment", name="web", namespace=NS),
                detail={"change": "rollout", "images": ["web:2"], "previous_images": ["web:1"],
                        "template_changes": diffs})  # fmt: skip


def test_a_callers_new_build_does_not_cut_its_path_to_a_dependency() -> None:
    timeout = Fact(key="dep:web:redis", statement="web cannot reach redis (timed out)",
                   kind=FactKind.DEPENDENCY_FAILURE, reason="timeout", service="web", time=T,
                   severity="error", quote="connect ETIMEDOUT redis:6379",
                   subject=ObjRef(kind="app", name="web", namespace=NS))  # fmt: skip
    image = _rollout(["container web: image web:1 -> web:2"])
    assert change_for(timeout, [image]) is None
    setting = _rollout(["container web: image web:1 -> web:2",
                        "container web: env REDIS_HOST redis -> redis-new"])  # fmt: skip
    assert change_for(timeout, [setting]) is setting
    crash = _error("web", "TypeError: cannot read properties of undefined")
    assert change_for(crash, [image]) is image  # a new build can break its own code
