"""General readings the failure-mode work added: a namespace word is not a service, a
cause on an object the subject's pods refer to is deeper than their scheduling failure,
and a namespace-wide question's stated symptom selects its causes."""

from __future__ import annotations

from datetime import UTC, datetime

from opsmate.agent.intake.question import detect_services
from opsmate.agent.judge.candidates import Candidate
from opsmate.agent.judge.chains import _is_deeper
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.records.k8s import Pod, Volume

T = datetime(2026, 1, 1, 10, tzinfo=UTC)


def test_a_word_said_as_the_namespace_is_not_a_service() -> None:
    known = ["gitea", "gitea-http"]
    assert detect_services("pods pending in namespace gitea (test)", known) == []
    assert detect_services("gitea namespace: pods pending", known) == []
    assert detect_services("ns: gitea, runners stuck", known) == []
    assert detect_services("gitea returns 500 in namespace shop", known) == ["gitea"]


def test_a_claims_provisioning_failure_is_deeper_than_the_pods_unbound_claim() -> None:
    g = ObjectGraph()
    claim = Volume(name="data", type="persistentVolumeClaim", ref_name="data-runner-0")
    pod = Pod(name="runner-0", namespace="ci", volumes=[claim])
    g.add("Pod", pod, "E1")
    sched = Fact(key="a", statement="s", kind=FactKind.SCHEDULING, reason="FailedScheduling",
                 quote="0/4 nodes are available: pod has unbound immediate PersistentVolumeClaims",
                 subject=ObjRef(kind="Pod", name="runner-0", namespace="ci"), time=T)  # fmt: skip
    prov = Fact(key="b", statement="s", kind=FactKind.MISCONFIGURATION, reason="ProvisioningFailed",
                quote="failed to provision volume: permission denied", time=T,
                subject=ObjRef(kind="PersistentVolumeClaim", name="data-runner-0",
                               namespace="ci"))  # fmt: skip
    shallow, deep = Candidate(lead=sched, relation="scope"), Candidate(lead=prov, relation="scope")
    assert _is_deeper(shallow, deep, g)
    other = prov.model_copy(
        update={"subject": ObjRef(kind="PersistentVolumeClaim", name="x", namespace="ci")}
    )
    assert not _is_deeper(shallow, Candidate(lead=other, relation="scope"), g)
