"""Metrics and alerts: shifts, saturation, latency and error-rate series, firing alerts."""

from __future__ import annotations

import itertools
import re
from datetime import datetime, timedelta
from typing import Any

from opsmate.agent.observe.analyzers.metrics_nodes import node_signals
from opsmate.agent.observe.analyzers.pods import limit_defaulted
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.registry import for_tools
from opsmate.agent.observe.text import hm
from opsmate.agent.signals import aggregate_shift, match_terms, metric_names, series_shift
from opsmate.records.metrics import Series
from opsmate.records.payloads import AlertsPayload, MetricsPayload
from opsmate.timeparse import parse_time
from opsmate.tools.base import ToolResult

_RATIO = re.compile(r"(?:^|[_\W])(?:ratio|utili[sz]ation|percent|pct)(?:$|[_\W])", re.I)
_LATENCY = re.compile(r"latency|duration|response_time|_seconds_bucket|p99|p95", re.I)
_ERRORS = re.compile(
    r"5\.\.|5xx|\b5\d\d\b|error|fail|=(?:unavailable|deadlineexceeded|deadline_exceeded|internal"
    r"|unknown|resourceexhausted|resource_exhausted|aborted)\b",
    re.I,
)
# a resource a process consumes: a sharp rise on one component is a candidate cause of its
# own latency (CPU hog, packet loss), unlike a request-rate change
_CONSUMED = re.compile(
    r"cpu_usage|cpu_seconds|process_cpu|cpu_user|packets_dropped|receive_errs|transmit_errs"
    r"|network_.*errors|retrans|packet_loss|dropped",
    re.I,
)
_RESOURCE = re.compile(
    r"throttl|cfs_|saturat|_in_use|pool|working_set|memory_usage|memory_rss|heap|gc_(?:pause|time)"
    r"|open_fds|file_descriptors|filesystem_(?:avail|usage)|disk_usage|inodes|conntrack"
    r"|queue_(?:size|length|depth)|backlog|maxclients|connected_clients|threads_(?:active|busy)",
    re.I,
)
_INODES = re.compile(r"inodes|files_free", re.I)  # a volume's files, not bytes
_PEER_LABELS = ("peer", "upstream", "remote", "target", "backend", "dependency", "destination")
_SELECTOR = re.compile(r'\b(service|app|job|deployment|container)\s*=~?\s*"([^"]+)"')


def _shift_kind(query: str, labels: dict[str, str], direction: str) -> FactKind:
    """What a series that shifted shows: a dependency got slow (latency by peer), a resource
    under pressure (throttling, pools, memory: a candidate cause), latency or errors (symptoms),
    or a plain change."""
    text = query + " " + " ".join(f"{k}={v}" for k, v in labels.items())
    if _LATENCY.search(query) and not _COUNT_ONLY.search(query):
        if direction == "rose" and any(k in labels for k in _PEER_LABELS):
            return FactKind.DEPENDENCY_FAILURE
        return FactKind.LATENCY
    if _ERRORS.search(text):
        return FactKind.ERROR_RATE if direction == "rose" else FactKind.METRIC_SHIFT
    if direction == "rose" and _CONSUMED.search(query):
        return FactKind.SATURATION
    if direction == "rose" and _RESOURCE.search(query):
        if _MEMORY.search(query) and not _LIMIT_RATIO.search(query):
            # memory in use rose: a change, not exhaustion, until it is held against its limit
            return FactKind.METRIC_SHIFT
        return FactKind.SATURATION
    return FactKind.METRIC_SHIFT


_LIMIT_RATIO = re.compile(r"/|limit|ratio|percent|utili[sz]ation", re.I)


# a histogram's _count (or _sum alone) is a request rate, not a duration
_COUNT_ONLY = re.compile(r"^(?!.*(?:_bucket|quantile|_sum\b.*_count|/)).*_count\b", re.S)
_APP_KEYS = (
    "destination_workload",
    "destination_service_name",
    "destination_app",
    "destination_service",
    "grpc_service",
    "service_name",
    "service",
    "app",
    "application",
    "deployment",
    "workload",
    "container",
    "job",
)
_POD_SUFFIX = re.compile(r"-[a-z0-9]{8,10}-[a-z0-9]{5}$|-[a-z0-9]{5}$|-\d+$")


