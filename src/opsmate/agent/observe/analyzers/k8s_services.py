"""Services and their endpoints: a selector that matches no (ready) pod, empty Endpoints.

A graph analyzer: it relates each Service in the graph to the pods of its namespace.
"No pod has these labels" is said only with a complete, unfiltered pod listing of that
namespace (its E id is cited); the sentence names the selector and what the closest
pods have instead ("pods with `app=backend` have `version=v1`"). Pods that match but
are not ready, and Endpoints without a ready address, are symptoms (NOT_READY) that
point at those pods. A named ``targetPort`` that no selected container declares is a
misconfiguration (the Service cannot resolve it).
"""

from __future__ import annotations

from opsmate.agent.observe.analyzers.k8s_common import (
    LabelIndex,
    evidence,
    graph_cached,
    k8s_fact,
    quoted,
    ref,
)
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, ObjRef
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.registry import over_graph
from opsmate.records.k8s import Pod
from opsmate.records.k8s_objects import Endpoints, Service

_NOISE_LABELS = {
    "pod-template-hash",
    "controller-revision-hash",
    "statefulset.kubernetes.io/pod-name",
}


def pod_ready(p: Pod) -> bool:
    """Running, every container ready (``ready`` "n/n" with n > 0)."""
    done, _, total = (p.ready or "").partition("/")
    return p.phase == "Running" and bool(total) and done == total and total != "0"


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def _near(selector: dict[str, str], pods: list[Pod]) -> tuple[list[str], list[Pod]]:
    """For each selector key, what the pods matching every *other* key have for it:
    ``["version=v1"]`` and those pods (the closest ones)."""
    diffs: list[str] = []
    near: list[Pod] = []
    for key in sorted(selector):
        others = {k: v for k, v in selector.items() if k != key}
        close = [p for p in pods if all(p.labels.get(k) == v for k, v in others.items())]
        if not others:
            # a one-key selector: only pods whose value for it reads like a typo of it are
            # near misses (``app=notifications`` / ``app=notification``), not every pod
            close = [p for p in close if _alike(p.labels.get(key), selector[key])]
        if not close or (not others and len(selector) > 1):
            continue
        values = sorted({p.labels.get(key) or "" for p in close})
        have = ", ".join(f"{key}={v}" if v else f"no {key} label" for v in values)
        rest = ",".join(f"{k}={v}" for k, v in sorted(others.items()))
        diffs.append(f"pods with `{rest}` have `{have}`" if rest else f"pods have `{have}`")
        near += [p for p in close if p not in near]
    return diffs, near


def _label_sets(pods: list[Pod], limit: int = 4) -> list[str]:
    sets = []
    for p in pods:
        text = ",".join(f"{k}={v}" for k, v in sorted(p.labels.items()) if k not in _NOISE_LABELS)
        if text and text not in sets:
            sets.append(text)
    return sets[:limit]


def _pod_refs(pods: list[Pod], limit: int = 5) -> list[ObjRef]:
    out = []
    for p in pods[:limit]:
        out.append(ref("Pod", p.name, p.namespace))
        owner = p.owner_ref()
        if owner and owner.kind and owner.name:
            out.append(ref(owner.kind, owner.name, p.namespace))
    return out


