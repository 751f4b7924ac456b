"""How candidates relate to each other: cascades, chains of causes, superseded refusals.

- A *cascade*: the subject's errors that began together; the first is the likely cause,
  the later ones its consequences.
- A *chain*: a cause that a deeper cause explains in turn — a probe that times out
  because a pool is exhausted, a failing call to a dependency whose own pods crash, a
  name that does not resolve because the cluster DNS is down. The deeper, supported cause
  becomes the root; the shallower one says how it reached the subject.
- A *superseded* refusal: a controller's FailedCreate (quota, missing ServiceAccount)
  that stopped before pods of the same controller were created.
- The *sole* error: the only error the subject logged stands for itself.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from opsmate.agent.judge import links
from opsmate.agent.judge.candidates import Candidate, same_thread, shares_a_phrase
from opsmate.agent.judge.causality import builds_up, deeper
from opsmate.agent.kinds import Trait, card_for
from opsmate.agent.observe.depgraph import DependencyGraph, fact_component, workload_of
from opsmate.agent.observe.facts import Fact, ObjRef
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.observe.software import runs_software
from opsmate.agent.observe.text import workload_of as text_workload

_UNREACHABLE = re.compile(r"node\.kubernetes\.io/(?:unreachable|not-ready)", re.I)


def _cascade(f: Fact) -> bool:
    """An error of a cascade: the first of several that began together is the domino."""
    return card_for(f).has(Trait.CASCADE)


def _reaching(f: Fact) -> bool:
    """A failure that names what it failed on (a link towards the dependency)."""
    return card_for(f).has(Trait.REACHING)


def first_domino(cands: list[Candidate]) -> None:
    """Among the subject's errors that began within minutes of each other, prefer the first."""
    group = [c for c in cands if _cascade(c.lead) and c.lead.time and c.relation == links.SUBJECT]
    if len(group) < 2:
        return
    group.sort(key=lambda c: c.lead.time or datetime.max)
    first = group[0]
    end = (first.lead.time or datetime.max) + timedelta(minutes=10)
    followers = [c for c in group[1:] if c.lead.time and c.lead.time <= end]
    if not followers:
        return
    first.score = round(first.score * 1.5, 3)
    first.followers = [c.lead for c in followers]
    for c in followers:
        c.score = round(c.score * 0.8, 3)


def injected_over_callers(cands: list[Candidate]) -> None:
    """An injected fault (a change that acts on its target) that explains the subject's
    symptom goes before the caller-side errors it produces: a caller's "500 from upstream"
    or "deadline exceeded" says where the trouble was seen, the experiment says what made it."""
    acting = [
        c
        for c in cands
        if c.lead.kind == K.CHANGE
        and card_for(c.lead).has(Trait.ACTS)
        and c.conclusive
        and c.explains is not None
        and c.relation not in links.NOT_A_CAUSE
    ]
    if not acting:
        return
    lead = max(acting, key=lambda c: c.score)
    callers = [
        c
        for c in cands
        if c is not lead
        and card_for(c.lead).has(Trait.CALLER_SIDE)
        and not c.conclusive
        and c.score >= lead.score
    ]
    if callers:
        lead.score = round(max(c.score for c in callers) * 1.1, 3)


def replacement_waits(cands: list[Candidate]) -> None:
    """A pod the system removed (a card with trait EVICTS: preempted) and its replacement
    that then cannot be scheduled: the eviction leads, the replacement's scheduling failure
    follows it (the room the replacement needs went to whatever took it)."""
    for ev in cands:
        if not card_for(ev.lead).has(Trait.EVICTS) or ev.lead.time is None:
            continue
        end = ev.lead.time + timedelta(minutes=15)
        after = [
            c
            for c in cands
            if c is not ev
            and c.lead.kind in (K.SCHEDULING, K.POD_PENDING)
            and not card_for(c.lead).has(Trait.EVICTS)
            # a standing account (the pod checked against each node, no time) holds now
            and (c.lead.time is None or ev.lead.time <= c.lead.time <= end)
            and (same_thread(c.lead, ev.lead) or _same_workload(c.lead, ev.lead))
        ]
        if not after:
            continue
        ev.score = round(max(ev.score, max(c.score for c in after) * 1.1), 3)
        ev.followers = [*ev.followers, *(c.lead for c in after if c.lead not in ev.followers)]
        for c in after:
            c.score = round(c.score * 0.8, 3)


