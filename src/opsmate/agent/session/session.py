"""A multi-turn investigation session: the engine the TUI and ``diagnose`` both drive.

``Session.open(...)`` wires a bundle (or the configured live sources), runbook
search, the model and the executor; ``ask(question)`` investigates and returns a
:class:`~opsmate.agent.report.model.Report`; follow-up questions keep the task state,
the evidence and the constraints of the first question (the environment never
widens). ``cancel()`` (from any thread) ends the running ``ask`` with a partial
report. Sessions are saved as JSON under :func:`opsmate.paths.sessions_dir`.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from opsmate import paths
from opsmate.agent.evidence import EvidenceStore
from opsmate.agent.intake.question import detect_identifiers, detect_services, run_intake
from opsmate.agent.loop.events import EventSink, Notice, safe_emit
from opsmate.agent.loop.investigation import Engine, Investigation, Limits
from opsmate.agent.model.context import ContextBuilder, Exchange, TurnBudget, tool_catalog
from opsmate.agent.plan.planner import Planner
from opsmate.agent.report.model import FollowUp, Report
from opsmate.agent.session.followup import FollowUpContext
from opsmate.agent.session.followup import refusals as follow_up_refusals
from opsmate.agent.session.sources import Sources, open_sources
from opsmate.agent.session.storage import SESSION_FORMAT, list_sessions
from opsmate.agent.state import TaskState
from opsmate.config import Settings
from opsmate.errors import InputError
from opsmate.llm.base import ChatModel, check_model_file, load_model
from opsmate.textsafe import dumps_json

__all__ = ["SESSION_FORMAT", "Session", "list_sessions"]

INVENTORY_S = 10.0  # the most a live session spends learning what exists before intake


class Session:
    """One investigation over one data source (a bundle or live), with follow-ups."""

    def __init__(
        self,
        sources: Sources,
        *,
        settings: Settings | None = None,
        model: ChatModel | None = None,
        model_spec: str = "none",
        env: str | None = None,
        services: list[str] | None = None,
        since: str | None = None,
        max_steps: int | None = None,
        timeout: float | None = None,
        max_tokens: int | None = None,
        on_event: EventSink | None = None,
        session_id: str | None = None,
        preferred_runbooks: list[str] | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self.sources = sources
        self.model = model
        self.model_spec = model_spec
        self.flags: dict[str, Any] = {"env": env, "services": list(services or []), "since": since}
        b = self.settings.budget
        self.limits = Limits(
            max_steps=max_steps or b.max_steps,
            max_tokens=max_tokens or b.max_tokens,
            timeout_s=float(timeout or b.timeout_seconds),
        )
        self.on_event = on_event
        self.id = session_id or datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        self.state: TaskState | None = None
        self.reports: list[Report] = []
        self.exchanges: list[Exchange] = []
        self._cancel = threading.Event()
        sources.executor.cancelled = self._cancel  # Ctrl-C ends a call in flight at once
        self._lock = threading.Lock()
        self.store = EvidenceStore(sources.executor.redactor)
        builder = None
        if model is not None:
            llm = self.settings.llm
            builder = ContextBuilder(
                model,
                tool_catalog(sources.executor.registry.describe()),
                TurnBudget(n_ctx=llm.n_ctx, answer_tokens=llm.max_answer_tokens),
                redactor=sources.executor.redactor,
            )
        self.engine = Engine(
            executor=sources.executor,
            store=self.store,
            library=sources.library,
            retriever=sources.retriever,
            model=model,
            builder=builder,
            recorded=sources.recorded,
            namespace=sources.namespace,
            answer_tokens=self.settings.llm.max_answer_tokens,
        )
        self.engine.preferred_runbooks = list(preferred_runbooks or [])  # e.g. runbook_url
        self.planner: Planner | None = None
        # the scope a saved session is signed with: where it reads, and the constraints
        # the first question fixed (scope.py)
        self.pinned_source: dict[str, Any] = sources.describe()
        self.fixed: dict[str, Any] | None = None

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        *,
        settings: Settings | None = None,
        bundle: str | Path | None = None,
        demo: bool = False,
        model: str | None = None,
        index_dir: str | Path | None = None,
        on_event: EventSink | None = None,
        **kwargs: Any,
    ) -> Session:
        """Wire sources and model from flags and config (raises OpsmateError subclasses)."""
        settings = settings or Settings()
        spec = model if model is not None else settings.model
        check_model_file(spec)  # a bad spec or a missing file fails before anything is opened
        sources = open_sources(
            settings, bundle=bundle, demo=demo, index_dir=index_dir, env=kwargs.get("env")
        )
        chat = load_model(spec, settings)
        session = cls(
            sources,
            settings=settings,
            model=chat,
            model_spec=spec or "none",
            on_event=on_event,
            **kwargs,
        )
        for note in sources.notes:
            safe_emit(on_event, Notice("info", note))
        return session

    # -- asking ------------------------------------------------------------------------------
    @property
    def default_question(self) -> str | None:
        return self.sources.question

    def ask(self, question: str | None = None) -> Report:
        """Investigate ``question`` (the bundle's question when None); never raises for budgets."""
        with self._lock:
            self._cancel.clear()
            q = (question or self.sources.question or "").strip()
            if not q:
                raise InputError(
                    "no question given and the bundle has none",
                    hint='e.g. opsmate diagnose "why is checkout failing"',
                )
            q = self.store.redactor.clean_text(q)  # a secret typed in is never searched for
            if self.state is None:
                self._start(q)
                assert self.state is not None and self.planner is not None
                return self._investigate(q, None)
            known_facts = {f.key for f in self.state.facts}
            refused = self._follow_up(q)
            previous = self.reports[-1] if self.reports else None
            if refused:  # said once, in the answer; nothing is called for it
                return self._answer_without_calls(q, refused, previous)
            known = self._answer_from_state(q, previous)
            if known is not None:  # the state answers it: no new call
                self.reports.append(known)
                return known
            follow = FollowUpContext(
                refused=[],
                known_facts=known_facts,
                previous=previous,
                results=self.store.results,
                tools=self.sources.executor.registry.names(),
                known=self._known_names(),
            )
            return self._investigate(q, follow)

    def _investigate(self, q: str, follow: FollowUpContext | None) -> Report:
        """Run the investigation loop for ``q`` (a first question, or a follow-up)."""
        assert self.state is not None and self.planner is not None
        calls_before = len(self.sources.executor.calls)
        inv = Investigation(
            self.engine,
            self.state,
            self.planner,
            self.exchanges,
            self.limits,
            on_event=self.on_event,
            cancelled=self._cancel,
            follow_up=follow,
        )
        report = inv.run(q)
        report.index = self.sources.index_used
        if report.follow_up is not None:
            n = len(self.sources.executor.calls) - calls_before
            report.follow_up.new_calls = n
            # the answer is said once: in follow_up, not again as the summary
            report.summary = self.store.clean(
                f"Answered the follow-up with {n} new read-only call(s); the report "
                "below is the whole investigation so far.",
                300,
            )
        self.reports.append(report)
        return report

    def _known_names(self) -> list[str]:
        """Services and objects a follow-up may name (the bundle's, the state's)."""
        names = [*self.sources.known_services, *self.sources.known_objects]
        if self.state is not None:
            names += self.state.constraints.services + self.state.subject.names
            for f in self.state.facts:
                names += [f.service or ""] + [
                    r.name for r in [f.subject, *f.objects] if r is not None and r.kind != "host"
                ]
        return [n for n in dict.fromkeys(names) if n]

    def _answer_from_state(self, q: str, previous: Report | None) -> Report | None:
        """The previous report with ``follow_up`` answered by the question's intent from
        what was already read, or None when that does not settle it (then the session
        investigates)."""
        from opsmate.agent.session.answers import Reads
        from opsmate.agent.session.followup import state_answer

        assert self.state is not None
        if previous is None:
            return None
        tools = self.sources.executor.registry.names()
        reads = Reads(self.state, self.store.results, tools, self.store.clean)
        fu = state_answer(q, reads, self._known_names())
        if fu is None:
            return None
        return self._previous_with(
            previous,
            fu,
            "Answered the follow-up from what was already read (no new call); the report "
            "below is unchanged.",
        )

    def _answer_without_calls(self, q: str, refused: list[str], previous: Report | None) -> Report:
        """A refused follow-up: the refusal, no call; the previous report follows."""
        from opsmate.agent.session.followup import refused_answer

        answer = self.store.clean(refused_answer(q, refused), 1600)
        fu = FollowUp(question=q, answer=answer, evidence=[], new_calls=0, refused=list(refused))
        summary = "Nothing was read for the follow-up (refused); the report below is unchanged."
        if previous is None:  # a state without a report: an empty turn, still no call
            limits = Limits(max_steps=0, max_tokens=self.limits.max_tokens, timeout_s=1.0)
            assert self.planner is not None and self.state is not None
            base = Investigation(self.engine, self.state, self.planner, self.exchanges, limits).run(
                q
            )
            base.follow_up = fu
            base.summary = summary
            self.reports.append(base)
            return base
        report = self._previous_with(previous, fu, summary)
        self.reports.append(report)
        return report

    def _previous_with(self, previous: Report, fu: FollowUp, summary: str) -> Report:
        from opsmate.agent.loop.events import ReportReady
        from opsmate.agent.report.model import render_markdown
        from opsmate.agent.session.followup import with_answer

        report = with_answer(previous, fu, self.store.clean(summary, 300))
        safe_emit(self.on_event, ReportReady(report, render_markdown(report)))
        return report

    def cancel(self) -> None:
        """Stop the running ``ask`` at the next safe point (thread-safe); it reports partial.

        A call in flight is abandoned at once (the executor watches the same event) and
        Kubernetes calls in flight are aborted, so a hung source never holds it up."""
        self._cancel.set()
        from opsmate.tools.kubernetes.transport import abort_inflight

        with contextlib.suppress(Exception):  # nothing in flight, or no Kubernetes at all
            abort_inflight()

    def close(self) -> None:
        """Stop any model call still running and release the model (safe to call twice)."""
        model = getattr(self, "model", None)
        for name in ("cancel", "close"):
            fn = getattr(model, name, None)
            if callable(fn):
                with contextlib.suppress(Exception):  # closing must never raise at shutdown
                    fn()

    def _start(self, q: str) -> None:
        src = self.sources
        if src.inventory is not None:  # live: what exists, as a bundle tells intake
            seconds = min(INVENTORY_S, self.limits.timeout_s / 4)  # of its own, beside the run's
            src.inventory(self.flags["env"] or self.settings.default_environment, seconds)
        intake = run_intake(
            q,
            now=src.now,
            env=self.flags["env"],
            services=self.flags["services"],
            since=self.flags["since"],
            known_services=src.known_services,
            known_envs=src.known_envs,
            bundle_env=src.environment,
            bundle_window=src.window,
            default_env=self.settings.default_environment,
            max_window=max(
                timedelta(hours=self.settings.tools.max_window_hours),
                (src.window[1] - src.window[0]) if src.window else timedelta(0),
            ),
        )
        c = intake.constraints
        c.max_page_size = self.settings.tools.max_page_size
        env_cfg = self.settings.environment(c.environment) if src.bundle_path is None else None
        if env_cfg is not None and env_cfg.kubernetes is not None and not c.namespaces:
            c.namespaces = list(env_cfg.kubernetes.namespaces)
        src.executor.constraints = c
        _ground_intake(q, intake, src, env_cfg)
        if src.environment and c.environment and src.environment != c.environment:
            intake.notes.append(
                f"the bundle was captured in '{src.environment}' but the task is limited to "
                f"'{c.environment}': the bundle's data is outside the constraint"
            )
            safe_emit(self.on_event, Notice("warning", intake.notes[-1]))
        self.state = TaskState(
            goal=q,
            questions=[q],
            constraints=intake.constraints,
            identifiers=intake.identifiers,
            onset=intake.onset,
            mentioned_nodes=intake.nodes,
            notes=intake.notes,
            subject=intake.subject,
        )
        from opsmate.agent.session.metric_discovery import discoverer

        self.planner = Planner(
            self.state,
            tools=src.executor.registry.names(),
            recorded=src.recorded,
            discover=discoverer(src, self.engine),  # live: the series worth reading
        )
        from opsmate.agent.session.scope import fixed_constraints

        self.fixed = fixed_constraints(self.state.constraints)  # never widened afterwards

    def _follow_up(self, q: str) -> list[str]:
        """Fold a follow-up into the state; return what it asks that the constraints refuse.

        Services it names join the focus (and the subject); the environment and a
        restriction to some services never widen."""
        assert self.state is not None
        st = self.state
        st.questions.append(q)
        known = list(self.sources.known_services)
        refused = follow_up_refusals(q, st, list(self.sources.known_envs), known)
        for msg in refused:  # said once: in the follow-up's answer (and this notice)
            safe_emit(self.on_event, Notice("warning", msg))
        allowed = st.constraints.allowed_services
        for svc in detect_services(q, known):
            if allowed and svc not in allowed:
                continue
            if svc not in st.constraints.services:
                st.constraints.services.append(svc)
            if svc not in st.subject.names:
                st.subject.names.append(svc)
        for ident in detect_identifiers(q, st.constraints.services):
            if ident not in st.identifiers:
                st.identifiers.append(ident)
        return refused

    # -- persistence -------------------------------------------------------------------------
    def save(self, path: str | Path | None = None) -> Path:
        """Write the session as JSON (state, evidence, exchanges, reports) with its signed
        scope; return the path. InputError naming the file when it cannot be written (a
        file that was there is kept as it was)."""
        from opsmate.agent.session.scope import make_scope, session_key, sign
        from opsmate.agent.session.storage import SessionSaveError, write_session_file

        target = Path(path) if path else paths.sessions_dir() / f"{self.id}.json"
        data = {
            "format": SESSION_FORMAT,
            "id": self.id,
            "saved_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "source": self.pinned_source,
            "model": self.model_spec,
            "flags": self.flags,
            "state": self.state.model_dump(mode="json") if self.state else None,
            "evidence": [e.model_dump(mode="json") for e in self.store.evidence],
            "results": {k: v.model_dump(mode="json") for k, v in self.store.results.items()},
            "runbooks": [r.model_dump(mode="json") for r in self.store.runbooks],
            "runbook_text": self.store.runbook_text,
            "exchanges": [{"action": x.action, "result": x.result} for x in self.exchanges[-20:]],
            "reports": [r.to_json() for r in self.reports],
        }
        clean = self.store.redactor.clean
        data = clean(data)  # questions, runbook text: nothing stored raw
        scope = clean(
            make_scope(self.id, self.pinned_source, self.flags, self.fixed, self.model_spec)
        )
        try:
            key = session_key(create=True)
        except (OSError, InputError) as exc:
            why = exc.message if isinstance(exc, InputError) else f"{exc.filename}: {exc.strerror}"
            raise SessionSaveError(
                f"{target}: the session could not be saved: no session key ({why})"
            ) from exc
        assert key is not None
        data["scope"], data["scope_mac"] = scope, sign(scope, key)
        return write_session_file(target, dumps_json(data, indent=1))

    @classmethod
    def load(
        cls,
        path_or_id: str | Path,
        *,
        settings: Settings | None = None,
        model: str | None = None,
        index_dir: str | Path | None = None,
        on_event: EventSink | None = None,
        env: str | None = None,
        services: list[str] | None = None,
        since: str | None = None,
        bundle: str | Path | None = None,
        demo: bool = False,
        **kwargs: Any,
    ) -> Session:
        """Resume a saved session (re-opening its bundle or the live sources).

        The file is read with limits and validated (storage.py); its scope must carry a
        valid signature and match the state (scope.py); ``env`` / ``services`` / ``since``
        / ``bundle`` / ``demo`` given for a follow-up must agree with the session's scope
        (a UsageError otherwise); the bundle must be the one it was opened on."""
        from opsmate.agent.session.resume import read_checked, restore

        p, stored, scope = read_checked(
            path_or_id, env=env, services=services, since=since, bundle=bundle, demo=demo
        )
        flags = stored.flags
        session = cls.open(
            settings=settings,
            bundle=stored.source.bundle,
            model=model or stored.model,
            index_dir=index_dir,
            on_event=on_event,
            env=flags.env,
            services=flags.services,
            since=flags.since,
            **kwargs,
        )
        try:
            restore(session, p, stored, scope, services or [])
        except BaseException:
            session.close()
            raise
        return session


def _ground_intake(q: str, intake: Any, src: Sources, env_cfg: Any) -> None:
    """Check the subject's namespace and names against what exists (agent/intake/ground.py)."""
    from opsmate.agent.intake.ground import Inventory, ground

    namespaces = list(src.known_namespaces)
    if not namespaces and env_cfg is not None and env_cfg.kubernetes is not None:
        namespaces = list(env_cfg.kubernetes.namespaces)
    names = [*src.known_objects, *src.known_services] if src.known_objects else []
    services = list(intake.constraints.services)
    inventory = Inventory.of(
        namespaces, names, routes=src.ingress_backends, objects=src.known_objects,
        placed=src.object_namespaces,
    )  # fmt: skip
    g = ground(q, intake.subject, inventory, services)
    intake.subject = g.subject
    intake.notes.extend(g.notes)
    if g.services != services:
        intake.constraints = intake.constraints.model_copy(update={"services": g.services})
