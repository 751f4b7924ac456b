"""Deterministic fact extractors: tool results -> facts that cite their evidence id.

No model involved. Each extractor reads one envelope's ``data`` (already redacted
by the executor) and returns facts with a stable ``key`` (so the same finding seen
twice merges its evidence), a severity, the concrete quote (error text, termination
reason, condition), a time and whether it concerns a service in focus.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from opsmate.agent import extract_k8s
from opsmate.agent.extract_base import ExtractContext, max_time, min_time
from opsmate.agent.extract_base import hm as _hm
from opsmate.agent.signals import (
    ERROR_LEVELS,
    WARN_LEVELS,
    aggregate_shift,
    error_core,
    looks_like_instruction,
    match_terms,
    metric_names,
    series_shift,
    signature,
    to_time,
)
from opsmate.agent.state import Fact
from opsmate.tools.base import ToolResult


def extract_facts(eid: str, result: ToolResult, ctx: ExtractContext) -> list[Fact]:
    """Facts found in one result (empty for tools with nothing to extract)."""
    fn = _EXTRACTORS.get(result.tool)
    if fn is None or result.status not in ("success", "partial"):
        return []
    try:
        return fn(eid, result, ctx)
    except Exception as exc:  # an odd shape must never stop the investigation
        ctx.notes.append(f"could not read {result.tool} result {eid}: {type(exc).__name__}")
        return []


# ----------------------------------------------------------------------------- logs


def _log_group_fact(
    eid: str,
    service: str | None,
    level: str,
    example: str,
    count: int,
    first: Any,
    last: Any,
    ctx: ExtractContext,
) -> Fact | None:
    if looks_like_instruction(example):
        ctx.notes.append(
            f"{eid}: a log line contains text addressed to an assistant; "
            "treated as data and ignored"
        )
        return None
    quote = error_core(example) if level == "error" else error_core(example, 160)
    who = service or "the logs"
    kind = "log_error" if level == "error" else "log_warning"
    t1, t2 = _hm(first), _hm(last)
    when = f" between {t1} and {t2}" if t1 and t2 and t1 != t2 else (f" at {t1}" if t1 else "")
    noun = "error" if level == "error" else "warning"
    return Fact(
        key=f"log:{(service or '*').lower()}:{signature(example)}",
        statement=f'{who} logged {count} {noun}{"s" if count != 1 else ""} "{quote}"{when}',
        evidence=[eid],
        kind=kind,
        severity="error" if level == "error" else "warning",
        service=service,
        time=to_time(first),
        quote=quote,
        terms=list(match_terms(quote))[:24],
        focus=ctx.is_focus(service),
        count=count,
    )


def _log_stats(eid: str, r: ToolResult, ctx: ExtractContext) -> list[Fact]:
    service = r.scope.get("service") or r.args.get("service")
    facts: list[Fact] = []
    merged: dict[str, dict[str, Any]] = {}
    for m in r.data.get("top_messages") or []:
        levels = {str(k).lower() for k in (m.get("levels") or {})}
        level = "error" if levels & ERROR_LEVELS else "warning" if levels & WARN_LEVELS else None
        if level is None:
            continue
        example = str(m.get("example") or m.get("pattern") or "")
        key = (level, signature(example))
        g = merged.setdefault(
            str(key), {"level": level, "example": example, "count": 0, "first": None, "last": None}
        )
        g["count"] += int(m.get("count") or 0)
        g["first"] = min_time(g["first"], m.get("first_seen"))
        g["last"] = max_time(g["last"], m.get("last_seen"))
    ranked = sorted(merged.values(), key=lambda g: (g["level"] != "error", -g["count"]))
    warn_kept = 0
    for g in ranked:
        if g["level"] == "warning":
            if warn_kept >= 3 or g["count"] < 2:
                continue
            warn_kept += 1
        f = _log_group_fact(
            eid, service, g["level"], g["example"], g["count"], g["first"], g["last"], ctx
        )
        if f:
            facts.append(f)
    return facts


def _log_items(eid: str, r: ToolResult, ctx: ExtractContext) -> list[Fact]:
    items = r.data.get("items") or r.data.get("lines") or []
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for it in items:
        if not isinstance(it, dict):
            continue
        lv = str(it.get("level") or "").lower()
        level = "error" if lv in ERROR_LEVELS else "warning" if lv in WARN_LEVELS else None
        if level is None:
            continue
        msg = str(it.get("message") or "")
        svc = it.get("service") or r.scope.get("service") or r.args.get("service")
        key = (level, str(svc), signature(msg))
        g = groups.setdefault(
            key, {"example": msg, "count": 0, "first": None, "last": None, "svc": svc}
        )
        g["count"] += 1
        ts = it.get("@timestamp") or it.get("time")
        g["first"] = min_time(g["first"], ts)
        g["last"] = max_time(g["last"], ts)
    facts = []
    for (level, _, _), g in sorted(groups.items(), key=lambda kv: -kv[1]["count"])[:6]:
        f = _log_group_fact(
            eid, g["svc"], level, g["example"], g["count"], g["first"], g["last"], ctx
        )
        if f:
            facts.append(f)
    return facts


def _metrics(eid: str, r: ToolResult, ctx: ExtractContext) -> list[Fact]:
    query = str(r.data.get("query") or r.args.get("query") or "")
    desc = r.data.get("description")
    names = metric_names(query)
    label = desc or (names[0] if names else query[:80])
    facts: list[Fact] = []
    all_series = r.data.get("series") or []
    shifted = False
    ratio_like = "/" in query or bool(
        re.search(r"(?:^|[_\W])(?:ratio|utili[sz]ation|percent|pct)(?:$|[_\W])", query, re.I)
    )
    for s in (r.data.get("series") or [])[:12]:
        labels = s.get("labels") or {}
        lbl = ",".join(f"{k}={v}" for k, v in labels.items())
        what = f"{label}{' {' + lbl + '}' if lbl else ''}"
        mx = (s.get("max") or {}).get("value")
        last = (s.get("last") or {}).get("value")
        terms = {
            **match_terms(" ".join(names)),
            **match_terms(" ".join(str(v) for v in labels.values())),
        }
        focus = ctx.is_focus(*[str(v) for v in labels.values()], *(query.split('"')[1::2]))
        if ratio_like and isinstance(mx, int | float) and isinstance(last, int | float):
            top = 1.0 if mx <= 1.5 else 100.0
            in_range = mx <= 1.01 if top == 1.0 else mx <= 100.5
            if in_range and mx >= 0.99 * top and last >= 0.95 * top:
                facts.append(
                    Fact(
                        key=f"metric:{query}:{lbl}:pinned",
                        kind="saturation",
                        severity="error",
                        statement=f"{what} is pinned at its maximum ({last}; max {mx} "
                        f"at {_hm((s.get('max') or {}).get('time'))})",
                        evidence=[eid],
                        service=None,
                        time=to_time((s.get("max") or {}).get("time")),
                        quote=f"{what} at {last}",
                        terms=list(terms)[:20],
                        focus=focus,
                    )
                )
                continue
        shift = series_shift(s)
        if shift is None:
            continue
        shifted = True
        facts.append(
            Fact(
                key=f"metric:{query}:{lbl}",
                statement=f"{what} {shift['direction']} from {shift['before']} to {shift['after']} "
                f"at {_hm(shift['time'])} (max {mx})",
                evidence=[eid],
                kind="metric_shift",
                severity="warning",
                time=to_time(shift["time"]),
                quote=f"{what} {shift['direction']} from {shift['before']} to {shift['after']} "
                f"at {_hm(shift['time'])}",
                terms=list(terms)[:20],
                focus=focus,
            )
        )
    if not shifted and len(all_series) > 1:
        agg = aggregate_shift(all_series)
        if agg is not None:
            what = f"{label} (mean of {len(all_series)} series)"
            text = (
                f"{what} {agg['direction']} from {agg['before']} to {agg['after']} "
                f"at {_hm(agg['time'])}"
            )
            terms = match_terms(" ".join(names))
            values = [str(v) for s in all_series for v in (s.get("labels") or {}).values()]
            facts.append(
                Fact(
                    key=f"metric:{query}:*",
                    statement=f"{text} (max {agg['max']})",
                    evidence=[eid],
                    kind="metric_shift",
                    severity="warning",
                    time=to_time(agg["time"]),
                    quote=text,
                    terms=list(terms)[:20],
                    focus=ctx.is_focus(*values, *(query.split('"')[1::2])),
                )
            )
    return facts


def _alerts(eid: str, r: ToolResult, ctx: ExtractContext) -> list[Fact]:
    facts = []
    for a in r.data.get("alerts") or r.data.get("items") or []:
        labels = a.get("labels") or {}
        name = a.get("name") or labels.get("alertname")
        if not name or str(a.get("state", "firing")).lower() not in ("firing", "pending"):
            continue
        since = a.get("active_at") or a.get("activeAt") or a.get("since")
        facts.append(
            Fact(
                key=f"alert:{name}",
                statement=f"alert {name} is {a.get('state', 'firing')} "
                f"since {_hm(since)} ({labels})",
                evidence=[eid],
                kind="alert",
                severity="warning",
                service=labels.get("service") or labels.get("app"),
                time=to_time(since),
                quote=str(name),
                terms=[str(name).lower()],
                focus=ctx.is_focus(labels.get("service"), labels.get("app"), labels.get("job")),
            )
        )
    return facts


_EXTRACTORS: dict[str, Callable[[str, ToolResult, ExtractContext], list[Fact]]] = {
    "log_stats": _log_stats,
    "search_logs": _log_items,
    "pod_logs": _log_items,
    "list_pods": extract_k8s.pods,
    "get_events": extract_k8s.events,
    "node_conditions": extract_k8s.nodes,
    "rollout_history": extract_k8s.rollouts,
    "query_metrics": _metrics,
    "list_alerts": _alerts,
}


__all__ = ["ExtractContext", "extract_facts"]
