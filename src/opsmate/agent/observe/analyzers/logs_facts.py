"""Building facts from what log lines say (shared by the log analyzers).

A log line's :class:`~opsmate.loganalysis.signals.Signal` decides the fact kind: a
dependency failure (DNS, refused, timed out, a 5xx from a named service) is
``DEPENDENCY_FAILURE`` naming the dependency in ``objects`` (kind ``host`` for an
address, ``app`` for a service name); a configuration error (an undefined environment
variable, a missing key, an invalid value, an expired certificate) ``CONFIG_ERROR``; an
exhausted pool, queue or heap ``SATURATION``; a config reload, deploy, feature flag,
failover or rebalance ``CHANGE``; any other error ``LOG_ERROR``. Statements quote the
line's content so a report names it.

Timing against the onset (``ctx.onset``): :func:`onset_split` counts a template's
records before and after it from the template's timeline; a template seen only after
the onset is ``new`` (a candidate), one present before at a comparable rate is
``background``.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any

from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef, Severity
from opsmate.agent.observe.text import clip, reason_words, span
from opsmate.agent.signals import claims_a_conclusion, looks_like_instruction, match_terms
from opsmate.loganalysis.signals import Signal
from opsmate.loganalysis.templates import mask_message
from opsmate.records.logs import Buckets

KIND_OF_SIGNAL: dict[str | None, FactKind] = {
    "dependency": FactKind.DEPENDENCY_FAILURE,
    "config": FactKind.CONFIG_ERROR,
    "saturation": FactKind.SATURATION,
    "change": FactKind.CHANGE,
}
_ADDRESS = re.compile(r"[.:]|^\d")


def target_ref(target: str) -> ObjRef:
    """A dependency as an object: ``host`` for an address (dots, a port, an IP), else ``app``."""
    return ObjRef(kind="host" if _ADDRESS.search(target) else "app", name=target)


def stable_key(*parts: Any) -> str:
    """A short stable hash of ``parts`` (for fact keys)."""
    raw = "|".join("" if p is None else str(p) for p in parts)
    return hashlib.sha256(raw.encode("utf-8", "replace")).hexdigest()[:12]


_WITH_DIGIT = re.compile(r"[^\s\"'=:,;()\[\]{}]*\d[^\s\"'=:,;()\[\]{}]*")


def pattern_key(text: str) -> str:
    """The identity of a message across tools and pages: its masked first line with every
    token that holds a digit made ``<*>`` (``cart/c4``, ``req-0004``), lower-cased."""
    return _WITH_DIGIT.sub("<*>", mask_message(text)).lower()[:200]


def onset_split(
    *,
    onset: datetime | None,
    count: int,
    first: datetime | None,
    last: datetime | None,
    timeline: list[int] | None = None,
    buckets: Buckets | None = None,
    one_off_counts: bool = False,
) -> dict[str, Any]:
    """``before_onset`` / ``after_onset`` counts, ``new`` (only after the onset) and
    ``background`` (before it at a rate at least a third of the rate after); empty when
    there is no onset or no way to tell. With ``one_off_counts`` (a line that names a cause:
    an exhausted resource, a configuration error) a message said once or twice before the
    onset and not since is an event, not background noise."""
    if onset is None:
        return {}
    before: float
    after: float
    if first is not None and first >= onset:
        before, after = 0, count
    elif last is not None and last < onset:
        before, after = count, 0
    elif timeline and buckets and buckets.from_ and buckets.step_seconds:
        t0 = buckets.from_.timestamp()
        step = float(buckets.step_seconds)
        cut = onset.timestamp()
        before = after = 0.0
        for i, n in enumerate(timeline):
            b0 = t0 + i * step
            b1 = b0 + step
            if b1 <= cut:
                before += n
            elif b0 >= cut:
                after += n
            else:
                part = n * (cut - b0) / step
                before += part
                after += n - part
        before, after = round(before), round(after)
    else:
        return {}
    out: dict[str, Any] = {"before_onset": int(before), "after_onset": int(after)}
    out["new"] = before == 0 and after > 0
    background = False
    if one_off_counts and before <= 2 and after == 0:
        pass  # a cause said once or twice before the onset (a limit announced at start-up)
    elif before > 0 and buckets and buckets.from_ and buckets.to:
        span_before = max((onset - buckets.from_).total_seconds(), 1.0)
        span_after = max((buckets.to - onset).total_seconds(), 1.0)
        background = before / span_before >= (after / span_after) / 3.0
        if background and first is not None and after > 0:
            # a stream that began inside the window after a quiet stretch began the trouble
            # before it was noticed (an onset is often when someone saw it): not background
            quiet = (first - buckets.from_).total_seconds()
            background = quiet < 0.2 * (buckets.to - buckets.from_).total_seconds()
    elif before > 0 and after == 0:
        background = True
    out["background"] = background
    return out


def timing_words(split: dict[str, Any]) -> str:
    if not split:
        return ""
    if split.get("new"):
        return "; it appears only after the onset"
    if split.get("background"):
        return "; it was there before the onset too (background)"
    if split.get("after_onset", 0) > split.get("before_onset", 0):
        return "; it became more frequent after the onset"
    return ""


def signal_statement(kind: FactKind, who: str, sig: Signal, quote: str, count: int) -> str:
    """The sentence of a fact about one logged message (the quote is the line's content)."""
    q = f'"{quote}"'
    if kind == FactKind.DEPENDENCY_FAILURE:
        target = sig.targets[0] if sig.targets else None
        why = reason_words(sig.reason)
        if target:
            return f"{who} cannot reach {target} ({why}): {q}"
        return f"{who} reports a failing dependency ({why}): {q}"
    if kind == FactKind.CONFIG_ERROR:
        key = f" ({sig.targets[0]})" if sig.targets else ""
        return f"{who} reports a configuration error{key}, {reason_words(sig.reason)}: {q}"
    if kind == FactKind.SATURATION:
        return f"{who} reports that {reason_words(sig.reason)}: {q}"
    if kind == FactKind.CHANGE:
        return f"{who} logged a change ({reason_words(sig.reason)}): {q}"
    if kind == FactKind.LOG_WARNING:
        return f"{who} logged {count} warning{'s' if count != 1 else ''} {q}"
    return f"{who} logged {count} error{'s' if count != 1 else ''} {q}"


def make_fact(
    ctx: ObserveContext,
    *,
    kind: FactKind,
    key: str,
    statement: str,
    quote: str,
    severity: Severity,
    service: str | None,
    subject: ObjRef | None,
    objects: list[ObjRef] | None = None,
    count: int = 1,
    first: datetime | None = None,
    last: datetime | None = None,
    reason: str | None = None,
    message: str | None = None,
    container: str | None = None,
    exit_code: int | None = None,
    detail: dict[str, Any] | None = None,
    focus_names: tuple[str | None, ...] = (),
    extra_evidence: list[str] | None = None,
    background: bool = False,
) -> Fact | None:
    """A fact citing ``ctx.eid``; None when the quoted text addresses an assistant (kept as
    data, noted, never quoted)."""
    if looks_like_instruction(quote) or (message and looks_like_instruction(message)):
        ctx.notes.append(
            f"{ctx.eid}: a log line contains text addressed to an assistant; "
            "treated as data and ignored"
        )
        return None
    if claims_a_conclusion(quote) or (message and claims_a_conclusion(message)):
        # a line written as a ready-made diagnosis: evidence that something logged it,
        # never the cause's wording (masked, shortened, marked as quoted data)
        shown = clip(mask_message(quote), 120)
        who = service or (subject.name if subject else "a service")
        statement = (
            f"{who} logged {max(count, 1)} line(s) matching «{shown}», which read like a "
            "diagnosis; quoted as data, not taken as one"
        )
        kind, severity, quote, message = FactKind.LOG_WARNING, "warning", shown, shown
    times = span(first, last)
    if times and kind != FactKind.CHANGE:
        statement = f"{statement}{times}"
    objs: list[ObjRef] = []
    for o in objects or []:
        if all(o.key() != x.key() for x in objs) and (subject is None or o.key() != subject.key()):
            objs.append(o)
    names = [n for n in (service, subject.name if subject else None, *focus_names) if n]
    return Fact(
        key=key,
        statement=statement,
        evidence=[ctx.eid, *(extra_evidence or [])],
        kind=kind,
        severity=severity,
        service=service,
        time=first,
        last_time=last,
        quote=clip(quote, 300),
        terms=list(match_terms(f"{quote} {reason or ''}"))[:24],
        focus=ctx.is_focus(*names),
        count=max(count, 1),
        subject=subject,
        objects=objs,
        container=container,
        reason=reason,
        message=clip(message or quote, 1000),
        exit_code=exit_code,
        background=background,
        detail=detail or {},
    )
