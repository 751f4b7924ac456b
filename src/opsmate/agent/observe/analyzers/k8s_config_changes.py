"""Configuration that changed: a ConfigMap edited shortly before the trouble began.

A rollout shows in a Deployment's revisions; a ConfigMap has no revisions, but its
``managedFields`` say when it was last written and by which client (``kubectl-edit``,
``helm``, ``argocd`` ...), and the ``last-applied-configuration`` of ``kubectl apply`` says
what it held before. A ConfigMap written inside the investigation's window (or up to an
hour before it) becomes a CHANGE fact about the workloads that read it (mounted as a
volume, ``envFrom``, or one key through ``valueFrom``), so the judge can tie it to errors
that began right after — feature-flag files and application configs included.
"""

from __future__ import annotations

from datetime import timedelta

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, quoted, ref
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.depgraph import workload_of
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.registry import over_graph
from opsmate.agent.observe.text import hm
from opsmate.records.k8s import Pod
from opsmate.records.k8s_objects import ConfigMap


def readers(pods: list[Pod], name: str) -> list[str]:
    """The workloads whose pods read ConfigMap ``name``."""
    out: list[str] = []
    for p in pods:
        uses = any(v.type == "configMap" and v.ref_name == name for v in p.volumes)
        for c in p.all_containers():
            uses = uses or any(e.source == "configmap" and e.name == name for e in c.env_from)
            uses = uses or any(e.ref_name == name and e.source == "configmap" for e in c.env)
        if uses and workload_of(p) not in out:
            out.append(workload_of(p))
    return out


@over_graph
@graph_cached
def config_changes(ctx: ObserveContext) -> list[Fact]:
    """ConfigMaps written within (or an hour before) the window."""
    g = ctx.graph
    facts: list[Fact] = []
    lo = ctx.window_from - timedelta(hours=1) if ctx.window_from else None
    for cm in g.all("ConfigMap"):
        if not isinstance(cm, ConfigMap) or not cm.name or cm.changed_at is None:
            continue
        if (lo and cm.changed_at < lo) or (ctx.window_to and cm.changed_at > ctx.window_to):
            continue
        users = readers(g.pods(cm.namespace), cm.name)
        by = f" by {cm.changed_by}" if cm.changed_by else ""
        what = ""
        if cm.changes:
            what = "; " + "; ".join(cm.changes[:3])
        elif cm.changed_keys:
            what = f"; keys changed since the last apply: {quoted(cm.changed_keys)}"
        read = f"; read by {quoted(users, 3)}" if users else ""
        f = k8s_fact(
            ctx,
            K.CHANGE,
            f"config-change:{cm.namespace}:{cm.name}:{cm.changed_at.isoformat()}",
            f"ConfigMap `{cm.name}` was changed at {hm(cm.changed_at)}{by}{what}{read}",
            subject=ref("ConfigMap", cm.name, cm.namespace),
            evidence=evidence(g, ("ConfigMap", cm.namespace, cm.name)),
            objects=[ref("Deployment", u, cm.namespace) for u in users[:3]],
            severity="info",
            service=users[0] if users else None,
            reason="ConfigChanged",
            detail={
                "change": "config",
                "config": cm.name,
                "manager": cm.changed_by,
                "keys": cm.changed_keys,
                "changes": cm.changes,
                "readers": users,
            },
        )
        f.time = cm.changed_at
        facts.append(f)
    return facts
