"""What log lines mean: an application that logs the API server's refusal it got back (a
Status body quoted as JSON, at WARN) is that refusal, named in the root cause; a batch run's
steps that take seconds wait on no dependency unless a line says they are slow."""

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
    "[2026-03-24 13:40:23,026] [WARN] [discovery.KubeApiLookup] - Forbidden to list peers "
    f"from the Kubernetes API server. Response: {STATUS}"
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


def test_a_batch_runs_steps_taking_seconds_wait_on_no_dependency_unless_said_slow() -> None:
    from opsmate.agent.observe.analyzers.logs import _latency_facts
    from opsmate.records.k8s import Pod
    from opsmate.records.logs import LatencyStat

    ctx = ObserveContext(eid="E1")
    ctx.graph.add("Pod", Pod(name="marts-2947-b92q2", namespace="etl", owner="Job/marts-2947"),
                  "E0")  # fmt: skip
    step = LatencyStat(
        key="<num> of <num> OK created sql model <*> in <dur>",
        service="marts",
        count=40,
        p50_ms=4500,
        p99_ms=8700,
        example="45 of 60 OK created sql table model marts.orders in 8.70s",
    )
    kinds = {f.kind for f in _latency_facts(step, ctx, None, None, [step])}
    assert K.DEPENDENCY_FAILURE not in kinds and K.LATENCY in kinds
    said = step.model_copy(update={"example": "slow statement on sql partition 4 took 48s"})
    kinds = {f.kind for f in _latency_facts(said, ctx, None, None, [said])}
    assert K.DEPENDENCY_FAILURE in kinds
    server = ObserveContext(eid="E1")  # a server's pods (a Deployment's): the same steps wait
    server.graph.add("Pod", Pod(name="marts-5d8f9-x2x1a", namespace="etl",
                                owner="ReplicaSet/marts-5d8f9"), "E0")  # fmt: skip
    kinds = {f.kind for f in _latency_facts(step, server, None, None, [step])}
    assert K.DEPENDENCY_FAILURE in kinds


def test_durations_that_did_not_grow_and_nobody_asked_about_are_context() -> None:
    """How long work always takes (no shift, no line calling it slow, a question not about
    slowness) is information; asked about, or grown, it is a symptom to explain."""
    from opsmate.agent.observe.analyzers.logs import _latency_facts
    from opsmate.records.logs import LatencyStat

    task = LatencyStat(
        key="Task <*> succeeded in <dur>",
        service="worker",
        count=363,
        p50_ms=254,
        p99_ms=5860,
        example="Task report succeeded in 5.86s",
    )
    [fact] = [f for f in _latency_facts(task, ObserveContext(eid="E1"), None, None, [task])
              if f.kind == K.LATENCY]  # fmt: skip
    assert fact.severity == "info"
    asked = ObserveContext(eid="E1", subject=Subject(names=["worker"], symptom=K.LATENCY))
    [fact] = [f for f in _latency_facts(task, asked, None, None, [task]) if f.kind == K.LATENCY]
    assert fact.severity == "warning"


_LOCK_WAIT = (
    "process 45923 still waiting for RowExclusiveLock on relation 16412 of database 16384 "
    "after 1000.837 ms"
)


def _search(*items: dict[str, str]) -> ToolResult:
    return ToolResult(call_id="c1", tool="search_logs", status="success",
                      data={"items": list(items)})  # fmt: skip


def test_a_lock_wait_the_database_logs_as_information_is_lock_contention() -> None:
    """PostgreSQL writes its lock waits (log_lock_waits) at LOG level: the card says its words
    are the failure whatever the level, so the line is a warning and a cause; an ordinary
    information line beside it stays nothing."""
    from opsmate.agent.kinds import Role, role

    res = _search(
        {"@timestamp": "2026-02-05T16:19:56Z", "service": "postgres", "level": "info",
         "message": f"2026-02-05 16:19:56.730 UTC [45923] LOG:  {_LOCK_WAIT}"},
        {"@timestamp": "2026-02-05T16:20:56Z", "service": "postgres", "level": "info",
         "message": "2026-02-05 16:20:56.730 UTC [31] LOG:  checkpoint starting: time"},
    )  # fmt: skip
    facts = observe(res, ObserveContext(eid="E1"))
    [fact] = facts
    assert fact.kind == K.LOG_WARNING and fact.severity == "warning"
    assert card_for(fact).id == "db-lock-contention-warning" and role(fact) == Role.CAUSE


