"""The log_stats answer: templates, levels, rare errors, latency and status over time.

:class:`StatsBuilder` reads parsed lines (:mod:`opsmate.loganalysis.parse`) one at a time
and keeps, per template (:mod:`opsmate.loganalysis.templates`) and canonical level, the
count, written and inferred levels, first / last time, one verbatim example and a
timeline; per endpoint (or template) the durations and the status codes. Its
:meth:`~StatsBuilder.result` is a :class:`opsmate.records.logs.LogStats` in JSON form:

- ``top_messages``: the most frequent templates;
- ``rare_errors``: the rarest error-like templates not among them, oldest first among
  equals (a single ERROR among 100,000 INFO lines is as visible as the top one);
- ``latency``: p50 / p99 / max per endpoint or template, a per-bucket p50 timeline and
  the largest shift of the median (``shift``: when, before, after); for a template, the
  lines its slowest record followed in the same stream (``context``: the same pod or host,
  oldest first), which say what was timed and which request it belonged to;
- ``status``: status codes per endpoint, errors (5xx or failed / timeout outcomes) per
  bucket;
- ``timeline``: records per bucket, in total and of error / warn level;
- ``buckets``: the time buckets the timelines count in.

Records whose level was inferred from their content count under ``unknown`` in
``by_level`` (nothing was written) and under their inferred level in
``by_level_inferred``; an INFO record is never an error.
"""

from __future__ import annotations

import itertools
import math
import re
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from opsmate.loganalysis.parse import LEVEL_RANK, ParsedLine
from opsmate.loganalysis.signals import classify
from opsmate.loganalysis.templates import TemplateMiner
from opsmate.timeparse import format_time, parse_time

__all__ = [
    "ERROR_OUTCOMES",
    "StatsBuilder",
    "example_text",
    "percentile",
    "says_failure",
    "stream_of",
]

ERROR_OUTCOMES = frozenset(
    {
        "error", "errors", "failed", "failure", "fail", "timeout", "timed_out", "timedout",
        "unavailable", "refused", "aborted", "crashed", "exception", "denied", "rejected",
    }
)  # fmt: skip
EXAMPLE_CHARS = 300
PATTERN_CHARS = 200
MAX_KEYS = 500  # endpoints / latency keys tracked (more are pooled under "(other)")
CONTEXT_LINES = 8  # preceding lines of the same stream kept for a slow record
CONTEXT_CHARS = 160  # of each
MAX_STREAMS = 2000  # streams whose recent lines are kept
_STREAM_FIELDS = (
    "pod", "pod_name", "kubernetes.pod.name", "kubernetes.pod_name", "host", "hostname",
    "host.name", "container_id", "container.id",
)  # fmt: skip


_STREAMS_KEPT = 3  # writers counted per template; named only when one or two wrote it
_STREAMS_NAMED = 2