def _same_workload(a: Fact, b: Fact) -> bool:
    """Whether two facts are about pods of one workload (a pod evicted, its replacement)."""

    def pods(f: Fact) -> set[str]:
        refs = [f.subject, *f.objects]
        return {
            w for o in refs if o is not None and o.kind == "Pod" and (w := text_workload(o.name))
        }

    return bool(pods(a) & pods(b))


_REFERENCED = {
    "Secret",
    "ConfigMap",
    "ServiceAccount",
    "PersistentVolumeClaim",
    "StorageClass",
    "IngressClass",
    "Service",
}


# the kubelet's "couldn't find key password in Secret ns/name": a key, not the object
_MISSING_KEY = re.compile(r"find key\s+[\"']?([\w.-]+)[\"']?\s+in\s+(?:secret|configmap)", re.I)


def superseded(cands: list[Candidate], graph: ObjectGraph) -> None:
    """Demote a controller's refusal that stopped before its later pods were created, and a
    "not found" that the object graph contradicts (the object exists now)."""
    scaled = {
        (o.namespace, o.name)
        for c in cands
        if c.lead.reason == "ScaledToZero"
        for o in c.lead.objects
        if o.kind == "Service"
    }
    for c in cands:
        f = c.lead
        if (
            f.reason == "SelectorMatchesNoPod"
            and f.subject is not None
            and (f.subject.namespace, f.subject.name) in scaled
        ):
            c.score = round(c.score * 0.3, 3)
            c.superseded_by = "its workload is scaled to 0 replicas"
            continue
        if f.kind == K.MISSING_REFERENCE:
            key = _MISSING_KEY.search(f"{f.quote or ''} {f.message or ''}")
            for o in f.objects:
                found = graph.get(o.kind, o.namespace, o.name) if o.kind in _REFERENCED else None
                if found is None:
                    continue
                if key is not None and key.group(1) not in (getattr(found, "keys", None) or []):
                    continue  # the object is there, the key it lacks is what was not found
                c.score = round(c.score * 0.3, 3)
                c.superseded_by = f"{o.kind} {o.name} exists now"
                break
            if c.superseded_by:
                continue
        if f.reason != "FailedCreate" or f.subject is None or f.last_time is None:
            continue
        owner = f"{f.subject.kind}/{f.subject.name}"
        for p in graph.pods(f.subject.namespace):
            started = p.start_time or p.created
            if p.owner == owner and started is not None and started > f.last_time:
                c.score = round(c.score * 0.3, 3)
                c.superseded_by = f"later pods were created ({p.name})"
                break


def sole_error(cands: list[Candidate]) -> None:
    """Mark the only error of the subject when nothing else about it competes."""
    mine = [c for c in cands if c.relation == links.SUBJECT]
    errs = [c for c in mine if _cascade(c.lead) and c.lead.severity == "error"]
    if len(errs) == 1 and len(mine) == 1:
        errs[0].sole = True


def _core(text: str | None) -> str:
    return " ".join((text or "").lower().split())[:120]


def same_words(cands: list[Candidate]) -> None:
    """A container's last words and a log error of the same text are one finding: the last
    words (with the container and its exit) lead; the log error's count, first time and
    preceding change come with them."""
    words = [c for c in cands if c.lead.kind == K.LAST_WORDS]
    for w in words:
        said = " ".join(str(x) for x in w.lead.detail.get("key_lines") or [w.lead.message or ""])
        said = _core(said)
        for o in cands:
            if o is w or o.lead.kind == K.LAST_WORDS or not _cascade(o.lead):
                continue
            core = _core(o.lead.quote or o.lead.message)
            if len(core) < 12 or core[:60] not in said or not same_thread(o.lead, w.lead):
                continue
            w.score = round(max(w.score, o.score * 1.1), 3)
            o.score = round(o.score * 0.5, 3)
            if o.lead not in w.support:
                w.support.append(o.lead)
            w.change = w.change or o.change


