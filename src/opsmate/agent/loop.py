"""The investigation loop: plan, call through the executor, record, until a stop condition.

Stop conditions, checked before every step: cancelled, the wall-clock deadline,
the step budget, the token budget; and after every step (without a model) a root
cause supported by evidence once the baseline survey is done; with a model, its
``finish``. Reaching a budget never raises and never loses a result: the report is
assembled from what is known, with what was not checked in ``unfinished``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from opsmate.agent.assemble import assemble_report
from opsmate.agent.context import ContextBuilder, Exchange, fence
from opsmate.agent.events import (
    EventSink,
    ModelToken,
    Notice,
    ReportReady,
    StateChanged,
    StepPlanned,
    ToolCallFinished,
    ToolCallStarted,
    safe_emit,
)
from opsmate.agent.evidence import EvidenceStore, summarize
from opsmate.agent.followup import FollowUpContext
from opsmate.agent.judge.analysis import analyse
from opsmate.agent.judge.causality import Role, role
from opsmate.agent.model_steps import ask_model, narrative_schema, next_action_schema
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, FactKind
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.observe.registry import observe, observe_graph
from opsmate.agent.plan import survey
from opsmate.agent.plan.planner import Planner, Recorded
from opsmate.agent.plan.registry import RuleContext, propose
from opsmate.agent.plan.tiers import Tier
from opsmate.agent.report import Report, render_markdown
from opsmate.agent.runbook_plan import TIER_ONE, RunbookPlanning, hits_from
from opsmate.agent.runbooks import (
    RunbookDoc,
    RunbookLibrary,
)
from opsmate.agent.state import ActionTried, PendingCheck, TaskState
from opsmate.agent.subject import names_mentioned
from opsmate.knowledge.types import Retriever
from opsmate.llm.base import ChatModel
from opsmate.tools.executor import Executor


@dataclass
class Limits:
    max_steps: int = 12
    max_tokens: int = 60_000
    timeout_s: float = 300.0


@dataclass
class Engine:
    """The long-lived parts one session's investigations share."""

    executor: Executor
    store: EvidenceStore
    library: RunbookLibrary
    retriever: Retriever | None = None
    model: ChatModel | None = None
    builder: ContextBuilder | None = None
    recorded: list[Recorded] | None = None
    namespace: str | None = None
    answer_tokens: int = 512
    docs: dict[str, tuple[str, RunbookDoc]] = field(default_factory=dict)  # source -> (R id, doc)
    planned: set[str] = field(default_factory=set)  # sources whose checks were queued
    graph: ObjectGraph = field(default_factory=ObjectGraph)  # every object seen this session

    _describe: list[dict[str, Any]] | None = None

    @property
    def tool_names(self) -> list[str]:
        return self.executor.registry.names()

    def describe(self) -> list[dict[str, Any]]:
        """The registry's tool descriptions (computed once: the tool list never changes)."""
        if self._describe is None:
            self._describe = self.executor.registry.describe()
        return self._describe


