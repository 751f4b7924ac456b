"""Candidate causes: each cause fact, scored, with the symptom it explains.

A candidate's score is specificity (how precise a kind of cause is) x its relation to
the subject x timing against the onset x severity x a little for repetition; it grows
when the cause explains an observed symptom, follows a change, or matches a runbook
about that kind of failure, and shrinks when the fact is background noise (present
before the onset at the same rate).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from opsmate.agent.judge import links
from opsmate.agent.judge.causality import can_explain, conclusive, specificity, symptom_rank
from opsmate.agent.judge.runbook_match import DocMatcher
from opsmate.agent.kinds import Trait, card_for, too_few
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.runbooks.library import RunbookDoc

SEVERITY_WEIGHT = {"error": 1.0, "warning": 0.7, "info": 0.4}


@dataclass
class Candidate:
    lead: Fact
    relation: str
    score: float = 0.0
    explains: Fact | None = None  # the symptom it explains (the subject's, else a linked one)
    support: list[Fact] = field(default_factory=list)  # corroborating causes (same object)
    chain: list[Fact] = field(default_factory=list)  # shallower causes it explains in turn
    reaches: Fact | None = None  # the subject's symptom a chain reaches (linked causes)
    explains_subject: bool = False  # ``explains`` is one of the subject's own symptoms
    impact: list[Fact] = field(default_factory=list)  # consumers failing on the subject
    followers: list[Fact] = field(default_factory=list)  # a cascade's later errors, in order
    change: Fact | None = None
    rid: str | None = None
    doc: RunbookDoc | None = None
    conclusive: bool = False
    supported: bool = False
    onset_aligned: bool = False  # began at the onset the question names
    sole: bool = False  # the only error the subject logged
    superseded_by: str | None = None  # a later pod shows this refusal no longer applies
    latent: bool = False  # a routing fault nothing failed to reach: not a cause of anything
    inert: bool = False  # read as saying no cause (ordinary last lines): never revived as one
    ended: bool = False  # over before the window asked about began: never revived as a cause
    served_by: tuple[str, str] | None = None  # (workload, image) whose own error the lead quotes
    # a tail read from a pod that keeps failing: when that pod first went down (its words
    # are the same at every restart, the tail holds only the last)
    down_since: datetime | None = None

    @property
    def key(self) -> str:
        return f"fact:{self.lead.key}"

    @property
    def title(self) -> str:
        return self.doc.title if self.doc is not None else self.lead.statement


def same_thread(a: Fact, b: Fact) -> bool:
    """Whether two facts concern the same pod, workload or object."""
    x, y = set(a.names()), set(b.names())
    if x & y:
        return True
    return any(p.startswith(q + "-") or q.startswith(p + "-") for p in x for q in y)


def began_after(ch: Fact, trouble: list[Fact]) -> bool:
    """Whether some of the subject's trouble began in the ten minutes after ``ch`` started."""
    t0 = ch.time
    return t0 is not None and any(
        s.time and t0 <= s.time <= t0 + timedelta(minutes=10) for s in trouble
    )


def hurt_after(ch: Fact, causes: list[Fact]) -> bool:
    """Whether the target of an injected fault itself failed in the half hour after it
    started (probes, saturation, restarts of the pods it acted on)."""
    t0 = ch.time
    return t0 is not None and any(
        c.time and t0 <= c.time <= t0 + timedelta(minutes=30) and same_thread(ch, c)
        for c in causes
        if c is not ch and c.severity in ("error", "warning")
    )


def timing(t: datetime | None, onset: datetime | None) -> float:
    if t is None or onset is None:
        return 1.0
    if t < onset - timedelta(minutes=15):
        return 0.5  # there before the problem began
    if t <= onset + timedelta(minutes=30):
        return 1.25
    return 1.0


def own_start(change: Fact, f: Fact) -> bool:
    """A workload starting is not a change that explains its own failure."""
    return change.detail.get("change") == "one-off workload" and same_thread(change, f)


def _requests_only(change: Fact) -> bool:
    """A rollout that changed resource requests and nothing else (``memory request 64Mi ->
    96Mi``): it can leave its own pods Pending, never break another workload's calls."""
    edits = [str(t) for t in change.detail.get("template_changes") or []]
    return bool(edits) and all(" request " in t for t in edits)


_NUM = re.compile(r"\d+(?:\.\d+)?")


def _words(f: Fact) -> list[str]:
    text = _NUM.sub("#", (f.message or f.quote or "").lower())
    return re.findall(r"[a-z#_]+", text)


def shares_a_phrase(a: Fact, b: Fact, size: int = 4) -> bool:
    """Whether the two messages share ``size`` words in a row (numbers as one word)."""
    wa, wb = _words(a), _words(b)
    if len(wa) < size or len(wb) < size:
        return False
    grams = {tuple(wb[i : i + size]) for i in range(len(wb) - size + 1)}
    return any(tuple(wa[i : i + size]) in grams for i in range(len(wa) - size + 1))


