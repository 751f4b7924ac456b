"""``opsmate doctor``: checks config, credentials, each data source, the model and the index.

A password written into a configured URL (``http://admin:pw@host``) is a warning naming
the key, with the ``opsmate auth set`` command that replaces it.

Each check is ``{check, status: ok|warn|fail, detail, fix}``; ``--json`` prints the list,
otherwise a table. Sources and model servers are probed concurrently by
:class:`opsmate.health.Probes` (a total deadline of 5 s each, started before the
local checks run), so the whole doctor stays under 10 s whatever a server does.

Exit codes: 0 no check failed (warnings allowed); 3 a data source or model server is
unreachable; 2 any other failure (invalid config, refused credentials, missing model
file: all fixed by changing configuration).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from opsmate.config import Settings, load_settings
from opsmate.config import config_path as find_config
from opsmate.credentials import ENV_VARS, get_credential, keyring_backend_name
from opsmate.errors import ConfigError, ExitCode, OpsmateError
from opsmate.health import Check
from opsmate.probes import (  # shared with the TUI's health view
    check_index,
    check_model,
    start_model_probe,
    start_source_probes,
)


# -- config and credentials ---------------------------------------------------------
def check_config(path: Path | None) -> tuple[Check, Settings | None]:
    try:
        settings = load_settings(path)
    except ConfigError as exc:
        return Check("config", "fail", exc.message, exc.hint or "fix the key named above"), None
    found, _ = find_config(path)
    if found is None:
        return (
            Check(
                "config",
                "warn",
                "no config file; using defaults and OPSMATE_ variables",
                "copy configs/example.yaml to ~/.config/opsmate/config.yaml",
            ),
            settings,
        )
    return Check("config", "ok", f"loaded {found}"), settings


def check_environments(settings: Settings) -> list[Check]:
    checks = []
    if not settings.environments:
        checks.append(
            Check(
                "environments",
                "warn",
                "no environments configured: only bundles and runbook search will work",
                "add environments.<name>.prometheus/elasticsearch/kubernetes to the config",
            )
        )
    default = settings.default_environment
    if default and settings.environments and default not in settings.environments:
        checks.append(
            Check(
                "default_environment",
                "warn",
                f"'{default}' is not one of the configured environments "
                f"({', '.join(settings.environments)})",
                "set default_environment to a configured environment",
            )
        )
    return checks


def check_credentials(settings: Settings) -> list[Check]:
    checks = []
    backend = keyring_backend_name()
    if backend is None:
        names = ", ".join(v for s in ENV_VARS.values() for v in s.values())
        checks.append(
            Check(
                "keyring",
                "warn",
                "no system keyring available: credentials can only come from env variables",
                f"use {names}",
            )
        )
    else:
        checks.append(Check("keyring", "ok", backend))
    for env, cfg in settings.environments.items():
        for source in ("prometheus", "elasticsearch", "alertmanager"):
            if getattr(cfg, source, None) is None:
                continue
            cred = get_credential(source, env)
            name = f"credentials {source}[{env}]"
            if cred is None:
                checks.append(
                    Check(
                        name,
                        "ok",
                        "none stored (fine when the source needs no authentication)",
                        f"if it does: opsmate auth set {source} --env {env}",
                    )
                )
            else:
                checks.append(Check(name, "ok", cred.describe()))
    return checks


_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/\s:@]*):([^@\s/]+)@")


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """(dotted key, text) of every string in a settings dump."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}[{i}]")


def check_config_passwords(settings: Settings) -> list[Check]:
    """A configured URL with ``user:password@`` in it: the password sits in a plain file
    (and in every copy of it). Warn, and say how to move it to the keyring."""
    from opsmate.credentials import SOURCES

    checks = []
    for key, text in _strings(settings.model_dump(mode="json"), ""):
        m = _URL_PASSWORD.search(text)
        if m is None:
            continue
        user = m.group(2)
        parts = key.split(".")
        source = parts[2] if len(parts) > 3 and parts[0] == "environments" else None
        clean_url = text[: m.start()] + m.group(1) + text[m.end() :]  # without user:pass@
        if source in SOURCES:
            env = parts[1]
            fix = (
                f"set {key} to {clean_url} and store the password in the keyring: "
                f"opsmate auth set {source} --env {env}"
                + (f" --username {user}" if user else "")
                + f" (or set {ENV_VARS[source]['username']} and "
                f"{ENV_VARS[source]['password']})"
            )
        else:
            fix = (
                f"remove the user and password from {key}: opsmate reads credentials from "
                "the system keyring (opsmate auth set) or OPSMATE_ variables, never the config"
            )
        checks.append(Check(f"config {key}", "warn", f"{key}: the URL carries a password", fix))
    return checks


