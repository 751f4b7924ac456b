"""Report assembly: state + evidence + analysis -> a checked, redacted :class:`Report`."""

from __future__ import annotations

import re
from typing import Any

from opsmate.agent.evidence import EvidenceStore
from opsmate.agent.judge.analysis import Analysis
from opsmate.agent.judge.statements import cause_noun, chain_steps
from opsmate.agent.kinds import card_for
from opsmate.agent.model.steps import degenerate
from opsmate.agent.plan.planner import Planner
from opsmate.agent.report.model import (
    BudgetInfo,
    ChainStep,
    Dependency,
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
from opsmate.agent.report.next_steps import from_cause, merge
from opsmate.agent.runbooks.commands import commands_in_section
from opsmate.agent.runbooks.library import Applicability, RunbookDoc, find_conflicts
from opsmate.agent.state import TaskState
from opsmate.timeparse import format_time
from opsmate.tools.executor import DOWN_CODES, Executor, SourceDown

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
            failure_mode=card_for(an.root.lead).id if an.root is not None else None,
        )
    for f in state.facts:  # each cited excerpt shows the data its statements rely on
        needles = [x for x in (f.quote, f.message) if x]
        needles += [str(t) for t in (f.detail or {}).get("template_changes") or []]
        for eid in f.evidence:
            if eid.startswith("E"):
                store.cover(eid, needles)
    chain: list[ChainStep] = []
    in_chain: set[str] = set()
    if an.root is not None and root is not None:
        chain = [ChainStep(statement=clean(t, 400), evidence=ev) for t, ev in chain_steps(an.root)]
        r = an.root
        in_chain = {f.key for f in [r.reaches or r.explains, *r.chain, r.lead, r.change] if f}
    said = {h.statement for h in an.hypotheses}
    facts = sorted(
        (f for f in state.facts if f.key not in in_chain and f.statement not in said),
        key=lambda f: ({"error": 0, "warning": 1, "info": 2}[f.severity], not f.focus),
    )
    report_facts: list[ReportFact] = []
    for f in facts:
        text = clean(f.statement, 500)
        if all(x.statement != text for x in report_facts):  # the same sentence once
            report_facts.append(ReportFact(statement=text, evidence=list(f.evidence)))
    report_facts = report_facts[:20]
    hyps = [
        ReportHypothesis(
            statement=clean(h.statement, 600),
            status=h.status,
            evidence=list(h.evidence),
            failure_mode=h.failure_mode,
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
    # a source answered (an action, or a survey call such as discover_metrics)
    looked = any(a.status in ("success", "partial", "no_data") for a in state.actions) or any(
        r.status in ("success", "partial", "no_data") for r in executor.calls
    )
    down = executor.down_sources()
    if down and not looked and stopped_by != "error":
        status = "refused"  # every source that was tried is down: nothing could be looked at
    elif stopped_by in ("cancelled", "timeout", "error"):
        status = "partial"  # interrupted: whatever was found is reported, marked partial
    elif root is not None and not (survey_left and stopped_by != "done" and not _settled(an)):
        status = "complete"  # a budget may end the plan once the cause is supported
    elif stopped_by in ("max_steps", "token_budget"):
        status = "partial"
    elif looked:
        status = "partial"  # it looked and found no supported cause: says what is missing
    else:
        status = "refused"  # nothing could be looked at
    summary = _summary(status, an, state, stopped_by, steps, len(conflicts), down)
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
            error=f"{r.error.code}: {r.error.message}" if r.status == "error" and r.error else None,
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
        chain=chain,
        dependencies=_dependencies(state, {e.id for e in store.evidence}),
    )
    say_once(report)
    cited = report.cited_ids()
    report.runbooks = [r for r in report.runbooks if r.id in cited]  # listed: the ones cited
    report, changes = repair(report)
    report.notes += changes
    return redact_report(report, store.redactor, trusted=True)


def _args(args: dict[str, Any]) -> str:
    """The call's arguments as a code span (a query copied from the report runs as is)."""
    return "`{" + ", ".join(f"{k}={v}" for k, v in args.items() if v not in (None, "")) + "}`"


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
    if an.root is not None:
        out = merge(out, from_cause(an.root))
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


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'`(])")
_IDS = re.compile(r"\s*[\[(](?:[ER]\d+(?:,\s*)?)+[\])]")


def _key(sentence: str) -> str:
    return " ".join(_IDS.sub("", sentence).lower().split()).strip(" .;")


def _unsaid(text: str, seen: set[str]) -> str:
    """``text`` without the sentences already said (each said one is remembered)."""
    kept = []
    for part in _SENTENCE.split(text):
        k = _key(part)
        if len(k.split()) >= 4 and k in seen:
            continue
        seen.add(k)
        kept.append(part)
    return " ".join(kept).strip()


def say_once(report: Report) -> None:
    """No sentence twice: in reading order (summary, root cause, hypotheses, chain, facts,
    next steps, conflicts, not checked) a sentence said before is left out where it
    repeats; an item left with nothing new is dropped (a chain left with one step too)."""
    seen: set[str] = set()
    report.summary = _unsaid(report.summary, seen) or report.summary
    if report.root_cause is not None:
        _unsaid(report.root_cause.statement, seen)
    hyps = []
    for h in report.hypotheses:
        h.statement = _unsaid(h.statement, seen)
        if h.statement:
            hyps.append(h)
    report.hypotheses = hyps
    steps = []  # the chain's links are short, in the evidence's own words (not restated)
    for st in report.chain:
        st.statement = _unsaid(st.statement, seen)
        if st.statement:
            steps.append(st)
    report.chain = steps if len(steps) > 1 else []
    for name in ("facts", "conflicts"):
        kept = []
        for item in getattr(report, name):
            item.statement = _unsaid(item.statement, seen)
            if item.statement:
                kept.append(item)
        setattr(report, name, kept)
    nexts = []
    for ns in report.next_steps:
        ns.action = _unsaid(ns.action, seen)
        if ns.action:
            nexts.append(ns)
    report.next_steps = nexts
    report.unfinished = [u for u in (_unsaid(u, seen) for u in report.unfinished) if u]


def down_sentence(down: list[SourceDown]) -> str:
    """The first sentence when sources could not be read: which (name, environment, URL
    without credentials), that nothing is concluded from them, and where to look."""
    names = [d.label for d in down]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    why = sorted({d.code for d in down})
    said = {"timeout": "did not answer", "server_error": "answered with errors"}
    how = said.get(why[0], "could not be reached") if len(why) == 1 else "failed"
    return (
        f"Could not read {listed} ({how}); nothing is concluded from "
        f"{'it' if len(names) == 1 else 'them'}: check with `opsmate doctor`."
    )


def _summary(
    status: str,
    an: Analysis,
    state: TaskState,
    stopped_by: str,
    steps: int,
    n_conflicts: int,
    down: list[SourceDown] | None = None,
) -> str:
    """At most three sentences, none of which the rest of the report repeats."""
    n_calls = len(state.actions)
    parts: list[str] = [down_sentence(down)] if down else []
    if an.root is not None and an.root_statement:
        lead = an.root.lead
        where = lead.subject.label() if lead.subject is not None else (lead.service or "")
        head = f"Root cause ({an.confidence:.0%} confidence): {cause_noun(lead)}"
        head += f" in {where}" if where and lead.kind.value != "change" else ""
        if an.root.change is not None and an.root.change is not lead:
            head += ", triggered by a change"
        parts.append(f"{head}; {steps} read-only call(s) this turn, {n_calls} in all.")
        tail = []
        if stopped_by != "done":
            tail.append(f"the investigation was cut short ({_WHY.get(stopped_by, stopped_by)})")
        if n_conflicts:
            tail.append("runbooks disagreed (see conflicts)")
        if tail:
            parts.append(("; ".join(tail) + ".").capitalize())
    elif status == "refused" and down:
        parts.append(f"With nothing readable no cause can be named ({n_calls} call(s) tried).")
    elif status == "refused" and state.actions:
        failed = sorted({a.tool for a in state.actions if a.status == "error"})
        parts.append(
            f"I cannot answer this: the data sources could not be read ({', '.join(failed)}); "
            "check them with `opsmate doctor`."
        )
    elif status == "refused":
        parts.append(
            f"I cannot answer this from the available data: {an.missing}; "
            f"{n_calls} read-only call(s) were made and no runbook or signal points at a cause."
        )
    else:
        text = f"No root cause could be confirmed: {an.missing}; {n_calls} read-only call(s) made"
        if any(h.status == "open" for h in an.hypotheses):
            text += " (the open hypotheses are leads, not conclusions)"
        parts.append(text + ".")
        tail = []
        if stopped_by != "done":
            tail.append(f"stopped early: {_WHY.get(stopped_by, stopped_by)}")
        if n_conflicts:
            tail.append("runbooks disagreed (see conflicts)")
        if tail:
            parts.append(("; ".join(tail) + ".").capitalize())
    return " ".join(parts[:3])


__all__ = ["DOWN_CODES", "assemble_report", "down_sentence"]


def _dependencies(state: TaskState, known: set[str]) -> list[Dependency]:
    """The dependency graph's edges between workloads (the ones a reader follows), with the
    evidence ids the report holds."""
    out: list[Dependency] = []
    for d in state.dependencies[:40]:
        src, dst = str(d.get("from") or ""), str(d.get("to") or "")
        if not src or not dst or dst.startswith("ServiceAccount/"):
            continue
        ev = [e for e in d.get("evidence") or [] if e in known]
        via = str(d.get("via") or "")[:120]
        out.append(Dependency.model_validate({"from": src, "to": dst, "via": via, "evidence": ev}))
    return out


def _settled(an: Analysis) -> bool:
    """A root that the survey's unread checks cannot unsettle: the system's own account of a
    failure (a conclusive failure mode) that explains the subject's own symptom or is about
    the subject itself."""
    r = an.root
    return r is not None and r.conclusive and (r.explains_subject or r.relation == "subject")
