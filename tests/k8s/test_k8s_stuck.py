"""Stuck, not failing: an invalid CronJob schedule, a suspended Job, a Job held open by a
sidecar, a pod bound to a node that does not exist — on objects of our own, fed through
the analyzer registry."""

from __future__ import annotations

from k8s_build import NS, obj
from k8s_observe import Feed

from opsmate.agent.kinds import card_for
from opsmate.agent.observe.analyzers.k8s_stuck import cron_problem
from opsmate.agent.observe.facts import FactKind as K


def test_cron_schedules() -> None:
    for ok in ("*/5 * * * *", "0 3 * * mon-fri", "@daily", "CRON_TZ=UTC 0 3 * * *"):
        assert cron_problem(ok) is None, ok
    assert "5" in (cron_problem("0 3 * *") or "")
    assert "out of range" in (cron_problem("0 25 * * *") or "")


def test_invalid_schedule_and_suspended_job() -> None:
    f = Feed()
    f.objects("CronJob", [obj("CronJob", "report", spec={"schedule": "0 25 * * *"})])
    f.objects("Job", [obj("Job", "backfill", spec={"suspend": True}, status={})])
    by = {x.reason: x for x in f.facts(K.MISCONFIGURATION)}
    assert "not a valid cron expression" in by["InvalidSchedule"].statement
    assert card_for(by["InvalidSchedule"]).id == "cronjob-not-scheduling"
    assert "creates no pods" in by["Suspended"].statement
    assert card_for(by["Suspended"]).id == "job-suspended"


def test_a_sidecar_holds_the_job_open() -> None:
    f = Feed()
    f.objects("Job", [obj("Job", "migrate", status={"active": 1})])
    pod = obj(
        "Pod", "migrate-x",
        metadata={"ownerReferences": [{"kind": "Job", "name": "migrate"}]},
        spec={"containers": [{"name": "migrate"}, {"name": "istio-proxy"}]},
        status={"phase": "Running", "containerStatuses": [
            {"name": "migrate", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
            {"name": "istio-proxy", "ready": True,
             "state": {"running": {"startedAt": "2026-10-21T01:00:00Z"}}},
        ]},
    )  # fmt: skip
    f.pods([pod])
    [fact] = [x for x in f.facts(K.MISCONFIGURATION) if x.reason == "SidecarNeverExits"]
    assert "container istio-proxy keeps running" in fact.statement
    assert card_for(fact).id == "job-sidecar-never-exits"


def test_a_pod_bound_to_a_node_that_does_not_exist() -> None:
    f = Feed()
    f.pods([obj("Pod", "web-1", spec={"nodeName": "node-9", "containers": [{"name": "w"}]},
                status={"phase": "Pending"})])  # fmt: skip
    assert f.facts(K.SCHEDULING) == []  # the node is not proven absent yet
    f.nodes([obj("Node", "node-1", None), obj("Node", "node-2", None)])
    [fact] = f.facts(K.SCHEDULING)
    assert "bound to node `node-9`" in fact.statement and fact.conclusive
    assert card_for(fact).id == "node-name-missing"
    assert fact.subject is not None and fact.subject.namespace == NS
