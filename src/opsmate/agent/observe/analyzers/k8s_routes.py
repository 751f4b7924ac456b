"""What routes traffic in from outside, read as objects (k8sgpt's Gateway, GatewayClass,
HTTPRoute and Ingress TLS checks), and Services that wait for something to exist:

- a Gateway whose GatewayClass is proven absent, or whose class / the Gateway itself is not
  Accepted / Programmed (the controller's own condition, with its message);
- an HTTPRoute whose parent Gateway or backend Service is proven absent, a backend port the
  Service does not expose, or a parent that refused it (``Accepted=False``: NotAllowedByListeners,
  a namespace not allowed);
- an Ingress or Gateway listener TLS Secret proven absent;
- a ``type: LoadBalancer`` Service that never got an address (``status.loadBalancer`` empty),
  named as such when a controller's AllocationFailed event or a pending age says so;
- a StatefulSet whose governing Service (``spec.serviceName``) is proven absent.

Each finding is the system's own account (an object proven absent, a controller's
condition): conclusive.
"""

from __future__ import annotations

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, quoted, ref
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, ObjRef
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.observe.registry import over_graph
from opsmate.records.k8s import Condition
from opsmate.records.k8s_gateway import Gateway, GatewayClass, HTTPRoute
from opsmate.records.k8s_objects import Ingress, Service, Workload


def _false(conds: list[Condition], *types: str) -> Condition | None:
    """The first condition of ``types`` that is False (a controller's refusal)."""
    for c in conds:
        if c.type in types and (c.status or "").lower() == "false":
            return c
    return None


@over_graph
@graph_cached
def gateways(ctx: ObserveContext) -> list[Fact]:
    """Gateways against their classes, routes against their gateways and Services."""
    g = ctx.graph
    facts: list[Fact] = []
    classes = {c.name: c for c in g.all("GatewayClass") if isinstance(c, GatewayClass)}
    for gw in g.all("Gateway"):
        if not isinstance(gw, Gateway) or not gw.name:
            continue
        ns, me = gw.namespace, ref("Gateway", gw.name, gw.namespace)
        mine = ("Gateway", ns, gw.name)
        cls = gw.class_name
        proof = g.absent("GatewayClass", None, cls) if cls else None
        if cls and proof:
            have = quoted(sorted(str(n) for n in classes)) or "none"
            facts.append(
                k8s_fact(
                    ctx,
                    K.MISSING_REFERENCE,
                    f"gateway-class:{ns}:{gw.name}",
                    f"Gateway `{gw.name}` names GatewayClass `{cls}` (spec.gatewayClassName), "
                    f"which does not exist (GatewayClasses: {have}), so no controller programs it",
                    subject=me,
                    evidence=evidence(g, mine, proof),
                    objects=[ref("GatewayClass", cls)],
                    reason="GatewayClassNotFound",
                    detail={"gateway_class": cls},
                    conclusive=True,
                )
            )
            continue
        klass = classes.get(cls or "")
        bad = _false(klass.conditions, "Accepted") if klass is not None else None
        if bad is not None and klass is not None:
            facts.append(
                k8s_fact(
                    ctx,
                    K.MISCONFIGURATION,
                    f"gateway-class-refused:{klass.name}",
                    f"GatewayClass `{klass.name}` (used by Gateway `{gw.name}`) is not accepted "
                    f"by its controller ({bad.reason}): {bad.message or 'no message'}",
                    subject=ref("GatewayClass", str(klass.name)),
                    evidence=evidence(g, ("GatewayClass", None, klass.name), mine),
                    objects=[me],
                    reason="GatewayClassNotAccepted",
                    message=bad.message,
                    conclusive=True,
                )
            )
        cond = _false(gw.conditions, "Accepted", "Programmed")
        if cond is not None:
            facts.append(
                k8s_fact(
                    ctx,
                    K.MISCONFIGURATION,
                    f"gateway-refused:{ns}:{gw.name}",
                    f"Gateway `{gw.name}` is not {cond.type} ({cond.reason}): "
                    f"{cond.message or 'no message'}",
                    subject=me,
                    evidence=evidence(g, mine),
                    objects=[ref("GatewayClass", cls)] if cls else [],
                    reason="GatewayNotAccepted"
                    if cond.type == "Accepted"
                    else "GatewayNotProgrammed",
                    message=cond.message,
                    conclusive=True,
                )
            )
        for listener in gw.listeners:
            for secret in listener.tls_secrets:
                facts += _tls_secret(
                    ctx, "Gateway", gw.name, ns, secret, f"listener {listener.name}"
                )
    for route in g.all("HTTPRoute"):
        if isinstance(route, HTTPRoute) and route.name:
            facts += _route(ctx, route)
    return facts


