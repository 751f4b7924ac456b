"""The executor: the one door every tool call goes through (the model proposes, it decides).

Pipeline of :meth:`Executor.call`, each step able to end the call with an envelope:

1. allow-list: an unregistered name → ``rejected`` / ``unknown_tool`` (lists known tools)
2. validation with the tool's pydantic model (unknown keys forbidden) →
   ``rejected`` / ``invalid_arguments`` with one actionable line per problem
3. scope (:mod:`opsmate.tools.scope`): environment, namespace, service, time window,
   page size, cursor → ``rejected`` / ``forbidden_scope`` | ``bad_cursor`` |
   ``invalid_arguments``; narrowing is reported in ``scope["clamped"]``
4. execution in a worker thread under the time-out (the spec's own ``timeout_s`` when
   set, else ``tools.timeout_seconds``; for a live source never more than that source's
   configured ``timeout``; never past the task deadline): a wall-clock limit on the whole
   call, retries included, whatever the server does (refuses, never answers, drips one
   byte at a time) → ``error`` / ``timeout`` (retryable); :class:`ToolFailure` →
   ``error`` with its code and retryable flag; any other exception → ``error`` /
   ``internal``. ``cancelled`` (an Event, e.g. the session's Ctrl-C) ends a call in
   flight at once → ``error`` / ``interrupted``. A ``bad_cursor``
   failure of the tool itself (a forged cursor that passed the executor's own check)
   is ``rejected`` like any other invalid argument.
   Retryable errors of idempotent tools are retried up to ``tools.max_retries`` times
   with a short backoff, inside the call's own time limit, never past the deadline. A
   time-out whose worker is still running (a hung call, or a slow local bundle replay)
   is not retried: the worker cannot be stopped, and a retry would only queue behind it
   and multiply the wait.
5. size budget (:mod:`opsmate.tools.budget`): above the tool's token
   budget the largest list in ``data`` loses items from its end (then over-long
   strings are cut) until it fits; ``truncated`` says how many and how to narrow,
   ``complete`` becomes false and ``success`` becomes ``partial``
6. redaction (:class:`Redactor`) of data, scope, args, source refs and error messages
7. typed payload: the (redacted) answer validated into the tool's payload model
   (``ToolResult.payload``; on ``full()``, the whole answer, when ``data`` was cut); items
   that do not parse are skipped and counted, a payload that cannot be built is None
8. audit: one JSON line (:class:`AuditLog`)

:meth:`Executor.call` never raises.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from dataclasses import fields as dc_fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from opsmate import paths
from opsmate.config import ToolsConfig
from opsmate.tools.audit import AuditLog
from opsmate.tools.base import (
    CallContext,
    Constraints,
    SourceRoute,
    ToolErrorInfo,
    ToolFailure,
    ToolOutput,
    ToolResult,
    ToolSpec,
)
from opsmate.tools.budget import fit_to_budget
from opsmate.tools.redact import Redactor
from opsmate.tools.registry import ToolRegistry
from opsmate.tools.scope import ScopeViolation, apply_scope, wrap_cursor

log = logging.getLogger(__name__)

_SPEC_DEFAULT_TIMEOUT = next(f.default for f in dc_fields(ToolSpec) if f.name == "timeout_s")
_BACKOFF_S = (0.25, 0.5, 1.0, 2.0)
DOWN_CODES = ("unreachable", "timeout")  # failures that mark a live source down for the run
SLICE_S = 0.1  # how often a wait for a worker looks at ``cancelled``

# describes a live source for people: (source module, environment) -> "Prometheus (test, URL)"
SourceLabeler = Callable[[str, "str | None"], str]


@dataclass
class SourceDown:
    """A live source marked down for the rest of the run after its first failed call."""

    key: str  # "<source module>@<environment>"
    label: str  # name, environment and URL without credentials
    code: str  # unreachable | timeout | server_error (a source that never answered well)
    message: str  # the first failure's (redacted) message
    first_call: str  # the call that failed
    calls: int = 1  # calls that failed or were answered "down" (the first included)


def source_module(spec: ToolSpec) -> str:
    """The source serving ``spec``: its config key(s) (``prometheus``,
    ``elasticsearch,loki`` ...), else the module its function lives in."""
    if spec.source:
        return spec.source
    module = str(getattr(spec.run, "__module__", "") or "")
    return module.rsplit(".", 1)[-1] or spec.name


class _Outcome:
    """What one attempt produced: an output, or a failure."""

    __slots__ = ("error", "hung", "output")

    def __init__(
        self,
        output: ToolOutput | None = None,
        error: ToolErrorInfo | None = None,
        *,
        hung: bool = False,
    ) -> None:
        self.output = output
        self.error = error
        self.hung = hung  # the worker was still running at the time-out


def format_validation_error(exc: ValidationError, model: type[BaseModel]) -> str:
    """One line per problem, phrased so a model can fix its call."""
    allowed = sorted((f.alias or name) for name, f in model.model_fields.items() if not f.exclude)
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(arguments)"
        kind = err.get("type", "")
        if kind == "extra_forbidden":
            lines.append(f"unknown argument '{loc}' (allowed: {', '.join(allowed)})")
        elif kind == "missing":
            lines.append(f"missing required argument '{loc}'")
        else:
            got = repr(err.get("input"))
            got = got if len(got) <= 80 else got[:77] + "..."
            lines.append(f"argument '{loc}': {err.get('msg')} (got {got})")
    return "; ".join(lines)


class Executor:
    """Runs tool calls for one task under its constraints; keeps the history in ``calls``.

    ``now`` fixes the time relative arguments resolve against (a bundle's
    ``captured_at``); without it the wall clock is used. ``deadline`` is a
    ``time.monotonic()`` value (the task's time budget): no attempt or retry runs
    past it. ``audit`` defaults to ``tools.audit_log`` or the user data dir;
    ``redactor`` to the built-in patterns plus ``tools.redact_patterns``.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        constraints: Constraints,
        *,
        config: ToolsConfig | None = None,
        now: datetime | None = None,
        audit: AuditLog | None = None,
        redactor: Redactor | None = None,
        deadline: float | None = None,
        call_prefix: str = "call",
    ) -> None:
        self.registry = registry
        self.constraints = constraints
        self.config = config or ToolsConfig()
        self.fixed_now = now
        self.redactor = redactor or Redactor(self.config.redact_patterns)
        if audit is None:
            path = self.config.audit_log
            audit = AuditLog(
                Path(path).expanduser() if path else paths.audit_log_path(),
                redactor=self.redactor,  # the site's own patterns apply to the audit log too
            )
        self.audit = audit
        self.deadline = deadline  # time.monotonic() value
        self.call_prefix = call_prefix
        self.calls: list[ToolResult] = []
        # live sources down for the rest of the run (a bundle replay is never marked down)
        self.mark_down = True
        self.down: dict[str, SourceDown] = {}
        self.source_label: SourceLabeler | None = None
        # set (by Ctrl-C, the session's cancel) to end the calls in flight at once
        self.cancelled: threading.Event | None = None
        self._answered: set[str] = set()  # sources that answered a call this run
        self._counter = itertools.count(1)
        self._lock = threading.Lock()

    # -- public ----------------------------------------------------------------
    def now(self) -> datetime:
        """The time relative arguments are resolved against."""
        return self.fixed_now or datetime.now(UTC)

    def call(self, tool: str, args: Mapping[str, Any]) -> ToolResult:
        """Run one call through the whole pipeline; never raises."""
        with self._lock:
            call_id = f"{self.call_prefix}_{next(self._counter):03d}"
        started = time.monotonic()
        try:
            result = self._call(call_id, tool, args)
        except Exception as exc:  # last resort: the executor itself must not raise
            result = ToolResult(
                call_id=call_id,
                tool=str(tool),
                status="error",
                complete=False,
                error=ToolErrorInfo(code="internal", message=f"executor error: {exc!r}"),
            )
        result.elapsed_ms = int((time.monotonic() - started) * 1000)
        try:
            full = result._full
            result = self._redact(result)
            result._full = self._redact(full) if full is not None else None
        except Exception as exc:  # never let unredacted data through
            result = ToolResult(
                call_id=call_id,
                tool=str(tool),
                status="error",
                complete=False,
                elapsed_ms=result.elapsed_ms,
                error=ToolErrorInfo(
                    code="internal", message=f"redaction failed ({type(exc).__name__}); withheld"
                ),
            )
        try:
            self._type_payload(result)
        except Exception as exc:  # a payload is a reading aid: never fails the call
            log.debug("%s: no payload for %s: %r", result.call_id, result.tool, exc)
        self.audit.record(result, result.args, result.scope)
        with self._lock:
            self.calls.append(result)
        return result

    def _type_payload(self, result: ToolResult) -> None:
        """Validate the (redacted) answer into its tool spec's payload model: on the whole
        answer (``full()``), which the analyzers read; the envelope cut to the size budget
        gets its own when read. Items that do not parse are skipped and counted; a payload
        that cannot be built is None (:func:`~opsmate.records.payloads.build_payload`)."""
        spec = self.registry.get(result.tool) if result.ok else None
        if spec is None:
            return
        for r in {id(r): r for r in (result, result.full())}.values():
            r.use_payload_model(spec.payload_model)
        _ = result.full().payload

    # -- pipeline --------------------------------------------------------------
    def _call(self, call_id: str, tool: str, args: Mapping[str, Any]) -> ToolResult:
        raw_args = dict(args) if isinstance(args, Mapping) else {}
        spec = self.registry.get(tool) if isinstance(tool, str) else None
        if spec is None:
            known = ", ".join(self.registry.names()) or "(none)"
            return self._rejected(
                call_id, str(tool), raw_args, "unknown_tool",
                f"unknown tool '{tool}'; known tools: {known}",
            )  # fmt: skip
        if not isinstance(args, Mapping):
            return self._rejected(
                call_id, tool, {}, "invalid_arguments", "arguments must be a JSON object"
            )
        try:
            model = spec.args_model.model_validate(raw_args)
        except ValidationError as exc:
            msg = format_validation_error(exc, spec.args_model)
            return self._rejected(call_id, tool, raw_args, "invalid_arguments", msg)
        validated = model.model_dump(by_alias=True)
        try:
            scoped = apply_scope(tool, validated, self.constraints, self.now())
        except ScopeViolation as exc:
            return self._rejected(call_id, tool, _compact(validated), exc.code, exc.message)
        call_args = dict(scoped.args)
        if call_args.get("cursor") is not None:
            call_args["cursor"] = scoped.tool_cursor  # None: the first page again (skip set)
        try:
            bound = spec.args_model.model_validate(call_args)
        except ValidationError as exc:
            msg = format_validation_error(exc, spec.args_model)
            return self._rejected(call_id, tool, _compact(scoped.args), "invalid_arguments", msg)

        route = self._route(spec, bound, scoped.args)
        down_key = self._down_key(spec, scoped.args, route)
        with self._lock:
            down = self.down.get(down_key) if down_key else None
            if down is not None:
                down.calls += 1
        if down is not None:  # answered at once: no network call to a source known down
            return ToolResult(
                call_id=call_id, tool=tool, status="error", scope=dict(scoped.scope),
                complete=False, args=_compact(scoped.args),
                error=ToolErrorInfo(
                    code=down.code,
                    message=f"{down.label} is down for this run (not called again): "
                    f"{down.message}",
                    retryable=False,
                ),
            )  # fmt: skip
        limit = self._timeout_for(spec)
        if route is not None and route.timeout_s is not None:
            limit = min(limit, route.timeout_s)
        outcome, attempts = self._run_with_retries(spec, bound, call_id, limit)
        if outcome.hung and route is not None and outcome.error and outcome.error.code == "timeout":
            env = scoped.args.get("environment") or self.constraints.environment
            outcome.error.message = (
                f"{self._label(route.key, env)} did not answer {tool} within {limit:.1f} s "
                "(the source's time-out, answer included)"
            )
        if down_key and outcome.error is None:
            with self._lock:
                self._answered.add(down_key)
        elif down_key and self._marks_down(down_key, outcome.error, routed=route is not None):
            self._mark_down(down_key, spec, scoped.args, outcome.error, call_id, route)
        scope = dict(scoped.scope)
        if attempts > 1:
            scope["attempts"] = attempts
        shown_args = _compact(scoped.args)
        if outcome.error is not None and outcome.error.code == "bad_cursor":
            return self._rejected(call_id, tool, shown_args, "bad_cursor", outcome.error.message)
        if outcome.error is not None or outcome.output is None:
            return ToolResult(
                call_id=call_id, tool=tool, status="error", scope=scope, complete=False,
                error=outcome.error, args=shown_args,
            )  # fmt: skip
        out = outcome.output
        merged_scope = {**out.scope, **scope}
        if "clamped" in out.scope and "clamped" in scope:
            merged_scope["clamped"] = {**out.scope["clamped"], **scope["clamped"]}
        data = out.data
        skipped = 0
        if scoped.skip and isinstance(data.get("items"), list):
            skipped = min(scoped.skip, len(data["items"]))
            data = {**data, "items": data["items"][skipped:]}
            merged_scope["skipped_items"] = skipped
        next_cursor = None
        if out.next_cursor:
            next_cursor = wrap_cursor(tool, scoped.ident, out.next_cursor, scoped.pinned)
        result = ToolResult(
            call_id=call_id,
            tool=tool,
            status=out.status,
            data=data,
            scope=merged_scope,
            complete=out.complete,
            next_cursor=next_cursor,
            truncated=out.truncated,
            error=out.error,
            source_refs=list(out.source_refs),
            args=shown_args,
        )
        budget = spec.token_budget or self.config.result_token_budget
        fitted = fit_to_budget(result, budget)
        final = self._resume_cut_page(fitted, result, scoped, skipped)
        if final.truncated is not None and fitted is not result:
            final._full = result  # the analyzers read everything; the envelope stays in budget
        return final

    # -- sources down ----------------------------------------------------------------
    def _route(
        self, spec: ToolSpec, bound: BaseModel, args: Mapping[str, Any]
    ) -> SourceRoute | None:
        """The source serving this call (None: not a routed live source)."""
        if spec.route is None:
            return None
        env = args.get("environment") or self.constraints.environment
        try:
            return spec.route(bound, env)
        except Exception as exc:  # a route is a refinement: the call still runs
            log.debug("no route for %s: %r", spec.name, exc)
            return None

    def _down_key(
        self, spec: ToolSpec, args: Mapping[str, Any], route: SourceRoute | None = None
    ) -> str | None:
        if not self.mark_down:
            return None
        env = args.get("environment") or self.constraints.environment
        module = route.key if route is not None else source_module(spec)
        return f"{module}@{env or '-'}"

    def _marks_down(self, key: str, error: ToolErrorInfo | None, *, routed: bool) -> bool:
        """Refused, unresolvable or silent: the source is down. So is a live source (a
        routed one) that answers only server errors (HTTP 5xx after the retries) and has
        not answered a call this run; a 5xx after good answers is that query's trouble."""
        if _marks_down(error):
            return True
        if not routed or error is None or error.code != "server_error":
            return False
        with self._lock:
            return key not in self._answered

    def _mark_down(
        self,
        key: str,
        spec: ToolSpec,
        args: Mapping[str, Any],
        error: ToolErrorInfo | None,
        call_id: str,
        route: SourceRoute | None = None,
    ) -> None:
        env = args.get("environment") or self.constraints.environment
        module = route.key if route is not None else source_module(spec)
        label = self._label(module, env)
        message = self.redactor.redact_text(error.message if error else "no answer")[0]
        with self._lock:
            self.down.setdefault(
                key,
                SourceDown(
                    key=key,
                    label=label,
                    code=error.code if error else "unreachable",
                    message=message,
                    first_call=call_id,
                ),
            )

    def _label(self, module: str, env: str | None) -> str:
        """How people know a source: ``Prometheus (test, http://host:9090)`` (redacted)."""
        label = f"{module} ({env})" if env else module
        if self.source_label is not None:
            with contextlib.suppress(Exception):  # a label is a nicety; the mark must happen
                label = self.source_label(module, env)
        return self.redactor.redact_text(label)[0]

    def down_sources(self) -> list[SourceDown]:
        """The sources marked down so far, in the order they failed."""
        with self._lock:
            return list(self.down.values())

    @staticmethod
    def _resume_cut_page(
        fitted: ToolResult, full: ToolResult, scoped: Any, skipped: int
    ) -> ToolResult:
        """A paginated page cut by the size budget gets a cursor that resumes after the
        last item kept (the same tool page again, skipping what was delivered), so the
        items dropped for size are never silently lost between pages."""
        kept_items = fitted.data.get("items")
        full_items = full.data.get("items")
        if (
            fitted.truncated is None
            or "cursor" not in scoped.args
            or not isinstance(kept_items, list)
            or not isinstance(full_items, list)
            or len(kept_items) >= len(full_items)
        ):
            return fitted
        cursor = wrap_cursor(
            full.tool,
            scoped.ident,
            scoped.tool_cursor,
            scoped.pinned,
            skip=skipped + len(kept_items),
        )
        return fitted.model_copy(update={"next_cursor": cursor, "complete": False})

    def _rejected(
        self, call_id: str, tool: str, args: dict[str, Any], code: str, message: str
    ) -> ToolResult:
        return ToolResult(
            call_id=call_id,
            tool=tool,
            status="rejected",
            complete=False,
            error=ToolErrorInfo(code=code, message=message, retryable=False),
            args=args,
        )

    # -- execution ---------------------------------------------------------------
    def _timeout_for(self, spec: ToolSpec) -> float:
        if spec.timeout_s != _SPEC_DEFAULT_TIMEOUT:
            return spec.timeout_s
        return self.config.timeout_seconds

    def _remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def _is_cancelled(self) -> bool:
        return self.cancelled is not None and self.cancelled.is_set()

    def _run_with_retries(
        self, spec: ToolSpec, args: BaseModel, call_id: str, limit: float | None = None
    ) -> tuple[_Outcome, int]:
        """Attempts until one succeeds or may not be retried, all of them within ``limit``
        seconds of wall-clock time (the call's own time-out) and the task's deadline."""
        limit = self._timeout_for(spec) if limit is None else limit
        call_end = time.monotonic() + limit
        attempt = 0
        while True:
            attempt += 1
            began = time.monotonic()
            outcome = self._attempt(spec, args, call_id, attempt, call_end, limit)
            took = time.monotonic() - began
            err = outcome.error
            if err is None or not err.retryable or not spec.idempotent or outcome.hung:
                return outcome, attempt
            if attempt > self.config.max_retries or self._is_cancelled():
                return outcome, attempt
            pause = _BACKOFF_S[min(attempt - 1, len(_BACKOFF_S) - 1)]
            remaining = self._remaining()
            if remaining is not None and remaining <= pause + 0.05:
                return outcome, attempt
            if call_end - time.monotonic() - pause < max(took, 0.25):
                return outcome, attempt  # another try would not have the time this one took
            if self.cancelled is not None:
                if self.cancelled.wait(pause):
                    return outcome, attempt
            else:
                time.sleep(pause)

    def _attempt(
        self,
        spec: ToolSpec,
        args: BaseModel,
        call_id: str,
        attempt: int,
        call_end: float | None = None,
        limit: float | None = None,
    ) -> _Outcome:
        if self._is_cancelled():
            return _Outcome(error=_interrupted(spec))
        timeout = self._timeout_for(spec) if limit is None else limit
        if call_end is not None:
            timeout = max(min(timeout, call_end - time.monotonic()), 0.05)
        remaining = self._remaining()
        bounded_by_deadline = False
        if remaining is not None:
            if remaining <= 0:
                return _Outcome(
                    error=ToolErrorInfo(
                        code="timeout",
                        message="the task's time budget is spent; no further calls can run",
                        retryable=False,
                    )
                )
            if remaining < timeout:
                timeout, bounded_by_deadline = remaining, True
        ctx = CallContext(
            call_id=call_id,
            constraints=self.constraints,
            now=self.now(),
            deadline=time.monotonic() + timeout,
            extra={"attempt": attempt},
        )
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["output"] = spec.run(args, ctx)
            except BaseException as exc:  # reported below, never re-raised
                box["exc"] = exc

        worker = threading.Thread(target=work, name=f"opsmate-tool-{call_id}", daemon=True)
        worker.start()
        end = time.monotonic() + timeout
        while True:  # in slices, so a cancel (Ctrl-C) ends the wait at once
            worker.join(max(min(SLICE_S, end - time.monotonic()), 0.0))
            if not worker.is_alive() or time.monotonic() >= end:
                break
            if self._is_cancelled():
                return _Outcome(error=_interrupted(spec), hung=True)
        if worker.is_alive():
            why = "the task's remaining time" if bounded_by_deadline else "its time-out"
            return _Outcome(
                error=ToolErrorInfo(
                    code="timeout",
                    message=f"{spec.name} did not answer within {timeout:.1f} s ({why}); "
                    "narrow the query (shorter range, fewer series) or try again",
                    retryable=not bounded_by_deadline,
                ),
                hung=True,
            )
        if "exc" in box:
            return _Outcome(error=_error_from_exception(spec, box["exc"]))
        return _coerce_output(spec, box.get("output"))

    # -- redaction -------------------------------------------------------------------
    def _redact(self, result: ToolResult) -> ToolResult:
        r = self.redactor
        total = 0
        data, n = r.redact_obj(result.data)
        total += n
        scope, n = r.redact_obj(result.scope)
        total += n
        args, n = r.redact_obj(result.args)
        total += n
        refs, n = r.redact_obj(list(result.source_refs))
        total += n
        error = result.error
        if error is not None:
            message, n = r.redact_text(error.message)
            total += n
            error = error.model_copy(update={"message": message})
        return result.model_copy(
            update={
                "data": data,
                "scope": scope,
                "args": args,
                "source_refs": refs,
                "error": error,
                "redactions": result.redactions + total,
            }
        )


