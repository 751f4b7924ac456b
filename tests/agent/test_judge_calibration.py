"""Calibration of the judge on hand-built observations: a Service that routes nowhere but
that nothing calls, a message as frequent before the onset as after, start-up trouble of a
pod that is running now, and the failure mode named where the evidence says it vaguely."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from opsmate.agent.evidence import EvidenceStore
from opsmate.agent.intake.subject import Subject
from opsmate.agent.judge.analysis import analyse
from opsmate.agent.kinds import card_for
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.state import TaskState
from opsmate.records.k8s import Container, EnvVar, Pod
from opsmate.records.k8s_objects import Service
from opsmate.records.k8s_workloads import Job

K = FactKind
T0 = datetime(2026, 5, 4, 10, 0, tzinfo=UTC)
SHOP = Subject(names=["shop"], namespace="shop")


def fact(kind: FactKind, statement: str, eid: str, **extra: Any) -> Fact:
    minutes = extra.pop("minutes", 0)
    return Fact(
        key=f"{kind}:{statement}",
        statement=statement,
        evidence=[eid],
        kind=kind,
        severity=extra.pop("severity", "error"),
        time=None if minutes is None else T0 + timedelta(minutes=minutes),
        quote=extra.pop("quote", statement),
        **extra,
    )


def judge(facts: list[Fact], graph: ObjectGraph | None = None, onset: datetime = T0) -> Any:
    state = TaskState(goal="why", subject=SHOP, facts=facts, onset=onset)
    return analyse(state, EvidenceStore(), [], graph or ObjectGraph())


def _disk_full() -> Fact:
    return fact(
        K.SATURATION,
        'shop reports that a resource is exhausted: "could not extend file: No space left on '
        'device"',
        "E2",
        service="shop",
        focus=True,
        reason="resource_exhausted",
        count=40,
        minutes=1,
    )


def _errors() -> Fact:
    return fact(K.ERROR_RATE, "shop: 57 of 151 requests failed", "E1", service="shop", focus=True)


def _client_cert_error(words: str, **extra: Any) -> Fact:
    """The shop's log: a certificate problem with ``words`` as its line."""
    return fact(
        K.CONFIG_ERROR,
        f'shop reports a configuration error, a certificate problem: "{words}"',
        "E3",
        service="shop",
        focus=True,
        reason="certificate",
        count=40,
        minutes=1,
        **extra,
    )


def _expired_certificate(said: str = "") -> Fact:
    """cert-manager's account: Certificate ``api-tls`` for ``api.shop.svc`` expired."""
    return fact(
        K.CONFIG_ERROR,
        "Certificate `api-tls` (Secret `api-tls`, for api.shop.svc) expired at 06:00:00 "
        f"(status.notAfter){said}",
        "E7",
        reason="certificate",
        message="Certificate expired on Sat, 14 Mar 2026 06:00:00 UTC",
        conclusive=True,
        minutes=0,
        subject=ObjRef(kind="Certificate", name="api-tls", namespace="shop"),
        objects=[ObjRef(kind="host", name="api.shop.svc")],
    )


def test_a_service_that_routes_nowhere_but_that_nothing_calls_is_not_the_cause() -> None:
    unused = fact(
        K.SELECTOR_MISMATCH,
        "Service `shop-db-ro` selects `role=replica`, but no pod has those labels",
        "E3",
        subject=ObjRef(kind="Service", name="shop-db-ro", namespace="shop"),
        reason="SelectorMatchesNoPod",
        minutes=None,
    )
    line = fact(  # a caller's error that names nothing it could not reach
        K.DEPENDENCY_FAILURE,
        'shop reports a failing dependency (connection refused): "failed to save post"',
        "E4",
        service="shop",
        focus=True,
        reason="refused",
        count=12,
        minutes=1,
    )
    an = judge([_errors(), line, unused])
    latent = next(c for c in an.candidates if c.lead is unused)
    assert latent.latent and not latent.supported  # not promoted by what it could explain
    assert an.root is None or an.root.lead is not unused
    an = judge([_errors(), _disk_full(), line, unused])
    assert an.root is not None and an.root.lead.kind == K.SATURATION


def test_a_message_as_frequent_before_the_onset_explains_no_change() -> None:
    old = fact(
        K.DEPENDENCY_FAILURE,
        'shop reports a failing dependency (timed out): "push server status: deadline exceeded"',
        "E4",
        service="shop",
        focus=True,
        reason="timeout",
        background=True,
        count=30,
        minutes=-30,
    )
    an = judge([_errors(), _disk_full(), old])
    assert an.root is not None and an.root.lead.kind == K.SATURATION


def test_the_failure_mode_names_what_the_evidence_says_vaguely() -> None:
    an = judge([_errors(), _disk_full()])
    assert an.root_statement is not None
    assert "reports a full disk: " in an.root_statement
    assert "No space left on device" in an.root_statement
    expired = _client_cert_error(
        "The SSL connection could not be established … The remote certificate is invalid: "
        "NotTimeValid"
    )
    an = judge([_errors(), expired])
    assert an.root_statement is not None
    assert "a configuration error, an expired TLS certificate: " in an.root_statement


def test_start_up_trouble_of_a_pod_running_now_is_no_cause() -> None:
    graph = ObjectGraph()
    ready = Pod(
        name="shop-7d9f8c7b6-x2x9z",
        namespace="shop",
        phase="Running",
        containers=[Container(name="app", ready=True, state="running")],
    )
    graph.add_listing("Pod", [ready], "E9", namespace="shop")
    attach = fact(
        K.MISCONFIGURATION,
        "1 FailedAttachVolume event on Pod shop-7d9f8c7b6-x2x9z: "
        'Multi-Attach error for volume "pvc-1"',
        "E5",
        subject=ObjRef(kind="Pod", name="shop-7d9f8c7b6-x2x9z", namespace="shop"),
        reason="FailedAttachVolume",
    )
    an = judge([attach], graph)
    cand = next(c for c in an.candidates if c.lead is attach)
    assert not cand.supported and an.root is None
    stuck = graph.get("Pod", "shop", "shop-7d9f8c7b6-x2x9z")
    assert isinstance(stuck, Pod)
    stuck.containers[0].ready = False  # still waiting for its volume: the cause stands
    stuck.phase = "Pending"
    an = judge([attach], graph)
    assert an.root is not None and an.root.lead is attach


def test_an_injected_fault_is_the_cause_of_what_its_target_did_after_it() -> None:
    """A Chaos Mesh experiment applied to the subject's pods, and the errors that followed:
    the experiment is the cause; the errors it produced are its chain, not the answer."""
    chaos = fact(
        K.CHANGE,
        "fault-injection experiment Chaos Mesh IOChaos `data-enospc` started on shop at 10:00",
        "E5",
        service="shop",
        focus=True,
        reason="FaultInjection",
        subject=ObjRef(kind="Pod", name="shop-7d9f8c7b6-x2x9z", namespace="shop"),
        severity="warning",
    )
    an = judge([_errors(), _disk_full(), chaos])
    assert an.root is not None and an.root.lead is chaos and an.root.conclusive
    assert "fault-injection experiment" in (an.root_statement or "")
    before = chaos.model_copy(update={"time": T0 + timedelta(minutes=5)})  # began after
    an = judge([_errors(), _disk_full(), before])
    assert an.root is not None and an.root.lead.kind == K.SATURATION


def test_a_kill_before_the_window_asked_about_is_no_cause_and_sets_no_onset() -> None:
    oom = fact(K.OOM_KILLED, "pod shop-1: container shop was OOMKilled at 256Mi", "E3",
               service="shop", focus=True, conclusive=True, minutes=-15 * 60,
               subject=ObjRef(kind="Pod", name="shop-1", namespace="shop"))  # fmt: skip
    state = TaskState(goal="why", subject=SHOP, facts=[oom, _errors()])
    state.constraints.window_from = T0 - timedelta(hours=1)
    an = analyse(state, EvidenceStore(), [], ObjectGraph())
    assert an.onset == T0  # the errors in the window, not the kill of last evening
    [c] = [c for c in an.candidates if c.lead.kind == K.OOM_KILLED]
    assert not c.supported
    assert an.root is None or an.root.lead.kind != K.OOM_KILLED
    state.constraints.window_from = T0 - timedelta(days=1)  # the kill inside the window
    an = analyse(state, EvidenceStore(), [], ObjectGraph())
    [c] = [c for c in an.candidates if c.lead.kind == K.OOM_KILLED]
    assert c.supported