# the scheduler's per-reason node counts: "0/6 nodes are available: 3 node(s) didn't match
# pod topology spread constraints, 3 node(s) were unschedulable."
_NODE_COUNTS = re.compile(r"(?:^|[:,.])\s*\d+ (?:node\(s\) |nodes? )?(?P<why>[^,.]+)")
_CORDON_WORDS = re.compile(r"unschedulable|cordon", re.I)


def _other_nodes_refuse(a: Fact, b: Fact) -> bool:
    """Whether a cordoned node ``b`` is only part of why pod ``a`` has no node: the
    scheduler gives the other nodes another reason (a spread constraint, a selector, no
    room), and that reason, not the cordon (a drain under way), keeps the pod pending."""
    if a.kind != K.SCHEDULING or b.reason != "Unschedulable":
        return False
    said = a.detail.get("reason")  # the node check's own reason (k8s_scheduling)
    if isinstance(said, str) and a.detail.get("nodes") is not None:
        return said != "cordoned"
    text = (a.message or a.quote or a.statement).split("preemption:", 1)[0]
    _, sep, tail = text.partition("nodes are available:")
    if not sep:
        return False
    whys = [m.group("why").strip() for m in _NODE_COUNTS.finditer(tail)]
    return any(w and not _CORDON_WORDS.search(w) for w in whys) and any(
        _CORDON_WORDS.search(w) for w in whys
    )


def _runs_on(f: Fact, node: str, graph: ObjectGraph) -> bool:
    """Whether the pods ``f`` is about (by name or workload) run on ``node``."""
    names = set(f.names())
    for p in graph.pods():
        if p.node != node or not p.name:
            continue
        if p.name.lower() in names or any(p.name.lower().startswith(n + "-") for n in names):
            return True
    return False


def _dependency_on_node(f: Fact, node: str, graph: ObjectGraph, dg: DependencyGraph) -> bool:
    """Whether something ``f``'s component depends on (directly or not) runs a pod on
    ``node``: a call that could have gone to that pod."""
    src = fact_component(dg, f)
    if src is None:
        return False
    reach = set(dg.reachable(src))
    if any(p.node == node and workload_of(p) in reach for p in graph.pods()):
        return True
    # a call lost on the way whose target neither the message nor the data names: any pod
    # of the caller's namespace on that node may be what it called
    if f.reason not in links.LOST_CALLS or any(dg.resolve(n) for n in links.named_in(f)):
        return False
    space = next((p.namespace for p in graph.pods() if workload_of(p) == src), None)
    return any(
        p.node == node and p.namespace == space and workload_of(p) != src for p in graph.pods()
    )


def _refers_to(f: Fact, obj: ObjRef | None, graph: ObjectGraph) -> bool:
    """Whether the pods ``f`` is about refer to ``obj`` (a claim, ConfigMap or Secret they
    mount, the ServiceAccount they run as): a cause on that object reaches them."""
    if obj is None or obj.kind not in ("PersistentVolumeClaim", "ConfigMap", "Secret",
                                       "ServiceAccount"):  # fmt: skip
        return False
    names = set(f.names())
    for p in graph.pods(obj.namespace):
        if not p.name or not (
            p.name.lower() in names or any(p.name.lower().startswith(n + "-") for n in names)
        ):
            continue
        if obj.kind == "ServiceAccount" and p.service_account == obj.name:
            return True
        if any(v.ref_name == obj.name for v in p.volumes):
            return True
    return False


def _depends(dg: DependencyGraph | None, a: Fact, b: Fact) -> bool:
    """Whether the component ``a`` is about depends (directly or not) on ``b``'s, another
    one, as the dependency graph shows."""
    if dg is None:
        return False
    ca, cb = fact_component(dg, a), fact_component(dg, b)
    return bool(ca and cb and ca != cb and cb in dg.reachable(ca))


