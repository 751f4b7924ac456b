"""From facts to hypotheses and a root cause, by the cause/symptom model.

1. Every fact has a role (:mod:`.causality`). Symptoms are what must be explained;
   causes are candidates; changes explain what began right after them.
2. Each fact is related to the subject of the question (:mod:`.links`): about it,
   linked to it (a dependency its errors name, the node it runs on, the cluster DNS it
   cannot reach), namespace-wide (no subject), or unrelated.
3. Candidates (:mod:`.candidates`) are scored; a cause *explains* a symptom when the
   model allows it and both concern the same object.
4. Candidates are related (:mod:`.chains`): the first error of a cascade, a deeper cause
   that explains a shallower one, refusals superseded by later pods.
5. The root cause is the best candidate that is not about another object and is
   supported: conclusive on its own (the system's own account), or an inferred cause
   with a second, independent piece of evidence (the symptom it explains, a runbook,
   another result, a preceding change, the onset the question names, the errors that
   followed it). Otherwise there is no root cause; the report is ``partial`` and says
   what is missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from opsmate.agent.evidence import EvidenceStore
from opsmate.agent.intake.subject import Subject
from opsmate.agent.judge import chains, links, transients, walk
from opsmate.agent.judge.candidates import Candidate, build, order_symptoms, same_thread
from opsmate.agent.judge.causality import Role, can_explain, role
from opsmate.agent.judge.colocation import derive_shared_node
from opsmate.agent.judge.saturation import derive_node_limits, derive_oom, derive_saturation
from opsmate.agent.judge.statements import root_statement
from opsmate.agent.kinds import Trait, card_for, seen, too_few
from opsmate.agent.kinds.registry import candidates
from opsmate.agent.observe import depgraph
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.runbooks.library import Applicability, RunbookDoc
from opsmate.agent.state import Hypothesis, HypothesisStatus, TaskState
from opsmate.loganalysis.stats import says_failure

__all__ = ["Analysis", "Candidate", "analyse", "estimate_onset"]


@dataclass
class Analysis:
    hypotheses: list[Hypothesis]
    root: Candidate | None
    root_statement: str | None
    root_evidence: list[str]
    confidence: float
    missing: str  # what is missing when there is no root cause
    onset: datetime | None
    candidates: list[Candidate] = field(default_factory=list)


def estimate_onset(state: TaskState) -> datetime | None:
    """The reported onset, else the first problem about the subject."""
    if state.onset:
        return state.onset
    start = state.constraints.window_from  # a problem before the window asked about is old
    times = [
        f.time
        for f in state.facts
        if f.time
        and f.severity == "error"
        and (f.focus or not state.constraints.services)
        and (start is None or (f.last_time or f.time) >= start)
    ]
    return min(times) if times else None


def _denies_a_caller(f: Fact, dg: depgraph.DependencyGraph, reached: set[str]) -> bool:
    """Whether an ingress policy's denied pods include one that calls the pods it selects:
    the dependency graph has the edge, or calls to them fail; what the data does not show
    (no workload seen to use them) counts as a caller, so only a policy whose selected pods
    are known to be called, by others only, is latent."""
    targets = {c for n in f.detail.get("selected") or [] if (c := dg.component(str(n)))}
    callers = {c for n in f.detail.get("denied") or [] if (c := dg.component(str(n)))}
    if not targets or not callers:
        return True  # nothing to judge by: the policy's word stands
    if targets & reached:
        return True  # calls to what it selects fail
    called_by = {e.src for t in targets for e in dg.callers_of(t)}
    if not called_by:
        return True  # nothing says who calls them
    return bool(called_by & callers)


def _independent(facts: list[Fact]) -> set[str]:
    return {e for f in facts for e in f.evidence if e.startswith("E")}


def analyse(
    state: TaskState,
    store: EvidenceStore,
    docs: list[tuple[str, RunbookDoc, Applicability]],
    graph: ObjectGraph | None = None,
) -> Analysis:
    """Score hypotheses over the facts and pick a root cause (or say what is missing)."""
    graph = graph or ObjectGraph()
    derive_saturation(store, state)
    derive_node_limits(store, state, graph)
    derive_oom(store, state)
    derive_shared_node(state, graph)
    onset = estimate_onset(state)
    subject = state.subject
    reported = subject.symptom
    facts = [f for f in state.facts if f.kind != K.NO_CHANGE]
    deps = links.dependencies(facts)
    aliases = links.subject_aliases(subject, graph)
    services = state.constraints.services
    dg, reach = links.dependency_view(facts, subject, graph, services)
    state.dependencies = dg.to_json()
    rel = {
        f.key: links.relation(f, subject, graph, deps, services, aliases, reach, dg) for f in facts
    }
    _asked_for(facts, rel, state, graph)
    symptoms = [f for f in facts if role(f) == Role.SYMPTOM]
    mine = order_symptoms(
        [s for s in symptoms if rel[s.key] in (links.SUBJECT, links.SCOPE)], reported
    )
    linked = order_symptoms([s for s in symptoms if rel[s.key] == links.LINKED], None)
    cands = build(
        [f for f in facts if role(f) == Role.CAUSE],
        [f for f in facts if f.kind == K.CHANGE],
        rel,
        mine,
        linked,
        reported=reported,
        onset=onset,
        reported_onset=state.onset,
        docs=[(rid, d) for rid, d, app in docs if app.applies],
        reaches=lambda f: links.subject_depends_on(f, subject, dg, services),
        said=facts,
    )
    chains.same_words(cands)
    chains.first_domino(cands)
    chains.replacement_waits(cands)
    chains.injected_over_callers(cands)
    chains.superseded(cands, graph)
    chains.sole_error(cands)
    chains.origin_over_echo(cands, dg)
    chains.object_over_caller(cands)
    chains.callee_under_pool(cands, dg)
    chains.deeper_for_named_host(cands)
    chains.clock_behind_time_errors(cands)
    chains.served_by(cands, graph, dg, subject.namespace)
    starts = {comp for n in [*subject.names, *services] if (comp := dg.component(n))}
    if not starts and subject.empty():
        # a namespace-wide question: walk from the components whose calls fail to reach a
        # dependency the data names (the edge the walk follows is what they failed on)
        starts = {
            comp
            for f in facts
            if f.kind == K.DEPENDENCY_FAILURE
            and f.severity == "error"
            and not f.background
            and any(dg.resolve(n) for n in links.named_in(f))
            and (comp := depgraph.fact_component(dg, f))
        }
    path = walk.walk(facts, dg, starts, onset)
    added = walk.apply(path, cands, dg, rel, [f for f in facts if f.kind == K.CHANGE])
    if added is not None and mine:
        added.explains, added.explains_subject = mine[0], True
    reached = links.unreachable_targets(facts, dg)
    wf = state.constraints.window_from
    for c in cands:
        c.ended = _before_window(c.lead, wf)
        # what the walk reached counts, unless it was over before the window asked about
        c.supported = (c is added and not c.ended) or _supported(c, onset, wf)
        if c.lead.reason in links.ROUTING and not _asked_about(c.lead, subject, c.relation):
            # a Service that routes nowhere explains calls that fail to reach it, and only
            # those: without a caller failing on it, it is a latent misconfiguration
            comp = depgraph.fact_component(dg, c.lead)
            if comp is None or comp not in reached:
                c.supported, c.conclusive, c.latent = False, False, True
        elif c.lead.reason == "ingressDenied" and not _denies_a_caller(c.lead, dg, reached):
            # a policy that admits only some peers to pods nothing denied is known to call
            # (no edge, no failing call to them): a latent restriction, not a cause
            c.supported, c.conclusive, c.latent = False, False, True
            c.score *= 0.3
        elif not _seen(c.lead, state, facts):
            # a failure mode that shows itself only one way (certificate errors), while
            # nothing seen shows it: present, but not the cause of what is asked about
            c.supported, c.conclusive, c.latent = False, False, True
            c.score *= 0.3
        elif c.lead.kind == K.LAST_WORDS and not _says_why(c.lead):
            # a container's last lines that are ordinary work (access lines, progress): what
            # it was doing when it stopped, not why
            c.supported, c.conclusive, c.inert = False, False, True
            c.score *= 0.3
        elif c.lead.kind == K.PROBE_FAILURE and too_few(c.lead):
            c.supported, c.conclusive = False, False  # fewer failures than fail a pod: a blip
            c.score *= 0.5
        elif transients.healed_before(c.lead, graph, onset):
            c.supported, c.conclusive = False, False  # over, and healthy, before the onset
            c.score *= 0.3
        elif (
            transients.passed_after_start(c.lead, facts)
            or transients.recovered(c.lead, graph)
            or transients.scheduled_later(c.lead, graph)
            or transients.yields_by_design(c.lead, graph)
        ):
            c.supported, c.conclusive = False, False  # the pod started, then passed
            c.score *= 0.3
        elif c.lead.reason == "UnknownServiceHost" and not any(
            links.is_dns_failure(f) and f.severity == "error" for f in facts
        ):
            c.supported, c.conclusive = False, False  # nothing failed to resolve a name
            c.score *= 0.3  # a lead below those that something did fail on
    chains.link_chains(cands, graph, dg)
    cands.sort(key=lambda x: -x.score)
    for c in cands:
        c.support = (
            c.support
            + [
                o.lead
                for o in cands
                if o is not c
                and o.supported
                and o.relation not in links.NOT_A_CAUSE
                and o.lead.kind != c.lead.kind
                and o.lead not in c.chain
                and o.lead not in c.followers
                and o.lead not in c.support
                and same_thread(o.lead, c.lead)
            ]
        )[:3]
    root = next((c for c in cands if c.supported and c.relation not in links.NOT_A_CAUSE), None)
    if root is not None:
        root = _conclusive_over_bare(root, cands)
    if root is not None and not _explains_something(root, reported):
        root = None  # a cause that explains no symptom seen or asked about: not the answer
    if root is not None and path.root and depgraph.fact_component(dg, root.lead) == path.root:
        hops = [f for f in walk.chain_facts(path) if f is not root.lead and f not in root.chain]
        root.chain = hops + root.chain
        state.walk = [e.to_json() for e in path.path]
    if root is not None and _unexplained_error(root, cands):
        root = None  # a bare error line beside a routing fault that may be behind it
    if root is not None and _bare_release(root, cands):
        root = None  # a new image and trouble after it: a lead, not a finding
    if root is not None and _nameless_effect(root, dg):
        root = None  # "a dependency failed", no why and no name: a lead, not a finding
    over = _over(state, facts, root) if root is not None else None
    if over is not None:
        root = None  # the trouble is over: what caused it stays a lead, not a finding
    hyps = _hypotheses(cands, root, mine, onset, facts)
    if root is None:
        missing = over or _missing(state, cands, mine)
        return Analysis(hyps, None, None, [], 0.0, missing, onset, cands)
    label = subject.label() if not subject.empty() else None
    root.impact = _impact(root, facts, rel, aliases | set(subject.names))
    statement, evidence = root_statement(root, label, reported)
    n_e = len({e for e in evidence if e.startswith("E")})
    confidence = 0.8 if root.conclusive else 0.6
    confidence += 0.05 * min(n_e - 1, 3)
    confidence += (0.05 if root.rid else 0.0) + (0.05 if root.change else 0.0)
    return Analysis(
        hyps, root, statement, evidence, round(min(confidence, 0.95), 2), "", onset, cands
    )


def _seen(f: Fact, state: TaskState, facts: list[Fact]) -> bool:
    """Whether what is seen shows ``f``'s failure mode the one way it shows itself (its
    card's ``seen_as``): in the question, or in an error or symptom that was read."""
    question = " ".join([state.goal, *state.questions])
    return seen(card_for(f), question, [o for o in facts if o is not f])


