"""Resuming a saved session: the file read and checked, then its memory restored.

:func:`read_checked` reads the file with limits and the schema (:mod:`.storage`),
checks its signed scope (:mod:`.scope`) and the flags given with the follow-up, before
anything is opened; :func:`restore` checks that the re-opened bundle is the one the
session was pinned to, then puts the evidence, results, exchanges, reports and state
back into the new :class:`~opsmate.agent.session.session.Session`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opsmate.agent.session.scope import (
    check_bundle,
    check_follow_up_bundle,
    check_follow_up_flags,
    verify,
)
from opsmate.agent.session.storage import (
    SessionFile,
    parse_session_json,
    read_bytes_limited,
    session_path,
    validate_session,
)


def read_checked(
    path_or_id: str | Path,
    *,
    env: str | None,
    services: list[str] | None,
    since: str | None,
    bundle: str | Path | None,
    demo: bool,
) -> tuple[Path, SessionFile, dict[str, Any]]:
    """The session file, validated, and its verified scope (InputError / UsageError)."""
    p = session_path(path_or_id)
    raw = parse_session_json(read_bytes_limited(p), p)
    stored = validate_session(raw, p)
    scope = verify(p, raw, stored.state.constraints if stored.state else None)
    check_follow_up_flags(p, stored, env=env, services=services, since=since)
    check_follow_up_bundle(p, stored.source.bundle, bundle=bundle, demo=demo)
    return p, stored, scope


def restore(
    session: Any, path: Path, stored: SessionFile, scope: dict[str, Any], services: list[str]
) -> None:
    """Put ``stored`` back into the freshly opened ``session`` (a
    :class:`~opsmate.agent.session.session.Session`; its bundle checked first);
    ``services``: ``--service`` names given with the follow-up, joining the focus."""
    from opsmate.agent.model.context import Exchange
    from opsmate.agent.plan.planner import Planner

    root = session.sources.bundle_root
    check_bundle(path, scope["source"], Path(root) if root else None)
    session.pinned_source = dict(scope["source"])
    session.fixed = scope.get("constraints")
    session.id = stored.id
    store = session.store
    store.evidence = list(stored.evidence)
    store.results = dict(stored.results)
    store.runbooks = list(stored.runbooks)
    store.runbook_text = dict(stored.runbook_text)
    store._by_source = {r.source: r.id for r in store.runbooks}
    session.exchanges = [Exchange(action=x.action, result=x.result) for x in stored.exchanges]
    session.reports = list(stored.reports)
    if stored.state is None:
        return
    state = session.state = stored.state
    for svc in services:
        if svc not in state.constraints.services:
            state.constraints.services.append(svc)
    session.sources.executor.constraints = state.constraints
    from opsmate.agent.session.metric_discovery import discoverer

    session.planner = Planner(
        state,
        tools=session.sources.executor.registry.names(),
        recorded=session.sources.recorded,
        discover=discoverer(session.sources, session.engine),  # live: the series worth reading
    )
    for rb in store.runbooks:
        doc = session.sources.library.load(rb.source)
        if doc is not None:
            session.engine.docs[rb.source] = (rb.id, doc)
