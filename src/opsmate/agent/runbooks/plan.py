"""Planning from runbooks: search them, load them, queue their checks and commands.

The runbooks matching the question are searched first; the declared ``checks`` of
the applicable ones are queued (placeholders filled, other environments dropped),
then the read-only commands of their code blocks. As evidence arrives, the
applicable runbook it points at (by its distinctive terms) has its checks queued too.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from opsmate.agent.judge.causality import Role, role
from opsmate.agent.judge.runbook_match import DocMatcher
from opsmate.agent.plan.planner import Planner
from opsmate.agent.plan.tiers import Tier
from opsmate.agent.runbooks.commands import commands_in_section
from opsmate.agent.runbooks.library import (
    Applicability,
    RunbookDoc,
    applicability,
    fill_check_args,
    reference_match,
    superseded_sources,
)
from opsmate.agent.state import PendingCheck, TaskState
from opsmate.knowledge.types import SearchHit
from opsmate.records.payloads import RunbookHit

if TYPE_CHECKING:
    from opsmate.agent.loop.engine import Engine

# pending checks below this priority run before the model is asked: what the evidence points
# at, runbook checks and the survey (corroboration and background are the model's call)
TIER_ONE = int(Tier.CORROBORATE)


class RunbookPlanning:
    """Turns runbooks into pending checks for one investigation."""

    def __init__(
        self, engine: Engine, state: TaskState, planner: Planner, notes: list[str]
    ) -> None:
        self.e = engine
        self.state = state
        self.planner = planner
        self.notes = notes

    def consult(self, question: str) -> None:
        """Search the runbooks with the question, services and identifiers; queue checks."""
        if self.e.preferred_runbooks and len(self.state.questions) == 1:
            self.read_preferred()
        if self.e.retriever is None:
            self.notes.append("no runbook knowledge base is available for this investigation")
            return
        if len(self.state.questions) > 1:  # a follow-up: completed from the session's state
            from opsmate.knowledge.query import complete_follow_up

            terms = [*self.state.constraints.services, *self.state.identifiers[:4]]
            question = complete_follow_up(question, self.state.questions[0], terms) or question
        words = [question, *self.state.constraints.services, *self.state.identifiers[:4]]
        try:
            resp = self.e.retriever.search(" ".join(words)[:500], top_k=8, include_deprecated=True)
        except Exception as exc:  # a broken index is a note, not a crash
            self.notes.append(f"runbook search failed: {exc}")
            return
        if resp.low_evidence:
            self.notes.append("runbook search found only weak matches for the question")
        self.add_docs(resp.hits, base_priority=10)

    def read_preferred(self) -> None:
        """Read the runbooks the task prefers (an alert's ``runbook_url``) before searching:
        each found one (in the runbook folders, else among the index's hits) gets the first
        R id and, when it applies, its checks queued ahead of the search hits'."""
        for ref in self.e.preferred_runbooks:
            doc = self.e.library.find(ref) or self._indexed(ref)
            if doc is None:
                self.notes.append(f"runbook {ref} (named by the alert) is not indexed here")
                continue
            if doc.source in self.e.docs:
                continue
            head, text = doc.sections[0] if doc.sections else ([], "")
            rid = self.e.store.add_runbook(
                doc.source,
                heading_path=doc.hit_heading or list(head),
                doc_version=doc.doc_version,
                excerpt=doc.hit_text or text,
                meta=doc.meta_dict(),
                full_text=doc.full_text(),
            )
            self.e.docs[doc.source] = (rid, doc)
            sup = superseded_sources(d for _, d in self.e.docs.values())
            app = applicability(doc, self.state.constraints, sup)
            if app.applies:
                self.plan_from_doc(doc, 5)
            else:
                why = ", ".join(app.reasons)
                self.notes.append(f"runbook {doc.source} (named by the alert) skipped: {why}")

    def _indexed(self, ref: str) -> RunbookDoc | None:
        """The indexed runbook ``ref`` points at, found by searching the words of its path."""
        if self.e.retriever is None:
            return None
        words = re.sub(r"[^A-Za-z0-9]+", " ", ref.rsplit("/", 2)[-1] if "/" in ref else ref)
        try:
            resp = self.e.retriever.search(words[:300], top_k=10, include_deprecated=True)
        except Exception:  # a broken index is noted by consult()
            return None
        for hit in resp.hits:
            if reference_match(ref, hit.source):
                return self.e.library.doc_for_hit(hit)
        return None

    def add_docs(self, hits: list[SearchHit], base_priority: int, max_new: int = 2) -> None:
        new: list[RunbookDoc] = []
        for hit in hits:
            doc = self.e.library.doc_for_hit(hit)
            if doc.source not in self.e.docs:
                rid = self.e.store.add_runbook(
                    doc.source,
                    heading_path=doc.hit_heading or list(hit.heading_path),
                    doc_version=doc.doc_version or hit.doc_version,
                    excerpt=doc.hit_text or hit.text,
                    meta=doc.meta_dict(),
                    full_text=doc.full_text(),
                )
                self.e.docs[doc.source] = (rid, doc)
                new.append(doc)
        sup = superseded_sources(d for _, d in self.e.docs.values())
        usable = [d for d in new if applicability(d, self.state.constraints, sup).applies]
        usable.sort(key=lambda d: d.rank)
        for i, doc in enumerate(usable[:max_new]):
            self.plan_from_doc(doc, base_priority + 10 * i)

    def plan_from_doc(self, doc: RunbookDoc, priority: int) -> None:
        if doc.source in self.e.planned:
            return
        self.e.planned.add(doc.source)
        rid = self.e.docs[doc.source][0]
        c = self.state.constraints
        service = doc.service or (c.services[0] if c.services else None)
        ns = c.namespaces[0] if c.namespaces else self.e.namespace
        for j, check in enumerate(doc.meta.checks[:9]):
            args = fill_check_args(
                check.args, service=service, namespace=ns, environment=c.environment
            )
            if args is None:
                continue
            env = args.get("environment")
            if env and c.environment and env != c.environment:
                self.notes.append(
                    f"runbook check '{check.name}' targets environment {env}; "
                    f"not run (task is limited to {c.environment})"
                )
                continue
            self.planner.add(
                PendingCheck(
                    tool=check.tool,
                    args=args,
                    reason=f"runbook check: {check.name or check.tool}",
                    source="runbook_check",
                    runbook=rid,
                    priority=priority + j,
                )
            )
        k = 0
        for heading, text in doc.sections:
            for cmd in commands_in_section(text, heading):
                if cmd.kind == "call" and cmd.tool:
                    self.planner.add(
                        PendingCheck(
                            tool=cmd.tool,
                            args=cmd.args,
                            reason=f"runbook command: {cmd.text[:80]}",
                            source="runbook_command",
                            runbook=rid,
                            priority=TIER_ONE + k,
                        )
                    )
                    k += 1

    def plan_matching_doc(self) -> None:
        """Queue the checks of the applicable runbook that the evidence now points at."""
        docs = self.doc_list()
        matcher = DocMatcher([d for _, d, _ in docs])
        strong = [
            f
            for f in self.state.facts
            if role(f) in (Role.CAUSE, Role.CHANGE) or f.kind == "metric_shift"
        ]
        best: tuple[float, RunbookDoc] | None = None
        for _, doc, app in docs:
            if not app.applies or doc.source in self.e.planned:
                continue
            score = sum(matcher.strength(f, doc) for f in strong)
            if score >= 3.0 and (best is None or score > best[0]):
                best = (score, doc)
        if best is not None:
            self.plan_from_doc(best[1], 14)

    def doc_list(self) -> list[tuple[str, RunbookDoc, Applicability]]:
        sup = superseded_sources(d for _, d in self.e.docs.values())
        return [
            (rid, d, applicability(d, self.state.constraints, sup))
            for rid, d in self.e.docs.values()
        ]


def hits_from(raw: list[RunbookHit]) -> list[SearchHit]:
    """The hits of a ``search_runbooks`` answer as search hits (one without a source is
    left out)."""
    hits = []
    for i, h in enumerate(raw):
        if h.source is None:
            continue
        try:
            hits.append(
                SearchHit(
                    rank=h.rank or i + 1,
                    score=h.score or 0.0,
                    chunk_id=h.chunk_id or "",
                    source=h.source,
                    heading_path=list(h.heading_path),
                    text=h.text or "",
                    parent_text=h.parent_text or h.text or "",
                    doc_version=h.doc_version or "",
                    metadata=dict(h.metadata),
                )
            )
        except (TypeError, ValueError):
            continue
    return hits