def test_a_probe_that_failed_a_few_times_over_an_hour_is_a_flap() -> None:
    def probe(count: int, span_min: int) -> Fact:
        return fact(K.PROBE_FAILURE, f"{count} Unhealthy events on Pod shop-1", "E4",
                    service="shop", focus=True, conclusive=True, count=count, minutes=-20,
                    last_time=T0 + timedelta(minutes=span_min - 20), reason="Unhealthy",
                    subject=ObjRef(kind="Pod", name="shop-1", namespace="shop"))  # fmt: skip

    for count, span, flap in ((7, 53, True), (7, 2, False), (30, 53, False), (2, 1, True)):
        an = judge([probe(count, span), _errors()])
        [c] = [c for c in an.candidates if c.lead.kind == K.PROBE_FAILURE]
        assert c.conclusive is not flap, (count, span)


def test_trouble_the_question_says_resolved_and_the_evidence_agrees_is_over() -> None:
    def run(question: str, end_min: int) -> Any:
        errors = _errors().model_copy(update={"last_time": T0 + timedelta(minutes=5)})
        state = TaskState(goal=question, questions=[question], subject=SHOP,
                          facts=[_disk_full(), errors], onset=T0)  # fmt: skip
        state.constraints.window_to = T0 + timedelta(minutes=end_min)
        return analyse(state, EvidenceStore(), [], ObjectGraph())

    over = run("paged at 10:00 for shop errors, it auto-resolved at 10:05. anything to fix?", 60)
    assert over.root is None and over.missing.startswith("the trouble is over")
    assert "10:05" in over.missing and over.hypotheses  # what it most likely was stays a lead
    assert run("paged at 10:00 for shop errors, it auto-resolved. anything to fix?", 12).root
    assert run("shop returns errors since 10:00, why?", 60).root is not None  # not said over


def test_a_bare_error_line_beside_a_service_that_routes_nowhere_is_not_stated_as_the_cause() -> (
    None
):
    unused = fact(K.SELECTOR_MISMATCH, "Service `shop-db` selects `role=db`, but no pod has it",
                  "E3", subject=ObjRef(kind="Service", name="shop-db", namespace="shop"),
                  reason="SelectorMatchesNoPod", minutes=None)  # fmt: skip
    line = fact(K.LOG_ERROR, 'shop logged 40 errors "Unable to query products"', "E4",
                service="shop", focus=True, count=40, minutes=1,
                subject=ObjRef(kind="app", name="shop", namespace="shop"))  # fmt: skip
    an = judge([_errors(), line, unused])
    assert an.root is None  # neither the line nor the latent fault is stated
    assert any(c.lead is line for c in an.candidates)
    an = judge([_errors(), line])
    assert an.root is not None and an.root.lead is line  # nothing else could be behind it


def test_another_workloads_rollout_does_not_trigger_a_scheduling_refusal() -> None:
    from opsmate.agent.judge.candidates import change_for

    deploy = ObjRef(kind="Deployment", name="collector", namespace="shop")
    rollout = fact(K.CHANGE, "deployment collector rolled out revision 17", "E5",
                   service="collector", minutes=-3, detail={"change": "rollout"},
                   subject=deploy)  # fmt: skip
    pending = fact(K.SCHEDULING, "pod db-r2-0 cannot be scheduled", "E6", minutes=0,
                   subject=ObjRef(kind="Pod", name="db-r2-0", namespace="shop"))  # fmt: skip
    assert change_for(pending, [rollout]) is None
    full = fact(K.SATURATION, "db connected clients rose to the limit", "E7", minutes=0,
                subject=ObjRef(kind="Pod", name="db-r2-0", namespace="shop"))  # fmt: skip
    assert change_for(full, [rollout]) is rollout  # a caller's new load can fill it up
    mine = fact(K.SCHEDULING, "pod collector-1 cannot be scheduled", "E8", minutes=0,
                subject=ObjRef(kind="Pod", name="collector-1", namespace="shop"))  # fmt: skip
    assert change_for(mine, [rollout]) is rollout  # its own rollout
    disk = fact(K.SATURATION, 'db reports a full disk: "No space left on device"', "E9",
                minutes=0, reason="resource_exhausted", message="No space left on device",
                subject=ObjRef(kind="Pod", name="db-r2-0", namespace="shop"))  # fmt: skip
    assert change_for(disk, [rollout]) is None  # its own disk: no caller's rollout fills it


def test_questions_that_doubt_the_trouble_still_holds_are_asked_about_recovery() -> None:
    from opsmate.agent.judge.analysis import _RECOVERY

    for q in ("paged at 02:12, is the catalog API broken, do I need to wake the team?",
              "dashboards look green now but I don't trust it. what happened?",
              "it auto-resolved at 10:21. do we need to open an incident?",
              "the alert fired at 14:02. Are payments still failing, and what broke?"):  # fmt: skip
        assert _RECOVERY.search(q), q
    for q in ("why is checkout returning 500s since 10:00?", "orders-api is slow, why?",
              "saves hang since 11:15. We upgraded to 14.0 - is the new version broken?",
              "orders stay pending since 13:50. Is the Kafka cluster down again?"):  # fmt: skip
        assert not _RECOVERY.search(q), q  # a guess at a change or a recurrence
    assert _RECOVERY.search("a few errors at 11:05. Is the shop broken right now?")


def test_a_preemption_leads_the_scheduling_failure_of_its_replacement() -> None:
    pod = ObjRef(kind="Pod", name="cache-6f4b8d9c7-tq8wz", namespace="shop")
    preempted = fact(K.SCHEDULING, "1 Preempted event on Pod cache-6f4b8d9c7-tq8wz", "E2",
                     reason="Preempted", conclusive=True, subject=pod, service="cache",
                     minutes=0)  # fmt: skip
    replacement = ObjRef(kind="Pod", name="cache-6f4b8d9c7-2mxkd", namespace="shop")
    pending = fact(K.SCHEDULING, "23 FailedScheduling events on Pod cache-6f4b8d9c7-2mxkd: "
                   "Insufficient memory", "E3", reason="FailedScheduling", conclusive=True,
                   count=23, service="cache", minutes=1, subject=replacement)  # fmt: skip
    an = judge([_errors(), preempted, pending])
    top = max(an.candidates, key=lambda c: c.score)
    assert top.lead is preempted and pending in top.followers
    # the replacement checked against each node (a standing account, no time, no service)
    checked = fact(K.SCHEDULING, "Pod `cache-6f4b8d9c7-9zz2k` cannot be scheduled: it requests "
                   "memory 4Gi, more than 3 of 3 node(s) have free", "E4", conclusive=True,
                   reason="insufficient memory", minutes=None,
                   subject=ObjRef(kind="Pod", name="cache-6f4b8d9c7-9zz2k", namespace="shop"),
                   detail={"nodes": {"a": "x"}})  # fmt: skip
    bare = preempted.model_copy(update={"service": None})
    an = judge([_errors(), bare, checked])
    top = max(an.candidates, key=lambda c: c.score)
    assert top.lead is bare and checked in top.followers


def test_readiness_failures_in_the_first_minutes_of_pods_now_ready_are_their_start_up() -> None:
    from opsmate.agent.judge.transients import recovered

    def pod(name: str, started: int) -> Pod:
        t = T0 + timedelta(minutes=started)
        return Pod(name=name, namespace="shop", phase="Running", start_time=t,
                   containers=[Container(name="web", ready=True, started_at=t)])  # fmt: skip

    g = ObjectGraph()
    g.add_listing("Pod", [pod("web-1", 0), pod("web-2", 1)], "E1", namespace="shop")

    def probe(first: int, last: int) -> Fact:
        return fact(K.PROBE_FAILURE, "4 Unhealthy events on Pod web-1, web-2: Readiness probe "
                    "failed: connection refused", "E2", count=4, minutes=first,
                    last_time=T0 + timedelta(minutes=last), reason="Unhealthy",
                    subject=ObjRef(kind="Pod", name="web-1", namespace="shop"),
                    objects=[ObjRef(kind="Pod", name="web-2", namespace="shop")])  # fmt: skip

    assert recovered(probe(0, 2), g)  # while they started
    assert not recovered(probe(0, 30), g)  # long after they started: not start-up
    assert not recovered(probe(-20, 2), g)  # before they started


