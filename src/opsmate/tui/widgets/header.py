"""The one-line header: what is investigated, the model, and the health of each source.

Health comes from the same checks as ``opsmate doctor`` (run by the bridge in a
worker); until they answer, each source shows ``…``. While a session opens (a
local model can take seconds to load) the header shows that it is loading and for
how long, instead of the UI blocking.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from opsmate.tui.display import Formatter, model_label

_HEALTH_STYLE = {"ok": ("✓", "green"), "warn": ("!", "yellow"), "fail": ("✗", "red")}
# the latest report's status, as the report says it (never ``stopped_by``)
_STATUS_STYLE = {"complete": "bold green", "partial": "bold yellow", "refused": "bold red"}
_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class HeaderBar(Widget):
    """Title, investigated target, model and source health, on one line."""

    DEFAULT_CSS = """
    HeaderBar {
        height: 1;
        width: 1fr;
        background: $panel;
        color: $foreground;
    }
    """

    target: reactive[str] = reactive("")
    model: reactive[str] = reactive("")
    loading: reactive[bool] = reactive(False)
    busy: reactive[bool] = reactive(False)
    status: reactive[str] = reactive("")  # the latest report's status ("" before any)

    def __init__(self, formatter: Formatter | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.formatter = formatter or Formatter()
        self.checks: list[tuple[str, str, str]] = []
        self._loading_since = time.monotonic()
        self._frame = 0

    def on_mount(self) -> None:
        self.set_interval(0.25, self._tick)

    def _tick(self) -> None:
        if self.loading or self.busy:
            self._frame += 1
            self.refresh()

    def watch_loading(self, loading: bool) -> None:
        if loading:
            self._loading_since = time.monotonic()

    def set_checks(self, checks: list[tuple[str, str, str]]) -> None:
        """Replace the health checks shown (``(name, ok|warn|fail, detail)``)."""
        self.checks = list(checks)
        self.tooltip = "\n".join(f"{n}: {s} — {d}" for n, s, d in checks) or None
        self.refresh()

    def render(self) -> Text:
        full = self._line(compact=False)
        if full.cell_len <= self.size.width:
            return full
        compact = self._line(compact=True)
        return compact if compact.cell_len <= self.size.width else self._line(True, tight=True)

    def _line(self, compact: bool, tight: bool = False) -> Text:
        """The header line; ``compact`` drops the badge and the labels (narrow terminals),
        ``tight`` the model's name too (its health icon stays)."""
        text = Text(no_wrap=True, overflow="ellipsis")
        if not compact:
            text.append(" opsmate ", style="bold reverse")
        if self.target:
            target = self.target.removeprefix("bundle ") if compact else self.target
            text.append(f" {target} ", style="bold")
        text.append("│ " if compact else "│ model ", style="dim")
        if self.loading:
            spin = _SPINNER[self._frame % len(_SPINNER)]
            secs = self.formatter.seconds(time.monotonic() - self._loading_since)
            label = model_label(self.model) if self.model else "…"
            text.append(f"{spin} loading {label} ({secs})", style="yellow")
        else:
            if not tight:
                text.append(model_label(self.model) if self.model else "—", style="bold")
            model_check = next((c for c in self.checks if c[0] == "model"), None)
            if model_check is not None:
                icon, style = _HEALTH_STYLE.get(model_check[1], ("?", "dim"))
                text.append(icon if tight else f" {icon}", style=f"bold {style}")
        text.append(" │ ", style="dim")
        if self.busy:
            text.append(f"{_SPINNER[self._frame % len(_SPINNER)]} investigating ", style="yellow")
            text.append("│ ", style="dim")
        elif self.status:
            text.append(self.status, style=_STATUS_STYLE.get(self.status, "bold"))
            text.append(" │ ", style="dim")
        checks = [c for c in self.checks if c[0] != "model"]
        if not checks:
            text.append("…" if compact else "sources …", style="dim")
        for name, status, _detail in checks:
            icon, style = _HEALTH_STYLE.get(status, ("?", "dim"))
            text.append(f"{name} ")
            text.append(icon, style=f"bold {style}")
            text.append(" ")
        return text
