"""How a fact relates to the subject of the question.

``subject``: the fact is about the subject (its pod, workload, Service, Job), or about an
object the subject's own facts name (the Secret its pod cannot find). ``linked``: about
an object the subject depends on — the node a subject pod runs on, a dependency the
subject's errors name, a Service or policy whose selector selects the subject's pods.
``scope``: the question names no object (a namespace-wide question). ``impact``: another
service failing *on* the subject (its error names the subject): the subject's downstream
impact. ``unrelated``: about something else. Neither impact nor unrelated facts are ever
the subject's root cause. ``timed``: given to a candidate, never to a fact — an injected
fault that no path the data shows links to the subject, put forward because the subject's
symptom began minutes after it and its own target failed (``candidates.timed_with``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime

from opsmate.agent.intake.subject import Subject
from opsmate.agent.kinds import Role, Trait, card_for, too_few
from opsmate.agent.kinds.registry import run_down_elsewhere
from opsmate.agent.observe.depgraph import DependencyGraph, fact_component, workload_of
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.loganalysis.signals import SOURCE_FILE

SUBJECT, LINKED, SCOPE, IMPACT, UNRELATED = "subject", "linked", "scope", "impact", "unrelated"
# an injected fault no path links to the subject, put forward by timing and its target's damage
TIMED = "timed"
WEIGHT = {SUBJECT: 2.0, LINKED: 1.5, SCOPE: 1.0, TIMED: 0.75, IMPACT: 0.5, UNRELATED: 0.25}
NOT_A_CAUSE = (IMPACT, UNRELATED)  # relations that never give the subject's root cause


def _named(f: Fact) -> list[str]:
    return f.names()


_CLUSTER_DNS = re.compile(r"^(?:core-?dns|kube-?dns|node-local-dns)\b")


def dependencies(facts: Iterable[Fact]) -> set[str]:
    """Names the subject's own problem facts mention (``... connecting to redis``), with
    host names also by their first label (``payment-service.shop.svc`` -> ``payment-service``);
    ``@cluster-dns`` when the subject cannot resolve names."""
    mine = [f for f in facts if f.focus and f.severity != "info"]
    said = " ".join(f"{f.quote or ''} {f.message or ''} {f.statement}" for f in mine).lower()
    out = set(re.findall(r"[a-z0-9][a-z0-9.-]{2,}", said))
    for f in mine:
        out.update(o.name.lower() for o in f.objects if o.kind in ("host", "app", "Service"))
        out |= rpc_services(f"{f.quote or ''} {f.message or ''}")
    out |= {w.split(".")[0].split(":")[0] for w in out if "." in w or ":" in w}
    if any(is_dns_failure(f) for f in mine):
        out.add(CLUSTER_DNS)
    return out


CLUSTER_DNS = "@cluster-dns"
_DNS_TEXT = re.compile(
    r"lookup \S+ on \S+:53|no such host|name resolution|could not resolve|resolve host"
    r"|translate host name|nxdomain|server misbehaving|getaddrinfo|name or service not known"
    r"|produced zero addresses|name resolver error|unknownhostexception|temporary failure in name",
    re.I,
)


def is_dns_failure(f: Fact) -> bool:
    """Whether a fact says a name could not be resolved."""
    return f.reason == "dns" or bool(_DNS_TEXT.search(f"{f.message or ''} {f.quote or ''}"))


def named_in(f: Fact) -> set[str]:
    """The dependencies one fact names: its objects and host-like words of its text (also by
    their first label), and the cluster DNS when it is a name-resolution failure."""
    text = f"{f.quote or ''} {f.message or ''}".lower()
    out = {o.name.lower() for o in f.objects}
    out |= {
        w
        for w in re.findall(r"[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)+(?::\d+)?", text)
        if not SOURCE_FILE.search(w.split(":")[0])  # a stack frame's file ("handler.h:614")
    }
    out |= set(re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)+", text))
    out |= {w.split(".")[0].split(":")[0] for w in out if "." in w or ":" in w}
    out |= rpc_services(f"{f.quote or ''} {f.message or ''}")
    if is_dns_failure(f):
        out.add(CLUSTER_DNS)
    return out


# an RPC's full method name (gRPC's ``/shop.PaymentService/Charge``, Thrift's and Kitex's
# ``PaymentService.Charge``): the service is named in CamelCase, its method capitalised (a
# Java frame's ``PaymentService.charge(`` is a class and its method, not a call)
_RPC_METHOD = re.compile(r"(?<![A-Za-z0-9])([A-Z][A-Za-z0-9]*?)Service[./][A-Z][A-Za-z0-9]*\b")


def rpc_services(text: str) -> set[str]:
    """The names an RPC's service goes by as a workload (``PaymentService.Charge`` ->
    ``payment``, ``payment-service``, ``paymentservice``)."""
    out: set[str] = set()
    for m in _RPC_METHOD.finditer(text):
        stem = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", m.group(1)).lower()
        out |= {stem, f"{stem}-service", f"{stem.replace('-', '')}service"}
    return out


def named_components(f: Fact, dg: DependencyGraph) -> set[str]:
    """The components of the dependency graph a fact's words name (its objects, host-like
    words), other than the one it is about: what it says it failed on. A logger's, a
    class's or a thread's name resolves to none."""
    own = fact_component(dg, f)
    return {c for n in named_in(f) if (c := dg.resolve(n)) is not None and c != own}


def is_cluster_dns(f: Fact) -> bool:
    """Whether a fact is about the cluster's DNS servers (CoreDNS, kube-dns, NodeLocal DNS)."""
    return any(_CLUSTER_DNS.match(n) for n in f.names())


