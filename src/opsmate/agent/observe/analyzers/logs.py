"""Log results (log_stats, search_logs) as facts: errors, dependencies, configuration,
exhausted resources, changes, latency and error rates.

Reads ``log_stats`` through :class:`~opsmate.records.logs.LogStats`: every error-like
template (the most frequent and the rarest alike; levels written or inferred from
unleveled lines, an INFO template never) becomes a fact whose kind follows what the
line says (:mod:`.logs_facts`), quoting the line, with its count, first / last time and
its timing against the onset (``detail["before_onset"]``, ``["after_onset"]``,
``["new"]``, ``["background"]``, ``["order"]``: the rank of its first appearance among
the error templates, 0 the earliest). Templates that record a change (config reload,
deploy, feature flag, failover, rebalance) are ``CHANGE`` facts. ``latency`` entries
that are slow or shifted are ``LATENCY`` facts, and a slow dependency (a database call, a
query, an upstream request) is also a ``DEPENDENCY_FAILURE`` naming it; ``status``
entries with failed requests are ``ERROR_RATE`` facts naming the endpoint.

``search_logs`` items are parsed the same way (:mod:`opsmate.loganalysis.parse`) and
grouped by template.
"""

from __future__ import annotations

import re
from datetime import datetime
from statistics import median
from typing import Any

from opsmate.agent.kinds.registry import logged_at_any_level
from opsmate.agent.observe.analyzers.latency_context import slow_context
from opsmate.agent.observe.analyzers.logs_facts import (
    KIND_OF_SIGNAL,
    make_fact,
    onset_split,
    pattern_key,
    signal_statement,
    stable_key,
    target_ref,
    timing_words,
)
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.k8s_messages import Reading, read_message
from opsmate.agent.observe.registry import for_tools
from opsmate.agent.observe.software import backend_protocol, software_target
from opsmate.agent.observe.text import hm
from opsmate.loganalysis.parse import parse_record
from opsmate.loganalysis.signals import Signal, classify, hosts_in
from opsmate.loganalysis.stats import example_text
from opsmate.records.logs import (
    Buckets,
    ClockOffset,
    GaugeStat,
    LatencyStat,
    LogGroup,
    StatusStat,
)
from opsmate.records.payloads import LogsPayload, LogStatsPayload
from opsmate.tools.base import ToolResult

MAX_ERROR_FACTS = 10
MAX_WARNING_FACTS = 3
SLOW_P50_MS = 1000.0
SLOW_P99_MS = 3000.0
_DEPENDENCY_WORDS = re.compile(
    r"\b(?:database|db|sql|query|queries|redis|cache|memcache\w*|upstream|downstream|"
    r"dependency|backend|api call|http call|request to|call to|remote|external|grpc|kafka|"
    r"rabbit\w*|queue|storage|s3|bucket|elasticsearch|mongo\w*|postgres\w*|mysql|ldap|"
    r"payment gateway|gateway|procedure)\b",
    re.I,
)


# what the API server or a controller refuses, when an application or a controller (a
# CI runner creating pods, a drain tool evicting them) logs the refusal it got back:
# the same failure mode as the event would be
_REFUSALS_IN_LOGS = frozenset(
    {
        FactKind.ADMISSION_DENIED,
        FactKind.QUOTA_REFUSAL,
        FactKind.MISCONFIGURATION,
        FactKind.RBAC_DENIED,
    }
)


_REFUSAL_START = re.compile(
    r"[\w-]+ \"[^\"]+\" is forbidden|[\w.-]+ is forbidden: User|admission webhook"
    r"|failed calling webhook|violates PodSecurity"
    r"|exceeded quota|failed quota|error when evicting|cannot evict",
    re.I,
)


def _kubernetes_refusal(quote: str, err: str | None) -> tuple[Reading, str] | None:
    """The API server's refusal a line quotes, and that refusal's own words."""
    text = quote if not err or err in quote else f"{quote} {err}"
    text = text.replace('\\"', '"')  # the API server's Status quoted as JSON in the line
    reading = read_message(None, text, None)
    if reading is None or reading.kind not in _REFUSALS_IN_LOGS:
        return None
    if reading.kind == FactKind.MISCONFIGURATION and not (
        reading.detail.get("pdb") or reading.detail.get("webhook") or reading.detail.get("blocks")
    ):
        return None  # only a disruption budget or an admission webhook, read by their words
    start = _REFUSAL_START.search(text)
    return reading, (text[start.start() :] if start else text)[:240]


