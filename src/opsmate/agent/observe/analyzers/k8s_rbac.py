"""RBAC: a ServiceAccount that lacks a verb on a resource, found by evaluating its bindings.

1. Texts that carry the API server's refusal (``User "system:serviceaccount:ns:sa"
   cannot list resource "pods" in API group "" in the namespace "ns"``) — log records,
   log summaries, a pod's log tail, events — become ``AccessDenial`` records in the
   graph (what was asked, by whom, where).
2. A graph analyzer evaluates each denial as the API server's RBAC authorizer does: the
   RoleBindings of the request's namespace and the ClusterRoleBindings whose subjects
   name the ServiceAccount (or its groups ``system:serviceaccounts[:<ns>]``,
   ``system:authenticated``), their Roles / ClusterRoles, and the rules' apiGroups,
   resources (``*``, ``pods/*``), resourceNames and verbs. With complete binding
   listings and every bound role read it concludes: RBAC_DENIED naming the
   ServiceAccount, the verb, the resource and what its bindings do grant — or, when
   the rules now allow the request, an observation that it is granted (the denial
   predates a fix). Without complete listings it says nothing beyond the message.
"""

from __future__ import annotations

import re

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, quoted, ref
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, ObjRef
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.observe.registry import for_tools, over_graph
from opsmate.records.base import Record
from opsmate.records.k8s_objects import RbacRule, Role, RoleBinding
from opsmate.records.payloads import EventsPayload, LogsPayload, LogStatsPayload, PodLogsPayload
from opsmate.records.types import Text
from opsmate.tools.base import ToolResult

DENIAL = "AccessDenial"
_FORBIDDEN = re.compile(
    r'User "(?P<user>[^"]+)" cannot (?P<verb>[\w-]+) resource "(?P<res>[^"]+)"'
    r'(?: in API group "(?P<group>[^"]*)")?'
    r'(?: in the namespace "(?P<ns>[^"]+)"| at the cluster scope)?'
)
_SA_USER = re.compile(r"^system:serviceaccount:([^:]+):([^:]+)$")


class AccessDenial(Record):
    """A request the API server refused, as its message says (kept in the graph)."""

    name: Text = None  # user|verb|group|resource|namespace
    user: Text = None
    verb: Text = None
    resource: Text = None
    api_group: Text = None
    namespace: Text = None  # of the request; None: cluster scope
    message: Text = None


def denials_in(text: str) -> list[AccessDenial]:
    """Every refusal quoted in ``text``."""
    out = []
    for m in _FORBIDDEN.finditer(text or ""):
        d = m.groupdict()
        name = "|".join(str(d.get(k) or "") for k in ("user", "verb", "group", "res", "ns"))
        out.append(
            AccessDenial(
                name=name,
                user=d["user"],
                verb=d["verb"],
                resource=d["res"],
                api_group=d.get("group") or "",
                namespace=d.get("ns"),
                message=m.group(0),
            )
        )
    return out


def _texts(result: ToolResult) -> list[str]:
    payload = result.payload
    if isinstance(payload, LogsPayload):
        return [str(i.message) for i in payload.items]
    if isinstance(payload, EventsPayload):
        return [str(e.message or "") for e in payload.events]
    if isinstance(payload, LogStatsPayload):
        return [
            f"{m.pattern} {m.example} {m.fields.get('error') or ''}" for m in payload.top_messages
        ]
    if isinstance(payload, PodLogsPayload):
        return [x for x in payload.lines if x]
    return []


@for_tools("search_logs", "pod_logs", "log_stats", "get_events")
def access_denials(result: ToolResult, ctx: ObserveContext) -> list[Fact]:
    """Record the API server's refusals quoted in logs and events (facts come from the graph)."""
    for text in _texts(result):
        if "cannot" in text and "resource" in text:
            for d in denials_in(text):
                ctx.graph.add(DENIAL, d, ctx.eid)
    return []


def _subject_match(b: RoleBinding, sa_ns: str, sa: str) -> bool:
    groups = {"system:serviceaccounts", f"system:serviceaccounts:{sa_ns}", "system:authenticated"}
    for s in b.subjects:
        if s.kind == "ServiceAccount" and s.name == sa and (s.namespace or b.namespace) == sa_ns:
            return True
        if s.kind == "Group" and s.name in groups:
            return True
        if s.kind == "User" and s.name == f"system:serviceaccount:{sa_ns}:{sa}":
            return True
    return False


def rule_allows(r: RbacRule, verb: str, group: str, resource: str) -> bool:
    base = resource.split("/", 1)[0]
    res_ok = any(x in ("*", resource, f"{base}/*") for x in r.resources)
    return (
        any(v in ("*", verb) for v in r.verbs)
        and any(gr in ("*", group) for gr in r.api_groups)
        and res_ok
        and not r.resource_names  # a request for any name is not covered by a named rule
    )


def _grant_text(role: Role) -> str:
    parts = [
        f"{','.join(r.verbs)} on {','.join(r.resources) or ','.join(r.non_resource_urls)}"
        for r in role.rules[:4]
    ]
    return "; ".join(parts) or "nothing"