_LOGGED = (K.LOG_ERROR, K.LOG_WARNING, K.DEPENDENCY_FAILURE, K.CONFIG_ERROR, K.SATURATION)


def first_said(f: Fact, facts: list[Fact]) -> Fact:
    """``f`` as first said: when another reading of the same words by the same workload
    (its log template counted over every pod, where ``f`` is one pod's log) began earlier,
    ``f`` with that earlier start — a failure the old pods logged before a rollout is not
    triggered by the rollout."""
    if f.time is None or f.kind not in _LOGGED:
        return f
    earliest = f.time
    for o in facts:
        if (
            o is not f
            and o.time is not None
            and o.time < earliest
            and o.kind in _LOGGED
            and same_thread(o, f)
            and shares_a_phrase(o, f, 6)
        ):
            earliest = o.time
    return f if earliest == f.time else f.model_copy(update={"time": earliest})


def change_for(f: Fact, changes: list[Fact]) -> Fact | None:
    """The change (rollout, one-off job, reload) that happened shortly before ``f`` began:
    a change of ``f``'s own workload first (two workloads rolled out one after the other
    each explain their own pods), else the latest one."""
    if f.time is None:
        return None
    clock = card_for(f).has(Trait.CLOCK)
    best = None
    for c in changes:
        if c.time is None or own_start(c, f):
            continue
        if clock and not card_for(c).has(Trait.ACTS):
            continue  # a rollout sets no clock and ages no certificate; a time fault does
        if c.routine and config_behind(c, changes) is c:
            continue  # a rollout restart changed nothing that runs: it explains no failure
        aligned = c.time - timedelta(minutes=2) <= f.time <= c.time + timedelta(minutes=30)
        if not aligned:
            continue
        if c.detail.get("change") in ("rollout", "re-created") and not _touches(c, f):
            continue  # another workload's rollout triggers this failure only if it is called
        if f.reason in _PATH_FAILURES and f.kind == K.DEPENDENCY_FAILURE and _image_only(c):
            continue  # a caller's new build does not cut its path to a dependency
        if best is None:
            best = c
            continue
        mine, theirs = same_thread(c, f), same_thread(best, f)
        if (mine and not theirs) or (mine == theirs and best.time and c.time > best.time):
            best = c
    return config_behind(best, changes) if best is not None else None


# calls that fail on the way to a dependency (no answer, nothing listening, no address)
_PATH_FAILURES = ("timeout", "refused", "dns", "network")


def _image_only(change: Fact) -> bool:
    """Whether a rollout changed only images (its pod template's diff is known and names
    nothing else: no setting, port, command or resource)."""
    diffs = change.detail.get("template_changes") or []
    return (
        change.detail.get("change") == "rollout"
        and bool(diffs)
        and all(": image " in str(d) for d in diffs)
    )


def _touches(change: Fact, f: Fact) -> bool:
    """Whether a workload's rollout can be what set off ``f``: ``f`` is about that workload,
    or names it (a call to it failed, its pods are named), or ``f`` is a resource running
    out, which any caller's new behaviour (more connections, more load) can set off. A
    scheduling refusal, a missing object or a bad image of one workload is not set off by
    another's rollout, nor is a limit of the process itself (its disk, heap, threads)."""
    if same_thread(change, f):
        return True
    if f.kind == K.SATURATION:
        return not card_for(f).has(Trait.OWN_LIMIT)
    who = (change.service or "").lower()
    if not who:
        return True  # nothing says whose rollout it was: keep the timing's word
    said = " ".join([*f.names(), f.quote or "", f.message or ""]).lower()
    return who in said


def config_behind(change: Fact, changes: list[Fact]) -> Fact:
    """A restart that only rolled the same image (a config reload, ``rollout restart``) right
    after a ConfigMap its workload reads was edited: the edit is the change that matters."""
    if change.detail.get("change") != "rollout" or change.time is None:
        return change
    if change.detail.get("images") != change.detail.get("previous_images"):
        return change  # a new image: the rollout itself changed the code
    for c in changes:
        if c.detail.get("change") != "config" or c.time is None:
            continue
        readers = [str(r).lower() for r in c.detail.get("readers") or []]
        if (change.service or "").lower() in readers and (
            change.time - timedelta(minutes=15) <= c.time <= change.time
        ):
            return c
    return change


def order_symptoms(symptoms: list[Fact], reported: K | None) -> list[Fact]:
    """The reported kind first, then the cards' symptom order, errors first."""
    return sorted(
        symptoms, key=lambda s: (s.kind != reported, symptom_rank(s), s.severity != "error")
    )


def explained_by(
    c: Fact, relation: str, mine: list[Fact], linked: list[Fact], reported: K | None
) -> Fact | None:
    """The symptom cause ``c`` explains: one of the subject's, else one of a linked object on
    the same thread. A bare metric shift is taken only when nothing else is explained."""
    for pool in (mine, linked):
        for s in pool:
            if not can_explain(c, s) or s.kind == K.METRIC_SHIFT or s.severity == "info":
                continue  # a bare metric shift, an init container that completed: not trouble
            near = same_thread(c, s)
            if pool is mine:
                near = near or (s.focus and (c.focus or relation == links.LINKED))
            if near:
                return s
    return None


