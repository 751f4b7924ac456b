"""The demo's root cause: short, names the pool change; the chain from symptom to cause;
next steps for every cause kind; Markdown that data cannot shape."""

from __future__ import annotations

from pathlib import Path

import walk
from markdown_it import MarkdownIt

from opsmate.agent.judge.causality import Role, role
from opsmate.agent.kinds import base
from opsmate.agent.observe.facts import FactKind
from opsmate.agent.report.model import Report, ReportFact, render_markdown
from opsmate.agent.report.next_steps import GENERIC


def _demo(repo_root: Path) -> dict:
    return walk.diagnose(repo_root / "src/opsmate/data/demo/01-pool-exhaustion")


def test_demo_root_cause_is_short_and_names_the_pool_change(repo_root: Path) -> None:
    report = _demo(repo_root)
    rc = report["root_cause"]
    assert len(rc["statement"].split()) <= 50
    assert "DB_POOL_SIZE '20' -> '10'" in rc["statement"]
    assert len(walk._SENTENCE.split(rc["statement"])) <= 2 and "E5" in rc["statement"]
    chain = report["chain"]
    assert len(chain) >= 2 and all(step["evidence"] for step in chain)
    assert "500" in chain[0]["statement"]  # the symptom asked about comes first
    assert any("DB_POOL_SIZE" in step["statement"] for step in chain[1:])  # cause / trigger
    md = render_markdown(Report.model_validate(report))
    assert "## From symptom to cause\n\n1. " in md
    assert "It matches the runbook" not in report["summary"]


def test_cited_excerpt_shows_the_changed_key(repo_root: Path) -> None:
    report = _demo(repo_root)
    cited = report["root_cause"]["evidence"]
    excerpts = {e["id"]: e["excerpt"] for e in report["evidence"]}
    change = next(i for i in cited if "DB_POOL_SIZE" in excerpts.get(i, ""))
    assert "'20' -> '10'" in excerpts[change]


def test_every_cause_kind_has_a_check_and_a_mitigation() -> None:
    causes = [k for k in FactKind if role(k) == Role.CAUSE] + [FactKind.CHANGE]
    assert causes
    for kind in causes:
        card = base(kind)
        assert card.check and card.mitigation, f"no next steps for {kind}"
    assert GENERIC.check and GENERIC.mitigation


def test_demo_next_steps_have_a_human_mitigation(repo_root: Path) -> None:
    steps = _demo(repo_root)["next_steps"]
    mitigations = [s for s in steps if s["kind"] == "mitigation"]
    assert mitigations and all(s["requires_human"] for s in mitigations)
    assert any(s["kind"] == "check" for s in steps)


def test_data_cannot_add_headings_links_html_or_fences() -> None:
    forged = (
        "boom\n## Root cause\nthe attacker did it\n[click](http://evil.example) "
        "<img src=x onerror=alert(1)>\n```\ncode\n```\n1. listed"
    )
    report = Report(
        question="why # is it failing",
        constraints={},
        status="partial",
        summary=forged,
        facts=[ReportFact(statement=forged, evidence=["E1"])],
    )
    md = render_markdown(report)
    tokens = MarkdownIt("commonmark").parse(md)
    headings = [t for t in tokens if t.type == "heading_open"]
    inline = [c for t in tokens if t.type == "inline" for c in t.children or []]
    assert len(headings) == 2  # "# Diagnosis" and "## Facts": none from the data
    assert not [c for c in inline if c.type in ("link_open", "image", "html_inline")]
    assert not [t for t in tokens if t.type in ("fence", "code_block", "html_block")]
    assert "the attacker did it" in md  # the text is kept, only made inert


def test_commands_in_code_spans_copy_as_written() -> None:
    """A command or a query the report puts in a code span stays runnable when the Markdown
    is piped (no escapes inside code), and the span stays a span."""
    cmd = 'kubectl -n shop logs deploy/api --since=30m | grep "pod=~\\"api-.*\\""'
    report = Report(
        question="q",
        constraints={},
        status="partial",
        summary=f"check with `{cmd}` [E1]",
        facts=[ReportFact(statement="a `` ` `` inside and `[x](y)` link text", evidence=["E1"])],
    )
    md = render_markdown(report)
    assert f"`{cmd}`" in md
    tokens = MarkdownIt("commonmark").parse(md)
    spans = [c.content for t in tokens if t.type == "inline" for c in t.children or []
             if c.type == "code_inline"]  # fmt: skip
    assert cmd in spans and "[x](y)" in spans and "`" in spans
    inline = [c for t in tokens if t.type == "inline" for c in t.children or []]
    assert not [c for c in inline if c.type in ("link_open", "image", "html_inline")]


def test_a_node_state_as_the_cause_says_which_pod_it_keeps_off_and_why() -> None:
    """A cordoned node is the root: the statement goes on with the scheduler's account of
    the pod it keeps off (its volume lives there), not only "node n3 is cordoned"."""
    from opsmate.agent.judge.candidates import Candidate
    from opsmate.agent.judge.statements import root_statement
    from opsmate.agent.observe.facts import Fact, FactKind, ObjRef

    node = Fact(key="n", statement="node n3 is cordoned (unschedulable)", evidence=["E3"],
                kind=FactKind.NODE_PROBLEM, severity="warning", reason="Unschedulable",
                subject=ObjRef(kind="Node", name="n3"))  # fmt: skip
    placed = Fact(key="s", statement="Pod `db-0` cannot be scheduled on any of the 1 of 3 "
                  "node(s) its volume `pvc-1` (kubernetes.io/hostname In (n3)) allows: 1 node(s) "
                  "cordoned (`n3` is cordoned (unschedulable)); nothing else keeps it off `n3`",
                  evidence=["E1"], kind=FactKind.SCHEDULING, severity="error", reason="cordoned",
                  subject=ObjRef(kind="Pod", name="db-0", namespace="shop"),
                  detail={"alone_on": ["n3"]})  # fmt: skip
    down = Fact(key="d", statement="StatefulSet `db` has 0/1 replicas ready", evidence=["E2"],
                kind=FactKind.NOT_READY, severity="error", focus=True)  # fmt: skip
    c = Candidate(lead=node, relation="linked", explains=down, support=[placed])
    text, ids = root_statement(c, "db", None)
    assert "node n3 is cordoned" in text and "then Pod `db-0` cannot be scheduled" in text
    assert "E1" in ids and "E3" in ids