def _app_of(query: str, labels: dict[str, str]) -> str | None:
    """The service a series is about: its labels (the server side of a request series,
    the workload, the pod's workload), else the query's selector."""
    for key in _APP_KEYS:
        value = labels.get(key)
        if value and value not in ("POD", "unknown", "") and not (key == "job" and "/" in value):
            if key == "grpc_service":  # acme.v1.LedgerApi -> ledgerapi
                return value.rsplit(".", 1)[-1].lower()
            return value.split(".")[0] if key.startswith("destination_service") else value
    if labels.get("pod"):
        return _POD_SUFFIX.sub("", labels["pod"])
    m = _SELECTOR.search(query)
    return m.group(2) if m and not any(ch in m.group(2) for ch in "|.*+") else None


def _peer(labels: dict[str, str]) -> ObjRef | None:
    for k in _PEER_LABELS:
        if labels.get(k):
            return ObjRef(kind="host" if "." in labels[k] else "app", name=labels[k])
    return None


_MEMORY = re.compile(
    r"memory_working_set|memory_usage|memory_rss|heap_(?:used|inuse)|resident_memory", re.I
)
# how far a replica is behind its primary, in seconds (mongodb_exporter, postgres_exporter,
# mysqld_exporter, redis_exporter's lag gauges)
_REPLICA_LAG = re.compile(
    r"replication_lag|replica(?:tion)?_lag_seconds|seconds_behind_(?:master|source)"
    r"|replay_lag|pg_replication_lag|slave_lag|replica_lag",
    re.I,
)
STALE_AFTER = 30.0  # seconds behind: reads from that replica miss recent writes


def _replica_lag(ctx: ObserveContext, query: str, s: Series, what: str) -> Fact | None:
    """A replica that fell behind its primary inside the window (its lag rose past
    :data:`STALE_AFTER` seconds from near nothing): reads it serves are stale."""
    values = [(t, float(v)) for t, v in s.samples if isinstance(v, int | float)]
    if len(values) < 4 or values[0][1] >= STALE_AFTER:
        return None
    late = next(((t, v) for t, v in values if v >= STALE_AFTER), None)
    if late is None:
        return None
    peak = max(v for _, v in values)
    host = s.labels.get("pod") or (s.labels.get("name") or s.labels.get("instance") or "")
    member = host.split(".")[0].split(":")[0] or None
    return Fact(
        key=f"metric:{query}:{member}:lag",
        kind=FactKind.SATURATION,
        severity="error",
        statement=f"replica {member or what} fell behind its primary ({query.split('{')[0]}): "
        f"replication lag rose past "
        f"{STALE_AFTER:g} s at {hm(_when(late[0]))} (max {peak:g} s), so reads it serves "
        "miss recent writes",
        evidence=[ctx.eid],
        service=member,
        time=_when(late[0]),
        quote=f"replication lag {peak:g} s",
        focus=ctx.is_focus(member),
        subject=ObjRef(kind="Pod", name=member) if member else None,
        reason="replication_lag",
        detail={"query": query, "labels": s.labels, "max": peak},
    )


def growth_pattern(values: list[float]) -> dict[str, Any] | None:
    """A steady climb that resets when the process restarts (a sawtooth), or one long climb:
    how a leak looks on a memory graph. Segments split where the value falls by a third;
    a segment climbs when four in five of its steps do not fall and it ends at least 1.5x
    where it began. Returns the climbs and the resets, or None."""
    if len(values) < 6:
        return None
    segments: list[list[float]] = [[values[0]]]
    for prev, cur in itertools.pairwise(values):
        if prev > 0 and cur < prev * 0.67:
            segments.append([cur])
        else:
            segments[-1].append(cur)
    climbs = []
    for seg in segments:
        if len(seg) < 3 or seg[0] <= 0:
            continue
        steps = [b - a for a, b in itertools.pairwise(seg)]
        rising = sum(1 for d in steps if d >= -0.02 * max(seg)) / len(steps)
        if rising >= 0.8 and seg[-1] >= 1.5 * seg[0]:
            climbs.append((seg[0], seg[-1]))
    covered = sum(len(s) for s in segments if len(s) >= 3)
    if not climbs or covered < 0.5 * len(values):
        return None
    return {
        "climbs": len(climbs),
        "resets": len(segments) - 1,
        "low": min(a for a, _ in climbs),
        "high": max(b for _, b in climbs),
    }