def _is_deeper(
    shallow: Candidate, deep: Candidate, graph: ObjectGraph, dg: DependencyGraph | None = None
) -> bool:
    a, b = shallow.lead, deep.lead
    if deeper(a, b) and same_thread(a, b):
        return True
    if card_for(b).has(Trait.ACTS) and a.kind != K.CHANGE:
        # a change that acted on its target (an injected fault) explains what the target, or
        # what calls the target, did after it began: the cause its effects point at
        after = a.time is not None and b.time is not None and a.time >= b.time
        if after and same_thread(a, b):
            return True
        if after and _depends(dg, a, b):
            return True
    if (
        a.kind == b.kind == K.SCHEDULING
        and "nodes" in b.detail
        and "nodes" not in a.detail
        and not card_for(a).has(Trait.EVICTS)  # a pod removed: what its replacement meets follows
        and same_thread(a, b)
    ):
        return True  # the pod checked against each node explains the scheduler's summary
    if deeper(a, b) and _refers_to(a, b.subject, graph):
        return True  # the claim / ConfigMap / Secret / ServiceAccount the pods refer to
    if deeper(a, b) and b.subject is not None and b.subject in a.objects:
        return True  # an object the shallow one's own object names (a Certificate's issuer)
    if deeper(a, b) and _same_release(a, b, graph):
        return True  # a Job of the same release (its image) that did not run for it
    if (
        _reaching(a)
        and b.kind != K.CHANGE
        and deep.relation in (links.LINKED, links.SUBJECT, links.SCOPE)
        # the dependency graph: the shallow one's component depends on the deep one's
        and _depends(dg, a, b)
        and _began_first(deep, shallow)
        and _still_there(deep, shallow)
        # (a routing fault explains only calls that could not reach it)
        and (b.reason not in links.ROUTING or links.failed_to_reach(a))
    ):
        return True
    if (
        deeper(a, b)
        and b.kind != K.CHANGE
        and deep.relation in (links.LINKED, links.SUBJECT, links.SCOPE)
        and _began_first(deep, shallow)
        and (_depends(dg, a, b) or (deep.relation == links.LINKED and builds_up(a, b)))
    ):
        # a failure mode the card names as a why of it (a pool run dry: lock waits), on a
        # component the shallow one's depends on, as the data shows (an edge, or what its
        # errors name)
        return True
    if (
        deeper(a, b)
        and b.subject is not None
        and b.subject.kind == "Node"
        and _runs_on(a, b.subject.name, graph)
        and not _other_nodes_refuse(a, b)
    ):
        return True  # the node the subject's pods run on
    if (
        dg is not None
        and _reaching(a)
        and (b.kind == K.NODE_PROBLEM or deeper(a, b))
        and b.subject is not None
        and b.subject.kind == "Node"
        and _began_first(deep, shallow)
        and _dependency_on_node(a, b.subject.name, graph, dg)
    ):
        return True  # a call to what runs on a node that went down
    if (
        a.kind == K.SCHEDULING
        and b.kind == K.NODE_PROBLEM
        and _UNREACHABLE.search(a.message or a.statement)
    ):
        return True  # the scheduler avoids a node that is down: that node is the reason
    if _reaching(a) and deep.relation in (links.LINKED, links.SUBJECT) and b.kind != K.CHANGE:
        # the subject's failing call to a dependency, and a cause on that dependency
        own = {a.subject.name.lower()} if a.subject is not None else set()
        own |= {a.service.lower()} if a.service else set()
        named = {
            n for n in links.named_in(a) if n not in own and not any(o.startswith(n) for o in own)
        }
        return links.depends_on(b, named)
    return False


def start_of(f: Fact) -> datetime | None:
    """When what a fact reports began: a slow operation is logged when it ends, so it began
    its duration earlier."""
    if f.time is None:
        return None
    p50 = f.detail.get("p50_ms")
    if f.reason == "slow" and isinstance(p50, int | float) and p50 > 0:
        return f.time - timedelta(milliseconds=float(p50))
    return f.time


def _began_first(deep: Candidate, shallow: Candidate, slack: float = 60.0) -> bool:
    """Whether ``deep`` was already there when ``shallow`` began (a cause precedes its effect).
    A routing fault read from objects (a targetPort nothing listens on, a selector that
    matches nothing) is a standing condition with no start time: it was there."""
    a, b = start_of(deep.lead), start_of(shallow.lead)
    if deep.down_since is not None and (a is None or deep.down_since < a):
        a = deep.down_since
    if a is None and deep.lead.reason in links.ROUTING and b is not None:
        return True
    return a is not None and b is not None and a <= b + timedelta(seconds=slack)


