"""From facts to hypotheses and a root cause, deterministically.

A candidate hypothesis is either a runbook (the incident is what runbook R
describes: scored by the facts whose terms it matches) or a concrete fact that no
runbook explains. Facts weigh by severity, by being about a service in focus, by
timing (aligned with the reported onset or right after a change beats what was
there before) and by count. The best candidate becomes the root cause only when
it has direct evidence: a concrete error / reason / condition (or a metric shift
right after a change) AND a matching runbook or a second independent evidence id.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from opsmate.agent.evidence import EvidenceStore
from opsmate.agent.runbooks import Applicability, RunbookDoc
from opsmate.agent.signals import metric_names
from opsmate.agent.state import Fact, Hypothesis, TaskState

SEVERITY_WEIGHT = {"error": 3.0, "warning": 1.5, "info": 0.5}
_CAP_WORDS = ("_max", "_limit", "_capacity", "_size", "_total_capacity")
_USE_WORDS = ("_in_use", "_used", "_usage", "_active", "_current", "_busy", "_open")


@dataclass
class Candidate:
    key: str
    title: str
    facts: list[Fact] = field(default_factory=list)
    score: float = 0.0
    rid: str | None = None
    doc: RunbookDoc | None = None
    concrete: list[Fact] = field(default_factory=list)
    change: Fact | None = None


@dataclass
class Analysis:
    hypotheses: list[Hypothesis]
    root: Candidate | None
    root_statement: str | None
    root_evidence: list[str]
    confidence: float
    missing: str  # what is missing when there is no root cause
    onset: datetime | None


def derive_saturation(store: EvidenceStore, state: TaskState) -> None:
    """``x_in_use`` reaching ``x_max`` across two metric results -> a saturation fact."""
    seen: list[tuple[str, str, float, float, str]] = []  # (eid, name, max, last, query)
    for eid, res in store.results.items():
        if res.tool != "query_metrics" or res.status not in ("success", "partial"):
            continue
        q = str(res.data.get("query") or res.args.get("query") or "")
        names = metric_names(q)
        series = res.data.get("series") or []
        if len(names) != 1 or not series:
            continue
        mx = max((s.get("max") or {}).get("value") or 0 for s in series)
        last = max((s.get("last") or {}).get("value") or 0 for s in series)
        seen.append((eid, names[0], float(mx), float(last), q))
    for eu, nu, mxu, _, _ in seen:
        stem_u = next((nu[: -len(w)] for w in _USE_WORDS if nu.endswith(w)), None)
        if not stem_u:
            continue
        for ec, nc, _, lastc, _ in seen:
            stem_c = next((nc[: -len(w)] for w in _CAP_WORDS if nc.endswith(w)), None)
            if stem_c != stem_u or lastc <= 0 or mxu < lastc:
                continue
            quote = f"{nu} reached {nc} ({mxu:g} of {lastc:g})"
            state.upsert_fact(
                Fact(
                    key=f"saturation:{stem_u}",
                    statement=f"{quote}: the resource is exhausted",
                    evidence=[eu, ec],
                    kind="saturation",
                    severity="error",
                    quote=quote,
                    terms=[
                        nu.lower(),
                        nc.lower(),
                        *[p for p in stem_u.lower().split("_") if len(p) > 3],
                    ],
                    focus=True,
                )
            )


def estimate_onset(state: TaskState) -> datetime | None:
    """The reported onset, else the first concrete problem about a service in focus."""
    if state.onset:
        return state.onset
    times = [
        f.time
        for f in state.facts
        if f.time and f.severity == "error" and (f.focus or not state.constraints.services)
    ]
    return min(times) if times else None


def _aligned(t: datetime | None, onset: datetime | None) -> float:
    if t is None or onset is None:
        return 1.0
    if t < onset - timedelta(minutes=15):
        return 0.4  # there before the problem began: background noise
    if t <= onset + timedelta(minutes=30):
        return 1.3
    return 1.0


def dependencies(facts: list[Fact]) -> set[str]:
    """Services the focus services' own errors name (``... connecting to payment-service``)."""
    said = " ".join(
        f"{f.quote or ''} {f.statement}" for f in facts if f.focus and f.severity != "info"
    ).lower()
    return {
        f.service.lower()
        for f in facts
        if f.service and not f.focus and len(f.service) >= 4 and f.service.lower() in said
    }


