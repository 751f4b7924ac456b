"""Rules that corroborate a cause: its other occurrences and the runbooks about it."""

from __future__ import annotations

import re
from collections.abc import Iterable

from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.plan.registry import Check, RuleContext, fact_rule
from opsmate.agent.plan.tiers import Tier
from opsmate.agent.signals import error_core

_CAUSES = (
    K.LOG_ERROR,
    K.DEPENDENCY_FAILURE,
    K.CONFIG_ERROR,
    K.LAST_WORDS,
    K.OOM_KILLED,
    K.IMAGE_PULL,
    K.SCHEDULING,
    K.PROBE_FAILURE,
    K.MISSING_REFERENCE,
    K.QUOTA_REFUSAL,
    K.CRASH_LOOP,
)


@fact_rule("runbooks_for_cause", Tier.RUNBOOK, *_CAUSES)
def runbooks_for_cause(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """A cause about the subject: the runbooks about that kind of failure."""
    if "search_runbooks" not in ctx.tools or not (fact.focus or not ctx.subject.names):
        return []
    if fact.severity != "error":
        return []
    # one runbook search per kind of cause: the most frequent finding of that kind
    same = [f for f in ctx.facts if f.kind == fact.kind and f.key != fact.key and f.focus]
    if any((f.count, f.key) > (fact.count, fact.key) for f in same):
        return []
    term = key_term(fact.quote or fact.message or "") or (fact.reason or "")
    if not term:
        return []
    if term.strip('"').lower() in ctx.runbook_text:
        return []  # a runbook already known is about it
    text = f"{term} {error_core(fact.message or fact.quote or '', 80)}"
    return [Check("search_runbooks", {"query": text[:200]}, f"runbooks about {term}")]


@fact_rule("occurrences_of_error", Tier.CORROBORATE, K.LOG_ERROR)
def occurrences_of_error(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """An error of a service in focus: its other occurrences (who else, since when)."""
    if not (fact.focus or not ctx.services):
        return []
    term = key_term(fact.quote or "")
    if not term:
        return []
    args: dict[str, object] = {"query": term, "page_size": 20}
    if fact.service:
        args["service"] = fact.service
    return [Check("search_logs", args, f"occurrences of {term}")]


def key_term(quote: str) -> str | None:
    """The most distinctive token of an error text (exception name, error code, last clause)."""
    for pat in (
        r"(?:[A-Za-z_]\w*\.)*([A-Z][A-Za-z0-9]*(?:Error|Exception|Timeout|Fault|Failure|Refused"
        r"|Exceeded|Denied|Killed|BackOff))\b",
        r"\b([A-Z]{2,}[-_]?\d+[A-Z0-9]*|\d+[A-Z][A-Z0-9]+)\b",
        r"\b([A-Z][a-z]+(?:[A-Z][a-z0-9]+)+)\b",
        r"\b([a-z]+(?:_[a-z]+)+)\b",
    ):
        m = re.search(pat, quote)
        if m:
            return m.group(1)
    clauses = [c.strip(" .\"'") for c in re.split(r":\s", quote) if c.strip()]
    for clause in reversed(clauses):
        words = re.findall(r"[A-Za-z]{3,}", clause)
        if 2 <= len(words) <= 8 and not re.search(r"\d|/|…", clause):
            return f'"{clause}"'
    cjk = max(re.findall(r"[\u4e00-\u9fff]{4,}", quote), key=len, default="")
    if cjk:
        return cjk[:12]
    words = re.findall(r"[A-Za-z]{5,}", quote)
    return f'"{" ".join(words[:3])}"' if len(words) >= 2 else None