def stream_of(record: Mapping[str, Any]) -> str | None:
    """The stream a log record was written to (its pod, else its host or container): the
    lines of one stream are one process's story, in order."""
    for name in _STREAM_FIELDS:
        v = record.get(name)
        if v is None and "." in name:
            cur: Any = record
            for part in name.split("."):
                cur = cur.get(part) if isinstance(cur, Mapping) else None
            v = cur
        if isinstance(v, str) and v:
            return v
    return None


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list (``q`` in 0..1)."""
    n = len(sorted_values)
    return sorted_values[min(n - 1, max(0, math.ceil(q * n) - 1))]


def example_text(pl: ParsedLine) -> str:
    """What to quote for a line: its content as written (after a timestamp / level prefix;
    an access line whole), or for JSON / logfmt its own message (with the error field when
    that says more)."""
    if pl.kind in ("json", "logfmt"):
        text = pl.message
        err = (pl.error or "").strip().split("\n", 1)[0].strip()
        if err and err not in text and not err.startswith(("at ", "File ")):
            text = f"{text} (error: {err})" if text else err
    elif not pl.message:
        text = pl.raw.strip()
    else:
        text = pl.message
    if pl.context and pl.context not in text:
        text = f"{text} ({pl.context})"  # what a short message is about
    if _TRACE_HEAD.match(text) and (tell := telling_line(text)):
        # a stack that starts with its header says what failed on its last line
        return f"{tell[: EXAMPLE_CHARS - 20]} (end of a traceback)"
    if "\n" in text and _THROWN_HEAD.search(text.split("\n", 1)[0]):
        # "Servlet.service() ... threw exception" and the exception on the next line: the
        # exception says what failed
        tell = telling_line(text)
        if tell:
            head = text.split("\n", 1)[0].strip()
            return f"{head[:80]} … {tell[: EXAMPLE_CHARS - 90]}"
    if len(text) > EXAMPLE_CHARS:
        body = _BODY_MESSAGE.search(text, 60)
        if body and body.group(1) not in text[: EXAMPLE_CHARS - 2]:
            # a response body quoted on the line ("Response: {... "message":"pods is
            # forbidden: ...", "code":403}"): the server's own message says what failed
            # (before the client's exception that wraps it: "ApiException: (403)")
            said = body.group(1).replace('\\"', '"')[:170]
            return f"{text[: EXAMPLE_CHARS - len(said) - 4].rstrip()} … {said}"
        deep = deepest_cause(text)
        if deep and deep not in text[:EXAMPLE_CHARS]:
            # a wrapped exception says what went wrong last: keep its innermost cause, and
            # the address the call went to when only the cut middle names it
            deep = deep[:170]
            where = _ADDRESS.search(text)
            addr = where.group(0)[:80] if where else ""
            head = text[: EXAMPLE_CHARS - len(deep) - len(addr) - 8].rstrip()
            if addr and addr not in head and addr not in deep:
                return f"{head} … {addr} … {deep}"
            return f"{head} … {deep}"
        exc = _LAST_EXCEPTION.findall(text)
        if exc and exc[-1] not in text[: EXAMPLE_CHARS - 2]:
            # "... trying next location: java.io.IOException: No space left on device": the
            # last exception named on the line is what failed
            tail = exc[-1][:150]
            return f"{text[: EXAMPLE_CHARS - len(tail) - 4].rstrip()} … {tail}"
    return text if len(text) <= EXAMPLE_CHARS else text[: EXAMPLE_CHARS - 1] + "…"


_BODY_MESSAGE = re.compile(r'"message"\s*:\s*"((?:[^"\\]|\\.){12,300})"')
_LAST_EXCEPTION = re.compile(
    r"\b(?:[A-Za-z_][\w$]*\.)*[A-Z]\w*(?:Exception|Error)\b:\s*[^:\n][^\n]{0,160}"
)


_TRACE_HEAD = re.compile(r"\s*(?:Traceback \(most recent call last\)|Exception in thread )")
# a line that announces the exception written under it (Tomcat, ASP.NET, Node)
_THROWN_HEAD = re.compile(
    r"\b(?:threw|thrown) (?:an )?exception\s*:?\s*$|\b(?:unhandled|uncaught) (?:exception|error)"
    r"(?: occurred)?[.:]?\s*$",
    re.I,
)
# Spring's "nested exception is", Java's "Caused by:", .NET's inner exception arrow (" ---> ")
_NESTED = re.compile(r"(?:nested exception is|Caused by:|\. Message:|^\s*--->)\s*", re.I | re.M)
_ADDRESS = re.compile(
    r"\b[a-z][a-z0-9+.-]*://[^\s\"'<>]+|\b[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*:\d{2,5}\b", re.I
)


def clip_error(text: str) -> str:
    """An error field cut to size; a long stack keeps its head and its innermost cause (the
    "Caused by" line that says what really failed, e.g. an API server's refusal)."""
    if len(text) <= EXAMPLE_CHARS:
        return text
    deep = deepest_cause(text)
    if not deep or deep in text[:EXAMPLE_CHARS]:
        return text[:EXAMPLE_CHARS]
    deep = deep[:400]
    return f"{text[: max(EXAMPLE_CHARS - len(deep), 80)].rstrip()} … {deep}"


def deepest_cause(text: str) -> str | None:
    """The innermost cause of a wrapped exception ("... nested exception is X: msg", Java's
    "Caused by: X: msg"), as its first line; for a message of several lines without one, the
    line that says most precisely what failed (:func:`telling_line`); or None."""
    parts = _NESTED.split(text)
    if len(parts) < 2:
        return telling_line(text)
    last = parts[-1].split("\n", 1)[0].strip().rstrip("]").strip()
    return last or None


_FRAME = re.compile(
    r"^(?:at [\w.$<>]+\(|File \"|\.\.\. \d+ (?:more|common frames)|Traceback \(most recent"
    r"|(?:---\s*)?End of |goroutine \d+|[\w./-]+\.(?:go|py|js|ts|rb|java|kt|cs):\d+|\^+$|~+$)"
)
_FAILED = re.compile(
    r"error|exception|fail|denied|forbidden|invalid|too (?:low|high|many|large|small|long)"
    r"|not (?:found|allowed|permitted|supported)|refused|cannot|can't|unable|exceed|timed? ?out"
    r"|no such|missing|unknown|expired|unreachable|must be|required|panic|fatal|killed",
    re.I,
)
_VALUE = re.compile(r"\[[^\]]{1,40}\]|\d|'[^']{1,60}'|\"[^\"]{1,60}\"|`[^`]{1,60}`")
_SEE_MORE = re.compile(
    r"[;,.]?\s*(?:for more (?:information|details),? see|see) \[?https?://\S+", re.I
)


def telling_line(text: str) -> str | None:
    """Of a message written over several lines (a start-up check's report, a Python traceback,
    an exception with its frames, an API error with its list of errors), the line after the
    first that says most precisely what failed: a failure word and a concrete value
    (``open files limit [1024] is too low``), or the first item under an "Errors:" heading
    (``* the store is sealed``); the last such line wins a tie (a traceback ends with its
    exception). Stack frames and "for more information see <url>" are not candidates. None
    for a single line."""
    lines = [_DECOR.sub("", ln).strip() for ln in text.splitlines()]
    best: tuple[int, int, str] | None = None
    listed = False  # the line before was an "Errors:" heading
    for i, ln in enumerate(lines[1:], 1):
        ln = _SEE_MORE.split(ln, 1)[0].strip()
        if not ln:
            continue
        heading = bool(_HEADING.search(ln))
        under, listed = listed, heading
        if (len(ln) < 12 and not under) or _FRAME.match(ln) or heading:
            continue
        score = (3 if _FAILED.search(ln) else 0) + (1 if _VALUE.search(ln) else 0)
        score += 4 if under else 0
        if score >= 3 and (best is None or score >= best[0]):
            best = (score, i, ln)
    return best[2] if best else None


def says_failure(text: str) -> bool:
    """Whether a line says that something failed (an error, a refusal, a limit, a panic).
    A garbage collector naming why it ran ("Pause Young (Allocation Failure)") says none."""
    return bool(_FAILED.search(_GC_CAUSE.sub("", text or "")))


_GC_CAUSE = re.compile(r"\((?:Allocation Failure|G1 Evacuation Pause|Metadata GC Threshold)\)")


_DECOR = re.compile(r"^[\s|*>-]+")
_HEADING = re.compile(r"\b(?:errors?|caused by|reasons?|details?)\s*:\s*$", re.I)


def _round(x: float) -> float:
    return float(f"{x:.4g}")


class _Group:
    __slots__ = (
        "cid", "count", "errors", "example", "example_idx", "first", "first_dt", "inferred_n",
        "kind", "last", "last_dt", "level", "levels", "levels_inferred", "origin", "service",
        "streams", "timeline",
    )  # fmt: skip

    def __init__(self, cid: int, level: str | None, nb: int) -> None:
        self.cid, self.level = cid, level
        self.count = self.errors = self.inferred_n = 0
        self.levels: dict[str, int] = {}
        self.levels_inferred: dict[str, int] = {}
        self.first = math.inf
        self.last = -math.inf
        self.first_dt: datetime | None = None
        self.last_dt: datetime | None = None
        self.example: ParsedLine | None = None
        self.example_idx: Any = None
        self.service: str | None = None
        self.origin: str | None = None
        self.kind = "text"
        self.timeline = [0] * nb
        self.streams: list[str] = []  # the first few pods / hosts that wrote it


class _Series:
    """Durations of one endpoint or template: ``points`` (epoch, ms) in arrival order, the
    same ``values`` alone, and per time bucket the values of records with a time (epoch
    >= 0), kept as they arrive so the answer needs no second pass over the points."""

    __slots__ = (
        "cid", "context", "count", "example", "first_dt", "last_dt", "max", "per_bucket",
        "points", "service", "source", "values",
    )  # fmt: skip

    def __init__(
        self, source: str | None, service: str | None, cid: int | None, nb: int = 0
    ) -> None:
        self.source, self.service, self.cid = source, service, cid
        self.points: list[tuple[float, float]] = []
        self.values: list[float] = []
        self.per_bucket: list[list[float]] = [[] for _ in range(nb)]
        self.count = 0
        self.max = -1.0
        self.example: str | None = None
        self.context: list[str] = []
        self.first_dt: datetime | None = None
        self.last_dt: datetime | None = None


class _Status:
    __slots__ = (
        "codes",
        "errors",
        "example",
        "first_err",
        "last_err",
        "service",
        "timeline",
        "total",
    )

    def __init__(self, service: str | None, nb: int) -> None:
        self.service = service
        self.codes: dict[str, int] = {}
        self.total = self.errors = 0
        self.timeline = [0] * nb
        self.first_err: datetime | None = None
        self.last_err: datetime | None = None
        self.example: str | None = None


class _Gauge:
    __slots__ = ("first_dt", "last_dt", "limit", "points", "service")

    def __init__(self, service: str | None) -> None:
        self.service = service
        self.points: list[tuple[float, float]] = []
        self.limit: float | None = None
        self.first_dt: datetime | None = None
        self.last_dt: datetime | None = None


_ISO_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}")
SKEW_S = 300.0  # a line's own time this far from when it was collected: its clock is off
_AGREE_S = 60.0


