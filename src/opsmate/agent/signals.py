"""Small text and series helpers shared by the extractors and the analysis.

Error cores of log messages (the exception and its text, without request ids),
match terms (identifiers weigh more than words), prompt-injection detection, and
a before/after comparison of a metric series summary.
"""

from __future__ import annotations

import re
from datetime import datetime
from statistics import median
from typing import Any

from opsmate.timeparse import parse_time
from opsmate.tools.shaping import normalize_message

_EXC = re.compile(
    r"(?:[A-Za-z_][\w]*\.)*[A-Z][A-Za-z0-9]*"
    r"(?:Error|Exception|Timeout|Fault|Failure|Refused|Exceeded|Denied|Killed|Panic|Unavailable)\b"
)
_MARKERS = re.compile(r"(?:\bFATAL\b|\bERROR\b|\bpanic\b|\bERR\b|\bE[A-Z]{3,}\b)[:\s]", re.UNICODE)
_TRAILING_JUNK = re.compile(r"\s*\((?:[^()]*https?://[^()]*|Background[^()]*)\)\s*$")
ERROR_LEVELS = {"error", "err", "fatal", "critical", "crit", "panic", "severe", "alert", "emerg"}
WARN_LEVELS = {"warn", "warning"}
_INJECTION = re.compile(
    r"(?:ignore (?:all |any )?(?:the )?(?:previous|prior|above) (?:instructions|prompts?)"
    r"|disregard (?:all |the )?(?:previous|prior|above)|you are now\b|new instructions?:"
    r"|system prompt|as an ai\b|run (?:the )?(?:following )?(?:command|kubectl)"
    r"|忽略(?:之前|以上|前面)的?(?:所有)?(?:指令|说明|提示))",
    re.IGNORECASE,
)
_STOP = {
    "the",
    "and",
    "for",
    "with",
    "from",
    "that",
    "this",
    "into",
    "after",
    "before",
    "while",
    "error",
    "errors",
    "failed",
    "failure",
    "request",
    "requests",
    "service",
    "unhandled",
    "timeout",
    "connection",
    "because",
    "since",
    "could",
    "would",
    "cannot",
    "value",
}


# a log line that states a diagnosis ("ROOT CAUSE CONFIRMED: the network team ...") is
# data that claims to be a conclusion: quoted masked, never taken as the cause's wording
_CLAIM = re.compile(
    r"(?<!with )\broot[- _]?cause (?:is|was|confirmed|identified|found)\b|\broot[- _]?cause\s*[:=]"
    r"|\bcause (?:is |was )?confirmed\b|\bis to blame\b|\bthe (?:real |actual )?(?:cause|culprit"
    r"|problem|issue) (?:is|was)\b|\bdiagnos(?:is|ed)\b|\bno action (?:is )?needed\b"
    r"|\b(?:ignore|disregard) (?:all|any|the|this|other)\b|\bnot (?:a|the) (?:bug|problem) in\b",
    re.I,
)


def claims_a_conclusion(text: str) -> bool:
    """Text that states a diagnosis or tells the reader what to conclude."""
    return bool(_CLAIM.search(text or ""))


def looks_like_instruction(text: str) -> bool:
    """Text that addresses an AI or tells it to act (kept as data, never obeyed or quoted)."""
    return bool(_INJECTION.search(text or ""))