def depends_on(f: Fact, dependency_names: set[str]) -> bool:
    """Whether ``f`` is about one of ``dependency_names`` (a dependency of the subject)."""
    names = set(f.names())
    if names & dependency_names:
        return True
    if any(n.startswith(d + "-") for n in names for d in dependency_names if len(d) >= 4):
        return True
    return CLUSTER_DNS in dependency_names and is_cluster_dns(f)


def subject_aliases(subject: Subject, graph: ObjectGraph) -> set[str]:
    """Other names the subject goes by: the image names of its pods (``redis`` for a
    workload ``cache`` running ``redis:7``), so a consumer's "redis: timeout" names it."""
    out: set[str] = set()
    for p in graph.pods():
        if not subject.matches(p.name):
            continue
        for c in p.containers:
            base = (c.image or "").rsplit("/", 1)[-1].split(":")[0].split("@")[0].lower()
            if len(base) >= 4:
                out.add(base)
    return out


def mentions(f: Fact, words: set[str]) -> bool:
    """Whether the fact's own text names one of ``words`` (as a word)."""
    text = f"{f.quote or ''} {f.message or ''}".lower()
    return any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text) for w in words)


# node facts that say packets are lost on a node: calls into any pod there may time out
LOSSY_NODE = frozenset({"NodeNetworkLoss", "SharedNode"})
# failing calls lost on the way (not refused by what they called): a node's network may be why
LOST_CALLS = frozenset({"timeout", "reset", "network"})


def _runs_neighbours(node: str, subject: Subject, graph: ObjectGraph) -> bool:
    """Whether ``node`` runs a pod of the namespace the subject's pods run in."""
    spaces = {p.namespace for p in graph.pods() if p.name and subject.matches(p.name)}
    return any(p.node == node and p.namespace in spaces for p in graph.pods())