def build(
    causes: list[Fact],
    changes: list[Fact],
    rel: dict[str, str],
    mine: list[Fact],
    linked: list[Fact],
    *,
    reported: K | None,
    onset: datetime | None,
    reported_onset: datetime | None,
    docs: list[tuple[str, RunbookDoc]],
    reaches: Callable[[Fact], bool] | None = None,
    said: list[Fact] | None = None,
) -> list[Candidate]:
    """One scored candidate per cause fact, plus changes that precede a subject symptom.
    ``reaches``: whether the subject depends on what a change acted on (the data's path)."""
    matcher = DocMatcher([d for _, d in docs])
    said = said if said is not None else causes
    out: list[Candidate] = []
    for c in causes:
        sure = conclusive(c)
        if too_few(c):
            sure = False  # a probe fails a pod only after failureThreshold (3) in a row
        cand = Candidate(lead=c, relation=rel[c.key], conclusive=sure)
        cand.explains = explained_by(c, cand.relation, mine, linked, reported)
        cand.explains_subject = cand.explains is not None and cand.explains in mine
        score = specificity(c) * links.WEIGHT[cand.relation]
        score *= timing(c.time, onset) * SEVERITY_WEIGHT.get(c.severity, 0.5)
        if c.count > 1:
            score *= 1 + min(0.5, math.log10(c.count) / 4)
        if cand.explains is not None:
            score *= 1.4 if cand.explains in mine else 1.2
        elif reported is not None and can_explain(c, reported) and cand.relation == links.SUBJECT:
            score *= 1.15
        if reported is not None and cand.relation == links.SCOPE and reported != K.ERROR_RATE:
            # a namespace-wide question that says what is wrong ("pods pending in ns x"):
            # a cause of that symptom before causes of others
            score *= 1.3 if can_explain(c, reported) else 0.6
        if c.background:
            score *= 0.4
        if c.detail.get("alone_on"):
            score *= 1.25  # the one obstacle that, removed, lets the pod run somewhere
        # (when it was first said matters only when a change could have set it off)
        cand.change = change_for(first_said(c, said), changes) if changes else None
        if cand.change is not None:
            score *= 1.2
        best: tuple[float, str, RunbookDoc] | None = None
        for rid, doc in docs:
            st = matcher.strength(c, doc)
            if st > 0 and (best is None or st > best[0]):
                best = (st, rid, doc)
        if best is not None:
            cand.rid, cand.doc = best[1], best[2]
            score *= 1.15 + min(0.35, best[0] / 20)
        if reported_onset is not None and c.time is not None:
            lo, hi = reported_onset - timedelta(minutes=15), reported_onset + timedelta(minutes=30)
            cand.onset_aligned = lo <= c.time <= hi
        cand.score = round(score, 3)
        out.append(cand)
    for ch in changes:  # a change right before the subject's symptom
        if ch.time is None or ch.routine:
            continue
        t0 = ch.time
        # a change that is its own account of acting on its target (an injected fault):
        # what the target did after it counts as well as the subject's symptoms
        acted = card_for(ch).has(Trait.ACTS)
        relation = rel[ch.key]
        # an injected fault is put forward for the subject's own trouble: its symptoms, and
        # the errors it logs itself
        first = mine + [c for c in causes if rel[c.key] == links.SUBJECT] if acted else mine
        if relation in links.NOT_A_CAUSE:
            if not (acted and relation == links.UNRELATED):
                continue
            if not began_after(ch, first):
                continue
            if reaches is not None and reaches(ch):
                relation = links.LINKED  # the subject depends on its target, as the data shows
            elif hurt_after(ch, causes):
                relation = links.TIMED  # no path the data shows, only the timing and the damage
            else:
                continue
        pool = first + [c for c in causes if same_thread(ch, c)] if acted else mine
        after = [
            s
            for s in pool
            if s.time
            and t0 <= s.time <= t0 + timedelta(minutes=30)
            and not own_start(ch, s)
            and s.severity != "info"  # a Job's pod that completed: not trouble
        ]
        if first is not mine:  # the subject's trouble is what it is put forward for
            after = [s for s in after if s in first] + [s for s in after if s not in first]
        else:
            after.sort(key=lambda s: not same_thread(ch, s))  # its own workload's symptom first
        if _requests_only(ch):  # what a pod reserves changes where it runs, not what it does
            after = [s for s in after if same_thread(ch, s)]
        if after:
            out.append(
                Candidate(
                    lead=ch,
                    relation=relation,
                    explains=after[0],
                    explains_subject=True,
                    conclusive=acted,
                    score=round((3.0 if acted else 1.6) * links.WEIGHT[relation], 3),
                )
            )
    return out
