"""NetworkPolicies: which pods a policy isolates, and which pods it then denies.

Evaluated as the API defines it: a pod selected by at least one policy of a direction
(``policyTypes`` Ingress / Egress) is isolated in that direction, and a peer may talk
to it only when some rule of some policy selecting it allows that peer (rules without
``from``/``to`` allow every peer; rules without ``ports`` every port). Peers are judged
among the pods of the graph: a ``podSelector`` peer means pods of the policy's
namespace; a ``namespaceSelector`` is decided with the Namespace's labels when known
(``kubernetes.io/metadata.name`` always is); an ``ipBlock`` cannot be judged from pod
labels, so a pod is never called denied while such a peer might admit it.

Facts (NETWORK_POLICY) name the policy, the direction, the selected pods, what it
allows and the pods it denies — an error when a denied pod or the isolated workload is
in focus, a warning otherwise (denying traffic is what policies are for). An egress
policy that allows no port 53 denies DNS to the pods it selects.
"""

from __future__ import annotations

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, quoted, ref
from opsmate.agent.observe.analyzers.k8s_services import selects
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, ObjRef
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.observe.registry import over_graph
from opsmate.records.k8s import Pod
from opsmate.records.k8s_objects import (
    LabelSelector,
    Namespace,
    NetworkPolicy,
    PolicyPeer,
    PolicyRule,
    Service,
)

_ALLOW, _DENY, _UNKNOWN = "allow", "deny", "unknown"
_NAME_LABEL = "kubernetes.io/metadata.name"


def _sel(s: LabelSelector | None, labels: dict[str, str]) -> bool:
    return s is not None and (bool(s.everything) or s.is_empty() or s.matches(labels))


def _ns_matches(g: ObjectGraph, s: LabelSelector, namespace: str | None) -> str:
    if s.everything or s.is_empty():
        return _ALLOW
    known = g.get("Namespace", None, namespace or "")
    labels = dict(known.labels) if isinstance(known, Namespace) else {}
    labels.setdefault(_NAME_LABEL, namespace or "")
    keys = set(s.match_labels) | {r.key for r in s.match_expressions if r.key}
    if known is None and keys - {_NAME_LABEL}:
        return _UNKNOWN  # other labels of the namespace are not known
    return _ALLOW if s.matches(labels) else _DENY


def _peer(g: ObjectGraph, p: PolicyPeer, policy_ns: str | None, pod: Pod) -> str:
    if p.ip_block:
        return _UNKNOWN
    pod_ns = pod.namespace or policy_ns
    if p.namespace_selector is not None:
        verdict = _ns_matches(g, p.namespace_selector, pod_ns)
        if verdict != _ALLOW:
            return verdict
    elif pod_ns != policy_ns:
        return _DENY
    if p.pod_selector is None:
        return _ALLOW
    return _ALLOW if _sel(p.pod_selector, pod.labels) else _DENY


def _rule(g: ObjectGraph, r: PolicyRule, policy_ns: str | None, pod: Pod) -> str:
    if not r.peers:
        return _ALLOW
    verdicts = {_peer(g, p, policy_ns, pod) for p in r.peers}
    return _ALLOW if _ALLOW in verdicts else (_UNKNOWN if _UNKNOWN in verdicts else _DENY)


def _verdict(g: ObjectGraph, rules: list[PolicyRule], policy_ns: str | None, pod: Pod) -> str:
    verdicts = {_rule(g, r, policy_ns, pod) for r in rules}
    return _ALLOW if _ALLOW in verdicts else (_UNKNOWN if _UNKNOWN in verdicts else _DENY)


def _allows_text(rules: list[PolicyRule], direction: str) -> str:
    if not rules:
        return f"allows no {direction} at all"
    parts = []
    for r in rules:
        peers = []
        for p in r.peers:
            bits = []
            if p.namespace_selector is not None:
                bits.append(f"namespaces `{p.namespace_selector.text()}`")
            if p.pod_selector is not None:
                bits.append(f"pods `{p.pod_selector.text()}`")
            if p.ip_block:
                bits.append(f"`{p.ip_block}`")
            peers.append(" ".join(bits))
        who = " or ".join(peers) if peers else "anywhere"
        ports = f" on {', '.join(r.ports)}" if r.ports else ""
        parts.append(f"{'from' if direction == 'ingress' else 'to'} {who}{ports}")
    return f"allows {direction} only " + "; ".join(parts)


def _services_of(g: ObjectGraph, pods: list[Pod], ns: str | None) -> list[ObjRef]:
    label_sets = list({frozenset(p.labels.items()): p.labels for p in pods}.values())
    out = []
    for s in g.all("Service", ns):
        if isinstance(s, Service) and any(selects(s.selector, labels) for labels in label_sets):
            out.append(ref("Service", s.name, s.namespace))
    return out


def _pod_refs(pods: list[Pod]) -> list[ObjRef]:
    out = []
    for p in pods[:5]:
        out.append(ref("Pod", p.name, p.namespace))
        owner = p.owner_ref()
        if owner and owner.kind and owner.name:
            out.append(ref(owner.kind, owner.name, p.namespace))
    return out


def _labels(p: Pod) -> str:
    keep = {k: v for k, v in p.labels.items() if k not in ("pod-template-hash",)}
    return ",".join(f"{k}={v}" for k, v in sorted(keep.items()))