def relation(
    f: Fact,
    subject: Subject,
    graph: ObjectGraph,
    deps: set[str],
    focus_services: list[str],
    aliases: set[str] | None = None,
    reach: dict[str, int] | None = None,
    dg: DependencyGraph | None = None,
) -> str:
    """The relation of ``f`` to the subject (see module doc). ``reach``: the components
    the subject depends on in the dependency graph ``dg`` (with their depth)."""
    if subject.empty() and not focus_services:
        return SCOPE if subject.in_namespace(_ns(f)) else UNRELATED
    if f.focus or any(subject.matches(n) for n in _named(f)):
        return SUBJECT
    if dg is not None and subject.hosts and not subject.names:
        # a question about a host: what serves it (its Ingress's backend) is the subject
        served = {c for h in subject.hosts if (c := dg.component(h))}
        if served and fact_component(dg, f) in served:
            return SUBJECT
    if reach and dg is not None:
        comp = fact_component(dg, f)
        if comp is not None and comp in reach:
            return LINKED  # something the subject depends on, as the data shows
    if aliases and mentions(f, aliases | set(subject.names)):
        return IMPACT  # a consumer of the subject, failing on it: impact, not cause
    # a node a subject pod runs on, or a pod running on the node asked about
    if f.subject is not None and f.subject.kind == "Node":
        for p in graph.pods():
            if p.node == f.subject.name and subject.matches(p.name):
                return LINKED
            if p.node == f.subject.name and reach and workload_of(p) in reach:
                return LINKED  # it runs a pod of something the subject depends on
        if f.reason in LOSSY_NODE and _runs_neighbours(f.subject.name, subject, graph):
            return LINKED  # a node losing packets runs pods of the subject's namespace
    for o in [f.subject, *f.objects]:
        if o is not None and o.kind == "Pod":
            pod = graph.get("Pod", o.namespace, o.name)
            if pod is not None and subject.matches(getattr(pod, "node", None)):
                return LINKED
    # a dependency the subject's errors name (a service, a host, the cluster DNS)
    if depends_on(f, deps):
        return LINKED
    if not subject.names and not focus_services:
        # a question about a host in a namespace it names: that namespace is its scope; one
        # that names none: the namespace of what serves the host (its Ingress)
        if subject.namespace and subject.in_namespace(_ns(f)):
            return SCOPE
        if not subject.namespace and _ns(f) and _ns(f) in _host_namespaces(subject, graph):
            return SCOPE
    if subject.backlog and subject.namespace:
        # work piling up, or data not arriving: whatever consumes or carries it in the
        # namespace may have stopped (a log line's namespace is its service's pods')
        comp = fact_component(dg, f) if dg is not None else None
        ns = _ns(f) or (dg.namespaces.get(comp) if dg is not None and comp else None)
        if ns == subject.namespace:
            return SCOPE
    return UNRELATED


def _host_namespaces(subject: Subject, graph: ObjectGraph) -> set[str]:
    """The namespaces of the Ingresses and HTTPRoutes that serve the hosts asked about."""
    if not subject.hosts:
        return set()
    out: set[str] = set()
    for kind in ("Ingress", "HTTPRoute"):
        for o in graph.all(kind):
            hosts = {*(getattr(o, "tls_hosts", None) or []), *(getattr(o, "hostnames", None) or [])}
            hosts |= {b.host for b in getattr(o, "rules", None) or [] if getattr(b, "host", None)}
            if o.namespace and any(subject.matches(h) for h in hosts if h):
                out.add(o.namespace)
    return out


def _ns(f: Fact) -> str | None:
    return f.subject.namespace if f.subject else None


def subject_reach(
    subject: Subject, dg: DependencyGraph, focus_services: list[str]
) -> dict[str, int]:
    """What the subject's components depend on (directly or not), with the depth; the
    subject's own components at depth 0."""
    comps: set[str] = set()
    for n in [*subject.names, *subject.hosts, *focus_services]:
        c = dg.component(n)
        if c is not None:
            comps.add(c)
        elif n.lower() in {e.src for e in dg.edges}:
            comps.add(n.lower())
    out: dict[str, int] = {}
    for c in comps:
        for dst, d in dg.reachable(c).items():
            if dst not in comps and (dst not in out or d < out[dst]):
                out[dst] = d
    return out


def _caller_side(f: Fact) -> bool:
    return card_for(f).has(Trait.CALLER_SIDE)


def _down(f: Fact) -> bool:
    return card_for(f).has(Trait.DOWN)


