"""Why a pending pod fits no node: node labels, taints, anti-affinity and capacity.

For every unscheduled pod in the graph, each node in the graph is checked as the
scheduler's filters do: ``nodeSelector`` and required node affinity against the node's
labels; NoSchedule / NoExecute taints against the pod's tolerations; a cordoned node;
required pod anti-affinity (a pod matching the term already in the node's topology
domain) and required pod affinity; and the pod's requests against the node's
allocatable minus what the pods seen on it request. When every node is excluded (and
the node listing is complete), each reason that excludes nodes becomes a SCHEDULING
fact naming the field and value (``nodeSelector `disk=ssd```), the nodes and what they
have instead. Pods of one workload with the same reason are one fact.
"""

from __future__ import annotations

from typing import Any

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, quoted, ref
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.observe.registry import over_graph
from opsmate.records.k8s import Node, Pod
from opsmate.records.k8s_objects import LabelSelector
from opsmate.records.quantity import format_quantity, parse_quantity

_HARD_EFFECTS = ("NoSchedule", "NoExecute")


def _pending(p: Pod) -> bool:
    sched = next((c for c in p.conditions if c.type == "PodScheduled"), None)
    return p.phase == "Pending" and not p.node and (sched is None or sched.status != "True")


def _expr_ok(expr: Any, labels: dict[str, str]) -> bool:
    if not isinstance(expr, dict):
        return False
    key, op = str(expr.get("key") or ""), str(expr.get("operator") or "")
    values = [str(v) for v in expr.get("values") or [] if v is not None]
    have = labels.get(key)
    if op == "In":
        return have is not None and have in values
    if op == "NotIn":
        return have is None or have not in values
    if op == "Exists":
        return have is not None
    if op == "DoesNotExist":
        return have is None
    if op in ("Gt", "Lt") and have is not None and values:
        try:
            a, b = int(have), int(values[0])
        except ValueError:
            return False
        return a > b if op == "Gt" else a < b
    return False


def _term_text(term: Any) -> str:
    parts = []
    for e in (term or {}).get("matchExpressions") or []:
        if isinstance(e, dict):
            vals = ",".join(str(v) for v in e.get("values") or [])
            parts.append(
                f"{e.get('key')} {e.get('operator')} ({vals})"
                if vals
                else f"{e.get('key')} {e.get('operator')}"
            )
    return " and ".join(parts) or "{}"