def test_a_name_nothing_failed_to_resolve_ranks_below_a_failure_seen() -> None:
    unknown = fact(K.MISCONFIGURATION, "web is configured with DB=db-x, but no Service `db-x` "
                   "exists", "E3", reason="UnknownServiceHost", minutes=None, service="shop",
                   focus=True)  # fmt: skip
    an = judge([_errors(), unknown, _disk_full()])
    order = [c.lead for c in sorted(an.candidates, key=lambda c: -c.score)]
    assert order.index(_disk_full()) < order.index(unknown)


def test_an_injected_fault_goes_before_the_caller_side_errors_it_produces() -> None:
    from opsmate.agent.judge import chains
    from opsmate.agent.judge.candidates import Candidate

    errors = _errors()
    injected = fact(K.CHANGE, "fault-injection experiment started on authors", "E3",
                    reason="FaultInjection", conclusive=True, minutes=0)  # fmt: skip
    caller = fact(K.LOG_ERROR, 'web logged 300 errors "upstream answered 500"', "E4",
                  service="web", count=300, minutes=1)  # fmt: skip
    a = Candidate(lead=injected, relation="subject", score=6.0, explains=errors, conclusive=True)
    b = Candidate(lead=caller, relation="subject", score=7.9, explains=errors)
    chains.injected_over_callers([a, b])
    assert a.score > b.score
    c = Candidate(lead=injected, relation="subject", score=6.0, explains=None, conclusive=True)
    d = Candidate(lead=caller, relation="subject", score=7.9, explains=errors)
    chains.injected_over_callers([c, d])
    assert c.score < d.score  # it explains nothing seen: no promotion


def test_the_server_reporting_a_failure_leads_its_clients_echo_of_it() -> None:
    """A client's message wraps the error its server returned; the server logs it too: the
    server's own report is the root, the client's echo how it reached the subject."""
    graph = ObjectGraph()
    graph.add(
        "Pod",
        Pod(
            name="shop-6d5f7c8b9-abcde",
            namespace="shop",
            owner="ReplicaSet/shop-6d5f7c8b9",
            labels={"app": "shop"},
            containers=[Container(name="shop", env=[EnvVar(name="DB_HOST", value="colstore")])],
        ),
        "E9",
    )
    graph.add(
        "Pod",
        Pod(
            name="colstore-0",
            namespace="shop",
            owner="StatefulSet/colstore",
            labels={"app": "colstore"},
            containers=[Container(name="colstore")],
        ),
        "E9",
    )
    client = fact(
        K.SATURATION,
        "shop reports that out of memory",
        "E2",
        service="shop",
        focus=True,
        reason="out_of_memory",
        count=30,
        minutes=1,
        message="error while reading result (code: 241, message: Memory limit (total) "
        "exceeded: would use 3.6 GiB)",
    )
    server = fact(
        K.SATURATION,
        "colstore reports that out of memory",
        "E3",
        service="colstore",
        reason="out_of_memory",
        count=8,
        minutes=2,
        message="<Error> executeQuery: Code: 241. DB::Exception: Memory limit (total) "
        "exceeded: would use 3.6 GiB",
    )
    an = judge([_errors(), client, server], graph)
    assert an.root is not None and an.root.lead is server
    assert client in an.root.chain


def test_a_products_own_error_quoted_by_its_client_names_the_workload_that_runs_it() -> None:
    """A cache's refusal ("OOM command not allowed when used memory > 'maxmemory'") logged by
    its client: the statement names the workload whose image runs the product."""
    graph = ObjectGraph()
    graph.add(
        "Pod",
        Pod(
            name="kv-master-0",
            namespace="shop",
            owner="StatefulSet/kv-master",
            labels={"app": "kv"},
            containers=[Container(name="kv", image="docker.io/bitnami/valkey:8.0.2")],
        ),
        "E9",
    )
    refused = fact(
        K.LOG_ERROR,
        "shop logged 16 errors \"OOM command not allowed when used memory > 'maxmemory'.\"",
        "E2",
        service="shop",
        focus=True,
        count=16,
        minutes=1,
    )
    an = judge([_errors(), refused], graph)
    assert an.root is not None and an.root.lead is refused
    assert an.root.served_by == ("kv-master", "docker.io/bitnami/valkey:8.0.2")
    assert "a cache at its maxmemory limit (kv-master, image docker.io/bitnami/valkey:8.0.2): " in (
        an.root_statement
    )


def _experiment_on(target: str, minutes: int = -1) -> Fact:
    return fact(
        K.CHANGE,
        f"fault-injection experiment Chaos Mesh TimeChaos `skew` started on {target}",
        "E5",
        service=target,
        reason="FaultInjection",
        subject=ObjRef(kind="Pod", name=f"{target}-7d9f8c7b6-x2x9z", namespace="shop"),
        severity="warning",
        minutes=minutes,
    )


def _pod(workload: str, env: dict[str, str] | None = None) -> Pod:
    return Pod(
        name=f"{workload}-7d9f8c7b6-x2x9z",
        namespace="shop",
        owner=f"ReplicaSet/{workload}-7d9f8c7b6",
        labels={"app": workload},
        containers=[
            Container(name=workload, env=[EnvVar(name=k, value=v) for k, v in (env or {}).items()])
        ],
    )


def test_an_injected_fault_on_what_the_subject_depends_on_explains_its_own_errors() -> None:
    """The subject logs errors of its own (tokens it rejects), which stops the walk into its
    dependencies; an experiment on a dependency the data shows (its env names it) that began
    just before them is still linked, and is the cause."""
    graph = ObjectGraph()
    graph.add("Pod", _pod("shop", {"AUTH_URL": "http://auth:8080"}), "E9")
    graph.add("Pod", _pod("auth"), "E9")
    own = fact(K.LOG_ERROR, 'shop logged 40 errors "token is not yet valid"', "E2",
               service="shop", focus=True, count=40, minutes=0)  # fmt: skip
    an = judge([own, _experiment_on("auth")], graph)
    [c] = [c for c in an.candidates if c.lead.reason == "FaultInjection"]
    assert c.relation == "linked" and c.explains is own
    assert an.root is not None and an.root.lead is c.lead
    unlinked = ObjectGraph()  # no path the data shows, and the target itself did not fail
    unlinked.add("Pod", _pod("shop"), "E9")
    unlinked.add("Pod", _pod("auth"), "E9")
    an = judge([own, _experiment_on("auth")], unlinked)
    assert not [c for c in an.candidates if c.lead.reason == "FaultInjection"]
    an = judge([own, _experiment_on("auth", minutes=-45)], graph)  # long before the errors
    assert not [c for c in an.candidates if c.lead.reason == "FaultInjection"]


def test_a_schema_older_than_the_code_is_explained_by_the_release_job_that_did_not_run() -> None:
    """The new code finds a column missing; the release's upgrade Job (the same image) was
    refused by a quota: the refusal is the root, the schema error how it reached the
    subject, and the statement names that failure mode."""
    graph = ObjectGraph()
    graph.add(
        "Pod",
        Pod(
            name="shop-7d9f8c7b6-x2x9z",
            namespace="shop",
            owner="ReplicaSet/shop-7d9f8c7b6",
            labels={"app": "shop"},
            containers=[Container(name="shop", image="acme/shop:v2.0")],
        ),
        "E9",
    )
    graph.add("Job", Job(name="migrate-v2", namespace="shop",
                         template=Pod(containers=[Container(name="m", image="acme/shop:v2.0")])),
              "E8")  # fmt: skip
    schema = fact(
        K.LOG_ERROR,
        'shop logged 50 errors "QueryFailedError: column orders.note does not exist"',
        "E2",
        service="shop",
        focus=True,
        count=50,
        minutes=1,
        detail={"pattern": "QueryFailedError: column orders.note does not exist"},
    )
    refused = fact(K.QUOTA_REFUSAL, '9 FailedCreate events on Job migrate-v2: exceeded '
                   'quota: compute', "E3", subject=ObjRef(kind="Job", name="migrate-v2",
                   namespace="shop"), reason="FailedCreate", count=9, minutes=0)  # fmt: skip
    an = judge([_errors(), schema, refused], graph)
    assert an.root is not None and an.root.lead is refused
    assert schema in an.root.chain
    assert "then a database schema older than the running code (a migration that did not " in (
        an.root_statement
    )
    other = ObjectGraph()  # a Job of another image: no link
    other.add("Pod", graph.pods()[0], "E9")
    other.add("Job", Job(name="migrate-v2", namespace="shop",
                         template=Pod(containers=[Container(name="m", image="acme/etl:1")])),
              "E8")  # fmt: skip
    an = judge([_errors(), schema, refused], other)
    assert an.root is None or an.root.lead is not refused or schema not in an.root.chain


