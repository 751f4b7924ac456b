"""Ingresses: a class or backend Service that does not exist, a class no controller serves.

- the IngressClass named by ``ingressClassName`` (or the legacy annotation) proven absent
  -> MISSING_REFERENCE, naming the classes that do exist;
- a named class not (yet) proven absent, on an Ingress that no controller has given an
  address (``status.loadBalancer`` empty) -> MISCONFIGURATION: the class is served by
  no controller (true whether or not an IngressClass object of that name exists);
- no class, and no IngressClass marked default (complete listing) -> MISCONFIGURATION;
- a backend Service proven absent -> MISSING_REFERENCE; one that exists but does not
  expose the port the Ingress names -> MISCONFIGURATION.
"""

from __future__ import annotations

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, quoted, ref
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, ObjRef
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.registry import over_graph
from opsmate.agent.observe.software import made_for
from opsmate.records.k8s_objects import Ingress, IngressClass, Service


def _hosts(ing: Ingress) -> list[str]:
    return list(dict.fromkeys(r.host for r in ing.rules if r.host))


@over_graph
@graph_cached
def ingresses(ctx: ObserveContext) -> list[Fact]:
    """Each Ingress against the IngressClasses and Services in the graph."""
    g = ctx.graph
    facts: list[Fact] = []
    for ing in g.all("Ingress"):
        if not isinstance(ing, Ingress) or not ing.name:
            continue
        ns = ing.namespace
        me = ref("Ingress", ing.name, ns)
        hosts = _hosts(ing)
        where = f" (host {', '.join(hosts[:3])})" if hosts else ""
        if purpose := made_for(ing.labels):  # a challenge solver, not the application's own
            where += f" ({purpose})"
        mine = ("Ingress", ns, ing.name)
        svc_refs = [ref("Service", s, ns) for s in ing.services()]
        svc_refs += [ObjRef(kind="host", name=h) for h in hosts]  # what users reach it by
        classes = [c for c in g.all("IngressClass") if isinstance(c, IngressClass)]
        cls = ing.class_name
        field = (
            "spec.ingressClassName"
            if ing.class_source != "annotation"
            else ("the kubernetes.io/ingress.class annotation")
        )
        if cls:
            proof = g.absent("IngressClass", None, cls)
            detail = {"ingress_class": cls, "field": field, "addresses": ing.addresses}
            if proof:
                have = quoted(sorted(str(c.name) for c in classes)) or "none"
                facts.append(
                    k8s_fact(
                        ctx,
                        K.MISSING_REFERENCE,
                        f"ingress-class:{ns}:{ing.name}",
                        f"Ingress `{ing.name}`{where} names IngressClass `{cls}` in {field}, and "
                        f"IngressClass `{cls}` does not exist (IngressClasses: {have}), so no "
                        "controller serves it",
                        subject=me,
                        evidence=evidence(g, mine, proof),
                        objects=[ref("IngressClass", cls), *svc_refs],
                        reason="IngressClassNotFound",
                        detail=detail,
                    )
                )
            elif g.get("IngressClass", None, cls) is None and not ing.addresses:
                facts.append(
                    k8s_fact(
                        ctx,
                        K.MISCONFIGURATION,
                        f"ingress-unserved:{ns}:{ing.name}",
                        f"Ingress `{ing.name}`{where} names IngressClass `{cls}` in {field} "
                        "and has "
                        "no address (status.loadBalancer is empty): no ingress controller serves "
                        f"class `{cls}`",
                        subject=me,
                        evidence=evidence(g, mine),
                        objects=[ref("IngressClass", cls), *svc_refs],
                        reason="IngressNotAdmitted",
                        detail=detail,
                    )
                )
        elif g.listed("IngressClass") and not any(c.is_default for c in classes):
            have = quoted(sorted(str(c.name) for c in classes)) or "none"
            facts.append(
                k8s_fact(
                    ctx,
                    K.MISCONFIGURATION,
                    f"ingress-noclass:{ns}:{ing.name}",
                    f"Ingress `{ing.name}`{where} names no IngressClass and none is marked default "
                    f"(IngressClasses: {have}), so no controller picks it up",
                    subject=me,
                    evidence=evidence(g, mine, g.listed("IngressClass")),
                    objects=svc_refs,
                    reason="NoIngressClass",
                )
            )
        facts += _backends(ctx, ing, where)
    return facts


def _backends(ctx: ObserveContext, ing: Ingress, where: str) -> list[Fact]:
    g = ctx.graph
    ns = ing.namespace
    out: list[Fact] = []
    seen: set[str] = set()
    for b in [*ing.rules, ing.default_backend]:
        if b is None or not b.service or b.service in seen:
            continue
        seen.add(b.service)
        route = f"{b.host or '*'}{b.path or ''}"
        mine = ("Ingress", ns, ing.name)
        proof = g.absent("Service", ns, b.service)
        svc = g.get("Service", ns, b.service)
        if proof:
            out.append(
                k8s_fact(
                    ctx,
                    K.MISSING_REFERENCE,
                    f"ingress-backend:{ns}:{ing.name}:{b.service}",
                    f"Ingress `{ing.name}` routes `{route}` to Service `{b.service}`, "
                    "which does not "
                    f"exist in {ns}",
                    subject=ref("Ingress", ing.name, ns),
                    evidence=evidence(g, mine, proof),
                    objects=[ref("Service", b.service, ns)],
                    reason="BackendServiceNotFound",
                    detail={"service": b.service, "route": route},
                )
            )
        elif isinstance(svc, Service) and b.port and svc.ports:
            names = {str(p.name) for p in svc.ports if p.name}
            numbers = {str(p.port) for p in svc.ports if p.port is not None}
            if b.port not in names | numbers:
                out.append(
                    k8s_fact(
                        ctx,
                        K.MISCONFIGURATION,
                        f"ingress-port:{ns}:{ing.name}:{b.service}",
                        f"Ingress `{ing.name}` routes `{route}` to port {b.port} of Service "
                        f"`{b.service}`, which exposes only {quoted(sorted(numbers | names))}",
                        subject=ref("Ingress", ing.name, ns),
                        evidence=evidence(g, mine, ("Service", ns, b.service)),
                        objects=[ref("Service", b.service, ns)],
                        reason="BackendPortNotFound",
                        detail={"service": b.service, "port": b.port},
                    )
                )
    return out
