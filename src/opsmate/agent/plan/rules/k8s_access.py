"""Rules for a ServiceAccount the API server refused: read what RBAC would evaluate.

- ``rbac_bindings`` (FOLLOW): an RBAC_DENIED fact (an event or a log line quoting the
  refusal) -> the RoleBindings of the request's namespace, the ClusterRoleBindings and
  the ServiceAccounts of its namespace;
- ``access_denials`` (FOLLOW): a refusal quoted in logs or events (an ``AccessDenial`` in
  the object graph) -> the same bindings;
- ``bound_roles`` (FOLLOW): bindings that name a refused ServiceAccount -> the Roles and
  ClusterRoles they bind, so the analyzer can evaluate the rules.
"""

from __future__ import annotations

from collections.abc import Iterable

from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.plan.registry import Check, RuleContext, fact_rule, result_rule
from opsmate.agent.plan.rules.k8s_graph import (
    SA_USER,
    get_check,
    keep_checks,
    list_check,
    records_of,
)
from opsmate.agent.plan.tiers import Tier
from opsmate.records.k8s_objects import NetworkPolicy, RoleBinding
from opsmate.tools.base import ToolResult


@fact_rule("rbac_bindings", Tier.FOLLOW, K.RBAC_DENIED)
def rbac_bindings(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """A ServiceAccount refused: the bindings of the request's namespace and cluster."""
    if fact.key.startswith("k8s:"):
        return []
    m = SA_USER.match(str(fact.detail.get("user") or ""))
    if not m:
        return []
    ns = fact.detail.get("namespace") or m.group(1)
    return keep_checks(
        [
            list_check(
                ctx, "RoleBinding", ns, f"ServiceAccount {m.group(2)} is refused: its RoleBindings"
            ),
            list_check(
                ctx,
                "ClusterRoleBinding",
                None,
                f"ServiceAccount {m.group(2)}: its ClusterRoleBindings",
            ),
            list_check(
                ctx, "ServiceAccount", m.group(1), f"ServiceAccount {m.group(2)}: does it exist?"
            ),
        ]
    )


@result_rule("access_denials", Tier.FOLLOW, "search_logs", "pod_logs", "log_stats", "get_events")
def access_denials(result: ToolResult, ctx: RuleContext) -> Iterable[Check]:
    """Refusals of a ServiceAccount quoted in logs or events: its bindings."""
    out: list[Check | None] = []
    for d in ctx.graph.all("AccessDenial"):
        m = SA_USER.match(str(getattr(d, "user", "") or ""))
        if not m:
            continue
        ns = getattr(d, "namespace", None)
        if ns:
            out.append(
                list_check(ctx, "RoleBinding", ns, f"ServiceAccount {m.group(2)} was refused")
            )
        out.append(
            list_check(ctx, "ClusterRoleBinding", None, f"ServiceAccount {m.group(2)} was refused")
        )
    return keep_checks(out)[:3]


@result_rule("bound_roles", Tier.FOLLOW, "list_objects", "get_object")
def bound_roles(result: ToolResult, ctx: RuleContext) -> Iterable[Check]:
    """Bindings that name a refused ServiceAccount: the roles they bind."""
    users = {str(getattr(d, "user", "")) for d in ctx.graph.all("AccessDenial")}
    accounts = [m.groups() for u in users if (m := SA_USER.match(u))]
    if not accounts:
        return []
    out: list[Check | None] = []
    for b in records_of(result, RoleBinding):
        hits = any(
            s.kind == "ServiceAccount" and (s.namespace or b.namespace, s.name) in accounts
            for s in b.subjects
        )
        if hits and b.role_name:
            kind = b.role_kind or "ClusterRole"
            out.append(
                get_check(
                    ctx,
                    kind,
                    b.role_name,
                    b.namespace if kind == "Role" else None,
                    f"{b.kind} {b.name} binds {kind} {b.role_name}",
                )
            )
    return keep_checks(out)[:4]


_NAME_LABEL = "kubernetes.io/metadata.name"


@result_rule("policy_namespaces", Tier.EXPLAIN, "list_objects", "get_object")
def policy_namespaces(result: ToolResult, ctx: RuleContext) -> Iterable[Check]:
    """NetworkPolicies that admit peers by their namespace's labels: the Namespaces, so
    whether a caller's namespace carries those labels can be decided (without them the
    policy can be judged for no caller in another namespace)."""
    for pol in records_of(result, NetworkPolicy):
        for rule in [*pol.ingress, *pol.egress]:
            for peer in rule.peers:
                sel = peer.namespace_selector
                if sel is None or sel.everything or sel.is_empty():
                    continue
                keys = set(sel.match_labels) | {r.key for r in sel.match_expressions if r.key}
                if keys - {_NAME_LABEL}:
                    return keep_checks(
                        [list_check(ctx, "Namespace", None, f"NetworkPolicy {pol.name} admits "
                                    "namespaces by their labels: which namespaces have them")]
                    )  # fmt: skip
    return []