@over_graph
@graph_cached
def network_policies(ctx: ObserveContext) -> list[Fact]:
    """Each NetworkPolicy against the pods of its namespace, per direction."""
    g = ctx.graph
    facts: list[Fact] = []
    for pol in g.all("NetworkPolicy"):
        if not isinstance(pol, NetworkPolicy) or not pol.name:
            continue
        ns = pol.namespace
        pods = [p for p in g.pods(ns) if p.namespace in (None, ns) and p.name]
        selected = [p for p in pods if _sel(pol.pod_selector, p.labels)]
        if not selected:
            continue
        chosen = {id(p) for p in selected}
        others = [p for p in pods if id(p) not in chosen]
        # callers from other namespaces: the pods of what the question is about (judging
        # every pod of the cluster would call each default-deny policy a denial of all)
        others += [
            p for p in g.pods() if p.name and p.namespace not in (None, ns) and ctx.is_focus(p.name)
        ]
        for direction, rules in (("ingress", pol.ingress), ("egress", pol.egress)):
            if direction.capitalize() not in pol.policy_types:
                continue
            # policies add up: a peer is denied only when no policy selecting these pods
            # (in this direction) allows it
            union = _union_rules(g, ns, selected, direction)
            verdicts: dict[tuple[str | None, frozenset[tuple[str, str]]], str] = {}
            denied = []
            for q in others:  # pods of one workload share their labels: judge each set once
                key = (q.namespace, frozenset(q.labels.items()))
                if key not in verdicts:
                    verdicts[key] = _verdict(g, union, ns, q)
                if verdicts[key] == _DENY:
                    denied.append(q)
            if direction == "egress":
                facts += _dns(ctx, pol, selected, rules)
            if not denied and (rules or len(union) > len(rules)):
                continue
            facts.append(_fact(ctx, pol, direction, rules, selected, denied))
    return facts


def _union_rules(
    g: ObjectGraph, ns: str | None, selected: list[Pod], direction: str
) -> list[PolicyRule]:
    """Every rule of every policy of ``direction`` that selects all of ``selected`` (what
    admits a peer to every one of them; a policy for some of them is judged on its own)."""
    out: list[PolicyRule] = []
    for other in g.all("NetworkPolicy", ns):
        if not isinstance(other, NetworkPolicy) or direction.capitalize() not in other.policy_types:
            continue
        if all(_sel(other.pod_selector, p.labels) for p in selected):
            out += other.ingress if direction == "ingress" else other.egress
    return out


def _fact(
    ctx: ObserveContext,
    pol: NetworkPolicy,
    direction: str,
    rules: list[PolicyRule],
    selected: list[Pod],
    denied: list[Pod],
) -> Fact:
    g, ns = ctx.graph, pol.namespace
    sel = pol.pod_selector.text()
    names = [str(p.name) for p in selected]
    denied_text = ", ".join(f"`{p.name}` (`{_labels(p)}`)" for p in denied[:3])
    denied_text += f" and {len(denied) - 3} more" if len(denied) > 3 else ""
    verb = "from" if direction == "ingress" else "to"
    tail = f": traffic {verb} pod(s) {denied_text} is denied" if denied else ""
    statement = (
        f"NetworkPolicy `{pol.name}` selects pods `{sel}` ({quoted(names, 3)}) and "
        f"{_allows_text(rules, direction)}{tail}"
    )
    objects = [*_pod_refs(selected), *_services_of(g, selected, ns), *_pod_refs(denied)]
    focus = any(ctx.is_focus(o.name) for o in objects)
    return k8s_fact(
        ctx,
        K.NETWORK_POLICY,
        f"netpol:{ns}:{pol.name}:{direction}",
        statement,
        subject=ref("NetworkPolicy", pol.name, ns),
        evidence=evidence(g, ("NetworkPolicy", ns, pol.name), g.listed("Pod", ns)),
        objects=objects,
        severity="error" if focus else "warning",
        reason=f"{direction}Denied",
        detail={
            "direction": direction,
            "pod_selector": sel,
            "selected": names[:20],
            "denied": [str(p.name) for p in denied][:20],
            "allows": _allows_text(rules, direction),
        },
    )


def _dns(
    ctx: ObserveContext, pol: NetworkPolicy, selected: list[Pod], rules: list[PolicyRule]
) -> list[Fact]:
    """An egress policy with no rule allowing port 53 denies DNS to the pods it selects."""
    for r in rules:
        if not r.ports or any(p.endswith("/53") or p.endswith("/*") for p in r.ports):
            return []
    ns = pol.namespace
    names = [str(p.name) for p in selected]
    return [
        k8s_fact(
            ctx,
            K.NETWORK_POLICY,
            f"netpol-dns:{ns}:{pol.name}",
            f"NetworkPolicy `{pol.name}` isolates egress of pods `{pol.pod_selector.text()}` "
            f"({quoted(names, 3)}) and allows no port 53: their DNS lookups are denied",
            subject=ref("NetworkPolicy", pol.name, ns),
            evidence=evidence(ctx.graph, ("NetworkPolicy", ns, pol.name)),
            objects=_pod_refs(selected),
            reason="egressDNSDenied",
            detail={"direction": "egress", "selected": names[:20], "dns": False},
        )
    ]
