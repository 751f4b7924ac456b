"""Which PromQL a snapshot records, besides what metric discovery found.

Metric discovery (:mod:`opsmate.tools.prometheus.discovery`) finds the series that
describe the services and builds their request, error, duration, saturation and container
queries. :func:`plan_queries` adds, first, the expression of the alert ``--alert`` names
(from ``/api/v1/rules``; as a range and as an instant query) and the queries the runbooks
about the services write (front-matter checks and PromQL blocks) whose metrics all exist,
then the discovered ones, without duplicates. Each is recorded over the window.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


@dataclass
class PlannedQuery:
    query: str
    description: str
    instant: bool = False


def metric_names_in(query: str) -> set[str]:
    """Identifiers of ``query`` that may be metric names (words before ``{`` / ``[`` / end)."""
    words = set(_NAME.findall(re.sub(r'"[^"]*"', "", query)))
    return {w for w in words if "_" in w or ":" in w}


def runbook_queries(docs: Iterable[Any], services: list[str], names: set[str]) -> list[str]:
    """PromQL the runbooks about ``services`` write, when every metric in it exists."""
    from opsmate.agent.runbooks.commands import commands_in_section

    out: list[str] = []
    for doc in docs:
        if services and doc.service not in services:
            continue
        found = [str(c.args.get("query")) for c in doc.meta.checks if c.tool == "query_metrics"]
        for heading, text in doc.sections:
            found += [c.text for c in commands_in_section(text, heading) if c.tool]
        for q in found:
            used = metric_names_in(q)
            if q and "<" not in q and "$" not in q and used and used <= names and q not in out:
                out.append(q)
    return out


def plan_queries(
    *,
    discovered: list[PlannedQuery],
    services: list[str],
    names: set[str],
    runbook_docs: Iterable[Any] = (),
    alert_expr: tuple[str, str] | None = None,
) -> list[PlannedQuery]:
    """Every query a snapshot records (see the module docstring), without duplicates."""
    planned: list[PlannedQuery] = []
    if alert_expr is not None:
        name, expr = alert_expr
        planned.append(PlannedQuery(expr, f"expression of alert {name}"))
        planned.append(PlannedQuery(expr, f"expression of alert {name}", instant=True))
    planned += [
        PlannedQuery(q, "from a runbook") for q in runbook_queries(runbook_docs, services, names)
    ]
    planned += discovered
    seen: set[tuple[str, bool]] = set()
    unique = []
    for p in planned:
        key = (re.sub(r"\s+", "", p.query), p.instant)
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique
