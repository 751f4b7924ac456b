"""Follow-up questions answered as follow-ups.

In a session, a second question ("did the release change the pool settings?", "check the
prod error rate too") is answered first from what is already known: the task state and
the evidence gathered (facts, changes and their template diffs, metric series) —
:func:`answer_from_state`, no new call. Only when that cannot answer does the session
investigate again; the answer then says how many new read-only calls it made and what
changed (new facts, a new or unchanged root cause). A request outside the session's
constraints is refused once, naming the constraint (the environment never widens, a
restriction to some services never grows). Pure functions over the state and reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from opsmate.agent.intake.question import detect_environment, detect_services
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.report.model import FollowUp, Report, ReportFact
from opsmate.agent.state import TaskState


@dataclass
class FollowUpContext:
    """What a follow-up's answer is measured against: the refusals, the facts known
    before it, and the previous report."""

    refused: list[str]
    known_facts: set[str] = field(default_factory=set)
    previous: Report | None = None

    def answer(self, question: str, state: TaskState, report: Report, clean: Any) -> FollowUp:
        """The follow-up answer for ``report`` (``clean``: the store's redacting clipper)."""
        new = [
            ReportFact(statement=clean(f.statement, 500), evidence=list(f.evidence))
            for f in state.facts
            if f.key not in self.known_facts
        ]
        return compose(question, new, report, self.previous, self.refused)


def refusals(question: str, state: TaskState, known_envs: list[str], known: list[str]) -> list[str]:
    """What a follow-up asks for that the session's constraints do not allow."""
    out: list[str] = []
    c = state.constraints
    asked = detect_environment(question, known_envs)
    if asked and c.environment and asked != c.environment:
        out.append(
            f"'{asked}' is not read: this session is limited to '{c.environment}' (the "
            f"environment set by the first question); start a new session for {asked}"
        )
    if c.allowed_services:
        for svc in detect_services(question, known):
            if svc not in c.allowed_services:
                out.append(
                    f"'{svc}' is not read: this session is limited to "
                    f"{', '.join(c.allowed_services)}"
                )
    return out


def compose(
    question: str,
    new: list[ReportFact],
    report: Report,
    previous: Report | None,
    refused: list[str],
) -> FollowUp:
    """The follow-up answer: refusals first, then ``new`` facts and the root cause now."""
    new = new[:6]
    prev_root = previous.root_cause.statement if previous and previous.root_cause else None
    now_root = report.root_cause.statement if report.root_cause else None
    changed = _core(prev_root) != _core(now_root)
    parts: list[str] = []
    if refused:
        parts.append("Not done: " + "; ".join(refused) + ".")
    calls = report.budget.steps
    evidence = [e for f in new[:3] for e in f.evidence]
    if new:
        parts.append(
            f"{calls} read-only call(s) for this question found {len(new)} new fact(s): "
            + "; ".join(f"{f.statement} [{', '.join(f.evidence)}]" for f in new[:3])
            + ("; ..." if len(new) > 3 else "")
            + "."
        )
    elif calls:
        parts.append(f"{calls} read-only call(s) for this question found nothing new.")
    if changed and now_root:
        parts.append(f"The root cause changed: {_core(now_root)}.")
    elif now_root:
        parts.append("The root cause is unchanged (the full report follows).")
    elif prev_root:
        parts.append("The earlier root cause no longer holds; see the report.")
    else:
        parts.append(f"Still no root cause: {report.summary}")
    if now_root and report.root_cause is not None and (changed or not new):
        evidence += report.root_cause.evidence
    return FollowUp(
        question=question,
        answer=" ".join(parts),
        evidence=list(dict.fromkeys(evidence)),
        new_calls=calls,
        refused=refused,
        new_facts=new,
        root_changed=changed,
        previous_root=prev_root,
    )


_IDS = re.compile(r"\s*\((?:[ER]\d+(?:,\s*)?)+\)")


def _core(statement: str | None) -> str:
    """The first sentence of a root-cause statement without its evidence ids."""
    if not statement:
        return ""
    return _IDS.sub("", statement).split(". ")[0].strip().rstrip(".")


# ----------------------------------------------------------------------------- from the state

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "to",
        "too",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        "about",
        "after",
        "before",
        "again",
        "also",
        "just",
        "more",
        "now",
        "still",
        "than",
        "they",
        "since",
        "show",
        "tell",
        "see",
        "check",
        "look",
    ]
)
_CHANGE_WORDS = frozenset(
    [
        "change",
        "changed",
        "changes",
        "release",
        "released",
        "rollout",
        "rolled",
        "deploy",
        "deployed",
        "deployment",
        "upgrade",
        "upgraded",
        "revision",
        "rev",
        "helm",
        "version",
    ]
)
_CHANGED_VERBS = frozenset(
    ["change", "changed", "changes", "set", "alter", "altered", "modify", "modified"]
)