def _marks_down(error: ToolErrorInfo | None) -> bool:
    """Refused, unresolvable or silent: the source is down. A time-out bounded by the task's
    own remaining time (not retryable) says nothing about the source."""
    if error is None or error.code not in DOWN_CODES:
        return False
    return error.code == "unreachable" or error.retryable


def _interrupted(spec: ToolSpec) -> ToolErrorInfo:
    return ToolErrorInfo(
        code="interrupted",
        message=f"{spec.name} was stopped: the investigation was interrupted",
        retryable=False,
    )


def _compact(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in args.items() if v is not None}


def _error_from_exception(spec: ToolSpec, exc: BaseException) -> ToolErrorInfo:
    if isinstance(exc, ToolFailure):
        return ToolErrorInfo(code=exc.code, message=exc.message, retryable=exc.retryable)
    if isinstance(exc, TimeoutError):
        return ToolErrorInfo(code="timeout", message=f"{spec.name}: {exc}", retryable=True)
    return ToolErrorInfo(
        code="internal",
        message=f"{spec.name} failed unexpectedly: {type(exc).__name__}: {exc}",
        retryable=False,
    )


def _coerce_output(spec: ToolSpec, value: Any) -> _Outcome:
    if isinstance(value, ToolOutput):
        return _Outcome(output=value)
    if isinstance(value, Mapping):
        try:
            return _Outcome(output=ToolOutput.model_validate(dict(value)))
        except ValidationError as exc:
            message = f"{spec.name} returned a malformed result: {exc.error_count()} problem(s)"
            return _Outcome(error=ToolErrorInfo(code="bad_response", message=message))
    return _Outcome(
        error=ToolErrorInfo(
            code="internal",
            message=f"{spec.name} returned {type(value).__name__}, not a ToolOutput",
        )
    )
