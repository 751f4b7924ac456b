"""The rule registry: small declarative rules that turn observations into checks.

A rule says which fact kinds it reacts to, at which :class:`~.tiers.Tier` its checks
run, and a function that, for one fact, proposes read-only checks (tool + arguments +
why). Result rules react to a tool's envelope instead (a query that is not available,
a summary cut short). Rules never run anything: the planner queues what they propose
and the executor decides. One module per family of rules lives in
:mod:`opsmate.agent.plan.rules`; adding a rule is one function plus one unit test.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from opsmate.agent.intake.subject import Subject
from opsmate.agent.kinds import by_id, seen
from opsmate.agent.observe import depgraph
from opsmate.agent.observe.facts import Fact, FactKind
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.plan.tiers import Tier
from opsmate.tools.base import ToolResult


@dataclass(frozen=True)
class Check:
    """A proposed read-only call."""

    tool: str
    args: dict[str, Any]
    reason: str
    tier: Tier | None = None  # less urgent than the rule's own tier (never more)


@dataclass
class RuleContext:
    """What a rule may read: the subject, the default namespace, the graph, the tools."""

    subject: Subject = field(default_factory=Subject)
    namespace: str | None = None
    graph: ObjectGraph = field(default_factory=ObjectGraph)
    tools: frozenset[str] = frozenset()
    recorded: list[Any] | None = None  # recorded PromQL queries when replaying a bundle
    facts: list[Fact] = field(default_factory=list)  # every fact so far
    services: list[str] = field(default_factory=list)  # services in focus
    runbook_text: str = ""  # the text of the runbooks already known (lower-case)
    window_from: datetime | None = None  # the start of the window the question is about
    question: str = ""  # what was asked
    _deps: depgraph.DependencyGraph | None = field(default=None, init=False, repr=False)

    def deps(self) -> depgraph.DependencyGraph:
        """The dependency graph the object graph and the facts show (built once per context:
        every rule that reacts to the same step reads the same one)."""
        if self._deps is None:
            self._deps = depgraph.build(self.graph, self.facts)
        return self._deps

    def shows(self, card_id: str) -> bool:
        """Whether the question or the errors read so far show the card's failure mode the
        way it shows itself (its ``seen_as``): whether reading for it is worth a step."""
        return seen(by_id(card_id), self.question, self.facts)

    def ns(self, namespace: str | None = None) -> dict[str, Any]:
        """``{"namespace": ...}`` for a call: the object's own, else the task's, else none."""
        value = namespace or self.subject.namespace or self.namespace
        return {"namespace": value} if value else {}


FactProposer = Callable[[Fact, RuleContext], Iterable[Check]]
ResultProposer = Callable[[ToolResult, RuleContext], Iterable[Check]]


@dataclass(frozen=True)
class Rule:
    name: str
    tier: Tier
    on: frozenset[FactKind] = frozenset()  # fact kinds it reacts to
    tools: frozenset[str] = frozenset()  # or: tool results it reacts to
    fact_fn: FactProposer | None = None
    result_fn: ResultProposer | None = None
    doc: str = ""


_RULES: list[Rule] = []
_loaded = False


def fact_rule(name: str, tier: Tier, *on: FactKind) -> Callable[[FactProposer], FactProposer]:
    """Register ``fn(fact, ctx) -> checks`` for facts of the kinds ``on``."""

    def deco(fn: FactProposer) -> FactProposer:
        _add(Rule(name, tier, on=frozenset(on), fact_fn=fn, doc=(fn.__doc__ or "").strip()))
        return fn

    return deco


def result_rule(name: str, tier: Tier, *tools: str) -> Callable[[ResultProposer], ResultProposer]:
    """Register ``fn(result, ctx) -> checks`` for results of the named tools."""

    def deco(fn: ResultProposer) -> ResultProposer:
        _add(Rule(name, tier, tools=frozenset(tools), result_fn=fn, doc=(fn.__doc__ or "").strip()))
        return fn

    return deco


def _add(rule: Rule) -> None:
    if all(r.name != rule.name for r in _RULES):
        _RULES.append(rule)


def rules() -> list[Rule]:
    """Every registered rule (the rule modules are imported on first use)."""
    global _loaded
    if not _loaded:
        from opsmate.agent.plan import rules as pkg

        for mod in pkgutil.iter_modules(pkg.__path__):
            importlib.import_module(f"{pkg.__name__}.{mod.name}")
        _loaded = True
    return list(_RULES)


def rule(name: str) -> Rule:
    """The registered rule called ``name`` (KeyError when there is none)."""
    for r in rules():
        if r.name == name:
            return r
    raise KeyError(name)


@dataclass(frozen=True)
class Proposal:
    check: Check
    rule: str
    tier: Tier
    trigger: str | None  # the E id of the fact or result that prompted it
    fact: str | None = None  # the key of the fact that prompted it (fact rules)


# what happens once (a kill, an exit): without a later occurrence it is over when it happened;
# a state said "since" a time (a node NotReady, an alert firing) may still hold
_MOMENTARY = frozenset({FactKind.OOM_KILLED, FactKind.CONTAINER_EXIT, FactKind.EVICTED})


def _over_before(f: Fact, window_from: datetime | None) -> bool:
    if window_from is None:
        return False
    if f.last_time is not None:
        return f.last_time < window_from
    return f.kind in _MOMENTARY and f.time is not None and f.time < window_from


def propose(
    new_facts: Iterable[Fact], result: ToolResult | None, ctx: RuleContext
) -> list[Proposal]:
    """Every check the rules propose for ``new_facts`` and ``result``."""
    out: list[Proposal] = []
    # what was over before the window asked about began (a container OOM-killed hours
    # earlier) is context: nothing is read to explain it
    facts = [f for f in new_facts if not _over_before(f, ctx.window_from)]
    for r in rules():
        if r.result_fn is not None and result is not None and result.tool in r.tools:
            trigger = None
            out += [
                Proposal(c, r.name, max(r.tier, c.tier or r.tier), trigger)
                for c in r.result_fn(result, ctx)
            ]
        if r.fact_fn is not None:
            for f in facts:
                if f.kind in r.on:
                    ev = next((e for e in f.evidence if e.startswith("E")), None)
                    out += [
                        Proposal(c, r.name, max(r.tier, c.tier or r.tier), ev, f.key)
                        for c in r.fact_fn(f, ctx)
                    ]
    return out
