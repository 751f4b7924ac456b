"""``opsmate tui``: start the terminal UI over a bundle, the demo, or the live sources.

Only Textual and the TUI's own modules are imported before the first paint; the
configuration, the sources and the model are opened in a worker thread, so the
screen appears at once and shows loading progress (see benchmarks/bench_tui_startup.py).
"""

from __future__ import annotations

from pathlib import Path


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
