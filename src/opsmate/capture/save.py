"""Save a finished investigation as a replayable bundle (``diagnose --save-bundle``, the TUI).

:func:`save_session_bundle` writes what the session's tools read (its
:class:`~opsmate.capture.recorder.Recorder`: raw live answers, or the part of a replayed
bundle the calls read), the runbooks the report cites, the question, the window, the
environment and the capture time, so that ``opsmate diagnose --bundle FILE`` investigates
the same data offline. Before writing, the follow-up reads the recorder registered are
made (the records a ``log_stats`` counted, the lists proving objects absent), so replay
answers those calls as the live sources did.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opsmate.capture.writer import BundleContent, WrittenBundle, check_out_path, write_bundle
from opsmate.errors import InputError

if TYPE_CHECKING:
    from opsmate.agent.report.model import Report
    from opsmate.agent.session.session import Session


def read_runbooks(session: Session, report: Report | None) -> tuple[dict[str, str], list[str]]:
    """``{source path: text}`` of the runbooks the investigation read (every one it took
    checks or evidence from, so replay plans the same checks; the report's citations are
    among them), and those whose file was not found.

    A replayed bundle's own runbooks travel whole (its runbook search read all of them, and
    the ranking of a hit depends on the others); a bundle without runbooks gets none."""
    texts: dict[str, str] = {}
    missing: list[str] = []
    rec = getattr(session.sources, "recorder", None)
    if rec is not None and rec.replay is not None:
        own = rec.replay.bundle.runbooks_dir
        for path in sorted(own.rglob("*")) if own is not None else []:
            if path.is_file() and not path.is_symlink():
                rel = path.relative_to(own).as_posix()
                texts[rel] = path.read_text(encoding="utf-8", errors="replace")
        return texts, missing  # none: replay searches the built-in set, as this run did
    roots = list(session.sources.library.roots)
    refs = list(session.store.runbooks) + (list(report.runbooks) if report is not None else [])
    for ref in refs:
        if ref.source in texts:
            continue
        for root in roots:
            path = root / ref.source
            if path.is_file():
                try:
                    texts[ref.source] = path.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                break
        else:
            text = session.store.runbook_text.get(ref.id)
            if text:
                texts[ref.source] = text
            else:
                missing.append(ref.source)
    return texts, missing


def _environment(session: Session, recorded: set[str]) -> str:
    st = session.state
    env = st.constraints.environment if st is not None else None
    env = env or session.sources.environment or session.settings.default_environment
    if not env and len(recorded) == 1:
        env = next(iter(recorded))
    return env or "default"


def session_content(session: Session, *, by: str) -> BundleContent:
    """The bundle a finished session's reads make (not yet redacted)."""
    src = session.sources
    rec = getattr(src, "recorder", None)
    if rec is None:
        raise InputError("this investigation was not recorded; it cannot be saved as a bundle")
    st = session.state
    if st is None or not session.reports:
        raise InputError("nothing was investigated yet", hint="ask a question first")
    report = session.reports[-1]
    env = _environment(session, rec.environments())
    # in the time zone the run wrote its times in (the window's: the question's), so the
    # replay, which writes times in the capture's zone, says the same times
    zone = (st.constraints.window_to or src.now).tzinfo
    captured_at = src.now.astimezone(zone) if zone is not None else src.now
    w_from = st.constraints.window_from or (src.window[0] if src.window else None)
    w_to = st.constraints.window_to or (src.window[1] if src.window else None)
    w_to = w_to or captured_at
    w_from = w_from or (w_to - timedelta(hours=1))
    cluster: str | None = None
    parts: dict[str, Any]
    sources: list[str] | None = None
    if rec.replay is not None:
        parts = rec.replay.parts()
        parts["not_captured"] = list(rec.skipped)
        cluster = rec.replay.bundle.meta.cluster
        sources = rec.replay.bundle.meta.captured_sources
    else:
        from opsmate.capture.convert import live_parts

        rec.run_followups()
        parts = live_parts(rec, env)
        env_cfg = session.settings.environments.get(env)
        if env_cfg is not None and env_cfg.kubernetes is not None:
            cluster = env_cfg.kubernetes.context
        sources = configured_sources(env_cfg)
    runbooks, missing = read_runbooks(session, report)
    not_captured = parts["not_captured"] + [
        {"what": f"runbook {m}", "why": "its file is not under the configured runbook folders"}
        for m in missing
    ]
    question = st.questions[0] if st.questions else report.question
    return BundleContent(
        title=question[:80] or "opsmate investigation",
        captured_at=captured_at,
        window_from=min(w_from, w_to),
        window_to=w_to,
        environment=env,
        cluster=cluster,
        question=question,
        by=by,
        objects=parts["objects"],
        logs=parts["logs"],
        metrics=parts["metrics"],
        alerts=parts["alerts"],
        runbooks=runbooks,
        not_captured=not_captured,
        sources=sources,
    )


def configured_sources(env_cfg: Any) -> list[str]:
    """The live source blocks an environment configures (``prometheus``, ``loki`` ...)."""
    if env_cfg is None:
        return []
    keys = ("prometheus", "elasticsearch", "loki", "kubernetes", "alertmanager")
    return [k for k in keys if getattr(env_cfg, k, None) is not None]


def save_session_bundle(session: Session, out: Path, *, by: str = "opsmate") -> WrittenBundle:
    """Write the session's reads as a redacted bundle at ``out`` (``.tar.gz``)."""
    out = check_out_path(out, "--save-bundle")
    content = session_content(session, by=by)
    return write_bundle(content, out, session.sources.executor.redactor)
