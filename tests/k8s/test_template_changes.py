"""What a revision changed in its pod template (rollout_history ``changes``)."""

from __future__ import annotations

from typing import Any

from opsmate.tools.kubernetes.shaping import rollout_history
from opsmate.tools.kubernetes.shaping_template import template_changes


def rs(rev: int, env: list[dict[str, Any]], image: str = "img:1", mem: str = "256Mi") -> dict:
    return {
        "metadata": {
            "name": f"web-{rev}",
            "annotations": {"deployment.kubernetes.io/revision": str(rev)},
            "creationTimestamp": f"2026-05-04T10:0{rev}:00Z",
        },
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": image,
                            "env": env,
                            "resources": {"limits": {"memory": mem}},
                        }
                    ]
                }
            }
        },
    }


def test_env_image_and_resources_changes_are_named() -> None:
    a = rs(1, [{"name": "BUCKET", "value": "media"}, {"name": "MODE", "value": "fast"}])
    b = rs(
        2,
        [
            {"name": "BUCKET", "value": "media-eu"},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "t"}}},
        ],
        image="img:2",
        mem="128Mi",
    )
    out = template_changes(a, b)
    assert "container app: image img:1 -> img:2" in out
    assert "container app: env BUCKET 'media' -> 'media-eu'" in out
    assert "container app: env MODE removed (was 'fast')" in out
    assert "container app: env TOKEN added (from Secret creds/t)" in out
    assert "container app: memory limit 256Mi -> 128Mi" in out
    assert template_changes(a, a) == []


def test_rollout_history_carries_each_revisions_changes() -> None:
    a = rs(1, [{"name": "BUCKET", "value": "media"}])
    b = rs(2, [{"name": "BUCKET", "value": "media-eu"}])
    hist = rollout_history(None, [b, a])  # any order in, oldest first out
    assert [r["revision"] for r in hist["revisions"]] == [1, 2]
    assert "changes" not in hist["revisions"][0]
    assert hist["revisions"][1]["changes"] == ["container app: env BUCKET 'media' -> 'media-eu'"]


def test_malformed_templates_give_no_changes_and_no_error() -> None:
    assert template_changes({"spec": "x"}, {"spec": {"template": []}}) == []
    assert template_changes(None, rs(1, [])) == ["container app added"]


def test_container_ports_are_compared() -> None:
    a = rs(1, [])
    b = rs(2, [])
    a["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 8080}]
    b["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 9090}]
    assert "container app: ports 8080 -> 9090" in template_changes(a, b)


def test_a_rollout_restart_is_named_and_read_as_routine() -> None:
    from datetime import UTC, datetime

    from opsmate.agent.observe.analyzers.rollouts import rollouts
    from opsmate.agent.observe.context import ObserveContext
    from opsmate.tools.base import ToolResult

    a = rs(1, [{"name": "MODE", "value": "fast"}])
    b = rs(2, [{"name": "MODE", "value": "fast"}])
    b["spec"]["template"]["metadata"] = {
        "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-05-04T10:02:00Z"}
    }
    assert template_changes(a, b) == [
        "pod template: restarted (kubectl.kubernetes.io/restartedAt 2026-05-04T10:02:00Z)"
    ]
    assert template_changes(b, b) == []  # the same restart stamp is no change
    hist = rollout_history(None, [a, b])
    result = ToolResult(
        call_id="c1", tool="rollout_history", status="success", args={"name": "web"}, data=hist
    )
    ctx = ObserveContext(eid="E1", window_from=datetime(2026, 5, 4, 9, tzinfo=UTC))
    (fact,) = [f for f in rollouts(result, ctx) if f.key.startswith("rollout:web:2")]
    assert fact.routine and "rollout restart" in fact.statement
    assert "configuration change" not in fact.statement