@over_graph
@graph_cached
def service_selectors(ctx: ObserveContext) -> list[Fact]:
    """Each Service against the pods of its namespace and its Endpoints."""
    g = ctx.graph
    facts: list[Fact] = []
    svc: Service
    indexes: dict[str | None, tuple[list[Pod], LabelIndex]] = {}
    for svc in g.all("Service"):
        if not isinstance(svc, Service) or not svc.name or svc.type == "ExternalName":
            continue
        ns = svc.namespace
        me = ref("Service", svc.name, ns)
        ep = g.get("Endpoints", ns, svc.name)
        ep_ref = [ref("Endpoints", svc.name, ns)] if isinstance(ep, Endpoints) else []
        if svc.cluster_ip and svc.cluster_ip != "None":
            ep_ref.append(ObjRef(kind="host", name=svc.cluster_ip))  # clients may log the IP
        if not svc.selector:
            continue  # endpoints managed by hand: nothing to compare
        sel = ",".join(f"{k}={v}" for k, v in sorted(svc.selector.items()))
        if ns not in indexes:
            here = [p for p in g.pods(ns) if p.namespace in (None, ns)]
            indexes[ns] = (here, LabelIndex(here))
        pods, index = indexes[ns]
        listed = g.listed("Pod", ns)
        matching = index.matching(svc.selector)
        ready = [p for p in matching if pod_ready(p)]
        service = svc.selector.get("app") or svc.name
        ev = evidence(g, ("Service", ns, svc.name), listed, ("Endpoints", ns, svc.name))
        if not matching and listed and _scaled_down(g, ns, svc.selector):
            pass  # its workload is scaled to 0: that fact (k8s_workloads) says why
        elif not matching and listed:
            diffs, near = _near(svc.selector, pods)
            why = (
                "; ".join(diffs)
                if diffs
                else (
                    f"pods in {ns} have {quoted(_label_sets(pods))}"
                    if pods
                    else f"{ns} has no pods"
                )
            )
            facts.append(
                k8s_fact(
                    ctx,
                    K.SELECTOR_MISMATCH,
                    f"selector:{ns}:{svc.name}",
                    f"Service `{svc.name}` selects `{sel}` (spec.selector), but no pod in "
                    f"namespace {ns} has those labels ({why}), so it has no endpoints",
                    subject=me,
                    evidence=ev,
                    objects=[*_pod_refs(near), *ep_ref],
                    service=service,
                    reason="SelectorMatchesNoPod",
                    detail={
                        "selector": dict(svc.selector),
                        "closest": diffs,
                        "pods_compared": len(pods),
                    },
                )
            )
        elif matching and not ready:
            names = [str(p.name) for p in matching]
            facts.append(
                k8s_fact(
                    ctx,
                    K.NOT_READY,
                    f"selector-unready:{ns}:{svc.name}",
                    f"Service `{svc.name}` selects `{sel}`: {len(matching)} pod(s) match "
                    f"({quoted(names, 3)}) but none is ready, so it has no ready endpoints",
                    subject=me,
                    evidence=ev,
                    objects=[*_pod_refs(matching), *ep_ref],
                    service=service,
                    severity="error",
                    reason="NoReadyEndpoints",
                    detail={"selector": dict(svc.selector), "pods": names[:20]},
                )
            )
        elif isinstance(ep, Endpoints) and not ep.ready and not matching:
            facts.append(
                k8s_fact(
                    ctx,
                    K.NOT_READY,
                    f"endpoints-empty:{ns}:{svc.name}",
                    f"Service `{svc.name}` (selector `{sel}`) has no ready endpoints: Endpoints "
                    f"`{svc.name}` lists {len(ep.not_ready)} not-ready and no ready address",
                    subject=me,
                    evidence=ev,
                    objects=ep_ref,
                    service=service,
                    severity="warning",
                    reason="NoReadyEndpoints",
                    detail={"selector": dict(svc.selector)},
                )
            )
        facts += _named_ports(ctx, svc, matching, ev)
        facts += _local_only(ctx, svc, ready, pods, ev, ep_ref, service)
    return facts


def _local_only(
    ctx: ObserveContext,
    svc: Service,
    ready: list[Pod],
    pods: list[Pod],
    ev: list[str],
    ep_ref: list[ObjRef],
    service: str,
) -> list[Fact]:
    """A Service with ``internalTrafficPolicy: Local`` sends each pod's calls only to the
    endpoints on that pod's own node: pods of its namespace on nodes where none of its ready
    pods runs reach nothing through it (their connections time out)."""
    if (svc.internal_traffic_policy or "").lower() != "local" or not ready:
        return []
    served = {p.node for p in ready if p.node}
    mine = {id(p) for p in ready}
    stranded = [
        p for p in pods
        if p.node and p.node not in served and id(p) not in mine and pod_ready(p)
        and not selects(svc.selector, p.labels)
    ]  # fmt: skip
    if not served or not stranded:
        return []
    nodes = sorted({str(p.node) for p in stranded})
    return [
        k8s_fact(
            ctx, K.MISCONFIGURATION, f"local-traffic:{svc.namespace}:{svc.name}",
            f"Service `{svc.name}` has internalTrafficPolicy: Local, and its ready endpoints "
            f"run only on {quoted(sorted(served), 3)}: the {len(stranded)} pod(s) on "
            f"{quoted(nodes, 3)} ({quoted([str(p.name) for p in stranded], 3)}) reach no "
            "endpoint through it, so their connections to it time out",
            subject=ref("Service", svc.name, svc.namespace),
            evidence=ev,
            objects=[*_pod_refs(stranded), *ep_ref],
            service=service, reason="LocalTrafficPolicy", conclusive=True,
            detail={"served_nodes": sorted(served), "stranded_nodes": nodes},
        )
    ]  # fmt: skip