def _error_like(g: LogGroup) -> bool:
    return g.severity in ("error", "fatal") or bool(g.errors)


def _group_fact(
    g: LogGroup,
    ctx: ObserveContext,
    *,
    scope_service: str | None,
    buckets: Buckets | None,
    order: int | None,
    companions: list[tuple[LogGroup, list[str]]] | None = None,
) -> Fact | None:
    emitter = g.service or scope_service
    origin = g.origin or scope_service
    quote = g.example or g.pattern or ""
    err = g.fields.get("error")
    sig = classify(quote, err, g.fields.get("host"))
    if not sig.kind and g.signal:  # the tool's reading of the template (same function)
        sig = Signal(g.signal, g.reason, tuple(g.targets))
    if sig.kind == "dependency" and not sig.targets and companions:
        named = _companion_hosts(g, companions)
        if named:
            sig = Signal(sig.kind, sig.reason, tuple(named))
    if sig.reason == "protocol_mismatch":
        said = backend_protocol(f"{quote} {err or ''}", ctx.graph)
        if said:  # the Ingress that makes the proxy speak TLS to its backend
            sig = Signal(sig.kind, sig.reason, (said,))
    if sig.kind == "dependency" and not sig.targets:
        product = software_target(f"{quote} {err or ''}", ctx.graph, own=emitter)
        if product:  # "<Product>.Client ... authentication failed": the workload running it
            sig = Signal(sig.kind, sig.reason, (product,))
    error_like = _error_like(g)
    warn = g.severity == "warn" or (
        not error_like and logged_at_any_level(f"{quote} {err or ''}")
    )  # a failure its software logs as information (PostgreSQL's lock waits are LOG lines)
    kind = KIND_OF_SIGNAL.get(sig.kind)
    # a controller or client quoting the API server's refusal (kured logs kubectl's stderr
    # at info): the system's own account, whatever level the caller gave the line
    refusal = _kubernetes_refusal(quote, err) if kind is None else None
    k8s = refusal[0] if refusal else None
    if k8s is not None:
        kind = k8s.kind
        warn = warn or not error_like
    if kind == FactKind.CHANGE:
        severity = "warning" if (error_like or warn) else "info"
    elif error_like:
        kind = kind or FactKind.LOG_ERROR
        severity = "error"
    elif warn and kind is not None:
        severity = "warning"
    elif warn:
        kind, severity = FactKind.LOG_WARNING, "warning"
    else:
        return None
    who = emitter or "the logs"
    count = g.errors if error_like and g.errors else g.count
    split = onset_split(
        onset=ctx.onset, count=g.count, first=g.first_seen, last=g.last_seen,
        timeline=g.timeline, buckets=buckets,
        one_off_counts=kind in (FactKind.SATURATION, FactKind.CONFIG_ERROR),
    )  # fmt: skip
    # a generic message ("request error") with the failure in an error field: quote both
    said = quote if not err or err[:60] in quote else f"{quote}: {err[:300]}"
    status = str(g.fields.get("status") or "")
    if status.isdigit() and int(status) >= 400 and status not in said:
        said = f"{said} (HTTP {status})"  # the status code is what people grep for
    statement = signal_statement(kind, who, sig, said, count)
    if g.inferred:
        statement += " (an unleveled line; read as an error from its content)" if error_like else ""
    statement += timing_words(split)
    objects = [target_ref(t) for t in sig.targets[:3]] if kind != FactKind.CHANGE else []
    if k8s is not None:
        statement = f"{who} logged that Kubernetes refused it: {refusal[1] if refusal else said}"
        statement += timing_words(split)
        objects += [ObjRef(kind=k, name=n, namespace=x) for k, n, x in k8s.refs]
    if origin and origin != emitter:
        objects.insert(0, ObjRef(kind="app", name=origin))
    detail: dict[str, Any] = {
        "pattern": g.pattern,
        "levels": g.levels,
        "count": g.count,
        "source": "log_stats",
        **{k: v for k, v in split.items() if k != "background"},
    }
    if g.levels_inferred:
        detail["levels_inferred"] = g.levels_inferred
    if g.fields:
        detail["fields"] = dict(g.fields)
    if k8s is not None:
        detail.update(k8s.detail, verbatim=True)  # the refusal as quoted: classifies nothing
    elif kind in (FactKind.LOG_ERROR, FactKind.LOG_WARNING):
        detail["verbatim"] = True  # a template counted as logged ("x logged 14 warnings ...")
    if sig.targets:
        detail["targets"] = list(sig.targets)
    if order is not None:
        detail["order"] = order
    if g.example_ref:
        detail["example_ref"] = g.example_ref
    if g.streams:
        detail["streams"] = list(g.streams)
    return make_fact(
        ctx,
        kind=kind,
        key=f"log:{kind.value}:{(emitter or '*').lower()}:"
        f"{stable_key(pattern_key(quote), g.severity)}",
        statement=statement,
        quote=quote,
        severity=severity,  # type: ignore[arg-type]
        service=origin or emitter,
        subject=_node_of(g, ctx) or (ObjRef(kind="app", name=emitter) if emitter else None),
        objects=objects,
        count=count,
        first=g.first_seen,
        last=g.last_seen,
        reason=sig.reason,
        message=said,
        detail=detail,
        background=bool(split.get("background")),
        focus_names=(origin, emitter),
    )


