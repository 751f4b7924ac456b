"""``opsmate tool``: one tool call through the executor, exactly as the engine makes it.

``opsmate tool --list [--json]`` describes every tool (name, description, argument JSON
schema as ``parameters``, ``available`` here). ``opsmate tool NAME --args JSON`` runs a
call under the task constraints built from the config (``--env`` or
``default_environment``; its namespaces; the configured window and page limits), or
against a bundle (``--bundle``: the bundle's environment, window and capture time).
The call is audited like any other. Everything printed is redacted and free of terminal
control sequences (JSON strings carry no raw C1 or bidi control either).

Exit codes: 0 success / partial / no_data; 2 rejected (unknown tool, invalid arguments,
outside the constraints, bad cursor) or invalid ``--args`` JSON; 3 the source is
unreachable; 4 the tool failed internally; 1 any other error (timeout, auth,
server error, bad response, not available).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import typer

from opsmate.config import Settings, load_settings
from opsmate.errors import ExitCode, OpsmateError, UsageError
from opsmate.textsafe import dumps_json, safe_text
from opsmate.tools.base import Constraints, ToolResult
from opsmate.tools.redact import Redactor
from opsmate.tools.registry import ToolRegistry, catalog, live_registry
from opsmate.tools.scope import constraints_from_settings


class ToolCallFailed(OpsmateError):
    """The call's envelope was printed; this carries its exit code (and a line on stderr)."""

    def __init__(self, result: ToolResult, code: int) -> None:
        reason = result.error.code if result.error else result.status
        super().__init__(safe_text(f"{result.tool} {result.call_id}: {result.status} ({reason})"))
        self.exit_code = ExitCode(code)


def exit_code_for(result: ToolResult) -> int:
    """The process exit code for one envelope (see the module docstring)."""
    if result.status in ("success", "partial", "no_data"):
        return int(ExitCode.OK)
    code = result.error.code if result.error else ""
    if result.status == "rejected" or code == "not_configured":
        return int(ExitCode.USAGE)
    if code == "unreachable":
        return int(ExitCode.UNREACHABLE)
    if code == "internal":
        return int(ExitCode.INTERNAL)
    return int(ExitCode.PARTIAL)


def parse_args_json(text: str) -> dict[str, Any]:
    """``--args``: a JSON object; UsageError (exit 2) otherwise."""
    try:
        value = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--args is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            hint='quote it for the shell, e.g. --args \'{"query": "up"}\'',
        ) from exc
    if not isinstance(value, dict):
        raise UsageError(f"--args must be a JSON object, not {type(value).__name__}")
    return value


def open_index_retriever(settings: Settings, index_dir: Path | None) -> Any | None:
    """The runbook retriever over the local index, or None when there is no index yet
    (``search_runbooks`` is then not offered)."""
    from opsmate.errors import OpsmateError
    from opsmate.knowledge.retrieve import open_retriever

    path = settings.resolved_index_dir(index_dir)
    if settings.knowledge.backend == "embedded" and not path.exists():
        return None  # a shared backend (chroma-server, elasticsearch) has no local folder
    try:
        return open_retriever(path, settings)
    except OpsmateError:  # an empty or unreadable index: runbook search is unavailable
        return None


def _setup(
    settings: Settings, env: str | None, bundle: Path | None, index_dir: Path | None
) -> tuple[ToolRegistry, Constraints, datetime | None]:
    retriever = open_index_retriever(settings, index_dir)
    if bundle is None:
        registry = live_registry(settings, retriever=retriever)
        return registry, constraints_from_settings(settings, environment=env), None
    from opsmate.tools.bundle import load_bundle
    from opsmate.tools.bundle.load import check_bundle_environment

    loaded = load_bundle(bundle)
    meta = loaded.meta
    check_bundle_environment(meta.environment, env)
    registry = ToolRegistry(loaded.tool_specs(retriever))
    constraints = constraints_from_settings(
        settings,
        environment=env or meta.environment,
        window_from=meta.window_from,
        window_to=meta.window_to,
    )
    window = meta.window_to - meta.window_from
    if window > constraints.max_window:  # the bundle's own window is always allowed
        constraints = constraints.model_copy(update={"max_window": window})
    return registry, constraints, meta.captured_at


