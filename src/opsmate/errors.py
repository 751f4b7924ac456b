"""One error tree for opsmate, and the exit codes of the command-line contract.

Every error a user can cause or meet derives from :class:`OpsmateError`; the CLI
maps ``exit_code`` to the process exit status and prints ``message`` and
``hint``; the TUI shows the same text in a notification or modal.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    PARTIAL = 1  # investigation finished but partial / refused
    USAGE = 2  # usage or configuration error, bad input
    UNREACHABLE = 3  # a data source is unreachable
    INTERNAL = 4
    INTERRUPTED = 130


class OpsmateError(Exception):
    """Base of every error opsmate raises on purpose."""

    exit_code: ExitCode = ExitCode.INTERNAL

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\nhint: {self.hint}"


class UsageError(OpsmateError):
    """Bad flags or arguments."""

    exit_code = ExitCode.USAGE


class ConfigError(UsageError):
    """The configuration file or an OPSMATE_ variable is invalid."""


class InputError(UsageError):
    """A file given by the user cannot be read or parsed (names the file and line)."""


class BundleError(InputError):
    """An incident bundle is missing or malformed."""


class IndexLockedError(UsageError):
    """Another process holds the index lock."""


class KnowledgeIndexError(OpsmateError):
    """The runbook index is missing, corrupt or from an incompatible version."""

    exit_code = ExitCode.USAGE


class ModelError(UsageError):
    """The model spec is invalid or the model file is missing."""


class SourceUnreachableError(OpsmateError):
    """A data source (Prometheus, Elasticsearch, Kubernetes, a model server) cannot be reached."""

    exit_code = ExitCode.UNREACHABLE


class InternalError(OpsmateError):
    exit_code = ExitCode.INTERNAL
