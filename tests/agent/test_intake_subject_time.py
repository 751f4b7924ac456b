"""Intake: namespace, subject, symptom, absolute times, restrictions and contradictions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from opsmate.agent.intake.names import detect_namespace, detect_symptom
from opsmate.agent.intake.question import detect_environment, detect_restriction, run_intake
from opsmate.agent.intake.times import absolute_time, detect_onset
from opsmate.agent.observe.facts import FactKind
from opsmate.errors import UsageError

NOW = datetime(2025, 8, 3, 10, 0, tzinfo=UTC)
CST = timezone(timedelta(hours=8))


# ----------------------------------------------------------------------------- namespace


@pytest.mark.parametrize(
    ("question", "namespace"),
    [
        ("what is wrong with ledger in namespace billing-7", "billing-7"),
        ("ledger-api pods in the billing namespace keep restarting", "billing"),
        ("why does namespace-12 have pending pods", "namespace-12"),
        ("kubectl get pods -n ops-tools shows errors", "ops-tools"),
        ("命名空间 billing 里的 ledger 一直重启", "billing"),
        ("billing 命名空间的 ledger 报错", "billing"),
        ("namespace: payments-eu tally is slow", "payments-eu"),
        ("is ledger healthy?", None),
    ],
)
def test_namespace(question: str, namespace: str | None) -> None:
    assert detect_namespace(question) == namespace


@pytest.mark.parametrize(
    ("question", "namespace"),
    [
        ("pods in the production namespace crash", "production"),
        ("ledger in the billing namespace started failing", "billing"),
        ("why is the billing namespace slow", "billing"),
    ],
)
def test_x_namespace_followed_by_a_word(question: str, namespace: str) -> None:
    """ "the X namespace <verb>": X is the namespace, not the word after "namespace"."""
    assert detect_namespace(question) == namespace


@pytest.mark.parametrize(
    ("question", "namespace"),
    [
        ("pods in the production namespace keep restarting", "production"),
        ("namespace prod: ledger-api is slow", "prod"),
    ],
)
def test_namespace_words_are_not_the_environment(question: str, namespace: str) -> None:
    assert detect_environment(question) is None
    got = run_intake(question, now=NOW, bundle_env="staging")
    assert got.constraints.environment == "staging"
    assert got.env_source == "bundle"
    assert got.subject.namespace == namespace


def test_a_real_environment_word_still_counts() -> None:
    got = run_intake("ledger-api keeps restarting in production", now=NOW, bundle_env="staging")
    assert got.constraints.environment == "prod"
    assert got.env_source == "question"


# ----------------------------------------------------------------------------- subject


@pytest.mark.parametrize(
    ("question", "names", "kind", "hosts"),
    [
        (
            "What is the issue with job nightly-ledger-export in namespace billing-7",
            ["nightly-ledger-export"],
            "Job",
            [],
        ),
        (
            "Why can't the frontend pod connect to the tally service",
            ["frontend", "tally"],
            "Pod",
            [],
        ),
        ("the ledger-api deployment is not ready", ["ledger-api"], "Deployment", []),
        (
            "unable to reach pay.example.com from checkout-web",
            ["checkout-web"],
            None,
            ["pay.example.com"],
        ),
        ("statefulset ledger-db pods are pending", ["ledger-db"], "StatefulSet", []),
        ("kubectl -n ops-tools: cronjob report-mailer failed", ["report-mailer"], "CronJob", []),
        (
            'deployment "ledger-api" in the billing namespace is crashing',
            ["ledger-api"],
            "Deployment",
            [],
        ),
        ("the on-call says ledger-api is out-of-memory again", ["ledger-api"], None, []),
    ],
)
def test_subject(question: str, names: list[str], kind: str | None, hosts: list[str]) -> None:
    s = run_intake(question, now=NOW).subject
    assert s.names == names
    assert s.kind == kind
    assert s.hosts == hosts


def test_subject_keeps_the_namespace_out_of_the_names() -> None:
    s = run_intake("job nightly-ledger-export in namespace billing-7 failed", now=NOW).subject
    assert s.namespace == "billing-7"
    assert "billing-7" not in s.names
    assert s.matches("nightly-ledger-export-28461-x2x1q")


def test_common_hyphenated_words_are_not_names() -> None:
    q = "We need a follow-up on the read-only replica; the real-time feed has high-latency"
    s = run_intake(q, now=NOW).subject
    assert s.names == []
    assert s.empty()


def test_environment_words_are_not_names() -> None:
    s = run_intake("pre-prod ledger-api keeps restarting", now=NOW).subject
    assert s.names == ["ledger-api"]


# ----------------------------------------------------------------------------- symptom


@pytest.mark.parametrize(
    ("question", "symptom"),
    [
        ("ledger-api keeps restarting", FactKind.CRASH_LOOP),
        ("ledger-api 一直重启", FactKind.CRASH_LOOP),
        ("should we restart ledger-api?", None),
        ("can I restart the tally deployment safely", None),
        ("statefulset ledger-db pods are pending", FactKind.POD_PENDING),
        ("cronjob report-mailer failed last night", FactKind.JOB_FAILED),
        ("ledger-api returns 503 to checkout", FactKind.ERROR_RATE),
        ("ledger-api is slow since the release", FactKind.LATENCY),
        ("tally is unavailable", FactKind.NOT_READY),
    ],
)
def test_symptom(question: str, symptom: FactKind | None) -> None:
    assert detect_symptom(question) == symptom


def test_run_intake_keeps_the_symptom() -> None:
    assert run_intake("ledger-api keeps restarting", now=NOW).subject.symptom == (
        FactKind.CRASH_LOOP
    )
    assert run_intake("should we restart ledger-api?", now=NOW).subject.symptom is None


# ----------------------------------------------------------------------------- absolute times

AUG2_1345 = datetime(2025, 8, 2, 13, 45, tzinfo=UTC)


@pytest.mark.parametrize(
    "question",
    [
        "ledger-api errors since 2025-08-02T13:45:00Z",
        "it broke at 2025-08-02 13:45",
        "ledger-api failed Aug 2 13:45",
        "ledger-api failed on August 2, 2025 around 13:45 UTC",
        "ledger-api failing since 2 Aug at 13:45",
        "8月2日 13:45 开始报错",
    ],
)
def test_absolute_time(question: str) -> None:
    assert absolute_time(question, NOW) == (AUG2_1345, True)


def test_iso_time_with_offset() -> None:
    got = absolute_time("since 2025-08-02T21:45:00+08:00", NOW)
    assert got is not None
    assert got[0] == AUG2_1345


@pytest.mark.parametrize(
    ("question", "ref", "expected"),
    [
        ("昨天 14:00 开始报错", NOW, datetime(2025, 8, 2, 14, 0, tzinfo=UTC)),
        ("yesterday at 09:30 it began", NOW, datetime(2025, 8, 2, 9, 30, tzinfo=UTC)),
        # a time without a zone is read in the reference's zone
        ("昨天 14:00 开始报错", NOW.astimezone(CST), datetime(2025, 8, 2, 14, 0, tzinfo=CST)),
        (
            "ledger-api failed Aug 2 13:45",
            NOW.astimezone(CST),
            datetime(2025, 8, 2, 13, 45, tzinfo=CST),
        ),
    ],
)
def test_relative_days_and_zones(question: str, ref: datetime, expected: datetime) -> None:
    got = absolute_time(question, ref)
    assert got is not None
    assert got[0] == expected
    assert got[0].utcoffset() == expected.utcoffset()


def test_a_date_ahead_of_the_reference_is_last_year() -> None:
    ref = datetime(2026, 1, 2, 8, 0, tzinfo=UTC)
    assert absolute_time("ledger-api failed Dec 30 23:10", ref) == (
        datetime(2025, 12, 30, 23, 10, tzinfo=UTC),
        True,
    )


def test_date_without_clock() -> None:
    assert absolute_time("it started on 2 August", NOW) == (
        datetime(2025, 8, 2, tzinfo=UTC),
        False,
    )


@pytest.mark.parametrize(
    "question",
    [
        "ledger-api may 3 times restart before it settles",
        "ledger-api keeps restarting",
        "errors rose after the 10:00 release",  # a clock time only: not absolute
    ],
)
def test_not_an_absolute_time(question: str) -> None:
    assert absolute_time(question, NOW) is None


def test_clock_before_the_date() -> None:
    """ "at 13:45 on Aug 2": the clock time belongs to the date."""
    assert absolute_time("ledger-api started failing at 13:45 on Aug 2", NOW) == (AUG2_1345, True)


def test_onset_from_a_clock_time() -> None:
    assert detect_onset("errors rose after the 09:40 release", NOW) == datetime(
        2025, 8, 3, 9, 40, tzinfo=UTC
    )


# ----------------------------------------------------------------------------- window anchoring

BUNDLE = (datetime(2025, 8, 2, 12, 0, tzinfo=UTC), datetime(2025, 8, 2, 16, 0, tzinfo=UTC))


def test_absolute_time_anchors_the_window_within_the_bundle() -> None:
    got = run_intake(
        "ledger-api errors since Aug 2 13:45", now=NOW, bundle_window=BUNDLE, bundle_env="prod"
    )
    c = got.constraints
    assert got.onset == AUG2_1345
    assert c.window_from == BUNDLE[0]  # 13:45 - 2h, clamped to the bundle's start
    assert c.window_to == AUG2_1345 + timedelta(hours=1)
    assert any("anchored" in n for n in got.notes)


def test_absolute_time_anchors_the_window_live() -> None:
    got = run_intake("ledger-api errors since yesterday at 09:30", now=NOW)
    at = datetime(2025, 8, 2, 9, 30, tzinfo=UTC)
    assert got.onset == at
    assert got.constraints.window_from == at - timedelta(hours=2)
    assert got.constraints.window_to == at + timedelta(hours=1)


def test_since_flag_is_not_overridden_by_an_absolute_time() -> None:
    got = run_intake("ledger-api errors since yesterday at 09:30", now=NOW, since="30m")
    assert got.constraints.window_to == NOW
    assert got.constraints.window_from == NOW - timedelta(minutes=30)
    assert not any("anchored" in n for n in got.notes)


def test_bundle_window_without_a_time_in_the_question() -> None:
    got = run_intake("ledger-api keeps restarting", now=NOW, bundle_window=BUNDLE)
    assert (got.constraints.window_from, got.constraints.window_to) == BUNDLE


# ----------------------------------------------------------------------------- restrictions


def test_only_restricts_services() -> None:
    got = run_intake("only order-service: why are its errors rising", now=NOW)
    assert got.constraints.allowed_services == ["order-service"]
    assert got.constraints.services == ["order-service"]


@pytest.mark.parametrize(
    "question",
    ["order-service only, please", "只看 order-service 的错误", "only for order-service"],
)
def test_restriction_phrasings(question: str) -> None:
    assert detect_restriction(question, []) == ["order-service"]


def test_restriction_after_a_verb() -> None:
    """ "check only order-service": the word before "only" must not swallow it."""
    assert detect_restriction("please check only order-service", []) == ["order-service"]


def test_environment_only_is_not_a_service_restriction() -> None:
    got = run_intake("order-service errors, test environment only", now=NOW)
    assert got.constraints.allowed_services == []
    assert got.constraints.environment == "test"


def test_env_flag_contradicting_the_question() -> None:
    with pytest.raises(UsageError) as err:
        run_intake("order-service errors, test environment only", now=NOW, env="prod")
    text = str(err.value)
    assert "test" in text and "prod" in text


def test_env_flag_agreeing_with_the_question() -> None:
    got = run_intake("order-service errors, test environment only", now=NOW, env="test")
    assert got.constraints.environment == "test"
    assert got.env_source == "flag"


def test_service_flag_outside_the_restriction() -> None:
    with pytest.raises(UsageError) as err:
        run_intake("only order-service please", now=NOW, services=["billing-api"])
    text = str(err.value)
    assert "order-service" in text and "billing-api" in text


def test_service_flag_inside_the_restriction() -> None:
    got = run_intake("only order-service please", now=NOW, services=["order-service"])
    assert got.constraints.allowed_services == ["order-service"]


def test_a_product_named_like_a_domain_is_no_host_asked_about() -> None:
    from opsmate.agent.intake.names import detect_subject

    assert detect_subject("Cal.com (namespace calcom, prod): booking pages error").hosts == []
    assert detect_subject("users of shop.example.com get 502").hosts == ["shop.example.com"]
    assert detect_subject("cal.com is down for everyone").hosts == ["cal.com"]


def test_a_name_said_only_in_a_guess_is_a_suspect_not_the_subject() -> None:
    from opsmate.agent.intake.names import detect_subject

    q = ("links.example.com answers 503 since 02:15. Nobody deployed anything - is the "
         "nightly backup job hogging the database?")  # fmt: skip
    s = detect_subject(q)
    assert s.names == [] and s.kind is None and s.hosts == ["links.example.com"]
    # the only thing named: a yes/no question about it is still about it
    assert detect_subject("Is the checkout service broken?").names == ["checkout"]
    s = detect_subject("orders-api returns 500 since 10:00. Is the redis-cache full?")
    assert s.names == ["orders-api"]


def test_a_guessed_service_gives_way_to_the_namespace_the_question_names() -> None:
    from opsmate.agent.intake.names import detect_subject

    q = ("Nobody can create issues in Plane on staging (namespace plane) since 08:20. Was it "
         "the plane-web release at 08:05?")  # fmt: skip
    s = detect_subject(q, namespace=detect_namespace(q))
    assert s.names == [] and s.namespace == "plane" and s.suspects == ["plane-web"]


def test_a_host_said_only_in_a_later_guess_is_a_suspect() -> None:
    """The question reports the symptom of its own registry, then guesses at the upstream it
    mirrors: the upstream host is checked, not looked up as the front door."""
    from opsmate.agent.intake.names import detect_subject

    q = ("npm install in CI fails with 500s from our internal registry (namespace registry) "
         "since 09:15 - is the uplink to registry.npmjs.org broken?")  # fmt: skip
    s = detect_subject(q, namespace=detect_namespace(q))
    assert s.hosts == [] and s.suspects == ["registry.npmjs.org"]
    # a question that opens with the host asks about it
    s = detect_subject("Is the site at shop.example.com down? checkout pods in namespace web "
                       "look fine", namespace="web")  # fmt: skip
    assert s.hosts == ["shop.example.com"] and s.suspects == []


def test_symptom_words_start_a_word() -> None:
    from opsmate.agent.kinds.registry import candidates

    ids = {c.id for c in candidates("503s on shop (namespace shop-3) since 10:00")}
    assert "disk-full" not in ids  # "space" said inside "namespace"
    assert "disk-full" in {c.id for c in candidates("the volume ran out of space")}
    # "name" is not said by "namespace"; "DNS" is said inside a camel-case name
    assert "policy-blocks-dns" not in {c.id for c in candidates("logs from all namespaces")}
    assert "policy-blocks-dns" in {c.id for c in candidates("CoreDNS was rolled at 09:05")}
    # a browser's words for a certificate it refuses
    assert "certificate-expired" in {
        c.id for c in candidates("people get 'Your connection is not private' on the wiki")
    }


def test_the_questions_candidates_each_get_their_most_telling_read_first() -> None:
    """Breadth first: a failure mode with three reads does not take the question's whole
    read budget from the candidates after it."""
    from opsmate.agent.plan.planner import Planner
    from opsmate.agent.plan.survey import _card_survey
    from opsmate.agent.state import TaskState

    q = "Users get 'Your connection is not private' and connections drop; did the upgrade do it?"
    state = TaskState(goal=q, questions=[q])
    planner = Planner(state, tools=frozenset({"list_objects", "query_metrics"}))
    _card_survey(state, planner, "wiki")
    kinds = [p.args.get("kind") or p.args.get("query") for p in state.pending]
    assert "Certificate" in kinds
    assert sum(1 for k in kinds if "conntrack" in str(k)) == 1  # its most telling read only


def test_a_symptom_word_that_selects_one_failure_mode_ranks_it_before_shared_words() -> None:
    """ "connect" is said by many failure modes (a Service, a policy, a refusal), "drop" by
    few: the card chosen by the rarer word is checked first."""
    from opsmate.agent.kinds.registry import candidates

    ids = [c.id for c in candidates("devices fail to connect to the broker or drop and retry")]
    assert ids[0] == "conntrack-table-full"
    assert {"service-selector-mismatch", "policy-blocks-dependency"} <= set(ids)


def test_a_change_asked_about_after_the_symptom_is_a_suspect_when_the_namespace_is_named() -> None:
    """The question reports the symptom, then asks about a change: what changed is checked,
    not taken as the subject (it stays in the namespace's scope); said in the symptom too,
    it is the subject."""
    from opsmate.agent.intake.names import guessed_only

    q = ("In Mayan EDMS staging (namespace dms) some uploads fail. SeaweedFS was upgraded "
         "last night - did that break S3?")  # fmt: skip
    assert guessed_only(q, ["seaweedfs"], "dms") == ["seaweedfs"]
    assert guessed_only(q, ["seaweedfs"], None) == []  # no namespace: nothing to scope to
    front = (
        "Users get 502 on checkout (namespace shop). We released checkout at 10:00 - did it break?"
    )
    assert guessed_only(front, ["checkout"], "shop") == []


def test_a_change_asked_about_after_a_host_the_symptom_is_on_is_a_suspect() -> None:
    """The question says where the symptom is (a host) and then asks about a change: what
    changed is checked, the host is the subject; without a host or a namespace, the change
    named stays the subject."""
    from opsmate.agent.intake.names import detect_subject

    s = detect_subject("Since 14:05 people on meet.example.com keep getting disconnected. We "
                       "pushed a new jitsi-web config at 10:30 - could that be it?")  # fmt: skip
    assert s.names == [] and s.suspects == ["jitsi-web"] and s.hosts == ["meet.example.com"]
    s = detect_subject("Checkout returns 500s since 10:05. We pushed a new checkout-api build "
                       "at 10:00 - could that be it?")  # fmt: skip
    assert s.names == ["checkout-api"]
    # no namespace and no host, but another name says where the symptom is: the change is
    # the suspect, that name the subject
    s = detect_subject("The report-worker queue has not drained since 02:00. We deployed "
                       "billing-web 1.42 at 01:50 - did that break it?")  # fmt: skip
    assert s.names == ["report-worker"] and s.suspects == ["billing-web"]


def test_the_namespace_of_the_ingress_serving_the_host_asked_about_is_its_scope() -> None:
    from opsmate.agent.intake.subject import Subject
    from opsmate.agent.judge import links
    from opsmate.agent.observe.facts import Fact, ObjRef
    from opsmate.agent.observe.graph import ObjectGraph
    from opsmate.records.k8s_objects import Ingress, IngressBackend

    g = ObjectGraph()
    ing = Ingress(name="meet", namespace="meet", rules=[IngressBackend(host="meet.example.com",
                                                                       service="web")])  # fmt: skip
    g.add("Ingress", ing, "E1")
    subject = Subject(hosts=["meet.example.com"])

    def about(ns: str) -> Fact:
        return Fact(key=ns, statement="x", subject=ObjRef(kind="Pod", name="jvb-1", namespace=ns))

    assert links.relation(about("meet"), subject, g, set(), []) == links.SCOPE
    assert links.relation(about("other"), subject, g, set(), []) == links.UNRELATED


def test_an_object_named_by_the_guess_is_not_read_as_the_subject() -> None:
    from opsmate.agent.intake.names import not_guessed

    found = ["photoprism-mariadb-0", "photoprism"]
    assert not_guessed(found, ["mariadb"]) == ["photoprism"]
    assert not_guessed(found, []) == found
