"""Which runbook is about a finding: topic first, then shared distinctive terms.

A runbook is attached to a fact only when it is about that kind of failure: its title,
alerts, tags or headings name the fact's topic (``OOM``/``memory`` for an OOM kill,
``probe``/``readiness`` for a failing probe, ``pending``/``schedul`` for a scheduling
failure), or it shares a distinctive identifier with the fact (an exception name, an
error code, a metric name). Then the strength of the match counts the fact's terms
found in the runbook, weighted by how rare each term is among the runbooks known, so
a runbook about "node not ready" is never cited for a pod whose process exits 1.
"""

from __future__ import annotations

import math
import re

from opsmate.agent.kinds import base, card_for
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.runbooks.library import RunbookDoc
from opsmate.agent.signals import match_terms


def topics(f: Fact) -> tuple[str, ...]:
    """The words a runbook's title, tags or alerts use for the fact's failure mode."""
    return card_for(f).topics or base(f.kind).topics


_WORD = re.compile(r"[a-z0-9_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _split_camel(title: str) -> str:
    """``KubePodCrashLooping`` -> ``Kube Pod Crash Looping`` (alert-named runbooks)."""
    return _CAMEL.sub(" ", title)


def shares_phrase(quote: str, text: str, n: int = 4) -> bool:
    """Whether ``n`` consecutive words of ``quote`` (an error text) appear in ``text``."""
    words = _WORD.findall(quote.lower())
    if len(words) < n:
        return False
    flat = " ".join(_WORD.findall(text))
    return any(" ".join(words[i : i + n]) in flat for i in range(len(words) - n + 1))


def term_weight(t: str) -> float:
    """Identifiers (digits, underscores, long tokens) weigh 3; words and CJK bigrams 1."""
    return 3.0 if ("_" in t or any(ch.isdigit() for ch in t) or len(t) >= 10) else 1.0


class DocMatcher:
    """How strongly a fact points at each runbook (IDF over the runbooks known)."""

    def __init__(self, docs: list[RunbookDoc]) -> None:
        self.text = {d.source: d.full_text().lower() for d in docs}
        self.head = {
            d.source: " ".join(
                [
                    d.title,
                    _split_camel(d.title),
                    *d.meta.tags,
                    *d.meta.alerts,
                    *(_split_camel(a) for a in d.meta.alerts),
                ]
            ).lower()
            for d in docs
        }
        self.service = {d.source: (d.service or "").lower() for d in docs}
        self.n = max(len(docs), 1)

    def about(self, f: Fact, doc: RunbookDoc) -> bool:
        """Whether the runbook is about this kind of finding (its topic or its identifier)."""
        head = self.head.get(doc.source, "")
        if f.kind == K.ALERT and f.quote in doc.meta.alerts:
            return True
        if any(w in head for w in topics(f)):
            return True
        if f.reason and len(f.reason) >= 5 and f.reason.lower() in head:
            return True
        words = [t for t, w in match_terms(f.quote or f.statement).items() if w < 3.0]
        own = self.service.get(doc.source)
        if own and own in f.names() and sum(1 for t in words if t in head) >= 1:
            return True  # a runbook of this very service that names what the fact shows
        if sum(1 for t in words if len(t) >= 5 and t in head) >= 2:
            return True
        text = self.text.get(doc.source, "")
        rare = max(1, self.n // 5)
        idents = [
            t
            for t, w in match_terms(f.quote or "").items()
            if w >= 3.0
            and len(t) >= 6
            and not any(ch.isdigit() for ch in t)
            and t in text
            and sum(1 for x in self.text.values() if t in x) <= rare
        ]
        return bool(idents) or shares_phrase(f.quote or f.message or "", text)

    def strength(self, f: Fact, doc: RunbookDoc) -> float:
        """0 when the runbook is not about the fact or shares too little (raw weight < 3)."""
        if not self.about(f, doc):
            return 0.0
        text, head = self.text.get(doc.source, ""), self.head.get(doc.source, "")
        if f.kind == K.ALERT and f.quote in doc.meta.alerts:
            return 6.0
        raw = 0.0
        strength = 0.0
        for t in f.terms:
            if t not in text:
                continue
            w = term_weight(t)
            raw += w
            df = sum(1 for x in self.text.values() if t in x)
            strength += w * math.log(1 + self.n / max(df, 1)) * (2.0 if t in head else 1.0)
        topic = any(w in head for w in topics(f))
        if topic:
            strength += 2.0
            raw += 1.5
        if self.service.get(doc.source) and self.service[doc.source] in f.names():
            strength += 2.0  # the runbook of the very service the fact is about
            raw += 1.5
        return strength if raw >= 3.0 else 0.0