def _own_epoch(text: str) -> tuple[float, bool] | None:
    """The time a line writes itself (an ISO timestamp with a date) as unix seconds, and
    whether it said its zone; None for anything else (a clock without a date)."""
    text = text.strip()
    if not _ISO_TIME.match(text):
        return None
    try:
        dt = parse_time(text)
    except (ValueError, TypeError, OverflowError):
        return None
    zoned = bool(re.search(r"(?:Z|[+-]\d{2}:?\d{2})$", text))
    return dt.timestamp(), zoned


def _zone_like(delta: float) -> bool:
    """An offset a time zone written without its zone would give (whole quarter hours,
    within 14 h): not a clock's fault."""
    return abs(delta) <= 14 * 3600 + 60 and abs(delta / 900.0 - round(delta / 900.0)) < 0.02


def clock_offsets(
    clock: dict[tuple[str | None, int], tuple[float, str]],
) -> list[dict[str, Any]]:
    """Services whose own timestamps disagree with when their lines were collected: a
    clock that is off (a time fault, a node without NTP), with when it began when their
    earlier lines agreed."""
    by_service: dict[str | None, list[tuple[int, float, float, bool]]] = {}
    for (svc, b), (collected, said) in clock.items():
        own = _own_epoch(said)
        if own is not None:
            by_service.setdefault(svc, []).append((b, collected, own[0] - collected, own[1]))
    out: list[dict[str, Any]] = []
    for svc, rows in by_service.items():
        rows.sort()
        off = [r for r in rows if abs(r[2]) > SKEW_S and (r[3] or not _zone_like(r[2]))]
        if not svc or len(off) < 2:
            continue
        first = off[0]
        before = [r for r in rows if r[0] < first[0]]
        before_ok = bool(before) and all(abs(r[2]) <= _AGREE_S for r in before)
        after = [r for r in rows if r[0] >= first[0]]
        if len(off) < max(2, len(after) // 2):
            continue  # a few odd lines (a replayed record), not a clock
        deltas = sorted(r[2] for r in off)
        out.append(
            {
                "service": svc,
                "offset_s": _round(deltas[len(deltas) // 2]),
                "since": format_time(datetime.fromtimestamp(first[1], tz=UTC)),
                "before_ok": before_ok,
                "samples": len(off),
            }
        )
    return sorted(out, key=lambda d: -abs(d["offset_s"]))[:5]


class StatsBuilder:
    """Accumulates parsed lines into a log_stats answer (see the module docstring).

    ``start`` / ``end`` set the timeline buckets (``buckets`` of them; no timelines when
    either is None); ``ref_of`` turns the ``idx`` given to :meth:`add` into the source
    reference of an example record.
    """

    def __init__(
        self,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        buckets: int = 12,
        top: int = 10,
        rare: int = 8,
        miner: TemplateMiner | None = None,
        ref_of: Callable[[Any], str] | None = None,
    ) -> None:
        self.miner = miner or TemplateMiner()
        self.top, self.rare, self.ref_of = top, rare, ref_of
        self.t0 = start.timestamp() if start is not None else None
        t1 = end.timestamp() if end is not None else None
        self.start, self.end = start, end
        if self.t0 is not None and t1 is not None and t1 > self.t0 and buckets > 0:
            self.nb = buckets
            self.step = (t1 - self.t0) / buckets
        else:
            self.nb, self.step = 0, 0.0
        self.total = 0
        self.by_level: dict[str, int] = {}
        self.by_level_inferred: dict[str, int] = {}
        self.groups: dict[tuple[int, str | None], _Group] = {}
        self.latency: dict[str, _Series] = {}
        self.status: dict[str, _Status] = {}
        self.gauges: dict[tuple[str | None, str], _Gauge] = {}
        self.recent: dict[str, deque[ParsedLine]] = {}  # stream -> its last lines
        self.level_timeline = {k: [0] * self.nb for k in ("total", "error", "warn")}
        # (service, bucket) -> (collected at, the time the line itself says): one per bucket
        self.clock: dict[tuple[str | None, int], tuple[float, str]] = {}

    # ------------------------------------------------------------------ accumulate
    def _bucket(self, epoch: float) -> int:
        if not self.nb:
            return -1
        b = int((epoch - self.t0) / self.step) if self.t0 is not None else 0
        return 0 if b < 0 else (self.nb - 1 if b >= self.nb else b)

    def add(
        self,
        pl: ParsedLine,
        t: datetime | None,
        service: str | None,
        idx: Any = None,
        epoch: float | None = None,
        stream: str | None = None,
    ) -> None:
        """Count one parsed line seen at ``t`` (``epoch``: the same as unix seconds, when the
        caller has it) from ``service``; ``idx`` names the record for ``ref_of``; ``stream``
        (:func:`stream_of`) the pod or host that wrote it, oldest lines first."""
        self.add_many(((pl, t, service, idx, epoch, stream),))

    def add_many(
        self,
        rows: Iterable[
            tuple[ParsedLine, datetime | None, str | None, Any, float | None, str | None]
        ],
    ) -> None:
        """:meth:`add` for each ``(pl, t, service, idx, epoch, stream)`` of ``rows``, in
        order: one loop over a whole scan, its lookups made once."""
        by_level, by_level_inferred = self.by_level, self.by_level_inferred
        miner_add, groups, nb = self.miner.add, self.groups, self.nb
        t0, step = self.t0, self.step
        lt = self.level_timeline
        lt_total, lt_error, lt_warn = lt["total"], lt["error"], lt["warn"]
        recent_of = self.recent
        clock = self.clock
        add_latency, add_status, add_gauges = self._add_latency, self._add_status, self._add_gauges
        for pl, t, service, idx, epoch, stream in rows:
            self.total += 1
            level = pl.level
            inferred = pl.inferred
            raw = pl.level_raw
            if inferred or raw is None:
                by_level["unknown"] = by_level.get("unknown", 0) + 1
                if level is not None:
                    by_level_inferred[level] = by_level_inferred.get(level, 0) + 1
            else:
                by_level[raw] = by_level.get(raw, 0) + 1
            cid = miner_add(pl.message or pl.raw)
            key = (cid, level)
            g = groups.get(key)
            if g is None:
                g = groups[key] = _Group(cid, level, nb)
                g.example, g.example_idx, g.kind = pl, idx, pl.kind
                g.service = pl.service or service
                if pl.service and service and pl.service != service:
                    g.origin = service
            g.count += 1
            if stream is not None and len(g.streams) < _STREAMS_KEPT and stream not in g.streams:
                g.streams.append(stream)
            is_error = level == "error" or level == "fatal"
            if is_error:
                g.errors += 1
            if inferred:
                g.inferred_n += 1
                if level is not None:
                    li = g.levels_inferred
                    li[level] = li.get(level, 0) + 1
            else:
                lv = g.levels
                k = raw if raw is not None else "unknown"
                lv[k] = lv.get(k, 0) + 1
            b = -1
            if t is not None:
                if epoch is None:
                    epoch = t.timestamp()
                if epoch < g.first:
                    g.first, g.first_dt = epoch, t
                if epoch > g.last:
                    g.last, g.last_dt = epoch, t
                if nb:
                    b = int((epoch - t0) / step)  # type: ignore[operator]
                    b = 0 if b < 0 else (nb - 1 if b >= nb else b)
                    g.timeline[b] += 1
                    lt_total[b] += 1
                    if pl.time_text is not None:
                        ck = (pl.service or service, b)
                        if ck not in clock:
                            clock[ck] = (epoch, pl.time_text)
                    if is_error:
                        lt_error[b] += 1
                    elif level == "warn":
                        lt_warn[b] += 1
            else:
                epoch = -1.0
            recent = None
            if stream is not None:
                recent = recent_of.get(stream)
                if recent is None and len(recent_of) < MAX_STREAMS:
                    recent = recent_of[stream] = deque(maxlen=CONTEXT_LINES)
            if pl.duration_ms is not None:
                add_latency(pl, cid, t, epoch, service, recent, b)
            if pl.status is not None:
                add_status(pl, t, b, service)
            if pl.gauges is not None and t is not None:
                add_gauges(pl, t, epoch, service)
            if recent is not None:
                recent.append(pl)

    def _add_gauges(self, pl: ParsedLine, t: datetime, epoch: float, service: str | None) -> None:
        svc = pl.service or service
        for name, value, limit in pl.gauges or ():
            g = self.gauges.get((svc, name))
            if g is None:
                if len(self.gauges) >= 64:
                    continue
                g = self.gauges[(svc, name)] = _Gauge(svc)
            if len(g.points) < 200_000:
                g.points.append((epoch, value))
            if limit is not None:
                g.limit = limit
            if g.first_dt is None or t < g.first_dt:
                g.first_dt = t
            if g.last_dt is None or t > g.last_dt:
                g.last_dt = t

    def _add_latency(
        self,
        pl: ParsedLine,
        cid: int,
        t: datetime | None,
        epoch: float,
        service: str | None,
        recent: deque[ParsedLine] | None = None,
        b: int = -1,
    ) -> None:
        key = pl.endpoint or f"#{cid}"
        s = self.latency.get(key)
        if s is None:
            if len(self.latency) >= MAX_KEYS:
                key = "(other)"
                s = self.latency.get(key)
            if s is None:
                s = self.latency[key] = _Series(pl.duration_field, pl.service or service,
                                                None if pl.endpoint else cid, self.nb)  # fmt: skip
        s.count += 1
        ms = float(pl.duration_ms or 0.0)
        s.points.append((epoch, ms))
        s.values.append(ms)
        if b >= 0 and epoch >= 0:
            s.per_bucket[b].append(ms)
        if t is not None:
            if s.first_dt is None or t < s.first_dt:
                s.first_dt = t
            if s.last_dt is None or t > s.last_dt:
                s.last_dt = t
        if ms > s.max:
            s.max, s.example = ms, example_text(pl)  # the slowest one
            if recent is not None and s.cid is not None:
                s.context = [example_text(p) for p in recent]

    def _add_status(self, pl: ParsedLine, t: datetime | None, b: int, service: str | None) -> None:
        key = pl.endpoint or f"({pl.service or service or 'all'})"
        st = self.status.get(key)
        if st is None:
            if len(self.status) >= MAX_KEYS:
                key = "(other)"
                st = self.status.get(key)
            if st is None:
                st = self.status[key] = _Status(pl.service or service, self.nb)
        code = pl.status or ""
        st.total += 1
        st.codes[code] = st.codes.get(code, 0) + 1
        http = pl.http_status()
        if (http is not None and http >= 500) or (http is None and code in ERROR_OUTCOMES):
            st.errors += 1
            if b >= 0:
                st.timeline[b] += 1
            if t is not None:
                if st.first_err is None or t < st.first_err:
                    st.first_err = t
                if st.last_err is None or t > st.last_err:
                    st.last_err = t
            if st.example is None:
                st.example = example_text(pl)

    # ------------------------------------------------------------------ answer
    def result(self) -> dict[str, Any]:
        """The answer as a LogStats-shaped dict (empty sections left out)."""
        ranked = sorted(self.groups.values(), key=lambda g: (-g.count, g.first, g.cid))
        top = ranked[: max(self.top, 0)]
        in_top = {id(g) for g in top}
        # errors and warnings that chatter crowded out of the top: errors first, then the
        # warnings (a server's start-up warning may be all it says about its limits)
        rare = sorted(
            (g for g in ranked if id(g) not in in_top and (g.errors or g.level == "warn")),
            key=lambda g: (not g.errors, g.errors, g.first, g.cid),
        )[: max(self.rare, 0)]
        out: dict[str, Any] = {
            "total": self.total,
            "by_level": dict(sorted(self.by_level.items(), key=lambda kv: (-kv[1], kv[0]))),
        }
        if self.by_level_inferred:
            out["by_level_inferred"] = dict(
                sorted(self.by_level_inferred.items(), key=lambda kv: (-kv[1], kv[0]))
            )
        out["distinct_messages"] = len(self.groups)
        out["top_messages"] = [self._group(g) for g in top]
        if rare:
            out["rare_errors"] = [self._group(g) for g in rare]
        out["other_messages"] = sum(g.count for g in ranked[len(top) :])
        latency = self._latency()
        if latency:
            out["latency"] = latency
        status = self._status()
        if status:
            out["status"] = status
        gauges = self._gauges()
        if gauges:
            out["gauges"] = gauges
        offsets = clock_offsets(self.clock)
        if offsets:
            out["clock_offsets"] = offsets
        if self.nb and self.total:
            out["timeline"] = {k: v for k, v in self.level_timeline.items() if any(v)}
        if self.nb and (latency or status or self.groups):
            out["buckets"] = {
                "from": format_time(self.start),  # type: ignore[arg-type]
                "to": format_time(self.end),  # type: ignore[arg-type]
                "step_seconds": _round(self.step),
                "count": self.nb,
            }
        return out

    def _group(self, g: _Group) -> dict[str, Any]:
        pl = g.example
        assert pl is not None
        pattern = self.miner.template(g.cid)
        d: dict[str, Any] = {
            "pattern": pattern[:PATTERN_CHARS],
            "count": g.count,
            "levels": dict(sorted(g.levels.items(), key=lambda kv: (-kv[1], kv[0]))),
        }
        if g.levels_inferred:
            d["levels_inferred"] = g.levels_inferred
        if g.level is not None:
            d["severity"] = g.level
            if g.inferred_n == g.count:
                d["inferred"] = True
        if g.errors:
            d["errors"] = g.errors
        d["first_seen"] = format_time(g.first_dt) if g.first_dt is not None else None
        d["last_seen"] = format_time(g.last_dt) if g.last_dt is not None else None
        d["example"] = example_text(pl)
        if self.ref_of is not None and g.example_idx is not None:
            d["example_ref"] = self.ref_of(g.example_idx)
        if g.service:
            d["service"] = g.service
        if g.origin:
            d["origin"] = g.origin
        if g.streams and len(g.streams) <= _STREAMS_NAMED:
            d["streams"] = list(g.streams)  # one or two pods wrote it: which (more: everyone)
        if g.kind != "text":
            d["kind"] = g.kind
        fields = {k: v for k, v in (("endpoint", pl.endpoint), ("status", pl.status),
                  ("logger", pl.logger), ("host", pl.host)) if v}  # fmt: skip
        if pl.error and (pl.kind in ("json", "logfmt") or pl.error[:60] not in d["example"]):
            fields["error"] = clip_error(pl.error)  # a record's own error / stack_trace field
        if fields:
            d["fields"] = fields
        if g.level is not None and LEVEL_RANK.get(g.level, 0) >= LEVEL_RANK["warn"]:
            sig = classify(pl.message, pl.error, pl.host)
        else:
            sig = classify(pl.message, None, None)
            if sig.kind != "change":
                sig = sig.__class__()
        if sig.kind:
            d["signal"], d["reason"] = sig.kind, sig.reason
            if sig.targets:
                d["targets"] = list(sig.targets)
        if self.nb and any(g.timeline):
            d["timeline"] = g.timeline
        return d

    def _latency(self, limit: int = 6) -> list[dict[str, Any]]:
        out = []
        for key, s in self.latency.items():
            if s.count < 2:
                continue
            values = sorted(s.values)
            label = key if s.cid is None else (self.miner.template(s.cid)[:PATTERN_CHARS] or key)
            d: dict[str, Any] = {"key": label, "source": s.source}
            if s.service:
                d["service"] = s.service
            d.update(
                count=s.count,
                p50_ms=_round(percentile(values, 0.5)),
                p99_ms=_round(percentile(values, 0.99)),
                max_ms=_round(values[-1]),
                first_seen=format_time(s.first_dt) if s.first_dt else None,
                last_seen=format_time(s.last_dt) if s.last_dt else None,
                example=s.example,
            )
            if s.context:
                d["context"] = [c[:CONTEXT_CHARS] for c in s.context]
            if self.nb:
                d["timeline_p50_ms"] = [
                    _round(percentile(sorted(p), 0.5)) if p else None for p in s.per_bucket
                ]
                shift = self._shift(s.points)
                if shift:
                    d["shift"] = shift
            out.append(d)
        out.sort(key=lambda d: (-d["p99_ms"], -d["count"]))
        return out[:limit]

    def _shift(self, points: list[tuple[float, float]]) -> dict[str, Any] | None:
        """The bucket boundary that best splits the durations into two levels (the least
        absolute deviation from each side's median), when the medians differ x1.5."""
        pts = sorted(p for p in points if p[0] >= 0)
        if len(pts) > 4000:
            stride = len(pts) / 4000
            pts = [pts[int(i * stride)] for i in range(4000)]
        if len(pts) < 6 or self.t0 is None:
            return None
        best: tuple[float, float, float, float] | None = None
        epochs = [e for e, _ in pts]  # ascending: the points before a cut are a prefix
        values = [v for _, v in pts]
        for k in range(1, self.nb):
            cut = self.t0 + k * self.step
            split = bisect_left(epochs, cut)
            before = sorted(values[:split])
            after = sorted(values[split:])
            if len(before) < 3 or len(after) < 3:
                continue
            b50, a50 = percentile(before, 0.5), percentile(after, 0.5)
            cost = sum(abs(v - b50) for v in before) + sum(abs(v - a50) for v in after)
            if best is None or cost < best[0]:
                best = (cost, cut, b50, a50)
        if best is None:
            return None
        b50, a50 = best[2], best[3]
        if max(a50 + 1.0, b50 + 1.0) / min(a50 + 1.0, b50 + 1.0) < 1.5:
            return None
        at = datetime.fromtimestamp(best[1], tz=self.start.tzinfo if self.start else None)
        return {"at": format_time(at), "before_p50_ms": _round(b50), "after_p50_ms": _round(a50)}

    def _gauges(self, limit: int = 4, slots: int = 12) -> list[dict[str, Any]]:
        """Numeric gauge fields (memory, queue, connections ...) over their own time span:
        first / last / min / max, the limit logged beside them, a 12-slot series of means
        and ``rising`` (the share of slot-to-slot steps that do not go down)."""
        out = []
        for (svc, name), g in self.gauges.items():
            pts = sorted(g.points)
            if len(pts) < 3:
                continue
            values = [v for _, v in pts]
            lo, hi = min(values), max(values)
            if hi == lo:
                continue
            t0, t1 = pts[0][0], pts[-1][0]
            width = (t1 - t0) / slots or 1.0
            sums = [0.0] * slots
            counts = [0] * slots
            for e, v in pts:
                k = min(int((e - t0) / width), slots - 1)
                sums[k] += v
                counts[k] += 1
            series = [_round(sums[k] / counts[k]) if counts[k] else None for k in range(slots)]
            seen = [v for v in series if v is not None]
            steps = list(itertools.pairwise(seen))
            rising = sum(1 for a, b in steps if b >= a) / len(steps) if steps else 0.0
            d: dict[str, Any] = {"field": name}
            if svc:
                d["service"] = svc
            d.update(
                count=len(pts), first=_round(values[0]), last=_round(values[-1]),
                min=_round(lo), max=_round(hi),
            )  # fmt: skip
            if g.limit is not None:
                d["limit"] = _round(g.limit)
            d.update(
                first_seen=format_time(g.first_dt) if g.first_dt else None,
                last_seen=format_time(g.last_dt) if g.last_dt else None,
                series=series,
                rising=_round(rising),
            )
            out.append(d)
        out.sort(key=lambda d: (-d["rising"], -(d["max"] - d["min"])))
        return out[:limit]

    def _status(self, limit: int = 6) -> list[dict[str, Any]]:
        out = []
        for key, st in self.status.items():
            codes = dict(sorted(st.codes.items(), key=lambda kv: (-kv[1], kv[0]))[:8])
            d: dict[str, Any] = {"key": key}
            if st.service:
                d["service"] = st.service
            d.update(total=st.total, codes=codes, errors=st.errors)
            if st.errors:
                d["error_ratio"] = _round(st.errors / st.total)
                d["first_error"] = format_time(st.first_err) if st.first_err else None
                d["last_error"] = format_time(st.last_err) if st.last_err else None
                d["example"] = st.example
                if self.nb:
                    d["timeline_errors"] = st.timeline
            out.append(d)
        out.sort(key=lambda d: (-d["errors"], -d["total"], d["key"]))
        return out[:limit]
