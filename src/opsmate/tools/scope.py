"""Scope checks of tool arguments against the task's :class:`Constraints`, and cursor signing.

Rules (applied by the executor after argument validation, before anything runs):

- ``environment``: filled from ``constraints.environment`` when absent; a different one
  is ``rejected`` (``forbidden_scope``). Never widened.
- ``namespace``: must be one of ``constraints.namespaces`` when that list is non-empty;
  filled when it holds exactly one. With several and none asked, the argument stays
  empty and the tool must keep to ``ctx.constraints.namespaces`` (``scope["namespaces"]``).
- ``service``: the same against ``constraints.allowed_services``.
- time ranges (``from``/``to`` of logs, ``start``/``end`` of metrics): RFC 3339 or
  relative to ``now``; absent ends default to the task window (``window_from`` /
  ``window_to``, else ``now`` and ``now - max_window``); a range longer than
  ``max_window`` keeps its end and has its start moved up (narrowing, reported in
  ``scope["clamped"]``). A range outside the task window is allowed (a baseline
  before the incident is a fair question) and is flagged ``scope["outside_window"]``;
  it is only ever narrowed, never rejected for that. ``from`` after ``to`` is rejected.
- ``page_size``: clamped to ``constraints.max_page_size``.

Cursors: the executor wraps a tool's ``next_cursor`` as
``base64url(json{"v": 1, "c": tool cursor, "h": query hash, "t": pinned times})``. The
hash covers the tool name and its arguments except ``cursor`` and ``page_size``, so a
cursor handed to another query is ``rejected`` with ``bad_cursor``; the pinned times
keep every page of a relative window (``-30m``) on the first page's absolute times.
This is an integrity check against mix-ups (a model pasting the wrong cursor), not a
security boundary: the cursor is not encrypted or keyed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from opsmate.timeparse import format_time, parse_time
from opsmate.tools.base import Constraints

if TYPE_CHECKING:
    from opsmate.config import Settings

TIME_PAIRS: tuple[tuple[str, str], ...] = (("from", "to"), ("start", "end"))
CURSOR_VERSION = 1


class ScopeViolation(Exception):
    """A call the executor refuses; ``code`` is the envelope's error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class ScopedArgs:
    """Arguments after the scope check, and the ``scope`` to report."""

    args: dict[str, Any]
    scope: dict[str, Any] = field(default_factory=dict)
    tool_cursor: str | None = None  # the tool's own cursor, unwrapped
    ident: dict[str, Any] = field(default_factory=dict)  # what a cursor is bound to
    pinned: dict[str, str] = field(default_factory=dict)  # absolute times used
    skip: int = 0  # items of the tool's page already delivered (a page cut by the size budget)


def apply_scope(
    tool: str,
    args: dict[str, Any],
    constraints: Constraints,
    now: datetime,
) -> ScopedArgs:
    """Check and narrow ``args`` (validated, by alias) to ``constraints``; raise ScopeViolation."""
    out = dict(args)
    scope: dict[str, Any] = {}
    clamped: dict[str, Any] = {}

    if "environment" in out:
        _check_environment(out, constraints, scope)
    if "namespace" in out:
        _check_member(out, "namespace", constraints.namespaces, "namespaces", scope)
    if "service" in out:
        _check_member(out, "service", constraints.allowed_services, "services", scope)

    ident = dict(out)
    pinned: dict[str, str] = {}
    cursor = out.get("cursor")
    tool_cursor = None
    skip = 0
    if cursor:
        tool_cursor, pinned, skip = unwrap_cursor(tool, ident, cursor)

    used_times: dict[str, str] = {}
    for start_key, end_key in TIME_PAIRS:
        if start_key in out and end_key in out:
            _check_window(out, start_key, end_key, constraints, now, pinned, scope, clamped)
            used_times[start_key] = out[start_key]
            used_times[end_key] = out[end_key]

    if "page_size" in out and isinstance(out["page_size"], int):
        limit = constraints.max_page_size
        if out["page_size"] > limit:
            clamped["page_size"] = {"asked": out["page_size"], "used": limit}
            out["page_size"] = limit
        scope["page_size"] = out["page_size"]

    if clamped:
        scope["clamped"] = clamped
    return ScopedArgs(
        args=out, scope=scope, tool_cursor=tool_cursor, ident=ident, pinned=used_times, skip=skip
    )


def _check_environment(out: dict[str, Any], c: Constraints, scope: dict[str, Any]) -> None:
    asked = out.get("environment")
    if c.environment:
        if asked is None:
            out["environment"] = c.environment
        elif asked != c.environment:
            raise ScopeViolation(
                "forbidden_scope",
                f"the task is limited to environment '{c.environment}'; "
                f"'{asked}' is not allowed (drop the environment argument or use "
                f"'{c.environment}')",
            )
    if out.get("environment") is not None:
        scope["environment"] = out["environment"]


def _check_member(
    out: dict[str, Any], key: str, allowed: list[str], plural: str, scope: dict[str, Any]
) -> None:
    asked = out.get(key)
    if not allowed:
        if asked is not None:
            scope[key] = asked
        return
    if asked is None:
        if len(allowed) == 1:
            out[key] = allowed[0]
            scope[key] = allowed[0]
        else:
            scope[plural] = list(allowed)
        return
    if asked not in allowed:
        raise ScopeViolation(
            "forbidden_scope",
            f"{key} '{asked}' is outside the task's {plural}: {', '.join(allowed)}",
        )
    scope[key] = asked