_KILLED = (134, 137, 139, 143)  # SIGABRT, SIGKILL, SIGSEGV, SIGTERM: the exit says it
_SIGTERM = 143


def _says_why(f: Fact) -> bool:
    """Whether a container's last words (or the termination message) say something failed."""
    d = f.detail or {}
    lines = [str(x) for x in [*(d.get("lines") or []), *(d.get("key_lines") or [])]]
    if f.exit_code == _SIGTERM and lines and not any(says_failure(x) for x in lines):
        return False  # asked to stop, it shut down in order: who asked (a failed liveness
        # probe, a drain) is the why, not the shutdown it logged
    if f.reason in ("OOMKilled", "StartError") or f.exit_code in _KILLED or not lines:
        return True  # the runtime's own account (a kill, a signal), or nothing to judge by
    return any(says_failure(x) for x in lines)


def _effect_without_why(c: Candidate) -> bool:
    """A cause whose card says it is itself an effect (a failing call, probes timing out)
    with no deeper cause hung under it."""
    return card_for(c.lead).needs_deeper and not c.chain


def _asked_for(
    facts: list[Fact], rel: dict[str, str], state: TaskState, graph: ObjectGraph
) -> None:
    """A failure mode the question's symptom selects (stale reads: a lagging replica), found
    by its own conclusive account in the namespace the subject runs in, is linked to the
    subject even where no dependency edge is known (a connection string kept in a Secret):
    what was asked about is what that failure produces."""
    if state.subject.empty() or not state.questions:
        return
    wanted = {c.id for c in candidates(" ".join(state.questions)) if not c.base}
    if not wanted:
        return
    spaces = {state.subject.namespace} if state.subject.namespace else set()
    spaces |= {
        p.namespace
        for p in graph.pods()
        if p.name and p.namespace and state.subject.matches(p.name)
    }
    for f in facts:
        card = card_for(f)
        if rel[f.key] != links.UNRELATED or card.id not in wanted or not card.conclusive:
            continue
        ns = f.subject.namespace if f.subject else None
        if ns is None and f.subject is not None:
            ns = next((p.namespace for p in graph.pods() if p.name == f.subject.name), None)
        if ns is not None and ns in spaces:
            rel[f.key] = links.LINKED


