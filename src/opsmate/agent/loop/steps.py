"""One step of an investigation: run a check through the executor and digest its result.

The result is stored as evidence, read by the analyzers into facts (and the object
graph), the rules propose what to look at next, and the transcript, the task state and
the model's exchanges record what happened. Mixed into
:class:`~opsmate.agent.loop.investigation.Investigation`.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from opsmate.agent.evidence import summarize
from opsmate.agent.intake.names import not_guessed
from opsmate.agent.intake.question import said_healthy
from opsmate.agent.intake.subject import Subject, names_mentioned
from opsmate.agent.judge.causality import Role, role
from opsmate.agent.loop.engine import Engine, Limits
from opsmate.agent.loop.events import (
    EventSink,
    StepPlanned,
    ToolCallFinished,
    ToolCallStarted,
    safe_emit,
)
from opsmate.agent.model.context import Exchange, fence
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.registry import observe, observe_graph
from opsmate.agent.plan.hold import hold, release, unrelated_facts
from opsmate.agent.plan.planner import Planner
from opsmate.agent.plan.registry import RuleContext, propose
from opsmate.agent.runbooks.plan import RunbookPlanning, hits_from
from opsmate.agent.state import ActionTried, PendingCheck, TaskState
from opsmate.records.payloads import RunbooksPayload


class Steps:
    """Running checks and digesting results (the attributes are the Investigation's)."""

    e: Engine
    state: TaskState
    planner: Planner
    exchanges: list[Exchange]
    limits: Limits
    on_event: EventSink | None
    cancelled: threading.Event
    ctx: ObserveContext
    rb: RunbookPlanning
    notes: list[str]
    steps: int

    def _state_changed(self) -> None:  # the Investigation's own
        raise NotImplementedError

    def _run_check(self, check: PendingCheck) -> None:
        self.steps += 1
        ex = self.e.executor
        predicted = f"{ex.call_prefix}_{len(ex.calls) + 1:03d}"
        safe_emit(
            self.on_event,
            StepPlanned(self.steps, check.tool, dict(check.args), check.reason, check.source),
        )
        safe_emit(
            self.on_event, ToolCallStarted(self.steps, predicted, check.tool, dict(check.args))
        )
        result = ex.call(check.tool, check.args)
        self.planner.mark_done(
            check.tool, check.args, result.complete and result.status in ("success", "no_data")
        )
        eid = self.e.store.add_result(result)
        new = self._observe(result, eid)
        if result.tool == "search_runbooks" and result.status in ("success", "partial"):
            found = result.payload_as(RunbooksPayload)
            hits = hits_from(found.hits if found else [])
            self.rb.add_docs(hits, base_priority=45, max_new=1)
        # a survey read that found nothing hands its reserved step to what it prompts
        # (the logs under the workload's own name when none are under the service's)
        self._react(result, new, essential=check.essential and result.status == "no_data")
        if any(role(f) in (Role.CAUSE, Role.CHANGE) for f in new):
            self.rb.plan_matching_doc()
        line = (
            summarize(result).splitlines()[0]
            if eid
            else (result.error.message if result.error else result.status)
        )
        rejected = result.error.message if result.status == "rejected" and result.error else None
        self.state.actions.append(
            ActionTried(
                step=len(self.state.actions) + 1,
                call_id=result.call_id,
                tool=result.tool,
                args=dict(check.args),
                status=result.status,
                outcome=self.e.store.clean(line, 200),
                evidence_id=eid,
                source=check.source,
                reason=check.reason,
                rejected_reason=rejected,
            )
        )
        label = f"id={eid or '-'} tool={result.tool} call={result.call_id} status={result.status}"
        body = summarize(result) if eid else (result.error.message if result.error else "")
        self.exchanges.append(
            Exchange(
                action=json.dumps(
                    {"action": "call_tool", "tool": check.tool, "args": check.args},
                    ensure_ascii=False,
                ),
                result=fence(label, self.e.store.clean(body, 2400)),
            )
        )
        del self.exchanges[:-50]
        safe_emit(
            self.on_event,
            ToolCallFinished(
                self.steps,
                result.call_id,
                result.tool,
                result.status,
                result.elapsed_ms,
                self.e.store.clean(line, 200),
                eid,
                rejected,
                result.error.code if result.error else None,
            ),
        )
        self._state_changed()

    def _observe(self, result: Any, eid: str | None) -> list[Fact]:
        """Facts of one result (and of the object graph it extended) that are new."""
        if not eid:
            return []
        self.ctx.eid = eid
        facts = observe(result.full(), self.ctx) + observe_graph(self.ctx)
        self._late_subject()
        return [f for f in facts if self.state.upsert_fact(f)]

    def _late_subject(self) -> None:
        """A question that names its subject only in words ("the nightly revenue report"):
        the objects seen so far whose every name part it says become the subject."""
        subject = self.state.subject
        if subject.names or not self.state.questions:
            return
        seen = [n for objs in self.e.graph.objects.values() for (_, n) in objs]
        seen += [s for s in self.state.constraints.services]
        found = names_mentioned(self.state.questions[0], seen)
        # said only as a guess, or said to be healthy ("the web UI works fine"): not the subject
        healthy = said_healthy(self.state.questions[0])
        suspects = Subject(names=[*subject.suspects, *healthy])
        found = [
            n
            for n in not_guessed(found, subject.suspects)
            if not suspects.matches(n) and not healthy & set(n.split("-"))
        ]
        if found:
            subject.names.extend(found)
            self.notes.append(f"the question's subject read as {', '.join(found)}")

    def _react(self, result: Any, new: list[Fact], essential: bool = False) -> None:
        """Queue what the rules propose for the new facts and the result."""
        rctx = RuleContext(
            subject=self.state.subject,
            namespace=self.e.namespace,
            graph=self.e.graph,
            tools=frozenset(self.e.tool_names),
            recorded=self.e.recorded,
            facts=self.state.facts,
            services=list(self.state.constraints.services),
            runbook_text=" ".join(
                self.e.store.runbook_text.get(rid, "") for rid, _ in self.e.docs.values()
            ).lower(),
            window_from=self.state.constraints.window_from,
            question=" ".join([self.state.goal, *self.state.questions]),
        )
        unrelated = unrelated_facts(
            self.state.facts,
            self.state.subject,
            self.e.graph,
            list(self.state.constraints.services),
        )
        release(self.state.pending, unrelated)
        for p in propose(new, result.full(), rctx):
            check = PendingCheck(
                tool=p.check.tool,
                args=dict(p.check.args),
                reason=p.check.reason,
                source="rule",
                priority=int(p.tier),
                trigger=p.trigger,
                trigger_fact=p.fact,
                rule=p.rule,
                essential=essential and p.fact is None,
            )
            self.planner.add(hold(check, unrelated))

    def _rebuild_graph(self) -> None:
        """A resumed session: re-read the stored results into the object graph."""
        for ev in self.e.store.evidence:
            res = self.e.store.results.get(ev.id)
            if res is not None:
                self.ctx.eid = ev.id
                observe(res, self.ctx)
