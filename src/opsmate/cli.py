"""The ``opsmate`` command line (contracts section 1).

This module stays light: it imports no heavy library, so ``opsmate --help`` is
fast. Each command parses its flags here and hands over to
``opsmate.commands.<name>``, imported only when the command runs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from opsmate.errors import ExitCode, OpsmateError

app = typer.Typer(
    name="opsmate",
    help=(
        "Local-first, read-only operations assistant: searches runbooks, reads "
        "Prometheus, Elasticsearch and Kubernetes, and writes reports that cite "
        "their evidence.\n\nTry: opsmate diagnose --demo"
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
auth_app = typer.Typer(help="Store data-source credentials in the system keyring.")
app.add_typer(auth_app, name="auth")

ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help="Config file (YAML). Also OPSMATE_CONFIG; default ~/.config/opsmate/config.yaml.",
        envvar="OPSMATE_CONFIG",
        show_default=False,
    ),
]
IndexDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--index-dir", help="Index directory (default: the user data dir).", show_default=False
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine output on stdout (JSON).")]


def _print_version(value: bool) -> None:
    if value:
        from opsmate import __version__

        typer.echo(f"opsmate {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    ctx: typer.Context,
    config: ConfigOpt = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", is_eager=True, callback=_print_version
        ),
    ] = False,
    kube_context: Annotated[
        str | None,
        typer.Option(
            "--kube-context",
            help="Kubernetes context for every environment (overrides the config; "
            "also OPSMATE_KUBE_CONTEXT).",
            show_default=False,
        ),
    ] = None,
) -> None:
    if kube_context:
        import os

        os.environ["OPSMATE_KUBE_CONTEXT"] = kube_context
    ctx.obj = {"config": config}


def _config(ctx: typer.Context, local: Path | None) -> Path | None:
    if local is not None:
        return local
    obj = ctx.obj or {}
    value = obj.get("config")
    return value if isinstance(value, Path) or value is None else Path(value)


@app.command()
def index(
    ctx: typer.Context,
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Runbook folders or files (default: the configured runbook folders)."),
    ] = None,
    index_dir: IndexDirOpt = None,
    json_out: JsonOpt = False,
    embedding: Annotated[
        str | None,
        typer.Option("--embedding", help="Embedding backend: onnx | gguf | openai | none."),
    ] = None,
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            metavar="SERVER",
            help="Publish to the team's shared index at this URL instead (a Chroma server; "
            "Elasticsearch when knowledge.backend is elasticsearch): a new generation, "
            "then an atomic switch. For a CI job.",
        ),
    ] = None,
    config: ConfigOpt = None,
) -> None:
    """Index Markdown runbooks (incremental; atomic per document).

    Example: opsmate index runbooks/ --index-dir /tmp/idx --json
    Team index, from CI: opsmate index runbooks/ --to http://chroma.internal:8000 --json
    """
    from opsmate.commands.index import run_index

    run_index(
        paths=paths or [],
        index_dir=index_dir,
        json_out=json_out,
        embedding=embedding,
        config_path=_config(ctx, config),
        to=to,
    )


@app.command()
def search(
    ctx: typer.Context,
    query: Annotated[str | None, typer.Argument(help="What to look for.")] = None,
    index_dir: IndexDirOpt = None,
    top_k: Annotated[int, typer.Option("--top-k", min=1, max=100, help="Number of hits.")] = 5,
    mode: Annotated[
        str, typer.Option("--mode", help="hybrid | bm25 | vector", case_sensitive=False)
    ] = "hybrid",
    filters: Annotated[
        list[str] | None,
        typer.Option(
            "--filter",
            help="key=value metadata filter (service, environment, status); repeatable.",
        ),
    ] = None,
    batch: Annotated[
        Path | None,
        typer.Option(
            "--batch", help='JSONL file of {"id":..., "query":...}; one result line each.'
        ),
    ] = None,
    include_deprecated: Annotated[
        bool, typer.Option("--include-deprecated", help="Also return deprecated runbooks.")
    ] = False,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain", help="Show how the query was understood and why each hit ranked there."
        ),
    ] = False,
    json_out: JsonOpt = False,
    config: ConfigOpt = None,
) -> None:
    """Search runbooks: hybrid BM25 + vectors fused with RRF.

    Example: opsmate search "PoolTimeout after deploy" --filter environment=test
    """
    from opsmate.commands.search import run_search

    run_search(
        query=query,
        index_dir=index_dir,
        top_k=top_k,
        mode=mode.lower(),
        filters=filters or [],
        batch=batch,
        include_deprecated=include_deprecated,
        json_out=json_out,
        config_path=_config(ctx, config),
        explain=explain,
    )


@app.command()
def diagnose(
    ctx: typer.Context,
    question: Annotated[
        str | None,
        typer.Argument(help="What went wrong, in your words (default: the bundle's question)."),
    ] = None,
    env: Annotated[str | None, typer.Option("--env", help="Environment (constraint).")] = None,
    service: Annotated[
        list[str] | None, typer.Option("--service", help="Service in focus; repeatable.")
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Look back this far, e.g. 30m, 2h.")
    ] = None,
    bundle: Annotated[
        Path | None, typer.Option("--bundle", help="Incident bundle (directory or .tar.gz).")
    ] = None,
    demo: Annotated[bool, typer.Option("--demo", help="Run on the built-in demo bundle.")] = False,
    model: Annotated[
        str | None,
        typer.Option("--model", help="none | scripted:PATH | gguf:PATH | openai:URL#MODEL"),
    ] = None,
    max_steps: Annotated[
        int | None,
        typer.Option("--max-steps", min=1, help="Most tool steps (default: budget.max_steps)."),
    ] = None,
    timeout: Annotated[
        float | None, typer.Option("--timeout", min=1, help="Wall-clock budget, seconds.")
    ] = None,
    json_out: JsonOpt = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Markdown report on stdout.")
    ] = False,
    session_file: Annotated[
        Path | None,
        typer.Option(
            "--session",
            help="Save the session to FILE after the run; when FILE exists, load it and "
            "answer QUESTION as a follow-up. A session's environment, services, window and "
            "bundle are fixed when it starts: flags that disagree are an error.",
        ),
    ] = None,
    alert: Annotated[
        str | None,
        typer.Option(
            "--alert", help="Investigate a firing Alertmanager alert (name or fingerprint)."
        ),
    ] = None,
    alert_file: Annotated[
        Path | None,
        typer.Option(
            "--alert-file", help="Investigate the alerts of an Alertmanager webhook body (JSON)."
        ),
    ] = None,
    save_bundle: Annotated[
        Path | None,
        typer.Option(
            "--save-bundle", help="Also write everything the run read as a bundle (.tar.gz)."
        ),
    ] = None,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Investigate headless and print a report whose every claim cites evidence.

    Exit codes: 0 complete; 1 partial or refused; 2 usage/config error; 3 a data source
    unreachable; 4 internal error; 130 interrupted (a partial report is still printed).

    Examples: opsmate diagnose --demo;
    opsmate diagnose "order-service 5xx after the 10:00 release, test only" --env test --json
    """
    from opsmate.commands.diagnose import run_diagnose

    if json_out and markdown:
        from opsmate.errors import UsageError

        raise UsageError("--json and --markdown are exclusive")
    run_diagnose(
        question=question,
        env=env,
        services=service or [],
        since=since,
        bundle=bundle,
        demo=demo,
        model=model,
        max_steps=max_steps,
        timeout=timeout,
        json_out=json_out,
        markdown=markdown,
        index_dir=index_dir,
        config_path=_config(ctx, config),
        session_file=session_file,
        alert=alert,
        alert_file=alert_file,
        save_bundle=save_bundle,
    )


