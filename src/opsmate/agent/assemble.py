"""Report assembly: state + evidence + analysis -> a checked, redacted :class:`Report`."""

from __future__ import annotations

from typing import Any

from opsmate.agent.evidence import EvidenceStore
from opsmate.agent.judge.analysis import Analysis
from opsmate.agent.model_steps import degenerate
from opsmate.agent.plan.planner import Planner
from opsmate.agent.report import (
    BudgetInfo,
    Report,
    ReportConflict,
    ReportConstraints,
    ReportFact,
    ReportHypothesis,
    ReportNextStep,
    RootCause,
    Status,
    ToolCallInfo,
    Window,
    redact_report,
    repair,
)
from opsmate.agent.runbook_commands import commands_in_section
from opsmate.agent.runbooks import Applicability, RunbookDoc, find_conflicts
from opsmate.agent.state import TaskState
from opsmate.timeparse import format_time
from opsmate.tools.executor import Executor

_WHY = {
    "max_steps": "the step budget ran out",
    "timeout": "the time budget ran out",
    "token_budget": "the model token budget ran out",
    "cancelled": "the investigation was stopped",
    "error": "an internal error stopped the investigation",
    "done": "not needed once the cause was established",
}


def assemble_report(
    *,
    question: str,
    state: TaskState,
    store: EvidenceStore,
    analysis: Analysis,
    docs: list[tuple[str, RunbookDoc, Applicability]],
    executor: Executor,
    planner: Planner,
    stopped_by: str,
    steps: int,
    max_steps: int,
    tokens: int,
    seconds: float,
    notes: list[str],
    narrative: dict[str, Any] | None = None,
) -> Report:
    c = state.constraints
    an = analysis
    clean = store.clean
    root = None
    if an.root_statement:
        root = RootCause(
            statement=clean(an.root_statement, 2400),
            confidence=an.confidence,
            evidence=an.root_evidence,
        )
    facts = sorted(
        state.facts, key=lambda f: ({"error": 0, "warning": 1, "info": 2}[f.severity], not f.focus)
    )
    report_facts = [
        ReportFact(statement=clean(f.statement, 500), evidence=list(f.evidence)) for f in facts[:20]
    ]
    hyps = [
        ReportHypothesis(
            statement=clean(h.statement, 600), status=h.status, evidence=list(h.evidence)
        )
        for h in an.hypotheses
    ]
    rid_of = {d.source: rid for rid, d, _ in docs}
    conflicts = [
        ReportConflict(
            statement=clean(x.statement, 600), sources=[rid_of[s] for s in x.sources if s in rid_of]
        )
        for x in find_conflicts([d for _, d, _ in docs], c)
    ]
    next_steps = _next_steps(an, docs, state, stopped_by)
    unfinished = [
        f"{p.tool} {_args(p.args)} ({p.reason}): not run, {_WHY.get(stopped_by, stopped_by)}"
        for p in state.pending
    ]
    unfinished += [f"query_metrics {q}: skipped" for q in planner.skipped]
    status: Status
    survey_left = any(p.essential for p in state.pending)
    if stopped_by in ("cancelled", "timeout", "error"):
        status = "partial"  # interrupted: whatever was found is reported, marked partial
    elif root is not None and not (survey_left and stopped_by != "done"):
        status = "complete"  # a budget may end the plan once the cause is supported
    elif stopped_by in ("max_steps", "token_budget"):
        status = "partial"
    elif any(a.status in ("success", "partial", "no_data") for a in state.actions):
        status = "partial"  # it looked and found no supported cause: says what is missing
    else:
        status = "refused"  # nothing could be looked at
    summary = _summary(status, an, state, stopped_by, steps, len(conflicts))
    told = str((narrative or {}).get("summary") or "").strip()
    if told and not degenerate(told):
        summary = clean(told, 800)
    elif told:
        notes.append("the model's summary was not used (repetitive or empty text)")
    model_rc = (narrative or {}).get("root_cause")
    same = root is not None and str((model_rc or {}).get("statement", "")).strip() == root.statement
    if isinstance(model_rc, dict) and model_rc.get("statement") and not same:
        hyps.insert(
            0,
            ReportHypothesis(
                statement=clean(str(model_rc["statement"]), 600),
                status="open",
                evidence=[str(i) for i in model_rc.get("evidence") or []],
            ),
        )
    calls = [
        ToolCallInfo(
            call_id=r.call_id,
            tool=r.tool,
            args=dict(r.args),
            status=r.status,
            rejected_reason=r.error.message if r.status == "rejected" and r.error else None,
        )
        for r in executor.calls
    ]
    report = Report(
        question=clean(question, 1000),
        constraints=ReportConstraints(
            environment=c.environment,
            services=list(c.services),
            window=Window(
                **{"from": format_time(c.window_from) if c.window_from else None},
                to=format_time(c.window_to) if c.window_to else None,
            ),
        ),
        status=status,
        summary=summary,
        root_cause=root,
        hypotheses=hyps,
        facts=report_facts,
        evidence=list(store.evidence),
        runbooks=list(store.runbooks),
        next_steps=next_steps,
        conflicts=conflicts,
        unfinished=unfinished,
        budget=BudgetInfo(
            steps=steps,
            max_steps=max_steps,
            tokens=tokens,
            seconds=round(seconds, 3),
            stopped_by=stopped_by,
        ),
        tool_calls=calls,
        notes=[clean(n, 300) for n in dict.fromkeys(notes)],
    )
    report, changes = repair(report)
    report.notes += changes
    return redact_report(report, store.redactor, trusted=True)