def evaluate(
    g: ObjectGraph, d: AccessDenial, sa_ns: str, sa: str
) -> tuple[bool | None, list[tuple[RoleBinding, Role | None]], list[str]]:
    """(allowed? None when unknown, the bindings naming the account with their roles,
    the E ids the conclusion rests on)."""
    proofs: list[str] = []
    crb = g.listed("ClusterRoleBinding")
    rb = g.listed("RoleBinding", d.namespace) if d.namespace else "cluster"
    if not crb or not rb:
        return None, [], []
    proofs += [crb] + ([rb] if d.namespace else [])
    bound: list[tuple[RoleBinding, Role | None]] = []
    kinds = [("ClusterRoleBinding", None)] + ([("RoleBinding", d.namespace)] if d.namespace else [])
    for kind, ns in kinds:
        for b in g.all(kind, ns):
            if not isinstance(b, RoleBinding) or not _subject_match(b, sa_ns, sa):
                continue
            rkind = b.role_kind or "ClusterRole"
            role = g.get(rkind, b.namespace if rkind == "Role" else None, b.role_name or "")
            if role is None and not g.absent(
                rkind, b.namespace if rkind == "Role" else None, b.role_name or ""
            ):
                return None, [], []  # a bound role we have not read: no conclusion
            bound.append((b, role if isinstance(role, Role) else None))
    allowed = any(
        role is not None
        and any(
            rule_allows(r, str(d.verb), str(d.api_group or ""), str(d.resource)) for r in role.rules
        )
        for _, role in bound
    )
    return allowed, bound, proofs


@over_graph
@graph_cached
def service_account_access(ctx: ObserveContext) -> list[Fact]:
    """Each refusal of a ServiceAccount, evaluated against its bindings and roles."""
    g = ctx.graph
    facts: list[Fact] = []
    for d in g.all(DENIAL):
        m = _SA_USER.match(str(getattr(d, "user", "") or ""))
        if not isinstance(d, AccessDenial) or not m:
            continue
        sa_ns, sa = m.groups()
        allowed, bound, proofs = evaluate(g, d, sa_ns, sa)
        partial = allowed is None
        if partial:
            # not every binding could be read: the API server's own refusal still stands,
            # with the bindings that were read (a later grant cannot be ruled out)
            bound = _seen_bindings(g, d, sa_ns, sa)
        where = f"in namespace {d.namespace}" if d.namespace else "at the cluster scope"
        grp = f' (API group "{d.api_group}")' if d.api_group else ""
        ask = f"`{d.verb}` on `{d.resource}`{grp} {where}"
        users = [p for p in g.pods(sa_ns) if p.service_account == sa]
        objects: list[ObjRef] = [ref("Pod", p.name, p.namespace) for p in users[:5]]
        objects += [ref(b.kind or "RoleBinding", b.name, b.namespace) for b, _ in bound]
        objects += [ref(r.kind or "Role", r.name, r.namespace) for _, r in bound if r is not None]
        service = users[0].labels.get("app") if users else None
        ev = evidence(
            g, g.source_of(DENIAL, d.namespace, str(d.name)), ("ServiceAccount", sa_ns, sa), *proofs
        )
        if allowed:
            facts.append(
                k8s_fact(
                    ctx,
                    K.OBSERVATION,
                    f"rbac-granted:{d.name}",
                    f"ServiceAccount `{sa_ns}/{sa}` was refused {ask}, "
                    "but its bindings now grant it "
                    f"({quoted([str(b.name) for b, _ in bound])})",
                    subject=ref("ServiceAccount", sa, sa_ns),
                    evidence=ev,
                    objects=objects,
                    severity="info",
                    service=service,
                    reason="Granted",
                    message=d.message,
                )
            )
            continue
        if bound:
            unread = "which was not read" if partial else "which does not exist"
            grants = "; ".join(
                f"{b.kind} `{b.name}` -> {b.role_kind} `{b.role_name}` "
                f"({_grant_text(r) if r else unread})"
                for b, r in bound[:4]
            )
            have = f"it is bound through {grants}, and none of these grants {ask}"
        elif partial:
            have = "no binding that names it was read (not every binding was available)"
        else:
            have = "no RoleBinding or ClusterRoleBinding names it"
        facts.append(
            k8s_fact(
                ctx,
                K.RBAC_DENIED,
                f"rbac{'-partial' if partial else ''}:{d.name}",
                f"ServiceAccount `{sa_ns}/{sa}` is forbidden to {ask}: {have} "
                f"(the API server answered: {d.message})",
                subject=ref("ServiceAccount", sa, sa_ns),
                evidence=ev,
                objects=objects,
                service=service,
                reason="Forbidden",
                message=d.message,
                detail={
                    "verb": d.verb,
                    "resource": d.resource,
                    "api_group": d.api_group,
                    "namespace": d.namespace,
                    "bindings": [str(b.name) for b, _ in bound],
                },
            )
        )
    return facts


def _seen_bindings(
    g: ObjectGraph, d: AccessDenial, sa_ns: str, sa: str
) -> list[tuple[RoleBinding, Role | None]]:
    """The bindings read so far that name the account, with their roles when read."""
    out: list[tuple[RoleBinding, Role | None]] = []
    for kind, ns in (("ClusterRoleBinding", None), ("RoleBinding", d.namespace or sa_ns)):
        for b in g.all(kind, ns):
            if not isinstance(b, RoleBinding) or not _subject_match(b, sa_ns, sa):
                continue
            rkind = b.role_kind or "ClusterRole"
            role = g.get(rkind, b.namespace if rkind == "Role" else None, b.role_name or "")
            out.append((b, role if isinstance(role, Role) else None))
    return out