def _route(ctx: ObserveContext, route: HTTPRoute) -> list[Fact]:
    g = ctx.graph
    ns, me = route.namespace, ref("HTTPRoute", str(route.name), route.namespace)
    mine = ("HTTPRoute", ns, route.name)
    hosts = f" (host {', '.join(route.hostnames[:2])})" if route.hostnames else ""
    out: list[Fact] = []
    by = [ObjRef(kind="host", name=h) for h in route.hostnames[:3]]  # what users reach it by
    for p in route.parents:
        if (p.kind or "Gateway") != "Gateway" or not p.name:
            continue
        pns = p.namespace or ns
        proof = g.absent("Gateway", pns, p.name)
        if proof:
            out.append(
                k8s_fact(
                    ctx,
                    K.MISSING_REFERENCE,
                    f"route-parent:{ns}:{route.name}:{p.name}",
                    f"HTTPRoute `{route.name}`{hosts} attaches to Gateway `{p.name}` "
                    f"(parentRefs), which does not exist in {pns}",
                    subject=me,
                    evidence=evidence(g, mine, proof),
                    objects=[ref("Gateway", p.name, pns), *by],
                    reason="RouteParentNotFound",
                    conclusive=True,
                )
            )
    for st in route.parent_status:
        bad = _false(st.conditions, "Accepted", "ResolvedRefs")
        if bad is None:
            continue
        why = _not_allowed(g, route, str(st.parent or ""))
        out.append(
            k8s_fact(
                ctx,
                K.MISCONFIGURATION,
                f"route-refused:{ns}:{route.name}:{st.parent}",
                f"HTTPRoute `{route.name}`{hosts} is not {bad.type} by Gateway `{st.parent}` "
                f"({bad.reason}): {(bad.message or 'no message').rstrip('.')}"
                + (f"; {why}" if why else ""),
                subject=me,
                evidence=evidence(g, mine, *_gateway_refs(g, route, str(st.parent or ""))),
                objects=([ref("Gateway", str(st.parent), ns)] if st.parent else []) + by,
                reason="RouteNotAllowed" if bad.type == "Accepted" else "RouteNotAccepted",
                message=bad.message,
                # the Gateway read after the route says why its listeners refuse it
                detail={"fuller_view": True} if why else {},
                conclusive=True,
            )
        )
    for b in route.backends:
        if (b.kind or "Service") != "Service" or not b.name:
            continue
        bns = b.namespace or ns
        proof = g.absent("Service", bns, b.name)
        svc = g.get("Service", bns, b.name)
        if proof:
            out.append(
                k8s_fact(
                    ctx,
                    K.MISSING_REFERENCE,
                    f"route-backend:{ns}:{route.name}:{b.name}",
                    f"HTTPRoute `{route.name}`{hosts} sends traffic to Service `{b.name}` "
                    f"(backendRefs), which does not exist in {bns}",
                    subject=me,
                    evidence=evidence(g, mine, proof),
                    objects=[ref("Service", b.name, bns), *by],
                    reason="RouteBackendNotFound",
                    conclusive=True,
                )
            )
        elif isinstance(svc, Service) and b.port is not None and svc.ports:
            ports = {p.port for p in svc.ports if p.port is not None}
            if b.port not in ports:
                out.append(
                    k8s_fact(
                        ctx,
                        K.MISCONFIGURATION,
                        f"route-port:{ns}:{route.name}:{b.name}",
                        f"HTTPRoute `{route.name}`{hosts} sends traffic to port {b.port} of "
                        f"Service `{b.name}`, which exposes only "
                        f"{quoted(sorted(str(p) for p in ports))}",
                        subject=me,
                        evidence=evidence(g, mine, ("Service", bns, b.name)),
                        objects=[ref("Service", b.name, bns), *by],
                        reason="RouteBackendPortNotFound",
                        conclusive=True,
                    )
                )
    return out


def _tls_secret(
    ctx: ObserveContext, kind: str, name: str, ns: str | None, secret: str, where: str
) -> list[Fact]:
    g = ctx.graph
    proof = g.absent("Secret", ns, secret)
    if not proof:
        return []
    return [
        k8s_fact(
            ctx,
            K.MISSING_REFERENCE,
            f"tls-secret:{kind}:{ns}:{name}:{secret}",
            f"{kind} `{name}` ({where}) serves TLS with Secret `{secret}`, which does not exist "
            f"in {ns}: HTTPS to it fails",
            subject=ref(kind, name, ns),
            evidence=evidence(g, (kind, ns, name), proof),
            objects=[ref("Secret", secret, ns)],
            reason="TLSSecretNotFound",
            detail={"ref_kind": "Secret", "ref_name": secret},
            conclusive=True,
        )
    ]


@over_graph
@graph_cached
def ingress_tls(ctx: ObserveContext) -> list[Fact]:
    """Ingress TLS Secrets proven absent."""
    facts: list[Fact] = []
    for ing in ctx.graph.all("Ingress"):
        if isinstance(ing, Ingress) and ing.name:
            for secret in ing.tls_secrets:
                facts += _tls_secret(ctx, "Ingress", ing.name, ing.namespace, secret, "spec.tls")
    return facts


