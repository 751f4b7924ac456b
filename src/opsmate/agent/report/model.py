"""The diagnosis report (contracts section 3): model, citation repair, Markdown.

Every id in any ``evidence`` list must resolve to an ``evidence`` or ``runbooks``
entry. :func:`repair` drops unknown ids; a claim left without evidence is dropped
(facts, hypotheses, next steps, conflicts) or downgraded (a root cause becomes
null and the status partial). Everything that reaches the report has passed the
redactor.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from opsmate.agent.evidence import Evidence, RunbookRef
from opsmate.textsafe import safe_text
from opsmate.tools.redact import Redactor, default_redactor

Status = Literal["complete", "partial", "refused", "error"]


class Window(BaseModel):
    from_: str | None = Field(None, alias="from")
    to: str | None = None

    model_config = {"populate_by_name": True}


class ReportConstraints(BaseModel):
    environment: str | None = None
    services: list[str] = Field(default_factory=list)
    window: Window = Field(default_factory=Window)


class RootCause(BaseModel):
    statement: str
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: list[str]
    failure_mode: str | None = None  # the failure-mode card (docs/failure-modes.md)


class ReportHypothesis(BaseModel):
    statement: str
    status: Literal["confirmed", "refuted", "open"]
    evidence: list[str]
    failure_mode: str | None = None  # the failure-mode card (docs/failure-modes.md)


class ReportFact(BaseModel):
    statement: str
    evidence: list[str]


class ChainStep(BaseModel):
    """One step of the path from the symptom to the root cause (report ``chain``)."""

    statement: str
    evidence: list[str]


class Dependency(BaseModel):
    """One edge of the dependency graph: ``from`` depends on ``to``, as ``via`` shows."""

    from_: str = Field(alias="from")
    to: str
    via: str
    evidence: list[str] = Field(default_factory=list)

    model_config = {"populate_by_name": True}


class ReportNextStep(BaseModel):
    action: str
    kind: Literal["check", "mitigation"]
    requires_human: bool
    evidence: list[str]


class ReportConflict(BaseModel):
    statement: str
    sources: list[str]


class BudgetInfo(BaseModel):
    steps: int = 0
    max_steps: int = 0
    tokens: int = 0
    seconds: float = 0.0
    stopped_by: str = "done"  # done | max_steps | token_budget | timeout | cancelled


class ToolCallInfo(BaseModel):
    call_id: str
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    status: str
    rejected_reason: str | None = None
    error: str | None = None  # extension: the failed call's error message (code: message)


class FollowUp(BaseModel):
    """The answer to a follow-up question (report extension ``follow_up``)."""

    question: str
    answer: str
    evidence: list[str] = Field(default_factory=list)  # ids the answer cites
    new_calls: int = 0  # read-only calls made for this question (0: answered from the state)
    refused: list[str] = Field(default_factory=list)  # parts not done, naming the constraint
    new_facts: list[ReportFact] = Field(default_factory=list)
    root_changed: bool = False
    previous_root: str | None = None


class SeenBefore(BaseModel):
    """A past incident of the same subject and cause kind (report extension ``seen_before``),
    from the incident history (:mod:`opsmate.history`). Context for the reader, never
    evidence for today's cause: its id (``H1``, ``H2`` ...) is no E/R id, no claim may cite
    it, and the citation check (:func:`repair`) drops it from any ``evidence`` list."""

    id: str  # H1 (the most recent) ...
    time: str  # RFC 3339: when that incident started (alert start) or was diagnosed
    subject: str
    cause_kind: str | None = None
    status: str  # that diagnosis's status
    outcome: str  # that diagnosis in one line: status, resolved or not, its root cause
    root_cause: str | None = None
    alertnames: list[str] = Field(default_factory=list)
    report: str | None = None  # its report file, when watch wrote one
    incident: int = 0  # its row id in the history (``opsmate history``)


class Report(BaseModel):
    """The report; ``model_dump(by_alias=True, mode="json")`` is the contract's JSON."""

    question: str
    constraints: ReportConstraints
    status: Status
    summary: str
    root_cause: RootCause | None = None
    hypotheses: list[ReportHypothesis] = Field(default_factory=list)
    facts: list[ReportFact] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    runbooks: list[RunbookRef] = Field(default_factory=list)
    next_steps: list[ReportNextStep] = Field(default_factory=list)
    conflicts: list[ReportConflict] = Field(default_factory=list)
    unfinished: list[str] = Field(default_factory=list)
    budget: BudgetInfo = Field(default_factory=BudgetInfo)
    tool_calls: list[ToolCallInfo] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # extension: what the engine noticed
    follow_up: FollowUp | None = None  # extension: the answer to a follow-up question
    chain: list[ChainStep] = Field(default_factory=list)  # extension: symptom -> root cause
    index: str | None = None  # extension: the runbooks searched (bundle, built-in, an index)
    dependencies: list[Dependency] = Field(default_factory=list)  # extension: what depends on what
    seen_before: list[SeenBefore] = Field(default_factory=list)  # extension: past incidents

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, mode="json")

    def cited_ids(self) -> set[str]:
        ids: set[str] = set(self.root_cause.evidence if self.root_cause else [])
        for group in (self.hypotheses, self.facts, self.next_steps, self.chain):
            for item in group:
                ids.update(item.evidence)
        if self.follow_up is not None:
            ids.update(self.follow_up.evidence)
        for c in self.conflicts:
            ids.update(c.sources)
        return ids

    def known_ids(self) -> set[str]:
        return {e.id for e in self.evidence} | {r.id for r in self.runbooks}


