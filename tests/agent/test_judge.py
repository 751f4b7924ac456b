"""The cause/symptom model and the judge, on hand-built observations.

Each test builds facts as the analyzers would (kinds, subjects, evidence ids, times),
runs :func:`opsmate.agent.judge.analysis.analyse` and checks which candidate becomes the
root cause, how it relates to the subject, and what the statement says.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from opsmate.agent.evidence import EvidenceStore
from opsmate.agent.intake.subject import Subject
from opsmate.agent.judge.analysis import analyse
from opsmate.agent.judge.causality import can_explain
from opsmate.agent.judge.runbook_match import DocMatcher
from opsmate.agent.judge.statements import chain_steps
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.runbooks.library import Applicability, RunbookDoc
from opsmate.agent.state import TaskState
from opsmate.knowledge.types import RunbookMeta
from opsmate.records.k8s import Container, Pod

K = FactKind
T0 = datetime(2026, 5, 4, 10, 0, tzinfo=UTC)


def pod(name: str, ns: str = "shop") -> ObjRef:
    return ObjRef(kind="Pod", name=name, namespace=ns)


def fact(
    kind: FactKind,
    statement: str,
    eid: str,
    *,
    subject: ObjRef | None = None,
    service: str | None = None,
    minutes: float = 0,
    severity: str = "error",
    focus: bool = False,
    count: int = 1,
    **extra: Any,
) -> Fact:
    return Fact(
        key=f"{kind}:{statement}",
        statement=statement,
        evidence=[eid],
        kind=kind,
        severity=severity,  # type: ignore[arg-type]
        subject=subject,
        service=service,
        time=T0 + timedelta(minutes=minutes),
        focus=focus,
        count=count,
        quote=extra.pop("quote", statement),
        **extra,
    )


def judge(
    facts: list[Fact],
    subject: Subject | None = None,
    *,
    graph: ObjectGraph | None = None,
    docs: list[RunbookDoc] | None = None,
    onset: datetime | None = None,
) -> Any:
    state = TaskState(goal="why", subject=subject or Subject(), facts=facts, onset=onset)
    app = Applicability(True, [], (0, 0, 0.0, 0))
    listed = [(f"R{i + 1}", d, app) for i, d in enumerate(docs or [])]
    return analyse(state, EvidenceStore(), listed, graph or ObjectGraph())


WEB = Subject(names=["web"], kind="Deployment", namespace="shop")


# -- the model itself ------------------------------------------------------------------------


def test_causes_say_what_they_explain() -> None:
    assert can_explain(K.OOM_KILLED, K.CRASH_LOOP)
    assert not can_explain(K.OOM_KILLED, K.POD_PENDING)  # an OOM kill never explains Pending
    assert not can_explain(K.SCHEDULING, K.CRASH_LOOP)


# -- causes above symptoms ----------------------------------------------------------------------


def test_a_single_oom_kill_beats_many_back_off_events() -> None:
    backoffs = fact(
        K.CRASH_LOOP,
        "24 BackOff events on Pod web-1",
        "E2",
        subject=pod("web-1"),
        service="web",
        count=24,
        severity="warning",
        focus=True,
    )
    oom = fact(
        K.OOM_KILLED,
        "pod web-1: container app was OOMKilled (exit code 137) at its memory limit of 128Mi",
        "E1",
        subject=pod("web-1"),
        service="web",
        focus=True,
        reason="OOMKilled",
    )
    an = judge([backoffs, oom], WEB)
    assert an.root is not None and an.root.lead is oom
    assert an.root_statement.startswith("deployment web is crash-looping because pod web-1")
    symptom = chain_steps(an.root)[0]  # the symptom supports it: first step of the chain
    assert "BackOff" in symptom[0] and symptom[1] == ["E2"] and "(E1)" in an.root_statement
    assert set(an.root_evidence) >= {"E1", "E2"}
    assert an.confidence >= 0.8  # conclusive


def test_symptoms_alone_are_never_a_root_cause() -> None:
    crash = fact(
        K.CRASH_LOOP,
        "pod web-1 is in CrashLoopBackOff",
        "E1",
        subject=pod("web-1"),
        service="web",
        focus=True,
    )
    an = judge([crash], WEB)
    assert an.root is None
    assert "nothing read says why" in an.missing
    assert an.hypotheses and an.hypotheses[0].status == "open"


def test_a_conclusive_single_signal_is_confirmed_on_its_own() -> None:
    sched = fact(
        K.SCHEDULING,
        "pod web-1 cannot be scheduled: 0/3 nodes are available: 3 Insufficient memory",
        "E1",
        subject=pod("web-1"),
        service="web",
        focus=True,
    )
    an = judge([sched], WEB)
    assert an.root is not None and an.root.conclusive
    assert an.hypotheses[0].status == "confirmed"


def test_an_inferred_cause_needs_a_second_piece_of_evidence() -> None:
    err = fact(
        K.LOG_ERROR,
        'web logged 3 errors "boom"',
        "E1",
        service="web",
        subject=ObjRef(kind="app", name="web"),
        focus=True,
        count=3,
    )
    other = fact(
        K.LOG_ERROR,
        'web logged 2 errors "bang"',
        "E1",
        service="web",
        subject=ObjRef(kind="app", name="web"),
        focus=True,
        count=2,
        minutes=30,
    )
    an = judge([err, other], WEB)
    assert an.root is None  # one result, no symptom, no runbook, no onset named
    assert "second, independent" in an.missing
    # the symptom it explains, seen in another result, supports it
    crash = fact(
        K.CRASH_LOOP,
        "pod web-1 is in CrashLoopBackOff",
        "E2",
        subject=pod("web-1"),
        service="web",
        focus=True,
    )
    an = judge([err, other, crash], WEB)
    assert an.root is not None and an.root.lead is err


def test_the_only_error_of_the_subject_stands_for_itself() -> None:
    needle = fact(
        K.LOG_ERROR,
        'web logged 1 error "could not acquire connection"',
        "E1",
        service="web",
        subject=ObjRef(kind="app", name="web"),
        focus=True,
    )
    an = judge([needle], WEB)
    assert an.root is not None and an.root.sole


def test_repeated_errors_that_began_at_the_named_onset_are_supported() -> None:
    err = fact(
        K.LOG_ERROR,
        'web logged 9 errors "pool exhausted"',
        "E1",
        service="web",
        subject=ObjRef(kind="app", name="web"),
        focus=True,
        count=9,
        minutes=2,
    )
    noise = fact(
        K.LOG_ERROR,
        'web logged 1 error "cache miss storm"',
        "E1",
        service="web",
        subject=ObjRef(kind="app", name="web"),
        focus=True,
        minutes=300,
    )
    an = judge([err, noise], WEB, onset=T0)
    assert an.root is not None and an.root.lead is err and an.root.onset_aligned


# -- the subject ------------------------------------------------------------------------------


def test_a_cause_on_another_object_is_not_the_subjects_root_cause() -> None:
    theirs = fact(
        K.OOM_KILLED,
        "pod batch-7: container x was OOMKilled",
        "E1",
        subject=pod("batch-7"),
        service="batch",
    )
    mine = fact(
        K.NOT_READY,
        "pod web-1 is running but not ready",
        "E1",
        subject=pod("web-1"),
        service="web",
        focus=True,
        severity="warning",
    )
    an = judge([theirs, mine], WEB)
    assert an.root is None
    assert "about other objects" in an.missing and "batch-7" in an.missing
    assert any("another object" in h.why for h in an.hypotheses)


def test_without_a_subject_any_object_of_the_scope_may_be_the_cause() -> None:
    pull = fact(
        K.IMAGE_PULL,
        "pod fast-1: container a cannot pull its image x:9 (manifest unknown)",
        "E1",
        subject=pod("fast-1"),
        service="fast",
    )
    an = judge([pull], Subject(namespace="shop"))
    assert an.root is not None and an.root.relation == "scope"


def test_consumers_failing_on_the_subject_are_impact_not_cause() -> None:
    graph = ObjectGraph()
    cache = Pod(name="cache-0", namespace="shop", containers=[Container(name="r", image="redis:7")])
    graph.add_listing("Pod", [cache], "E1", namespace="shop")
    subject = Subject(names=["cache"], namespace="shop")
    clients = fact(
        K.SATURATION,
        "cache connected clients rose from 1300 to 9500",
        "E2",
        service="cache",
        subject=ObjRef(kind="app", name="cache"),
        focus=True,
        minutes=1,
    )
    consumer = fact(
        K.SATURATION,
        'gateway reports "redis: connection pool timeout"',
        "E3",
        service="gateway",
        subject=ObjRef(kind="app", name="gateway"),
        minutes=5,
        message="session lookup failed: redis: connection pool timeout",
        count=40,
    )
    change = fact(
        K.CHANGE,
        "deployment orders rolled out v2.14.0",
        "E4",
        service="orders",
        subject=ObjRef(kind="Deployment", name="orders", namespace="shop"),
        severity="info",
        minutes=-1,
    )
    an = judge([clients, consumer, change], subject, graph=graph)
    assert an.root is not None and an.root.lead is clients
    impact = " ".join(f.statement for f in an.root.impact)  # shown as facts, cited by the root
    assert "connection pool timeout" in impact
    assert all(e in an.root_evidence for f in an.root.impact for e in f.evidence)


# -- chains, cascades, supersession ---------------------------------------------------------------


def test_a_probe_that_times_out_is_explained_by_the_exhausted_pool() -> None:
    probe = fact(
        K.PROBE_FAILURE,
        "6 Unhealthy events on Pod web-1: Readiness probe failed: context deadline exceeded",
        "E2",
        subject=pod("web-1"),
        service="web",
        focus=True,
        count=6,
    )
    pool = fact(
        K.SATURATION,
        "db_pool_in_use reached db_pool_max (10 of 10)",
        "E1",
        service="web",
        subject=ObjRef(kind="app", name="web"),
        focus=True,
        minutes=-1,
    )
    errors = fact(
        K.ERROR_RATE,
        "web 5xx rose from 0 to 4/s",
        "E3",
        service="web",
        subject=ObjRef(kind="app", name="web"),
        focus=True,
        severity="warning",
    )
    an = judge([probe, pool, errors], WEB)
    assert an.root is not None and an.root.lead is pool
    assert probe in an.root.support


def test_the_subjects_failing_calls_lead_to_the_dependencys_own_cause() -> None:
    calls = fact(
        K.DEPENDENCY_FAILURE,
        'web cannot reach payments (timed out): "POST '
        'http://payments.shop.svc/charge: context deadline exceeded"',
        "E1",
        service="web",
        subject=ObjRef(kind="app", name="web"),
        focus=True,
        count=30,
        objects=[ObjRef(kind="host", name="payments.shop.svc")],
        minutes=1,
    )
    upstream = fact(
        K.DEPENDENCY_FAILURE,
        "p99 of payments' calls by peer {peer=psp.example} rose from 0.4 to 9.9",
        "E2",
        service="payments",
        subject=ObjRef(kind="app", name="payments"),
        reason="slow",
        objects=[ObjRef(kind="host", name="psp.example")],
        severity="warning",
    )
    slow = fact(
        K.LATENCY,
        "payments p99 latency rose from 0.45 to 9.5",
        "E3",
        service="payments",
        subject=ObjRef(kind="app", name="payments"),
        severity="warning",
    )
    errors = fact(
        K.ERROR_RATE,
        "web 504 rate rose",
        "E4",
        service="web",
        subject=ObjRef(kind="app", name="web"),
        focus=True,
        severity="warning",
        minutes=2,
    )
    an = judge([calls, upstream, slow, errors], WEB)
    assert an.root is not None and an.root.lead is upstream and an.root.relation == "linked"
    assert calls in an.root.chain
    assert an.root_statement.startswith("deployment web returns errors because p99 of payments")
    steps = [text for text, _ in chain_steps(an.root)]
    assert any("web — cannot reach payments" in t for t in steps[:-1])  # how it reached web


def test_names_that_do_not_resolve_lead_to_the_cluster_dns() -> None:
    dns = fact(
        K.DEPENDENCY_FAILURE,
        "web cannot reach orders-db (its name does not resolve)",
        "E1",
        service="web",
        subject=ObjRef(kind="app", name="web"),
        focus=True,
        reason="dns",
        message="lookup orders-db.shop.svc: no such host",
        count=20,
        minutes=2,
    )
    words = fact(
        K.LAST_WORDS,
        'pod coredns-7d-x (container coredns) wrote before it exited: "plugin/loop: Loop detected"',
        "E2",
        subject=pod("coredns-7d-x", "kube-system"),
        service="coredns",
    )
    crash = fact(
        K.CRASH_LOOP,
        "pod coredns-7d-x is in CrashLoopBackOff",
        "E3",
        subject=pod("coredns-7d-x", "kube-system"),
        service="coredns",
    )
    an = judge([dns, words, crash], WEB)
    assert an.root is not None and an.root.lead is words
    assert dns in an.root.chain and "CrashLoopBackOff" in chain_steps(an.root)[0][0]


def test_the_first_error_of_a_cascade_is_the_cause() -> None:
    def err(text: str, minutes: float, count: int) -> Fact:
        return fact(
            K.LOG_ERROR,
            f'web logged {count} errors "{text}"',
            "E1",
            service="web",
            subject=ObjRef(kind="app", name="web"),
            focus=True,
            minutes=minutes,
            count=count,
        )

    first = err("Lost connection to cache: connection refused", 0, 1)
    then = [err("auth service returned 503", 0.1, 25), err("user service returned 503", 0.2, 26)]
    an = judge([first, *then], WEB)
    assert an.root is not None and an.root.lead is first
    assert an.root.followers == then
    assert all(e in an.root_evidence for f in then for e in f.evidence)  # the cascade is cited


def test_a_refusal_superseded_by_later_pods_is_refuted() -> None:
    graph = ObjectGraph()
    later = Pod(
        name="get-data-x",
        namespace="shop",
        owner="Job/get-data",
        start_time=T0 + timedelta(minutes=8),
    )
    graph.add_listing("Pod", [later], "E1", namespace="shop")
    refusal = fact(
        K.MISSING_REFERENCE,
        '4 FailedCreate events on Job get-data: serviceaccount "sa" not found',
        "E2",
        subject=ObjRef(kind="Job", name="get-data", namespace="shop"),
        service="get-data",
        reason="FailedCreate",
        last_time=T0 + timedelta(minutes=1),
    )
    exit_ = fact(
        K.LAST_WORDS,
        'pod get-data-x wrote before it exited: "Could not resolve host"',
        "E3",
        subject=pod("get-data-x"),
        service="get-data",
        minutes=9,
    )
    failed = fact(
        K.JOB_FAILED,
        "Job get-data has reached its backoff limit",
        "E2",
        subject=ObjRef(kind="Job", name="get-data", namespace="shop"),
        service="get-data",
        minutes=10,
    )
    an = judge([refusal, exit_, failed], Subject(names=["get-data"], kind="Job"), graph=graph)
    assert an.root is not None and an.root.lead is exit_
    h = next(h for h in an.hypotheses if "FailedCreate" in h.statement)
    assert h.status == "refuted" and "later pods were created" in h.why


def test_a_missing_object_the_graph_shows_to_exist_is_refuted() -> None:
    from opsmate.records.base import Record

    class Named(Record):
        name: str | None = None
        namespace: str | None = None

    graph = ObjectGraph()
    graph.add_listing("Secret", [Named(name="keys", namespace="shop")], "E5", namespace="shop")
    claim = fact(
        K.MISSING_REFERENCE,
        'pod web-1: secret "keys" not found',
        "E1",
        subject=pod("web-1"),
        service="web",
        focus=True,
        objects=[ObjRef(kind="Secret", name="keys", namespace="shop")],
    )
    an = judge([claim], WEB, graph=graph)
    assert an.root is None
    assert an.hypotheses[0].status == "refuted" and "exists now" in an.hypotheses[0].why


def test_last_words_and_the_same_log_error_are_one_finding() -> None:
    err = fact(
        K.LOG_ERROR,
        'web logged 22 errors "ValueError: invalid literal for int()"',
        "E1",
        service="web",
        subject=ObjRef(kind="app", name="web"),
        focus=True,
        count=22,
        quote="ValueError: invalid literal for int()",
    )
    words = fact(
        K.LAST_WORDS,
        'pod web-1 wrote before it exited: "int(env[\\"BATCH\\"])" / '
        '"ValueError: invalid literal for int()"',
        "E2",
        subject=pod("web-1"),
        service="web",
        focus=True,
        minutes=20,
        detail={"key_lines": ['int(env["BATCH"])', "ValueError: invalid literal for int()"]},
    )
    crash = fact(
        K.CRASH_LOOP,
        "pod web-1 is in CrashLoopBackOff",
        "E3",
        subject=pod("web-1"),
        service="web",
        focus=True,
    )
    an = judge([err, words, crash], WEB)
    assert an.root is not None and an.root.lead is words and err in an.root.support


def test_a_workload_starting_is_not_a_change_that_explains_its_own_failure() -> None:
    start = fact(
        K.CHANGE,
        "a one-off workload started: Job/report report-1",
        "E1",
        subject=pod("report-1"),
        service="report",
        severity="info",
        detail={"change": "one-off workload"},
    )
    failed = fact(
        K.JOB_FAILED,
        "Job report failed",
        "E2",
        service="report",
        subject=ObjRef(kind="Job", name="report", namespace="shop"),
        focus=True,
        minutes=3,
    )
    an = judge([start, failed], Subject(names=["report"], kind="Job"))
    assert an.root is None


# -- runbook matching precision ------------------------------------------------------------------


def doc(title: str, text: str, alerts: list[str] | None = None) -> RunbookDoc:
    return RunbookDoc(
        source=f"{title.replace(' ', '-').lower()}.md",
        title=title,
        meta=RunbookMeta(title=title, alerts=alerts or []),
        sections=[([title], text)],
    )


def test_a_runbook_is_cited_only_when_it_is_about_that_kind_of_failure() -> None:
    node = doc("KubeNodeNotReady", "A node is not ready. Check the kubelet and exit codes.")
    crash = doc(
        "KubePodCrashLooping",
        "A pod keeps restarting: its container exits with a non-zero exit code. Read the "
        "previous log for the error it printed before the exit.",
    )
    exit_ = fact(
        K.CONTAINER_EXIT,
        "pod web-1: container app exited with code 1 (Error)",
        "E1",
        subject=pod("web-1"),
        service="web",
        terms=["exit", "error", "code"],
    )
    m = DocMatcher([node, crash])
    assert not m.about(exit_, node)
    assert m.about(exit_, crash) and m.strength(exit_, crash) > 0


def test_flags_stored_in_detail_by_older_sessions_become_typed_fields() -> None:
    from opsmate.agent.observe.facts import Fact

    old = Fact.model_validate(
        {"key": "k", "statement": "s", "detail": {"conclusive": 1, "background": True, "x": 2}}
    )
    assert old.conclusive is True and old.background is True and old.routine is False
    assert old.detail == {"x": 2}  # control flags never stay in detail
    assert Fact(key="k", statement="s").model_dump()["detail"] == {}


def test_a_background_message_is_never_a_supported_cause_on_its_own() -> None:
    from opsmate.agent.judge import links
    from opsmate.agent.judge.analysis import _supported
    from opsmate.agent.judge.candidates import Candidate
    from opsmate.agent.observe.facts import Fact
    from opsmate.agent.observe.facts import FactKind as FK

    lead = Fact(
        key="log:x", statement="x not set", kind=FK.CONFIG_ERROR, severity="error", count=40
    )
    steady = lead.model_copy(update={"background": True})
    for fact, want in ((lead, True), (steady, False)):
        cand = Candidate(lead=fact, relation=links.SUBJECT, conclusive=False)
        cand.sole = True  # the only error there is: enough, unless it was there all along
        assert _supported(cand) is want


def test_what_a_container_ended_with_is_named_by_the_failure_mode_it_shows() -> None:
    """A verbatim account (a termination message) carries no classification of its own: the
    card that recognised it names the failure mode before the quote."""
    crash = fact(
        K.CRASH_LOOP, "pod web-1 is in CrashLoopBackOff", "E1", subject=pod("web-1"),
        service="web", focus=True,
    )  # fmt: skip
    ended = fact(
        K.LAST_WORDS,
        'pod web-1: container web ended with the termination message "exec: "/app/webd": '
        'stat /app/webd: no such file or directory"',
        "E2",
        subject=pod("web-1"),
        service="web",
        focus=True,
        reason="StartError",
    )
    an = judge([crash, ended], WEB)
    assert an.root is not None and an.root.lead is ended
    assert "because a container command that cannot start: pod web-1" in an.root_statement


def test_a_report_without_a_root_cause_lists_one_candidate_per_failure_mode_and_object() -> None:
    from opsmate.agent.judge.analysis import _hypotheses
    from opsmate.agent.judge.candidates import Candidate

    now = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
    web = ObjRef(kind="app", name="web")

    def err(key: str, text: str, who: ObjRef = web) -> Fact:
        return Fact(key=key, statement=text, kind=FactKind.LOG_ERROR, severity="error",
                    service=who.name, subject=who, time=now, evidence=[f"E{len(key)}"])  # fmt: skip

    same = [err(f"k{i}", f"web logged: item {i} not found") for i in range(4)]
    other = err("db", "db logged: disk full", ObjRef(kind="app", name="db"))
    old = ObjRef(kind="app", name="worker")
    gone = Candidate(lead=err("old", "worker logged: an old restart", old), relation="self")
    gone.superseded_by = "a later pod"
    cands = [gone, *(Candidate(lead=f, relation="self") for f in same), Candidate(other, "self")]
    hyps = _hypotheses(cands, None, [], now)
    statements = [h.statement for h in hyps]
    assert statements[:2] == ["web logged: item 0 not found", "db logged: disk full"]
    assert [h.status for h in hyps] == ["open", "open", "refuted"]  # ruled out comes last


def test_a_partial_report_leads_with_an_injected_fault_and_fills_in_unlinked_errors() -> None:
    from opsmate.agent.judge.analysis import _hypotheses
    from opsmate.agent.kinds import card_for

    now = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
    chaos = Fact(key="chaos", statement="fault-injection experiment Chaos Mesh NetworkChaos "
                 "`inv-delay` (delay 2500ms) started on inventory at 09:58",
                 kind=FactKind.CHANGE, reason="FaultInjection",
                 time=now - timedelta(minutes=2), evidence=["E4"])  # fmt: skip
    assert card_for(chaos).id == "fault-injection"
    err = Fact(key="err", statement="orders logged 40 errors: payment declined",
               kind=FactKind.LOG_ERROR, severity="error", time=now, count=40,
               evidence=["E5"])  # fmt: skip
    old = err.model_copy(update={"key": "old", "statement": "orders logged an old error",
                                 "time": now - timedelta(hours=3)})  # fmt: skip
    hyps = _hypotheses([], None, [], now, [chaos, err, old])
    assert [h.statement for h in hyps] == [chaos.statement, err.statement]  # not the old one
    yesterday = chaos.model_copy(update={"time": now - timedelta(hours=20)})
    assert yesterday.statement not in [h.statement for h in _hypotheses([], None, [], now,
                                                                        [yesterday])]  # fmt: skip
    assert all(h.status == "open" for h in hyps)
