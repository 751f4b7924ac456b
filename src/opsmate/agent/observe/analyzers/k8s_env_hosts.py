"""Addresses in a workload's configuration that name a Service that does not exist.

A container's environment names its dependencies (``LEDGER_API_ADDR=ledger:9000``,
``DB_URL=postgres://user@books-db/books``). When the name is an in-cluster Service name
(one label, ``name.namespace`` or ``name.namespace.svc[.cluster.local]``) and a complete
listing of that namespace's Services shows no such Service, the name cannot resolve: every
call the workload makes to it fails with "no such host" / "produced zero addresses". This
is a misconfiguration of the *client* — the callee may be perfectly healthy — and it is
often what the last rollout changed. Said only with the listing that proves the absence.
"""

from __future__ import annotations

import re

from opsmate.agent.observe.analyzers.k8s_common import evidence, graph_cached, k8s_fact, quoted, ref
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.depgraph import hosts_in, workload_of
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.registry import over_graph
from opsmate.loganalysis.signals import ADDRESS_SETTING, NOT_A_HOST, SERVICE_NAME_SETTINGS
from opsmate.records.k8s_objects import Service

_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")


def _not_a_host(value: str) -> bool:
    v = value.strip().lower()
    return v in NOT_A_HOST or v.isdigit()


def _service_name(host: str, namespace: str | None) -> tuple[str, str | None] | None:
    """``(service, namespace)`` when ``host`` reads as an in-cluster Service name."""
    parts = host.lower().strip(".").split(".")
    if not all(_LABEL.match(p) for p in parts) or parts[-1].isdigit():
        return None
    if len(parts) == 1:
        return parts[0], namespace
    if len(parts) >= 3 and parts[2] == "svc":
        return parts[0], parts[1]
    return None  # name.ns is ambiguous with external hosts: left alone


@over_graph
@graph_cached
def unknown_service_hosts(ctx: ObserveContext) -> list[Fact]:
    """Env values of running workloads that name a Service the listing proves absent."""
    g = ctx.graph
    facts: list[Fact] = []
    seen: set[tuple[str, str]] = set()
    for p in g.pods():
        ns = p.namespace
        listed = g.listed("Service", ns)
        if not listed:
            continue
        names = {str(s.name) for s in g.all("Service", ns) if isinstance(s, Service)}
        workload = workload_of(p)
        for c in p.containers:
            for env in c.env:
                if not env.value or env.value_hidden or not env.name:
                    continue
                if env.name.upper() in SERVICE_NAME_SETTINGS:
                    continue  # a name the workload reports itself under, not an address
                hosts = [h for h, _ in hosts_in(env.value)]
                if not hosts and ADDRESS_SETTING.search(env.name) and not _not_a_host(env.value):
                    hosts = [env.value.strip()]
                for h in hosts:
                    svc = _service_name(h, ns)
                    if svc is None or (workload, env.name) in seen:
                        continue
                    if svc[1] == ns and svc[0] in names:
                        continue  # it exists where the name points
                    if svc[1] != ns and svc[0] not in names:
                        continue  # another namespace, not one we can see
                    seen.add((workload, env.name))
                    if svc[1] != ns:
                        what = (
                            f"it points at namespace {svc[1]}, but Service `{svc[0]}` lives in "
                            f"namespace {ns}"
                        )
                        close = [svc[0]]
                    else:
                        what = f"no Service `{svc[0]}` exists in namespace {ns}"
                        close = [n for n in sorted(names) if n[:4] == svc[0][:4]][:3]
                    hint = f"; Services with a similar name: {quoted(close)}" if close else ""
                    facts.append(
                        k8s_fact(
                            ctx,
                            K.MISCONFIGURATION,
                            f"unknown-host:{ns}:{workload}:{env.name}",
                            f"{workload} is configured with {env.name}={env.value}, but {what}, "
                            f"so the name does not resolve and every call to it fails{hint}",
                            subject=ref("Deployment", workload, ns),
                            evidence=evidence(g, ("Pod", ns, p.name), listed),
                            objects=[ref("Service", n, ns) for n in close],
                            service=workload,
                            reason="UnknownServiceHost",
                            detail={"env": env.name, "value": env.value, "service": svc[0]},
                        )
                    )
    return facts
