"""``opsmate diagnose``: a headless investigation that prints the report (contracts §1, §3).

Output: ``--json`` prints only the report JSON on stdout; ``--markdown`` prints
Markdown; otherwise a rich rendering on a terminal and Markdown when piped.
Progress goes to stderr (on a terminal). Everything printed is redacted and free of
terminal control sequences (the report by the engine and ``render_markdown``, progress
lines here). Exit codes: 0 complete, 1 partial or refused, 2 usage / config (also a ``--session``
file that cannot be read, is not a valid session, was changed after it was saved, or
cannot be written: then the report is printed first), 3 every data source call failed
(its source refused, did not answer in time or answered only server errors), 4 internal
error, 130 interrupted (the partial report is still printed).
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

from opsmate.agent.loop.events import Event, Notice, StepPlanned, ToolCallFinished
from opsmate.agent.report.model import Report, print_report, render_markdown
from opsmate.agent.session.session import Session
from opsmate.config import load_settings
from opsmate.errors import ExitCode, OpsmateError, UsageError
from opsmate.textsafe import dumps_json
from opsmate.tools.redact import clean


class InvestigationOutcome(OpsmateError):
    """The report was printed; this carries the exit code of a partial / failed result."""

    def __init__(self, message: str, code: ExitCode) -> None:
        super().__init__(message)
        self.exit_code = code


def _progress(event: Event) -> None:
    """One progress line on stderr (a terminal): redacted, without control characters."""
    line = ""
    if isinstance(event, StepPlanned):
        line = (
            f"[{event.step}] {event.tool} {dumps_json(event.args)[:120]}  ({event.reason[:80]})\n"
        )
    elif isinstance(event, ToolCallFinished):
        ev = f" {event.evidence_id}" if event.evidence_id else ""
        line = f"    -> {event.status}{ev} {event.elapsed_ms} ms: {event.summary[:120]}\n"
    elif isinstance(event, Notice) and event.level != "info":
        line = f"    ! {event.message}\n"
    if line:
        sys.stderr.write(clean(line))
    sys.stderr.flush()


def run_diagnose(
    *,
    question: str | None,
    env: str | None,
    services: list[str],
    since: str | None,
    bundle: Path | None,
    demo: bool,
    model: str | None,
    max_steps: int | None,
    timeout: float | None,
    json_out: bool,
    markdown: bool,
    index_dir: Path | None,
    config_path: Path | None,
    session_file: Path | None = None,
    alert: str | None = None,
    alert_file: Path | None = None,
    save_bundle: Path | None = None,
) -> None:
    """Implements ``opsmate diagnose`` (see the module docstring)."""
    if bundle is not None and demo:
        raise UsageError("--bundle and --demo are exclusive")
    if question is not None and not question.strip():
        question = None  # a blank question means "the bundle's question", as no question does
    if save_bundle is not None:
        from opsmate.capture.writer import check_out_path

        save_bundle = check_out_path(save_bundle, "--save-bundle")  # before any work
    settings = load_settings(config_path)
    if demo and model is None and not _model_configured(settings.model):
        model = "none"
    preferred: list[str] = []
    alert_notes: list[str] = []  # silenced, another namespace ...: said in the report too
    alerts: list[Any] = []  # the alerts investigated (kept in the incident history)
    if alert is not None or alert_file is not None:  # the question comes from the alerts
        from opsmate.alerting.resolve import alert_options

        opts = alert_options(
            settings,
            question=question,
            env=env,
            alert=alert,
            alert_file=alert_file,
            offline=bundle is not None or demo,
        )
        question, env, preferred = opts.question, opts.env, opts.preferred_runbooks
        alerts = list(opts.incident.alerts) if opts.incident is not None else []
        alert_notes = list(opts.incident.notes) if opts.incident is not None else []
    show_progress = sys.stderr.isatty()
    follow_up = session_file is not None and session_file.exists()
    if session_file is not None and session_file.exists():  # a follow-up in a saved session
        if question is None:
            raise UsageError(f"{session_file}: a saved session needs a follow-up QUESTION")
        session = Session.load(
            session_file,
            settings=settings,
            model=model,
            index_dir=index_dir,
            on_event=_progress if show_progress else None,
            max_steps=max_steps,
            timeout=timeout,
            env=env,  # flags on a follow-up must agree with the session's fixed scope
            services=services,
            since=since,
            bundle=bundle,
            demo=demo,
        )
    else:
        session = _open(
            settings, bundle, demo, model, index_dir, env, services, since, max_steps, timeout,
            _progress if show_progress else None, preferred,
        )  # fmt: skip
    try:
        report, interrupted = _run(session, question)
    finally:
        session.close()  # no model generation may outlive the command
    if alert_notes:  # what the alert itself says the reader should know, redacted
        red = session.sources.executor.redactor  # the site's own patterns too
        report.notes = [clean(n, red)[:400] for n in alert_notes] + report.notes
    if not demo and not follow_up and not interrupted:  # a follow-up is the same incident
        report = _keep_in_history(settings, session, report, alerts)
    _print(report, json_out=json_out, markdown=markdown)  # first: a failed save loses nothing
    not_saved: OpsmateError | None = None
    if session_file is not None:
        try:
            session.save(session_file)  # the follow-up's evidence and answer are kept too
        except OpsmateError as exc:  # names the file and the reason; exit 2 below
            not_saved = exc
    if save_bundle is not None:
        _save_bundle(session, save_bundle)
    if not_saved is not None:
        raise not_saved
    if interrupted:
        raise InvestigationOutcome("interrupted: partial report printed", ExitCode.INTERRUPTED)
    code = _exit_code(session, report)
    if code != ExitCode.OK:
        raise InvestigationOutcome(
            f"investigation finished: {report.status} ({report.budget.stopped_by})", code
        )


def _open(
    settings: Any,
    bundle: Path | None,
    demo: bool,
    model: str | None,
    index_dir: Path | None,
    env: str | None,
    services: list[str],
    since: str | None,
    max_steps: int | None,
    timeout: float | None,
    on_event: Any,
    preferred: list[str],
) -> Session:
    return Session.open(
        settings=settings,
        bundle=bundle,
        demo=demo,
        model=model,
        index_dir=index_dir,
        env=env,
        services=services,
        since=since,
        max_steps=max_steps,
        timeout=timeout,
        on_event=on_event,
        preferred_runbooks=preferred,
    )


def _save_bundle(session: Session, out: Path) -> None:
    """Write the run's reads as a bundle (after the report); a failure names the file."""
    from opsmate.capture.save import save_session_bundle

    try:
        written = save_session_bundle(session, out, by="opsmate diagnose --save-bundle")
    except OpsmateError as exc:
        if str(out) not in exc.message:
            exc.message = f"--save-bundle {out}: {exc.message}"
            exc.args = (exc.message,)
        raise
    except Exception as exc:  # the report is printed; say what went wrong with the bundle
        raise InvestigationOutcome(
            f"--save-bundle {out}: the bundle was not written: {type(exc).__name__}: {exc}",
            ExitCode.INTERNAL,
        ) from exc
    if sys.stderr.isatty():
        sys.stderr.write(f"bundle written: {written.path} ({written.bytes} bytes)\n")


