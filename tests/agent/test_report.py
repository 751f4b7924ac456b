"""Reports: citation repair, validation, redaction, Markdown."""

from __future__ import annotations

import json

from opsmate.agent.evidence import Evidence, RunbookRef
from opsmate.agent.report.model import (
    Report,
    ReportConflict,
    ReportConstraints,
    ReportFact,
    ReportHypothesis,
    ReportNextStep,
    RootCause,
    redact_report,
    render_markdown,
    repair,
    validate_citations,
)


def _report(**kw: object) -> Report:
    base = dict(
        question="q",
        constraints=ReportConstraints(environment="test"),
        status="complete",
        summary="s",
        evidence=[
            Evidence(
                id="E1", tool="log_stats", call_id="call_001", source_ref="log://a/1", excerpt="x"
            )
        ],
        runbooks=[
            RunbookRef(id="R1", source="a/b.md", heading_path=["A"], doc_version="v", excerpt="y")
        ],
    )
    base.update(kw)
    return Report.model_validate(base)


def test_repair_drops_unknown_ids_and_downgrades_claims() -> None:
    r = _report(
        root_cause=RootCause(statement="it was X", confidence=0.9, evidence=["E7", "R9"]),
        hypotheses=[
            ReportHypothesis(statement="h", status="confirmed", evidence=["E1", "E99"]),
            ReportHypothesis(statement="g", status="open", evidence=["E42"]),
        ],
        facts=[
            ReportFact(statement="f", evidence=["E1"]),
            ReportFact(statement="ghost", evidence=["E5"]),
        ],
        next_steps=[
            ReportNextStep(action="a", kind="mitigation", requires_human=True, evidence=["R2"])
        ],
        conflicts=[ReportConflict(statement="c", sources=["R1", "R3"])],
    )
    assert validate_citations(r) == ["E42", "E5", "E7", "E99", "R2", "R3", "R9"]
    fixed, changes = repair(r)
    assert validate_citations(fixed) == []
    assert fixed.root_cause is None and fixed.status == "partial"
    assert [h.statement for h in fixed.hypotheses] == ["h"] and fixed.hypotheses[0].evidence == [
        "E1"
    ]
    assert [f.statement for f in fixed.facts] == ["f"]
    assert fixed.next_steps == [] and fixed.conflicts == []
    assert any("E99" in c for c in changes) and any("downgraded" in c for c in changes)


def test_repair_keeps_a_sound_report() -> None:
    r = _report(root_cause=RootCause(statement="x", confidence=0.8, evidence=["E1", "R1"]))
    fixed, changes = repair(r)
    assert fixed.root_cause is not None and fixed.status == "complete" and changes == []


def test_json_shape_and_markdown() -> None:
    r = _report(
        root_cause=RootCause(statement="PoolTimeout", confidence=0.8, evidence=["E1", "R1"])
    )
    data = json.loads(json.dumps(r.to_json()))
    for key in (
        "question",
        "constraints",
        "status",
        "summary",
        "root_cause",
        "hypotheses",
        "facts",
        "evidence",
        "runbooks",
        "next_steps",
        "conflicts",
        "unfinished",
        "budget",
        "tool_calls",
    ):
        assert key in data
    assert set(data["constraints"]["window"]) == {"from", "to"}
    assert set(data["budget"]) >= {"steps", "max_steps", "tokens", "seconds", "stopped_by"}
    md = render_markdown(r)
    assert "## Root cause" in md and "PoolTimeout" in md and "**E1**" in md


def test_redact_report_masks_secrets_everywhere() -> None:
    r = _report(summary="token Authorization: Bearer abcdefghijklmnop123 and password=hunter2")
    out = json.dumps(redact_report(r).to_json())
    assert "abcdefghijklmnop123" not in out and "hunter2" not in out


def test_a_conclusive_cause_about_the_subject_is_settled_with_the_survey_unfinished() -> None:
    from opsmate.agent.judge.analysis import Analysis
    from opsmate.agent.judge.candidates import Candidate
    from opsmate.agent.observe.facts import Fact, FactKind
    from opsmate.agent.report.assemble import _settled

    lead = Fact(key="k", statement="s", evidence=["E1"], kind=FactKind.OOM_KILLED)

    def analysis(**c: object) -> Analysis:
        root = Candidate(lead=lead, **c)  # type: ignore[arg-type]
        return Analysis([], root, "s", ["E1"], 0.8, "", None)

    assert _settled(analysis(relation="subject", conclusive=True))
    assert _settled(analysis(relation="linked", conclusive=True, explains_subject=True))
    assert not _settled(analysis(relation="subject", conclusive=False))
    assert not _settled(analysis(relation="linked", conclusive=True))