def fact_weight(
    f: Fact, state: TaskState, onset: datetime | None, related: set[str] | None = None
) -> float:
    """How much a fact counts: severity, focus (or a dependency the focus names), timing, count."""
    if f.kind == "no_change":
        return 0.0
    w = SEVERITY_WEIGHT.get(f.severity, 0.5)
    if f.focus:
        w *= 1.5
    elif related and f.service and f.service.lower() in related:
        w *= 1.2  # a dependency the focus service's errors point at
    elif state.constraints.services and f.service:
        w *= 0.6
    w *= _aligned(f.time, onset)
    count = f.count
    if count > 1:
        w *= 1 + min(1.0, math.log10(count) / 2)
    return w


def _change_for(f: Fact, changes: list[Fact]) -> Fact | None:
    """The change (rollout, one-off job) that happened shortly before ``f`` began."""
    if f.time is None:
        return None
    best = None
    for c in changes:
        if c.time is None:
            continue
        aligned = c.time - timedelta(minutes=2) <= f.time <= c.time + timedelta(minutes=30)
        if aligned and (best is None or (best.time and c.time > best.time)):
            best = c
    return best


def _term_weight(t: str) -> float:
    """Identifiers (digits, underscores, long tokens) weigh 3; words and CJK bigrams 1."""
    return 3.0 if ("_" in t or any(ch.isdigit() for ch in t) or len(t) >= 10) else 1.0


class DocMatcher:
    """How strongly a fact's terms point at each runbook (IDF over the runbooks known)."""

    def __init__(self, docs: list[RunbookDoc]) -> None:
        self.text = {d.source: d.full_text().lower() for d in docs}
        self.head = {
            d.source: " ".join([d.title, *d.meta.tags, *d.meta.alerts]).lower() for d in docs
        }
        self.n = max(len(docs), 1)

    def strength(self, f: Fact, doc: RunbookDoc) -> float:
        """0 when the fact's distinctive terms are not in the runbook (raw weight < 3)."""
        text, head = self.text.get(doc.source, ""), self.head.get(doc.source, "")
        raw = 0.0
        strength = 0.0
        for t in f.terms:
            if t not in text:
                continue
            w = _term_weight(t)
            raw += w
            df = sum(1 for x in self.text.values() if t in x)
            strength += w * math.log(1 + self.n / max(df, 1)) * (2.0 if t in head else 1.0)
        if f.kind == "alert" and f.quote in doc.meta.alerts:
            return 6.0
        return strength if raw >= 3.0 else 0.0


def analyse(
    state: TaskState,
    store: EvidenceStore,
    docs: list[tuple[str, RunbookDoc, Applicability]],
) -> Analysis:
    """Score hypotheses over the facts and pick a root cause (or say what is missing)."""
    derive_saturation(store, state)
    onset = estimate_onset(state)
    facts = [f for f in state.facts if f.kind != "no_change"]
    changes = [f for f in facts if f.kind == "change"]
    problems = [f for f in facts if f.kind != "change"]
    related = dependencies(facts)
    weights = {f.key: fact_weight(f, state, onset, related) for f in facts}

    def concrete(f: Fact) -> bool:
        if f.severity == "error":
            return True
        return (
            f.severity == "warning"
            and f.kind == "metric_shift"
            and _change_for(f, changes) is not None
        )

    candidates: list[Candidate] = []
    explained: set[str] = set()
    matcher = DocMatcher([d for _, d, _ in docs])
    any_applicable = any(app.applies for _, _, app in docs)
    for rid, doc, app in docs:
        if any_applicable and not app.applies:
            continue  # shown under conflicts; never the explanation when one applies
        cand = Candidate(key=f"runbook:{doc.source}", title=doc.title, rid=rid, doc=doc)
        base = 0.0
        for f in facts:
            strength = matcher.strength(f, doc)
            if strength > 0:
                cand.facts.append(f)
                base += weights[f.key] * min(2.0, max(0.5, strength / 3.0))
        if not cand.facts:
            continue
        cand.concrete = [f for f in cand.facts if f.kind != "change" and concrete(f)]
        if doc.service and state.constraints.services and doc.service in state.constraints.services:
            base *= 1.2
        if not app.applies:
            base *= 0.5
        cand.score = base
        for f in cand.concrete:
            explained.add(f.key)
        candidates.append(cand)
    for f in problems:
        if f.key in explained or not concrete(f):
            continue
        candidates.append(
            Candidate(
                key=f"fact:{f.key}",
                title=f.statement,
                facts=[f],
                concrete=[f],
                score=weights[f.key] * 0.8,
            )
        )
    for c in candidates:
        c.facts.sort(key=lambda f: -weights[f.key])
        c.concrete.sort(key=lambda f: -weights[f.key])
        if c.concrete:
            c.change = _change_for(c.concrete[0], changes)
            if c.change is not None and c.change not in c.facts:
                c.score += 1.0
    candidates.sort(key=lambda c: -c.score)

    root = next((c for c in candidates if _supported(c)), None)
    if root is not None and root.score < 3.0:
        root = None
    hyps = [_hypothesis(c, c is root, onset) for c in candidates[:5]]
    if root is None:
        return Analysis(hyps, None, None, [], 0.0, _missing(state, candidates), onset)
    statement, evidence = _root_statement(root, weights)
    n_e = len({e for e in evidence if e.startswith("E")})
    confidence = min(
        0.95, 0.35 + 0.1 * n_e + (0.15 if root.rid else 0.0) + (0.1 if root.change else 0.0)
    )
    return Analysis(hyps, root, statement, evidence, round(confidence, 2), "", onset)