def link_chains(
    cands: list[Candidate], graph: ObjectGraph, dg: DependencyGraph | None = None
) -> None:
    """Hang each cause under the deepest supported cause that explains it (transitively):
    the deepest takes the best score of what it explains, the shallower ones are halved
    and become its chain (how it reached the subject) or its support (same object)."""
    _mark_down_since(cands)
    parent: dict[int, Candidate] = {}
    for cand in cands:
        under = [
            o
            for o in cands
            if o is not cand
            and not o.superseded_by
            and not o.latent  # a Service that routes nowhere, but nothing calls it
            and not o.inert  # last lines that say what it did, not why it stopped
            and not o.ended  # over before the window: it explains nothing in it
            and (
                o.supported
                # an earlier cause explains a supported one; one as frequent before the
                # onset as after it (background) explains no change
                or (cand.supported and not o.lead.background and _began_first(o, cand))
                # what builds up until it fails (an archiver failing for days fills a disk):
                # the card names it, and going on before the onset is how it works
                or (cand.supported and builds_up(cand.lead, o.lead) and _began_first(o, cand))
                # an effect that needs a why (a probe timing out) and a standing limit of
                # the same pod (its CPU throttled all along): the limit is the why
                or (
                    cand.supported
                    and card_for(cand.lead).needs_deeper
                    and o.lead.kind == K.SATURATION
                    and same_thread(cand.lead, o.lead)
                )
            )
            and (
                o.relation not in links.NOT_A_CAUSE
                # the release's own Job: linked to the code it was to prepare by its image
                or (
                    cand.relation not in links.NOT_A_CAUSE
                    and deeper(cand.lead, o.lead)
                    and _same_release(cand.lead, o.lead, graph)
                )
            )
            and _is_deeper(cand, o, graph, dg)
        ]
        # two causes that could each explain the other: the one that began first is deeper
        under = [
            o for o in under if not _is_deeper(o, cand, graph, dg) or _began_first(o, cand, slack=0)
        ]
        if under:
            deep = max(under, key=lambda o: o.score)
            deep.supported = True  # it explains a supported cause that began after it
            if deep.relation in links.NOT_A_CAUSE:
                deep.relation = links.LINKED
            parent[id(cand)] = deep

    def top(c: Candidate) -> Candidate:
        seen: set[int] = set()
        while id(c) in parent and id(c) not in seen:
            seen.add(id(c))
            c = parent[id(c)]
        return c

    base = {id(c): c.score for c in cands}
    for cand in cands:
        if id(cand) not in parent:
            continue
        deep = top(cand)
        if deep is cand:
            continue  # causes that explain each other: neither is deeper
        deep.score = round(max(deep.score, base[id(cand)] * 1.1), 3)
        cand.score = round(base[id(cand)] * 0.5, 3)
        if same_thread(cand.lead, deep.lead):
            if cand.lead not in deep.support:
                deep.support.append(cand.lead)  # the same object's shallower sign
        elif cand.lead not in deep.chain:
            deep.chain.append(cand.lead)  # how the deeper cause reached the subject
        if cand.explains_subject and cand.explains is not None and not deep.explains_subject:
            deep.reaches = deep.reaches or cand.explains


def _mark_down_since(cands: list[Candidate]) -> None:
    """A pod's last words (or a failure read from its log tail) are what it wrote before
    its last exit; when the same pod was already down earlier (failed probes, back-offs,
    exits), what it reports began no later than that."""
    down = [
        f
        for c in cands
        for f in (c.lead, c.explains)
        if f is not None
        and f.time is not None
        and (card_for(f).has(Trait.DOWN) or f.kind == K.PROBE_FAILURE)
    ]
    for c in cands:
        lead = c.lead
        if lead.kind != K.LAST_WORDS and lead.detail.get("source") != "pod_logs":
            continue
        if lead.subject is None or lead.subject.kind != "Pod":
            continue
        times = [f.time for f in down if f is not lead and f.time and same_thread(f, lead)]
        if times:
            c.down_since = min(times)