def test_a_pod_the_scheduler_refused_once_and_then_placed_waited_briefly() -> None:
    from opsmate.records.k8s import Event, ObjectRef

    wait = fact(K.SCHEDULING, "1 FailedScheduling event on Pod etl-1: 0/3 nodes are available: "
                "3 Insufficient cpu", "E2", reason="FailedScheduling", focus=True,
                subject=ObjRef(kind="Pod", name="etl-1", namespace="shop"))  # fmt: skip
    graph = ObjectGraph()
    placed = Event(reason="Scheduled", message="Successfully assigned shop/etl-1 to n1",
                   object=ObjectRef(kind="Pod", name="etl-1", namespace="shop"),
                   first_timestamp=T0 + timedelta(seconds=8))  # fmt: skip
    an = judge([wait], graph)
    assert an.root is not None and an.root.lead is wait  # nothing says it was placed
    graph.add_events([placed], "E3")
    an = judge([wait], graph)
    [c] = [c for c in an.candidates if c.lead is wait]
    assert not c.supported and (an.root is None or an.root.lead is not wait)


def test_a_new_image_and_trouble_after_it_is_a_lead_not_a_finding() -> None:
    """Only the timing ties a release to the errors when nothing read shows the new version
    failing: the release stays the first lead, the report has no root cause."""
    release = fact(K.CHANGE, "deployment shop rolled out revision 5 of shop", "E4",
                   service="shop", focus=True, severity="warning", minutes=-2,
                   subject=ObjRef(kind="Deployment", name="shop", namespace="shop"),
                   detail={"change": "rollout", "template_changes": [
                       "container shop: image acme/shop:2.3.2 -> acme/shop:2.3.3"]})  # fmt: skip
    an = judge([_errors(), release])
    assert an.root is None
    assert an.hypotheses and "rolled out revision 5" in an.hypotheses[0].statement
    config = release.model_copy(update={"detail": {"change": "rollout", "template_changes": [
        "container shop: env TIMEOUT_MS 5000 -> 50"]}})  # fmt: skip
    an = judge([_errors(), config])
    assert an.root is not None and an.root.lead is config  # what changed is named: a finding
    crash = fact(K.LOG_ERROR, 'shop logged 30 errors "TypeError: x is undefined"', "E5",
                 service="shop", focus=True, count=30, minutes=0)  # fmt: skip
    an = judge([_errors(), release, crash])
    assert an.root is not None  # the new version fails in its own log


def test_last_words_of_ordinary_work_say_what_it_did_not_why_it_stopped() -> None:
    pod = ObjRef(kind="Pod", name="shop-1", namespace="shop")
    crash = fact(K.CRASH_LOOP, "pod shop-1 is in CrashLoopBackOff", "E1", service="shop",
                 focus=True, subject=pod)  # fmt: skip
    lines = ['[GIN] 2026/01/14 - 11:09:22 | 200 | 274.586ms | 10.42.4.137 | POST "/api/ps"']
    words = fact(K.LAST_WORDS, 'pod shop-1 (container shop) wrote before it exited (exit code '
                 '2): "[GIN] ... 200 ..."', "E2", service="shop", focus=True, reason="Error",
                 subject=ObjRef(kind="Pod", name="shop-1", namespace="shop"), exit_code=2,
                 detail={"lines": lines})  # fmt: skip
    an = judge([crash, words])
    [c] = [c for c in an.candidates if c.lead is words]
    assert not c.supported and an.root is None
    killed = words.model_copy(update={"exit_code": 137})  # the exit itself says: killed
    an = judge([crash, killed])
    [c] = [c for c in an.candidates if c.lead is killed]
    assert c.supported
    failing = words.model_copy(update={"detail": {"lines": ["panic: nil map assignment"]}})
    an = judge([crash, failing])
    assert an.root is not None and an.root.lead is failing


def test_a_crashing_dependencys_last_words_go_back_to_when_it_first_went_down() -> None:
    """The database's last words are read from its tail (after the callers began failing),
    but its probes failed before them: its words explain the callers' refused connections."""
    graph = ObjectGraph()
    graph.add("Pod", Pod(name="shop-6d5f7c8b9-abcde", namespace="shop",
                         owner="ReplicaSet/shop-6d5f7c8b9", labels={"app": "shop"},
                         containers=[Container(name="shop", env=[EnvVar(name="DB_HOST",
                                                                       value="store")])]),
              "E9")  # fmt: skip
    graph.add("Pod", Pod(name="store-0", namespace="shop", owner="StatefulSet/store",
                         labels={"app": "store"}, containers=[Container(name="pg")]),
              "E9")  # fmt: skip
    store = ObjRef(kind="Pod", name="store-0", namespace="shop")
    probes = fact(K.PROBE_FAILURE, "12 Unhealthy events on Pod store-0", "E4", subject=store,
                  service="store", reason="Unhealthy", count=12, minutes=-1)  # fmt: skip
    refused = fact(K.DEPENDENCY_FAILURE, "shop cannot reach store (connection refused)", "E2",
                   service="shop", focus=True, reason="refused", count=60, minutes=0,
                   objects=[ObjRef(kind="Service", name="store")])  # fmt: skip
    words = fact(K.LAST_WORDS, 'pod store-0 wrote before it exited: "FATAL: could not write '
                 'lock file: No space left on device"', "E3", subject=store, service="store",
                 reason="resource_exhausted", minutes=14)  # fmt: skip
    an = judge([_errors(), probes, refused, words], graph)
    assert an.root is not None and an.root.lead is words
    assert "No space left on device" in (an.root_statement or "")


def test_an_unclassified_warning_gives_way_to_the_system_account_of_the_same_symptom() -> None:
    from opsmate.agent.judge.analysis import _conclusive_over_bare
    from opsmate.agent.judge.candidates import Candidate

    short = fact(K.NOT_READY, "StatefulSet `data` has 2/3 replicas ready", "E1")
    warn = Candidate(lead=fact(K.LOG_WARNING, 'es logged 12 warnings "shards not on their '
                               'desired nodes"', "E2", severity="warning"),
                     relation="linked", score=12.0, explains=short, supported=True)  # fmt: skip
    sched = Candidate(lead=fact(K.SCHEDULING, "pod data-2 cannot be scheduled: node cordoned",
                                "E3", reason="cordoned"),
                      relation="scope", score=7.0, explains=short, supported=True,
                      conclusive=True)  # fmt: skip
    assert _conclusive_over_bare(warn, [warn, sched]) is sched
    other = Candidate(
        lead=sched.lead,
        relation="scope",
        score=7.0,
        supported=True,
        conclusive=True,
        explains=fact(K.CRASH_LOOP, "pod x crash-looping", "E4"),
    )
    assert _conclusive_over_bare(warn, [warn, other]) is warn  # another symptom: not a rival


def test_a_placeholder_pod_below_zero_priority_yields_by_design() -> None:
    from opsmate.agent.judge import transients

    graph = ObjectGraph()
    graph.add("Pod", Pod(name="placeholder-1", namespace="shop", priority=-10), "E9")
    graph.add("Pod", Pod(name="api-0", namespace="shop", priority=0), "E9")
    evicted = fact(K.SCHEDULING, "1 Preempted event on Pod placeholder-1", "E3",
                   reason="Preempted", subject=ObjRef(kind="Pod", name="placeholder-1",
                                                      namespace="shop"))  # fmt: skip
    assert transients.yields_by_design(evicted, graph)
    real = fact(K.SCHEDULING, "1 Preempted event on Pod api-0", "E4", reason="Preempted",
                subject=ObjRef(kind="Pod", name="api-0", namespace="shop"))  # fmt: skip
    assert not transients.yields_by_design(real, graph)