def _supported(c: Candidate) -> bool:
    """Direct evidence: a concrete fact, plus a runbook or a second independent evidence id."""
    if not c.concrete:
        return False
    eids = {e for f in c.facts for e in f.evidence if e.startswith("E")}
    if c.change is not None:
        eids |= set(c.change.evidence)
    return bool(c.rid) or len(eids) >= 2


def _hypothesis(c: Candidate, is_root: bool, onset: datetime | None) -> Hypothesis:
    ev: list[str] = []
    for f in c.facts[:4]:
        ev += [e for e in f.evidence if e not in ev]
    if c.rid:
        ev.append(c.rid)
    status = "confirmed" if is_root else "open"
    if (
        not is_root
        and onset
        and c.facts
        and all(f.time and f.time < onset - timedelta(minutes=15) for f in c.facts)
    ):
        status = "refuted"
    lead = c.concrete[0] if c.concrete else c.facts[0]
    statement = f"{c.title}: {lead.quote or lead.statement}" if c.rid else lead.statement
    why = "present before the problem began" if status == "refuted" else ""
    return Hypothesis(
        key=c.key,
        statement=statement,
        status=status,
        evidence=ev,
        score=round(c.score, 2),
        runbooks=[c.rid] if c.rid else [],
        why=why,
    )


def _root_statement(c: Candidate, weights: dict[str, float]) -> tuple[str, list[str]]:
    lead = c.concrete[0]
    evidence: list[str] = list(lead.evidence)
    parts = [lead.statement]
    others = [f for f in c.facts if f is not lead and f.kind not in ("change",)]
    others.sort(key=lambda f: (f.severity != "error", -weights.get(f.key, 0.0)))
    kinds = {lead.kind}
    extra: list[str] = []
    for f in others:
        if len(extra) >= 3:
            break
        if f.kind in kinds and f.kind != "log_warning":
            continue
        kinds.add(f.kind)
        extra.append(f.statement)
        evidence += [e for e in f.evidence if e not in evidence]
    text = parts[0]
    if extra:
        text += "; also " + "; ".join(extra)
    if c.change is not None:
        when = "after"
        if c.change.time and lead.time:
            delta = int((lead.time - c.change.time).total_seconds() // 60)
            when = "within a minute of" if delta < 1 else f"{delta} min after"
        text += f". It began {when} {c.change.quote or c.change.statement}"
        evidence += [e for e in c.change.evidence if e not in evidence]
    if c.rid:
        text += f'. This matches the runbook "{c.title}" ({c.rid})'
        evidence.append(c.rid)
    return text + ".", evidence


def _missing(state: TaskState, candidates: list[Candidate]) -> str:
    looked = sorted(
        {a.tool for a in state.actions if a.status in ("success", "partial", "no_data")}
    )
    if not any(f.severity in ("error", "warning") for f in state.facts):
        return "no error, failure reason, warning event or metric change was found" + (
            f" with {', '.join(looked)}" if looked else ""
        )
    if candidates and not candidates[0].concrete:
        return (
            "the signals found are warnings or metric changes without a concrete error, "
            "failure reason or change that explains them"
        )
    return (
        "the strongest signal has no matching runbook and no second, independent piece of evidence"
    )