@app.command()
def alerts(
    ctx: typer.Context,
    env: Annotated[str | None, typer.Option("--env", help="Environment to read.")] = None,
    json_out: JsonOpt = False,
    config: ConfigOpt = None,
) -> None:
    """List firing alerts from the configured Alertmanager (or Prometheus).

    Examples: opsmate alerts; opsmate alerts --env test --json
    """
    from opsmate.commands.alerts import run_alerts

    run_alerts(env=env, json_out=json_out, config_path=_config(ctx, config))


@app.command()
def history(
    ctx: typer.Context,
    service: Annotated[
        str | None, typer.Option("--service", help="Only incidents of this service / subject.")
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Only incidents that started this recently, e.g. 30d."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Most incidents listed.")] = 100,
    json_out: JsonOpt = False,
    config: ConfigOpt = None,
) -> None:
    """List past incidents that watch and diagnose kept (history.*), newest first.

    A report names matching past incidents (same subject and cause kind) as seen_before
    H1, H2 ...: context, never evidence. Examples: opsmate history --since 30d;
    opsmate history --service order-service --json
    """
    from opsmate.commands.history import run_history

    run_history(
        service=service,
        since=since,
        limit=limit,
        json_out=json_out,
        config_path=_config(ctx, config),
    )


@app.command()
def watch(
    ctx: typer.Context,
    listen: Annotated[
        str, typer.Option("--listen", help="HOST:PORT to receive webhooks on (loopback default).")
    ] = "127.0.0.1:9095",
    out: Annotated[Path, typer.Option("--out", help="Folder the reports are written to.")] = Path(
        "opsmate-reports"
    ),
    bundle: Annotated[
        Path | None, typer.Option("--bundle", help="Diagnose against this bundle, not live.")
    ] = None,
    env: Annotated[str | None, typer.Option("--env", help="Environment (constraint).")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model spec.")] = None,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Receive Alertmanager webhooks and diagnose each firing group.

    Writes DIR/<time>-<alertname>.json and .md per group. Ctrl-C drains and exits 0.
    Example: opsmate watch --listen 127.0.0.1:9095 --out reports/
    """
    from opsmate.commands.watch import run_watch

    run_watch(
        listen=listen,
        out=out,
        bundle=bundle,
        env=env,
        model=model,
        index_dir=index_dir,
        config_path=_config(ctx, config),
    )


@app.command()
def snapshot(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option("--out", help="Bundle file to write (.tar.gz).")],
    env: Annotated[str | None, typer.Option("--env", help="Environment to capture.")] = None,
    namespace: Annotated[
        str | None, typer.Option("--namespace", help="Kubernetes namespace to capture.")
    ] = None,
    service: Annotated[
        list[str] | None, typer.Option("--service", help="Service in focus; repeatable.")
    ] = None,
    since: Annotated[str, typer.Option("--since", help="Window to capture, e.g. 1h.")] = "1h",
    alert: Annotated[
        str | None, typer.Option("--alert", help="Capture around this firing alert.")
    ] = None,
    max_log_records: Annotated[
        int, typer.Option("--max-log-records", min=0, help="Most log records captured.")
    ] = 20000,
    max_pod_log_lines: Annotated[
        int, typer.Option("--max-pod-log-lines", min=0, help="Most lines per pod log.")
    ] = 500,
    config: ConfigOpt = None,
) -> None:
    """Capture live sources read-only into a redacted incident bundle.

    Example: opsmate snapshot --env test --namespace shop --since 1h --out incident.tar.gz
    """
    from opsmate.commands.snapshot import run_snapshot

    run_snapshot(
        out=out,
        env=env,
        namespace=namespace,
        services=service or [],
        since=since,
        alert=alert,
        max_log_records=max_log_records,
        max_pod_log_lines=max_pod_log_lines,
        config_path=_config(ctx, config),
    )


@app.command()
def tui(
    ctx: typer.Context,
    bundle: Annotated[Path | None, typer.Option("--bundle", help="Investigate a bundle.")] = None,
    demo: Annotated[bool, typer.Option("--demo", help="Open the built-in demo bundle.")] = False,
    model: Annotated[str | None, typer.Option("--model", help="Model spec.")] = None,
    env: Annotated[str | None, typer.Option("--env", help="Environment (constraint).")] = None,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """The terminal UI."""
    from opsmate.commands.tui import run_tui

    run_tui(
        bundle=bundle,
        demo=demo,
        model=model,
        env=env,
        index_dir=index_dir,
        config_path=_config(ctx, config),
    )


@app.command()
def doctor(
    ctx: typer.Context,
    json_out: JsonOpt = False,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Check config, credentials, each data source, the model and the index."""
    from opsmate.commands.doctor import run_doctor

    run_doctor(json_out=json_out, index_dir=index_dir, config_path=_config(ctx, config))


@app.command("eval")
def eval_(
    ctx: typer.Context,
    scenarios: Annotated[
        list[Path] | None,
        typer.Argument(help="Scenario bundles or folders of them (default: the built-in suite)."),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model spec.")] = None,
    json_out: JsonOpt = False,
    config: ConfigOpt = None,
) -> None:
    """Run scenario bundles that carry expected.yaml and score them."""
    from opsmate.commands.evaluate import run_eval

    run_eval(
        scenarios=scenarios or [], model=model, json_out=json_out, config_path=_config(ctx, config)
    )


@app.command()
def tool(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="Tool name (see --list).")] = None,
    args: Annotated[str, typer.Option("--args", help="Arguments as a JSON object.")] = "{}",
    env: Annotated[str | None, typer.Option("--env", help="Environment (constraint).")] = None,
    bundle: Annotated[Path | None, typer.Option("--bundle", help="Serve from a bundle.")] = None,
    list_tools: Annotated[bool, typer.Option("--list", help="List tools and schemas.")] = False,
    json_out: JsonOpt = False,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Run one tool call through the executor and print its envelope.

    Exit codes: 0 success / partial / no_data; 1 other tool error; 2 rejected call or
    bad --args; 3 source unreachable; 4 internal error.

    Example: opsmate tool search_logs --args '{"service": "order-service", "level": "error"}'
    --bundle src/opsmate/data/demo/01-pool-exhaustion --json
    """
    from opsmate.commands.tool import run_tool

    run_tool(
        name=name,
        args_json=args,
        env=env,
        bundle=bundle,
        list_tools=list_tools,
        json_out=json_out,
        index_dir=index_dir,
        config_path=_config(ctx, config),
    )


@auth_app.command("set")
def auth_set(
    source: Annotated[
        str, typer.Argument(help="prometheus | elasticsearch | loki | alertmanager | watch")
    ],
    env: Annotated[str | None, typer.Option("--env", help="Environment it applies to.")] = None,
    username: Annotated[str | None, typer.Option("--username", help="Basic-auth user.")] = None,
) -> None:
    """Store a token or password in the system keyring (prompted, never echoed)."""
    from opsmate.commands.auth import run_auth_set

    run_auth_set(source=source, env=env, username=username)


@auth_app.command("delete")
def auth_delete(
    source: Annotated[
        str, typer.Argument(help="prometheus | elasticsearch | loki | alertmanager | watch")
    ],
    env: Annotated[str | None, typer.Option("--env")] = None,
) -> None:
    """Remove a stored credential."""
    from opsmate.commands.auth import run_auth_delete

    run_auth_delete(source=source, env=env)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: maps errors to the contract's exit codes.

    ``opsmate`` with no arguments prints the help on stdout (exit 0), as ``--help`` does.
    As the process's entry point (``argv`` None), a client call still in flight in one of
    opsmate's worker threads is abandoned cleanly at exit (:func:`exit_process`).
    """
    try:
        _main(argv)
    except SystemExit as done:
        if argv is not None:
            raise
        exit_process(done.code if isinstance(done.code, int) else (0 if done.code is None else 1))


def exit_process(code: int) -> None:
    """Exit with ``code``; when an opsmate worker thread (a probe, a tool call) is still in a
    client call, flush the output and end the process without interpreter teardown, which
    would otherwise tear the thread down mid-call and can abort (SIGABRT, exit -6)."""
    import os
    import threading

    busy = [
        t
        for t in threading.enumerate()
        if t is not threading.current_thread() and t.daemon and t.name.startswith("opsmate-")
    ]
    if not busy:
        sys.exit(code)
    import atexit
    import contextlib

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    atexit._run_exitfuncs()  # registered clean-ups (audit log, Kubernetes aborts) still run
    os._exit(code)


def _main(argv: list[str] | None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        args = ["--help"]
    try:
        rc = app(args=args, standalone_mode=False)
        if rc == ExitCode.INTERRUPTED:  # Ctrl-C before a command could report (typer's 130)
            _print_error("interrupted")
    except OpsmateError as exc:
        _print_error(str(exc))
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt:
        _print_error("interrupted")
        sys.exit(int(ExitCode.INTERRUPTED))
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:  # click usage errors and anything unexpected
        kinds = {cls.__name__ for cls in type(exc).__mro__}
        if "Abort" in kinds:
            _print_error("aborted")
            sys.exit(int(ExitCode.INTERRUPTED))
        if "ClickException" in kinds:
            exc.show()  # type: ignore[attr-defined]
            sys.exit(int(ExitCode.USAGE))
        import traceback

        traceback.print_exc()
        _print_error(f"internal error: {exc}")
        sys.exit(int(ExitCode.INTERNAL))
    sys.exit(rc if isinstance(rc, int) else 0)


def _print_error(message: str) -> None:
    from opsmate.tools.redact import clean

    sys.stderr.write(f"opsmate: error: {clean(message)}\n")  # it may echo bundle or config text