def repair(report: Report) -> tuple[Report, list[str]]:
    """Drop citations of unknown ids and claims left without evidence; say what changed."""
    known = report.known_ids()
    changes: list[str] = []

    def keep(ids: list[str], what: str) -> list[str]:
        good = [i for i in ids if i in known]
        bad = [i for i in ids if i not in known]
        if bad:
            changes.append(f"{what}: dropped unknown evidence id(s) {', '.join(bad)}")
        return list(dict.fromkeys(good))

    r = report.model_copy(deep=True)
    if r.root_cause is not None:
        r.root_cause.evidence = keep(r.root_cause.evidence, "root cause")
        if not any(i.startswith("E") for i in r.root_cause.evidence):
            changes.append("root cause: no tool evidence left; downgraded to an open hypothesis")
            r.hypotheses.insert(
                0,
                ReportHypothesis(
                    statement=r.root_cause.statement, status="open", evidence=r.root_cause.evidence
                ),
            )
            r.root_cause = None
            if r.status == "complete":
                r.status = "partial"
    for h in r.hypotheses:
        h.evidence = keep(h.evidence, "hypothesis")
        if h.status == "confirmed" and not any(i.startswith("E") for i in h.evidence):
            h.status = "open"
    r.hypotheses = [h for h in r.hypotheses if h.evidence]
    for f in r.facts:
        f.evidence = keep(f.evidence, "fact")
    r.facts = [f for f in r.facts if f.evidence]
    for s in r.next_steps:
        s.evidence = keep(s.evidence, "next step")
    r.next_steps = [s for s in r.next_steps if s.evidence]
    for st in r.chain:
        st.evidence = keep(st.evidence, "chain")
    if r.root_cause is None:
        r.chain = []  # a path to a cause no longer named is not shown
    if r.follow_up is not None:
        r.follow_up.evidence = keep(r.follow_up.evidence, "follow-up")
    for c in r.conflicts:
        c.sources = keep(c.sources, "conflict")
    r.conflicts = [c for c in r.conflicts if len(c.sources) >= 2]
    if r.status == "complete" and r.root_cause is None:
        r.status = "partial"
    return r, changes


def validate_citations(report: Report) -> list[str]:
    """Ids cited anywhere that do not resolve (empty list: the report is sound)."""
    return sorted(report.cited_ids() - report.known_ids())