def test_what_builds_up_until_a_disk_is_full_is_the_cause_though_it_began_long_before() -> None:
    """An archiver failing for days keeps the write-ahead log until the volume is full: the
    disk-full card names that failure mode as what fills it, so the archiver's warnings —
    going on before the onset, as such causes do — are the root, the full disk the link."""
    db = ObjRef(kind="Pod", name="store-0", namespace="shop")
    full = fact(
        K.SATURATION,
        'store reports a full disk: "could not write to file '
        '"pg_wal/xlogtemp.1": No space left on device"',
        "E3",
        subject=db,
        service="store",
        reason="resource_exhausted",
        focus=True,
        count=70,
        minutes=1,
        message='could not write to file "pg_wal/xlogtemp.1": No space left on device',
    )
    archiver = fact(K.LOG_WARNING, 'store logged 14 warnings "archiving write-ahead log file '
                    '"0000000100000019" failed too many times, will try again later"', "E4",
                    subject=db, service="store", severity="warning", count=14, minutes=-40,
                    background=True, message='archiving write-ahead log file "0000000100000019" '
                    "failed too many times, will try again later",
                    detail={"verbatim": True})  # a template counted as logged  # fmt: skip
    an = judge([_errors(), full, archiver])
    assert an.root is not None and an.root.lead is archiver
    assert (an.root_statement or "").count("WAL") >= 1 and full in an.root.support


def test_a_node_that_went_down_explains_calls_to_what_runs_on_it() -> None:
    graph = ObjectGraph()
    graph.add("Pod", Pod(name="gw-6d5f7c8b9-abcde", namespace="logs",
                         owner="ReplicaSet/gw-6d5f7c8b9", labels={"app": "gw"}, node="w1",
                         containers=[Container(name="gw", env=[EnvVar(name="UPSTREAM",
                                                                       value="store:3100")])]),
              "E9")  # fmt: skip
    graph.add("Pod", Pod(name="store-0", namespace="logs", owner="StatefulSet/store",
                         labels={"app": "store"}, node="w3", containers=[Container(name="s")]),
              "E9")  # fmt: skip
    refused = fact(K.DEPENDENCY_FAILURE, "gw cannot reach store:3100 (refused)", "E2",
                   service="gw", focus=True, reason="refused", count=80, minutes=1,
                   objects=[ObjRef(kind="host", name="store")])  # fmt: skip
    down = fact(
        K.NODE_PROBLEM,
        "node w3 reports Ready=Unknown since 09:59",
        "E3",
        subject=ObjRef(kind="Node", name="w3"),
        reason="NodeStatusUnknown",
        minutes=-1,
        conclusive=True,
    )
    errors = fact(K.ERROR_RATE, "gw: 57 of 151 requests failed", "E1", service="gw", focus=True)
    state = TaskState(goal="why", subject=Subject(names=["gw"], namespace="logs"),
                      facts=[errors, refused, down], onset=T0)  # fmt: skip
    an = analyse(state, EvidenceStore(), [], graph)
    assert an.root is not None and an.root.lead is down


def test_an_orderly_shutdown_after_sigterm_says_who_stopped_it_not_why() -> None:
    from opsmate.agent.judge.analysis import _says_why

    shutdown = fact(K.LAST_WORDS, "pod api-0 wrote before it exited (exit code 143)", "E2",
                    exit_code=143, detail={"lines": [
                        "GC(286) Pause Young (Allocation Failure) 2336M->1107M 2235ms",
                        "INFO [Events] Shutting down asynchronous event subsystem",
                        "INFO [Persistence] Shutting down persistence framework"]})  # fmt: skip
    assert not _says_why(shutdown)
    failing = fact(
        K.LAST_WORDS,
        "pod api-0 wrote before it exited (exit code 143)",
        "E3",
        exit_code=143,
        detail={"lines": ["ERROR cannot open the journal"]},
    )
    assert _says_why(failing)
    killed = fact(
        K.LAST_WORDS,
        "pod api-0 wrote before it exited (exit code 137)",
        "E4",
        exit_code=137,
        detail={"lines": ["INFO request served"]},
    )
    assert _says_why(killed)  # SIGKILL: the exit itself says it


def test_a_stuck_state_about_the_subject_leads_a_lone_unclassified_error() -> None:
    from opsmate.agent.judge.analysis import _conclusive_over_bare
    from opsmate.agent.judge.candidates import Candidate

    bare = Candidate(lead=fact(K.LOG_ERROR, 'db logged 1 error "terminating connection due to '
                               'administrator command"', "E2"),
                     relation="subject", score=6.7, supported=True)  # fmt: skip
    stuck = Candidate(lead=fact(K.MISCONFIGURATION, "CronJob `refresh` is suspended", "E3",
                                reason="Suspended"),
                      relation="subject", score=6.0, supported=True, conclusive=True)  # fmt: skip
    assert _conclusive_over_bare(bare, [bare, stuck]) is stuck
    elsewhere = Candidate(lead=stuck.lead, relation="scope", score=6.0, supported=True,
                          conclusive=True)  # fmt: skip
    assert _conclusive_over_bare(bare, [bare, elsewhere]) is bare  # not about the subject


def test_a_question_about_periodic_work_lists_the_cronjobs() -> None:
    from opsmate.agent.plan.survey import _JOB_WORDS

    assert _JOB_WORDS.search("normally they refresh every 15 minutes")
    assert _JOB_WORDS.search("the periodic sync stopped")
    assert not _JOB_WORDS.search("every request fails")


def test_calls_timing_out_to_no_named_target_are_lost_on_the_node_that_drops_packets() -> None:
    graph = ObjectGraph()
    for name, node in (("front", "w1"), ("driver", "w2")):
        graph.add("Pod", Pod(name=f"{name}-6d5f7c8b9-abcde", namespace="geo", node=node,
                             owner=f"ReplicaSet/{name}-6d5f7c8b9", labels={"app": name},
                             containers=[Container(name=name)]), "E9")  # fmt: skip
    timeout = fact(K.DEPENDENCY_FAILURE, 'front reports a failing dependency (timed out): '
                   '"rpc error: code = DeadlineExceeded"', "E2", service="front", focus=True,
                   reason="timeout", count=40, minutes=1)  # fmt: skip
    loss = fact(K.NODE_PROBLEM, "node_netstat_Tcp_RetransSegs on node w2 rose from 0.5 to 30/s: "
                "packets are lost on node w2's network (it runs driver)", "E3",
                subject=ObjRef(kind="Node", name="w2"), reason="NodeNetworkLoss",
                conclusive=True)  # fmt: skip
    errors = fact(K.ERROR_RATE, "front: 40 of 200 requests failed", "E1", service="front",
                  focus=True)  # fmt: skip
    state = TaskState(goal="why", subject=Subject(names=["front"]),
                      facts=[errors, timeout, loss], onset=T0)  # fmt: skip
    an = analyse(state, EvidenceStore(), [], graph)
    assert an.root is not None and an.root.lead is loss
    assert "driver" in (an.root_statement or "")
    refused = timeout.model_copy(update={"reason": "refused", "statement": "front reports a "
                                         "failing dependency (refused)"})  # fmt: skip
    state.facts = [errors, refused, loss]  # refused is answered, not lost on the way
    an = analyse(state, EvidenceStore(), [], graph)
    assert an.root is None or refused not in an.root.chain


def test_a_missing_tls_secret_with_no_certificate_error_seen_is_latent() -> None:
    tls = fact(K.MISSING_REFERENCE, "Ingress `shop` (spec.tls) serves TLS with Secret "
               "`shop-tls`, which does not exist in shop: HTTPS to it fails", "E3",
               reason="TLSSecretNotFound", subject=ObjRef(kind="Ingress", name="shop",
                                                          namespace="shop"),
               minutes=None)  # fmt: skip
    errors = fact(K.ERROR_RATE, "shop: 40 of 200 requests failed (504)", "E1", service="shop",
                  focus=True)  # fmt: skip
    an = judge([errors, tls])
    assert an.root is None or an.root.lead is not tls  # 504s are not certificate errors
    state = TaskState(goal="browsers say NET::ERR_CERT_AUTHORITY_INVALID on shop", subject=SHOP,
                      facts=[errors, tls], onset=T0)  # fmt: skip
    an = analyse(state, EvidenceStore(), [], ObjectGraph())
    assert an.root is not None and an.root.lead is tls