def _terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower().replace("_", " ")) if w not in _STOP]


def _fact_text(f: Fact) -> str:
    d = f.detail or {}
    extra = [str(t) for t in d.get("template_changes") or []]
    extra += [str(d.get(k) or "") for k in ("query", "change_cause", "output")]
    extra += [str(v) for v in (d.get("labels") or {}).values()]
    return " ".join([f.statement, f.quote or "", f.message or "", f.reason or "", *extra])


def _match(f: Fact, topic: set[str]) -> int:
    words = set(_terms(_fact_text(f)))
    return sum(1 for t in topic if t in words or (len(t) > 4 and t.rstrip("s") in words))


def answer_from_state(
    question: str, state: TaskState, clean: Any = None
) -> tuple[str, list[str]] | None:
    """Answer ``question`` from the facts already known (no call), or None when they
    cannot: ``(answer, evidence ids)``.

    A question about a change ("did the release change the pool settings?") is answered
    from the change facts and their template diffs: which change touched what was asked
    about, with the verbatim old and new values. Any other question is answered by the
    known facts that name what it asks about (at least two of its words, or one rare
    one), strongest first."""
    cut = clean or (lambda text, limit: text if len(text) <= limit else text[: limit - 1] + "…")
    terms = _terms(question)
    if not terms:
        return None
    about_change = any(t in _CHANGE_WORDS for t in terms)
    topic = {t for t in terms if t not in _CHANGE_WORDS and t not in _CHANGED_VERBS}
    changes = [f for f in state.facts if f.kind == K.CHANGE]
    if about_change and changes:
        with_diff = [f for f in changes if (f.detail or {}).get("template_changes")]
        hits = [f for f in with_diff if topic and _match(f, topic)]
        if hits:
            parts = [_change_answer(f, topic) for f in hits[:3]]
            ids = list(dict.fromkeys(e for f in hits[:3] for e in f.evidence))
            return cut("Yes: " + "; ".join(parts) + f" ({', '.join(ids)}).", 1200), ids
        if with_diff and topic:
            seen = "; ".join(_change_answer(f, set()) for f in with_diff[:2])
            ids = list(dict.fromkeys(e for f in with_diff[:2] for e in f.evidence))
            return (
                cut(
                    f"Not according to the changes read: {seen} ({', '.join(ids)}); "
                    f"none of them touches {' '.join(sorted(topic))}.",
                    1200,
                ),
                ids,
            )
        return None
    if not topic:
        return None
    scored = sorted(
        ((f, _match(f, topic)) for f in state.facts if f.kind not in (K.NO_CHANGE,)),
        key=lambda x: (-x[1], {"error": 0, "warning": 1, "info": 2}[x[0].severity]),
    )
    need = 1 if len(topic) == 1 else 2
    best = [f for f, n in scored if n >= need and f.evidence][:3]
    if not best:
        return None
    ids = list(dict.fromkeys(e for f in best for e in f.evidence))
    text = "From what was already read: " + "; ".join(
        f"{cut(f.statement, 300)} ({', '.join(f.evidence)})" for f in best
    )
    return text + ".", ids


def _change_answer(f: Fact, topic: set[str]) -> str:
    """``rollout revision 7 of web at 09:59:41 changed env POOL '20' -> '10'``: the template
    edits that name the topic (all of them when the topic is empty)."""
    from opsmate.agent.judge.statements import change_phrase

    d = f.detail or {}
    edits = [re.sub(r"^container [^:]+: ", "", str(t)) for t in d.get("template_changes") or []]
    picked = [t for t in edits if not topic or set(_terms(t)) & topic] or edits
    head = change_phrase(f).split(":")[0]
    when = f" at {f.time.strftime('%H:%M:%S')}" if f.time else ""
    return f"{head}{when} changed " + "; ".join(picked[:4])
