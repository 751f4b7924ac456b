"""The tool envelope (contracts section 4), tool specs and the call context.

A tool implementation is a function ``run(args, ctx) -> ToolOutput`` that may raise
:class:`ToolFailure`. The executor (:mod:`opsmate.tools.executor`) wraps every call:
validation, scope check, time-out, retries, size budget, redaction, audit, and
turns the outcome into a :class:`ToolResult`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from opsmate.records.payloads import build_payload
from opsmate.tools.schemas import PAYLOAD_MODELS

ToolStatus = Literal["success", "partial", "no_data", "error", "rejected"]
P = TypeVar("P", bound=BaseModel)


class _PayloadSlot:
    """A result's payload model and, once built, the data it was built from and the payload.

    A cache, not part of the result: it never makes two results unequal, and the copies of
    a result share it (a copy with other data rebuilds, as the data it holds is not theirs).
    """

    __slots__ = ("built", "by_name", "data", "model", "payload")

    def __init__(self, model: type[BaseModel] | None = None, *, by_name: bool = True) -> None:
        self.by_name = by_name  # the stable tool's model, by the result's tool name
        self.model = model
        self.built = False
        self.data: Any = None
        self.payload: BaseModel | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _PayloadSlot)

    __hash__ = None  # type: ignore[assignment]

    def __deepcopy__(self, memo: dict[int, Any]) -> _PayloadSlot:
        return _PayloadSlot(self.model, by_name=self.by_name)


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
    "interrupted",
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
    # the typed payload of ``data``, validated once (never serialised)
    _payload: _PayloadSlot = PrivateAttr(default_factory=_PayloadSlot)

    @property
    def ok(self) -> bool:
        return self.status in ("success", "partial", "no_data")

    def full(self) -> ToolResult:
        """The uncut result when ``data`` was cut to the size budget, else this one."""
        return self._full if self._full is not None else self

    @property
    def payload_model(self) -> type[BaseModel] | None:
        """The model :attr:`payload` is built with: the tool spec's (set by the executor),
        else the stable tool's of this name (a result restored from a saved session)."""
        slot = self._payload
        return PAYLOAD_MODELS.get(self.tool) if slot.by_name else slot.model

    def use_payload_model(self, model: type[BaseModel] | None) -> None:
        """Type this result's data with ``model`` (its tool spec's), not by the tool's name
        (a slot of its own: copies made before no longer share it)."""
        self._payload = _PayloadSlot(model, by_name=False)

    @property
    def payload(self) -> BaseModel | None:
        """This result's ``data`` as its tool's typed payload (:mod:`opsmate.records.payloads`),
        validated on first read and kept (a result restored from a saved session gets it
        rebuilt the same way). None for a result without an answer (error, rejected), a
        tool without a payload model, or data that cannot be built into one. The analyzers
        read ``full().payload``: the whole answer when ``data`` was cut to the size budget."""
        slot = self._payload
        if not (slot.built and slot.data is self.data):
            slot.payload = build_payload(self.payload_model, self.data) if self.ok else None
            slot.data, slot.built = self.data, True
        return slot.payload

    def payload_as(self, model: type[P]) -> P | None:
        """:attr:`payload` when it is a ``model`` (None otherwise): the typed read."""
        payload = self.payload
        return payload if isinstance(payload, model) else None

    # the envelope's own reads of ``data``: its JSON text, and a verbatim quote from it
    def data_json(self, limit: int | None = None) -> str:
        """``data`` as JSON text (what a model and the audit log see), cut to ``limit``."""
        text = json.dumps(self.data, ensure_ascii=False, default=str)
        return text if limit is None else text[:limit]

    def find_text(self, match: Callable[[str], bool]) -> str | None:
        """The first text in ``data`` (depth first, in the answer's order) that ``match``
        accepts: the answer quoted verbatim, whatever its shape."""
        return _first_text(self.data, match, 0)


def _first_text(value: Any, match: Callable[[str], bool], depth: int) -> str | None:
    if depth > 12:
        return None
    if isinstance(value, str):
        return value if match(value) else None
    if isinstance(value, dict):
        for v in value.values():
            hit = _first_text(v, match, depth + 1)
            if hit is not None:
                return hit
        return None
    if isinstance(value, list):
        for v in value[:5000]:
            hit = _first_text(v, match, depth + 1)
            if hit is not None:
                return hit
    return None


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

    def payload_as(self, model: type[P]) -> P | None:
        """``data`` as the typed payload ``model`` (for callers of a tool's ``run`` that do
        not go through the executor, such as the snapshot capture)."""
        return build_payload(model, self.data)


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
class SourceRoute:
    """Which configured source serves one call, and that source's time-out: the wall-clock
    limit of the whole call (retries included), whatever the server does."""

    key: str  # the config block: ``alertmanager``, ``loki`` ...
    timeout_s: float | None = None  # ``environments.<env>.<key>.timeout``


# (validated arguments, the call's environment or None) -> the source serving that call
RouteFunc = Callable[[BaseModel, "str | None"], "SourceRoute | None"]


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
    # the source serving one call (set by the live registry): names exactly the source that
    # failed, and bounds the call by that source's time-out; None: ``source`` and timeout_s
    route: RouteFunc | None = None
    # the typed payload of its answers' ``data``; None: the stable tool's of that name
    # (:data:`~opsmate.tools.schemas.PAYLOAD_MODELS`), none for another tool
    payload_model: type[BaseModel] | None = None

    def __post_init__(self) -> None:
        if self.payload_model is None:
            object.__setattr__(self, "payload_model", PAYLOAD_MODELS.get(self.name))

    def json_schema(self) -> dict[str, Any]:
        return self.args_model.model_json_schema(by_alias=True)
