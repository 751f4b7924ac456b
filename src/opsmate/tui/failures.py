"""How an engine error is shown: a category, a title, and the hint (never a traceback).

Every exception a worker meets becomes an :class:`~opsmate.tui.messages.EngineFailed`
message: an :class:`~opsmate.errors.OpsmateError` keeps its own message and hint; any
other exception is reported as an internal error with what to do next.
"""

from __future__ import annotations

from opsmate.tui import messages as m


def error_kind(exc: BaseException) -> str:
    """A short category for an engine error (chooses the title and the advice)."""
    from opsmate.errors import (
        BundleError,
        ConfigError,
        InputError,
        ModelError,
        SourceUnreachableError,
    )

    if isinstance(exc, ModelError):
        return "model"
    if isinstance(exc, SourceUnreachableError):
        return "source"
    if isinstance(exc, BundleError):
        return "bundle"
    if isinstance(exc, ConfigError):
        return "config"
    if isinstance(exc, InputError):
        return "input"
    return "internal"


TITLES = {
    "model": "The model is not available",
    "source": "A data source is unreachable",
    "bundle": "The bundle cannot be opened",
    "config": "The configuration is invalid",
    "input": "That cannot be used",
    "internal": "Something went wrong inside opsmate",
}


def failure(exc: BaseException, turn: int | None = None) -> m.EngineFailed:
    """An :class:`EngineFailed` message for any exception (never a traceback)."""
    from opsmate.errors import OpsmateError

    kind = error_kind(exc)
    if isinstance(exc, OpsmateError):
        return m.EngineFailed(TITLES[kind], exc.message, exc.hint or "", kind, turn)
    return m.EngineFailed(
        TITLES["internal"],
        f"{type(exc).__name__}: {exc}",
        "the session and what was found so far are kept; try again, and report this if it repeats",
        "internal",
        turn,
    )
