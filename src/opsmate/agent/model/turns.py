"""The model's turns in an investigation: the next action it proposes (validated against
the tool schemas, and never one already made), the facts it may add (kept only when they
cite evidence that exists), and the report's narrative. Mixed into
:class:`~opsmate.agent.loop.investigation.Investigation`; the plan decides when the model is asked.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from opsmate.agent.loop.engine import Engine, Limits
from opsmate.agent.loop.events import EventSink, ModelToken, Notice, safe_emit
from opsmate.agent.model.context import Exchange
from opsmate.agent.model.steps import ask_model, narrative_schema, next_action_schema
from opsmate.agent.observe.facts import Fact, FactKind
from opsmate.agent.plan.planner import Planner
from opsmate.agent.state import PendingCheck, TaskState


class ModelTurns:
    """What the model is asked and how its answers are used (attributes: the Investigation's)."""

    e: Engine
    state: TaskState
    planner: Planner
    exchanges: list[Exchange]
    limits: Limits
    on_event: EventSink | None
    cancelled: threading.Event
    notes: list[str]
    tokens: int

    def _notice(self, level: str, message: str) -> None:
        self.notes.append(message)
        safe_emit(self.on_event, Notice(level, message))  # type: ignore[arg-type]

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

    def _token_sink(self, purpose: str) -> Callable[[str], None]:
        """Forward streamed model text as ModelToken events until the ask is cancelled."""

        def sink(text: str) -> None:
            if not self.cancelled.is_set():
                safe_emit(self.on_event, ModelToken(text, purpose))

        return sink