def _bytes(v: float) -> str:
    for unit, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if abs(v) >= size:
            return f"{v / size:.0f}{unit}"
    return f"{v:.0f}"


def _raw(s: Series) -> dict[str, Any]:
    return s.model_dump(mode="json", by_alias=True)


def _used_up(
    ctx: ObserveContext,
    query: str,
    s: Series,
    subject: ObjRef | None,
    focus: bool,
    terms: dict[str, Any],
    *,
    tag: str,
    said: str,
    time: datetime | None,
    quote: str,
    nothing_left: bool = False,
) -> Fact:
    """A resource used up (a ratio pinned at its maximum, what is left fallen to 0): about
    the volume's claim when the series names one; a volume's inodes said as such."""
    inodes = bool(_INODES.search(query))
    claim = s.labels.get("persistentvolumeclaim")
    if subject is None and claim:
        subject = ObjRef(
            kind="PersistentVolumeClaim", name=claim, namespace=s.labels.get("namespace")
        )
    lbl = ",".join(f"{k}={v}" for k, v in s.labels.items())
    why = (
        ": no free inodes left on the volume"
        if inodes
        else (": nothing left" if nothing_left else "")
    )
    return Fact(
        key=f"metric:{query}:{lbl}:{tag}",
        kind=FactKind.SATURATION,
        severity="error",
        statement=said + why,
        evidence=[ctx.eid],
        time=time,
        quote=quote,
        terms=list(terms)[:20],
        focus=focus,
        subject=subject,
        reason="inodes_exhausted" if inodes else None,
        detail={
            "query": query,
            "labels": s.labels,
            "max": s.max.value if s.max else None,
            "last": s.last.value if s.last else None,
        },
    )


# what is left of a resource (a volume's free inodes, a filesystem's free files or bytes)
_LEFT = re.compile(r"_(?:free|avail(?:able)?)(?:_bytes)?\b", re.I)


def _ran_out(query: str, s: Series, ratio_like: bool) -> datetime | None:
    """When a gauge of what is left (``*_free``, ``*_available_bytes``, a plain series, not
    a ratio) fell to zero from something and stayed there: the first sample at zero."""
    if ratio_like or not _LEFT.search(query) or s.max is None or s.last is None:
        return None
    if s.max.value is None or s.last.value is None or s.max.value <= 0 or s.last.value > 0:
        return None
    for t, v in s.samples:
        try:
            if float(v) <= 0:
                return parse_time(str(t))
        except (TypeError, ValueError):
            continue
    return s.last.time