def _args(args: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in args.items() if v not in (None, "")) + "}"


def _next_steps(
    an: Analysis,
    docs: list[tuple[str, RunbookDoc, Applicability]],
    state: TaskState,
    stopped_by: str,
) -> list[ReportNextStep]:
    out: list[ReportNextStep] = []
    root_doc = an.root.doc if an.root is not None else None
    rid = an.root.rid if an.root is not None else None
    if root_doc is not None and rid is not None:
        app = next((a for r, _, a in docs if r == rid), None)
        if app is None or app.applies:
            for heading, text in root_doc.sections:
                for cmd in commands_in_section(text, heading):
                    if cmd.kind == "call":
                        continue
                    where = " › ".join(heading[1:] or heading)
                    out.append(
                        ReportNextStep(
                            action=f'`{cmd.text}` (runbook "{root_doc.title}" › {where})',
                            kind="mitigation" if cmd.kind == "mitigation" else "check",
                            requires_human=True,
                            evidence=[rid],
                        )
                    )
            out = out[:6]
    if an.root is None:
        for p in state.pending[:4]:
            ev = [p.runbook] if p.runbook else ([p.trigger] if p.trigger else [])
            out.append(
                ReportNextStep(
                    action=f"run {p.tool} {_args(p.args)}: {p.reason}",
                    kind="check",
                    requires_human=False,
                    evidence=ev,
                )
            )
    return out


def _summary(
    status: str, an: Analysis, state: TaskState, stopped_by: str, steps: int, n_conflicts: int
) -> str:
    n_calls = len(state.actions)
    if an.root is not None and an.root_statement:
        first = an.root_statement.split("; also ")[0].split(". It began")[0].rstrip(".")
        text = f"Most likely root cause: {first}."
        if an.root.rid:
            text += f' It matches the runbook "{an.root.title}".'
        if stopped_by != "done":
            why = _WHY.get(stopped_by, stopped_by)
            text += f" The investigation was cut short ({why}); see what was not checked."
        text += f" {steps} read-only call(s) this turn, {n_calls} in all."
    elif status == "refused" and state.actions:
        failed = sorted(
            {f"{a.tool}: {a.outcome[:80]}" for a in state.actions if a.status == "error"}
        )
        text = (
            f"I cannot answer this: the data sources could not be read ({'; '.join(failed[:3])}). "
            "Check them with `opsmate doctor`."
        )
    elif status == "refused":
        text = (
            f"I cannot answer this from the available data: {an.missing}. "
            f"{n_calls} read-only call(s) were made; no runbook or signal points at a cause."
        )
    else:
        lead = next((h.statement for h in an.hypotheses), None)
        text = f"No root cause could be confirmed: {an.missing}; {n_calls} read-only call(s) made."
        if lead:
            text += f" Strongest lead (unconfirmed): {lead}."
        if stopped_by != "done":
            text += f" Stopped early: {_WHY.get(stopped_by, stopped_by)}."
    if n_conflicts:
        text += " Runbooks disagreed; see conflicts for which applies."
    return text
