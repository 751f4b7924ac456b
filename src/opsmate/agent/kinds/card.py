"""A failure-mode card: everything the engine knows about one way things break.

A card is data. It names the fact kind it reads (:class:`~opsmate.agent.observe.facts.
FactKind`) and, for a failure mode finer than the kind, the fact reasons and words that
select it; its role (a symptom the user sees, a cause that explains symptoms, a change,
context); which symptoms it explains and which deeper causes can explain it in turn;
whether the system's own account confirms it on its own (``conclusive``); how specific it
is; how it is said (``phrase``); the read-only check and the mitigation a person decides
on; the runbook topics; the question words that make it a candidate and the reads that
confirm it or rule it out; and where it comes from in the public catalogs of failures.

Every phase reads cards: the judge (roles, what explains what, deeper causes,
calibration), the plan (what a candidate needs read), the report (phrases, next steps,
runbook topics). Adding a failure mode is one card (plus an analyzer when it needs a new
fact, and a test).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from opsmate.agent.observe.facts import Fact, FactKind


class Role(StrEnum):
    """What a kind of observation is in the cause/symptom model."""

    SYMPTOM = "symptom"  # what the user sees: never a root cause, what one must explain
    CAUSE = "cause"  # what can explain a symptom
    CHANGE = "change"  # a rollout, a config edit, a one-off workload: explains what follows
    CONTEXT = "context"  # neither: background for a person


class Trait(StrEnum):
    """How the walk and the cascade rules treat facts of a card."""

    DOWN = "down"  # the component itself is down (crash loop, exits, not ready, pending)
    SHIFT = "shift"  # a request series moved (errors, latency)
    QUIET = "quiet"  # never marks a component abnormal by itself
    CALLER_SIDE = "caller_side"  # a failing call out: how a deeper failure reached a caller
    CASCADE = "cascade"  # an error of a cascade: the first of several is the domino
    REACHING = "reaching"  # names what it failed on: a link towards the dependency
    STUCK = "stuck"  # nothing fails, the state is the evidence (init running, suspended)
    ACTS = "acts"  # a change that acts on its target (an injected fault): the cause of what
    # the target, or what calls it, did after it began
    OWN_LIMIT = "own_limit"  # a limit of the process itself (its disk, memory, threads,
    # files): another workload's rollout does not set it off (a caller's new load can set off
    # a connection or request limit)
    CLOCK = "clock"  # set off by time (a clock that drifted, a validity that ran out), not
    # by a rollout or a configuration edit: only an injected fault is its trigger
    WAITS = "waits"  # a client-side limit that fills when what it calls does not answer (a
    # connection pool): a failure of the callee's own, beside a failing call to it, is its why
    EVICTS = "evicts"  # the system removed the pod (preemption): what its replacement then
    # suffers (cannot be scheduled) follows from it


@dataclass(frozen=True)
class Read:
    """A read-only call that confirms a candidate or rules it out (a tool and its
    arguments; ``{ns}`` is the namespace of what the fact is about (else the task's),
    ``{obj_ns}`` the namespace of the first object the fact names (a webhook's Service in
    another namespace), falling back to ``{ns}``; ``{target}`` the workload the fact names
    as what it failed on; ``{pod}`` and ``{container}`` the pod and the container the fact
    is about (a read with a slot that has no value is skipped))."""

    tool: str
    args: tuple[tuple[str, str], ...] = ()
    why: str = ""

    def arguments(
        self,
        namespace: str | None,
        obj_namespace: str | None = None,
        target: str | None = None,
        *,
        pod: str | None = None,
        container: str | None = None,
    ) -> dict[str, str]:
        out: dict[str, str] = {}
        values = {"{ns}": namespace, "{obj_ns}": obj_namespace or namespace, "{target}": target,
                  "{pod}": pod, "{container}": container}  # fmt: skip
        for k, v in self.args:
            for slot, value in values.items():
                if slot in v:
                    if not value:
                        break
                    v = v.replace(slot, value)
            else:
                out[k] = v
        return out


def read(tool: str, why: str = "", **args: str) -> Read:
    """``read("list_objects", "policies that may drop the calls", kind="NetworkPolicy",
    namespace="{ns}")``."""
    return Read(tool, tuple(sorted(args.items())), why)


@dataclass(frozen=True)
class Card:
    """One failure mode (see the module doc). ``reasons`` or ``words`` select it among the
    facts of ``fact`` (either suffices); a card with neither is the kind's base card."""

    id: str
    title: str
    fact: FactKind
    role: Role
    reasons: tuple[str, ...] = ()  # fact.reason values (case-insensitive) that select it
    words: str = ""  # a regex over the fact's reason, quote and message that selects it
    explains: frozenset[FactKind] = frozenset()  # symptom kinds it can explain
    deeper: frozenset[FactKind] = frozenset()  # cause kinds that can explain it in turn
    # finer failure modes that can explain it in turn (ids of cards whose kind is too general
    # to list in ``deeper``: the failing archiver that filled a disk)
    deeper_cards: tuple[str, ...] = ()
    conclusive: bool = False  # the system's own account: confirmed on its own
    specificity: float = 1.0  # how precisely it explains (ties break on timing, subject)
    traits: frozenset[Trait] = frozenset()
    at_least: int = 1  # occurrences before it marks a component abnormal
    symptom_rank: int | None = None  # symptoms: the order they are named in (0 first)
    shows_rank: int | None = None  # how tellingly it shows a component's own failure
    phrase: str = ""  # symptoms: "is crash-looping"; causes: a noun ("out-of-memory kills")
    check: str = ""  # the read-only check a person runs (templates: {ns} {obj} {workload} {target})
    mitigation: str = ""  # what a person decides on
    topics: tuple[str, ...] = ()  # words of a runbook's title / tags about it
    asks: str = ""  # a regex over the question: the symptom words that make it a candidate
    reads: tuple[Read, ...] = ()  # what confirms it or rules it out, most telling first
    evidence: str = ""  # where the evidence lives (docs)
    confirms: str = ""  # what confirms it (docs, the report's "what would confirm it")
    rules_out: str = ""  # what rules it out (docs, the report's candidates ruled out)
    catalog: tuple[str, ...] = ()  # the public catalogs that list it
    needs_deeper: bool = False  # a cause that is itself an effect: never `complete` alone
    # a regex over what is seen (the question, the errors logged, the failed calls): the
    # failure mode shows itself only so (a missing TLS Secret: certificate errors); present
    # but unseen, it is a latent misconfiguration, not the cause of what is asked about
    seen_as: str = ""
    # the products whose own error this is (as their images are named: ``redis``, ``valkey``):
    # a client that quotes it is answered by the workload that runs one of them
    software: tuple[str, ...] = ()
    # its software writes it at an informational level (PostgreSQL's ``log_lock_waits`` lines
    # are LOG): a line its words select is a warning whatever level it was given
    any_level: bool = False
    example: tuple[str, str] = ("", "")  # (reason, text) of a fact it selects (tests, docs)
    _re: re.Pattern[str] | None = field(default=None, repr=False, compare=False)
    _lower: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.words:
            object.__setattr__(self, "_re", re.compile(self.words, re.I))
        object.__setattr__(self, "_lower", frozenset(r.lower() for r in self.reasons))

    @property
    def base(self) -> bool:
        """The kind's base card (selects every fact of its kind no finer card takes)."""
        return not self.reasons and not self.words

    def selects(self, f: Fact) -> bool:
        """Whether this (finer) card is the failure mode of fact ``f``."""
        if f.kind != self.fact:
            return False
        if self.reasons and (f.reason or "").lower() in self._lower:
            return True
        if self._re is not None:
            return bool(self._re.search(f"{f.reason or ''} {f.quote or ''} {f.message or ''}"))
        return False

    def has(self, trait: Trait) -> bool:
        return trait in self.traits

    def can_explain(self, symptom: FactKind) -> bool:
        return symptom in self.explains
