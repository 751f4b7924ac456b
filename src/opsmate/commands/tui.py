"""``opsmate tui``: start the terminal UI over a bundle, the demo, or the live sources.

Only Textual and the TUI's own modules are imported before the first paint; the
configuration, the sources and the model are opened in a worker thread, so the
screen appears at once and shows loading progress (see benchmarks/bench_tui_startup.py).

The TUI needs a terminal on both stdin and stdout: from cron, CI or a pipe it would
wait for keys that never come and write escape codes into a file, so it refuses
(exit 2) and points to ``opsmate diagnose``, before anything is drawn.
"""

from __future__ import annotations

import sys
from pathlib import Path

from opsmate.errors import UsageError


def require_terminal() -> None:
    """UsageError unless stdin and stdout are both terminals."""
    missing = [
        name
        for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout))
        if stream is None or not stream.isatty()
    ]
    if missing:
        raise UsageError(
            f"opsmate tui needs a terminal, but {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not one (cron, CI or a pipe)",
            hint='run a headless investigation instead: opsmate diagnose "QUESTION" '
            "--bundle PATH (or --demo) --json",
        )


def run_tui(
    *,
    bundle: Path | None,
    demo: bool,
    model: str | None,
    env: str | None,
    index_dir: Path | None,
    config_path: Path | None,
) -> None:
    """Run the app until the person quits (configuration errors are shown inside it)."""
    require_terminal()
    from opsmate.tui.app import OpsmateApp
    from opsmate.tui.bridge import LaunchOptions

    options = LaunchOptions(
        bundle=bundle,
        demo=demo,
        model=model,
        env=env,
        index_dir=index_dir,
        config_path=config_path,
    )
    OpsmateApp(options).run()
