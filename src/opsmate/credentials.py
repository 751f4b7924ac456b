"""Data-source credentials: the system keyring first, environment variables as fallback.

Never in config files, never logged: :class:`Credential` hides its secret in ``repr``.

Keyring entries (service ``opsmate``), written by ``opsmate auth set``:

- ``prometheus:<env>``: bearer token
- ``elasticsearch:<env>``: API key (sent as ``Authorization: ApiKey <key>``)
- ``<source>:<env>:username`` and ``<source>:<env>:password``: basic auth (``--username``)

``<env>`` is the environment name, or ``default`` for an entry that serves every
environment without one of its own.

Environment variables (used when the keyring has nothing for the source; they apply
to every environment):

- ``OPSMATE_PROMETHEUS_TOKEN`` (bearer token), or ``OPSMATE_PROMETHEUS_USERNAME`` +
  ``OPSMATE_PROMETHEUS_PASSWORD`` (basic auth)
- ``OPSMATE_ELASTICSEARCH_API_KEY``, or ``OPSMATE_ELASTICSEARCH_USERNAME`` +
  ``OPSMATE_ELASTICSEARCH_PASSWORD``
- ``OPSMATE_ALERTMANAGER_TOKEN`` (bearer), or ``OPSMATE_ALERTMANAGER_USERNAME`` +
  ``OPSMATE_ALERTMANAGER_PASSWORD``
- ``OPSMATE_LOKI_TOKEN`` (bearer), or ``OPSMATE_LOKI_USERNAME`` + ``OPSMATE_LOKI_PASSWORD``
- ``OPSMATE_WATCH_TOKEN``: the bearer token ``opsmate watch`` demands of webhook requests
  (keyring entry ``watch:default``)
"""

from __future__ import annotations

import base64
import logging
import os
from dataclasses import dataclass, field
from typing import Any, Literal

from opsmate.errors import UsageError

SERVICE = "opsmate"
SOURCES = ("prometheus", "elasticsearch", "loki", "alertmanager", "watch")
DEFAULT_ENV = "default"

ENV_VARS: dict[str, dict[str, str]] = {
    "prometheus": {
        "token": "OPSMATE_PROMETHEUS_TOKEN",
        "username": "OPSMATE_PROMETHEUS_USERNAME",
        "password": "OPSMATE_PROMETHEUS_PASSWORD",
    },
    "elasticsearch": {
        "token": "OPSMATE_ELASTICSEARCH_API_KEY",
        "username": "OPSMATE_ELASTICSEARCH_USERNAME",
        "password": "OPSMATE_ELASTICSEARCH_PASSWORD",
    },
    "loki": {
        "token": "OPSMATE_LOKI_TOKEN",
        "username": "OPSMATE_LOKI_USERNAME",
        "password": "OPSMATE_LOKI_PASSWORD",
    },
    "alertmanager": {
        "token": "OPSMATE_ALERTMANAGER_TOKEN",
        "username": "OPSMATE_ALERTMANAGER_USERNAME",
        "password": "OPSMATE_ALERTMANAGER_PASSWORD",
    },
    # the bearer token `opsmate watch` demands of Alertmanager's webhook requests
    "watch": {
        "token": "OPSMATE_WATCH_TOKEN",
        "username": "OPSMATE_WATCH_USERNAME",
        "password": "OPSMATE_WATCH_PASSWORD",
    },
}

log = logging.getLogger(__name__)


class KeyringUnavailable(UsageError):
    """No usable keyring backend on this machine."""


@dataclass(frozen=True)
class Credential:
    """A token (bearer / API key) or a username + password for one source."""

    source: str
    environment: str | None
    origin: Literal["keyring", "env"]
    token: str | None = field(default=None, repr=False)
    username: str | None = None
    password: str | None = field(default=None, repr=False)

    @property
    def kind(self) -> str:
        return "token" if self.token else "basic"

    def headers(self) -> dict[str, str]:
        """HTTP headers carrying this credential."""
        if self.token:
            scheme = "ApiKey" if self.source == "elasticsearch" else "Bearer"
            return {"Authorization": f"{scheme} {self.token}"}
        if self.username is not None and self.password is not None:
            raw = f"{self.username}:{self.password}".encode()
            return {"Authorization": "Basic " + base64.b64encode(raw).decode()}
        return {}

    def basic_auth(self) -> tuple[str, str] | None:
        if self.username is not None and self.password is not None and not self.token:
            return (self.username, self.password)
        return None

    def describe(self) -> str:
        """Where it came from and what kind it is, without the secret."""
        who = f" as {self.username}" if self.username and not self.token else ""
        return f"{self.kind}{who} from {self.origin}"