def timing_suspects(
    facts: list[Fact], subject: Subject, dg: DependencyGraph, focus_services: list[str]
) -> set[str]:
    """Components that were down before the subject's own errors began, when no edge of the
    data connects them: the subject's failure is caller-side only (its errors, a failing
    dependency, latency) and one or two other components of its namespace crash, are not
    ready or have no pods from before that moment. Empty when the subject has no errors of
    its own (a healthy subject is never blamed on a neighbour) or when many components are
    down (a noisy namespace says nothing)."""
    if subject.empty() and not focus_services:
        return set()
    mine = [
        f
        for f in facts
        if (f.focus or any(subject.matches(n) for n in f.names()))
        and f.severity == "error"
        and f.time is not None
    ]
    if not mine or any(not _caller_side(f) for f in mine):
        return set()  # the subject has its own failure, or none at all
    start = min(f.time for f in mine if f.time is not None)
    own = {c for f in mine if (c := fact_component(dg, f)) is not None}
    own |= {n.lower() for n in subject.names}
    down: set[str] = set()
    for f in facts:
        if not _down(f) and f.reason != "ScaledToZero":
            continue
        if f.severity != "error" or not subject.in_namespace(_ns(f)):
            continue
        began = f.time or start
        if (began - start).total_seconds() > 120:
            continue  # it went down after the subject's errors began: not their cause
        comp = fact_component(dg, f)
        if comp is not None and comp not in own:
            down.add(comp)
    return down if 0 < len(down) <= 2 else set()


def inferred_edges(facts: list[Fact], dg: DependencyGraph) -> list[tuple[str, str]]:
    """For a question that names no subject: ``(caller, down)`` pairs where a component whose
    only failures are caller-side (it logs errors calling out, times out) began failing
    after one or two other components went down, and no edge of the data connects them.
    Nothing when many components are down or a caller has a failure of its own."""
    by: dict[str, list[Fact]] = {}
    for f in facts:
        shifted = card_for(f).has(Trait.SHIFT) and bool(f.detail.get("query"))
        state = f.reason in ROUTING  # a condition that holds now, with no start time
        backoff = _down(f) and f.severity == "warning"  # BackOff events, timed
        if (f.severity != "error" and not shifted and not backoff) or (
            f.time is None and not state
        ):
            continue
        comp = fact_component(dg, f)
        if comp is not None:
            by.setdefault(comp, []).append(f)
    down_at: dict[str, datetime] = {}
    for comp, fs in by.items():
        downs = [f for f in fs if _down(f) or f.reason in ROUTING]
        if downs:
            times = [f.time for f in downs if f.time is not None]
            down_at[comp] = min(times) if times else datetime.min.replace(tzinfo=UTC)
    if any(t != datetime.min.replace(tzinfo=UTC) for t in down_at.values()):
        # something went down at a known time: a standing misconfiguration is not it
        down_at = {c: t for c, t in down_at.items() if t != datetime.min.replace(tzinfo=UTC)}
    if not 0 < len(down_at) <= 2:
        return []
    out: list[tuple[str, str]] = []
    for comp, fs in by.items():
        if comp in down_at or any(not _caller_side(f) for f in fs):
            continue
        starts = [f.time for f in fs if f.time is not None]
        if not starts:
            continue
        start = min(starts)
        reach = dg.reachable(comp)
        for d, t in down_at.items():
            if d not in reach and (t - start).total_seconds() <= 120:
                out.append((comp, d))
    return out


def own_failure(facts: list[Fact], subject: Subject, focus_services: list[str]) -> bool:
    """Whether the subject has a failure of its own: an error-level cause about it that is not
    a failing call out (a configuration error, an OOM kill, last words), nor a limit its card
    says a failure elsewhere runs down (a pool exhausted behind lock waits on its database)."""
    if subject.empty() and not focus_services:
        return False
    for f in facts:
        if f.severity != "error" or _caller_side(f) or _down(f):
            continue
        if f.background or too_few(f):
            continue  # noise, or fewer occurrences than make the failure act (a probe blip)
        card = card_for(f)
        if card.role != Role.CAUSE:
            continue  # a symptom, a change or context: not a failure of its own
        if run_down_elsewhere(f):
            continue  # a limit a deeper failure elsewhere runs down (a pool behind lock waits)
        if f.focus or any(subject.matches(n) for n in f.names()):
            return True
    return False


