"""The task-state pane: goal, constraints, facts, hypotheses, pending checks, budget.

Always visible and always current: it redraws from each state copy the engine
sends. The environment constraint is highlighted and stays on screen for the whole
session, because the engine enforces it for every later question too.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from opsmate.tui.display import HYPOTHESIS_ICONS, Formatter, short_args
from opsmate.tui.widgets.transcript import id_link

_SEVERITY = {"error": 0, "warning": 1, "info": 2}


def _ids(ids: list[str], limit: int = 6) -> str:
    shown = [id_link(i) for i in ids[:limit]]
    more = f" +{len(ids) - limit}" if len(ids) > limit else ""
    return "\\[" + ", ".join(shown) + more + "]" if shown else ""


def _cut(text: str, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class StatePane(VerticalScroll):
    """The structured task state, redrawn from copies (never the engine's live object)."""

    DEFAULT_CSS = """
    StatePane { padding: 0 1; link-color: $accent; link-style: bold underline; }
    StatePane > Static { margin-bottom: 1; }
    StatePane > #state-title { margin-bottom: 0; text-style: bold; color: $accent; }
    StatePane > #state-constraints { border-left: thick $warning; padding-left: 1; }
    """

    def __init__(self, formatter: Formatter | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.formatter = formatter or Formatter()
        self.environment: str | None = None
        self.state: Any = None
        self.sections = {
            name: Static("", id=name)
            for name in (
                "state-title", "state-goal", "state-constraints", "state-hypotheses",
                "state-facts", "state-depends", "state-runbooks", "state-pending",
                "state-budget",
            )
        }  # fmt: skip
        self.sections["state-title"].update("Task state")
        self._set(
            "state-goal", Content.from_markup("[dim]Goal: none yet — ask a question below.[/]")
        )
        self._show_constraints(None)

    def compose(self) -> ComposeResult:
        yield from self.sections.values()

    def _set(self, ident: str, content: Content | str) -> None:
        widget = self.sections[ident]
        widget.update(content)
        widget.display = bool(content.plain if isinstance(content, Content) else content)

    def preset(self, environment: str | None) -> None:
        """Before any question: the constraint the session already knows (the bundle's env)."""
        self.environment = environment
        if self.state is None:
            self._show_constraints(None)

    def reset(self, environment: str | None) -> None:
        """A new session: forget the old state."""
        self.state = None
        self.environment = environment
        self._set(
            "state-goal", Content.from_markup("[dim]Goal: none yet — ask a question below.[/]")
        )
        for ident in (
            "state-hypotheses",
            "state-facts",
            "state-depends",
            "state-runbooks",
            "state-pending",
            "state-budget",
        ):
            self._set(ident, "")
        self._show_constraints(None)

    def nothing_open(self) -> None:
        """Nothing is open to investigate: the goal line says so (not "ask a question")."""
        self._set(
            "state-goal",
            Content.from_markup("[dim]Goal: none — nothing is open (ctrl+b opens a bundle).[/]"),
        )

    def show(
        self,
        state: Any,
        runbooks: list[Any],
        steps: int,
        max_steps: int,
        tokens: int | None,
        seconds: float,
    ) -> None:
        """Redraw from a TaskState copy, the runbooks consulted and the budget used."""
        self.state = state
        goal = Content.from_markup("[b]Goal[/b] $goal", goal=_cut(state.goal, 300))
        if len(state.questions) > 1:
            goal += Content.from_markup("\n[b]Latest[/b] $q", q=_cut(state.questions[-1], 200))
        self._set("state-goal", goal)
        self._show_constraints(state)
        self._show_hypotheses(state.hypotheses)
        self._show_facts(state.facts)
        self._show_depends(getattr(state, "dependencies", []) or [], getattr(state, "walk", []))
        self._show_runbooks(runbooks)
        self._show_pending(state.pending)
        self.show_budget(steps, max_steps, tokens, seconds)

    def show_budget(self, steps: int, max_steps: int, tokens: int | None, seconds: float) -> None:
        """The budget line: steps used of the maximum, model tokens, time."""
        tok = "—" if tokens is None else str(tokens)
        self._set(
            "state-budget",
            Content.from_markup(
                "[b]Budget[/b] steps $s/$m · tokens $t · $secs",
                s=str(steps),
                m=str(max_steps),
                t=tok,
                secs=self.formatter.seconds(seconds),
            ),
        )

    def _show_constraints(self, state: Any) -> None:
        c = state.constraints if state is not None else None
        env = (c.environment if c is not None else None) or self.environment
        parts: list[Content] = [Content.from_markup("[b]Constraints[/b] [dim](enforced)[/]")]
        if env:
            parts.append(
                Content.from_markup("[b #000000 on $warning] environment: $env only [/]", env=env)
            )
        else:
            parts.append(Content.from_markup("[dim]environment: not set[/]"))
        if c is not None:
            if c.services:
                parts.append(Content.from_markup("services: $s", s=", ".join(c.services)))
            if c.namespaces:
                parts.append(Content.from_markup("namespaces: $n", n=", ".join(c.namespaces)))
            if c.window_from or c.window_to:
                wf = c.window_from.strftime("%m-%d %H:%M") if c.window_from else "?"
                wt = c.window_to.strftime("%m-%d %H:%M") if c.window_to else "now"
                parts.append(Content.from_markup("window: $f → $t", f=wf, t=wt))
        self._set("state-constraints", Content("\n").join(parts))

    def _show_hypotheses(self, hyps: list[Any]) -> None:
        if not hyps:
            self._set("state-hypotheses", "")
            return
        order = sorted(
            hyps, key=lambda h: (h.status != "confirmed", h.status == "refuted", -h.score)
        )
        lines = [Content.from_markup("[b]Hypotheses[/b] ($n)", n=str(len(hyps)))]
        style = {"confirmed": "$success", "refuted": "$error", "open": "$warning"}
        for h in order[:6]:
            lines.append(
                Content.from_markup(
                    f"[{style.get(h.status, 'dim')}]$icon $status[/] $text {_ids(h.evidence)}",
                    icon=HYPOTHESIS_ICONS.get(h.status, "?"),
                    status=h.status,
                    text=_cut(h.statement, 110),
                )
            )
        if len(order) > 6:
            lines.append(Content.from_markup("[dim]+$n more[/]", n=str(len(order) - 6)))
        self._set("state-hypotheses", Content("\n").join(lines))

    def _show_facts(self, facts: list[Any]) -> None:
        if not facts:
            self._set("state-facts", Content.from_markup("[b]Facts[/b] [dim]none yet[/]"))
            return
        order = sorted(facts, key=lambda f: (_SEVERITY.get(f.severity, 3), not f.focus))
        lines = [Content.from_markup("[b]Facts[/b] ($n)", n=str(len(facts)))]
        for f in order[:10]:
            mark = {"error": "[$error]●[/]", "warning": "[$warning]●[/]"}.get(
                f.severity, "[dim]●[/]"
            )
            lines.append(
                Content.from_markup(f"{mark} $text {_ids(f.evidence)}", text=_cut(f.statement, 110))
            )
        if len(order) > 10:
            lines.append(Content.from_markup("[dim]+$n more[/]", n=str(len(order) - 10)))
        self._set("state-facts", Content("\n").join(lines))

    def _show_depends(self, edges: list[dict[str, Any]], walk: list[dict[str, Any]]) -> None:
        """What depends on what, as the data shows it; the walked path first."""
        edges = [e for e in edges if not str(e.get("to", "")).startswith("ServiceAccount/")]
        if not edges:
            self._set("state-depends", "")
            return
        on_path = {(w.get("from"), w.get("to")) for w in walk}
        edges = sorted(edges, key=lambda e: (e.get("from"), e.get("to")) not in on_path)
        lines = [Content.from_markup("[b]Depends on[/b] ($n)", n=str(len(edges)))]
        for e in edges[:8]:
            mark = "[$error]→[/]" if (e.get("from"), e.get("to")) in on_path else "→"
            lines.append(
                Content.from_markup(
                    f"$src {mark} $dst [dim]$via[/]",
                    src=str(e.get("from")),
                    dst=str(e.get("to")),
                    via=_cut(str(e.get("via") or ""), 40),
                )
            )
        if len(edges) > 8:
            lines.append(Content.from_markup("[dim]+$n more[/]", n=str(len(edges) - 8)))
        self._set("state-depends", Content("\n").join(lines))

    def _show_runbooks(self, runbooks: list[Any]) -> None:
        if not runbooks:
            self._set("state-runbooks", "")
            return
        lines = [Content.from_markup("[b]Runbooks[/b] ($n)", n=str(len(runbooks)))]
        for r in runbooks[:8]:
            status = f" ({r.status})" if r.status and r.status != "active" else ""
            lines.append(
                Content.from_markup(f"{id_link(r.id)} $src[dim]$st[/]", src=r.source, st=status)
            )
        self._set("state-runbooks", Content("\n").join(lines))

    def _show_pending(self, pending: list[Any]) -> None:
        if not pending:
            self._set("state-pending", Content.from_markup("[b]Pending checks[/b] [dim]none[/]"))
            return
        lines = [Content.from_markup("[b]Pending checks[/b] ($n)", n=str(len(pending)))]
        for p in pending[:5]:
            lines.append(
                Content.from_markup(
                    "· $tool [dim]$args[/]", tool=p.tool, args=short_args(p.args, 60)
                )
            )
        if len(pending) > 5:
            lines.append(Content.from_markup("[dim]+$n more[/]", n=str(len(pending) - 5)))
        self._set("state-pending", Content("\n").join(lines))
