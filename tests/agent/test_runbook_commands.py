"""Runbook code blocks: read-only commands become calls; changes stay with a human."""

from __future__ import annotations

from opsmate.agent.runbooks.commands import commands_in_section, parse_command
from opsmate.agent.runbooks.library import fill_check_args

SECTION = """Check the pods and the rollout:

```bash
kubectl -n shop get pods -l app=order-service -o wide
kubectl -n shop rollout history deployment/order-service
kubectl -n shop logs deploy/order-service --since=30m | grep -E 'PoolTimeout|pool_size'
kubectl describe node dev-1-worker-03
kubectl -n shop get pods -w
kubectl -n shop describe pod <pod-name>
kubectl -n shop rollout undo deployment/order-service
kubectl -n shop scale deployment/order-service --replicas=6
kubectl delete pod redis-0 -n shop --context dev-1
kubectl -n shop exec orders-db-0 -- psql -c "select 1"
helm rollback order-service 6
```

```promql
sum by (pod) (db_pool_connections_in_use{service="order-service"})
  /
sum by (pod) (db_pool_connections_max{service="order-service"})
max(pg_stat_activity_max_tx_duration{datname="orders"})
```
"""


def test_commands_in_a_section() -> None:
    cmds = commands_in_section(SECTION, ["Runbook", "Diagnosis"])
    calls = [(c.tool, c.args) for c in cmds if c.kind == "call"]
    assert ("list_pods", {"namespace": "shop", "label_selector": "app=order-service"}) in calls
    assert ("rollout_history", {"namespace": "shop", "name": "order-service"}) in calls
    assert ("search_logs", {"service": "order-service", "query": "PoolTimeout"}) in calls
    assert ("node_conditions", {"name": "dev-1-worker-03"}) in calls
    queries = [a["query"] for t, a in calls if t == "query_metrics"]
    assert queries == [
        'sum by (pod) (db_pool_connections_in_use{service="order-service"}) / '
        'sum by (pod) (db_pool_connections_max{service="order-service"})',
        'max(pg_stat_activity_max_tx_duration{datname="orders"})',
    ]
    mitigations = [c.text for c in cmds if c.kind == "mitigation"]
    assert any("rollout undo" in m for m in mitigations)
    assert any("scale" in m for m in mitigations)
    assert any("delete pod redis-0" in m for m in mitigations)
    assert any(m.startswith("helm rollback") for m in mitigations)
    assert [c.kind for c in cmds if "exec" in c.text] == ["human_check"]
    # a watch and a placeholder object are not calls
    call_texts = [c.text for c in cmds if c.kind == "call"]
    assert not any(t.endswith(" -w") or "<pod-name>" in t for t in call_texts)


def test_state_changing_commands_never_become_calls() -> None:
    for line in (
        "kubectl delete namespace shop",
        "kubectl drain node-1 --ignore-daemonsets",
        "kubectl cordon node-1",
        "kubectl patch deployment x -p '{}'",
        "kubectl apply -f x.yaml",
        "kubectl edit configmap x",
        "kubectl rollout restart deployment/x",
        "kubectl set env deployment/x A=1",
        "redis-cli -h r SENTINEL failover shop-cache",
    ):
        cmd = parse_command(line)
        assert cmd is not None and cmd.kind == "mitigation" and cmd.tool is None, line


def test_fill_check_placeholders() -> None:
    args = {
        "query": 'rate(x{service="{service}"}[5m])',
        "namespace": "{namespace}",
        "env": "{environment}",
    }
    assert fill_check_args(args, service="a", namespace="shop", environment="test") == {
        "query": 'rate(x{service="a"}[5m])',
        "namespace": "shop",
        "env": "test",
    }
    # a bare placeholder with no value is dropped; one inside a value makes the check unusable
    assert fill_check_args(
        {"namespace": "{namespace}", "name": "x"}, service=None, namespace=None, environment=None
    ) == {"name": "x"}
    assert (
        fill_check_args(
            {"query": 'up{svc="{service}"}'}, service=None, namespace=None, environment=None
        )
        is None
    )
