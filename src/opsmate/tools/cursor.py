"""Paging cursors of ``search_logs``: an opaque, URL-safe token of a small JSON payload.

One codec for every log source. The payload carries the query's identity (``h``) so a
cursor is refused for a different query, and whatever the source needs to resume (a sort
position, a timestamp, an offset); each source checks its own fields.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

from opsmate.tools.base import ToolFailure


def encode_cursor(payload: dict[str, Any]) -> str:
    """The token for ``payload`` (compact JSON, base64url without padding)."""
    raw = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(
    cursor: str, ident: str, check: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    """The payload of a cursor of the query ``ident``; ``check`` raises on a payload that is
    not this source's. Anything else is ``bad_cursor`` with what to do."""
    try:
        payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if not isinstance(payload, dict):
            raise ValueError("not a cursor")
        check(payload)
    except (ValueError, TypeError, KeyError, binascii.Error, UnicodeDecodeError) as exc:
        raise ToolFailure(
            "bad_cursor", "cursor is not a search_logs cursor; drop it to start over"
        ) from exc
    if payload.get("h") != ident:
        raise ToolFailure(
            "bad_cursor",
            "cursor belongs to a different query; repeat the same arguments or drop cursor",
        )
    return payload