def _nameless_effect(root: Candidate, dg: depgraph.DependencyGraph) -> bool:
    """A root that is an effect (its card needs a why: a failing call, a probe timing out)
    with no deeper cause found and naming nothing: "web reports a failing dependency" says
    something failed, not what — the report stays partial."""
    lead = root.lead
    if not _effect_without_why(root) or root.change is not None:
        return False
    if lead.kind == K.PROBE_FAILURE or (lead.subject and lead.subject.kind == "Pod"):
        return False  # a pod's own effect names its pod
    return not links.named_components(lead, dg) and not any(
        o.kind in ("host", "Service", "app") for o in lead.objects
    )


def _bare_release(root: Candidate, cands: list[Candidate]) -> bool:
    """A root that is only a new image rolled out before the trouble (or a rollout whose
    change is not known: the same image, no template difference read): nothing read shows
    the new version failing (no error, crash or failed probe of that workload after it), so
    the timing is all that ties them — the release stays the first lead, the report
    partial."""
    lead = root.lead
    if lead.kind != K.CHANGE or card_for(lead).has(Trait.ACTS) or root.chain:
        return False
    changes = [str(c) for c in (lead.detail or {}).get("template_changes") or []]
    if changes and not all(": image " in c for c in changes):
        return False  # a configuration change says what changed: it can be the finding
    if not changes and (lead.detail or {}).get("change") != "rollout":
        return False
    t0 = lead.time
    return not any(
        c is not root
        and c.supported  # start-up readiness failures of pods that came up do not count
        and c.lead.kind != K.CHANGE
        and c.lead.severity == "error"
        and same_thread(c.lead, lead)
        and (t0 is None or (c.lead.time is not None and c.lead.time >= t0))
        for c in cands
    )