@for_tools("query_metrics")
def metrics(result: ToolResult, ctx: ObserveContext) -> list[Fact]:
    res = result.payload_as(MetricsPayload) or MetricsPayload()
    query = res.query or str(result.args.get("query") or "")
    names = metric_names(query)
    label = res.description or (names[0] if names else query[:80])
    if "cpu" in query.lower() and "cpu" not in label.lower():
        label = f"{label} (CPU)"  # what the series measures, in the word people search for
    quoted = query.split('"')[1::2]
    ratio_like = "/" in query or bool(_RATIO.search(query))
    facts: list[Fact] = node_signals(query, res.series[:60], ctx)
    if facts:
        return facts  # the nodes that stand out: the series' shifts say nothing more
    shifted = False
    for s in res.series[:60]:
        lbl = ",".join(f"{k}={v}" for k, v in s.labels.items())
        what = f"{label}{' {' + lbl + '}' if lbl else ''}"
        mx = s.max.value if s.max else None
        last = s.last.value if s.last else None
        terms = {**match_terms(" ".join(names)), **match_terms(" ".join(s.labels.values()))}
        focus = ctx.is_focus(*s.labels.values(), *quoted)
        app = _app_of(query, s.labels)
        subject = ObjRef(kind="app", name=app) if app else None
        if ratio_like and mx is not None and last is not None:
            top = 1.0 if mx <= 1.5 else 100.0
            in_range = mx <= 1.01 if top == 1.0 else mx <= 100.5
            if in_range and mx >= 0.99 * top and last >= 0.95 * top:
                facts.append(
                    _used_up(
                        ctx, query, s, subject, focus, terms, tag="pinned",
                        said=f"{what} is pinned at its maximum ({last}; max {mx} "
                        f"at {hm(s.max.time if s.max else None)})",
                        time=s.max.time if s.max else None, quote=f"{what} at {last}",
                    )
                )  # fmt: skip
                continue
        ran_out = _ran_out(query, s, ratio_like)
        if ran_out is not None:
            facts.append(
                _used_up(
                    ctx, query, s, subject, focus, terms, tag="ran_out",
                    said=f"{what} fell to 0 at {hm(ran_out)} (it was "
                    f"{(s.max.value if s.max else 0):g})",
                    time=ran_out, quote=f"{what} at 0", nothing_left=True,
                )
            )  # fmt: skip
            continue
        throttled = _throttled(query, s) if ratio_like else None
        if throttled is not None:
            pod = s.labels.get("pod")
            facts.append(
                Fact(
                    key=f"metric:{query}:{lbl}:throttled",
                    kind=FactKind.SATURATION,
                    severity="error",
                    statement=f"{what}: throttled at its CPU limit{_cpu_limit(ctx, s, query)} "
                    f"in {throttled:.0%} of CFS periods (median over the window; "
                    f"CPUThrottlingHigh fires above {THROTTLED_ALERT:.0%})",
                    evidence=[ctx.eid],
                    service=app,
                    time=s.first.time if s.first else None,
                    quote=f"{what} CPU throttled in {throttled:.0%} of periods",
                    terms=list(terms)[:20],
                    focus=focus,
                    subject=ObjRef(kind="Pod", name=pod) if pod else subject,
                    reason="cpu_throttled",
                    detail={"query": query, "labels": s.labels, "median": throttled},
                    # the same all through the window: a standing condition, no change —
                    # unless the container began inside it (a pod the rollout created)
                    background=series_shift(_raw(s)) is None and not _born_late(s, ctx),
                )
            )
            continue
        if _REPLICA_LAG.search(query):
            lagging = _replica_lag(ctx, query, s, what)
            if lagging is not None:
                facts.append(lagging)
                continue
        if _MEMORY.search(query):
            memory = [float(v) for _, v in s.samples if isinstance(v, int | float)]
            leak = growth_pattern(memory)
            if leak is not None:
                resets = (
                    f", dropping {leak['resets']} time(s) when it restarted"
                    if leak["resets"]
                    else ""
                )
                facts.append(
                    Fact(
                        key=f"metric:{query}:{lbl}:leak",
                        kind=FactKind.SATURATION,
                        severity="error",
                        statement=f"{what} climbs steadily from {_bytes(leak['low'])} to "
                        f"{_bytes(leak['high'])}{resets}: a memory leak pattern",
                        evidence=[ctx.eid],
                        service=app,
                        time=s.first.time if s.first else None,
                        quote=f"{what} memory leak pattern",
                        terms=list(terms)[:20],
                        focus=focus,
                        subject=subject,
                        reason="MemoryLeakPattern",
                        detail={"query": query, "labels": s.labels, **leak},
                    )
                )
                continue
        shift = series_shift(_raw(s))
        if _LATENCY.search(query) and not _COUNT_ONLY.search(query):
            seen = sorted(float(v) for _, v in s.samples if isinstance(v, int | float))
            level = seen[len(seen) // 2] if seen else None
            record_latency(ctx, query, s.labels, shift or {"after": level}, f"{what}")
        if shift is None:
            continue
        shifted = True
        text = (
            f"{what} {shift['direction']} from {shift['before']} to {shift['after']} "
            f"at {str(shift['time'])[11:19]}"
        )
        kind = _shift_kind(query, s.labels, shift["direction"])
        peer = _peer(s.labels)
        facts.append(
            Fact(
                key=f"metric:{query}:{lbl}",
                statement=f"{text} (max {mx})",
                evidence=[ctx.eid],
                kind=kind,
                severity=_shift_severity(kind, s.labels, shift["direction"]),
                service=app,
                time=_when(shift["time"]),
                quote=text,
                terms=list(terms)[:20],
                focus=focus,
                subject=subject,
                objects=[peer] if peer and kind == FactKind.DEPENDENCY_FAILURE else [],
                reason="slow" if kind == FactKind.DEPENDENCY_FAILURE else None,
                detail={"query": query, "labels": s.labels, **shift},
            )
        )
    if not shifted and len(res.series) > 1:
        agg = aggregate_shift([_raw(s) for s in res.series])
        if agg is not None:
            lead = _leading(res.series)
            led = ""
            if lead is not None:
                led = "; led by {" + ",".join(f"{k}={v}" for k, v in lead.labels.items()) + "}"
                led += f" (max {lead.max.value if lead.max else '?'})"
            what = f"{label} (mean of {len(res.series)} series{led})"
            text = (
                f"{what} {agg['direction']} from {agg['before']} to {agg['after']} "
                f"at {str(agg['time'])[11:19]}"
            )
            values = [v for s in res.series for v in s.labels.values()]
            app = _app_of(query, lead.labels if lead is not None else {})
            kind = _shift_kind(query, {}, agg["direction"])
            facts.append(
                Fact(
                    key=f"metric:{query}:*",
                    statement=f"{text} (max {agg['max']})",
                    evidence=[ctx.eid],
                    service=app,
                    subject=ObjRef(kind="app", name=app) if app else None,
                    kind=kind,
                    severity=_shift_severity(
                        kind, lead.labels if lead is not None else {}, agg["direction"]
                    ),
                    time=_when(agg["time"]),
                    quote=text,
                    terms=list(match_terms(" ".join(names)))[:20],
                    focus=ctx.is_focus(*values, *quoted),
                    detail={"query": query, **agg},
                )
            )
    return facts


_STATUS_LABELS = ("status", "code", "status_code", "response_code", "http_status")


def _shift_severity(kind: FactKind, labels: dict[str, str], direction: str) -> str:
    """More answered requests (``status="200"`` rose) is traffic growing, not trouble:
    information; any other shift (answered requests falling away included) is a warning."""
    ok = any(str(labels.get(k, ""))[:1] in ("1", "2", "3") for k in _STATUS_LABELS)
    return "info" if kind == FactKind.METRIC_SHIFT and ok and direction == "rose" else "warning"


THROTTLED_ALERT = 0.25  # kube-prometheus' CPUThrottlingHigh: a quarter of periods throttled
_THROTTLED = re.compile(r"cfs_throttled_periods", re.I)


def _cpu_limit(ctx: ObserveContext, s: Series, query: str) -> str:
    """`` of 500m, one the namespace's LimitRange set ...`` for a throttled container whose
    pod was read: its limit, and whether the LimitRanger filled it in at admission."""
    name = s.labels.get("pod")
    container = s.labels.get("container") or next(
        iter(re.findall(r'container="([^"]+)"', query)), None
    )
    pod = next((p for p in ctx.graph.pods() if p.name == name), None) if name else None
    c = next((c for c in pod.containers if c.name == container), None) if pod else None
    limit = c.resources.limits.get("cpu") if c is not None and c.resources else None
    if pod is None or c is None or not limit:
        return ""
    if limit_defaulted(pod, c.name, "cpu limit"):
        return (
            f" of {limit}, a limit the namespace's LimitRange set by default at admission "
            "(annotation kubernetes.io/limit-ranger), not one the workload asks for,"
        )
    return f" of {limit}"


def _born_late(s: Series, ctx: ObserveContext) -> bool:
    """Whether a series begins well inside the window (its pod did not exist before)."""
    start = s.first.time if s.first else None
    return bool(start and ctx.window_from and start >= ctx.window_from + timedelta(minutes=10))


def _throttled(query: str, s: Any) -> float | None:
    """The median share of CFS periods a container was throttled in, when the series is
    that ratio and the share is at or above the alerting threshold; else None."""
    if not _THROTTLED.search(query) or not re.search(r"cfs_periods", query):
        return None
    seen = sorted(float(v) for _, v in s.samples if isinstance(v, int | float))
    if len(seen) < 3 or seen[-1] > 1.01:
        return None
    median = seen[len(seen) // 2]
    return median if median >= THROTTLED_ALERT else None


def _leading(series: list[Any]) -> Any | None:
    """The one series that stands out of a group (its peak at least twice every other's):
    the container whose throttling, the pod whose memory, moved the mean. None when the
    peaks are alike."""
    peaks = sorted(
        ((float(s.max.value), i) for i, s in enumerate(series) if s.max and s.max.value),
        reverse=True,
    )
    if not peaks or peaks[0][0] <= 0:
        return None
    if len(peaks) > 1 and peaks[0][0] < 2 * peaks[1][0]:
        return None
    return series[peaks[0][1]]


def record_latency(
    ctx: ObserveContext,
    query: str,
    labels: dict[str, str],
    shift: dict[str, Any] | None,
    what: str,
) -> None:
    """Keep a latency series' reading in the graph (kind ``LatencySeries``) so the edge
    analyzer can set the caller's view of a callee against the callee's own."""
    from opsmate.agent.observe.analyzers.metrics_edges import LatencySeries, side_of

    side = side_of(query, labels)
    server = _app_of(query, labels)
    if side is None or not server:
        return
    client = next(
        (
            labels[k]
            for k in ("source_workload", "source_app", "source_service", "client")
            if labels.get(k)
        ),
        None,
    )
    ratio = shift.get("ratio") if shift and shift.get("direction") == "rose" else 1.0
    ctx.graph.add(
        "LatencySeries",
        LatencySeries(
            name=f"{side}|{server}|{client or ''}|{query[:60]}",
            side=side,
            server=server,
            client=client,
            ratio=float(ratio) if isinstance(ratio, int | float) else None,
            before=(shift or {}).get("before"),
            after=(shift or {}).get("after"),
            time=_when(shift["time"]) if shift and shift.get("time") else None,
            what=what[:200],
        ),
        ctx.eid,
    )


def _when(value: Any) -> Any:
    from opsmate.agent.signals import to_time

    return to_time(value)


@for_tools("list_alerts")
def alerts(result: ToolResult, ctx: ObserveContext) -> list[Fact]:
    payload = result.payload_as(AlertsPayload)
    records = payload.alerts if payload else []
    facts = []
    for a in records:
        name = a.name or a.labels.get("alertname")
        if not name or (a.state or "firing").lower() not in ("firing", "pending"):
            continue
        app = a.labels.get("service") or a.labels.get("app") or a.labels.get("job")
        summary = a.annotations.get("summary") or a.annotations.get("description") or ""
        ns = a.labels.get("namespace")
        named = [
            ObjRef(kind=kind, name=a.labels[label], namespace=ns)
            for label, kind in _ALERT_OBJECTS
            if a.labels.get(label)
        ]
        facts.append(
            Fact(
                key=f"alert:{name}",
                statement=f"alert {name} is {a.state} since {hm(a.active_at)} ({_labels(a.labels)})"
                + (f": {summary[:200]}" if summary else ""),
                evidence=[ctx.eid],
                kind=FactKind.ALERT,
                severity="warning",
                service=app,
                time=a.active_at,
                quote=str(name),
                terms=[str(name).lower()],
                focus=ctx.is_focus(app, a.labels.get("pod"), a.labels.get("deployment")),
                subject=ObjRef(kind="app", name=app) if app else None,
                objects=named,
                reason=str(name),
                message=summary or None,
                detail={"labels": a.labels},
            )
        )
    return facts


# the labels kube-prometheus' alerts name their objects by (KubePodCrashLooping's pod,
# KubePersistentVolumeFillingUp's claim)
_ALERT_OBJECTS = (
    ("pod", "Pod"),
    ("persistentvolumeclaim", "PersistentVolumeClaim"),
    ("statefulset", "StatefulSet"),
    ("deployment", "Deployment"),
    ("daemonset", "DaemonSet"),
    ("job_name", "Job"),
    ("node", "Node"),
)


def _labels(labels: dict[str, str]) -> str:
    """An alert's labels as Prometheus writes them (``{severity="page", job="api"}``)."""
    shown = [f'{k}="{v}"' for k, v in labels.items() if k != "alertname"]
    return "{" + ", ".join(shown) + "}"