def check_source(source: str) -> str:
    if source not in SOURCES:
        raise UsageError(f"unknown source '{source}'; use one of: {', '.join(SOURCES)}")
    return source


def key_name(source: str, env: str | None, part: str | None = None) -> str:
    base = f"{source}:{env or DEFAULT_ENV}"
    return f"{base}:{part}" if part else base


def _keyring() -> Any:
    """The keyring backend, or KeyringUnavailable when there is none usable."""
    try:
        import keyring
        from keyring.backends import fail, null
    except ImportError as exc:  # pragma: no cover - keyring is a dependency
        raise KeyringUnavailable("the keyring package is not installed", hint=_env_hint()) from exc
    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring | null.Keyring):
        raise KeyringUnavailable(
            f"no system keyring is available here ({type(backend).__module__})",
            hint=_env_hint(),
        )
    return backend


def _env_hint() -> str:
    names = ", ".join(v for source in ENV_VARS.values() for v in source.values())
    return f"set the credentials in environment variables instead: {names}"


def keyring_backend_name() -> str | None:
    """The usable keyring backend's name, or None."""
    try:
        backend = _keyring()
    except KeyringUnavailable:
        return None
    return f"{type(backend).__module__}.{type(backend).__name__}"


def _from_keyring(source: str, env: str | None) -> Credential | None:
    try:
        backend = _keyring()
    except KeyringUnavailable:
        return None
    envs = [env, DEFAULT_ENV] if env and env != DEFAULT_ENV else [DEFAULT_ENV]
    for name in envs:
        try:
            token = backend.get_password(SERVICE, key_name(source, name))
            user = backend.get_password(SERVICE, key_name(source, name, "username"))
            password = backend.get_password(SERVICE, key_name(source, name, "password"))
        except Exception as exc:  # a locked or broken keyring: fall back to env vars
            log.debug("keyring read failed: %s", type(exc).__name__)
            return None
        if token:
            return Credential(source, env, "keyring", token=token)
        if user is not None and password is not None:
            return Credential(source, env, "keyring", username=user, password=password)
    return None


def _from_env(source: str, env: str | None) -> Credential | None:
    names = ENV_VARS[source]
    token = os.environ.get(names["token"])
    if token:
        return Credential(source, env, "env", token=token)
    user, password = os.environ.get(names["username"]), os.environ.get(names["password"])
    if user and password is not None:
        return Credential(source, env, "env", username=user, password=password)
    return None


def get_credential(source: str, env: str | None) -> Credential | None:
    """The credential for ``source`` in environment ``env``: keyring, then env vars."""
    check_source(source)
    return _from_keyring(source, env) or _from_env(source, env)


def store_credential(
    source: str, env: str | None, secret: str, *, username: str | None = None
) -> str:
    """Store a token (or, with ``username``, a password); returns the keyring entry name."""
    check_source(source)
    backend = _keyring()
    try:
        if username:
            backend.set_password(SERVICE, key_name(source, env, "username"), username)
            backend.set_password(SERVICE, key_name(source, env, "password"), secret)
            _delete_quietly(backend, key_name(source, env))
            return key_name(source, env, "username")
        backend.set_password(SERVICE, key_name(source, env), secret)
        for part in ("username", "password"):
            _delete_quietly(backend, key_name(source, env, part))
        return key_name(source, env)
    except KeyringUnavailable:
        raise
    except Exception as exc:
        raise KeyringUnavailable(
            f"the keyring refused to store the credential: {type(exc).__name__}",
            hint=_env_hint(),
        ) from exc


def delete_credential(source: str, env: str | None) -> list[str]:
    """Remove every entry of ``source`` for ``env``; returns the names that existed."""
    check_source(source)
    backend = _keyring()
    removed = []
    for part in (None, "username", "password"):
        name = key_name(source, env, part)
        if _delete_quietly(backend, name):
            removed.append(name)
    return removed


def _delete_quietly(backend: Any, name: str) -> bool:
    try:
        if backend.get_password(SERVICE, name) is None:
            return False
        backend.delete_password(SERVICE, name)
        return True
    except Exception:
        return False