def _conclusive_over_bare(root: Candidate, cands: list[Candidate]) -> Candidate:
    """A root that is an unclassified log line (no failure mode named, not the system's own
    account), or an effect whose why was not found (probes timing out, a refused call
    naming no target), gives way to a conclusive cause of the same symptom: the scheduler's
    account of why the missing pod has no node explains a replica set not ready better than
    a warning another component logged about it; a Service selecting no pod explains the
    refused calls better than the refusals."""
    lead = root.lead
    effect = _effect_without_why(root)
    if root.conclusive and not effect:
        return root
    # an unclassified line (logged, or a container's last words) names no failure mode
    bare = (K.LOG_WARNING, K.LOG_ERROR, K.LAST_WORDS)
    if not effect and (lead.kind not in bare or not card_for(lead).base):
        return root
    better = [
        c
        for c in cands
        if c is not root
        and c.conclusive
        and c.supported
        and c.relation not in links.NOT_A_CAUSE
        and c.explains is root.explains
        # explaining no symptom seen, as the bare line: only a finding about the subject
        and (root.explains is not None or c.relation == links.SUBJECT)
        and c.lead.kind not in (K.LOG_WARNING, K.LOG_ERROR, K.CHANGE)
        and not card_for(c.lead).needs_deeper
    ]
    return max(better, key=lambda c: c.score) if better else root