def test_a_kill_two_days_before_the_window_is_not_revived_by_what_followed() -> None:
    old = fact(K.OOM_KILLED, "pod cache-0: container cache was OOMKilled (exit code 137)", "E2",
               subject=ObjRef(kind="Pod", name="cache-0", namespace="shop"), service="cache",
               reason="OOMKilled", minutes=-2 * 24 * 60, conclusive=True)  # fmt: skip
    probes = fact(K.PROBE_FAILURE, "12 Unhealthy events on Pod cache-0: Readiness probe "
                  "failed: HTTP probe failed with statuscode: 500", "E3", reason="Unhealthy",
                  subject=ObjRef(kind="Pod", name="cache-0", namespace="shop"), service="cache",
                  count=12, minutes=1, last_time=T0 + timedelta(minutes=30),
                  conclusive=True)  # fmt: skip
    errors = fact(K.ERROR_RATE, "cache: 40 of 200 requests failed", "E1", service="cache",
                  focus=True)  # fmt: skip
    cache = Subject(names=["cache"], namespace="shop")
    state = TaskState(goal="why", subject=cache, facts=[errors, probes, old], onset=T0)
    state.constraints.window_from = T0 - timedelta(minutes=20)
    an = analyse(state, EvidenceStore(), [], ObjectGraph())
    assert an.root is None or an.root.lead is not old


def test_a_missing_key_is_not_contradicted_by_the_secret_existing() -> None:
    from opsmate.records.k8s_objects import Secret

    graph = ObjectGraph()
    graph.add("Secret", Secret(name="db", namespace="shop"), "E9")
    key = fact(K.MISSING_REFERENCE, "pod shop-1: container shop cannot start "
               "(CreateContainerConfigError): couldn't find key password in Secret shop/db",
               "E2", reason="CreateContainerConfigError", focus=True, service="shop",
               objects=[ObjRef(kind="Secret", name="db", namespace="shop")],
               conclusive=True)  # fmt: skip
    an = judge([fact(K.NOT_READY, "shop: 0 of 1 ready", "E1", service="shop", focus=True), key],
               graph)  # fmt: skip
    assert an.root is not None and an.root.lead is key
    gone = key.model_copy(update={"quote": 'secret "db" not found', "key": "gone"})
    an = judge([fact(K.NOT_READY, "shop: 0 of 1 ready", "E1", service="shop", focus=True), gone],
               graph)  # fmt: skip
    assert an.root is None or an.root.lead is not gone  # the Secret exists now


def test_an_effect_with_no_why_gives_way_to_a_conclusive_cause_of_the_same_symptom() -> None:
    from opsmate.agent.judge.analysis import _conclusive_over_bare
    from opsmate.agent.judge.candidates import Candidate

    symptom = fact(K.ERROR_RATE, "web: 40 of 200 requests failed", "E1", service="web")
    call = fact(K.DEPENDENCY_FAILURE, "web reports a failing dependency (connection refused)",
                "E2", reason="refused")  # fmt: skip
    refused = Candidate(lead=call, relation="subject", score=10.0, supported=True,
                        explains=symptom)  # fmt: skip
    selector = Candidate(lead=fact(K.SELECTOR_MISMATCH, "Service `cms` selects `app=cms`, but "
                                   "no pod has those labels", "E3",
                                   reason="SelectorMatchesNoPod"),
                         relation="subject", score=8.9, supported=True, conclusive=True,
                         explains=symptom)  # fmt: skip
    assert _conclusive_over_bare(refused, [refused, selector]) is selector
    refused.chain = [selector.lead]  # its why was found: it stands
    assert _conclusive_over_bare(refused, [refused, selector]) is refused


def test_a_failing_call_that_names_nothing_and_has_no_why_is_a_lead_not_a_finding() -> None:
    nameless = fact(K.DEPENDENCY_FAILURE, 'shop reports a failing dependency (unavailable): '
                    '"(Handler.h:614:Upload) Failed to initialize the counter: CONNECTION '
                    'FAILURE"', "E2", service="shop", focus=True, reason="unavailable",
                    count=40, minutes=1)  # fmt: skip
    errors = fact(K.ERROR_RATE, "shop: 40 of 200 requests failed", "E1", service="shop",
                  focus=True)  # fmt: skip
    an = judge([errors, nameless])
    assert an.root is None  # a source file ("Handler.h:614") is no dependency's name
    named = nameless.model_copy(update={"quote": "cannot connect to memcached:11211: refused",
                                        "objects": [ObjRef(kind="host", name="memcached")],
                                        "key": "named"})  # fmt: skip
    from opsmate.agent.judge.analysis import _nameless_effect
    from opsmate.agent.judge.candidates import Candidate
    from opsmate.agent.observe.depgraph import build

    dg = build(ObjectGraph())
    assert _nameless_effect(Candidate(lead=nameless, relation="subject"), dg)
    assert not _nameless_effect(Candidate(lead=named, relation="subject"), dg)  # what failed
    # a logger, a class and a thread are words with dots and dashes, not a dependency
    java = nameless.model_copy(update={"quote": "[http-nio-8080-exec-3] c.e.shop.web.Orders"
                                       "Controller : Order placement failed for order-created",
                                       "key": "java"})  # fmt: skip
    assert _nameless_effect(Candidate(lead=java, relation="subject"), dg)
    an = judge([errors, java])
    assert an.root is None


def test_a_rollout_whose_change_is_unknown_and_nothing_failing_after_it_is_a_lead() -> None:
    rollout = fact(K.CHANGE, "deployment admin rolled out revision 12 of admin at 09:55 (same "
                   "image as before: a configuration change)", "E2", service="shop",
                   focus=True, minutes=-5, severity="info",
                   detail={"change": "rollout", "template_changes": []})  # fmt: skip
    errors = fact(K.ERROR_RATE, "shop: 40 of 200 requests failed", "E1", service="shop",
                  focus=True)  # fmt: skip
    an = judge([errors, rollout])
    assert an.root is None or an.root.lead is not rollout


def test_work_piling_up_is_explained_by_what_in_the_namespace_stopped_consuming_it() -> None:
    from opsmate.agent.intake.names import detect_namespace, detect_subject

    q = ("Plane (namespace plane): e-mail notifications stopped being processed since 11:25 and "
         "the RabbitMQ queue alert is firing. Is RabbitMQ broken again?")  # fmt: skip
    subject = detect_subject(q, services=["rabbitmq"], namespace=detect_namespace(q))
    assert subject.backlog and subject.names == ["rabbitmq"]
    refused = fact(K.MISCONFIGURATION, "27 FailedCreate events on ReplicaSet worker-5d8f: Error "
                   "creating: failed calling webhook: context deadline exceeded", "E2",
                   subject=ObjRef(kind="ReplicaSet", name="worker-5d8f", namespace="plane"),
                   reason="FailedCreate", minutes=-1, conclusive=True, count=27,
                   last_time=T0 + timedelta(minutes=38))  # fmt: skip
    state = TaskState(goal=q, questions=[q], subject=subject, facts=[refused], onset=T0)
    state.constraints.window_to = T0 + timedelta(minutes=40)
    an = analyse(state, EvidenceStore(), [], ObjectGraph())
    # the consumer that cannot start explains the queue; and it still goes on: not "over"
    assert an.root is not None and an.root.lead is refused


def _pool_run_dry(client: str) -> Fact:
    return fact(K.SATURATION, f'{client} reports that a connection pool is exhausted: '
                '"HikariPool-1 - Connection is not available, request timed out after 30000ms"',
                "E2", service=client, focus=True, reason="pool_exhausted", count=300,
                minutes=1)  # fmt: skip


def _lock_waits() -> Fact:
    """PostgreSQL's log_lock_waits lines on the database ``db``, 80 of them, read as warnings."""
    said = "process 4 still waiting for RowExclusiveLock on relation 16412 of database 16384"
    return fact(K.LOG_WARNING, f'db logged 80 warnings "{said} after 1000 ms"', "E3",
                service="db", severity="warning", count=80, minutes=1,
                subject=ObjRef(kind="app", name="db"), message=f"{said} after 1000 ms",
                detail={"verbatim": True})  # fmt: skip