def _still_there(deep: Candidate, shallow: Candidate) -> bool:
    """Whether what ``deep`` reports was still going on when ``shallow`` began (a readiness
    blip a quarter of an hour earlier explains nothing that starts later)."""
    last = deep.lead.last_time or deep.lead.time
    began = start_of(shallow.lead)
    return last is None or began is None or last >= began - timedelta(minutes=5)


def origin_over_echo(cands: list[Candidate], dg: DependencyGraph) -> None:
    """The same failure told twice: by a client, whose message wraps the error its server
    returned ("error while reading result (code: 241, Memory limit exceeded …)"), and by
    that server in its own log. When the data shows the client depends on the server (an
    edge of the dependency graph, or the client's error names the server: an RPC's
    ``PaymentService.Charge``), the server's own report leads and the client's echo says how
    the failure reached it."""
    for a in cands:
        ca = fact_component(dg, a.lead)
        reach = {*(dg.reachable(ca) if ca else {}), *links.named_components(a.lead, dg)}
        if not reach or a.relation in links.NOT_A_CAUSE:
            continue
        for b in cands:
            if b is a or b.lead.kind != a.lead.kind or b.lead.reason != a.lead.reason:
                continue
            cb = fact_component(dg, b.lead)
            if cb is None or cb == ca or cb not in reach or b.score >= a.score:
                continue
            if a.lead in b.chain or b.lead in a.chain:
                continue  # told already, one way round (a server's log names its caller too)
            if not shares_a_phrase(a.lead, b.lead):
                continue
            _origin_leads(b, a, a.score)


_OWN_ACCOUNT = (K.MISCONFIGURATION, K.CRASH_LOOP, K.NOT_READY, K.OOM_KILLED)


def callee_under_pool(cands: list[Candidate], dg: DependencyGraph) -> None:
    """A client's pool that fills (trait WAITS) while the same client's calls to a
    dependency fail at connect, and that dependency's own account of being down (scaled to
    zero, crash-looping, not ready): the dependency's account leads; the failing call and the
    full pool say how it reached the client."""
    for a in cands:
        if not card_for(a.lead).has(Trait.WAITS) or a.relation in links.NOT_A_CAUSE:
            continue
        own = fact_component(dg, a.lead)
        if own is None:
            continue
        calls = [
            c
            for c in cands
            if c.lead.kind == K.DEPENDENCY_FAILURE
            and c.lead.reason in ("refused", "unavailable", "timeout")
            and fact_component(dg, c.lead) == own
        ]
        targets = {t for c in calls for t in links.named_components(c.lead, dg)}
        for b in cands:
            if b is a or not b.conclusive or b.lead.kind not in _OWN_ACCOUNT:
                continue
            if fact_component(dg, b.lead) not in targets or a.lead in b.chain:
                continue
            _origin_leads(b, a, max(a.score, b.score))
            for c in calls:
                if c.lead not in b.chain:
                    b.chain.append(c.lead)
                c.score = round(c.score * 0.5, 3)
            break


def deeper_for_named_host(cands: list[Candidate]) -> None:
    """An object's failure (a Certificate past its expiry for ``notes.example.net``) and a
    failure its card names as deeper (``deeper_cards``: the ACME challenge cert-manager keeps
    failing) whose words name a host the object covers (``_acme-challenge.notes.example.net``):
    the deeper failure leads, the object's failure follows it — why it happened, then what."""
    for b in cands:
        deeper = card_for(b.lead).deeper_cards
        hosts = {o.name.lower() for o in b.lead.objects if o.kind == "host"}
        if not deeper or not hosts or b.relation in links.NOT_A_CAUSE:
            continue
        for a in cands:
            if a is b or card_for(a.lead).id not in deeper or b.lead in a.chain:
                continue
            said = {w.split(":")[0] for w in links.named_in(a.lead)}
            if any(w == h or w.endswith("." + h) for w in said for h in hosts):
                _origin_leads(a, b, max(a.score, b.score))
                a.relation = b.relation
                break


