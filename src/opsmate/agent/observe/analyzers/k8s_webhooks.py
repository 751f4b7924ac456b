"""Admission webhooks that fail closed on a Service that is gone or has no endpoints.

A webhook with ``failurePolicy: Fail`` whose Service is proven absent, or whose
Endpoints list no ready address, makes the API server refuse every request the webhook
matches (pods of every Deployment, for instance): MISCONFIGURATION naming the
configuration, the webhook, its Service and the operations it intercepts.
"""

from __future__ import annotations

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, ref
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.registry import over_graph
from opsmate.records.k8s_objects import Endpoints, WebhookConfiguration


@over_graph
@graph_cached
def webhooks(ctx: ObserveContext) -> list[Fact]:
    """Fail-closed webhooks whose Service cannot answer."""
    g = ctx.graph
    facts = []
    for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        for cfg in g.all(kind):
            if not isinstance(cfg, WebhookConfiguration) or not cfg.name:
                continue
            for w in cfg.webhooks:
                if w.failure_policy != "Fail" or not w.service or "/" not in w.service:
                    continue
                ns, name = w.service.split("/", 1)
                proof = g.absent("Service", ns, name)
                ep = g.get("Endpoints", ns, name)
                ev: str | None
                if proof:
                    why, ev = f"Service `{w.service}` does not exist", proof
                elif isinstance(ep, Endpoints) and not ep.ready:
                    why, ev = (
                        f"Service `{w.service}` has no ready endpoints",
                        g.source_of("Endpoints", ns, name),
                    )
                else:
                    continue
                facts.append(
                    k8s_fact(
                        ctx,
                        K.MISCONFIGURATION,
                        f"webhook:{cfg.name}:{w.name}",
                        f"{kind} `{cfg.name}` webhook `{w.name}` (failurePolicy Fail, intercepts "
                        f"{'; '.join(w.rules) or 'requests'}) calls {why}: the API server refuses "
                        "every request it intercepts",
                        subject=ref(kind, cfg.name),
                        evidence=evidence(g, (kind, None, cfg.name), ev),
                        objects=[ref("Service", name, ns)],
                        reason="WebhookUnavailable",
                        detail={"webhook": w.name, "service": w.service, "rules": w.rules},
                    )
                )
    return facts