def test_lock_waits_on_the_database_a_pool_runs_dry_on_are_the_why_of_the_pool() -> None:
    """A client's pool runs dry because its statements queue behind a lock: the pool card
    names lock contention as what can explain it, and the client depends on the database
    (its env names it), so the database's lock waits are the root and the pool the link."""
    graph = ObjectGraph()
    graph.add("Pod", Pod(name="tracker-6d5f7c8b9-abcde", namespace="shop",
                         owner="ReplicaSet/tracker-6d5f7c8b9", labels={"app": "tracker"},
                         containers=[Container(name="tracker", env=[EnvVar(
                             name="DATABASE_URL", value="jdbc:postgresql://db:5432/app")])]),
              "E9")  # fmt: skip
    graph.add("Pod", Pod(name="db-0", namespace="shop", owner="StatefulSet/db",
                         labels={"app": "db"}, containers=[Container(name="postgres")]),
              "E9")  # fmt: skip
    graph.add("Service", Service(name="db", namespace="shop", selector={"app": "db"}), "E9")
    pool = _pool_run_dry("tracker")
    waits = _lock_waits()
    errors = fact(K.ERROR_RATE, "tracker: 57 of 151 requests failed", "E1", service="tracker",
                  focus=True)  # fmt: skip
    state = TaskState(goal="why", subject=Subject(names=["tracker"], namespace="shop"),
                      facts=[errors, pool, waits], onset=T0)  # fmt: skip
    an = analyse(state, EvidenceStore(), [], graph)
    assert an.root is not None and an.root.lead is waits
    assert "database lock contention" in (an.root_statement or "")
    # without the edge (nothing says the client uses that database) the pool stays the root
    alone = ObjectGraph()
    state = TaskState(goal="why", subject=Subject(names=["tracker"], namespace="shop"),
                      facts=[errors, pool, waits], onset=T0)  # fmt: skip
    an = analyse(state, EvidenceStore(), [], alone)
    assert an.root is not None and an.root.lead is pool


def test_a_job_pod_that_completed_after_a_rollout_is_not_what_the_rollout_broke() -> None:
    """A rollout, then a CronJob's pod that exited 0 (Completed): nothing failed, so the
    rollout explains nothing and the report is not `complete`."""
    rollout = fact(K.CHANGE, "deployment shop rolled out revision 7 of shop", "E2",
                   service="shop", minutes=-5, severity="info",
                   detail={"change": "rollout"})  # fmt: skip
    done = fact(K.CONTAINER_EXIT, "pod shop-digest-2951-x4s6k: container digest exited with code 0"
                " (Completed)", "E3", service="shop", focus=True, severity="info", exit_code=0,
                subject=ObjRef(kind="Pod", name="shop-digest-2951-x4s6k", namespace="shop"),
                reason="Completed")  # fmt: skip
    an = judge([rollout, done])
    assert not [c for c in an.candidates if c.lead is rollout]


def _policy_graph() -> ObjectGraph:
    graph = ObjectGraph()
    for name, env in (("gateway", [EnvVar(name="CATALOG_URL", value="http://catalog:8080")]),
                      ("catalog", [EnvVar(name="DB_HOST", value="db")]), ("db", [])):  # fmt: skip
        graph.add("Pod", Pod(name=f"{name}-6d5f7c8b9-abcde", namespace="shop",
                             owner=f"ReplicaSet/{name}-6d5f7c8b9", labels={"app": name},
                             containers=[Container(name=name, env=env)]), "E9")  # fmt: skip
        graph.add("Service", Service(name=name, namespace="shop", selector={"app": name}), "E9")
    return graph


def test_a_policy_that_denies_only_pods_that_never_call_what_it_guards_is_latent() -> None:
    """A policy admits only the catalog to the database; the gateway, denied, never calls the
    database (only the catalog does): the gateway's errors are not the policy's doing."""
    policy = fact(K.NETWORK_POLICY, "NetworkPolicy `db-clients` selects pods `app=db` and allows "
                  "ingress only from pods `app=catalog`: traffic from pod(s) `gateway-6d5f7c8b9-"
                  "abcde` is denied", "E3", minutes=None, reason="ingressDenied",
                  subject=ObjRef(kind="NetworkPolicy", name="db-clients", namespace="shop"),
                  detail={"selected": ["db-6d5f7c8b9-abcde"],
                          "denied": ["gateway-6d5f7c8b9-abcde"]})  # fmt: skip
    errors = fact(K.ERROR_RATE, "gateway: 57 of 151 requests failed", "E1", service="gateway",
                  focus=True)  # fmt: skip
    state = TaskState(goal="why", subject=Subject(names=["gateway"], namespace="shop"),
                      facts=[errors, policy], onset=T0)  # fmt: skip
    an = analyse(state, EvidenceStore(), [], _policy_graph())
    [cand] = [c for c in an.candidates if c.lead is policy]
    assert cand.latent and not cand.conclusive
    # denying the catalog, which does call the database, is a cause
    denies = policy.model_copy(
        update={
            "detail": {"selected": ["db-6d5f7c8b9-abcde"], "denied": ["catalog-6d5f7c8b9-abcde"]}
        }
    )
    state = TaskState(goal="why", subject=Subject(names=["gateway"], namespace="shop"),
                      facts=[errors, denies], onset=T0)  # fmt: skip
    an = analyse(state, EvidenceStore(), [], _policy_graph())
    [cand] = [c for c in an.candidates if c.lead is denies]
    assert not cand.latent


def test_a_pool_run_dry_does_not_settle_the_investigation_while_checks_remain() -> None:
    """The pool's card names what runs it down elsewhere (lock waits in its database): a
    root that says little on its own, so the queued reads of the database still run; a full
    disk (a limit of the process itself) settles."""
    from opsmate.agent.kinds.registry import run_down_elsewhere, weak_root

    pool = fact(K.SATURATION, 'web reports that a connection pool is exhausted: "Timed out '
                'fetching a new connection from the connection pool"', "E2",
                reason="pool_exhausted")  # fmt: skip
    assert run_down_elsewhere(pool) and weak_root(pool)
    assert not run_down_elsewhere(_disk_full()) and not weak_root(_disk_full())


def test_lock_waits_on_the_database_the_client_names_are_the_why_without_a_graph_edge() -> None:
    """The client's address is hidden in a Secret (no edge), but its errors name the database:
    the lock waits there are linked, and the pool's card names them as its why."""
    pool = _pool_run_dry("web")
    waits = _lock_waits()
    errors = fact(K.ERROR_RATE, "web: 57 of 151 requests failed", "E1", service="web",
                  focus=True)  # fmt: skip
    named = fact(K.DEPENDENCY_FAILURE, "web cannot reach db (timed out)", "E4", service="web",
                 focus=True, count=3, minutes=2, reason="timeout",
                 objects=[ObjRef(kind="host", name="db")])  # fmt: skip
    state = TaskState(goal="why", subject=Subject(names=["web"], namespace="shop"),
                      facts=[errors, pool, waits, named], onset=T0)  # fmt: skip
    an = analyse(state, EvidenceStore(), [], ObjectGraph())
    assert an.root is not None and an.root.lead is waits


def test_a_clock_that_disagrees_is_triggered_by_a_time_fault_not_by_a_rollout() -> None:
    """Tokens not yet valid (the issuer's clock ahead) right after the workload's own
    rollout and a time fault on the issuer: the rollout sets no clock, the fault does."""
    from opsmate.agent.judge.candidates import change_for

    web = ObjRef(kind="Deployment", name="web", namespace="shop")
    rollout = fact(K.CHANGE, "deployment web rolled out revision 2", "E4", service="web",
                   minutes=-15, detail={"change": "rollout"}, subject=web)  # fmt: skip
    skew = fact(
        K.CONFIG_ERROR,
        'web reports a configuration error: "IDX10222: The token is not yet valid."',
        "E5",
        service="web",
        reason="not_yet_valid",
        minutes=0,
        subject=ObjRef(kind="app", name="web"),
    )
    assert card_for(skew).id == "certificate-not-yet-valid"
    assert change_for(skew, [rollout]) is None
    chaos = fact(K.CHANGE, "fault-injection experiment TimeChaos `clock-drift` started on "
                 "identity", "E3", reason="FaultInjection", minutes=-1,
                 detail={"change": "fault"})  # fmt: skip
    assert change_for(skew, [rollout, chaos]) is chaos
    plain = fact(K.CONFIG_ERROR, 'web reports a configuration error: "invalid value"', "E6",
                 service="web", reason="invalid_value", minutes=0)  # fmt: skip
    assert change_for(plain, [rollout]) is rollout  # its own rollout can break its settings