def test_a_cloudnativepg_record_is_read_by_its_own_message_and_severity() -> None:
    """CloudNativePG wraps every PostgreSQL record in {"msg": "record", "record": {...}}: the
    record's message and error_severity are the line's, not the wrapper's "record"."""
    import json

    def wrapped(severity: str, message: str) -> str:
        return json.dumps({"level": "info", "logger": "postgres", "msg": "record",
                           "record": {"error_severity": severity, "message": message,
                                      "sql_state_code": "00000"}})  # fmt: skip

    res = _search(
        {"@timestamp": "2026-02-05T16:19:56Z", "service": "db", "level": "info",
         "message": wrapped("LOG", _LOCK_WAIT)},
        {"@timestamp": "2026-02-05T16:20:06Z", "service": "db", "level": "info",
         "message": wrapped("FATAL", 'password authentication failed for user "app"')},
    )  # fmt: skip
    facts = observe(res, ObserveContext(eid="E1"))
    lock = [f for f in facts if "still waiting for RowExclusiveLock" in (f.quote or "")]
    auth = [f for f in facts if "password authentication failed" in (f.quote or "")]
    assert lock and card_for(lock[0]).id == "db-lock-contention-warning"
    assert auth and auth[0].severity == "error"  # FATAL inside the record, "info" outside


def test_a_running_pods_warning_that_names_a_failure_mode_is_an_error_that_happened() -> None:
    """A consumer that logs its broker's refusal at WARN and goes on running: the line names
    a failure mode (a broker ACL), so it is a logged error its card names; a plain warning
    is not."""
    lines = [
        "2025-10-14T13:55:20Z INFO  Kafka consumer started",
        "2025-10-14T13:55:26Z WARN  KafkaCollectorWorker : Unexpected error in polling loop spans\n"
        "org.apache.kafka.common.errors.GroupAuthorizationException: Not authorized to access "
        "group: zipkin",
        "2025-10-14T13:55:27Z WARN  slow request to /api/v2/services took 1200 ms",
    ]
    res = ToolResult(call_id="c1", tool="pod_logs", status="success",
                     data={"lines": lines, "container": "zipkin"},
                     args={"name": "zipkin-7d-x2x1q", "namespace": "tracing"})  # fmt: skip
    facts = [f for f in observe(res, ObserveContext(eid="E1")) if f.kind == K.LOG_ERROR]
    [fact] = facts
    assert "GroupAuthorizationException" in fact.statement and fact.detail.get("verbatim")
    assert card_for(fact).id == "queue-acl-denied"


def test_a_database_that_logs_its_failing_archiver_at_log_level_warns() -> None:
    from opsmate.agent.kinds.registry import logged_at_any_level

    assert logged_at_any_level("UTC [71] LOG:  archive command failed with exit code 1")
    assert not logged_at_any_level("UTC [71] LOG:  checkpoint complete: wrote 12 buffers")


def test_a_teams_own_database_build_is_a_database() -> None:
    from opsmate.agent.plan.rules.logs import _database_image

    assert _database_image("registry.example/platform/postgres-walg:15.10-walg3.0.5")
    assert _database_image("docker.io/bitnami/postgresql:16.2")
    assert not _database_image("ghcr.io/shop/order-service:1.4")
    assert not _database_image("quay.io/prometheuscommunity/postgres-exporter:v0.16.0")


def test_last_words_quote_the_first_error_of_the_run_and_skip_empty_lines() -> None:
    """A boot step fails, then the runtime prints its crash report: the failed step is what
    set it off and is quoted; empty error lines and banner rules are not key lines."""
    lines = [
        "2024-07-16 03:36:15.370 [info] <0.230.0> Running boot step feature_flags",
        "2024-07-16 03:36:16.600 [error] <0.235.0> Feature flags: `x`: required feature "
        "flag not enabled! It must be enabled before upgrading.",
        "2024-07-16 03:36:16.610 [error] <0.235.0> Failed to initialize feature flags registry",
        "2024-07-16 03:36:16.700 [error] <0.235.0> ",
        "2024-07-16 03:36:16.700 [error] <0.235.0> BOOT FAILED",
        "2024-07-16 03:36:16.700 [error] <0.235.0> ===========",
        "2024-07-16 03:36:16.700 [error] <0.235.0> Error during startup: {error,failed}",
        "2024-07-16 03:36:17.700 [error] <0.229.0>   crasher: initial call: application_master",
        "Kernel pid terminated (application_controller) ({application_start_failure,rabbit})",
    ]
    res = ToolResult(call_id="c1", tool="pod_logs", status="success",
                     data={"lines": lines, "container": "rabbitmq"},
                     args={"name": "mq-0", "namespace": "shop", "previous": True})  # fmt: skip
    [fact] = [f for f in observe(res, ObserveContext(eid="E1")) if f.kind == K.LAST_WORDS]
    keys = fact.detail["key_lines"]
    assert "required feature flag not enabled" in keys[0]
    assert not any(k.strip().endswith(("<0.235.0>", "=====")) for k in keys), keys
    assert len(keys) == 4 and "crasher" in keys[-1]
