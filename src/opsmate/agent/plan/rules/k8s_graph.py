"""Rules that follow the references between Kubernetes objects, from the subject outwards.

The next object read is the one the evidence points at. Objects whose absence would be
the cause are read as *lists* of their kind (a Secret list of the namespace, the
StorageClasses): a list that answers proves what is missing, whatever the name.

- ``pod_references`` (FOLLOW): a pod that is not healthy -> the Secrets, ConfigMaps and
  claims it refers to (lists of those kinds in its namespace), its ServiceAccount
  (EXPLAIN) and its owner (EXPLAIN: the template, the controller's conditions);
- ``subject_objects`` (FOLLOW): the question names an object of a readable kind (a Job,
  an Ingress, a Service, an HPA ...) -> that object; hosts -> the Ingresses;
- ``service_neighbours`` (EXPLAIN): a Service the question or a finding names -> the pods
  of its namespace when not listed yet (its Endpoints when pods cannot be listed);
- ``ingress_references`` (FOLLOW): an Ingress -> its backend Services, and the IngressClasses
  when no controller gave it an address; no Ingress serving the host asked about -> the
  HTTPRoutes;
- ``claim_references`` (FOLLOW): a pending claim -> the StorageClasses and its volume;
- ``workload_references`` (EXPLAIN): a workload short of replicas -> the namespace's
  ResourceQuotas and LimitRanges, its claim templates' StorageClasses; an HPA -> its target;
- ``dependency_service`` (FOLLOW / EXPLAIN): a connection failure to a host that is a
  Service name -> that Service and the namespace's NetworkPolicies;
- ``quota_objects`` (FOLLOW): a quota or LimitRange refusal -> the quotas, LimitRanges
  and the refused workload's template;
- ``reference_proof`` (FOLLOW): the kubelet says an object is missing -> the list of
  that kind that proves it;

The rules for a ServiceAccount refused by the API server (its bindings and roles) are in
:mod:`opsmate.agent.plan.rules.k8s_access`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from typing import Any

from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.plan.registry import Check, RuleContext, fact_rule, result_rule
from opsmate.agent.plan.tiers import Tier
from opsmate.records.k8s import Pod
from opsmate.records.k8s_gateway import Gateway, HTTPRoute
from opsmate.records.k8s_objects import (
    ConfigMap,
    HorizontalPodAutoscaler,
    Ingress,
    PersistentVolumeClaim,
    Service,
    Workload,
)
from opsmate.records.payloads import ObjectsPayload, pods_in
from opsmate.tools.base import ToolResult
from opsmate.tools.k8s_kinds import KINDS

MAX_PODS = 3  # unhealthy pods whose references are followed per answer
_OBJECT_KINDS = {
    "ConfigMap",
    "Secret",
    "PersistentVolumeClaim",
    "ServiceAccount",
    "StorageClass",
    "IngressClass",
    "Service",
    "PersistentVolume",
}
SA_USER = re.compile(r"^system:serviceaccount:([^:]+):([^:]+)$")
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_TLDS = {
    "com",
    "net",
    "org",
    "io",
    "dev",
    "app",
    "co",
    "cloud",
    "local",
    "internal",
    "info",
    "biz",
    "us",
    "uk",
    "de",
    "cn",
    "jp",
    "fr",
    "eu",
    "ai",
}


def list_check(ctx: RuleContext, kind: str, ns: str | None, reason: str) -> Check | None:
    if "list_objects" not in ctx.tools:
        return None
    args: dict[str, Any] = {"kind": kind}
    if KINDS[kind].namespaced:
        args.update(ctx.ns(ns))
        if ctx.graph.listed(kind, args.get("namespace")):
            return None  # already proven complete
    elif ctx.graph.listed(kind):
        return None
    return Check("list_objects", args, reason)


def get_check(
    ctx: RuleContext, kind: str, name: str | None, ns: str | None, reason: str
) -> Check | None:
    if "get_object" not in ctx.tools or not name or kind not in KINDS:
        return None
    if ctx.graph.get(kind, ns, name) is not None:
        return None
    args: dict[str, Any] = {"kind": kind, "name": name}
    if KINDS[kind].namespaced:
        args.update(ctx.ns(ns))
    return Check("get_object", args, reason)


def keep_checks(checks: Iterable[Check | None]) -> list[Check]:
    out: list[Check] = []
    for c in checks:
        if c is not None and c not in out:
            out.append(c)
    return out


def _unhealthy(p: Pod) -> bool:
    if p.phase == "Succeeded":
        return False  # a Job's pod that completed: its containers are not ready by design
    if p.phase in ("Pending", "Failed", "Unknown") or p.reason:
        return True
    for c in p.all_containers():
        if c.state == "waiting" or (c.state == "terminated" and (c.exit_code or 0) != 0):
            return True
        if not c.init and not c.ready:
            return True
    return False


def _never_started(p: Pod) -> bool:
    """A pod whose containers have not all started: what it refers to (Secrets,
    ConfigMaps, claims, its ServiceAccount) may be what holds it. A container that ran —
    crash-looping, not ready — found its references."""
    if p.phase == "Pending":
        return True
    return any(
        c.state == "waiting" and c.restarts == 0 and c.reason != "CrashLoopBackOff"
        for c in p.all_containers()
    )


def _owner(p: Pod) -> str | None:
    owner = p.owner_ref()
    return owner.name if owner else None


def _pods(result: ToolResult) -> list[Pod]:
    return pods_in(result.payload)  # list_pods, or list_objects / get_object of kind Pod


@result_rule("pod_references", Tier.FOLLOW, "list_pods", "list_objects", "get_object")
def pod_references(result: ToolResult, ctx: RuleContext) -> Iterable[Check]:
    """Unhealthy pods (the subject's first): what they refer to, their owner. When the
    subject's own pods are listed and healthy, other pods' checks wait (``CORROBORATE``):
    they are somebody else's problem until a fact links them to the subject."""
    listed = [p for p in _pods(result) if p.name]
    pods = [p for p in listed if _unhealthy(p)]
    later: Tier | None = None
    if ctx.subject.names:

        def is_mine(p: Pod) -> bool:
            return ctx.subject.matches(p.name) or ctx.subject.matches(_owner(p))

        mine = [p for p in pods if is_mine(p)]
        if not mine and any(is_mine(p) for p in listed):
            later = Tier.CORROBORATE
        pods = mine or pods
    out: list[Check | None] = []
    for p in pods[:MAX_PODS]:
        ns = p.namespace
        why = f"pod {p.name} is not healthy"
        owner = p.owner_ref()
        if owner and owner.kind in KINDS and owner.kind != "Node":
            out.append(get_check(ctx, owner.kind, owner.name, ns, f"{why}: its owner {owner.kind}"))
        if not _never_started(p):
            continue
        kinds: set[str | None] = {v.type for v in p.volumes}
        for c in p.all_containers():
            kinds |= {e.source for e in c.env} | {e.source for e in c.env_from}
        if p.phase == "Pending" and not p.node:
            # not placed on a node yet: its Secrets and ConfigMaps are read only once it is
            # (they cannot be why it waits); the nodes and where its volumes live can
            out.append(
                Check("node_conditions", {}, f"{why}: not placed on a node: the nodes")
                if "node_conditions" in ctx.tools
                else None
            )
            if "persistentVolumeClaim" in kinds:
                out.append(
                    list_check(ctx, "PersistentVolumeClaim", ns, f"{why}: are its claims bound?")
                )
                out.append(list_check(ctx, "PersistentVolume", None,
                                      f"{why}: where its volumes live"))  # fmt: skip
            continue
        if "secret" in kinds or p.image_pull_secrets:
            out.append(list_check(ctx, "Secret", ns, f"{why}: do the Secrets it uses exist?"))
        if {"configMap", "configmap"} & kinds:
            out.append(
                list_check(ctx, "ConfigMap", ns, f"{why}: do its ConfigMaps and keys exist?")
            )
        if "persistentVolumeClaim" in kinds:
            out.append(
                list_check(ctx, "PersistentVolumeClaim", ns, f"{why}: are its claims bound?")
            )
        if p.service_account and p.service_account != "default" and p.phase == "Pending":
            out.append(
                list_check(ctx, "ServiceAccount", ns, f"{why}: does its ServiceAccount exist?")
            )
    checks = keep_checks(out)
    return [dataclasses.replace(c, tier=later) for c in checks] if later else checks


@result_rule("subject_objects", Tier.FOLLOW, "list_pods")
def subject_objects(result: ToolResult, ctx: RuleContext) -> Iterable[Check]:
    """The objects the question names (beyond pods and nodes), and the Ingresses when it
    names a host."""
    s = ctx.subject
    out: list[Check | None] = []
    if s.kind and s.kind in KINDS and s.kind not in ("Pod", "Node") and s.names:
        name = s.names[0]  # the kind word goes with the first name the question gives
        out.append(
            get_check(ctx, s.kind, name, s.namespace, f"the question is about {s.kind} {name}")
        )
    if s.hosts:
        out.append(list_check(ctx, "Ingress", s.namespace, f"the question names host {s.hosts[0]}"))
    return keep_checks(out)


def records_of(result: ToolResult, model: type[Any]) -> list[Any]:
    if result.error is not None:
        return []
    payload = result.payload_as(ObjectsPayload)
    return payload.of(model) if payload else []


def _wanted(svc: Service, ctx: RuleContext) -> bool:
    """A Service the question or a finding names (by name or ClusterIP)."""
    if ctx.subject.matches(svc.name):
        return True
    keys = {str(svc.name).lower(), str(svc.cluster_ip or "").lower()} - {"", "none"}
    for f in ctx.facts:
        named = {o.name.lower() for o in f.objects} | {str(v).lower() for v in f.detail.values()
                                                       if isinstance(v, str)}  # fmt: skip
        if keys & named or any(k in (f.message or "").lower() for k in keys if len(k) > 3):
            return True
    return False


@result_rule("service_neighbours", Tier.EXPLAIN, "list_objects", "get_object")
def service_neighbours(result: ToolResult, ctx: RuleContext) -> Iterable[Check]:
    """A Service the question or a finding names: the pods its selector is matched against
    (its Endpoints when pods cannot be listed)."""
    out: list[Check | None] = []
    for svc in [s for s in records_of(result, Service) if s.selector and _wanted(s, ctx)][:2]:
        ns = svc.namespace
        if "list_pods" in ctx.tools:
            if not ctx.graph.listed("Pod", ns):
                out.append(
                    Check(
                        "list_pods",
                        ctx.ns(ns),
                        f"Service {svc.name}: the pods its selector matches",
                    )
                )
        else:
            out.append(
                get_check(ctx, "Endpoints", svc.name, ns, f"Service {svc.name}: its endpoints")
            )
    return keep_checks(out)


@result_rule("configured_dependency", Tier.FOLLOW, "list_objects", "get_object")
def configured_dependency(result: ToolResult, ctx: RuleContext) -> Iterable[Check]:
    """A ConfigMap setting that says where a failing caller connects (``..._URL:
    pulsar://broker.messaging.svc:6650``) when the caller's error names the product but no
    host: the pods of the Service's namespace, when not listed yet — the walk goes on into
    the dependency the configuration names."""
    failing = [
        f for f in ctx.facts if f.kind == K.DEPENDENCY_FAILURE and f.focus and not _service_hosts(f)
    ]
    if not failing or "list_pods" not in ctx.tools:
        return []
    text = " ".join(f"{f.quote or ''} {f.message or ''}" for f in failing).lower()
    out: list[Check | None] = []
    for cm in records_of(result, ConfigMap):
        for key, value in sorted((cm.addresses or {}).items()):
            found = service_host(value.split(",", 1)[0])
            if found is None or found[1] is None or ctx.graph.listed("Pod", found[1]):
                continue
            words = [w for w in re.split(r"[^a-z0-9]+", f"{found[0]} {found[1]}") if len(w) >= 4]
            if not any(w in text for w in words):
                continue  # an address the failing calls do not name
            out.append(
                Check(
                    "list_pods",
                    {"namespace": found[1]},
                    f"ConfigMap {cm.name} sets {key}={value[:60]}: the pods behind it",
                )
            )
    return keep_checks(out[:2])


@result_rule("ingress_references", Tier.FOLLOW, "list_objects", "get_object")
def ingress_references(result: ToolResult, ctx: RuleContext) -> Iterable[Check]:
    """An Ingress: the IngressClasses, the Services it routes to and its TLS Secrets; a
    Gateway: its class and TLS Secrets; an HTTPRoute: its parent Gateways and backends."""
    out: list[Check | None] = []
    hosts = [h.lower() for h in ctx.subject.hosts]
    if hosts and str(result.args.get("kind") or "") == "Ingress":
        served = {r.host.lower() for i in records_of(result, Ingress) for r in i.rules if r.host}
        if not served & set(hosts):
            # no Ingress serves the host the question names: a Gateway API route may
            why = f"no Ingress serves {hosts[0]}: a Gateway API route for it?"
            out.append(list_check(ctx, "HTTPRoute", ctx.subject.namespace, why))
    for ing in records_of(result, Ingress)[:3]:
        if not ing.addresses:
            # a controller that serves the Ingress gives it an address: without one, is
            # there a class (a controller) for it at all?
            out.append(
                list_check(ctx, "IngressClass", None, f"Ingress {ing.name}: does its class exist?")
            )
        elif not ing.class_name:
            # no class named: it is served only by a default class (or a controller told to
            # watch class-less Ingresses); an address it kept from an earlier controller
            # proves nothing about the one running now
            why = f"Ingress {ing.name} names no class: is one marked default?"
            out.append(list_check(ctx, "IngressClass", None, why))
        if ing.services():
            out.append(
                list_check(ctx, "Service", ing.namespace, f"Ingress {ing.name}: its backends")
            )
        if ing.tls_secrets and ctx.shows("ingress-tls-secret-missing"):
            # a TLS Secret missing shows as certificate errors: read when something does
            out.append(
                list_check(ctx, "Secret", ing.namespace, f"Ingress {ing.name}: its TLS Secrets")
            )
    for gw in records_of(result, Gateway)[:3]:
        out.append(list_check(ctx, "GatewayClass", None, f"Gateway {gw.name}: its class"))
        if any(li.tls_secrets for li in gw.listeners):
            out.append(list_check(ctx, "Secret", gw.namespace, f"Gateway {gw.name}: TLS Secrets"))
    for route in records_of(result, HTTPRoute)[:3]:
        if route.parents:
            out.append(list_check(ctx, "Gateway", route.namespace, f"route {route.name}: parents"))
        for p in route.parents:  # a shared Gateway in a namespace of its own
            if p.namespace and p.namespace != route.namespace and p.name:
                why = f"route {route.name}: its Gateway {p.namespace}/{p.name}"
                out.append(get_check(ctx, "Gateway", p.name, p.namespace, why))
        if any(not _accepted(st.conditions) for st in route.parent_status):
            # a route its Gateway refuses: the labels its namespace carries (listeners may
            # admit routes only from namespaces with a label)
            why = f"route {route.name} is refused: its namespace's labels"
            out.append(get_check(ctx, "Namespace", route.namespace, None, why))
        if route.backends:
            out.append(list_check(ctx, "Service", route.namespace, f"route {route.name}: backends"))
    return keep_checks(out)


@result_rule("claim_references", Tier.FOLLOW, "list_objects", "get_object")
def claim_references(result: ToolResult, ctx: RuleContext) -> Iterable[Check]:
    """A claim that is not bound: the StorageClasses, and the volume it names."""
    out: list[Check | None] = []
    for pvc in records_of(result, PersistentVolumeClaim):
        if pvc.phase == "Bound":
            continue
        out.append(
            list_check(ctx, "StorageClass", None, f"claim {pvc.name} is {pvc.phase}: its class")
        )
        if pvc.volume_name:
            out.append(
                get_check(
                    ctx, "PersistentVolume", pvc.volume_name, None, f"claim {pvc.name}: its volume"
                )
            )
    return keep_checks(out)


@result_rule("workload_references", Tier.EXPLAIN, "list_objects", "get_object")
def workload_references(result: ToolResult, ctx: RuleContext) -> Iterable[Check]:
    """A workload short of replicas: the quotas and LimitRanges that may refuse its pods,
    its claim templates' classes; an HPA: its target (requests, replicas)."""
    out: list[Check | None] = []
    for w in records_of(result, Workload)[:3]:
        if (w.replicas.desired or 0) > (w.replicas.current or 0):
            why = f"{w.kind} {w.name} has fewer pods than desired"
            out.append(
                list_check(ctx, "ResourceQuota", w.namespace, f"{why}: its namespace's quotas")
            )
            out.append(
                list_check(ctx, "LimitRange", w.namespace, f"{why}: its namespace's LimitRanges")
            )
        if w.service_name:
            out.append(
                list_check(ctx, "Service", w.namespace, f"{w.kind} {w.name}: governing Service")
            )
        if any(t.storage_class for t in w.volume_claim_templates):
            out.append(
                list_check(
                    ctx, "StorageClass", None, f"{w.kind} {w.name}: its claim templates' class"
                )
            )
    for h in records_of(result, HorizontalPodAutoscaler)[:3]:
        if h.target.kind and h.target.name:
            out.append(
                get_check(
                    ctx, h.target.kind, h.target.name, h.namespace, f"HPA {h.name}: its target"
                )
            )
    return keep_checks(out)


def service_host(host: str) -> tuple[str, str | None] | None:
    """``(service, namespace)`` when ``host`` reads as a Service's DNS name (``backend``,
    ``backend.shop``, ``backend.shop.svc[.cluster.local]``, with or without port/scheme)."""
    host = host.split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1]
    host = re.sub(r":\d+$", "", host).lower().strip(".")
    parts = host.split(".")
    if not all(_LABEL.fullmatch(p) for p in parts) or parts[-1].isdigit():
        return None
    if len(parts) == 1:
        return parts[0], None
    if len(parts) == 2 and parts[1] not in _TLDS:
        return parts[0], parts[1]
    if len(parts) >= 3 and parts[2] == "svc":
        return parts[0], parts[1]
    return None