def _keep_in_history(settings: Any, session: Session, report: Report, alerts: list[Any]) -> Report:
    """The report naming the past incidents it has seen before, its own incident kept in
    the history (``history.*``); a history problem is said on stderr, never fatal."""
    from opsmate.history.keeper import History, record_for
    from opsmate.history.store import HistoryError

    history = History.open(settings)
    if history is None:
        return report
    try:
        rec = record_for(report, session, origin="diagnose", alerts=alerts)
        report = history.annotate(report, rec)
        history.keep(rec)
    except HistoryError as exc:
        sys.stderr.write(clean(f"opsmate: the incident history was not used: {exc.message}\n"))
    return report


def _model_configured(spec: str | None) -> bool:
    return bool(spec) and str(spec).strip().lower() != "none"


def _run(session: Session, question: str | None) -> tuple[Report, bool]:
    """Run ``ask`` in a worker so Ctrl-C cancels it cleanly and still yields the partial report."""
    box: dict[str, Any] = {}
    # not Thread.join (an interrupted join can misreport the thread) and not Event.wait
    # (Ctrl-C would land inside its lock handling): the main thread only sleeps and reads
    # a flag, so a KeyboardInterrupt can never leave a lock the worker needs held
    done = threading.Event()

    def work() -> None:
        try:
            box["report"] = session.ask(question)
        except BaseException as exc:  # re-raised in the caller's thread
            box["exc"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=work, name="opsmate-diagnose", daemon=True)
    worker.start()
    interrupted = False
    while not done.is_set():
        try:
            time.sleep(0.05)
        except KeyboardInterrupt:
            if interrupted:
                raise  # a second Ctrl-C aborts without waiting for the partial report
            interrupted = True
            session.cancel()
            sys.stderr.write("opsmate: stopping (Ctrl-C again to abort)...\n")
    if "exc" in box:
        raise box["exc"]
    return box["report"], interrupted


def _exit_code(session: Session, report: Report) -> ExitCode:
    calls = [c for c in session.sources.executor.calls if c.status != "rejected"]
    if report.status != "complete" and calls:
        failed = [c for c in calls if c.status == "error"]
        down: tuple[str, ...] = ("unreachable",)
        if session.sources.executor.down:  # timeouts and server errors marked a source down
            down = ("unreachable", "timeout", "server_error")
        if len(failed) == len(calls) and all(c.error and c.error.code in down for c in failed):
            return ExitCode.UNREACHABLE  # every source tried is down (marked for the run)
    if report.status == "complete":
        return ExitCode.OK
    if report.status == "error" or report.budget.stopped_by == "error":
        return ExitCode.INTERNAL
    return ExitCode.PARTIAL


def _print(report: Report, *, json_out: bool, markdown: bool) -> None:
    if json_out:  # the report is redacted; no raw C1 / bidi control in its JSON
        sys.stdout.write(dumps_json(report.to_json(), indent=2) + "\n")
    elif markdown or not sys.stdout.isatty():
        sys.stdout.write(render_markdown(report))
    else:
        print_report(report)
    sys.stdout.flush()