def run_tool(
    *,
    name: str | None,
    args_json: str,
    env: str | None,
    bundle: Path | None,
    list_tools: bool,
    json_out: bool,
    index_dir: Path | None,
    config_path: Path | None,
) -> None:
    """Implements ``opsmate tool``; raises ToolCallFailed with the call's exit code."""
    if not list_tools and not name:
        raise UsageError("name a tool (see: opsmate tool --list)")
    args = parse_args_json(args_json) if not list_tools else {}
    settings = load_settings(config_path)
    registry, constraints, now = _setup(settings, env, bundle, index_dir)

    if list_tools:  # recorded queries of a bundle appear in the schemas: clean them too
        entries = Redactor(settings.tools.redact_patterns).clean(catalog(registry))
        if json_out:
            typer.echo(dumps_json(entries, indent=2))
        else:
            _print_catalog(entries)
        return

    from opsmate.tools.executor import Executor

    executor = Executor(registry, constraints, config=settings.tools, now=now)
    result = executor.call(str(name), args)
    # the executor redacted the data; the name, cursor and hint are cleaned here too
    shown = ToolResult.model_validate(executor.redactor.clean(result.model_dump(mode="json")))
    if json_out:
        typer.echo(dumps_json(shown.model_dump(mode="json"), indent=2))
    else:
        _print_result(shown)
    code = exit_code_for(result)
    if code:
        raise ToolCallFailed(result, code)


# -- rendering ----------------------------------------------------------------------
def _arg_summary(schema: dict[str, Any]) -> str:
    required = set(schema.get("required", []))
    names = [f"{n}*" if n in required else n for n in schema.get("properties", {})]
    return ", ".join(names)


def _print_catalog(entries: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="tools (* required)", show_lines=False)
    table.add_column("tool", style="bold")
    table.add_column("here")
    table.add_column("arguments")
    table.add_column("description")
    for e in entries:
        here = "[green]yes[/]" if e.get("available") else "[dim]no[/]"
        table.add_row(e["name"], here, _arg_summary(e["parameters"]), e["description"])
    Console().print(table)


_STATUS_STYLE = {
    "success": "green",
    "partial": "yellow",
    "no_data": "cyan",
    "error": "red",
    "rejected": "red",
}


def _print_result(result: ToolResult) -> None:
    from rich.console import Console
    from rich.json import JSON
    from rich.markup import escape

    console = Console()
    style = _STATUS_STYLE.get(result.status, "white")
    console.print(
        f"[bold]{result.call_id}[/] {escape(result.tool)} → [{style}]{result.status}[/]"
        f" [dim]({result.elapsed_ms} ms, complete={str(result.complete).lower()},"
        f" redactions={result.redactions})[/]"
    )
    if result.args:
        console.print("[bold]args[/]", JSON.from_data(result.args))
    if result.scope:
        console.print("[bold]scope[/]", JSON.from_data(result.scope))
    if result.error:
        retry = "retryable" if result.error.retryable else "not retryable"
        console.print(f"[{style}]{result.error.code}[/] ({retry}): {escape(result.error.message)}")
    if result.truncated:
        console.print(
            f"[yellow]truncated[/]: {result.truncated.items_dropped} items dropped; "
            f"{escape(result.truncated.hint)}"
        )
    if result.data:  # the envelope's own read: its data printed as the answer's JSON
        console.print(JSON.from_data(result.data))
    if result.next_cursor:
        console.print(f"[bold]next_cursor[/] {result.next_cursor}")
    if result.source_refs:
        console.print("[bold]sources[/] " + escape(", ".join(result.source_refs[:20])))