def test_an_expired_certificate_of_the_host_a_client_fails_on_leads_the_clients_error() -> None:
    """The client's handshake fails on an expired certificate of ``api.shop.svc``; the
    Certificate for that name says it expired and why it was not renewed: it leads, the
    client's error is how it reached the client."""
    client = _client_cert_error(
        "GET https://api.shop.svc:8443/token … The remote certificate is invalid: NotTimeValid",
        subject=ObjRef(kind="app", name="shop"),
    )
    obj = _expired_certificate("; cert-manager cannot renew it: issuer secret not found")
    an = judge([_errors(), client, obj])
    assert an.root is not None and an.root.lead is obj and client in an.root.chain
    assert an.root_statement is not None and "Certificate `api-tls`" in an.root_statement


def test_why_a_certificate_was_not_renewed_leads_its_expiry() -> None:
    """cert-manager keeps failing the ACME challenge for the name the expired Certificate
    covers: that failure is why it expired — it leads, and the expiry follows, said."""
    client = _client_cert_error("GET https://api.shop.svc:8443/token: x509: certificate has "
                                "expired or is not yet valid",
                                subject=ObjRef(kind="app", name="shop"))  # fmt: skip
    acme = fact(K.LOG_ERROR, 'cert-manager logged 14 errors "err=while attempting to find '
                'Zones for domain _acme-challenge.api.shop.svc.: Cloudflare API: Invalid '
                'access token"', "E9", service="cert-manager", reason=None, count=14,
                minutes=-20, quote="while attempting to find Zones for domain "
                "_acme-challenge.api.shop.svc.: Cloudflare API: Invalid access token")  # fmt: skip
    an = judge([_errors(), client, _expired_certificate(), acme])
    assert an.root is not None and an.root.lead is acme
    assert an.root_statement is not None and "then Certificate `api-tls`" in an.root_statement
    other = acme.model_copy(update={"quote": "… for domain _acme-challenge.blog.example.",
                                    "key": "other"})  # fmt: skip
    an = judge([_errors(), client, _expired_certificate(), other])
    assert an.root is not None and an.root.lead is not other  # another name: no link


def test_an_autoscaler_at_its_maximum_is_a_cause_only_when_the_load_it_holds_back_shows() -> None:
    """Pinned at maxReplicas while nothing waits or fails (an alert that says just that):
    capacity to review, not the answer; with requests timing out, it is the cause."""
    hpa = fact(
        K.SATURATION,
        "HorizontalPodAutoscaler `shop` (target Deployment `shop`) is held at maxReplicas 4 "
        "(TooManyReplicas: the desired replica count is more than the maximum replica count)",
        "E3",
        reason="TooManyReplicas",
        minutes=None,
        subject=ObjRef(kind="HorizontalPodAutoscaler", name="shop", namespace="shop"),
        service="shop",
        focus=True,
    )
    durations = fact(  # how long work always takes: context, shows no trouble
        K.LATENCY,
        "shop: Task succeeded in <dur> takes p50 254 ms, p99 5.86 s over 363 records",
        "E4",
        severity="info",
        service="shop",
        focus=True,
        reason="slow",
        quote="Task succeeded in 5.8s: timeout=30",
    )
    assert judge([hpa, durations]).root is None
    slow = fact(
        K.LATENCY,
        "shop: p95 latency rose from 0.4 s to 3.2 s",
        "E5",
        severity="warning",
        service="shop",
        focus=True,
        quote="p95 latency 3.2 s",
    )
    an = judge([hpa, slow])
    assert an.root is not None and an.root.lead is hpa


def test_a_failure_its_workload_logged_before_a_rollout_is_not_triggered_by_it() -> None:
    """One new pod's log says it after the rollout; the same words, counted over every pod of
    the workload, were logged half an hour before: the rollout did not set it off."""
    from opsmate.agent.judge.candidates import change_for, first_said

    web = ObjRef(kind="Deployment", name="web", namespace="shop")
    rollout = fact(K.CHANGE, "deployment web rolled out revision 7", "E4", service="web",
                   minutes=0, detail={"change": "rollout"}, subject=web)  # fmt: skip
    words = (
        "Unexpected error in polling loop GroupAuthorizationException: Not authorized to access "
        "group: web"
    )
    new_pod = fact(K.LOG_ERROR, f'pod web-7d-x logged 1 error "{words}"', "E5", service="web",
                   minutes=1, quote=words)  # fmt: skip
    before = fact(K.LOG_WARNING, f'web logged 3 warnings "{words}"', "E2", service="web",
                  minutes=-30, quote=words, severity="warning")  # fmt: skip
    assert change_for(new_pod, [rollout]) is rollout
    assert first_said(new_pod, [before, new_pod]).time == before.time
    assert change_for(first_said(new_pod, [before, new_pod]), [rollout]) is None


def test_the_error_that_followed_is_quoted_from_the_clause_its_failure_mode_was_seen_in() -> None:
    """A Go error wrapped four times: the clause that says it (with its short prefix,
    ``x509:``) is what follows the Certificate's own account."""
    words = (
        'upstream request failed: Post "https://api.shop.svc:8443/v1/charges": tls: failed to '
        "verify certificate: x509: certificate has expired or is not yet valid: current time "
        "2026-12-01T00:00:41Z is after 2026-12-01T00:00:00Z"
    )
    client = _client_cert_error(words, quote=words, subject=ObjRef(kind="app", name="shop"),
                                detail={"pattern": "upstream request failed"})  # fmt: skip
    an = judge([_errors(), client, _expired_certificate()])
    assert an.root_statement is not None
    assert 'then an expired TLS certificate: "x509: certificate has expired' in an.root_statement


def test_a_throttled_service_its_autoscaler_cannot_scale_out_is_held_by_the_autoscaler() -> None:
    """Pods pinned at their CPU limit, and their autoscaler unable to compute utilization (a
    container without a CPU request): the autoscaler is why they stay pinned, it leads."""
    pod = ObjRef(kind="Pod", name="shop-7d9f8c6b5-x2x1q", namespace="shop")
    throttled = fact(K.SATURATION, "cpu throttling {pod=shop-7d9f8c6b5-x2x1q}: throttled at its "
                     "CPU limit in 89% of CFS periods", "E3", reason="cpu_throttled", focus=True,
                     service="shop", subject=pod, minutes=1)  # fmt: skip
    hpa = fact(K.MISCONFIGURATION, "HorizontalPodAutoscaler `shop` (target Deployment `shop`) "
               "cannot compute its metrics (FailedGetResourceMetric): missing request for cpu in "
               "container nginx", "E4", reason="FailedGetResourceMetric", conclusive=True,
               minutes=None, subject=ObjRef(kind="HorizontalPodAutoscaler", name="shop",
                                            namespace="shop"),
               objects=[ObjRef(kind="Deployment", name="shop", namespace="shop")])  # fmt: skip
    an = judge([_errors(), throttled, hpa])
    assert an.root is not None and an.root.lead is hpa
    assert throttled in [*an.root.chain, *an.root.support, *an.root.followers]


def test_a_failure_the_symptom_asked_about_selects_is_linked_in_the_subjects_namespace() -> None:
    """Stale reads asked about; a replica of the namespace the subject runs in lags behind its
    primary (its own gauge), with no dependency edge known (the connection string is in a
    Secret): linked — the root cause; in another namespace, or not asked about, it is not."""
    lag = fact(K.SATURATION, "replica db-2 fell behind its primary: replication lag 420 s",
               "E5", reason="replication_lag", minutes=5,
               subject=ObjRef(kind="Pod", name="db-2"))  # fmt: skip
    assert card_for(lag).id == "replica-lag"
    g = ObjectGraph()
    for name in ("shop-7d9f8c6b5d-x2x1a", "db-2"):
        g.add("Pod", Pod(name=name, namespace="shop"), "E1")

    def run(question: str, graph: ObjectGraph) -> Any:
        state = TaskState(goal=question, questions=[question], subject=Subject(names=["shop"]),
                          facts=[lag], onset=T0)  # fmt: skip
        return analyse(state, EvidenceStore(), [], graph)

    an = run("items disappear right after saving and reappear minutes later", g)
    assert an.root is not None and an.root.lead is lag
    assert run("the shop is down since 10:00", g).root is None  # not what was asked about
    elsewhere = ObjectGraph()
    elsewhere.add("Pod", Pod(name="shop-7d9f8c6b5d-x2x1a", namespace="shop"), "E1")
    elsewhere.add("Pod", Pod(name="db-2", namespace="other"), "E1")
    assert run("items disappear right after saving", elsewhere).root is None