def _port_number(declared: str) -> str:
    """``http:8080/TCP`` / ``8080/TCP`` / ``8080`` -> ``8080``."""
    return declared.rsplit(":", 1)[-1].split("/", 1)[0]


def _named_ports(ctx: ObserveContext, svc: Service, pods: list[Pod], ev: list[str]) -> list[Fact]:
    """A targetPort that none of the selected pods' containers declares: a named one, or a
    number while the containers declare other ports (traffic goes where nothing listens)."""
    out = []
    for port in svc.ports:
        target = port.target_port or ""
        if not target or not pods:
            continue
        declared = [cp for p in pods for c in p.containers for cp in c.ports]
        if not declared:
            continue
        if target.isdigit():
            numbers = sorted({_port_number(cp) for cp in declared})
            if target in numbers:
                continue
            if any(not c.ports for p in pods for c in p.containers):
                continue  # a container that declares no port may listen on that number
            if svc.cluster_ip == "None":
                # a headless Service proxies nothing: its names resolve to the pods, and a
                # peer connects to whatever port it knows (a cluster's gossip port, which
                # containers often do not declare)
                continue
            out.append(
                k8s_fact(
                    ctx,
                    K.MISCONFIGURATION,
                    f"target-port:{svc.namespace}:{svc.name}:{target}",
                    f"Service `{svc.name}` sends port {port.port} to targetPort {target}, but its "
                    f"pods' containers listen on {', '.join(numbers)} (declared ports "
                    f"{quoted(sorted(set(declared)), 4)}): connections to it are refused",
                    subject=ref("Service", svc.name, svc.namespace),
                    evidence=ev,
                    severity="error",
                    objects=_pod_refs(pods),
                    service=svc.selector.get("app") or svc.name,
                    reason="TargetPortNotListening",
                    detail={"target_port": target, "container_ports": numbers},
                )
            )
            continue
        names = {cp.split(":", 1)[0] for cp in declared if ":" in cp}
        if target in names:
            continue
        out.append(
            k8s_fact(
                ctx,
                K.MISCONFIGURATION,
                f"target-port:{svc.namespace}:{svc.name}:{target}",
                f"Service `{svc.name}` sends port {port.port} to the named targetPort `{target}`, "
                "which the selected pods do not declare",
                subject=ref("Service", svc.name, svc.namespace),
                evidence=ev,
                severity="warning",
                objects=_pod_refs(pods),
                reason="UnknownTargetPort",
                detail={"target_port": target},
            )
        )
    return out


def _scaled_down(g: object, ns: str | None, selector: dict[str, str]) -> bool:
    """Whether a Deployment / StatefulSet whose pods the selector would select is at 0."""
    from opsmate.records.k8s_objects import Workload

    for kind in ("Deployment", "StatefulSet"):
        for w in g.all(kind, ns):  # type: ignore[attr-defined]
            if not isinstance(w, Workload) or w.replicas.desired != 0 or w.template is None:
                continue
            if all(w.template.labels.get(k) == v for k, v in selector.items()):
                return True
    return False


def _alike(have: str | None, want: str) -> bool:
    """Whether a label value reads like the selector's value (a typo, a suffix)."""
    if not have:
        return False
    from difflib import SequenceMatcher

    a, b = have.lower(), want.lower()
    return a.startswith(b) or b.startswith(a) or SequenceMatcher(None, a, b).ratio() >= 0.8