def redact_report(
    report: Report, redactor: Redactor | None = None, *, trusted: bool = False
) -> Report:
    """Run every string of the report through the redactor (a last line of defence).

    ``trusted``: the evidence excerpts were redacted when they were stored
    (:meth:`EvidenceStore.clean`), so they are not walked again. Runbook entries always
    are: their title and heading path come straight from the runbook.
    """
    red = redactor or default_redactor()
    data = report.to_json()
    kept = {k: data.pop(k) for k in ("evidence",)} if trusted else {}
    data, _ = red.redact_obj(data)
    data.update(kept)
    return Report.model_validate(data)


# ----------------------------------------------------------------------------- Markdown

# inline punctuation that opens Markdown; ``_`` only at a word's edge (DB_POOL_SIZE stays)
_MD_INLINE = re.compile(r"([\\`*\[\]<#|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_MD_LINE_START = re.compile(r"^(\s*)(?:([-+=>])|(\d+)([.)]))")


def md_escape(text: str | None) -> str:
    """Text from data made inert in Markdown: on one line, with no heading, list, quote,
    link, image, HTML, emphasis, table or code fence it could open."""
    one = re.sub(r"\s+", " ", text or "").strip()
    return _escape_line(one)


# a code span the report wrote around a name or a command (`kubectl -n shop get pods`):
# kept a code span, so what is copied from it runs as written
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_BACKTICKS = re.compile(r"`+")


def _code_span(inner: str) -> str:
    """``inner`` as a Markdown code span: fenced by one backtick more than its longest run
    (CommonMark), nothing inside it interpreted."""
    fence = "`" * (max((len(r) for r in _BACKTICKS.findall(inner)), default=0) + 1)
    pad = " " if inner.startswith("`") or inner.endswith("`") else ""
    return f"{fence}{pad}{inner}{pad}{fence}"


def _escape_line(line: str) -> str:
    out: list[str] = []
    pos = 0
    for m in _CODE_SPAN.finditer(line):
        out.append(_escape_text(line[pos : m.start()]))
        inner = m.group(2)
        out.append(_code_span(inner) if inner.strip() else _escape_text(m.group(0)))
        pos = m.end()
    out.append(_escape_text(line[pos:]))
    return _MD_LINE_START.sub(_escape_start, "".join(out))


def _escape_text(text: str) -> str:
    from opsmate.tools.redact_rules import MASK

    # the redaction mask stays as it is (scripts and scorers recognise it); what follows
    # it cannot turn it into a link
    parts = [_MD_INLINE.sub(r"\\\1", p) for p in text.split(MASK)]
    for i in range(1, len(parts)):
        if parts[i][:1] in ("(", "["):
            parts[i] = "\\" + parts[i]
    return MASK.join(parts)


def _escape_start(m: re.Match[str]) -> str:
    if m.group(2):
        return f"{m.group(1)}\\{m.group(2)}"
    return f"{m.group(1)}{m.group(3)}\\{m.group(4)}"


def md_block(text: str | None) -> list[str]:
    """Multi-line text from data (an excerpt), each line escaped as :func:`md_escape`."""
    return [_escape_line(re.sub(r"[ \t]+", " ", ln).strip()) for ln in (text or "").splitlines()]


def _ids(ids: list[str]) -> str:
    return f" [{', '.join(md_escape(i) for i in ids)}]" if ids else ""


def render_follow_up(report: Report) -> list[str]:
    """The follow-up answer as Markdown lines: what was asked, the answer (refused parts
    first), how many new calls it took, what is new."""
    fu = report.follow_up
    if fu is None:
        return []
    out = [f"# Follow-up: {md_escape(fu.question)}", ""]
    out.append(md_escape(fu.answer))  # it leads with what was refused (said once)
    out += ["", f"*{fu.new_calls} new read-only call(s) for this question*"]
    if fu.new_facts:
        out += ["", "New since the last answer:", ""]
        out += [f"- {md_escape(f.statement)}{_ids(f.evidence)}" for f in fu.new_facts]
    return out


