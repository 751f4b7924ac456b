"""A read-only Alertmanager API v2 client: ``GET /api/v2/alerts`` and ``GET /api/v2/silences``.

Nothing else is ever requested (``status()`` reads ``/api/v2/status`` for ``doctor``'s
version line). Every request ends within its time-out of wall-clock time, answer
included (:mod:`opsmate.tools.wallclock`): a server dripping its answer cannot hold it.
Credentials (bearer token or basic auth) come from :mod:`opsmate.credentials` (keyring
entry ``alertmanager:<env>``, or ``OPSMATE_ALERTMANAGER_TOKEN``). Every failure is a
:class:`ToolFailure` with a stable code (``unreachable``, ``timeout``, ``auth``,
``bad_response`` ...); callers outside the executor turn it into
:class:`~opsmate.errors.SourceUnreachableError` with :func:`unreachable_error`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from opsmate.errors import ConfigError, SourceUnreachableError
from opsmate.tools.alertmanager.model import Alert
from opsmate.tools.base import ToolFailure, http_status_code

if TYPE_CHECKING:
    from opsmate.config import AlertmanagerSource, Settings

MAX_ANSWER_BYTES = 32 << 20  # a bigger answer is not an alert list


@dataclass
class AlertmanagerClient:
    """One environment's Alertmanager (base URL without ``/api/v2``)."""

    url: str
    timeout: float = 15.0
    verify_tls: bool = True
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    environment: str | None = None

    @classmethod
    def from_source(cls, source: AlertmanagerSource, env: str | None) -> AlertmanagerClient:
        """The client for ``environments.<env>.alertmanager`` with its stored credential."""
        from opsmate.credentials import get_credential

        cred = get_credential("alertmanager", env)
        return cls(
            url=source.url.rstrip("/"),
            timeout=source.timeout,
            verify_tls=source.verify_tls,
            headers=cred.headers() if cred else {},
            environment=env,
        )

    # -- reads ------------------------------------------------------------------------
    def alerts(
        self,
        *,
        active: bool = True,
        silenced: bool = True,
        inhibited: bool = True,
        filters: list[str] | None = None,
        timeout: float | None = None,
    ) -> list[Alert]:
        """``GET /api/v2/alerts``: the alerts Alertmanager holds, with their silence state."""
        params: list[tuple[str, str | int | float | bool | None]] = [
            ("active", _flag(active)),
            ("silenced", _flag(silenced)),
            ("inhibited", _flag(inhibited)),
            ("unprocessed", "true"),
        ]
        params += [("filter", f) for f in filters or []]
        raw = self._get("/api/v2/alerts", params, timeout)
        if not isinstance(raw, list):
            raise ToolFailure("bad_response", f"Alertmanager at {self.url}: alerts not a list")
        return [Alert.from_api(a) for a in raw if isinstance(a, dict)]

    def silences(self, timeout: float | None = None) -> list[dict[str, Any]]:
        """``GET /api/v2/silences``: id, state, matchers, creator, comment, times."""
        raw = self._get("/api/v2/silences", [], timeout)
        if not isinstance(raw, list):
            raise ToolFailure("bad_response", f"Alertmanager at {self.url}: silences not a list")
        out = []
        for s in raw:
            if not isinstance(s, dict):
                continue
            status = s.get("status") if isinstance(s.get("status"), dict) else {}
            out.append(
                {
                    "id": str(s.get("id") or ""),
                    "state": str((status or {}).get("state") or ""),
                    "matchers": [m for m in s.get("matchers") or [] if isinstance(m, dict)],
                    "created_by": s.get("createdBy"),
                    "comment": s.get("comment"),
                    "starts_at": s.get("startsAt"),
                    "ends_at": s.get("endsAt"),
                }
            )
        return out

    def status(self, timeout: float | None = None) -> dict[str, Any]:
        """``GET /api/v2/status`` (version and cluster state; for health probes)."""
        raw = self._get("/api/v2/status", [], timeout)
        if not isinstance(raw, dict):
            raise ToolFailure("bad_response", f"{self.url} did not answer like Alertmanager")
        return raw

    # -- transport --------------------------------------------------------------------
    def _get(
        self,
        path: str,
        params: list[tuple[str, str | int | float | bool | None]],
        timeout: float | None,
    ) -> Any:
        import httpx

        from opsmate.tools.wallclock import httpx_get

        limit = timeout or self.timeout
        deadline = time.monotonic() + limit  # the whole request, answer included

        def too_large() -> Exception:
            return ToolFailure("too_large", f"Alertmanager at {self.url}: answer too large")

        try:
            with httpx.Client(verify=self.verify_tls, timeout=limit) as http:
                resp = httpx_get(
                    http,
                    self.url + path,
                    deadline=deadline,
                    params=params,
                    headers=self.headers,
                    max_bytes=MAX_ANSWER_BYTES,
                    on_large=too_large,
                )
        except httpx.TimeoutException as exc:
            raise ToolFailure(
                "timeout",
                f"Alertmanager at {self.url} did not answer within {limit:g} s",
                retryable=True,
            ) from exc
        except httpx.HTTPError as exc:
            text = str(exc).lower()
            why = "connection refused" if "refused" in text else type(exc).__name__
            if "name or service not known" in text or "resolve" in text:
                why = "its host name does not resolve"
            raise ToolFailure(
                "unreachable", f"Alertmanager at {self.url} is unreachable: {why}", retryable=True
            ) from exc
        if resp.status_code != 200:
            detail = resp.text.strip()[:300] or f"HTTP {resp.status_code}"
            code, retry = http_status_code(resp.status_code)
            hint = ""
            if code == "auth":
                hint = (
                    "; set a token with `opsmate auth set alertmanager` or "
                    "OPSMATE_ALERTMANAGER_TOKEN"
                )
            raise ToolFailure(
                code,
                f"Alertmanager at {self.url}: HTTP {resp.status_code}: {detail}{hint}",
                retryable=retry,
            )
        if len(resp.content) > MAX_ANSWER_BYTES:
            raise ToolFailure("too_large", f"Alertmanager at {self.url}: answer too large")
        try:
            return resp.json()
        except ValueError as exc:
            raise ToolFailure(
                "bad_response", f"Alertmanager at {self.url} did not answer with JSON"
            ) from exc


def _flag(value: bool) -> str:
    return "true" if value else "false"


def client_for(settings: Settings, env: str | None) -> AlertmanagerClient:
    """The client of environment ``env`` (the default environment when None).

    ConfigError naming the key when that environment has no Alertmanager."""
    name = env or settings.default_environment
    if name is None:
        configured = [e for e, c in settings.environments.items() if c.alertmanager]
        if len(configured) == 1:
            name = configured[0]
        else:
            raise ConfigError(
                "no environment given and no default_environment set",
                hint="pass --env ENV (environments with an Alertmanager: "
                f"{', '.join(configured) or 'none'})",
            )
    cfg = settings.environments.get(name)
    if cfg is None:
        known = ", ".join(settings.environments) or "none"
        raise ConfigError(f"environment '{name}' is not configured (configured: {known})")
    if cfg.alertmanager is None:
        raise ConfigError(
            f"no Alertmanager configured for environment '{name}'",
            hint=f"set environments.{name}.alertmanager.url in the config",
        )
    return AlertmanagerClient.from_source(cfg.alertmanager, name)


def unreachable_error(exc: ToolFailure) -> SourceUnreachableError | ConfigError:
    """The user-facing error for a failed read (exit 3; refused credentials exit 2)."""
    if exc.code == "auth":
        return ConfigError(exc.message)
    return SourceUnreachableError(exc.message)