# Service routing faults: they explain calls that cannot reach the Service
ROUTING = frozenset(
    {"SelectorMatchesNoPod", "TargetPortNotListening", "UnknownTargetPort", "ScaledToZero"}
)
_UNREACHABLE = re.compile(
    r"refused|unavailable|no healthy upstream|no endpoints|upstream connect error|\b50[23]\b"
    r"|connection reset|econnrefused|zero addresses|no route to host",
    re.I,
)


def failed_to_reach(f: Fact) -> bool:
    """Whether a failure says the call did not reach its target (refused, unavailable, no
    route, no endpoints, timed out) rather than that the target answered with an error."""
    if f.reason in ("refused", "unavailable", "timeout", "network"):
        return True
    return bool(_UNREACHABLE.search(f"{f.reason or ''} {f.quote or ''} {f.message or ''}"))


def unreachable_targets(facts: list[Fact], dg: DependencyGraph) -> set[str]:
    """Components that callers failed to reach: the hosts, Services and IPs their refused /
    unavailable errors name, resolved through the dependency graph; a caller whose errors
    name no resolvable target stands for every component it depends on directly."""
    out: set[str] = set()
    for f in facts:
        if f.kind.value not in ("dependency_failure", "log_error", "log_warning"):
            continue
        if f.severity == "info" or (f.severity == "warning" and f.count < 3):
            continue  # repeated warnings count: "failed to send ...: Unavailable" x 40
        text = f"{f.reason or ''} {f.quote or ''} {f.message or ''}"
        if not _UNREACHABLE.search(text):
            continue
        named = named_components(f, dg)
        src = fact_component(dg, f)
        if named:
            out |= named
        elif src is not None:
            out |= set(dg.reachable(src, max_depth=3))
    out |= {e.dst for e in dg.edges if e.via.startswith("inferred")}  # callers failing on it
    return out


def dependency_view(
    facts: list[Fact], subject: Subject, graph: ObjectGraph, focus_services: list[str]
) -> tuple[DependencyGraph, dict[str, int]]:
    """The dependency graph the facts and objects show, with the edges only timing shows
    added, and what the subject depends on in it (component -> depth). One place for the
    judge and the plan's hold: a subject with a failure of its own reaches nothing (what it
    merely could depend on is not walked into unless its errors name it); components down
    before its caller-side errors began are linked; with no subject the data connects to
    anything, callers are linked to what went down before their errors."""
    from opsmate.agent.observe import depgraph

    dg = depgraph.build(graph, facts)
    reach = subject_reach(subject, dg, focus_services)
    if own_failure(facts, subject, focus_services):
        reach = {}
    for sus in timing_suspects(facts, subject, dg, focus_services):
        reach.setdefault(sus, 1)
        for n in [*subject.names[:1], *focus_services[:1]]:
            src = dg.component(n) or n.lower()
            if not dg.path(src, sus):
                dg.add(src, sus, "inferred: down before the subject's errors began")
    in_graph = {e.src for e in dg.edges} | {e.dst for e in dg.edges}
    named = [n for n in [*subject.names, *focus_services] if dg.component(n) in in_graph]
    own = any(f.focus and f.severity != "info" for f in facts)
    if not named and not own:
        for caller, down in inferred_edges(facts, dg):
            dg.add(caller, down, "inferred: down before the caller's errors began")
    return dg, reach


def subject_depends_on(
    f: Fact, subject: Subject, dg: DependencyGraph, focus_services: list[str]
) -> bool:
    """Whether the dependency graph has a path from the subject's components to what ``f``
    is about (a path the data shows, whatever failures the subject has of its own)."""
    comp = fact_component(dg, f)
    if comp is None:
        return False
    starts = {c for n in [*subject.names, *focus_services] if (c := dg.component(n))}
    return any(s != comp and dg.path(s, comp) for s in starts)