def _unexplained_error(root: Candidate, cands: list[Candidate]) -> bool:
    """A root that is an unclassified error line of the subject (no host, no failure mode
    named) while a Service of the same namespace routes nowhere (a targetPort or selector
    that reaches no pod) that no read connects to it: the error may well be that fault
    seen from afar, so neither is stated as the cause; both stay as leads."""
    lead = root.lead
    if lead.kind != K.LOG_ERROR or not card_for(lead).base or root.conclusive or root.change:
        return False
    ns = lead.subject.namespace if lead.subject else None
    return any(
        c.latent
        and (ns is None or c.lead.subject is None or c.lead.subject.namespace in (None, ns))
        for c in cands
    )


_RECOVERY = re.compile(
    r"auto-?resolv|resolved (?:itself|on its own|by itself)|recovered|came back|back to normal"
    r"|(?:is|are) (?:it|anything|something|they|that) still (?:broken|failing|down|wrong|an issue)"
    r"|still (?:broken|failing|down)\?"
    r"|\b(?:is|are)\b[^.?!]{0,40}\bstill (?:broken|failing|down|erroring|happening)\b"
    r"|(?:looks?|is|are|seems?) (?:fine|ok|okay|green|healthy|up|back) now"
    # "is the shop broken?" asks whether it still is; "is the new version broken?" and "is
    # the cluster down again?" guess at a cause (a change, a recurrence)
    r"|(?:is|are) (?:the |our )?(?!new\b|latest\b)[\w-]+(?: \w+)? (?:broken|down)\b(?! again)"
    r"[^.?]*\?"
    r"|do (?:i|we) need to (?:wake|page|do anything|fix|open an incident)",
    re.I,
)
_QUIET = timedelta(minutes=15)


def _over(state: TaskState, facts: list[Fact], root: Candidate | None = None) -> str | None:
    """When the question says the trouble resolved (or asks whether it still holds) and the
    evidence agrees — every problem about the subject was last seen a quarter of an hour or
    more before the end of the window, and none is a standing state without a time — why
    there is no root cause to report: the trouble is over. Else None."""
    end = state.constraints.window_to
    if end is None or not _RECOVERY.search(" ".join([state.goal, *state.questions])):
        return None
    problems = [
        f
        for f in facts
        if f.focus and f.severity == "error" and role(f) in (Role.SYMPTOM, Role.CAUSE)
    ]
    if root is not None and root.conclusive and root.lead not in problems:
        problems.append(root.lead)  # the system's own account of a cause that goes on
    if any(f.time is None or (f.last_time or f.time) >= end - _QUIET for f in problems):
        return None
    last = max(((f.last_time or f.time) for f in problems if f.time), default=None)
    who = state.subject.label() or "it"
    seen = f"the last failure about {who} was seen at {last.strftime('%H:%M')}; " if last else ""
    return (
        f"the trouble is over: {seen}nothing read shows a failure about {who} in the last "
        f"{int(_QUIET.total_seconds() // 60)} minutes of the window (to "
        f"{end.strftime('%H:%M')}); the leads below say what it most likely was"
    )