def _check_window(
    out: dict[str, Any],
    start_key: str,
    end_key: str,
    c: Constraints,
    now: datetime,
    pinned: dict[str, str],
    scope: dict[str, Any],
    clamped: dict[str, Any],
) -> None:
    start_raw = pinned.get(start_key) or out.get(start_key)
    end_raw = pinned.get(end_key) or out.get(end_key)
    try:
        end = parse_time(end_raw, now) if end_raw else (c.window_to or now)
        if start_raw:
            start = parse_time(start_raw, now)
        elif c.window_from is not None and c.window_from < end:
            start = c.window_from
        else:
            start = end - c.max_window
    except ValueError as exc:
        key = end_key if end_raw and _unparsable(end_raw, now) else start_key
        raise ScopeViolation("invalid_arguments", f"argument '{key}': {exc}") from exc
    if start > end:
        raise ScopeViolation(
            "invalid_arguments",
            f"argument '{start_key}' ({format_time(start)}) is after '{end_key}' "
            f"({format_time(end)})",
        )
    if end - start > c.max_window:
        used = end - c.max_window
        clamped[start_key] = {"asked": format_time(start), "used": format_time(used)}
        start = used
    out[start_key] = format_time(start)
    out[end_key] = format_time(end)
    scope[start_key] = out[start_key]
    scope[end_key] = out[end_key]
    if (c.window_from and end < c.window_from) or (c.window_to and start > c.window_to):
        scope["outside_window"] = True


def _unparsable(text: str, now: datetime) -> bool:
    try:
        parse_time(text, now)
    except ValueError:
        return True
    return False


# -- cursors -------------------------------------------------------------------
def query_hash(tool: str, args: dict[str, Any]) -> str:
    """Identity of a query: the tool and its arguments except cursor and page size."""
    ident = {k: v for k, v in args.items() if k not in ("cursor", "page_size") and v is not None}
    blob = json.dumps([tool, ident], sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def wrap_cursor(
    tool: str,
    args_asked: dict[str, Any],
    cursor: str | None,
    pinned: dict[str, str],
    skip: int = 0,
) -> str:
    """The cursor handed out: the tool's cursor bound to the query that produced it.

    ``skip`` > 0 marks a page the size budget cut short: the next call asks the tool
    for the same page again (``cursor`` is the one that produced it, ``None`` for the
    first page) and drops the ``skip`` items already delivered, so nothing is lost.
    """
    payload: dict[str, Any] = {
        "v": CURSOR_VERSION,
        "c": cursor or "",
        "h": query_hash(tool, args_asked),
        "t": pinned,
    }
    if skip:
        payload["s"] = skip
    raw = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def unwrap_cursor(
    tool: str, args: dict[str, Any], cursor: str
) -> tuple[str | None, dict[str, str], int]:
    """The tool's own cursor, pinned times and items to skip; ScopeViolation otherwise."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        payload = json.loads(base64.urlsafe_b64decode(padded.encode()))
        if not isinstance(payload, dict) or payload.get("v") != CURSOR_VERSION:
            raise ValueError("not a cursor")
        inner, digest, pinned = payload["c"], payload["h"], payload.get("t") or {}
        skip = payload.get("s", 0)
        if not isinstance(inner, str) or not isinstance(pinned, dict):
            raise ValueError("not a cursor")
        if not isinstance(skip, int) or skip < 0:
            raise ValueError("not a cursor")
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeDecodeError) as exc:
        raise ScopeViolation(
            "bad_cursor",
            "cursor is not one this tool issued; pass next_cursor exactly as returned, "
            "or drop cursor to start from the first page",
        ) from exc
    if digest != query_hash(tool, args):
        raise ScopeViolation(
            "bad_cursor",
            "cursor belongs to a different query; repeat the arguments of the call that "
            "returned it (only page_size may change), or drop cursor to start over",
        )
    return inner or None, {str(k): str(v) for k, v in pinned.items()}, skip


# -- constraints from settings ----------------------------------------------------
def constraints_from_settings(
    settings: Settings,
    *,
    environment: str | None = None,
    services: list[str] | None = None,
    allowed_services: list[str] | None = None,
    window_from: datetime | None = None,
    window_to: datetime | None = None,
) -> Constraints:
    """Task constraints with the configured limits (tools.max_window_hours, max_page_size).

    ``environment`` defaults to ``settings.default_environment``; namespaces come from
    that environment's ``kubernetes.namespaces``.
    """
    env = environment or settings.default_environment
    env_cfg = settings.environment(env)
    namespaces = list(env_cfg.kubernetes.namespaces) if env_cfg and env_cfg.kubernetes else []
    return Constraints(
        environment=env,
        services=list(services or []),
        allowed_services=list(allowed_services or []),
        namespaces=namespaces,
        window_from=window_from,
        window_to=window_to,
        max_window=timedelta(hours=settings.tools.max_window_hours),
        max_page_size=settings.tools.max_page_size,
    )
