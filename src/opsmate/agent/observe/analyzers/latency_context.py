"""What a slow log line was part of: the request it served and the operation it timed.

Many services log a request as a sequence of plain lines with no trace id::

    Handling request for invoice export batch=1230
    Running query: refresh_ledger_totals
    Query finished in 6.4 seconds.
    Export rendered in 6.6 seconds.

``log_stats`` keeps, for the slowest record of each latency template, the lines that
preceded it in the same stream (pod or host). From those this module reads the request
the slow step belonged to (the latest line that says a request came in), the operation
that was timed (the latest line before it that says what was being done), and how much of
an enclosing duration of the same request (the page, the handler) the step accounts for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from opsmate.records.logs import LatencyStat

_REQUEST = re.compile(
    r"\b(?:received|receiving|incoming|handling|handle|processing|serving|accepted|new|"
    r"start(?:ing|ed)?|begin(?:ning)?)\b[^.;]{0,40}?\b(?:request|call|job|message|order|"
    r"event|task)s?\b"
    r"|\brequests?\s+(?:for|to|from|on)\b"
    r"|^(?:GET|POST|PUT|DELETE|PATCH|HEAD)\s+/",
    re.I,
)
_OPERATION = re.compile(
    r"\b(?:fetch|query|querying|call(?:ing)?|execut|invok|run(?:ning)?|send(?:ing)?|"
    r"load(?:ing)?|read(?:ing)?|writ|select|insert|updat|lookup|looking up|stored procedure|"
    r"connect(?:ing)? to|request(?:ing)? )\w*",
    re.I,
)
_DURATION = re.compile(r"\d(?:[\d.]*)\s*(?:ms|s|sec|secs|seconds?|milliseconds?)\b", re.I)
_DONE = re.compile(r"(?i)\b(?:success(?:fully)?|completed?|done|finished|connected|result)\b")
_VARYING = re.compile(r"\b[0-9a-f]*\d[0-9a-f]*\b|\d+", re.I)  # ids, counters, batch numbers


def same_request(a: str | None, b: str | None) -> bool:
    """Whether two request lines are the same kind of request (numbers and ids aside)."""
    return a is not None and b is not None and _VARYING.sub("#", a) == _VARYING.sub("#", b)


@dataclass(frozen=True)
class SlowContext:
    request: str | None = None  # "Handling request for invoice export batch=1230"
    operation: str | None = None  # "Running query: refresh_ledger_totals"
    enclosing: LatencyStat | None = None  # the request-wide duration it is part of
    share: float | None = None  # this step's median / the enclosing median

    def words(self) -> str:
        """A clause for the fact's statement ("" when nothing is known)."""
        parts = []
        if self.request:
            parts.append(f'during "{self.request}"')
        if self.operation:
            parts.append(f'timing "{self.operation}"')
        if self.enclosing is not None and self.share is not None:
            parts.append(
                f'{round(self.share * 100)}% of "{self.enclosing.key}" '
                f"(p50 {_fmt(self.enclosing.p50_ms)})"
            )
        return ", ".join(parts)

    def detail(self) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.request:
            out["request"] = self.request
        if self.operation:
            out["operation"] = self.operation
        if self.enclosing is not None:
            out["enclosing"] = self.enclosing.key
            out["share"] = self.share
        return out


def _fmt(ms: float | None) -> str:
    if ms is None:
        return "?"
    return f"{ms / 1000:.3g} s" if ms >= 1000 else f"{ms:.3g} ms"


def request_of(context: list[str]) -> str | None:
    """The latest preceding line that says a request (a call, a job) came in."""
    for line in reversed(context):
        if _REQUEST.search(line) and not _DURATION.search(line):
            return line.strip()
    return None


def operation_of(context: list[str], request: str | None) -> str | None:
    """What the slow step timed: walking back from it over lines that report an outcome,
    the first line that says what was being done; none when an earlier timed step ended
    in between (a request-wide duration times no single operation) or the request line
    comes first."""
    for line in reversed(context):
        if request is not None and line.strip() == request:
            return None
        if _DURATION.search(line):
            return None
        if _OPERATION.search(line) and not _DONE.search(line):
            return line.strip()
        if not _DONE.search(line):
            return None
    return None


def slow_context(lat: LatencyStat, all_latency: list[LatencyStat]) -> SlowContext:
    """Where ``lat``'s slowest record sat: its request, its operation, and the request-wide
    duration (another template of the same service after the same request line, at least
    as slow) it makes up most of."""
    if not lat.context:
        return SlowContext()
    request = request_of(lat.context)
    operation = operation_of(lat.context, request)
    enclosing, share = None, None
    mine = lat.p50_ms or 0.0
    if request is not None and mine > 0:
        for other in all_latency:
            if other is lat or other.service != lat.service or not other.p50_ms:
                continue
            if not same_request(request_of(other.context), request) or other.p50_ms < mine:
                continue
            ratio = mine / other.p50_ms
            if ratio >= 0.5 and (enclosing is None or other.p50_ms < (enclosing.p50_ms or 0)):
                enclosing, share = other, ratio
    return SlowContext(request, operation, enclosing, share)