def _explains_something(c: Candidate, reported: K | None) -> bool:
    """Whether a root candidate is linked to a symptom: one it explains or reaches, the
    symptom the question reports, or (a change) what began after it. A standing condition
    that explains nothing observed — a CronJob suspended on purpose in a namespace whose
    pods merely completed — is a lead, not the answer."""
    if c.explains is not None or c.reaches is not None or c.lead.kind == K.CHANGE:
        return True
    if reported is None or reported in (K.ERROR_RATE, K.LATENCY, K.ALERT):
        return True  # no symptom said, or failing requests: any failure behind them may do
    if c.relation == links.LINKED:
        return True  # a dependency's own failure, reached through what the subject calls
    return can_explain(c.lead, reported)


def _impact(root: Candidate, facts: list[Fact], rel: dict[str, str], names: set[str]) -> list[Fact]:
    """Failures of other services that name the subject, after the root cause began: its
    downstream impact (a consumer's "redis: connection pool timeout")."""
    if root.relation != links.SUBJECT or not names:
        return []
    shown = {id(f) for f in [root.lead, *root.chain, *root.support, *root.followers]}
    t0 = root.lead.time
    out = [
        f
        for f in facts
        if id(f) not in shown
        and rel[f.key] in (links.LINKED, links.IMPACT)
        and f.severity in ("error", "warning")
        and role(f) in (Role.CAUSE, Role.SYMPTOM)
        and links.mentions(f, names)
        and (t0 is None or f.time is None or f.time >= t0 - timedelta(minutes=5))
    ]
    out.sort(key=lambda f: (f.severity != "error", -f.count))
    return out[:2]


def _before_window(f: Fact, window_from: datetime | None) -> bool:
    """Whether ``f`` was last seen before the window asked about began."""
    return bool(window_from and f.time and (f.last_time or f.time) < window_from)


def _over_before(c: Candidate, onset: datetime | None, window_from: datetime | None = None) -> bool:
    """Whether an inferred cause was seen only before the onset and not since (a readiness
    blip a quarter of an hour before the trouble explains none of it); or any cause, even
    the system's own account, that ended before the window asked about began (a container
    OOM-killed the evening before the morning's trouble)."""
    if c.lead.time is None:
        return False
    if _before_window(c.lead, window_from):
        return True
    if onset is None or c.conclusive:
        return False
    last = c.lead.last_time or c.lead.time
    return last < onset - timedelta(minutes=5) and c.lead.count <= 3


def _supported(
    c: Candidate, onset: datetime | None = None, window_from: datetime | None = None
) -> bool:
    """Conclusive on its own, or an inferred cause with a second, independent support."""
    if c.superseded_by:
        return False  # the evidence says it no longer holds
    if _over_before(c, onset, window_from):
        return False
    if c.conclusive:
        return True
    if c.lead.background:
        return False  # as frequent before the onset as after: it cannot explain the change
    if c.relation == links.SUBJECT and (
        (c.onset_aligned and c.lead.count >= 2) or len(c.followers) >= 2 or c.sole
    ):
        return True
    own = _independent([c.lead])
    if c.explains is not None and _independent([c.explains]) - own:
        return True
    if c.rid is not None:
        return True
    if c.change is not None and _independent([c.change]) - own:
        return True
    return len(own) >= 2


