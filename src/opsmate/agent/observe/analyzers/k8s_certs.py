"""cert-manager's account of certificates (cert-manager.io/v1): a Certificate past its
``status.notAfter`` (or Ready=False, reason Expired) with why its renewal fails (the Issuing
condition's message, the failed attempts); an Issuer or ClusterIssuer that is not Ready
(it signs nothing, so the certificates it issues are not renewed).

Each finding is the controller's own account: conclusive. A certificate that expired
before the window ended is an expired certificate whatever its Ready condition says (the
controller may not have caught up); without a window, the condition alone decides."""

from __future__ import annotations

import re
from datetime import datetime

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, quoted, ref
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, ObjRef
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.registry import over_graph
from opsmate.agent.observe.text import clip
from opsmate.records.k8s import Condition
from opsmate.records.k8s_certs import Certificate, Issuer

_RETRIED = re.compile(
    r"^the certificate request has failed to complete and will be retried:\s*", re.I
)


def _cond(conds: list[Condition], kind: str) -> Condition | None:
    return next((c for c in conds if c.type == kind), None)


def _false(c: Condition | None) -> bool:
    return c is not None and (c.status or "").lower() == "false"


def _when(t: datetime, window_to: datetime | None) -> str:
    """``06:00:00`` on the window's day, else ``2026-03-14 06:00``."""
    if window_to is not None and t.date() == window_to.date():
        return t.strftime("%H:%M:%S")
    return t.strftime("%Y-%m-%d %H:%M")


def _expired(cert: Certificate, end: datetime | None) -> bool:
    ready = _cond(cert.conditions, "Ready")
    if _false(ready) and (ready.reason or "").lower() == "expired":  # type: ignore[union-attr]
        return True
    return bool(cert.not_after and end and cert.not_after <= end)


def _issuer_of(ctx: ObserveContext, cert: Certificate) -> Issuer | None:
    kind = cert.issuer_kind or "Issuer"
    ns = None if kind == "ClusterIssuer" else cert.namespace
    found = ctx.graph.get(kind, ns, cert.issuer_name or "")
    return found if isinstance(found, Issuer) else None


@over_graph
@graph_cached
def certificates(ctx: ObserveContext) -> list[Fact]:
    """Certificates past their validity, and issuers that cannot sign."""
    g = ctx.graph
    facts: list[Fact] = []
    for cert in g.all("Certificate"):
        if not isinstance(cert, Certificate) or not cert.name or not _expired(cert, ctx.window_to):
            continue
        facts.append(_expired_fact(ctx, cert))
    for kind in ("Issuer", "ClusterIssuer"):
        for iss in g.all(kind):
            if isinstance(iss, Issuer) and iss.name:
                f = _issuer_fact(ctx, kind, iss)
                if f is not None:
                    facts.append(f)
    return facts


def _expired_fact(ctx: ObserveContext, cert: Certificate) -> Fact:
    ns, name = cert.namespace, str(cert.name)
    names = f", for {', '.join(cert.dns_names[:2])}" if cert.dns_names else ""
    secret = f"Secret `{cert.secret_name}`" if cert.secret_name else "its Secret"
    when = f" at {_when(cert.not_after, ctx.window_to)}" if cert.not_after else ""
    statement = f"Certificate `{name}` ({secret}{names}) expired{when} (status.notAfter)"
    issuing = _cond(cert.conditions, "Issuing")
    ready = _cond(cert.conditions, "Ready")
    why = issuing.message if _false(issuing) and issuing and issuing.message else None
    if why:
        why = _RETRIED.sub("", why) or why  # cert-manager's preamble: the error follows it
    if why:
        tries = f" ({cert.failed_attempts} failed attempts)" if cert.failed_attempts else ""
        statement += f"; cert-manager cannot renew it{tries}: {clip(why, 240)}"
    issuer = _issuer_of(ctx, cert)
    objects: list[ObjRef] = []
    if cert.secret_name:
        objects.append(ref("Secret", cert.secret_name, ns))
    if cert.issuer_name:
        objects.append(ref(cert.issuer_kind or "Issuer", cert.issuer_name, ns))
    objects += [ObjRef(kind="host", name=h) for h in cert.dns_names[:4]]
    message = (ready.message if ready and ready.message else None) or "certificate expired"
    f = k8s_fact(
        ctx,
        K.CONFIG_ERROR,
        f"cert-expired:{ns}:{name}",
        statement,
        subject=ref("Certificate", name, ns),
        evidence=evidence(
            ctx.graph,
            ("Certificate", ns, name),
            (issuer.kind or cert.issuer_kind or "Issuer", issuer.namespace, issuer.name)
            if issuer is not None
            else None,
        ),
        objects=objects,
        reason="certificate",
        message=f"{message}; {why}" if why else message,
        detail={"not_after": cert.not_after.isoformat() if cert.not_after else None},
        conclusive=True,
    )
    f.time = cert.not_after
    return f


def _issuer_fact(ctx: ObserveContext, kind: str, iss: Issuer) -> Fact | None:
    ready = _cond(iss.conditions, "Ready")
    if not _false(ready) or ready is None:
        return None
    ns = iss.namespace if kind == "Issuer" else None
    mine = [
        c
        for c in ctx.graph.all("Certificate")
        if isinstance(c, Certificate)
        and c.issuer_name == iss.name
        and (c.issuer_kind or "Issuer") == kind
        and (kind == "ClusterIssuer" or c.namespace == ns)
    ]
    hurt = [c for c in mine if _expired(c, ctx.window_to) or _false(_cond(c.conditions, "Ready"))]
    signs = f"; it issues {quoted([str(c.name) for c in mine])}" if mine else ""
    f = k8s_fact(
        ctx,
        K.MISCONFIGURATION,
        f"issuer-not-ready:{kind}:{ns}:{iss.name}",
        f"{kind} `{iss.name}` is not Ready ({ready.reason or 'no reason'}): "
        f"{clip(ready.message or 'no message', 240)}{signs}",
        subject=ref(kind, iss.name, ns),
        evidence=evidence(ctx.graph, (kind, ns, iss.name)),
        objects=[ref("Secret", iss.ca_secret, ns or (mine[0].namespace if mine else None))]
        if iss.ca_secret
        else [],
        severity="error" if hurt else "warning",
        reason="IssuerNotReady",
        message=ready.message,
        conclusive=True,
    )
    f.time = ready.last_transition_time
    return f
