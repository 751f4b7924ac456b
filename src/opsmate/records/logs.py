"""Records of log tools: search_logs items, log_stats groups, pod_logs lines.

Owned by the log tools (:mod:`opsmate.tools.shaping`, replay and Elasticsearch);
the engine reads log results only through these models.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from opsmate.records.base import Record
from opsmate.records.types import (
    AnyMap,
    Count,
    Flag,
    OptInt,
    StrList,
    StrMap,
    Text,
    Time,
    items,
    lenient,
)

OptFloat = Annotated[float | None, lenient(lambda: None)]
IntList = Annotated[list[int], lenient(list)]


class LogItem(Record):
    """One log record as search_logs returns it (any other fields are kept in ``extra``)."""

    ref: Text = None
    timestamp: Time = Field(None, alias="@timestamp")
    message: Text = ""
    level: Text = None
    level_inferred: Flag = False  # the level was read from the content, not a field
    service: Text = None
    environment: Text = None
    pod: Text = None
    namespace: Text = None
    container: Text = None
    fields: AnyMap = Field(default_factory=dict)  # parsed structured fields (JSON, logfmt)
    # what the line is (opsmate.loganalysis.parse), given where it adds to the record:
    text: Text = None  # the human message when the line is JSON / logfmt / prefixed text
    kind: Text = None  # json | logfmt | access | text | traceback | frame | exception | ...
    error: Text = None
    status: Text = None
    duration_ms: OptFloat = None
    endpoint: Text = None


class LogGroup(Record):
    """A group of similar messages (a template) in log_stats.

    ``levels`` counts the levels as written (a field, JSON, a ``[ERROR]`` marker) and
    ``levels_inferred`` those read from the content of unleveled lines; ``severity`` is
    the group's canonical level (debug / info / warn / error / fatal) and ``errors`` how
    many of its records are error or fatal, written or inferred. ``signal`` says what
    the template is about (dependency / config / saturation / change, with ``reason``
    and the ``targets`` it names). ``timeline`` counts records per bucket of the
    answer's ``buckets``.
    """

    pattern: Text = ""
    count: Count = 0
    levels: dict[str, int] = Field(default_factory=dict)
    levels_inferred: dict[str, int] = Field(default_factory=dict)
    severity: Text = None
    inferred: Flag = False  # the severity was read from the content
    errors: Count = 0
    first_seen: Time = None
    last_seen: Time = None
    example: Text = ""
    example_ref: Text = None
    service: Text = None  # the emitter (a JSON line's own service field, else the record's)
    origin: Text = None  # the records' service, when the lines name another emitter
    streams: StrList = Field(default_factory=list)  # the pods / hosts that wrote it (one or two)
    kind: Text = None  # the line shape (json, access, exception ...)
    fields: StrMap = Field(default_factory=dict)  # endpoint, status, error, logger, host
    signal: Text = None
    reason: Text = None
    targets: StrList = Field(default_factory=list)
    timeline: IntList = Field(default_factory=list)


class Buckets(Record):
    """The time buckets of the timelines in a log_stats answer."""

    from_: Time = Field(None, alias="from")
    to: Time = None
    step_seconds: OptFloat = None
    count: Count = 0


class Shift(Record):
    """Where a latency series changed most: the split time and the medians on each side."""

    at: Time = None
    before_p50_ms: OptFloat = None
    after_p50_ms: OptFloat = None


class LatencyStat(Record):
    """Durations of one endpoint or template, from record fields or the text."""

    key: Text = None  # "GET /api/orders/{id}" or a template
    source: Text = None  # the field the durations came from ("response_time_ms", "text")
    service: Text = None
    count: Count = 0
    p50_ms: OptFloat = None
    p99_ms: OptFloat = None
    max_ms: OptFloat = None
    first_seen: Time = None
    last_seen: Time = None
    example: Text = None
    context: list[str] = Field(default_factory=list)  # lines the slowest one followed
    timeline_p50_ms: list[float | None] = Field(default_factory=list)
    shift: Shift | None = None


class StatusStat(Record):
    """Status codes (HTTP codes or outcome words) of one endpoint over time."""

    key: Text = None
    service: Text = None
    total: Count = 0
    codes: dict[str, int] = Field(default_factory=dict)
    errors: Count = 0  # 5xx, or outcomes such as failed / timeout / error
    error_ratio: OptFloat = None
    first_error: Time = None
    last_error: Time = None
    example: Text = None  # an erroring record's message
    timeline_errors: IntList = Field(default_factory=list)


class GaugeStat(Record):
    """A numeric gauge field (memory, queue depth, connections ...) over its own time span."""

    field: Text = None
    service: Text = None
    count: Count = 0
    first: OptFloat = None
    last: OptFloat = None
    min: OptFloat = None
    max: OptFloat = None
    limit: OptFloat = None  # a limit logged beside it (memory_limit_mb ...)
    first_seen: Time = None
    last_seen: Time = None
    series: list[float | None] = Field(default_factory=list)  # 12 slots of means
    rising: OptFloat = None  # share of slot-to-slot steps that do not go down


class ClockOffset(Record):
    """A service whose own timestamps (a time field it writes in its lines) disagree with
    the time the lines were collected at: its clock is off by ``offset_s`` seconds
    (negative: behind) from ``since``; ``before_ok``: earlier lines agreed."""

    service: Text = None
    offset_s: OptFloat = None
    since: Time = None
    before_ok: Flag = False
    samples: Count = 0


class LogStats(Record):
    """The answer of log_stats: counts by level and the message groups.

    ``top_messages`` are the most frequent templates, ``rare_errors`` the rarest
    error-like ones not among them (a single ERROR among 100,000 INFO lines is there);
    ``by_level_inferred`` counts the levels read from the content of unleveled records
    (those records are ``unknown`` in ``by_level``). ``latency`` and ``status`` summarise
    duration and status fields per endpoint or template.
    """

    total: Count = 0
    by_level: dict[str, int] = Field(default_factory=dict)
    by_level_inferred: dict[str, int] = Field(default_factory=dict)
    distinct_messages: Count = 0
    top_messages: Annotated[list[LogGroup], items(LogGroup)] = Field(default_factory=list)
    rare_errors: Annotated[list[LogGroup], items(LogGroup)] = Field(default_factory=list)
    other_messages: Count = 0
    latency: Annotated[list[LatencyStat], items(LatencyStat)] = Field(default_factory=list)
    status: Annotated[list[StatusStat], items(StatusStat)] = Field(default_factory=list)
    gauges: Annotated[list[GaugeStat], items(GaugeStat)] = Field(default_factory=list)
    clock_offsets: Annotated[list[ClockOffset], items(ClockOffset)] = Field(default_factory=list)
    timeline: dict[str, IntList] = Field(default_factory=dict)  # total / error / warn per bucket
    buckets: Buckets | None = None
    scanned: OptInt = None  # records read before a time-out (absent when all were read)

    def groups(self) -> list[LogGroup]:
        """Every group in the answer (top and rare), each once."""
        seen: set[tuple[str, str | None]] = set()
        out = []
        for g in [*self.top_messages, *self.rare_errors]:
            k = (g.pattern or "", g.severity)
            if k not in seen:
                seen.add(k)
                out.append(g)
        return out


class PodLogLine(Record):
    """One line of a pod's log tail (``pod_logs``).

    ``message`` is the line as written (for quoting); ``text`` the human message when the
    line is JSON, logfmt or carries a layout prefix; ``level`` canonical (debug / info /
    warn / error / fatal), ``level_inferred`` when read from the content; ``kind`` the
    line's shape (``exception``, ``frame``, ``panic``, ``exit`` ...).
    """

    time: Time = None
    level: Text = None
    level_inferred: Flag = False
    message: Text = ""
    container: Text = None
    previous: Flag = False  # from the previous (terminated) instance of the container
    labels: StrMap = Field(default_factory=dict)
    text: Text = None
    kind: Text = None
    error: Text = None
    exit_code: OptInt = None
    ref: Text = None  # the source reference of the record, when it has one
