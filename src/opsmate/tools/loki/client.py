"""One environment's connection to Loki's HTTP API (httpx), with errors as ToolFailures.

Endpoints used: ``GET /loki/api/v1/query_range`` (log queries answer
``{"status": "success", "data": {"resultType": "streams", "result": [{"stream": {...},
"values": [["<ns epoch>", "<line>"], ...]}], "stats": {...}}}``; metric queries answer
``resultType: "matrix"`` with ``[[<epoch seconds>, "<value>"], ...]`` per series),
``GET /loki/api/v1/labels`` and ``GET /loki/api/v1/label/<name>/values``. Loki answers a
query it cannot parse with HTTP 400 and a plain-text reason, which becomes
``bad_request`` with that reason.

Credentials: a bearer token (``OPSMATE_LOKI_TOKEN``) or basic auth
(``OPSMATE_LOKI_USERNAME`` / ``OPSMATE_LOKI_PASSWORD``), or the keyring once the
credential store knows the ``loki`` source; ``tenant`` is sent as ``X-Scope-OrgID``.
"""

from __future__ import annotations

import base64
import json
import os
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import quote as url_quote

from opsmate.tools.base import CallContext, ToolFailure, http_status_code

if TYPE_CHECKING:
    from opsmate.config import LokiSource

__all__ = ["LokiClient", "auth_headers"]


def auth_headers(env: str, src: LokiSource) -> dict[str, str]:
    """The headers that carry the tenant and the credential of ``env``'s Loki."""
    headers: dict[str, str] = {"Accept": "application/json"}
    if src.tenant:
        headers["X-Scope-OrgID"] = src.tenant
    from opsmate import credentials

    if "loki" in getattr(credentials, "SOURCES", ()):
        cred = credentials.get_credential("loki", env)
        if cred is not None:
            headers.update(cred.headers())
            return headers
    token = os.environ.get("OPSMATE_LOKI_TOKEN")
    user, password = (
        os.environ.get("OPSMATE_LOKI_USERNAME"),
        os.environ.get("OPSMATE_LOKI_PASSWORD"),
    )
    if token:
        headers["Authorization"] = f"Bearer {token}"
    elif user and password is not None:
        raw = base64.b64encode(f"{user}:{password}".encode()).decode()
        headers["Authorization"] = f"Basic {raw}"
    return headers


class LokiClient:
    """GETs against one Loki; every failure is raised as a :class:`ToolFailure`."""

    def __init__(self, env: str, src: LokiSource) -> None:
        import httpx

        self.env, self.src = env, src
        self.url = src.url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.url,
            headers=auth_headers(env, src),
            verify=src.verify_tls,
            timeout=src.timeout,
            follow_redirects=False,
        )

    def _timeout(self, ctx: CallContext | None) -> float:
        if ctx is None or ctx.deadline is None:
            return self.src.timeout
        return max(min(self.src.timeout, ctx.deadline - time.monotonic()), 0.05)

    def get(self, path: str, params: dict[str, Any], ctx: CallContext | None = None) -> Any:
        """The ``data`` of a successful answer to ``GET path?params``."""
        import httpx

        from opsmate.tools.wallclock import httpx_get

        limit = self._timeout(ctx)
        try:  # the whole request within ``limit`` of wall-clock time, answer included
            resp = httpx_get(self._http, path, deadline=time.monotonic() + limit, params=params)
        except httpx.TimeoutException as exc:
            raise ToolFailure(
                "timeout", f"Loki at {self.url} did not answer within {limit:.1f} s", retryable=True
            ) from exc
        except httpx.ConnectError as exc:
            text = str(exc).lower()
            if "ssl" in text or "certificate" in text:
                raise ToolFailure(
                    "unreachable",
                    f"TLS error talking to Loki at {self.url}: {exc}; check the URL or "
                    f"environments.{self.env}.loki.verify_tls",
                ) from exc
            why = "connection failed"
            if "name or service" in text or "resolve" in text or "nodename" in text:
                why = "its host name does not resolve"
            elif "refused" in text:
                why = "connection refused"
            raise ToolFailure(
                "unreachable", f"Loki at {self.url} is unreachable: {why}", retryable=True
            ) from exc
        except httpx.HTTPError as exc:
            raise ToolFailure(
                "unreachable", f"Loki at {self.url}: {type(exc).__name__}: {exc}", retryable=True
            ) from exc
        if resp.status_code != 200:
            raise self._status_failure(resp.status_code, resp.text, resp.headers.get("location"))
        try:
            payload = resp.json()
        except (ValueError, json.JSONDecodeError) as exc:
            raise ToolFailure(
                "bad_response", f"Loki at {self.url} sent a malformed answer: {exc}"
            ) from exc
        if not isinstance(payload, dict) or payload.get("status") != "success":
            raise ToolFailure("bad_response", f"Loki at {self.url}: not a success answer")
        return payload.get("data")

    def _status_failure(self, status: int, body: str, location: str | None) -> ToolFailure:
        detail = body.strip()[:500] or f"HTTP {status}"
        if status in (401, 403):
            return ToolFailure(
                "auth",
                f"Loki at {self.url} refused the credentials (HTTP {status}): {detail}; set "
                "OPSMATE_LOKI_TOKEN (or OPSMATE_LOKI_USERNAME / OPSMATE_LOKI_PASSWORD), and "
                f"environments.{self.env}.loki.tenant on a multi-tenant Loki",
            )
        if 300 <= status < 400:
            return ToolFailure(
                "bad_response",
                f"Loki at {self.url} answered with a redirect (HTTP {status} to "
                f"{location or 'no Location'}); point environments.{self.env}.loki.url at the "
                "final address",
            )
        code, retry = http_status_code(status)
        if code == "bad_request":
            return ToolFailure("bad_request", f"Loki rejected the query: {detail}")
        return ToolFailure(code, f"Loki at {self.url}: HTTP {status}: {detail}", retryable=retry)

    def query_range(
        self,
        query: str,
        *,
        start_ns: int,
        end_ns: int,
        ctx: CallContext | None,
        limit: int | None = None,
        direction: str = "backward",
        step_s: float | None = None,
    ) -> dict[str, Any]:
        """``data`` of ``/loki/api/v1/query_range`` (streams or matrix, checked)."""
        params: dict[str, Any] = {
            "query": query,
            "start": str(start_ns),
            "end": str(end_ns),
            "direction": direction,
        }
        if limit is not None:
            params["limit"] = str(min(limit, self.src.max_lines))
        if step_s is not None:
            params["step"] = f"{step_s:g}"
        data = self.get("/loki/api/v1/query_range", params, ctx)
        if (
            not isinstance(data, dict)
            or data.get("resultType") not in ("streams", "matrix")
            or not isinstance(data.get("result"), list)
        ):
            raise ToolFailure(
                "bad_response", f"Loki at {self.url}: no streams or matrix result in the answer"
            )
        return data

    def labels(self, ctx: CallContext | None = None) -> list[str]:
        """Label names Loki knows (``/loki/api/v1/labels``)."""
        data = self.get("/loki/api/v1/labels", {}, ctx)
        return [str(x) for x in data] if isinstance(data, list) else []

    def label_values(
        self, name: str, ctx: CallContext | None = None, *, query: str | None = None
    ) -> list[str]:
        """Values of one label (``/loki/api/v1/label/<name>/values``)."""
        params = {"query": query} if query else {}
        data = self.get(f"/loki/api/v1/label/{url_quote(name, safe='')}/values", params, ctx)
        return sorted(str(x) for x in data) if isinstance(data, list) else []

    def close(self) -> None:
        self._http.close()
