"""Localisation by walking the dependency graph: the deepest abnormal component.

From the components the question is about (or, when it names none, every abnormal one),
follow "depends on" edges (``observe/depgraph.py``). A component is *abnormal* when a
problem fact about it began at or after the onset (errors, crash loops, not-ready pods,
latency or error-rate shifts, a cause found on it). The walk keeps going while the
abnormality is explained by something further down: the root is the deepest abnormal
component — one that depends on no other abnormal component — reached from the subject.
A caller's error ("connection refused", "UNAVAILABLE", HTTP 500) is then the first link
of a chain, never the root: the chain runs from the subject's symptom through each hop
to the component whose own failure has its own evidence.

This is the classic "deepest anomalous node" of microservice RCA, with evidence instead
of scores. Its effect on the judgement is bounded: candidates on the deepest component
gain, candidates on the components above it on the path lose, and when the deepest
component has no cause fact of its own its strongest symptom becomes a candidate (a
database that is crash-looping explains a slow caller even when why it crashes is not
known). Nothing happens when the walk is ambiguous (two unrelated sinks).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from opsmate.agent.judge import links
from opsmate.agent.judge.candidates import Candidate, change_for
from opsmate.agent.judge.causality import Role, role
from opsmate.agent.kinds import Trait, card_for, too_few
from opsmate.agent.observe.depgraph import DepEdge, DependencyGraph, fact_component
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K


def _is(f: Fact, trait: Trait) -> bool:
    """Whether fact ``f``'s card has ``trait`` (DOWN: the component itself is down; SHIFT: a
    request series moved; QUIET: never abnormal by itself; CALLER_SIDE: how a failure
    reached the component above)."""
    return card_for(f).has(trait)


@dataclass
class Walk:
    """The outcome: the deepest abnormal component, the path to it, and what shows each hop."""

    root: str | None = None
    path: list[DepEdge] = field(default_factory=list)
    abnormal: dict[str, list[Fact]] = field(default_factory=dict)
    start: str | None = None


def abnormal_components(
    facts: list[Fact], dg: DependencyGraph, onset: datetime | None
) -> dict[str, list[Fact]]:
    """Component -> the problem facts about it that began around or after the onset."""
    cutoff = onset - timedelta(minutes=15) if onset else None
    out: dict[str, list[Fact]] = {}
    reached: set[str] | None = None
    for f in facts:
        if f.reason in links.ROUTING:
            # a Service that routes nowhere is abnormal only when calls fail to reach it
            # (undeclared container ports are common: the check alone is not a failure)
            reached = links.unreachable_targets(facts, dg) if reached is None else reached
            if fact_component(dg, f) not in reached:
                continue
        if _new_warnings(f):
            pass  # a warning that began with the trouble and repeats: a sign all the same
        elif (
            _is(f, Trait.QUIET)
            or f.severity == "info"
            or f.background
            or role(f) not in (Role.SYMPTOM, Role.CAUSE)
        ):
            continue
        elif f.severity != "error" and not (_is(f, Trait.SHIFT) and f.detail.get("query")):
            continue  # a warning is abnormal only as a shifted request series
        if too_few(f):
            continue  # one readiness blip, one logged error: not a component that is down
        if cutoff is not None and f.time is not None and (f.last_time or f.time) < cutoff:
            continue
        comp = fact_component(dg, f)
        if comp is None:
            continue
        out.setdefault(comp, []).append(f)
    return out


def walk(
    facts: list[Fact],
    dg: DependencyGraph,
    starts: set[str],
    onset: datetime | None,
) -> Walk:
    """Walk from ``starts`` (the subject's components; empty: every abnormal component)."""
    ab = abnormal_components(facts, dg, onset)
    out = Walk(abnormal=ab)
    if not ab or not dg.edges:
        return out
    tops = [c for c in ab if not _has_abnormal_caller(c, ab, dg)]
    origins = [s for s in starts if s in ab] or sorted(starts) or tops
    sinks = _sinks(origins, ab, dg)
    known = {e.src for e in dg.edges}
    if not sinks and origins != tops and not any(o in known for o in origins):
        sinks = _sinks(tops, ab, dg)  # the data says nothing of what the subject calls
    if len(sinks) > 1:
        sinks = _moved_at_onset(sinks, facts, dg, onset) or sinks
    if len(sinks) != 1:
        if len(sinks) > 1:
            first = _earliest(sinks, ab)
            if first is None:
                return out
            sinks = {first: sinks[first]}
        else:
            return out
    root, (origin, _) = next(iter(sinks.items()))
    out.root, out.start = root, origin
    out.path = dg.path(origin, root)
    return out


def _sinks(
    origins: list[str], ab: dict[str, list[Fact]], dg: DependencyGraph
) -> dict[str, tuple[str, int]]:
    """Abnormal components reached from ``origins`` that depend on nothing abnormal."""
    sinks: dict[str, tuple[str, int]] = {}
    for o in origins:
        reach = dg.reachable(o)
        below = [c for c in reach if c in ab]
        if not below:
            continue
        for c in below:
            if not any(d in ab for d in dg.reachable(c) if d != o):
                prev = sinks.get(c)
                if prev is None or reach[c] < prev[1]:
                    sinks[c] = (o, reach[c])
    return sinks


def _moved_at_onset(
    sinks: dict[str, tuple[str, int]],
    facts: list[Fact],
    dg: DependencyGraph,
    onset: datetime | None,
) -> dict[str, tuple[str, int]]:
    """Among several sinks, those whose own series or state changed at the onset (traffic
    that fell to nothing, restarts): a standing misconfiguration nobody calls is not it."""
    if onset is None:
        return {}
    lo, hi = onset - timedelta(minutes=15), onset + timedelta(minutes=30)
    moved = {
        c
        for f in facts
        if f.time is not None and lo <= f.time <= hi and (c := fact_component(dg, f)) in sinks
    }
    return {c: v for c, v in sinks.items() if c in moved}


def _has_abnormal_caller(c: str, ab: dict[str, list[Fact]], dg: DependencyGraph) -> bool:
    return any(e.src in ab for e in dg.callers_of(c))


def _first_time(fs: list[Fact]) -> datetime | None:
    times = [f.time for f in fs if f.time is not None]
    return min(times) if times else None


def _earliest(sinks: dict[str, tuple[str, int]], ab: dict[str, list[Fact]]) -> str | None:
    """Among several sinks, the one whose trouble began clearly first (a minute or more)."""
    timed = sorted(
        ((t, c) for c in sinks if (t := _first_time(ab[c])) is not None), key=lambda x: x[0]
    )
    if len(timed) < 2 or timed[1][0] - timed[0][0] < timedelta(minutes=1):
        return None
    return timed[0][1]


def _new_warnings(f: Fact) -> bool:
    """Warnings logged many times and only since the onset."""
    return f.kind == K.LOG_WARNING and bool(f.detail.get("new")) and f.count >= 5


def _best_symptom(fs: list[Fact]) -> Fact | None:
    down = [f for f in fs if _is(f, Trait.DOWN)]
    shifts = [f for f in fs if _is(f, Trait.SHIFT)]
    pool = down or shifts or [f for f in fs if _new_warnings(f)]
    if not pool:
        return None
    return max(pool, key=lambda f: (f.severity == "error", f.count))


def apply(
    w: Walk,
    cands: list[Candidate],
    dg: DependencyGraph,
    rel: dict[str, str],
    changes: list[Fact] | None = None,
) -> Candidate | None:
    """Weigh the candidates by the walk (see module doc); returns the candidate added for a
    deepest component that had only symptoms, if any."""
    if w.root is None or not w.path:
        return None
    upstream = {e.src for e in w.path}
    on_root = [c for c in cands if fact_component(dg, c.lead) == w.root]
    added: Candidate | None = None
    if not any(not _is(c.lead, Trait.SHIFT) and role(c.lead) == Role.CAUSE for c in on_root):
        lead = _best_symptom(w.abnormal.get(w.root, []))
        if lead is not None and all(c.lead is not lead for c in cands):
            top = max((c.score for c in cands), default=1.0)
            added = Candidate(
                lead=lead,
                relation=links.LINKED if rel.get(lead.key) != links.SUBJECT else links.SUBJECT,
                score=round(max(top, 1.0) * 1.05, 3),
                supported=True,
                change=change_for(lead, changes or []),
            )
            cands.append(added)
            on_root.append(added)
    for c in cands:
        comp = fact_component(dg, c.lead)
        if c in on_root:
            c.score = round(c.score * 1.6, 3)
            if c.relation in links.NOT_A_CAUSE:
                c.relation = links.LINKED  # the data shows the subject depends on it
        elif _is(c.lead, Trait.CALLER_SIDE) and (
            comp in upstream or any(dg.resolve(n) == w.root for n in links.named_in(c.lead))
        ):  # a caller on the path, or any caller whose error names the root: its symptom
            c.score = round(c.score * 0.6, 3)
    return added


def chain_facts(w: Walk) -> list[Fact]:
    """One fact per hop above the root, in path order: what shows the failure reached the
    component above (a caller's error naming the callee, else its own symptom)."""
    out: list[Fact] = []
    for e in w.path:
        fs = w.abnormal.get(e.src, [])
        naming = [f for f in fs if _is(f, Trait.CALLER_SIDE)]
        if naming:
            out.append(max(naming, key=lambda f: (f.kind == K.DEPENDENCY_FAILURE, f.count)))
    return out
