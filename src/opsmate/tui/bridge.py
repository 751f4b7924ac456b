"""The one place the TUI talks to the engine: a Session run from thread workers.

:class:`Bridge` opens, resumes and saves sessions, asks questions and cancels
them. Its methods block (they run in Textual thread workers, never on the UI
thread) and report only by posting :mod:`opsmate.tui.messages` through ``post``.
The engine's ``on_event`` callback runs on the engine thread; there the bridge
copies what the screen needs (task state, evidence entries) while the engine is
paused in the callback, so the UI never reads objects the engine is changing.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from opsmate.tools.redact import Redactor, clean
from opsmate.tui import messages as m
from opsmate.tui.failures import TITLES, failure

if TYPE_CHECKING:
    from textual.message import Message

    from opsmate.agent.session.session import Session
    from opsmate.config import Settings

Post = Callable[["Message"], Any]

# what the main screen and a refused question say when there is nothing to investigate
NOTHING_OPEN = "Nothing is open: no bundle was given and no data source is configured."
SETUP_HINT = "open a bundle: ctrl+b; configure sources: `opsmate doctor`"
RUNBOOK_MAX_BYTES = 1_000_000  # a runbook file larger than this is not shown whole


def sources_configured(settings: Settings) -> bool:
    """True when some environment of ``settings`` names at least one data source."""
    return any(env.model_dump(exclude_none=True) for env in settings.environments.values())


@dataclass(frozen=True)
class LaunchOptions:
    """What ``opsmate tui`` was started with (the flags of the CLI)."""

    bundle: Path | None = None
    demo: bool = False
    model: str | None = None
    env: str | None = None
    index_dir: Path | None = None
    config_path: Path | None = None

    @property
    def uses_bundle(self) -> bool:
        return self.bundle is not None or self.demo

    def target_title(self) -> str:
        if self.bundle is not None:
            return f"bundle {self.bundle.name}"
        if self.demo:
            return "demo bundle"
        return "live sources"


class Bridge:
    """Drives one engine Session for the app; every method is safe to call from a worker."""

    def __init__(self, options: LaunchOptions, post: Post) -> None:
        self.options = options
        self._post = post
        self.session: Session | None = None
        self.turn = 0
        self._active: int | None = None
        self._lock = threading.Lock()
        self._settings: Settings | None = None
        self._stream = 0
        self._stream_open = False
        self._stream_purpose = ""
        self._stream_text = ""
        self._max_step = 0
        self._started = 0.0

    def post(self, message: Message) -> Any:
        """Post ``message`` with every text in it redacted and free of terminal control.

        This is the only way engine data reaches the screen, so it is the TUI's exit:
        questions, steps, model text, state, evidence, reports, errors, saved sessions.
        """
        session = self.session
        redactor = session.sources.executor.redactor if session is not None else None
        return self._post(clean_message(message, redactor))

    # -- configuration --------------------------------------------------------------------
    def settings(self) -> Settings:
        """The settings (loaded once from ``--config`` / OPSMATE_CONFIG / the user dir)."""
        if self._settings is None:
            from opsmate.config import load_settings

            self._settings = load_settings(self.options.config_path)
        return self._settings

    @property
    def running(self) -> bool:
        return self._active is not None

    # -- sessions -------------------------------------------------------------------------
    def open(self, options: LaunchOptions | None = None) -> bool:
        """Open a new session over ``options`` (default: the launch options); True when open."""
        if options is not None:
            self.options = options
        opts = self.options
        try:
            from opsmate.agent.session.session import Session

            settings = self.settings()
            if not opts.uses_bundle and not sources_configured(settings):
                # a first start: nothing to open, and nothing wrong either
                self.post(m.SetupNeeded(NOTHING_OPEN, SETUP_HINT))
                self.post(m.HealthChecked(self.health(None)))
                return False
            session = Session.open(
                settings=settings,
                bundle=opts.bundle,
                demo=opts.demo,
                model=opts.model,
                index_dir=opts.index_dir,
                on_event=self._sink,
                env=opts.env,
            )
        except Exception as exc:  # shown as a modal; the app stays usable
            self.post(failure(exc))
            self.post(m.HealthChecked(self.health(None)))
            return False
        self._install(session, resumed=False)
        return True

    def resume(self, session_id: str) -> bool:
        """Resume a saved session (its bundle is re-opened); True when resumed."""
        if self.running:
            self.post(
                m.EngineFailed(
                    TITLES["input"], "an investigation is running", "stop it first (Esc)", "input"
                )
            )
            return False
        try:
            from opsmate.agent.session.session import Session

            session = Session.load(
                session_id,
                settings=self.settings(),
                model=self.options.model,
                index_dir=self.options.index_dir,
                on_event=self._sink,
            )
        except Exception as exc:
            self.post(failure(exc))
            return False
        bundle = session.sources.bundle_path
        self.options = replace(self.options, bundle=Path(bundle) if bundle else None, demo=False)
        self._install(session, resumed=True)
        self.post(
            m.SessionRestored(
                questions=list(session.state.questions) if session.state else [],
                state=session.state.model_copy(deep=True) if session.state else None,
                evidence=[e.model_copy() for e in session.store.evidence],
                runbooks=[r.model_copy() for r in session.store.runbooks],
                reports=[r.model_copy(deep=True) for r in session.reports],
            )
        )
        return True

    def _install(self, session: Session, *, resumed: bool) -> None:
        with self._lock:
            self.session = session
            self.turn += 1  # messages of any earlier session are now stale
        src = session.sources
        title = f"bundle {Path(src.bundle_path).name}" if src.bundle_path else "live sources"
        if session.state is not None:
            env = session.state.constraints.environment
        else:  # what intake will use unless the first question names one (flag wins over all)
            env = self.options.env or src.environment or session.settings.default_environment
        self.post(
            m.SessionOpened(
                title=title,
                environment=env,
                model=session.model_spec,
                default_question=src.question,
                resumed=resumed,
                session_id=session.id,
            )
        )
        self.post(m.HealthChecked(self.health(session)))

    def list_sessions(self) -> None:
        """Post the saved sessions (newest first)."""
        try:
            from opsmate.agent.session.session import list_sessions

            found = list_sessions()
        except Exception:  # an unreadable sessions folder lists nothing
            found = []
        self.post(m.SessionsListed(found))

    # -- health ---------------------------------------------------------------------------
    def health(self, session: Session | None) -> list[tuple[str, str, str]]:
        """Model and source health, from the same checks as ``opsmate doctor``."""
        out: list[tuple[str, str, str]] = []
        try:
            from opsmate import probes as doctor  # the checks `opsmate doctor` runs

            settings = self.settings()
            spec = self.options.model or settings.model
            model = doctor.check_model(settings.model_copy(update={"model": spec}))
            out.append(("model", model.status, model.detail))
            if self.options.uses_bundle:
                if session is None:
                    out.append(("bundle", "fail", "not opened"))
                else:
                    out.append(("bundle", "ok", str(session.sources.bundle_path)))
                    has = session.sources.retriever is not None
                    label = self.runbook_search_label(session) if has else "none"
                    out.append(("runbooks", "ok" if has else "warn", label))
            else:
                for c in doctor.source_checks(settings):
                    out.append((c.check, c.status, c.detail))
                idx = doctor.check_index(settings, self.options.index_dir)
                out.append(("runbooks", idx.status, idx.detail))
        except Exception as exc:  # a broken check is shown, never raised
            out.append(("health", "warn", f"checks failed: {exc}"))
        return out

    # -- asking ---------------------------------------------------------------------------
    def ask(self, question: str | None) -> None:
        """Investigate ``question`` (None: the bundle's own question); blocks until done."""
        session = self.session
        if session is None:
            self.post(
                m.EngineFailed(
                    TITLES["input"],
                    "no session is open",
                    "open a bundle (ctrl+b) or fix the error shown",
                    "input",
                )
            )
            return
        with self._lock:
            self.turn += 1
            turn = self.turn
            self._active = turn
            self._stream_open = False
            self._max_step = 0
            self._started = time.monotonic()
        text = (question or "").strip() or (session.default_question or "")
        self.post(m.TurnStarted(turn, text, follow_up=session.state is not None))
        report = None
        try:
            report = session.ask(text or None)
        except Exception as exc:
            self.post(failure(exc, turn))
        finally:
            with self._lock:
                self._active = None
        if report is None:
            self.post(m.TurnEnded(turn, "error", "error"))
            return
        saved: str | None = None
        try:
            saved = str(session.save())
        except OSError as exc:
            self.post(m.EngineNotice(turn, "warning", f"the session could not be saved: {exc}"))
        final = report.model_copy(deep=True)  # what was saved (the engine may add to it last)
        self.post(m.TurnEnded(turn, report.budget.stopped_by, report.status, saved, final))

    def cancel(self) -> bool:
        """Ask the running investigation to stop at its next safe point; True if one runs."""
        session = self.session
        if session is None or not self.running:
            return False
        session.cancel()
        return True

    # -- what the viewers show ------------------------------------------------------------
    def full_result(self, eid: str) -> dict[str, Any] | None:
        """The whole result envelope behind evidence ``eid`` as JSON data (redacted again, no
        terminal control); None when the session holds only the report's excerpt."""
        session = self.session
        result = session.store.results.get(eid) if session is not None else None
        if session is None or result is None:
            return None
        data: dict[str, Any] = clean(
            result.model_dump(mode="json"), session.sources.executor.redactor
        )
        return data

    def runbook_document(self, rid: str) -> str | None:
        """The Markdown file of runbook ``rid`` as written (redacted, no terminal control),
        read from the session's runbook folders; None when it is not on disk there."""
        session = self.session
        ref = session.store.runbook(rid) if session is not None else None
        if session is None or ref is None:
            return None
        for root in session.sources.library.roots:
            try:
                base = Path(root).resolve()
                path = (base / ref.source).resolve()
                if not path.is_relative_to(base) or not path.is_file():
                    continue
                if path.stat().st_size > RUNBOOK_MAX_BYTES:
                    return None
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            cleaned: str = clean(text, session.sources.executor.redactor)
            return cleaned
        return None

    def runbook_search_label(self, session: Session) -> str:
        """How runbooks are searched in ``session``: BM25 only when the retriever says so."""
        retriever = session.sources.retriever
        notes = [
            *(getattr(retriever, "warnings", None) or []),
            *(getattr(getattr(retriever, "corpus", None), "warnings", None) or []),
        ]
        return "BM25 only" if any("bm25 only" in str(n).lower() for n in notes) else "searchable"

    # -- reports --------------------------------------------------------------------------
    def latest_report(self) -> Any:
        session = self.session
        return session.reports[-1] if session is not None and session.reports else None

    def save_report(self, target: Path) -> list[Path]:
        """Write the latest report as ``<target>.md`` and ``<target>.json``; the two paths.
        A name ending in ``.tar.gz`` saves the investigation as a replayable bundle instead."""
        from opsmate.agent.report.model import render_markdown
        from opsmate.errors import InputError
        from opsmate.textsafe import dumps_json

        report = self.latest_report()
        if report is None:
            raise InputError("there is no report yet", hint="ask a question first")
        target = target.expanduser()
        if target.name.lower().endswith((".tar.gz", ".tgz")) and self.session is not None:
            from opsmate.capture.save import save_session_bundle  # a replayable bundle

            return [save_session_bundle(self.session, target, by="opsmate tui").path]
        stem = target.with_suffix("") if target.suffix.lower() in (".md", ".json") else target
        md, js = stem.with_name(stem.name + ".md"), stem.with_name(stem.name + ".json")
        md.parent.mkdir(parents=True, exist_ok=True)
        md.write_text(render_markdown(report), encoding="utf-8")  # sanitised by the renderer
        js.write_text(dumps_json(report.to_json(), indent=2) + "\n", encoding="utf-8")
        return [md, js]

    # -- events (engine thread) -----------------------------------------------------------
    def _sink(self, event: Any) -> None:
        """The engine's ``on_event``: copy what is needed and post a message."""
        from opsmate.agent.loop import events as ev

        with self._lock:
            turn = self._active
            if turn is None:
                if isinstance(event, ev.Notice):  # e.g. notes while a session opens
                    self.post(m.EngineNotice(self.turn, event.level, event.message))
                return  # else: a late token from a stopped model call
            if isinstance(event, ev.ModelToken):
                if not self._stream_open or event.purpose != self._stream_purpose:
                    self._stream += 1
                    self._stream_open = True
                    self._stream_purpose = event.purpose
                    self._stream_text = ""
                self._stream_text += event.text
                self.post(m.ModelStream(turn, self._stream, event.purpose, self._stream_text))
                return
            self._stream_open = False
        self._post_event(turn, event)

    def _post_event(self, turn: int, event: Any) -> None:
        from opsmate.agent.loop import events as ev

        session = self.session
        if isinstance(event, ev.StepPlanned):
            self._max_step = max(self._max_step, event.step)
            self.post(
                m.StepAnnounced(
                    turn, event.step, event.tool, dict(event.args), event.reason, event.source
                )
            )
        elif isinstance(event, ev.ToolCallStarted):
            self.post(m.ToolStarted(turn, event.step, event.call_id))
        elif isinstance(event, ev.ToolCallFinished):
            entry = None
            if event.evidence_id and session is not None:
                found = session.store.get(event.evidence_id)
                entry = found.model_copy() if found is not None else None
            self.post(
                m.ToolFinished(
                    turn,
                    event.step,
                    event.call_id,
                    event.status,
                    event.elapsed_ms,
                    event.summary,
                    event.evidence_id,
                    event.rejected_reason,
                    entry,
                )
            )
        elif isinstance(event, (ev.StateChanged, ev.ReportReady)):
            # the final state (hypotheses are settled when the report is built) comes
            # with the report; the engine sends no StateChanged after it
            if session is not None and session.state is not None:
                self.post(self._snapshot(turn, session, event))
            if isinstance(event, ev.ReportReady):
                self.post(m.ReportArrived(turn, event.report))
        elif isinstance(event, ev.Notice):
            self.post(m.EngineNotice(turn, event.level, event.message))

    def _snapshot(self, turn: int, session: Session, event: Any) -> m.StateUpdated:
        """A copy of the state and the budget used (the engine is paused in the callback)."""
        assert session.state is not None
        report = getattr(event, "report", None)
        budget = getattr(report, "budget", None)
        steps = getattr(event, "steps", None) or (budget.steps if budget else self._max_step)
        tokens = getattr(event, "tokens", None)
        if tokens is None and budget is not None:
            tokens = budget.tokens
        return m.StateUpdated(
            turn,
            session.state.model_copy(deep=True),
            [r.model_copy() for r in session.store.runbooks],
            steps=int(steps),
            max_steps=int(getattr(event, "max_steps", None) or session.limits.max_steps),
            tokens=tokens,
            seconds=budget.seconds if budget else time.monotonic() - self._started,
        )


def clean_message(message: Message, redactor: Redactor | None = None) -> Message:
    """``message`` with each field redacted and stripped of terminal control, in place.

    Models (state, evidence, reports) are replaced by cleaned copies, never changed, so
    the engine's own objects stay as they are.
    """
    if dataclasses.is_dataclass(message):
        for f in dataclasses.fields(message):
            value = getattr(message, f.name)
            if isinstance(value, str | dict | list | tuple | BaseModel):
                setattr(message, f.name, clean(value, redactor))
    return message
