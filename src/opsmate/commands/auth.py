"""``opsmate auth set|delete``: data-source credentials in the system keyring.

The secret is prompted for without echo (or read from one line of standard input
when it is not a terminal: ``printf %s "$TOKEN" | opsmate auth set prometheus``) and
is never printed. Where no keyring backend exists the command says so and names the
environment variables to use instead (see :mod:`opsmate.credentials`).
"""

from __future__ import annotations

import sys

import typer

from opsmate.credentials import (
    DEFAULT_ENV,
    check_source,
    delete_credential,
    store_credential,
)
from opsmate.errors import UsageError


def _read_secret(prompt: str) -> str:
    if sys.stdin is not None and sys.stdin.isatty():
        value = typer.prompt(prompt, hide_input=True, default="", show_default=False)
    else:
        line = sys.stdin.readline() if sys.stdin is not None else ""
        value = line.rstrip("\r\n")
    return str(value)


def run_auth_set(*, source: str, env: str | None, username: str | None) -> None:
    """Prompt for a token (or a password with ``--username``) and store it in the keyring."""
    check_source(source)
    what = "API key" if source == "elasticsearch" else "bearer token"
    if username:
        what = "password"
    where = env or DEFAULT_ENV
    secret = _read_secret(f"{source} {what} for environment '{where}'")
    if not secret.strip():
        raise UsageError(f"no {what} given; nothing stored")
    entry = store_credential(source, env, secret, username=username)
    who = f" (user {username})" if username else ""
    typer.echo(f"stored the {source} {what}{who} for environment '{where}' in the keyring")
    typer.echo(f"keyring entry: service 'opsmate', key '{entry}'", err=True)


def run_auth_delete(*, source: str, env: str | None) -> None:
    """Remove the stored credential of ``source`` for ``env`` (``default`` when absent)."""
    check_source(source)
    where = env or DEFAULT_ENV
    removed = delete_credential(source, env)
    if removed:
        typer.echo(f"removed the {source} credential for environment '{where}'")
    else:
        typer.echo(f"no {source} credential stored for environment '{where}'")