def _node_affinity(p: Pod) -> list[Any]:
    na = p.affinity.get("nodeAffinity") if isinstance(p.affinity, dict) else None
    req = (
        (na or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(na, dict)
        else None
    )
    terms = (req or {}).get("nodeSelectorTerms") if isinstance(req, dict) else None
    return [t for t in terms or [] if isinstance(t, dict)]


def _pinned_volumes(g: ObjectGraph, p: Pod) -> list[tuple[str, list[dict[str, Any]]]]:
    """The bound volumes of the pod's claims that live on some nodes only (a local volume's
    required node affinity): (volume, its node selector terms)."""
    out = []
    for v in p.volumes:
        if v.type != "persistentVolumeClaim" or not v.ref_name:
            continue
        claim = g.get("PersistentVolumeClaim", p.namespace, v.ref_name)
        pv = g.get("PersistentVolume", None, getattr(claim, "volume_name", None) or "")
        na = getattr(pv, "node_affinity", None) or {}
        req = na.get("required") if isinstance(na, dict) else None
        terms = (req or {}).get("nodeSelectorTerms") if isinstance(req, dict) else None
        terms = [t for t in terms or [] if isinstance(t, dict)]
        if terms and pv is not None:
            out.append((str(getattr(pv, "name", "")), terms))
    return out


def _pod_terms(p: Pod, kind: str) -> list[dict[str, Any]]:
    block = p.affinity.get(kind) if isinstance(p.affinity, dict) else None
    terms = (
        (block or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(block, dict)
        else None
    )
    return [t for t in terms or [] if isinstance(t, dict)]


def _selector(raw: Any) -> LabelSelector:
    from opsmate.tools.kubernetes.shaping_common import selector

    return LabelSelector.model_validate(selector(raw if isinstance(raw, dict) else {}))


def _term_pods(placed: list[Pod], p: Pod, term: dict[str, Any]) -> list[Pod]:
    """Scheduled pods (other than ``p``) that a pod (anti-)affinity term selects."""
    sel = _selector(term.get("labelSelector"))
    spaces = [str(n) for n in term.get("namespaces") or []] or [str(p.namespace)]
    any_ns = bool(term.get("namespaceSelector"))
    return [
        q
        for q in placed
        if q.name != p.name and (any_ns or q.namespace in spaces) and sel.matches(q.labels)
    ]


def _term_hits(
    candidates: list[Pod], term: dict[str, Any], node: Node, nodes: dict[str, Node]
) -> list[Pod]:
    """Of the pods a term selects, those in ``node``'s topology domain."""
    key = str(term.get("topologyKey") or "")
    domain = node.labels.get(key)
    if not key or domain is None:
        return []
    return [
        q for q in candidates if q.node in nodes and nodes[str(q.node)].labels.get(key) == domain
    ]


def _placed(g: ObjectGraph) -> list[Pod]:
    """Pods bound to a node and still holding their resources."""
    return [q for q in g.pods() if q.node and q.phase not in ("Succeeded", "Failed")]


def _used(placed: list[Pod]) -> dict[str, tuple[dict[str, float], int]]:
    """Per node: the requests of the pods seen on it, and how many pods that is."""
    out: dict[str, tuple[dict[str, float], int]] = {}
    for q in placed:
        total, count = out.get(str(q.node), ({}, 0))
        for k, v in q.requests().items():
            total[k] = total.get(k, 0.0) + (parse_quantity(v) or 0.0)
        out[str(q.node)] = (total, count + 1)
    return out


def exclusions(
    g: ObjectGraph,
    p: Pod,
    nodes: list[Node],
    placed: list[Pod] | None = None,
    used_by_node: dict[str, tuple[dict[str, float], int]] | None = None,
) -> dict[str, dict[str, str]]:
    """reason -> {node: why} for every node the pod cannot go to."""
    placed = _placed(g) if placed is None else placed
    used_by_node = _used(placed) if used_by_node is None else used_by_node
    out: dict[str, dict[str, str]] = {}
    by_name = {str(n.name): n for n in nodes if n.name}
    anti = [(t, _term_pods(placed, p, t)) for t in _pod_terms(p, "podAntiAffinity")]
    pinned = _pinned_volumes(g, p)
    requests = p.requests()
    for n in nodes:
        name = str(n.name)
        missing = [f"{k}={v}" for k, v in p.node_selector.items() if n.labels.get(k) != v]
        if missing:
            have = [f"{k}={n.labels[k]}" for k in p.node_selector if k in n.labels]
            out.setdefault("nodeSelector", {})[name] = (
                f"has {', '.join(have)}"
                if have
                else f"has no {', '.join(k.split('=')[0] for k in missing)} label"
            )
        terms = _node_affinity(p)
        if terms and not any(
            all(_expr_ok(e, n.labels) for e in t.get("matchExpressions") or []) for t in terms
        ):
            out.setdefault("nodeAffinity", {})[name] = "matches none of the required terms"
        bad = [
            t
            for t in n.taints
            if t.rsplit(":", 1)[-1] in _HARD_EFFECTS
            and not p.tolerates(t)
            and not (n.unschedulable and t.startswith(_CORDON_TAINT))  # said as "cordoned"
        ]
        if bad:
            out.setdefault("taint", {})[name] = ", ".join(f"`{t}`" for t in bad)
        for volume, terms in pinned:
            if not any(
                all(_expr_ok(e, n.labels) for e in t.get("matchExpressions") or []) for t in terms
            ):
                out.setdefault("volume node affinity", {})[name] = (
                    f"is not where {_volume_text(volume, terms)} lives"
                )
        lacking = [k for k in p.spread_keys if k not in n.labels]
        if lacking:
            # a hard topology spread cannot place a pod on a node without the key's label
            # (the scheduler's "missing required label")
            out.setdefault("topology spread", {})[name] = f"has no {', '.join(lacking)} label"
        if n.unschedulable and not p.tolerates("node.kubernetes.io/unschedulable=:NoSchedule"):
            out.setdefault("cordoned", {})[name] = "is cordoned (unschedulable)"
        for term, candidates in anti:
            hits = _term_hits(candidates, term, n, by_name)
            if hits:
                out.setdefault("podAntiAffinity", {})[name] = (
                    f"already runs {quoted([str(h.name) for h in hits], 2)}"
                )
        used, count = used_by_node.get(name, ({}, 0))
        for res, want in requests.items():
            need, cap = parse_quantity(want), parse_quantity(n.allocatable.get(res))
            if need is None or cap is None:
                continue
            taken = used.get(res, 0.0)
            if need > cap - taken:
                seen = (
                    f", {format_quantity(taken, want)} requested by {count} pod(s) seen on it"
                    if taken
                    else ""
                )
                out.setdefault(f"insufficient {res}", {})[name] = (
                    f"allocatable {n.allocatable.get(res)}{seen}"
                )
    return out


_CORDON_TAINT = "node.kubernetes.io/unschedulable"
# what the pod's own spec chooses (where it may go), against what keeps it off those nodes
_PLACEMENT = ("nodeSelector", "nodeAffinity", "volume node affinity")  # a local volume
# ties the pod to the nodes it lives on, as its own selector would


def within_allowed(
    excl: dict[str, dict[str, str]], total: int
) -> tuple[dict[str, dict[str, str]], int | None]:
    """When the pod's nodeSelector / node affinity allows some nodes, those nodes are where
    the answer lies: what keeps the pod off *them* (a cordon, a taint, no room), not the
    selector, which only excludes nodes the pod never wanted. Returns the reasons kept for
    the allowed nodes and how many nodes are allowed (None: the placement restricts nothing,
    or it matches no node, and then the selector is the reason)."""
    barred = {n for r in _PLACEMENT for n in excl.get(r, {})}
    if not barred:
        return excl, None
    if len(barred) >= total:
        return {r: w for r, w in excl.items() if r in _PLACEMENT}, None
    out: dict[str, dict[str, str]] = {}
    for reason, where in excl.items():
        kept = {n: why for n, why in where.items() if n not in barred}
        if reason not in _PLACEMENT and kept:
            out[reason] = kept
    return out, total - len(barred)


def _alone(excl: dict[str, dict[str, str]]) -> dict[str, list[str]]:
    """reason -> the nodes where it is the only obstacle (removing it alone lets the pod run
    there). Between such obstacles: a drain is why pods move, so a taint or an affinity
    that keeps them off the node they could move to comes before the cordon; and no room
    on busy nodes is the standing state, so a cordon of the node that had room comes
    before the shortage."""
    out = {
        r: [n for n in where if not any(n in w for o, w in excl.items() if o != r)]
        for r, where in excl.items()
    }
    out = {r: ns for r, ns in out.items() if ns}
    capacity = {r for r in out if r.startswith("insufficient")}
    if "cordoned" in out and set(out) - capacity - {"cordoned"}:
        del out["cordoned"]
    elif "cordoned" in out:
        out = {r: ns for r, ns in out.items() if r not in capacity}
    return out


def _volume_text(volume: str, terms: list[dict[str, Any]]) -> str:
    return f"volume `{volume}` ({' or '.join(map(_term_text, terms))})"


def _placement_text(p: Pod, g: ObjectGraph, excl: dict[str, dict[str, str]]) -> str:
    """What chooses the nodes the pod may go to: its nodeSelector or node affinity, else
    the node affinity of a volume it mounts."""
    pinned = _pinned_volumes(g, p)
    if pinned and not (excl.get("nodeSelector") or excl.get("nodeAffinity")):
        return _volume_text(*pinned[0])
    if p.node_selector:
        return "nodeSelector `" + ", ".join(f"{k}={v}" for k, v in p.node_selector.items()) + "`"
    return "node affinity `" + " or ".join(_term_text(t) for t in _node_affinity(p)) + "`"


def _statement(p: Pod, reason: str, nodes: dict[str, str], total: int) -> str:
    who = f"Pod `{p.name}`"
    listed = "; ".join(f"`{n}` {why}" for n, why in list(nodes.items())[:4])
    if reason == "nodeSelector":
        sel = ", ".join(f"{k}={v}" for k, v in p.node_selector.items())
        return (
            f"{who} cannot be scheduled: its nodeSelector `{sel}` matches no node "
            f"({len(nodes)} of {total} node(s) lack that label: {listed})"
        )
    if reason == "nodeAffinity":
        terms = " or ".join(_term_text(t) for t in _node_affinity(p))
        return (
            f"{who} cannot be scheduled: its required node affinity `{terms}` "
            f"matches no node ({listed})"
        )
    if reason == "taint":
        return (
            f"{who} cannot be scheduled: it tolerates no taint of {len(nodes)} node(s) "
            f"({listed}; its tolerations: {quoted(p.tolerations) or 'none'})"
        )
    if reason == "podAntiAffinity":
        terms = "; ".join(
            f"`{_selector(t.get('labelSelector')).text()}` per `{t.get('topologyKey')}`"
            for t in _pod_terms(p, "podAntiAffinity")
        )
        return (
            f"{who} cannot be scheduled: its required pod anti-affinity ({terms}) excludes "
            f"{len(nodes)} of {total} node(s), each already running a matching pod ({listed})"
        )
    if reason == "volume node affinity":
        return (
            f"{who} cannot be scheduled: its volume lives on nodes none of which can take it "
            f"({len(nodes)} of {total} node(s): {listed})"
        )
    if reason == "topology spread":
        keys = ", ".join(f"`{k}`" for k in p.spread_keys)
        return (
            f"{who} cannot be scheduled: its topology spread constraints need the node label "
            f"{keys}, which {len(nodes)} of {total} node(s) lack ({listed})"
        )
    if reason.startswith("insufficient"):
        res = reason.split()[-1]
        return (
            f"{who} cannot be scheduled: it requests {res} {p.requests().get(res)}, more than "
            f"{len(nodes)} of {total} node(s) have free ({listed})"
        )
    return f"{who} cannot be scheduled: {len(nodes)} node(s) {reason} ({listed})"


@over_graph
@graph_cached
def scheduling(ctx: ObserveContext) -> list[Fact]:
    """Each unscheduled pod against the nodes in the graph."""
    g = ctx.graph
    nodes = [n for n in g.nodes() if isinstance(n, Node) and n.name]
    listed = g.listed("Node")
    if not nodes or not listed:
        return []
    facts: dict[str, Fact] = {}
    placed = _placed(g)
    used = _used(placed)
    done: dict[str, dict[str, dict[str, str]]] = {}  # one evaluation per workload
    for p in g.pods():
        if not p.name or not _pending(p):
            continue
        owner = p.owner_ref()
        group = owner.name if owner and owner.name else p.name
        gkey = f"{p.namespace}:{group}"
        if gkey in done:
            for reason in done[gkey]:
                facts[f"sched:{gkey}:{reason}"].count += 1
            continue
        excl = exclusions(g, p, nodes, placed, used)
        blocked = set().union(*(set(v) for v in excl.values())) if excl else set()
        if len(blocked) < len(nodes):
            continue  # some node fits as far as we can tell
        full = excl
        excl, allowed = within_allowed(excl, len(nodes))
        alone_on = _alone(excl)
        if alone_on:  # the decisive obstacles: each, removed, lets the pod run on a node
            excl = {r: w for r, w in excl.items() if r in alone_on}
        done[gkey] = excl  # the reasons said (the group's other pods count towards them)
        for reason, where in excl.items():
            text = _statement(p, reason, where, allowed or len(nodes))
            if allowed is not None:  # said of the nodes the pod may go to
                text = text.replace(
                    "cannot be scheduled:",
                    f"cannot be scheduled on any of the {allowed} of {len(nodes)} node(s) its "
                    f"{_placement_text(p, g, full)} allows:",
                    1,
                )
            alone = alone_on.get(reason, [])
            if alone:
                text += f"; nothing else keeps it off {quoted(alone, 3)}"
            key = f"sched:{p.namespace}:{group}:{reason}"
            objects = [ref("Node", n) for n in where]
            if owner and owner.kind and owner.name:
                objects.insert(0, ref(owner.kind, owner.name, p.namespace))
            facts[key] = k8s_fact(
                ctx,
                K.SCHEDULING,
                key,
                text,
                subject=ref("Pod", p.name, p.namespace),
                evidence=evidence(g, ("Pod", p.namespace, p.name), listed),
                objects=objects,
                service=p.labels.get("app") or group,
                reason=reason,
                detail={
                    "reason": reason,
                    "nodes": where,
                    "alone_on": alone,
                    "node_selector": dict(p.node_selector),
                    "requests": p.requests(),
                    "tolerations": p.tolerations,
                },
            )
    return list(facts.values())