def _node_of(g: LogGroup, ctx: ObserveContext) -> ObjRef | None:
    """The node a template is about when one host wrote it and that host is a node of the
    cluster (the kernel's or the kubelet's lines, shipped from the node itself)."""
    if len(g.streams) != 1:
        return None
    host = g.streams[0]
    nodes = {p.node for p in ctx.graph.pods() if p.node} | {
        str(getattr(n, "name", "")) for n in ctx.graph.all("Node")
    }
    return ObjRef(kind="Node", name=host) if host in nodes else None


def _companion_hosts(g: LogGroup, companions: list[tuple[LogGroup, list[str]]]) -> list[str]:
    """Hosts named by a line printed alongside each failure (same count, same span): a
    "Target host: db, port: 5432" logged with every "Connection refused"."""
    for c, hosts in companions:
        close = abs(c.count - g.count) <= max(1, g.count // 5)
        overlap = (
            c.first_seen is not None
            and g.first_seen is not None
            and c.last_seen is not None
            and g.last_seen is not None
            and c.first_seen <= g.last_seen
            and g.first_seen <= c.last_seen
        )
        if close and overlap and (c.service or "") == (g.service or ""):
            return hosts[:2]
    return []


@for_tools("log_stats")
def log_stats_facts(result: ToolResult, ctx: ObserveContext) -> list[Fact]:
    """Facts of a log_stats answer: error-like templates (top and rare), changes, warnings
    with a signal, latency and error rates."""
    stats = result.payload_as(LogStatsPayload)
    if stats is None:
        return []
    scope_service = result.scope.get("service") or result.args.get("service")
    groups = stats.groups()
    errors = sorted(
        (g for g in groups if _error_like(g)),
        key=lambda g: (g.first_seen is None, g.first_seen or datetime.min, -g.count),
    )
    order = {id(g): i for i, g in enumerate(errors)}
    companions = [
        (g, hs) for g in groups if not _error_like(g) for hs in [hosts_in(g.example or "")] if hs
    ]
    facts: list[Fact] = []
    kept_errors = sorted(errors, key=lambda g: g.errors or g.count)[:MAX_ERROR_FACTS]
    for g in kept_errors:
        f = _group_fact(g, ctx, scope_service=scope_service, buckets=stats.buckets,
                        order=order[id(g)], companions=companions)  # fmt: skip
        if f:
            facts.append(f)
    warnings = 0
    for g in groups:
        if _error_like(g):
            continue
        f = _group_fact(g, ctx, scope_service=scope_service, buckets=stats.buckets, order=None)
        if f is None:
            continue
        if f.kind == FactKind.LOG_WARNING:
            if warnings >= MAX_WARNING_FACTS or g.count < 2:
                continue
            warnings += 1
        if f.kind == FactKind.CHANGE and g.count > 10:  # a periodic line is not a change
            continue
        facts.append(f)
    for lat in stats.latency:
        facts += _latency_facts(lat, ctx, scope_service, stats.buckets, stats.latency)
    for st in stats.status:
        f = _status_fact(st, ctx, scope_service, stats.buckets)
        if f:
            facts.append(f)
    for gauge in stats.gauges:
        f = _gauge_fact(gauge, ctx, scope_service)
        if f:
            facts.append(f)
    for off in stats.clock_offsets:
        f = _clock_fact(off, ctx)
        if f:
            facts.append(f)
    return facts


def _span(seconds: float) -> str:
    s = abs(seconds)
    return f"{s / 3600:.3g} h" if s >= 3600 else f"{s / 60:.3g} min" if s >= 60 else f"{s:.0f} s"


def _clock_fact(off: ClockOffset, ctx: ObserveContext) -> Fact | None:
    """A service whose own timestamps are hours off the collector's: its clock is wrong
    (a time fault, a node without time sync). Tokens it signs and certificates it checks
    are judged by that clock."""
    if not off.service or off.offset_s is None:
        return None
    way = "behind" if off.offset_s < 0 else "ahead"
    since = f" from {off.since:%H:%M}" if off.since else ""
    before = " (its earlier lines agreed)" if off.before_ok else ""
    statement = (
        f"{off.service}'s clock runs {_span(off.offset_s)} {way}: the time it writes in its "
        f"own log lines is {_span(off.offset_s)} {way} of when they were collected{since}"
        f"{before} — tokens it issues and times it checks are off by as much"
    )
    return make_fact(
        ctx,
        kind=FactKind.CONFIG_ERROR,
        key=f"log:clock:{off.service.lower()}",
        statement=statement,
        quote=f"own time {way} by {off.offset_s:.0f} s",
        severity="error",
        service=off.service,
        subject=ObjRef(kind="app", name=off.service),
        count=off.samples,
        first=off.since,
        reason="clock_skew",
        message=statement,
        detail={"offset_s": off.offset_s, "before_ok": off.before_ok},
    )


_MEMORY = re.compile(r"(?i)mem|heap|rss")


def _gauge_fact(g: GaugeStat, ctx: ObserveContext, scope_service: str | None) -> Fact | None:
    """A gauge that grows steadily (or reaches its limit): memory that leaks, a queue that
    backs up, connections that pile up."""
    if g.first is None or g.last is None or g.max is None or g.rising is None:
        return None
    grew = g.last >= 2 * max(g.first, 1e-9) and g.rising >= 0.8
    at_limit = g.limit is not None and g.limit > 0 and g.max >= 0.9 * g.limit
    if not (grew or at_limit):
        return None
    svc = g.service or scope_service
    who = svc or "the logs"
    name = g.field or "a gauge"
    limit = f" of its limit {g.limit:g}" if g.limit is not None else ""
    pct = f" ({100 * g.max / g.limit:.0f}%{limit})" if g.limit else ""
    memory = bool(_MEMORY.search(name))
    what = "a memory leak pattern" if memory and grew else "steady growth" if grew else ""
    statement = f"{who}: {name} grew from {g.first:g} to {g.last:g}, peak {g.max:g}{pct}"
    statement += f" over {g.count} records — {what}" if what else f" over {g.count} records"
    detail = {k: v for k, v in g.dump().items() if k not in ("service",)}
    detail["pattern"] = "leak" if memory and grew else "growth" if grew else "at_limit"
    return make_fact(
        ctx,
        kind=FactKind.SATURATION,
        key=f"log:gauge:{(svc or '*').lower()}:{name}",
        statement=statement,
        quote=f"{name} {g.first:g} -> {g.last:g}{pct}",
        severity="error" if at_limit or (memory and grew) else "warning",
        service=svc,
        subject=ObjRef(kind="app", name=svc) if svc else None,
        count=g.count,
        first=g.first_seen,
        last=g.last_seen,
        reason="memory_growth" if memory else "growth",
        message=statement,
        detail=detail,
    )


def _fmt_ms(ms: float | None) -> str:
    if ms is None:
        return "?"
    return f"{ms / 1000:.3g} s" if ms >= 1000 else f"{ms:.3g} ms"


def _onset_medians(
    values: list[float | None], buckets: Buckets | None, onset: datetime | None
) -> tuple[float | None, float | None]:
    if onset is None or not buckets or not buckets.from_ or not buckets.step_seconds:
        return None, None
    t0, step, cut = buckets.from_.timestamp(), float(buckets.step_seconds), onset.timestamp()
    before = [v for i, v in enumerate(values) if v is not None and t0 + (i + 1) * step <= cut]
    after = [v for i, v in enumerate(values) if v is not None and t0 + i * step >= cut]
    return (median(before) if before else None), (median(after) if after else None)


def _latency_facts(
    lat: LatencyStat,
    ctx: ObserveContext,
    scope_service: str | None,
    buckets: Buckets | None,
    all_latency: list[LatencyStat],
) -> list[Fact]:
    p50, p99 = lat.p50_ms or 0.0, lat.p99_ms or 0.0
    before, after = _onset_medians(lat.timeline_p50_ms, buckets, ctx.onset)
    shifted = lat.shift is not None and (lat.shift.after_p50_ms or 0) >= 2 * (
        (lat.shift.before_p50_ms or 0) + 1
    )
    onset_up = before is not None and after is not None and after >= 2 * (before + 1)
    if not (p50 >= SLOW_P50_MS or p99 >= SLOW_P99_MS or shifted or onset_up):
        return []
    svc = lat.service or scope_service
    who = svc or "the logs"
    key_text = lat.key or "?"
    change = ""
    if onset_up:
        change = f"; median {_fmt_ms(before)} before the onset, {_fmt_ms(after)} after"
    elif shifted and lat.shift is not None:
        change = (
            f"; median {_fmt_ms(lat.shift.before_p50_ms)} before {hm(lat.shift.at)}, "
            f"{_fmt_ms(lat.shift.after_p50_ms)} after"
        )
    stats_words = f"p50 {_fmt_ms(lat.p50_ms)}, p99 {_fmt_ms(lat.p99_ms)} over {lat.count} records"
    sc = slow_context(lat, all_latency)
    where = f", {sc.words()}" if sc.words() else ""
    example = lat.example or key_text
    detail: dict[str, Any] = {
        "key": key_text,
        "source": lat.source,
        "p50_ms": lat.p50_ms,
        "p99_ms": lat.p99_ms,
        "max_ms": lat.max_ms,
        "count": lat.count,
    }
    if before is not None or after is not None:
        detail.update(before_onset_p50_ms=before, after_onset_p50_ms=after)
    if lat.shift is not None:
        detail["shift"] = lat.shift.dump()
    detail.update(sc.detail())
    subject = ObjRef(kind="app", name=svc) if svc else None
    facts: list[Fact] = []
    f = make_fact(
        ctx,
        kind=FactKind.LATENCY,
        key=f"log:latency:{(svc or '*').lower()}:{stable_key(key_text)}",
        statement=f'{who}: {key_text} takes {stats_words}{change}{where}; slowest: "{example}"',
        quote=example,
        # durations that did not grow, that no line calls slow and nobody asked about: how
        # long this work always takes (context), not a symptom
        severity="warning"
        if shifted
        or onset_up
        or _SAYS_SLOW.search(example)
        or ctx.subject.symptom == FactKind.LATENCY
        else "info",
        service=svc,
        subject=subject,
        count=lat.count,
        first=lat.first_seen,
        last=lat.last_seen,
        reason="slow",
        message=example,
        detail=detail,
    )
    if f:
        facts.append(f)
    dep = _DEPENDENCY_WORDS.search(f"{key_text} {example}")
    endpoint = key_text.startswith(("GET ", "POST ", "PUT ", "DELETE ", "PATCH ", "/"))
    if not (shifted or onset_up) and not _SAYS_SLOW.search(example) and _batch(svc, ctx):
        # a batch run's steps taking seconds, as they always may (and no line calls them
        # slow): no wait on anyone
        dep = None
    if dep and not endpoint and classify(example).kind is None:  # a completion that took long
        targets = hosts_in(example) or hosts_in(key_text)
        named = targets[0] if targets else dep.group(0)
        g = make_fact(
            ctx,
            kind=FactKind.DEPENDENCY_FAILURE,
            key=f"log:slowdep:{(svc or '*').lower()}:{stable_key(key_text)}",
            statement=(
                f'{who} waits on a slow dependency ({named}): "{key_text}" takes '
                f'{stats_words}{change}{where}; slowest: "{example}"'
            ),
            quote=example,
            severity="error",
            service=svc,
            subject=subject,
            objects=[target_ref(t) for t in targets[:2]],
            count=lat.count,
            first=lat.first_seen,
            last=lat.last_seen,
            reason="slow",
            message=example,
            detail={**detail, "dependency": named},
        )
        if g:
            facts.append(g)
    return facts


def _status_fact(
    st: StatusStat, ctx: ObserveContext, scope_service: str | None, buckets: Buckets | None
) -> Fact | None:
    if not st.errors or (st.errors < 3 and (st.error_ratio or 0) < 0.05):
        return None
    svc = st.service or scope_service
    who = svc or "the logs"
    codes = ", ".join(f"{k}: {v}" for k, v in st.codes.items())
    split = onset_split(
        onset=ctx.onset, count=st.errors, first=st.first_error, last=st.last_error,
        timeline=st.timeline_errors, buckets=buckets,
    )  # fmt: skip
    example = st.example or st.key or ""
    statement = (
        f"{who}: {st.errors} of {st.total} requests to {st.key} failed ({codes}); "
        f'e.g. "{example}"{timing_words(split)}'
    )
    return make_fact(
        ctx,
        kind=FactKind.ERROR_RATE,
        key=f"log:error_rate:{(svc or '*').lower()}:{stable_key(st.key)}",
        statement=statement,
        quote=example,
        severity="error",
        service=svc,
        subject=ObjRef(kind="app", name=svc) if svc else None,
        count=st.errors,
        first=st.first_error,
        last=st.last_error,
        reason="failed requests",
        message=example,
        detail={"endpoint": st.key, "codes": dict(st.codes), "errors": st.errors,
                "total": st.total, "error_ratio": st.error_ratio,
                **{k: v for k, v in split.items() if k != "background"}},
        background=bool(split.get("background")),
    )  # fmt: skip


# --------------------------------------------------------------------------- search_logs


@for_tools("search_logs")
def search_logs_facts(result: ToolResult, ctx: ObserveContext) -> list[Fact]:
    """Facts of a search_logs page: its error-like (and signal-bearing warning) records,
    grouped by template."""
    payload = result.payload_as(LogsPayload)
    items = payload.items if payload else []
    scope_service = result.scope.get("service") or result.args.get("service")
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for item in items:
        pl = parse_record(item.fields_as_stored)
        if item.level_inferred:
            pl.inferred = True
        if pl.level not in ("error", "fatal", "warn"):
            if not logged_at_any_level(f"{pl.message or ''} {pl.error or ''}"):
                continue
            pl.level = "warn"  # a failure its software logs as information
        quote = example_text(pl)
        svc = pl.service or item.service or scope_service
        key = (str(svc), pl.level or "", pattern_key(pl.message or quote))
        g = groups.setdefault(
            key, {"quote": quote, "pl": pl, "count": 0, "first": None, "last": None,
                  "svc": svc, "origin": item.service, "ref": item.ref},
        )  # fmt: skip
        g["count"] += 1
        t = item.timestamp
        if t is not None:
            g["first"] = t if g["first"] is None or t < g["first"] else g["first"]
            g["last"] = t if g["last"] is None or t > g["last"] else g["last"]
    facts: list[Fact] = []
    for (_, level, pkey), g in sorted(groups.items(), key=lambda kv: kv[1]["count"])[:8]:
        pl = g["pl"]
        group = LogGroup(
            pattern=pkey,
            count=g["count"],
            severity=level,
            errors=g["count"] if level in ("error", "fatal") else 0,
            inferred=pl.inferred,
            first_seen=g["first"],
            last_seen=g["last"],
            example=g["quote"],
            example_ref=g["ref"],
            service=g["svc"],
            origin=g["origin"] if g["origin"] != g["svc"] else None,
            fields={
                k: v
                for k, v in (
                    ("error", pl.error),
                    ("host", pl.host),
                    ("endpoint", pl.endpoint),
                    ("status", pl.status),
                )
                if v
            },
        )
        f = _group_fact(group, ctx, scope_service=scope_service, buckets=None, order=None)
        if f:
            f.detail["source"] = "search_logs"
            facts.append(f)
    return facts


_SAYS_SLOW = re.compile(r"\bslow\b|too long|took longer|exceed|timed? ?out|timeout", re.I)


def _batch(service: str | None, ctx: ObserveContext) -> bool:
    """Whether ``service``'s pods seen are all run by Jobs (a batch run, not a server)."""
    if not service:
        return False
    low = service.lower()
    pods = [
        p
        for p in ctx.graph.pods()
        if p.name and (p.name.lower() == low or p.name.lower().startswith(low + "-"))
    ]
    return bool(pods) and all((p.owner or "").startswith("Job/") for p in pods)
