"""The transcript: questions, each step as it happens, streaming model text, the report.

Entries are small widgets appended to a scrolling column that stays anchored to
the bottom while an investigation runs (until the person scrolls up). Evidence
ids are links: clicking ``E3`` opens the evidence viewer (``app.open_evidence``).
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Markdown, Static

from opsmate.tui.display import (
    SOURCE_LABELS,
    STATUS_ICONS,
    Formatter,
    one_line,
    short_args,
)

STATUS_CLASSES = {
    "success": "ok",
    "partial": "warn",
    "no_data": "muted",
    "error": "bad",
    "rejected": "bad",
    "running": "running",
}


def id_link(ident: str) -> str:
    """Markup for a clickable evidence / runbook id (ids are ``[ER]\\d+``, safe in markup)."""
    return f"[@click=app.open_evidence('{ident}')]{ident}[/]"


class QuestionEntry(Static):
    """The question (or follow-up) a person asked."""

    def __init__(self, question: str, follow_up: bool) -> None:
        label = "follow-up" if follow_up else "question"
        super().__init__(
            Content.from_markup("[b]❯ $q[/b]  [dim]$label[/]", q=question, label=label),
            classes="question",
        )


class StepEntry(Horizontal):
    """One step: planned action, tool call status with elapsed time, one-line result.

    The step number has its own column, so wrapped lines stay indented under the text.
    """

    def __init__(
        self,
        step: int,
        tool: str,
        args: dict[str, Any],
        reason: str,
        source: str,
        formatter: Formatter,
    ) -> None:
        super().__init__(classes="step")
        self.step = step
        self.tool = tool
        self.args = args
        self.reason = reason
        self.source = source
        self.formatter = formatter
        self.status = "planned"
        self.call_id = ""
        self.elapsed_ms: int | None = None
        self.summary = ""
        self.evidence_id: str | None = None
        self.rejected_reason: str | None = None
        self._body = Static(self.render_content(), classes="step-body")

    def compose(self) -> ComposeResult:
        yield Static(f"{self.step:>3}", classes="step-no")
        yield self._body

    def update(self, content: Content) -> None:
        self._body.update(content)

    def started(self, call_id: str) -> None:
        self.status = "running"
        self.call_id = call_id
        self.update(self.render_content())

    def finished(
        self,
        status: str,
        elapsed_ms: int,
        summary: str,
        evidence_id: str | None,
        rejected: str | None,
    ) -> None:
        self.status = status
        self.elapsed_ms = elapsed_ms
        self.summary = summary
        self.evidence_id = evidence_id
        self.rejected_reason = rejected
        self.set_class(status in ("error", "rejected"), "failed")
        self.update(self.render_content())

    def stopped(self) -> None:
        """The turn ended before this call reported back (it was stopped)."""
        if self.status in ("planned", "running"):
            self.status = "stopped"
            self.update(self.render_content())

    def render_content(self) -> Content:
        head = Content.from_markup(
            "[b]$tool[/b] [dim]$args[/]", tool=self.tool, args=short_args(self.args)
        )
        why = SOURCE_LABELS.get(self.source, self.source)
        reason = self.reason
        if reason.lower().startswith(why.lower() + ":"):
            reason = reason[len(why) + 1 :].strip()
        lines = [
            head,
            Content.from_markup("[dim i]$why: $reason[/]", why=why, reason=one_line(reason, 200)),
        ]
        lines.append(self._status_line())
        return Content("\n").join(lines)

    def _status_line(self) -> Content:
        if self.status == "planned":
            return Content.from_markup("[dim]… planned[/]")
        if self.status == "running":
            return Content.from_markup("[$warning]⋯ running $call[/]", call=self.call_id)
        if self.status == "stopped":
            return Content.from_markup("[$warning]■ stopped before it reported back[/]")
        icon = STATUS_ICONS.get(self.status, "•")
        style = {"ok": "$success", "warn": "$warning", "bad": "$error"}.get(
            STATUS_CLASSES.get(self.status, ""), "$text-muted"
        )
        ident = f" {id_link(self.evidence_id)}" if self.evidence_id else ""
        detail = self.rejected_reason or self.summary
        return Content.from_markup(
            f"[{style}]$icon $status[/] [dim]· $elapsed ·[/]{ident} $detail",
            icon=icon,
            status=self.status.replace("_", " "),
            elapsed=self.formatter.elapsed_ms(self.elapsed_ms),
            detail=one_line(detail, 240),
        )


class ModelEntry(Static):
    """Model output as it streams (the structured answer the engine asked for)."""

    def __init__(self, stream: int, purpose: str) -> None:
        super().__init__(classes="model")
        self.stream = stream
        self.purpose = purpose.replace("_", " ")

    def show(self, text: str) -> None:
        self.update(
            Content.from_markup(
                "[dim]model · $purpose ›[/] [i]$text[/]", purpose=self.purpose, text=text
            )
        )


class NoticeEntry(Static):
    """Something the engine wants a person to see (warnings, notes)."""

    def __init__(self, level: str, text: str) -> None:
        icon = {"error": "✗", "warning": "⚠"}.get(level, "ℹ")
        super().__init__(
            Content.from_markup("$icon $text", icon=icon, text=text), classes=f"notice {level}"
        )


class ReportEntry(Markdown):
    """The final report, rendered as Markdown; ``opsmate:E3`` links open the evidence."""

    def __init__(self) -> None:
        super().__init__(classes="report", open_links=False)


class Transcript(VerticalScroll):
    """The scrolling column of entries; the app calls its methods from message handlers."""

    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1; link-color: $accent; link-style: bold underline; }
    Transcript > .question { margin-top: 1; color: $accent; }
    Transcript > StepEntry { height: auto; }
    Transcript > StepEntry > .step-no { width: 5; color: $text-muted; text-style: bold; }
    Transcript > StepEntry > .step-body { width: 1fr; }
    Transcript > StepEntry.failed > .step-body { color: $text-error; }
    Transcript > .model { margin-left: 5; color: $text-muted; }
    Transcript > .notice { margin-left: 1; color: $text-warning; }
    Transcript > .notice.info { color: $text-muted; }
    Transcript > .notice.error { color: $text-error; }
    Transcript > .report { margin: 1 0 0 0; padding: 0 1; border-left: thick $accent; }
    Transcript > .welcome { padding: 0 0 1 0; text-wrap: nowrap; text-overflow: ellipsis; }
    Transcript > .welcome.-wrap { text-wrap: wrap; }
    """

    def __init__(self, formatter: Formatter | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.formatter = formatter or Formatter()
        self.steps: dict[tuple[int, int], StepEntry] = {}
        self.models: dict[tuple[int, int], ModelEntry] = {}
        self.reports: list[ReportEntry] = []
        self.report_shown = False  # the latest report has been scrolled to the top

    def _add(self, widget: Widget) -> None:
        self.mount(widget)

    def clear(self) -> None:
        self.steps.clear()
        self.models.clear()
        self.reports.clear()
        self.remove_children()

    def add_welcome(self, content: Content, *, wrap: bool = False) -> None:
        """Show ``content`` first (replacing the previous welcome); ``wrap``: long lines wrap
        (what to do when nothing is open), else they end in … (saved-session lines)."""
        if not self.is_attached:  # asked for before the transcript is up, or as it goes
            self.call_later(self.add_welcome, content, wrap=wrap)
            return
        self.query(".welcome").remove()
        classes = "welcome -wrap" if wrap else "welcome"
        self.mount(Static(content, classes=classes), before=0 if self.children else None)

    def add_question(self, question: str, follow_up: bool) -> None:
        self.anchor()
        self._add(QuestionEntry(question, follow_up))

    def add_step(
        self, turn: int, step: int, tool: str, args: dict[str, Any], reason: str, source: str
    ) -> None:
        entry = StepEntry(step, tool, args, reason, source, self.formatter)
        self.steps[(turn, step)] = entry
        self._add(entry)

    def step_started(self, turn: int, step: int, call_id: str) -> None:
        entry = self.steps.get((turn, step))
        if entry is not None:
            entry.started(call_id)

    def step_finished(
        self,
        turn: int,
        step: int,
        status: str,
        elapsed_ms: int,
        summary: str,
        evidence_id: str | None,
        rejected: str | None,
    ) -> None:
        entry = self.steps.get((turn, step))
        if entry is not None:
            entry.finished(status, elapsed_ms, summary, evidence_id, rejected)

    def model_text(self, turn: int, stream: int, purpose: str, text: str) -> None:
        entry = self.models.get((turn, stream))
        if entry is None:
            entry = ModelEntry(stream, purpose)
            self.models[(turn, stream)] = entry
            self._add(entry)
        entry.show(text)

    def add_notice(self, level: str, text: str) -> None:
        self._add(NoticeEntry(level, text))

    def turn_stopped(self, turn: int) -> None:
        for (t, _), entry in self.steps.items():
            if t == turn:
                entry.stopped()

    async def add_report(self, markdown: str) -> ReportEntry:
        """Append the report; returns once its Markdown is laid out (so it can be scrolled to)."""
        entry = ReportEntry()
        self.reports.append(entry)
        await self.mount(entry)
        await entry.update(markdown)
        return entry

    def show_report_top(self, entry: ReportEntry, tries: int = 20) -> None:
        """Scroll so the report's first line is at the top (the diagnosis is read first).

        The Markdown's height is known only once it has been laid out, which on a busy
        machine can take a few frames; until the report sits at the top, try again.
        """
        self.report_shown = False
        self.release_anchor()
        self.scroll_to_widget(entry, top=True, animate=False, immediate=True)
        # done when the report's top is the scroll position (a report shorter than the
        # view never gets there: then the tries run out, about a second)
        placed = entry.virtual_region.height > 0 and round(self.scroll_y) == entry.virtual_region.y
        if tries > 0 and not placed:
            self.set_timer(0.05, lambda: self.show_report_top(entry, tries - 1))
        else:
            self.report_shown = True
