"""Follow-up questions answered as follow-ups.

In a session, a second question ("did the release change the pool settings?", "which
pods restarted?", "是否更改了连接池设置？") is answered first from what is already known:
the task state and the stored results, by the question's intent (yes/no, which, what
value, is X healthy; :mod:`.intent`, :mod:`.answers`), in the question's language, with
what was not read, and no new call. Only when that cannot answer does the session
investigate again; the answer then applies the same frame to the state after the new
calls and says how many calls it made, what is new, and whether the root cause changed
(its cause, not its evidence ids or where its text was cut).

A request outside the session's constraints is refused once, naming the constraint
(the environment never widens, a restriction to some services never grows), and a
refused follow-up makes no call at all. Pure functions over the state and reports.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from opsmate.agent.intake.question import detect_environment, detect_services
from opsmate.agent.report.model import FollowUp, Report, ReportFact, RootCause
from opsmate.agent.session.answers import Answer, Reads, answer_question
from opsmate.agent.session.frames import say
from opsmate.agent.session.intent import Intent, Lang, language, read_intent
from opsmate.agent.state import TaskState


@dataclass
class FollowUpContext:
    """What a follow-up's answer is measured against: the refusals, the facts known
    before it, the previous report, and what it needs to answer by intent (the stored
    results, the tools the session has, the names it knows)."""

    refused: list[str]
    known_facts: set[str] = field(default_factory=set)
    previous: Report | None = None
    results: Mapping[str, Any] = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)
    known: list[str] = field(default_factory=list)

    def answer(self, question: str, state: TaskState, report: Report, clean: Any) -> FollowUp:
        """The follow-up answer for ``report`` (``clean``: the store's redacting clipper)."""
        new = [
            ReportFact(statement=clean(f.statement, 500), evidence=list(f.evidence))
            for f in state.facts
            if f.key not in self.known_facts
        ]
        intent = read_intent(question, self.known)
        reads = Reads(state=state, results=self.results, tools=list(self.tools), clean=clean)
        found = answer_question(question, intent, reads, final=True)
        return compose(question, new, report, self.previous, self.refused, found=found)


def refusals(
    question: str,
    state: TaskState,
    known_envs: list[str],
    known: list[str],
    lang: Lang | None = None,
) -> list[str]:
    """What a follow-up asks for that the session's constraints do not allow (in the
    question's language unless ``lang`` says otherwise)."""
    lang = lang or language(question)
    out: list[str] = []
    c = state.constraints
    asked = detect_environment(question, known_envs)
    if asked and c.environment and asked != c.environment:
        out.append(say("refuse_env", lang, asked=asked, env=c.environment))
    if c.allowed_services:
        for svc in detect_services(question, known):
            if svc not in c.allowed_services:
                allowed = ", ".join(c.allowed_services)
                out.append(say("refuse_service", lang, svc=svc, allowed=allowed))
    return out


def state_answer(question: str, reads: Reads, known: list[str]) -> FollowUp | None:
    """The follow-up answered from what was already read (no call), or None when that
    does not settle it (then the session investigates)."""
    found = answer_question(question, read_intent(question, known), reads, final=False)
    if found is None or not found.settled:
        return None
    return FollowUp(question=question, answer=found.text, evidence=found.evidence, new_calls=0)


def with_answer(previous: Report, fu: FollowUp, summary: str) -> Report:
    """The previous report answering ``fu`` (no step of its own), ids repaired."""
    from opsmate.agent.report.model import repair

    report = previous.model_copy(deep=True)
    report.follow_up = fu
    report.budget.steps = 0
    report.summary = summary
    report, _ = repair(report)
    return report


def refused_answer(question: str, refused: list[str]) -> str:
    """The answer to a refused follow-up: what was not done, and that nothing was called."""
    lang = language(question)
    return say("refused", lang, items="; ".join(refused) if lang == "en" else "；".join(refused))


def compose(
    question: str,
    new: list[ReportFact],
    report: Report,
    previous: Report | None,
    refused: list[str],
    *,
    found: Answer | None = None,
) -> FollowUp:
    """The follow-up answer after new calls: refusals first, then the answer by intent
    (``found``), the new facts, and the root cause now."""
    lang = language(question)
    new = new[:6]
    prev_rc = previous.root_cause if previous else None
    now_rc = report.root_cause
    changed = root_changed(prev_rc, now_rc)
    parts: list[str] = []
    if refused:
        parts.append(refused_answer(question, refused))
    evidence: list[str] = []
    if found is not None:
        parts.append(found.text)
        evidence += found.evidence
    calls = report.budget.steps
    if new:
        sep = "; " if lang == "en" else "；"
        items = sep.join(f"{f.statement} [{', '.join(f.evidence)}]" for f in new[:3])
        items += "; ..." if len(new) > 3 else ""
        parts.append(say("new_facts", lang, calls=calls, n=len(new), items=items))
        evidence += [e for f in new[:3] for e in f.evidence]
    elif calls:
        parts.append(say("nothing_new", lang, calls=calls))
    if changed and now_rc is not None:
        parts.append(say("root_changed", lang, root=_core(now_rc.statement)))
    elif now_rc is not None:
        parts.append(say("root_same", lang))
    elif prev_rc is not None:
        parts.append(say("root_gone", lang))
    else:
        parts.append(say("root_none", lang, summary=report.summary))
    if now_rc is not None and (changed or not new):
        evidence += now_rc.evidence
    return FollowUp(
        question=question,
        answer=" ".join(parts),
        evidence=list(dict.fromkeys(evidence)),
        new_calls=calls,
        refused=refused,
        new_facts=new,
        root_changed=changed,
        previous_root=prev_rc.statement if prev_rc else None,
    )


_IDS = re.compile(r"\s*\((?:[ER]\d+(?:,\s*)?)+\)")
_CAUSE_WORD = re.compile(r"[a-z][a-z_-]{2,}")


def _core(statement: str | None) -> str:
    """The first sentence of a root-cause statement without its evidence ids."""
    if not statement:
        return ""
    return _IDS.sub("", statement).split(". ")[0].strip().rstrip(".")


def root_changed(before: RootCause | None, now: RootCause | None) -> bool:
    """Whether the cause changed: another leading piece of evidence, or other words.

    Evidence ids added to the same cause, or the same statement cut at another word
    (its numbers, its ids), are not a change."""
    if before is None or now is None:
        return (before is None) != (now is None)
    if before.evidence and now.evidence and before.evidence[0] != now.evidence[0]:
        return True
    a, b = _cause_words(before.statement), _cause_words(now.statement)
    if not a or not b:
        return a != b
    return len(a & b) / len(a | b) < 0.6


def _cause_words(statement: str) -> set[str]:
    return set(_CAUSE_WORD.findall(_IDS.sub(" ", statement).lower()))


def intent_of(question: str, known: list[str]) -> Intent:
    """The intent of a follow-up (re-exported for the session)."""
    return read_intent(question, known)