def render_markdown(report: Report) -> str:
    """The report as Markdown for people (also what the TUI shows). Every text that can
    come from data (statements, excerpts, runbook titles, the question) is escaped: data
    never adds a heading, link, HTML or code fence to the report."""
    e = md_escape
    out: list[str] = []
    c = report.constraints
    out.append(f"# Diagnosis: {e(report.question)}")
    scope = [f"environment **{e(c.environment or 'any')}**"]
    if c.services:
        scope.append("services " + ", ".join(e(s) for s in c.services))
    if c.window.from_ or c.window.to:
        scope.append(f"window {e(c.window.from_)} .. {e(c.window.to)}")
    out.append(f"*Status: **{report.status}** · " + " · ".join(scope) + "*")
    out.append("")
    out.append(e(report.summary))
    if report.follow_up is not None:
        out = [*render_follow_up(report), "", "---", "", *out]
    if report.root_cause:
        rc = report.root_cause
        out += [
            "",
            "## Root cause",
            "",
            e(rc.statement),
            "",
            f"Confidence {rc.confidence:.0%} · evidence {', '.join(e(i) for i in rc.evidence)}",
        ]
    if report.chain:
        out += ["", "## From symptom to cause", ""]
        out += [f"{n}. {e(s.statement)}{_ids(s.evidence)}" for n, s in enumerate(report.chain, 1)]
    if report.hypotheses:
        out += ["", "## Hypotheses", ""]
        for h in report.hypotheses:
            out.append(f"- **{h.status}** {e(h.statement)}{_ids(h.evidence)}")
    if report.facts:
        out += ["", "## Facts", ""]
        out += [f"- {e(f.statement)}{_ids(f.evidence)}" for f in report.facts]
    if report.next_steps:
        out += ["", "## Next steps", ""]
        for s in report.next_steps:
            who = " (a person must do this)" if s.requires_human else ""
            out.append(f"- *{s.kind}*{who}: {e(s.action)}{_ids(s.evidence)}")
    if report.conflicts:
        out += ["", "## Conflicting runbooks", ""]
        out += [f"- {e(x.statement)}{_ids(x.sources)}" for x in report.conflicts]
    if report.seen_before:
        out += ["", "## Seen before (past incidents, not evidence for this one)", ""]
        for past in report.seen_before:
            out.append(f"- **{e(past.id)}** {e(past.time)} · {e(past.subject)} · {e(past.outcome)}")
    if report.unfinished:
        out += ["", "## Not checked", ""]
        out += [f"- {e(u)}" for u in report.unfinished]
    if report.evidence:
        out += ["", "## Evidence", ""]
        for ev in report.evidence:
            flag = "" if ev.complete else " (partial)"
            quoted = "\n".join(f"  > {ln}" for ln in md_block(ev.excerpt)) or "  >"
            out.append(
                f"- **{e(ev.id)}** {e(ev.tool)} {e(ev.call_id)} {e(ev.source_ref)}{flag}\n{quoted}"
            )
    if report.runbooks:
        out += ["", "## Runbooks", ""]
        for rb in report.runbooks:
            path = " › ".join(e(h) for h in rb.heading_path)
            status = f" ({e(rb.status)})" if rb.status and rb.status != "active" else ""
            out.append(f"- **{e(rb.id)}** {e(rb.source)}{status} — {e(rb.title or '')} › {path}")
    if report.index:
        out += ["", f"*Runbooks searched: {e(report.index)}*"]
    b = report.budget
    out += [
        "",
        f"*{b.steps}/{b.max_steps} steps · {b.tokens} model tokens · {b.seconds:.2f} s · "
        f"stopped by {e(b.stopped_by)}*",
    ]
    return safe_text("\n".join(out) + "\n")  # no terminal control reaches a screen or file


def print_report(report: Report, *, file: Any = None) -> None:
    """Print the Markdown rendering with rich (to ``file`` or stdout)."""
    from rich.console import Console
    from rich.markdown import Markdown

    console = Console(file=file)
    console.print(Markdown(render_markdown(report)))