def _distinct(hyps: list[Hypothesis], cands: list[Candidate]) -> list[Hypothesis]:
    """What is still possible first, then one hypothesis per failure mode and object: the
    same error logged with different values (four keys of one counter, three titles "not
    found") is one candidate, so the ranked list of a report without a root cause leaves
    room for the next explanation."""
    marks = {}
    for c in cands:
        who = c.lead.subject.key() if c.lead.subject else (c.lead.service or c.key)
        marks[c.key] = (card_for(c.lead).id, who)
    seen: set[tuple[str, str]] = set()
    out: list[Hypothesis] = []
    for h in sorted(hyps, key=lambda h: h.status == "refuted"):
        mark = marks.get(h.key)
        if mark is not None and mark in seen:
            continue
        if mark is not None:
            seen.add(mark)
        out.append(h)
    return out


_AFTER = timedelta(minutes=30)


def _from_fact(f: Fact, tag: str, status: HypothesisStatus, why: str) -> Hypothesis:
    """A hypothesis that is one fact as read (its statement, evidence and failure mode)."""
    return Hypothesis(
        key=f"{tag}:{f.key}",
        statement=f.statement,
        status=status,
        evidence=list(f.evidence),
        why=why,
        failure_mode=card_for(f).id,
    )


def _injected(
    facts: list[Fact], onset: datetime | None, said: list[Hypothesis]
) -> list[Hypothesis]:
    """Fault-injection experiments (cards with trait ACTS) that ran when the trouble began:
    with no root cause found, the first leads a person checks, whatever the data links."""
    seen = {h.key.removeprefix("fact:") for h in said} | {h.statement for h in said}
    out = []
    for f in facts:
        if not card_for(f).has(Trait.ACTS) or f.time is None or f.key in seen:
            continue
        if onset is not None and not onset - timedelta(hours=3) <= f.time <= onset + _AFTER:
            continue  # begun long before the trouble, or after it
        why = "an injected fault running when the trouble began; no link to the symptom was read"
        out.append(_from_fact(f, "injected", "open", why))
    return out[:2]


def _more_leads(
    facts: list[Fact], onset: datetime | None, said: list[Hypothesis], cands: list[Candidate]
) -> list[Hypothesis]:
    """Fewer than three hypotheses: the errors read that no candidate took up (new since the
    trouble began, most frequent first), as leads — what else a person would check."""
    if len(said) >= 3:
        return []
    taken = {c.lead.key for c in cands} | {h.statement for h in said}
    taken |= {h.key.split(":", 1)[-1] for h in said}
    pool = [
        f
        for f in facts
        if f.severity == "error"
        and role(f) == Role.CAUSE
        and not f.background
        and f.key not in taken
        and f.statement not in taken
        and f.time is not None
        and (onset is None or (f.last_time or f.time) >= onset - timedelta(minutes=5))
    ]
    pool.sort(key=lambda f: -f.count)
    why = "an error read in the window that nothing linked to the symptom"
    return [_from_fact(f, "lead", "open", why) for f in pool[: 3 - len(said)]]