# -- model, index, embeddings -----------------------------------------------------
def check_embeddings(settings: Settings) -> Check:
    emb = settings.embedding
    if emb.backend == "none":
        return Check("embeddings", "ok", "none: runbook search is BM25 only")
    if emb.backend == "onnx":
        from opsmate.knowledge.embeddings import onnx_available, onnx_model_dir

        folder = onnx_model_dir(emb)
        if onnx_available(emb):
            return Check("embeddings", "ok", f"MiniLM ONNX files in {folder}")
        return Check(
            "embeddings",
            "warn",
            f"MiniLM ONNX files missing in {folder}",
            "run opsmate index once with network access, or copy model.onnx and "
            "tokenizer.json there (or set embedding.backend: none)",
        )
    if emb.backend == "gguf":
        p = Path(emb.model_path).expanduser() if emb.model_path else None
        if p is None or not p.is_file():
            return Check(
                "embeddings",
                "fail",
                f"gguf embedding model not found: {p}",
                "set embedding.model_path",
            )
        return Check("embeddings", "ok", f"gguf: {p}")
    if not emb.url or not emb.model:
        return Check(
            "embeddings", "fail", "openai backend needs url and model", "set embedding.url / model"
        )
    return Check("embeddings", "ok", f"openai-compatible: {emb.url} ({emb.model})")


def check_tools(settings: Settings) -> Check:
    """Which tools the configured sources serve; a source module that failed to import."""
    from opsmate.tools.registry import live_registry

    try:
        registry = live_registry(settings)
    except Exception as exc:
        return Check("tools", "fail", f"building the tools failed: {exc}", "see the error above")
    names = ", ".join(registry.names()) or "none (no source configured)"
    if registry.skipped:
        why = "; ".join(f"{m}: {e}" for m, e in registry.skipped.items())
        return Check("tools", "warn", f"{names}; unavailable: {why}", "reinstall opsmate")
    return Check("tools", "ok", names)


def check_runbooks(settings: Settings) -> list[Check]:
    out = []
    for p in settings.runbook_paths():
        if not p.exists():
            out.append(
                Check(f"runbooks {p}", "warn", "folder not found", "fix runbooks in the config")
            )
    return out


# -- command ------------------------------------------------------------------------
def run_checks(config_file: Path | None, index_dir: Path | None) -> list[Check]:
    """Every check, in report order."""
    config_check, settings = check_config(config_file)
    checks = [config_check]
    if settings is None:
        return checks
    sources = start_source_probes(settings)  # network probes run while the rest is checked
    model = start_model_probe(settings)
    checks += check_environments(settings)
    checks += check_config_passwords(settings)
    checks += check_credentials(settings)
    checks += sources.results()
    checks.append(check_tools(settings))
    checks.append(model.results()[0] if model is not None else check_model(settings))
    checks.append(check_index(settings, index_dir))
    checks.append(check_embeddings(settings))
    checks += check_runbooks(settings)
    return checks


def exit_code(checks: list[Check]) -> int:
    fails = [c for c in checks if c.status == "fail"]
    if not fails:
        return int(ExitCode.OK)
    if any(c.unreachable for c in fails):
        return int(ExitCode.UNREACHABLE)
    return int(ExitCode.USAGE)


class DoctorFailed(OpsmateError):
    """At least one check failed; carries the exit code."""

    def __init__(self, failed: list[Check], code: int) -> None:
        names = ", ".join(c.check for c in failed)
        super().__init__(f"{len(failed)} check(s) failed: {names}")
        self.exit_code = ExitCode(code)


def _print_table(checks: list[Check]) -> None:
    """One block per check: its status and name, then the detail and the fix on lines of
    their own, wrapped at spaces only (a URL, a path or a variable name is never cut, as
    the columns of a table cut them at 80 columns)."""
    from rich.console import Console
    from rich.padding import Padding
    from rich.text import Text

    style = {"ok": "green", "warn": "yellow", "fail": "red"}
    console = Console()
    console.print(Text("opsmate doctor", style="bold"))
    for c in checks:
        head = Text.assemble((f"{c.status:<5}", style[c.status]), " ", (c.check, "bold"))
        console.print(head, overflow="ignore", crop=False)
        body = Text(c.detail, overflow="fold")
        if c.fix:
            body.append("\nfix: ", style="dim")
            body.append(c.fix)
        console.print(Padding(body, (0, 0, 0, 6), expand=False))


def run_doctor(*, json_out: bool, index_dir: Path | None, config_path: Path | None) -> None:
    """Implements ``opsmate doctor``; exits with the code described in the module docstring."""
    from opsmate.tools.redact import default_redactor

    checks = run_checks(config_path, index_dir)
    redactor = default_redactor()  # a URL in an error message may carry a password
    for c in checks:
        c.detail = redactor.clean(c.detail)  # redacted, no terminal control characters
        c.fix = redactor.clean(c.fix)
    if json_out:
        typer.echo(json.dumps([c.to_json() for c in checks], indent=2, ensure_ascii=False))
    else:
        _print_table(checks)
    code = exit_code(checks)
    if code:  # a probe still in flight is abandoned by the CLI's exit (cli.exit_process)
        raise DoctorFailed([c for c in checks if c.status == "fail"], code)