_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?$")


def _service_hosts(fact: Fact) -> list[tuple[str, str | None]]:
    """(service, namespace) for each dependency of a fact that reads as a Service (a bare
    IP may be a Service's ClusterIP: ``("", None)``)."""
    skip = fact.subject.key() if fact.subject else None
    cands = [
        o.name for o in fact.objects if o.kind in ("host", "Service", "app") and o.key() != skip
    ]
    cands += [str(fact.detail[k]) for k in ("host", "dependency", "target") if fact.detail.get(k)]
    out: list[tuple[str, str | None]] = []
    for c in cands:
        pair = (
            ("", None) if _IPV4.match(c.split("://", 1)[-1].split("/", 1)[0]) else service_host(c)
        )
        if pair and pair not in out:
            out.append(pair)
    return out[:2]


@fact_rule("dependency_service", Tier.FOLLOW, K.DEPENDENCY_FAILURE)
def dependency_service(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """A connection failure to a host that is a Service name (or a ClusterIP): the
    namespace's Services and NetworkPolicies."""
    if fact.reason == "slow":
        return []  # a slow operation ("query", "Database setup") names no host to route to
    out: list[Check | None] = []
    for name, ns in _service_hosts(fact):
        ns = ns or (fact.subject.namespace if fact.subject else None)
        what = name or "a cluster IP"
        out.append(list_check(ctx, "Service", ns, f"connections to {what} fail: the Service"))
        own = (fact.subject.namespace if fact.subject else None) or ctx.ns().get("namespace")
        other = bool(ns and own and ns != own)
        pods = (
            Check("list_pods", {"namespace": ns}, f"connections to {what} fail: the pods of "
                  f"namespace {ns}")
            if other and ns and "list_pods" in ctx.tools and not ctx.graph.pods(ns)
            else None
        )  # fmt: skip
        if fact.reason == "refused":
            out.append(pods)  # refused: nothing listens where the Service sends (ports, pods)
        out.append(list_check(ctx, "NetworkPolicy", ns, f"connections to {what} fail: policies"))
        if other:
            # a Service in another namespace: the namespaces' labels (what a policy there
            # admits by namespaceSelector) and its pods (ready? what do its policies select?)
            out.append(list_check(ctx, "Namespace", None, f"connections to {what} cross "
                                  "namespaces: the namespaces' labels"))  # fmt: skip
            if fact.reason != "refused":
                out.append(pods)
    named = [o for o in fact.objects if o.kind in ("host", "Service", "app")]
    if not out and not named and not fact.detail.get("host"):
        # the callee is named only by an address or not at all: the namespace's Services
        # (selectors, ports, endpoints) tell which callee and why it does not serve
        ns = fact.subject.namespace if fact.subject else None
        out.append(list_check(ctx, "Service", ns, "calls to a dependency fail: the Services"))
        out.append(list_check(ctx, "NetworkPolicy", ns, "calls to a dependency fail: policies"))
    return keep_checks(out)


@fact_rule("quota_objects", Tier.FOLLOW, K.QUOTA_REFUSAL)
def quota_objects(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """A refusal: the namespace's quotas and LimitRanges, and the refused workload."""
    ns = fact.subject.namespace if fact.subject else None
    out: list[Check | None] = [
        list_check(ctx, "ResourceQuota", ns, "pods are refused by a quota: its numbers"),
        list_check(ctx, "LimitRange", ns, "pods are refused: the LimitRanges and their defaults"),
    ]
    for o in [fact.subject, *fact.objects]:
        if o is not None and o.kind in (
            "ReplicaSet",
            "Deployment",
            "StatefulSet",
            "DaemonSet",
            "Job",
        ):
            out.append(
                get_check(ctx, o.kind, o.name, o.namespace, f"{o.kind} {o.name}: its pod template")
            )
    return keep_checks(out)


@fact_rule("reference_proof", Tier.FOLLOW, K.MISSING_REFERENCE, K.MISCONFIGURATION)
def reference_proof(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """The kubelet or a controller says an object is missing: the list that proves it."""
    if fact.key.startswith("k8s:"):
        return []  # already proven by the graph
    out: list[Check | None] = []
    for o in fact.objects:
        if o.kind in _OBJECT_KINDS:
            out.append(
                list_check(ctx, o.kind, o.namespace, f"{o.kind} {o.name} is reported missing")
            )
    if fact.detail.get("hpa") and fact.subject is not None:
        out.append(
            get_check(
                ctx,
                "HorizontalPodAutoscaler",
                fact.subject.name,
                fact.subject.namespace,
                "an autoscaler cannot scale: its conditions",
            )
        )
    return keep_checks(out)[:3]


@fact_rule("workloads_behind_service", Tier.FOLLOW, K.SELECTOR_MISMATCH, K.NOT_READY)
def workloads_behind_service(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """A Service with no (ready) endpoints: the workloads that should back it (scaled to 0?
    a template whose labels changed?)."""
    if fact.subject is None or fact.subject.kind != "Service":
        return []
    later: Tier | None = None
    if ctx.subject.names and not fact.focus and not _named_by_failures(fact, ctx):
        if fact.kind != K.SELECTOR_MISMATCH:
            return []  # another Service than the one asked about, its pods merely not ready
        # a Service with no pod at all may be where the subject's calls end (a workload
        # scaled to zero behind it): its workloads are one or two reads that decide it —
        # after what the evidence points at, without holding a supported cause back
        later = Tier.RUNBOOK
    ns = fact.subject.namespace
    checks = keep_checks(
        [
            list_check(ctx, "Deployment", ns, f"Service {fact.subject.name} has no endpoints"),
            list_check(ctx, "StatefulSet", ns, f"Service {fact.subject.name} has no endpoints"),
        ]
    )
    return [dataclasses.replace(c, tier=later) for c in checks] if later else checks


def _named_by_failures(fact: Fact, ctx: RuleContext) -> bool:
    """Whether the subject's own failing calls name the object ``fact`` is about."""
    from opsmate.agent.judge import links

    return links.depends_on(fact, links.dependencies(ctx.facts))


def _accepted(conditions: list[Any]) -> bool:
    return not any(c.type == "Accepted" and (c.status or "").lower() == "false" for c in conditions)
