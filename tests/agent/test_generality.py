"""General readings that blind incidents showed were missing, one capability per test: start-up
transients of a rolling update, wrapped errors cut before their cause, the node condition
behind evictions, init containers holding a pod, application-wide labels, connect timeouts,
request-only rollouts. None names an incident's data."""

from __future__ import annotations

from datetime import UTC, datetime

from opsmate.agent.judge.transients import passed_after_start
from opsmate.agent.observe.facts import Fact, ObjRef
from opsmate.agent.observe.facts import FactKind as K

T = datetime(2026, 3, 13, 11, 7, tzinfo=UTC)


def probe(pod: str, minute: int = 7) -> Fact:
    return Fact(
        key=f"probe:{pod}",
        statement="Readiness probe failed",
        kind=K.PROBE_FAILURE,
        subject=ObjRef(kind="Pod", name=pod, namespace="shop"),
        time=T.replace(minute=minute),
        last_time=T.replace(minute=minute, second=20),
        count=2,
    )


def scaled(message: str, minute: int) -> Fact:
    return Fact(
        key=f"scale:{message}",
        statement=f"1 ScalingReplicaSet event on Deployment web: {message}",
        reason="ScalingReplicaSet",
        message=message,
        time=T.replace(minute=minute),
    )


def test_failures_then_the_old_replicaset_scaled_down_were_start_up() -> None:
    f = probe("web-6f7d8c9b5-x2x9z")
    old_down = scaled("Scaled down replica set web-5d9f8c7b6 to 0 from 1", 8)
    assert passed_after_start(f, [f, old_down])


def test_without_a_later_scale_down_the_failures_stand() -> None:
    f = probe("web-6f7d8c9b5-x2x9z")
    before = scaled("Scaled down replica set web-5d9f8c7b6 to 0 from 1", 5)  # earlier
    own = scaled("Scaled down replica set web-6f7d8c9b5 to 0 from 1", 9)  # its own RS
    other = scaled("Scaled down replica set api-5d9f8c7b6 to 0 from 1", 9)  # another app
    up = scaled("Scaled up replica set web-6f7d8c9b5 to 1", 9)
    for facts in ([f], [f, before], [f, own], [f, other], [f, up]):
        assert not passed_after_start(f, facts)


def test_only_probe_failures_of_pods_count() -> None:
    f = probe("web-6f7d8c9b5-x2x9z").model_copy(update={"kind": K.LOG_ERROR})
    down = scaled("Scaled down replica set web-5d9f8c7b6 to 0 from 1", 8)
    assert not passed_after_start(f, [f, down])
    bare = probe("standalone")  # no ReplicaSet in the name
    assert not passed_after_start(bare, [bare, down])


def test_a_long_wrapped_error_keeps_its_innermost_cause() -> None:
    from opsmate.agent.observe.text import clip_wrapped

    msg = (
        'Failed to pull image "reg.example/app:1": failed to resolve reference '
        '"reg.example/app:1": failed to authorize: unexpected status from GET request to '
        "https://reg.example/service/token?scope=repository%3Aapp%3Apull: 401 Unauthorized"
    )
    out = clip_wrapped(msg, 100)
    assert out.startswith("Failed to pull image") and out.endswith(" … 401 Unauthorized")
    assert len(out) <= 100
    assert clip_wrapped("short: text", 100) == "short: text"
    assert clip_wrapped("no clauses " * 20, 50).endswith(" …")  # plain clip


def test_the_node_condition_behind_an_eviction_signal_is_named() -> None:
    from opsmate.agent.observe.k8s_messages import pressure_condition

    assert pressure_condition("EvictionThresholdMet", "Attempting to reclaim ephemeral-storage")
    assert (
        pressure_condition("EvictionThresholdMet", "Attempting to reclaim nodefs") == "DiskPressure"
    )
    assert pressure_condition("EvictionThresholdMet", "Attempting to reclaim memory") == (
        "MemoryPressure"
    )
    assert pressure_condition("NodeHasDiskPressure", "x") == "DiskPressure"
    assert pressure_condition("Evicted", "The node was low on resource: memory") is None


def test_a_scheduled_pod_waiting_on_its_init_container_says_what_it_waits_for() -> None:
    from opsmate.agent.observe.analyzers.pods import _pod_findings
    from opsmate.records.k8s import Container, Pod

    pod = Pod(
        name="web-6f7d8c9b5-x2x9z",
        phase="Pending",
        node="node-1",
        init_containers=[
            Container(
                name="wait-for-db",
                init=True,
                state="running",
                started_at=T,
                command=["sh", "-c", "until pg_isready -h accounts-db -p 5432; do sleep 2; done"],
            )
        ],
        containers=[Container(name="web", state="waiting", reason="PodInitializing")],
    )
    (finding,) = [f for f in _pod_findings(pod) if f.kind == K.POD_PENDING]
    assert "init container wait-for-db" in finding.what and "accounts-db" in finding.what
    assert finding.reason == "InitContainerRunning"
    unscheduled = pod.model_copy(update={"node": None})
    (plain,) = [f for f in _pod_findings(unscheduled) if f.kind == K.POD_PENDING]
    assert plain.reason == "Pending"


def test_an_application_label_shared_by_workloads_is_not_a_service() -> None:
    from opsmate.agent.observe.analyzers.pods import app_of
    from opsmate.records.k8s import Pod

    pod = Pod(
        name="teastore-webui-6f7d8c9b5-x2x9z",
        labels={"app": "teastore", "run": "teastore-webui"},
        owner="ReplicaSet/teastore-webui-6f7d8c9b5",
    )
    assert app_of(pod) == "teastore-webui"
    plain = pod.model_copy(update={"labels": {"app": "web"}})
    assert app_of(plain) == "web"  # an app label that is the service's own name stays


def test_a_connect_timeout_names_a_dependency_failure() -> None:
    from opsmate.loganalysis.signals import classify

    sig = classify("java.net.SocketTimeoutException: Connect timed out at org.glassfish")
    assert (sig.kind, sig.reason) == ("dependency", "timeout")
    assert classify("request timed out after 30s").kind is None  # whose? nothing says
    pool = "PoolTimeout: QueuePool limit of size 10 overflow 0 reached, connection timed out"
    assert classify(pool).kind == "saturation"  # waiting for the pool, not a connect


def test_a_rollout_that_changed_only_requests_explains_no_other_workloads_symptom() -> None:
    from opsmate.agent.judge.candidates import _requests_only

    bump = Fact(
        key="rollout:email:3",
        statement="rolled out",
        kind=K.CHANGE,
        detail={"template_changes": ["container server: memory request 64Mi -> 96Mi"]},
    )
    assert _requests_only(bump)
    env = bump.model_copy(
        update={"detail": {"template_changes": ["container server: env PORT '8080' -> '9090'"]}}
    )
    assert not _requests_only(env)
    assert not _requests_only(bump.model_copy(update={"detail": {}}))


def test_an_ingress_names_the_services_it_routes_to() -> None:
    from opsmate.agent.session.sources import _ingress_backends

    ing = {
        "kind": "Ingress",
        "metadata": {"name": "Shop-Web"},
        "spec": {
            "defaultBackend": {"service": {"name": "web-svc", "port": {"number": 80}}},
            "rules": [
                {"http": {"paths": [{"path": "/api", "backend": {"service": {"name": "api"}}}]}},
                {"http": {"paths": [{"backend": {"serviceName": "legacy", "servicePort": 80}}]}},
            ],
        },
    }
    assert _ingress_backends([ing, {"kind": "Service"}]) == {
        "shop-web": ["web-svc", "api", "legacy"]
    }