@over_graph
@graph_cached
def load_balancers(ctx: ObserveContext) -> list[Fact]:
    """``type: LoadBalancer`` Services with no address while their controller says why, and
    StatefulSets whose governing Service is proven absent."""
    g = ctx.graph
    facts: list[Fact] = []
    failed = {
        (e.object.namespace or e.namespace, e.object.name): (e, eid)
        for e, eid in g.events
        if e.object.kind == "Service" and e.reason in ("AllocationFailed", "SyncLoadBalancerFailed")
    }
    for svc in g.all("Service"):
        if not isinstance(svc, Service) or (svc.type or "") != "LoadBalancer" or not svc.name:
            continue
        found = failed.get((svc.namespace, svc.name))
        if found is None or svc.lb_addresses:
            continue
        ev, eid = found
        facts.append(
            k8s_fact(
                ctx,
                K.MISCONFIGURATION,
                f"lb-pending:{svc.namespace}:{svc.name}",
                f"Service `{svc.name}` (type LoadBalancer) has no external address: "
                f"{ev.reason}: {ev.message or ''}".rstrip(": "),
                subject=ref("Service", svc.name, svc.namespace),
                evidence=[*evidence(g, ("Service", svc.namespace, svc.name)), eid],
                reason="LoadBalancerPending",
                message=ev.message,
                conclusive=True,
            )
        )
    for w in g.all("StatefulSet"):
        if not isinstance(w, Workload) or not w.name or not w.service_name:
            continue
        proof = g.absent("Service", w.namespace, w.service_name)
        if proof:
            facts.append(
                k8s_fact(
                    ctx,
                    K.MISCONFIGURATION,
                    f"sts-service:{w.namespace}:{w.name}",
                    f"StatefulSet `{w.name}` names governing Service `{w.service_name}` "
                    f"(spec.serviceName), which does not exist in {w.namespace}: its pods get "
                    "no stable DNS names",
                    subject=ref("StatefulSet", w.name, w.namespace),
                    evidence=evidence(g, ("StatefulSet", w.namespace, w.name), proof),
                    objects=[ref("Service", w.service_name, w.namespace)],
                    reason="GoverningServiceNotFound",
                    conclusive=True,
                )
            )
    return facts


def _parent(g: ObjectGraph, route: HTTPRoute, name: str) -> Gateway | None:
    """The Gateway ``name`` a route attaches to (in the namespace its parentRef names)."""
    for p in route.parents:
        if p.name == name:
            gw = g.get("Gateway", p.namespace or route.namespace, name)
            return gw if isinstance(gw, Gateway) else None
    gw = g.get("Gateway", route.namespace, name)
    return gw if isinstance(gw, Gateway) else None


def _gateway_refs(
    g: ObjectGraph, route: HTTPRoute, name: str
) -> list[tuple[str, str | None, str | None]]:
    gw = _parent(g, route, name)
    refs: list[tuple[str, str | None, str | None]] = []
    if gw is not None:
        refs.append(("Gateway", gw.namespace, gw.name))
        refs.append(("Namespace", None, route.namespace))
    return refs


def _not_allowed(g: ObjectGraph, route: HTTPRoute, name: str) -> str | None:
    """Why a Gateway's listeners admit no route from the route's namespace, as the
    controller decides it: ``allowedRoutes.namespaces`` (Same when unset: only the Gateway's
    own namespace; Selector: only namespaces whose labels match)."""
    gw = _parent(g, route, name)
    if gw is None or not gw.listeners:
        return None
    rns = route.namespace or ""
    if all((li.allowed_from or "Same") == "Same" for li in gw.listeners):
        if gw.namespace and gw.namespace != rns:
            return (
                f"the listeners of Gateway `{gw.name}` admit routes only from its own "
                f"namespace `{gw.namespace}` (allowedRoutes.namespaces.from: Same), and the "
                f"route is in namespace `{rns}`"
            )
        return None
    wanted = [li.allowed_labels for li in gw.listeners if li.allowed_from == "Selector"]
    if not wanted or any(li.allowed_from == "All" for li in gw.listeners):
        return None
    need = ", ".join(sorted({f"{k}={v}" for sel in wanted for k, v in sel.items()}))
    nsobj = g.get("Namespace", None, rns)
    if nsobj is None:
        return (
            f"the listeners of Gateway `{gw.name}` admit routes only from namespaces labelled "
            f"{need} (allowedRoutes.namespaces.selector)"
        )
    labels = getattr(nsobj, "labels", None) or {}
    if any(all(labels.get(k) == v for k, v in sel.items()) for sel in wanted):
        return None
    return (
        f"namespace `{rns}` lacks the label {need} that the listeners of Gateway `{gw.name}` "
        f"require of a route's namespace (allowedRoutes.namespaces.selector)"
    )
