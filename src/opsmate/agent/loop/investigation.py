"""The investigation loop: plan, call through the executor, record, until a stop condition.

The loop itself is here (choosing the next check, deciding when to stop, closing with a
report); running one step is :mod:`opsmate.agent.loop.steps`, the model's turns
:mod:`opsmate.agent.model.turns`, the shared engine :mod:`opsmate.agent.loop.engine`.

Stop conditions, checked before every step: cancelled, the wall-clock deadline,
the step budget, the token budget; and after every step (without a model) a root
cause supported by evidence once the baseline survey is done; with a model, its
``finish``. Reaching a budget never raises and never loses a result: the report is
assembled from what is known, with what was not checked in ``unfinished``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from opsmate.agent.judge.analysis import analyse
from opsmate.agent.kinds.registry import weak_root
from opsmate.agent.loop.engine import Engine, Limits
from opsmate.agent.loop.events import (
    EventSink,
    ReportReady,
    StateChanged,
    safe_emit,
)
from opsmate.agent.loop.steps import Steps
from opsmate.agent.model.context import Exchange
from opsmate.agent.model.turns import ModelTurns
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact
from opsmate.agent.plan import survey
from opsmate.agent.plan.planner import Planner
from opsmate.agent.plan.tiers import Tier
from opsmate.agent.report.assemble import assemble_report
from opsmate.agent.report.model import Report, render_markdown
from opsmate.agent.runbooks.plan import TIER_ONE, RunbookPlanning
from opsmate.agent.session.followup import FollowUpContext
from opsmate.agent.state import PendingCheck, TaskState

__all__ = ["Engine", "Investigation", "Limits"]


class Investigation(Steps, ModelTurns):
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
    def _must_look(self) -> Callable[[PendingCheck], bool] | None:
        """The checks that no model may skip, as a filter over the pending checks (None when
        none is pending): see :meth:`_is_must`. The root cause is analysed at most once."""
        pending = self.state.pending
        rid = self._root_rid() if any(p.runbook for p in pending) else None
        if not any(self._is_must(p, rid) for p in pending):
            return None
        return lambda p: self._is_must(p, rid)

    @staticmethod
    def _is_must(p: PendingCheck, root_rid: str | None) -> bool:
        """A check no model may skip (see :meth:`_must_look`): the survey, what the evidence
        points at, the declared checks of the runbooks found for the question, and the checks
        of the runbook about the root cause found so far."""
        return (
            p.essential
            or p.priority <= Tier.EXPLAIN
            or (p.source == "runbook_check" and p.priority < Tier.SURVEY)
            or (p.runbook is not None and p.runbook == root_rid)
        )

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
            must = self._must_look()
            if must is None:
                return None, "finish"
            return self.planner.next(left, only=must), "plan"
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
            must = self._must_look() if why == "finish" else None
            if must is not None:
                # the model has said its piece; what the evidence points at still runs
                self._model_done = True
                self._notice(
                    "info", "the model would finish; the checks the evidence points at run first"
                )
                return self.planner.next(left, only=must), "plan"
            if why in ("timeout", "cancelled", "finish", "token_budget"):
                return None, why
            if check is not None:
                return check, "model"
            fallback = self.planner.next(left)
            if fallback is not None:
                return fallback, "plan"
        return None, "plan"

    # -- running ------------------------------------------------------------------------------
    def _settled(self) -> bool:
        """Without a model: stop once the survey is done, nothing the evidence points at
        is pending, and a root cause is supported."""
        if any(p.essential or p.priority <= Tier.EXPLAIN for p in self.state.pending):
            return False
        docs = self.rb.doc_list()
        an = analyse(self.state.model_copy(deep=True), self.e.store, docs, self.e.graph)
        if an.root is None:
            return False
        if self.state.pending and weak_root(an.root.lead):
            return False  # an effect or a bare error line: what is still queued may say why
        if root_reads_pending(an.root.lead, self.state.pending):
            return False  # what the root's own failure mode asks read may change the answer
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


def root_reads_pending(lead: Fact, pending: list[PendingCheck]) -> bool:
    """Whether a read the root cause's own card asks for (its deciding series: the free
    inodes of a volume that reports "no space left") is still queued for that fact."""
    return any(p.rule == "card_reads" and p.trigger_fact == lead.key for p in pending)
