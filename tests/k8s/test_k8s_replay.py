"""``list_objects`` / ``get_object`` replayed from bundles, and bundles with malformed objects."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from k8s_build import CANARY, NS, malformed_objects, obj, pod, shop_objects

from opsmate.config import ToolsConfig
from opsmate.tools.audit import AuditLog
from opsmate.tools.base import Constraints, ToolResult
from opsmate.tools.bundle import load_bundle
from opsmate.tools.executor import Executor
from opsmate.tools.registry import ToolRegistry

OPSMATE = Path(sys.executable).parent / "opsmate"
BUNDLE_YAML = {
    "format": "opsmate-bundle/v1",
    "title": "shop",
    "captured_at": "2026-10-21T02:00:00Z",
    "window": {"from": "2026-10-21T01:00:00Z", "to": "2026-10-21T02:00:00Z"},
    "environment": "test",
}


def write_bundle(root: Path, objects: list[dict[str, Any]]) -> Path:
    (root / "k8s").mkdir(parents=True)
    (root / "bundle.yaml").write_text(yaml.safe_dump(BUNDLE_YAML), encoding="utf-8")
    (root / "k8s" / "objects.yaml").write_text(yaml.safe_dump_all(objects), encoding="utf-8")
    return root


def executor(root: Path, tmp_path: Path, namespaces: tuple[str, ...] = ()) -> Executor:
    b = load_bundle(root)
    return Executor(
        ToolRegistry(b.tool_specs()),
        Constraints(environment="test", namespaces=list(namespaces)),
        config=ToolsConfig(max_retries=0),
        now=b.meta.captured_at,
        audit=AuditLog(tmp_path / "audit.jsonl"),
    )


@pytest.fixture
def shop(tmp_path: Path) -> Executor:
    return executor(write_bundle(tmp_path / "b", shop_objects()), tmp_path)


def test_lists_and_gets_every_kind_the_bundle_holds(shop: Executor) -> None:
    for kind in (
        "Service",
        "svc",
        "NetworkPolicy",
        "pvc",
        "StorageClass",
        "Secret",
        "Role",
        "ClusterRoleBinding",
        "hpa",
        "Job",
        "CronJob",
        "DaemonSet",
        "Node",
        "Namespace",
    ):
        res = shop.call("list_objects", {"kind": kind})
        assert res.status == "success", (kind, res.error)
        assert res.data["count"] == len(res.data["items"]) >= 1 and res.complete
        assert CANARY not in json.dumps(res.model_dump(mode="json"))
    got = shop.call("get_object", {"kind": "Ingress", "name": "cart", "namespace": NS})
    assert (
        got.status == "success"
        and got.data["found"]
        and got.data["items"][0]["class_name"] == "nginx"
    )
    assert got.source_refs == ["k8s://shop/Ingress/cart"]
    sc = shop.call("get_object", {"kind": "StorageClass", "name": "standard"})
    assert sc.source_refs == ["k8s://_cluster/StorageClass/standard"]


def test_a_missing_object_of_a_held_kind_is_proven_absent(shop: Executor) -> None:
    res = shop.call("get_object", {"kind": "Secret", "name": "nope", "namespace": NS})
    assert res.status == "no_data" and res.error is None
    assert res.data["found"] is False and res.data["items"] == []


def test_a_kind_the_bundle_lacks_is_not_available(tmp_path: Path) -> None:
    ex = executor(write_bundle(tmp_path / "b", shop_objects()[:3]), tmp_path)
    res = ex.call("list_objects", {"kind": "IngressClass"})
    assert res.status == "no_data" and res.error and res.error.code == "not_available"
    assert res.data["kinds_held"] == ["Endpoints", "Pod", "Service"]
    assert "holds no IngressClass" in res.error.message and "Pod" in res.error.message
    other_ns = ex.call("get_object", {"kind": "Service", "name": "cart", "namespace": "billing"})
    assert other_ns.error and other_ns.error.code == "not_available"
    assert "only in namespace(s) shop" in other_ns.error.message


def test_selector_namespace_and_bad_arguments(shop: Executor) -> None:
    res = shop.call("list_objects", {"kind": "Deployment", "label_selector": "app in (cart)"})
    assert [i["name"] for i in res.data["items"]] == ["cart"]
    assert (
        shop.call("list_objects", {"kind": "Deployment", "label_selector": "app=none"}).status
        == "no_data"
    )
    bad = shop.call("list_objects", {"kind": "Deployment", "label_selector": "app in (x"})
    assert bad.status == "error" and bad.error and bad.error.code == "bad_request"
    for args in ({"kind": "Widget"}, {"kind": "Secret", "verb": "delete"}, {"kind": "Secret"}):
        tool = "get_object" if args.get("kind") == "Secret" and len(args) == 1 else "list_objects"
        r = shop.call(tool, args)
        assert r.status == "rejected" and r.error and r.error.code == "invalid_arguments", args


def test_tool_list_shows_the_new_tools(repo_root: Path) -> None:
    out = subprocess.run(
        [str(OPSMATE), "tool", "--list", "--json"],
        capture_output=True,
        text=True,
        cwd=repo_root,
        timeout=60,
    )
    tools = {t["name"]: t for t in json.loads(out.stdout)}
    for name in ("list_objects", "get_object"):
        schema = tools[name]["parameters"]
        assert "Secret" in schema["properties"]["kind"]["enum"], name
        assert "environment" in schema["properties"]
    assert tools["get_object"]["parameters"]["required"] == ["kind", "name"]


def test_malformed_objects_never_answer_internal(tmp_path: Path) -> None:
    """Wrongly typed fields (labels as a list, ``spec`` as text) give views with those
    fields empty, never an ``internal`` error."""
    objs = [*malformed_objects(), pod("good-1", {"app": "good"}), obj("Node", "node-ok", None)]
    ex = executor(write_bundle(tmp_path / "b", objs), tmp_path)
    calls = [
        ("list_pods", {}),
        ("list_pods", {"label_selector": "app=odd"}),
        ("get_events", {}),
        ("node_conditions", {}),
        ("node_conditions", {"name": "node-odd"}),
        ("rollout_history", {"name": "odd"}),
        ("list_objects", {"kind": "Service"}),
        ("list_objects", {"kind": "NetworkPolicy"}),
        ("list_objects", {"kind": "Deployment"}),
        ("list_objects", {"kind": "Pod"}),
        ("get_object", {"kind": "ReplicaSet", "name": "odd-1a2b3"}),
    ]
    results: list[ToolResult] = [ex.call(t, a) for t, a in calls]
    for (tool, args), res in zip(calls, results, strict=True):
        assert res.status in ("success", "no_data"), (tool, args, res.error)
    pods = {p["name"]: p for p in results[0].data["pods"]}
    assert pods["odd-1"]["labels"] == {} and pods["good-1"]["labels"] == {"app": "good"}


def test_diagnose_on_a_bundle_of_malformed_objects_is_not_internal(
    tmp_path: Path, repo_root: Path
) -> None:
    root = write_bundle(tmp_path / "b", [*malformed_objects(), pod("good-1", {"app": "good"})])
    out = subprocess.run(
        [
            str(OPSMATE),
            "diagnose",
            "why is odd not running",
            "--bundle",
            str(root),
            "--model",
            "none",
            "--json",
            "--timeout",
            "60",
        ],
        capture_output=True,
        text=True,
        cwd=repo_root,
        timeout=120,
    )
    assert out.returncode in (0, 1), out.stderr[-2000:]
    report = json.loads(out.stdout)
    assert report["status"] in ("complete", "partial")
    assert not [c for c in report["tool_calls"] if c["status"] == "error"], report["tool_calls"]