def _hypotheses(
    cands: list[Candidate],
    root: Candidate | None,
    mine: list[Fact],
    onset: datetime | None,
    facts: list[Fact] | None = None,
) -> list[Hypothesis]:
    facts = facts or []
    out: list[Hypothesis] = []
    confirmed = 0
    cutoff = onset - timedelta(minutes=15) if onset else None
    for c in cands[:6] if root is not None else cands:
        status, why = "open", ""
        if c is root:
            status = "confirmed"
        elif c.superseded_by:
            status = "refuted"
            why = f"{c.superseded_by}: no longer the cause"
        elif (
            root is not None
            and c.conclusive
            and c.relation == root.relation
            and root.relation not in links.NOT_A_CAUSE
            and same_thread(c.lead, root.lead)
            and confirmed < 2
        ):
            status = "confirmed"  # a second conclusive signal about the same object
            confirmed += 1
        elif c.relation in links.NOT_A_CAUSE:
            why = "about another object than the one asked about"
        elif (
            cutoff
            and c.lead.time
            and c.lead.time < cutoff
            and (c.lead.last_time is None or c.lead.last_time < cutoff)
        ):
            status, why = "refuted", "present before the problem began"
        elif not c.supported:
            why = "no second, independent piece of evidence"
        ev = list(c.lead.evidence)
        if c.explains is not None:
            ev += [e for e in c.explains.evidence if e not in ev]
        if c.rid:
            ev.append(c.rid)
        statement = c.lead.statement
        if c.rid and c.doc is not None:
            statement = f"{c.doc.title}: {c.lead.quote or c.lead.statement}"
        out.append(
            Hypothesis(
                key=c.key,
                statement=statement,
                status=status,
                evidence=ev,
                score=c.score,
                runbooks=[c.rid] if c.rid else [],
                why=why,
                failure_mode=card_for(c.lead).id,
            )
        )
    if root is None:
        out = (_injected(facts, onset, out) + _distinct(out, cands))[:6]
        out += _more_leads(facts, onset, out, cands)
    if root is not None:
        # what else shows the root cause on the same object (its crash loop, its OOM kills):
        # confirmed findings of their own, listed with it rather than only among the facts
        said = {h.statement for h in out}
        same = [
            f
            for f in facts
            if f is not root.lead
            and (f.severity == "error" or f.kind in (K.CRASH_LOOP, K.OOM_KILLED))
            and card_for(f).shows_rank is not None
            and same_thread(f, root.lead)
        ]
        same.sort(key=lambda f: card_for(f).shows_rank or 0)
        trigger = [root.change] if root.change is not None and root.change is not root.lead else []
        for f in [*root.support[:2], *same[:3], *trigger]:
            if f is root.lead:
                continue
            if f.statement in said:  # listed as a candidate of its own: it is established
                for h in out:
                    if h.statement == f.statement and h.status == "open":
                        h.status, h.why = "confirmed", "shows or triggered the root cause"
                continue
            said.add(f.statement)
            out.append(
                _from_fact(f, "support", "confirmed", "shows the root cause on the same object")
            )
    if root is None and not cands:
        for s in mine[:2]:
            out.append(
                Hypothesis(
                    key=f"symptom:{s.key}",
                    statement=f"{s.statement} (a symptom; what causes it was not found)",
                    status="open",
                    evidence=list(s.evidence),
                    why="a symptom, not a cause",
                )
            )
    # what is still possible before what was ruled out (a reader takes the first three)
    out.sort(key=lambda h: h.status == "refuted")
    return out


def _missing(state: TaskState, cands: list[Candidate], mine: list[Fact]) -> str:
    looked = sorted(
        {a.tool for a in state.actions if a.status in ("success", "partial", "no_data")}
    )
    if not any(f.severity in ("error", "warning") for f in state.facts):
        return "no error, failure reason, warning event or metric change was found" + (
            f" with {', '.join(looked)}" if looked else ""
        )
    if cands and all(c.relation in links.NOT_A_CAUSE for c in cands):
        about = ", ".join(
            dict.fromkeys(c.lead.subject.label() for c in cands if c.lead.subject is not None)
        )
        return (
            f"the failures found are about other objects ({about or 'other services'}), "
            f"not {state.subject.label()}"
        )
    if not cands and mine:
        s = mine[0]
        what = card_for(s).phrase or "shows a problem"
        who = s.subject.label() if s.subject else (s.service or "it")
        return (
            f"{who} {what}, but nothing read says why "
            "(no termination reason, event or log line explains it)"
        )
    if cands:
        return "the strongest lead has no second, independent piece of evidence"
    return "the signals found are symptoms or context, without a failure reason that explains them"


def _asked_about(f: Fact, subject: Subject, relation: str = "") -> bool:
    """Whether the question names the very object the fact is about (or asks about a host
    and the fact is about what serves it)."""
    if subject.hosts and not subject.names and relation == links.SUBJECT:
        return True
    return f.subject is not None and (f.subject.name or "").lower() in subject.names
