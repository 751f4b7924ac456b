"""LogQL built from the log tools' filters (service, environment, level, free-text terms).

A :class:`LogQuery` is a stream selector (label matchers) and a pipeline (line filters,
``| json``, label filters); :meth:`LogQuery.render` writes it as LogQL and
:func:`count_by` wraps it in ``sum by (...) (count_over_time(... [range]))``.

Semantics follow bundle replay and the Elasticsearch adapter:

- service: the service label, case-insensitively (``app=~"(?i)order\\-service"``); with
  no service, ``app=~".+"`` (Loki wants one matcher that cannot match the empty string);
- environment: only when ``labels.environment`` is set (one Loki holding several
  environments); records without the label are kept, as Elasticsearch keeps records
  without the field (``env=~"test|"``);
- level: the level label with its aliases, case-insensitively, when ``labels.level`` is
  set; otherwise ``| json | level=~"(?i)(warn|warning)"`` on the JSON line;
- free-text terms: each a case-insensitive line filter (``|~ "(?i)pooltimeout"``),
  ``"quoted phrases"`` whole, ``-term`` as ``!~``: every term must match the line.

Strings are written as raw (backtick) strings, so regular expressions need no second
escaping; a value holding a backtick is written as a double-quoted string instead.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from opsmate.tools.shaping import expand_levels, parse_terms

if TYPE_CHECKING:
    from opsmate.config import LokiSource

__all__ = [
    "ERROR_LEVELS",
    "ERROR_WORDS_RE",
    "LogQuery",
    "count_by",
    "duration",
    "json_label",
    "log_query",
    "quote",
]

ERROR_LEVELS = ("error", "err", "fatal", "critical", "crit", "panic", "severe", "emerg")
ERROR_WORDS_RE = (
    r"(?i)\b(error|errors|exception|failed|failure|fail|refused|timeout|unable|cannot|"
    r"undefined|denied|unreachable|resolve|unavailable|invalid|missing|fatal|panic|killed|"
    r"expired|exhausted|traceback)\b"
)


def quote(value: str) -> str:
    """A LogQL string literal holding ``value`` exactly."""
    if "`" not in value:
        return f"`{value}`"
    return json.dumps(value, ensure_ascii=False)


def json_label(name: str) -> str:
    """The label ``| json`` makes of a top-level field (Loki replaces other characters
    than letters, digits and ``_`` by ``_``)."""
    out = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return out if out and not out[0].isdigit() else f"_{out}"


def _alternatives(values: list[str]) -> str:
    return "(?i)(" + "|".join(re.escape(v) for v in values) + ")"


@dataclass
class LogQuery:
    """A LogQL log query: label matchers ``(label, op, value)`` and pipeline stages."""

    matchers: list[tuple[str, str, str]] = field(default_factory=list)
    stages: list[str] = field(default_factory=list)

    def render(self) -> str:
        sel = ", ".join(f"{name}{op}{quote(value)}" for name, op, value in self.matchers)
        return " ".join(["{" + sel + "}", *self.stages])

    def with_matcher(self, name: str, op: str, value: str) -> LogQuery:
        """A copy with one more label matcher."""
        return LogQuery([*self.matchers, (name, op, value)], list(self.stages))

    def with_stages(self, *stages: str) -> LogQuery:
        """A copy with more pipeline stages at the end."""
        return LogQuery(list(self.matchers), [*self.stages, *stages])


def log_query(
    src: LokiSource,
    *,
    environment: str,
    service: str | None,
    level: str | None,
    terms: str | None = None,
) -> LogQuery:
    """The log query for these filters (what the protocol fixture must understand)."""
    labels = src.labels
    if service:
        matchers = [(labels.service, "=~", "(?i)" + re.escape(service))]
    else:
        matchers = [(labels.service, "=~", ".+")]
    if labels.environment:
        matchers.append((labels.environment, "=~", re.escape(environment) + "|"))
    q = LogQuery(matchers)
    must, must_not = parse_terms(terms)
    stages = [f"|~ {quote('(?i)' + re.escape(t))}" for t in must]
    stages += [f"!~ {quote('(?i)' + re.escape(t))}" for t in must_not]
    q = q.with_stages(*stages)
    levels = sorted(expand_levels(level) or ())
    if levels:
        q = with_levels(q, src, levels)
    return q


def with_levels(q: LogQuery, src: LokiSource, levels: list[str]) -> LogQuery:
    """``q`` narrowed to records whose level is one of ``levels`` (case-insensitive)."""
    if src.labels.level:
        return q.with_matcher(src.labels.level, "=~", _alternatives(levels))
    return q.with_stages(
        "| json", f"| {json_label(src.level_field)}=~{quote(_alternatives(levels))}"
    )


def unleveled_errors(q: LogQuery, src: LokiSource) -> LogQuery:
    """``q`` narrowed to records without a level whose line holds an error word."""
    if src.labels.level:
        return q.with_matcher(src.labels.level, "=", "").with_stages(f"|~ {quote(ERROR_WORDS_RE)}")
    return q.with_stages(
        f"|~ {quote(ERROR_WORDS_RE)}", "| json", f"| {json_label(src.level_field)}={quote('')}"
    )


def level_key(src: LokiSource) -> str:
    """The label a count is grouped by to count levels."""
    return src.labels.level or json_label(src.level_field)


def duration(ns: int) -> str:
    """A LogQL range of ``ns`` nanoseconds, in whole milliseconds (at least 1 ms)."""
    return f"{max(ns // 1_000_000, 1)}ms"


def count_by(q: LogQuery, src: LokiSource, range_ns: int, *, by_level: bool = True) -> str:
    """``sum by (level) (count_over_time(q [range]))`` (``sum(...)`` without ``by_level``)."""
    inner = q
    if by_level and not src.labels.level and "| json" not in q.stages:
        inner = q.with_stages("| json")
    body = f"count_over_time({inner.render()} [{duration(range_ns)}])"
    if by_level:
        return f"sum by ({level_key(src)}) ({body})"
    return f"sum({body})"
