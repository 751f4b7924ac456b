"""Grounded intake (agent/intake_ground.py): a word is a namespace or an object only when
something by that name exists."""

from __future__ import annotations

from opsmate.agent.intake.ground import Inventory, ground
from opsmate.agent.intake.names import detect_namespace, detect_subject
from opsmate.agent.intake.subject import Subject

INV = Inventory.of(
    ["shop-3", "app-108", "boutique", "kube-system", "default"],
    ["client", "api-service", "checkout", "checkout-7d9f8c-x2x1a"],
)


def _ground(q: str, inv: Inventory = INV):  # type: ignore[no-untyped-def]
    ns = detect_namespace(q)
    return ground(q, detect_subject(q, namespace=ns), inv)


def test_a_preposition_is_not_a_namespace() -> None:
    g = _ground("Why does the pod client under namespace shop-3 fail to connect?")
    assert g.subject.namespace == "shop-3"
    assert g.subject.names == ["client"]
    assert "no namespace called 'under' exists" in g.notes[0]


def test_a_service_before_the_word_namespace_is_a_name() -> None:
    g = _ground("api-service namespace app-108 returns 500s")
    assert g.subject.namespace == "app-108"
    assert "api-service" in g.subject.names


def test_a_known_namespace_written_plainly_is_grounded() -> None:
    assert _ground("checkout is slow in boutique").subject.namespace == "boutique"


def test_everyday_words_never_become_a_namespace_unasked() -> None:
    assert _ground("checkout fails by default since 10:00").subject.namespace is None


def test_nothing_resolves_is_said_and_dropped() -> None:
    g = _ground("what is wrong in namespace ghost")
    assert g.subject.namespace is None
    assert g.unresolved == ["ghost"]
    assert "namespaces:" in g.notes[0]


def test_no_inventory_changes_nothing() -> None:
    q = "the pod client under namespace shop-3"
    ns = detect_namespace(q)
    s = detect_subject(q, namespace=ns)
    assert ground(q, s, Inventory()).subject == s


def test_names_that_exist_win_over_words_that_do_not() -> None:
    g = _ground("the checkout deployment and the frobnicator pod fail")
    assert g.subject.names == ["checkout"]


def test_an_application_name_that_is_no_object_leaves_the_namespace_as_subject() -> None:
    g = _ground("train-ticket in ns shop-3: searching trips returns an error")
    assert g.subject.namespace == "shop-3"
    assert g.subject.names == []
    assert g.unresolved == ["train-ticket"]


def test_an_ingress_subject_stands_for_its_services_and_the_app_namespace_is_no_service() -> None:
    inv = Inventory.of(["shop"], ["shop-web", "web-svc", "web"], routes={"shop-web": ["web-svc"]})
    g = ground(
        "ingress shop-web in namespace shop answers 500",
        Subject(names=["shop-web"], kind="Ingress", namespace="shop"),
        inv,
        ["shop-web", "shop"],
    )
    assert g.subject.names == ["web-svc"] and g.subject.kind == "Service"
    assert g.services == []  # the Ingress and the application's namespace name are no services
    assert any("routes to Service web-svc" in n for n in g.notes)


def test_a_short_name_or_a_pod_label_stands_for_the_one_object_it_is_part_of() -> None:
    objects = ["shop-worker-all-v2", "shop-worker-all-v2-68cbd9f7d5",
               "shop-worker-all-v2-68cbd9f7d5-d62xk", "shop-web-default",
               "shop-web-default-7b6f9c5d4c-ct974", "cache-a", "cache-b"]  # fmt: skip
    inv = Inventory.of(["shop"], [*objects, "worker"], objects=objects)  # label app=worker
    assert inv.known_as("worker") == "shop-worker-all-v2"
    assert inv.known_as("cache") is None  # two objects carry it: ambiguous
    assert inv.known_as("web") is None  # too short to stand for anything
    subject = Subject(names=["worker"], namespace="shop")
    g = ground("worker in ns shop looks idle", subject, inv, services=["worker"])
    assert g.subject.names == ["shop-worker-all-v2"]
    assert g.services == ["shop-worker-all-v2"]
    assert any("taken as shop-worker-all-v2" in n for n in g.notes)


def test_a_word_that_names_a_namespace_does_not_move_the_subject_out_of_its_own() -> None:
    inv = Inventory.of(["billing", "analytics"], ["app-a", "billing-api"],
                       objects=["app-a", "billing-api"],
                       placed={"app-a": ["analytics"], "billing-api": ["billing"]})  # fmt: skip
    q = 'every report of app-a on the "Billing" source fails since 09:30'
    g = ground(q, Subject(names=["app-a"]), inv)
    assert g.subject.namespace is None  # not "billing": app-a lives in analytics
    g = ground("billing-api in billing returns 500", Subject(names=["billing-api"]), inv)
    assert g.subject.namespace == "billing"


def test_an_ingress_whose_backend_the_question_says_works_is_not_the_subject() -> None:
    """ "Agents stopped running, although the Huginn web UI works fine": the Ingress named
    like the app routes to the web front end the question calls healthy, so the subject
    stays the application's namespace, where the worker that stopped lives."""
    inv = Inventory.of(["huginn"], ["huginn", "huginn-web", "huginn-worker"],
                       routes={"huginn": ["huginn-web"]})  # fmt: skip
    g = ground(
        "Huginn agents stopped producing events, although the Huginn web UI works fine. "
        "Namespace huginn.",
        Subject(names=["huginn"], namespace="huginn"),
        inv,
        ["huginn"],
    )
    assert "huginn-web" not in g.subject.names and g.subject.namespace == "huginn"


def test_a_kind_word_said_with_a_word_that_names_nothing_gives_no_kind() -> None:
    # "did a bad node break it": "node" went with "break", which names no object;
    # api-service, found otherwise, is not a node
    g = _ground("api-service returns 500s since 08:10. Did a bad node break it? in app-108")
    assert g.subject.names == ["api-service"]
    assert g.subject.kind is None
    # a kind said with a name that exists stays
    assert _ground("deployment api-service returns 500s in app-108").subject.kind == "Deployment"
