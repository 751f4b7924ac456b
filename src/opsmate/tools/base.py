"""The tool envelope (contracts section 4), tool specs and the call context.

A tool implementation is a function ``run(args, ctx) -> ToolOutput`` that may raise
:class:`ToolFailure`. The executor (:mod:`opsmate.tools.executor`) wraps every call:
validation, scope check, time-out, retries, size budget, redaction, audit, and
turns the outcome into a :class:`ToolResult`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

ToolStatus = Literal["success", "partial", "no_data", "error", "rejected"]

# error codes used across tools (more may be added; keep these stable)
ERROR_CODES = (
    "timeout",
    "unreachable",
    "auth",
    "bad_request",
    "forbidden_scope",
    "unknown_tool",
    "invalid_arguments",
    "not_found",
    "not_available",
    "not_configured",
    "bad_cursor",
    "server_error",
    "bad_response",
    "too_large",
    "internal",
)


class ToolErrorInfo(BaseModel):
    code: str
    message: str
    retryable: bool = False


class Truncation(BaseModel):
    items_dropped: int = 0
    hint: str = ""


class ToolResult(BaseModel):
    """The envelope every tool returns (contracts section 4)."""

    call_id: str
    tool: str
    status: ToolStatus
    data: dict[str, Any] = Field(default_factory=dict)
    scope: dict[str, Any] = Field(default_factory=dict)
    complete: bool = True
    next_cursor: str | None = None
    truncated: Truncation | None = None
    error: ToolErrorInfo | None = None
    source_refs: list[str] = Field(default_factory=list)
    elapsed_ms: int = 0
    # extensions (optional, additive)
    redactions: int = 0
    args: dict[str, Any] = Field(default_factory=dict)
    # the whole answer when ``data`` was cut to the size budget: what the engine's analyzers
    # read (a model, the report and the audit log see the envelope above); never serialised
    _full: ToolResult | None = PrivateAttr(default=None)

    @property
    def ok(self) -> bool:
        return self.status in ("success", "partial", "no_data")

    def full(self) -> ToolResult:
        """The uncut result when ``data`` was cut to the size budget, else this one."""
        return self._full if self._full is not None else self


class ToolFailure(Exception):
    """Raised by a tool implementation; the executor turns it into an error envelope."""

    def __init__(self, code: str, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable


def call_environment(asked: str | None, ctx: CallContext, default: str | None) -> str:
    """The environment a call reads: its argument, else the task's, else the configured
    default; none of them is ``not_configured`` (every source answers the same)."""
    env = asked or ctx.constraints.environment or default
    if not env:
        raise ToolFailure(
            "not_configured",
            "no environment given: pass environment or set default_environment in the config",
        )
    return env


def http_status_code(status: int) -> tuple[str, bool]:
    """The envelope error code for an HTTP error status of a data source, and whether a
    retry may help: 401/403 auth, 400/422 bad_request, 404 not_found, 429 and 5xx
    server_error (retryable), anything else bad_response."""
    if status in (401, 403):
        return "auth", False
    if status in (400, 422):
        return "bad_request", False
    if status == 404:
        return "not_found", False
    if status == 429 or status >= 500:
        return "server_error", True
    return "bad_response", False


class ToolOutput(BaseModel):
    """What a tool implementation returns; the executor adds the rest of the envelope."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    data: dict[str, Any] = Field(default_factory=dict)
    status: Literal["success", "partial", "no_data"] = "success"
    scope: dict[str, Any] = Field(default_factory=dict)
    complete: bool = True
    next_cursor: str | None = None
    truncated: Truncation | None = None
    source_refs: list[str] = Field(default_factory=list)
    # for not_available-style answers that are not errors of the call itself
    error: ToolErrorInfo | None = None


class Constraints(BaseModel):
    """The task's scope: what every tool call must stay inside of."""

    environment: str | None = None
    services: list[str] = Field(default_factory=list)  # focus services (from the question)
    allowed_services: list[str] = Field(default_factory=list)  # empty: any service
    namespaces: list[str] = Field(default_factory=list)  # empty: any namespace
    window_from: datetime | None = None
    window_to: datetime | None = None
    max_window: timedelta = timedelta(hours=6)
    max_page_size: int = 200


@dataclass
class CallContext:
    """Everything a tool implementation may read about the call it serves."""

    call_id: str
    constraints: Constraints
    now: datetime  # "now" for relative times (a bundle's captured_at when replaying)
    deadline: float | None = None  # time.monotonic() value after which to give up
    extra: dict[str, Any] = field(default_factory=dict)


ToolFunc = Callable[[BaseModel, CallContext], ToolOutput]


@dataclass(frozen=True)
class ToolSpec:
    """A tool: its stable name, description, argument model and how to run it."""

    name: str
    description: str
    args_model: type[BaseModel]
    run: ToolFunc
    timeout_s: float = 20.0
    idempotent: bool = True
    token_budget: int | None = None  # None: the configured default
    # the config block(s) of the live source serving it (``prometheus``; ``elasticsearch,loki``
    # where each call's environment picks one); empty for bundle replay and runbook search
    source: str = ""

    def json_schema(self) -> dict[str, Any]:
        return self.args_model.model_json_schema(by_alias=True)