class Investigation:
    """One question (first or follow-up) investigated to a report."""

    def __init__(
        self,
        engine: Engine,
        state: TaskState,
        planner: Planner,
        exchanges: list[Exchange],
        limits: Limits,
        *,
        on_event: EventSink | None = None,
        cancelled: threading.Event | None = None,
        follow_up: FollowUpContext | None = None,
    ) -> None:
        self.e = engine
        self.follow_up = follow_up
        self.state = state
        self.planner = planner
        self.exchanges = exchanges
        self.limits = limits
        self.on_event = on_event
        self.cancelled = cancelled or threading.Event()
        self.tokens = 0
        self.steps = 0
        self._model_turn = False  # the last step was the model's choice
        self._model_off = False  # the model's token budget is spent: the plan alone goes on
        self._model_done = False  # the model said finish while checks remained
        self.notes: list[str] = []
        self.ctx = ObserveContext(
            subject=state.subject,
            focus=[s.lower() for s in state.constraints.services],
            onset=state.onset,
            window_from=state.constraints.window_from,
            window_to=state.constraints.window_to,
            graph=engine.graph,
            notes=self.notes,
        )
        self.rb = RunbookPlanning(engine, state, planner, self.notes)
        if not engine.graph.objects and engine.store.results:
            self._rebuild_graph()

    # -- public ------------------------------------------------------------------------
    def run(self, question: str) -> Report:
        started = time.monotonic()
        self._started = started
        deadline = started + self.limits.timeout_s
        self.e.executor.deadline = deadline
        stopped_by = "done"
        try:
            self.rb.consult(question)
            survey.baseline(self.state, self.planner, self.e.namespace)
            self._state_changed()
            while True:
                if self.cancelled.is_set():
                    stopped_by = "cancelled"
                    break
                if time.monotonic() >= deadline:
                    stopped_by = "timeout"
                    break
                if self.steps >= self.limits.max_steps:
                    unfinished = self.state.pending or self.e.model is not None
                    stopped_by = "max_steps" if unfinished else "done"
                    break
                if self.tokens >= self.limits.max_tokens and not self._model_off:
                    # the model's part ends; the deterministic checks cost no tokens and go on
                    self._model_off = True
                    self._notice("warning", "the model token budget ran out; the plan goes on")
                check, why = self._choose(deadline)
                if why == "token_budget":
                    self._model_off = True
                    continue
                if why in ("timeout", "cancelled"):
                    stopped_by = why
                    break
                if check is None:
                    if self._model_off:
                        stopped_by = "token_budget"
                    break
                self._run_check(check)
                if (self.e.model is None or self._model_off) and self._settled():
                    if self._model_off:
                        stopped_by = "token_budget"
                    break
        except Exception as exc:  # never lose what was found: report it as partial
            stopped_by = "error"
            self.notes.append(
                f"internal error during the investigation: {type(exc).__name__}: {exc}"
            )
        return self._finish(question, started, stopped_by)

    # -- choosing --------------------------------------------------------------------------
    def _must_look(self) -> bool:
        """Checks that no model may skip: the survey, what the evidence points at, and the
        checks of the runbook about the root cause found so far."""
        if any(p.essential or p.priority <= Tier.EXPLAIN for p in self.state.pending):
            return True
        rids = {p.runbook for p in self.state.pending if p.runbook}
        return bool(rids) and self._root_rid() in rids

    def _root_rid(self) -> str | None:
        """The R id of the runbook about the root cause the evidence supports so far."""
        docs = self.rb.doc_list()
        an = analyse(self.state.model_copy(deep=True), self.e.store, docs, self.e.graph)
        return an.root.rid if an.root is not None else None

    def _tier_one(self) -> bool:
        return any(p.priority < TIER_ONE for p in self.state.pending)

    def _choose(self, deadline: float) -> tuple[PendingCheck | None, str]:
        """Without a model: the plan. With one: the plan's first two checks; then, while
        checks the evidence points at or the survey remain, the plan and the model take
        turns; after that the model's proposals. An unusable or repeated proposal falls
        back to the plan (the planner keeps steps in reserve for the survey)."""
        left = self.limits.max_steps - self.steps
        opening = self.steps < 2 and self._tier_one()  # the first look is the plan's
        if self._model_done:  # after the model's "finish": only what must still be looked at
            return (self.planner.next(left), "plan") if self._must_look() else (None, "finish")
        if (
            self.e.model is None
            or self._model_off
            or opening
            or (self._tier_one() and self._model_turn)
        ):
            self._model_turn = False
            return self.planner.next(left), "plan"
        self._model_turn = True
        for _ in range(3):  # an unusable or repeated proposal: fall back to the plan, or ask again
            check, why = self._ask_model_for_action(deadline)
            if why == "finish" and self._must_look():
                # the model has said its piece; what the evidence points at still runs
                self._model_done = True
                self._notice(
                    "info", "the model would finish; the checks the evidence points at run first"
                )
                return self.planner.next(left), "plan"
            if why in ("timeout", "cancelled", "finish", "token_budget"):
                return None, why
            if check is not None:
                return check, "model"
            fallback = self.planner.next(left)
            if fallback is not None:
                return fallback, "plan"
        return None, "plan"

    def _ask_model_for_action(self, deadline: float) -> tuple[PendingCheck | None, str]:
        assert self.e.model is not None and self.e.builder is not None
        describe = self.e.describe()
        ids = [e.id for e in self.e.store.evidence] + [r.id for r in self.e.store.runbooks]
        schema = next_action_schema(describe, ids)
        pending = "\n".join(
            f"- {p.tool} {json.dumps(p.args, ensure_ascii=False)} ({p.reason})"
            for p in self.state.pending[:5]
        )
        request = (
            "Choose the next read-only tool call that best tests the open hypotheses, or finish "
            "when the evidence is enough. The suggested checks not yet run are in the data "
            "below. You may also add up to 3 facts about the latest result, citing its ids."
        )
        messages, _ = self.e.builder.build(
            self.state,
            self.exchanges,
            request,
            data=pending or "- none",
            data_label="suggested checks not yet run",
        )
        answer = ask_model(
            self.e.model,
            messages,
            schema,
            max_tokens=self.e.answer_tokens,
            deadline=deadline,
            cancelled=self.cancelled,
            on_token=self._token_sink("next_action"),
        )
        self.tokens += answer.usage.total
        if answer.error in ("timeout", "cancelled"):
            return None, answer.error
        if self.tokens >= self.limits.max_tokens:
            return None, "token_budget"
        if answer.value is None:
            self._notice(
                "warning", f"the model's answer was not usable ({answer.error}); using the plan"
            )
            return None, "plan"
        value = answer.value
        self._model_facts(value.get("facts") or [])
        if value.get("action") == "finish":
            return None, "finish"
        tool, args = str(value.get("tool")), dict(value.get("args") or {})
        if self.planner.is_done(tool, args):
            self._notice("info", f"the model proposed a call already made ({tool}); using the plan")
            return None, "plan"
        return PendingCheck(
            tool=tool, args=args, reason=str(value.get("reason") or "")[:300], source="model"
        ), "model"

    def _model_facts(self, items: list[dict[str, Any]]) -> None:
        for it in items[:3]:
            ev = [i for i in it.get("evidence") or [] if self.e.store.known(i)]
            text = str(it.get("statement") or "").strip()
            if not ev or not text:
                continue
            text = self.e.store.clean(text, 300)
            self.state.upsert_fact(
                Fact(
                    key=f"model:{text[:60].lower()}",
                    statement=text,
                    evidence=ev,
                    kind=FactKind.MODEL_NOTE,
                )
            )

    # -- running ------------------------------------------------------------------------------
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
            self.rb.add_docs(hits_from(result.data.get("hits") or []), base_priority=45, max_new=1)
        self._react(result, new)
        if any(role(f.kind) in (Role.CAUSE, Role.CHANGE) for f in new):
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
        if found:
            subject.names.extend(found)
            self.notes.append(f"the question's subject read as {', '.join(found)}")

    def _react(self, result: Any, new: list[Fact]) -> None:
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
        )
        for p in propose(new, result.full(), rctx):
            self.planner.add(
                PendingCheck(
                    tool=p.check.tool,
                    args=dict(p.check.args),
                    reason=p.check.reason,
                    source="rule",
                    priority=int(p.tier),
                    trigger=p.trigger,
                )
            )

    def _rebuild_graph(self) -> None:
        """A resumed session: re-read the stored results into the object graph."""
        for ev in self.e.store.evidence:
            res = self.e.store.results.get(ev.id)
            if res is not None:
                self.ctx.eid = ev.id
                observe(res, self.ctx)

    def _settled(self) -> bool:
        """Without a model: stop once the survey is done, nothing the evidence points at
        is pending, and a root cause is supported."""
        if any(p.essential or p.priority <= Tier.EXPLAIN for p in self.state.pending):
            return False
        docs = self.rb.doc_list()
        an = analyse(self.state.model_copy(deep=True), self.e.store, docs, self.e.graph)
        if an.root is None:
            return False
        # the checks of the runbook about the root cause say what else to confirm: run them
        return not (an.root.rid and any(p.runbook == an.root.rid for p in self.state.pending))

    # -- closing -------------------------------------------------------------------------------
    def _finish(self, question: str, started: float, stopped_by: str) -> Report:
        docs = self.rb.doc_list()
        an = analyse(self.state, self.e.store, docs, self.e.graph)
        self.state.hypotheses = an.hypotheses
        self._state_changed()  # hypotheses are settled here
        narrative = None
        if (
            self.e.model is not None
            and not self._model_off
            and stopped_by
            not in (
                "cancelled",
                "timeout",
                "token_budget",
                "error",
            )
        ):
            narrative = self._ask_narrative(an.root_statement, started)
        report = assemble_report(
            question=question,
            state=self.state,
            store=self.e.store,
            analysis=an,
            docs=docs,
            executor=self.e.executor,
            planner=self.planner,
            stopped_by=stopped_by,
            steps=self.steps,
            max_steps=self.limits.max_steps,
            tokens=self.tokens,
            seconds=time.monotonic() - started,
            notes=[*self.state.notes, *self.notes],
            narrative=narrative,
        )
        if self.follow_up is not None:  # a follow-up leads with what was asked
            report.follow_up = self.follow_up.answer(
                question, self.state, report, self.e.store.clean
            )
            report.summary = self.e.store.clean(report.follow_up.answer, 1200)
        safe_emit(self.on_event, ReportReady(report, render_markdown(report)))
        return report

    def _ask_narrative(self, root: str | None, started: float) -> dict[str, Any] | None:
        assert self.e.model is not None and self.e.builder is not None
        remaining = self.limits.timeout_s - (time.monotonic() - started)
        if remaining <= 0.5 or self.tokens >= self.limits.max_tokens:
            return None
        ids = [e.id for e in self.e.store.evidence] + [r.id for r in self.e.store.runbooks]
        request = (
            "Write the report narrative: a two or three sentence summary for the on-call engineer, "
            "and the root cause only if the evidence supports it, citing ids. "
            + (
                "The deterministic analysis found the root cause given in the data below."
                if root
                else "The deterministic analysis found no supported root cause."
            )
        )
        messages, _ = self.e.builder.build(
            self.state,
            self.exchanges,
            request,
            data=root or "",
            data_label="root cause found by the deterministic analysis",
        )
        answer = ask_model(
            self.e.model,
            messages,
            narrative_schema(ids),
            max_tokens=self.e.answer_tokens,
            deadline=time.monotonic() + remaining,
            cancelled=self.cancelled,
            on_token=self._token_sink("narrative"),
        )
        self.tokens += answer.usage.total
        if answer.value is None:
            if answer.error not in (None, "cancelled"):
                self.notes.append(f"model narrative not used ({answer.error})")
            return None
        return answer.value

    def _notice(self, level: str, message: str) -> None:
        self.notes.append(message)
        safe_emit(self.on_event, Notice(level, message))  # type: ignore[arg-type]

    def _state_changed(self) -> None:
        s = self.state
        started = getattr(self, "_started", None)
        safe_emit(
            self.on_event,
            StateChanged(
                s.render(),
                len(s.facts),
                len(s.hypotheses),
                len(s.pending),
                steps=self.steps,
                max_steps=self.limits.max_steps,
                tokens=self.tokens,
                seconds=round(time.monotonic() - started, 3) if started is not None else 0.0,
            ),
        )

    def _token_sink(self, purpose: str) -> Callable[[str], None]:
        """Forward streamed model text as ModelToken events until the ask is cancelled."""

        def sink(text: str) -> None:
            if not self.cancelled.is_set():
                safe_emit(self.on_event, ModelToken(text, purpose))

        return sink
