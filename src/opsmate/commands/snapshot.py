"""``opsmate snapshot``: capture live sources read-only into a redacted incident bundle.

Checks the flags and the ``--out`` path before reading anything, then runs
:func:`opsmate.capture.snapshot.take_snapshot` with a progress bar on stderr (a
terminal only) and prints what the bundle holds and what was not captured, and why.
Exit codes: 0 written (even with parts not captured: they are listed), 2 a bad flag,
path or config, or nothing to capture for the flags given (the message says what is
missing), 3 no source could be read at all.
"""

from __future__ import annotations

import sys
from pathlib import Path

from opsmate.config import load_settings
from opsmate.errors import ConfigError, SourceUnreachableError, UsageError
from opsmate.textsafe import safe_text


def run_snapshot(
    *,
    out: Path,
    env: str | None,
    namespace: str | None,
    services: list[str],
    since: str,
    alert: str | None,
    max_log_records: int,
    max_pod_log_lines: int,
    config_path: Path | None,
) -> None:
    """Implements ``opsmate snapshot`` (see the module docstring)."""
    from opsmate.capture.snapshot import SnapshotOptions, take_snapshot
    from opsmate.capture.writer import check_out_path
    from opsmate.timeparse import parse_duration

    out = check_out_path(out)
    try:
        window = parse_duration(since)
    except ValueError as exc:
        raise UsageError(f"--since {since!r}: {exc}", hint="e.g. --since 30m or 2h") from exc
    if window.total_seconds() <= 0:
        raise UsageError(f"--since {since!r}: the window must be longer than zero")
    settings = load_settings(config_path)
    env = env or settings.default_environment
    if not env:
        raise UsageError("no environment: pass --env or set default_environment in the config")
    env_cfg = settings.environments.get(env)
    if env_cfg is None:
        known = ", ".join(sorted(settings.environments)) or "none"
        raise ConfigError(f"--env {env}: no such environment in the config (known: {known})")
    if namespace is None and env_cfg.kubernetes is not None and env_cfg.kubernetes.namespaces:
        namespace = env_cfg.kubernetes.namespaces[0]
    opts = SnapshotOptions(
        env=env,
        namespace=namespace,
        services=list(services),
        since=window,
        alert=alert,
        max_log_records=max_log_records,
        max_pod_log_lines=max_pod_log_lines,
    )
    with _progress() as step:
        written = take_snapshot(settings, opts, out, step)
    if not written.captured:
        out.unlink(missing_ok=True)
        why = "; ".join(f"{n['what']}: {n['why']}" for n in written.not_captured[:6])
        if any(n["why"].split(":")[0] in _DOWN for n in written.not_captured):
            raise SourceUnreachableError(f"nothing could be captured: a source did not answer "
                                         f"({why})")  # fmt: skip
        raise UsageError(
            f"nothing was captured: the sources answered but held nothing for what was asked "
            f"({why})",
            hint="say what to capture: --namespace NS (objects, events, pod logs), "
            "--service S (its log records and series), --alert NAME",
        )
    lines = [f"bundle written: {written.path} ({written.bytes} bytes)"]
    lines += [f"  {c['what']}: {c.get('count', '')}" for c in written.captured]
    if written.not_captured:
        lines.append("not captured:")
        lines += [f"  {n['what']}: {n['why']}" for n in written.not_captured]
    if written.redactions:
        lines.append(f"{written.redactions} secret values were masked")
    sys.stdout.write(safe_text("\n".join(lines)) + "\n")


_DOWN = {"unreachable", "timeout", "auth", "server_error", "forbidden", "bad_response"}


class _progress:
    """A rich progress bar on stderr (a terminal only); ``step(text)`` advances it."""

    def __enter__(self):  # type: ignore[no-untyped-def]
        self.bar = None
        if not sys.stderr.isatty():
            return lambda _text: None
        from rich.console import Console
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn

        self.bar = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed} steps"),
            console=Console(stderr=True),
            transient=True,
        )
        self.bar.start()
        task = self.bar.add_task("snapshot", total=None)
        bar = self.bar

        def step(text: str) -> None:
            bar.update(task, description=safe_text(text)[:70], advance=1)

        return step

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