def error_core(message: str, limit: int = 200) -> str:
    """The informative part of an error message: from the exception name (or ERROR:) on.

    ``unhandled error on POST /x request_id=req-1: PoolTimeout: QueuePool limit ...
    (Background on this error at: https://...)`` -> ``PoolTimeout: QueuePool limit ...``.
    """
    text = (message or "").strip().splitlines()[0] if (message or "").strip() else ""
    m = _EXC.search(text)
    if m and m.start() > 0:
        text = text[m.start() :]
    else:
        mk = _MARKERS.search(text)
        if mk and mk.start() > 0:
            text = text[mk.start() :]
    text = _TRAILING_JUNK.sub("", text).strip().rstrip("\"'").strip()
    if len(text) > limit:
        cut = text[:limit]
        sp = cut.rfind(" ")
        text = (cut[:sp] if sp > limit // 2 else cut) + " …"
    return text


def signature(message: str) -> str:
    """Grouping key of an error message: its normalised core."""
    return normalize_message(error_core(message, 400)).lower()


_IDENT = re.compile(
    r"[A-Za-z]+[a-z0-9]*(?:[A-Z][A-Za-z0-9]+)+"  # CamelCase
    r"|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+"  # snake_case
    r"|[A-Z]{2,}[-_]?\d+[A-Z0-9]*|\d+[A-Z][A-Z0-9]+"  # ORA-00054, 55P03
    r"|[A-Za-z]+\d+[A-Za-z0-9]*"  # http2, v1 excluded below by length
)
_WORD = re.compile(r"[A-Za-z][a-z]{4,}")
_CJK = re.compile(r"[\u4e00-\u9fff]{2,}")


def match_terms(text: str) -> dict[str, float]:
    """Terms of ``text`` with weights: identifiers 3, CJK bigrams 1, plain words 1."""
    terms: dict[str, float] = {}
    for m in _IDENT.finditer(text or ""):
        tok = m.group(0)
        if len(tok) >= 4 and not re.fullmatch(r"[a-z]+\d", tok):
            terms[tok.lower()] = 3.0
            if "." in tok:
                terms[tok.rsplit(".", 1)[-1].lower()] = 3.0
    for m in re.finditer(r"[\w.]+\.([A-Z][A-Za-z0-9]+)", text or ""):
        terms.setdefault(m.group(1).lower(), 3.0)
    for m in _WORD.finditer(text or ""):
        w = m.group(0).lower()
        if w not in _STOP:
            terms.setdefault(w, 1.0)
    for m in _CJK.finditer(text or ""):
        run = m.group(0)
        for i in range(len(run) - 1):
            terms.setdefault(run[i : i + 2], 1.0)
    return terms


def term_score(terms: dict[str, float], doc_text_lower: str) -> tuple[float, list[str]]:
    """Sum of weights of ``terms`` found in a (lower-cased) document, and the matched terms."""
    score = 0.0
    hit: list[str] = []
    for term, weight in terms.items():
        if term in doc_text_lower:
            score += weight
            hit.append(term)
    return score, hit


def to_time(value: Any) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        return parse_time(value)
    except (ValueError, TypeError):
        return None


def series_shift(series: dict[str, Any]) -> dict[str, Any] | None:
    """Before/after medians of a series split at its largest change, or None (flat / too short).

    Returns ``{"before", "after", "ratio", "direction", "time", "max", "last"}``; a shift
    counts when the medians differ by at least half the larger magnitude.
    """
    samples = [
        s for s in series.get("samples") or [] if isinstance(s, list | tuple) and len(s) == 2
    ]
    chg = series.get("largest_change") or {}
    if len(samples) < 4 or not chg:
        return None
    t_chg = str(chg.get("time"))
    idx = next((i for i, s in enumerate(samples) if str(s[0]) == t_chg), None)
    if idx is None:
        tc = to_time(t_chg)
        idx = next((i for i, s in enumerate(samples) if tc and (to_time(s[0]) or tc) >= tc), None)
    if idx is None or idx < 1 or idx >= len(samples):
        return None
    before = [float(v) for _, v in samples[:idx]]
    after = [float(v) for _, v in samples[idx:]]
    if len(after) < 2 and len(before) < 2:
        return None
    b, a = median(before), median(after)
    scale = max(abs(a), abs(b))
    if scale == 0 or abs(a - b) < 0.5 * scale:
        return None
    mx = (series.get("max") or {}).get("value")
    last = (series.get("last") or {}).get("value")
    return {
        "before": round(b, 4),
        "after": round(a, 4),
        "ratio": round(a / b, 2) if b else None,
        "direction": "rose" if a > b else "fell",
        "time": t_chg,
        "max": mx,
        "last": last,
    }


def metric_names(query: str) -> list[str]:
    """Metric names in a PromQL expression (functions and keywords left out)."""
    names = re.findall(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?:\{|\[|\)|$|\s)", query or "")
    skip = {
        "sum",
        "max",
        "min",
        "avg",
        "count",
        "rate",
        "irate",
        "increase",
        "by",
        "without",
        "histogram_quantile",
        "topk",
        "bottomk",
        "on",
        "ignoring",
        "and",
        "or",
        "unless",
        "offset",
        "le",
        "abs",
        "round",
        "delta",
        "deriv",
        "quantile",
        "group_left",
    }
    out: list[str] = []
    for n in names:
        if n not in skip and "_" in n and n not in out:
            out.append(n)
    return out


def aggregate_shift(series: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A shift across series that replace one another (pods recreated by a rollout).

    The mean of all series present at each sample time forms one series; its largest
    step splits it for :func:`series_shift`.
    """
    by_time: dict[str, list[float]] = {}
    for s in series:
        for pair in s.get("samples") or []:
            if (
                isinstance(pair, list | tuple)
                and len(pair) == 2
                and isinstance(pair[1], int | float)
            ):
                by_time.setdefault(str(pair[0]), []).append(float(pair[1]))
    if len(by_time) < 4:
        return None
    ordered = sorted(by_time.items(), key=lambda kv: to_time(kv[0]) or datetime.min)
    times = [t for t, _ in ordered]
    vals = [sum(v) / len(v) for _, v in ordered]
    steps = [abs(vals[i] - vals[i - 1]) for i in range(1, len(vals))]
    i = max(range(len(steps)), key=steps.__getitem__) + 1
    synthetic: dict[str, Any] = {
        "samples": [[t, v] for t, v in zip(times, vals, strict=True)],
        "largest_change": {"time": times[i], "from": vals[i - 1], "to": vals[i]},
        "max": {"value": round(max(vals), 6)},
        "last": {"value": round(vals[-1], 6)},
    }
    return series_shift(synthetic)