def clock_behind_time_errors(cands: list[Candidate]) -> None:
    """A clock measured off (a service's own times against the collector's) and errors
    judged by a clock that began with it (tokens rejected as expired minutes after they
    were issued, certificates not yet valid), whose card names a measured clock as their
    why: the clock leads, the errors say how it reached the users."""
    for a in (c for c in cands if card_for(c.lead).has(Trait.CLOCK)):
        for b in cands:
            deeper = card_for(b.lead).deeper_cards
            if b is a or card_for(a.lead).id not in deeper or b.lead in a.chain:
                continue
            if b.relation in links.NOT_A_CAUSE or not _began_first(a, b, slack=300.0):
                continue
            _origin_leads(a, b, max(a.score, b.score))


def object_over_caller(cands: list[Candidate]) -> None:
    """A caller's error and an object's own account of the same failure mode for a name the
    caller's error names (a client's handshake failing on an expired certificate of
    ``api.shop.svc``; the Certificate for ``api.shop.svc`` expired, and why it was not
    renewed): the object's account leads, the caller's error says how it reached the
    caller."""
    for a in cands:
        if a.relation in links.NOT_A_CAUSE or a.lead.subject is None:
            continue
        said = {w.split(":")[0] for w in links.named_in(a.lead)}  # a host without its port
        if not said:
            continue
        card = card_for(a.lead)
        for b in cands:
            lead = b.lead
            if b is a or lead.subject is None or lead.subject.kind in ("app", "Pod", "host"):
                continue
            hosts = {o.name.lower() for o in lead.objects if o.kind == "host"}
            if card_for(lead) is not card or not hosts & said or a.lead in b.chain:
                continue
            _origin_leads(b, a, max(b.score, a.score))


def _origin_leads(b: Candidate, a: Candidate, base: float) -> None:
    """``b``, the origin of what ``a`` reports, leads: it takes ``a``'s standing (score,
    support, the symptom it explains, its link to the subject) and ``a`` joins its chain."""
    b.score = round(base * 1.1, 3)
    a.score = round(a.score * 0.5, 3)
    b.supported = b.supported or a.supported
    if a.explains is not None and (b.explains is None or a.explains_subject):
        b.explains, b.explains_subject = a.explains, a.explains_subject
    if b.relation in (links.SCOPE, links.UNRELATED) and a.relation != links.SCOPE:
        b.relation = links.LINKED
    if a.lead not in b.chain:
        b.chain.append(a.lead)


def served_by(
    cands: list[Candidate], graph: ObjectGraph, dg: DependencyGraph, namespace: str | None
) -> None:
    """A client that quotes the error a product returns (a cache's "OOM command not allowed
    when used memory > 'maxmemory'"): the failure is that product's, so the workload that
    runs it (the one whose image is named for it, the subject's namespace first) is named —
    unless the lead is that workload's own log."""
    for c in cands:
        card = card_for(c.lead)
        if not card.software:
            continue
        ns = c.lead.subject.namespace if c.lead.subject and c.lead.subject.namespace else None
        found = runs_software(card.software, graph, near=ns or namespace)
        if found is not None and found[0] != fact_component(dg, c.lead):
            c.served_by = found


def _repos(pod: object) -> set[str]:
    """The image repositories (no tag, no digest) of a pod's or template's main containers."""
    out: set[str] = set()
    for c in getattr(pod, "containers", None) or []:
        image = (getattr(c, "image", None) or "").split("@", 1)[0]
        repo = image.rsplit(":", 1)[0] if ":" in image.rsplit("/", 1)[-1] else image
        if repo:
            out.add(repo.lower())
    return out


def _same_release(a: Fact, b: Fact, graph: ObjectGraph) -> bool:
    """Whether ``b`` is about a Job (or its pods) that runs the same image repository as the
    workload ``a`` is about: the release's own one-off step (a schema migration, an
    upgrade hook) for the code that now fails."""
    jobs = [o for o in [b.subject, *b.objects] if o is not None and o.kind == "Job"]
    if not jobs:
        return False
    theirs: set[str] = set()
    for j in jobs:
        rec = graph.get("Job", j.namespace, j.name)
        theirs |= _repos(getattr(rec, "template", None))
    if not theirs:
        return False
    names = set(a.names())
    mine: set[str] = set()
    for p in graph.pods():
        if p.name and (
            p.name.lower() in names or any(p.name.lower().startswith(n + "-") for n in names)
        ):
            mine |= _repos(p)
    return bool(mine & theirs)
