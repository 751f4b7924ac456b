"""``list_objects`` / ``get_object`` live, with the REAL kubernetes client against the
API-server protocol fixture: every allow-listed kind, GET only, Secrets as
PartialObjectMetadata, one kind forbidden, parity with bundle replay, stopping requests."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from k8s_build import CANARY, NS, malformed_objects, pod, shop_objects

sys.path.insert(0, str(Path(__file__).parents[1] / "sources"))
from k8s_fixture import K8sFixture, write_kubeconfig

import opsmate.tools.kubernetes.transport as k8s_transport
from opsmate.config import Settings, ToolsConfig
from opsmate.tools import schemas as s
from opsmate.tools.audit import AuditLog
from opsmate.tools.base import CallContext, Constraints, ToolFailure
from opsmate.tools.bundle import load_bundle
from opsmate.tools.executor import Executor
from opsmate.tools.k8s_kinds import KIND_NAMES, KINDS
from opsmate.tools.kubernetes.tools import tool_specs
from opsmate.tools.registry import live_registry

PARTIAL = "as=PartialObjectMetadata"


@pytest.fixture
def k8s() -> Iterator[K8sFixture]:
    with K8sFixture(shop_objects()) as fx:
        yield fx


def settings(fx: K8sFixture, tmp_path: Path) -> Settings:
    cfg = write_kubeconfig(tmp_path / "kubeconfig", {"fx": fx.url}, current="fx")
    return Settings(environments={"test": {"kubernetes": {"kubeconfig": str(cfg), "timeout": 5}}})


def executor(fx: K8sFixture, tmp_path: Path, **cons: Any) -> Executor:
    return Executor(
        live_registry(settings(fx, tmp_path)),
        Constraints(environment="test", namespaces=[NS], **cons),
        config=ToolsConfig(max_retries=0),
        audit=AuditLog(tmp_path / "audit.jsonl"),
    )


def ctx() -> CallContext:
    return CallContext(
        call_id="c", constraints=Constraints(environment="test"), now=datetime.now(UTC)
    )


def test_every_kind_lists_and_gets_with_get_only(k8s: K8sFixture, tmp_path: Path) -> None:
    ex = executor(k8s, tmp_path)
    for kind in KIND_NAMES:
        res = ex.call("list_objects", {"kind": kind})
        assert res.status in ("success", "no_data"), (kind, res.error)
        assert res.data["kind"] == kind and res.complete
        assert CANARY not in json.dumps(res.model_dump(mode="json")), kind
        for item in res.data["items"][:1]:
            one = ex.call("get_object", {"kind": kind, "name": item["name"]})
            assert one.status == "success" and one.data["found"], (kind, one.error)
            assert one.data["items"][0] == item, kind
    assert k8s.methods() == {"GET"}
    paths = {r["path"] for r in k8s.requests}
    assert "/apis/networking.k8s.io/v1/namespaces/shop/networkpolicies" in paths
    assert "/apis/storage.k8s.io/v1/storageclasses" in paths
    assert "/apis/autoscaling/v2/namespaces/shop/horizontalpodautoscalers" in paths


def test_secrets_are_read_as_metadata_only(k8s: K8sFixture, tmp_path: Path) -> None:
    ex = executor(k8s, tmp_path)
    listed = ex.call("list_objects", {"kind": "Secret"})
    got = ex.call("get_object", {"kind": "secrets", "name": "cart-db"})
    assert (
        listed.data["items"]
        == got.data["items"]
        == [
            {
                "kind": "Secret",
                "name": "cart-db",
                "namespace": NS,
                "created": "2026-10-21T01:00:00+00:00",
            }
        ]
    )
    secret_requests = [r for r in k8s.requests if "/secrets" in r["path"]]
    assert secret_requests and all(
        PARTIAL in r["headers"].get("accept", "") for r in secret_requests
    )
    others = [r for r in k8s.requests if "/secrets" not in r["path"]]
    assert all(PARTIAL not in r["headers"].get("accept", "") for r in others)


def test_configmaps_give_keys_never_values(k8s: K8sFixture, tmp_path: Path) -> None:
    res = executor(k8s, tmp_path).call("list_objects", {"kind": "cm"})
    assert res.data["items"][0]["keys"] == ["FEATURE_X", "LOG_LEVEL"]
    assert "debug" not in json.dumps(res.data)


def test_a_403_on_one_kind_leaves_the_others_usable(k8s: K8sFixture, tmp_path: Path) -> None:
    k8s.forbidden_resources = {"secrets"}
    ex = executor(k8s, tmp_path)
    denied = ex.call("list_objects", {"kind": "Secret"})
    assert denied.status == "error" and denied.error and denied.error.code == "auth"
    assert 'cannot list resource "secrets"' in denied.error.message
    for kind in ("ConfigMap", "Service", "StorageClass"):
        assert ex.call("list_objects", {"kind": kind}).status == "success", kind
    assert ex.call("list_pods", {}).status == "success"


def test_absent_object_versus_resource_not_served(k8s: K8sFixture, tmp_path: Path) -> None:
    ex = executor(k8s, tmp_path)
    missing = ex.call("get_object", {"kind": "Secret", "name": "nope"})
    assert missing.status == "no_data" and missing.error is None and missing.data["found"] is False
    cluster = ex.call("get_object", {"kind": "IngressClass", "name": "nope"})
    assert cluster.status == "no_data" and cluster.data["found"] is False
    from k8s_fixture import RESOURCES

    old = RESOURCES.pop("horizontalpodautoscalers")
    try:  # an older server: the resource itself is not served (404 without a name)
        res = ex.call("get_object", {"kind": "hpa", "name": "cart"})
        listed = ex.call("list_objects", {"kind": "hpa"})
    finally:
        RESOURCES["horizontalpodautoscalers"] = old
    assert res.status == "error" and res.error and res.error.code == "not_available"
    assert listed.error and listed.error.code == "not_available"


def test_scope_is_enforced_before_any_request(k8s: K8sFixture, tmp_path: Path) -> None:
    ex = executor(k8s, tmp_path)
    res = ex.call("list_objects", {"kind": "Secret", "namespace": "kube-system"})
    assert res.status == "rejected" and res.error and res.error.code == "forbidden_scope"
    assert k8s.requests == []


def test_live_answers_equal_bundle_replay(k8s: K8sFixture, tmp_path: Path) -> None:
    """Served by the fixture or replayed from a bundle, the same objects read the same."""
    root = tmp_path / "bundle"
    (root / "k8s").mkdir(parents=True)
    (root / "bundle.yaml").write_text(
        yaml.safe_dump(
            {
                "format": "opsmate-bundle/v1",
                "title": "shop",
                "environment": "test",
                "captured_at": "2026-10-21T01:00:00Z",
                "window": {"from": "2026-10-21T00:00:00Z", "to": "2026-10-21T01:00:00Z"},
            }
        )
    )
    (root / "k8s" / "all.yaml").write_text(yaml.safe_dump_all(shop_objects()))
    replay = {sp.name: sp for sp in load_bundle(root).tool_specs()}
    live = {sp.name: sp for sp in tool_specs(settings(k8s, tmp_path))}
    c = CallContext(
        call_id="c",
        constraints=Constraints(environment="test", namespaces=[NS]),
        now=datetime(2026, 10, 21, 1, tzinfo=UTC),
    )
    for kind in KIND_NAMES:
        got = live["list_objects"].run(s.ListObjectsArgs(kind=kind), c)
        want = replay["list_objects"].run(s.ListObjectsArgs(kind=kind), c)
        assert got.data == want.data, kind
        assert got.source_refs == want.source_refs, kind
    g1 = live["get_object"].run(s.GetObjectArgs(kind="Ingress", name="cart"), c)
    g2 = replay["get_object"].run(s.GetObjectArgs(kind="Ingress", name="cart"), c)
    assert g1.data == g2.data and KINDS["Ingress"].namespaced


def test_wrongly_typed_fields_never_answer_internal(tmp_path: Path) -> None:
    with K8sFixture([*malformed_objects(), pod("good-1", {"app": "good"})]) as fx:
        ex = executor(fx, tmp_path)
        for tool, args in [
            ("list_pods", {}),
            ("node_conditions", {}),
            ("rollout_history", {"name": "odd"}),
            ("get_events", {}),
            ("list_objects", {"kind": "Service"}),
            ("list_objects", {"kind": "NetworkPolicy"}),
            ("list_objects", {"kind": "Deployment"}),
        ]:
            res = ex.call(tool, args)
            assert res.status in ("success", "no_data"), (tool, res.error)


def test_a_hung_request_is_stopped_at_once(k8s: K8sFixture, tmp_path: Path) -> None:
    """abort_inflight (what Ctrl-C and the process ending run) ends a request blocked on a
    server that never answers: the call fails as ``interrupted`` instead of waiting."""
    k8s.mode = "hang"
    spec = {sp.name: sp for sp in tool_specs(settings(k8s, tmp_path))}["list_objects"]
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            spec.run(s.ListObjectsArgs(kind="Service", namespace=NS), ctx())
        except ToolFailure as exc:
            box["exc"] = exc

    t = threading.Thread(target=work, daemon=True)
    t.start()
    deadline = time.monotonic() + 5
    while not k8s.requests and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.1)
    assert k8s_transport.inflight() >= 1
    started = time.monotonic()
    k8s_transport.abort_inflight()
    t.join(3)
    assert not t.is_alive() and time.monotonic() - started < 1.0
    assert box["exc"].code == "interrupted" and not box["exc"].retryable
    k8s.mode = "ok"  # the next call reconnects and works
    out = spec.run(s.ListObjectsArgs(kind="Service", namespace=NS), ctx())
    assert out.status == "success"
