"""Intake: a question and the flags become the task's constraints.

Environment (flag > the question's words, English or Chinese > the bundle's
environment > the configured default), services in focus (flags > known service
names found in the text > ``xxx-service``-style names), time window (``--since``,
"last 30 minutes", the bundle window) with an onset hint ("after the 10:00
release"), and identifiers worth searching for (error codes, exception names).
Pure functions: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from opsmate.timeparse import parse_duration
from opsmate.tools.base import Constraints

# canonical environment -> words that name it
ENV_ALIASES: dict[str, tuple[str, ...]] = {
    "test": ("test", "testing", "qa", "测试", "测试环境"),
    "staging": ("staging", "stage", "stg", "preprod", "pre-prod", "预发", "预发布", "预生产"),
    "prod": ("prod", "production", "prd", "生产", "线上", "正式环境", "生产环境"),
    "dev": ("dev", "development", "开发", "开发环境"),
}
_NEGATION = re.compile(
    r"(?:\bnot?\b|\bnever\b|\bdon'?t\b|\bdo not\b|\bwithout\b|\bexcept\b|\bavoid\b"
    r"|不要|别|禁止|不能|不许|不可|勿)"
    r"[^.;,。；，]{0,24}$",
    re.IGNORECASE,
)
_SERVICE_PATTERN = re.compile(
    r"(?<![A-Za-z0-9_-])([a-z][a-z0-9]*(?:-[a-z0-9]+)*-"
    r"(?:service|svc|api|server|worker|gateway|db|consumer|projector|proxy|web|app|job))"
    r"(?![A-Za-z0-9_-])"
)
_IDENT_PATTERNS = (
    re.compile(r"(?<![A-Za-z0-9])[A-Z]{2,}[-_]?\d{2,}(?![A-Za-z0-9])"),  # ORA-00054, E1234
    re.compile(
        r"(?<![A-Za-z0-9])[A-Z]+[a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+(?![A-Za-z0-9])"
    ),  # PoolTimeout
    re.compile(r"(?<![A-Za-z0-9])[A-Z]{2,}[A-Z][a-z]+[A-Za-z]*(?![A-Za-z0-9])"),  # OOMKilled
    re.compile(r"(?<![A-Za-z0-9_])[a-z]+(?:_[a-z0-9]+)+(?![A-Za-z0-9_])"),  # max_connections
    re.compile(r"(?<![A-Za-z0-9])(?:HTTP\s?)?[45](?:\d\d|xx)(?![A-Za-z0-9])", re.IGNORECASE),
    re.compile(r"(?<![A-Za-z0-9])exit (?:code )?\d{1,3}(?![0-9])", re.IGNORECASE),
)
_CLOCK = re.compile(
    r"(?:after|since|from|at|around|starting|started|began|从|在|自)?\s*"
    r"(?<!\d)([01]?\d|2[0-3])[:：]([0-5]\d)(?!\d)",
    re.IGNORECASE,
)
_LAST = re.compile(
    r"(?:last|past|previous|最近|过去)\s*(\d+(?:\.\d+)?)\s*"
    r"(minutes?|mins?|m|hours?|hrs?|h|days?|d|分钟|小时|天)",
    re.IGNORECASE,
)
_UNIT = {"分钟": "m", "小时": "h", "天": "d"}


@dataclass
class Intake:
    """What intake found; ``constraints`` is what the executor enforces."""

    constraints: Constraints
    identifiers: list[str] = field(default_factory=list)
    onset: datetime | None = None
    nodes: list[str] = field(default_factory=list)
    env_source: str = "none"  # flag | question | bundle | default | none
    notes: list[str] = field(default_factory=list)


def detect_environment(text: str, known: Sequence[str] = ()) -> str | None:
    """The environment a question restricts itself to, or None.

    "test environment only", "only in staging", "生产环境", "仅测试环境": mentions
    with "only"/"environment" beat bare words; negated mentions ("not prod",
    "不要动生产") never count. The result is mapped onto ``known`` names when given.
    """
    best: tuple[int, int, str] | None = None  # (-strength, position, canonical)
    low = text.lower()
    for canon, words in ENV_ALIASES.items():
        for word in words:
            for m in _word_iter(low, word):
                before = low[max(0, m - 40) : m]
                after = low[m + len(word) : m + len(word) + 24]
                if _NEGATION.search(before):
                    continue
                strength = 1
                if re.match(r"\s*(?:environment|env|cluster|namespace|环境|集群)", after):
                    strength = 2
                if re.search(r"(?:\bin|\bon|\bagainst|在)\s*(?:the\s+)?$", before):
                    strength = max(strength, 2)
                if re.match(
                    r"[\s-]*(?:environment|env|环境)?\s*(?:only\b|只|才)", after
                ) or re.search(
                    r"(?:\bonly|仅|只|仅限|只在|只查)\s*(?:in|on|the|在)?\s*(?:the\s+)?$", before
                ):
                    strength = 3
                if canon == "test" and strength == 1 and not _is_cjk(word):
                    continue  # a bare "test" is usually a load test, not an environment
                if canon == "dev" and strength == 1:
                    continue
                key = (-strength, m, canon)
                if best is None or key < best:
                    best = key
    if best is None:
        return None
    return map_environment(best[2], known)


def map_environment(name: str, known: Sequence[str] = ()) -> str:
    """Map an alias (``production``, ``生产``) onto a known environment name."""
    low = name.lower()
    canon = next((c for c, words in ENV_ALIASES.items() if low == c or low in words), low)
    for k in known:
        kl = k.lower()
        if kl in (low, canon) or kl in ENV_ALIASES.get(canon, ()):
            return k
    return canon


def detect_services(text: str, known: Iterable[str] = ()) -> list[str]:
    """Service names in ``text``: known names (in text order), then ``xxx-service`` patterns."""
    found: list[tuple[int, str]] = []
    low = text.lower()
    for name in sorted({k for k in known if k}, key=len, reverse=True):
        for pos in _word_iter(low, name.lower()):
            if not any(p <= pos < p + len(s) for p, s in found):
                found.append((pos, name))
            break
    for m in _SERVICE_PATTERN.finditer(low):
        if not any(p <= m.start() < p + len(s) for p, s in found):
            found.append((m.start(), m.group(1)))
    out: list[str] = []
    for _, s in sorted(found):
        if s not in out:
            out.append(s)
    return out


def detect_identifiers(text: str, exclude: Iterable[str] = ()) -> list[str]:
    """Error codes and identifiers worth searching for (PoolTimeout, ORA-00054, 503, exit 137)."""
    skip = {e.lower() for e in exclude}
    out: list[str] = []
    for pat in _IDENT_PATTERNS:
        for m in pat.finditer(text):
            val = m.group(0).strip()
            if val.lower() in skip or val in out:
                continue
            out.append(val)
    return out


def detect_onset(text: str, reference: datetime | None) -> datetime | None:
    """A clock time in the question ("after the 10:00 release", "10:00 发布后"), that day."""
    if reference is None:
        return None
    m = _CLOCK.search(text)
    if not m:
        return None
    hh, mm = int(m.group(1)), int(m.group(2))
    cand = reference.replace(hour=hh, minute=mm, second=0, microsecond=0)
    if cand > reference + timedelta(minutes=5):
        cand -= timedelta(days=1)
    return cand


def detect_lookback(text: str) -> timedelta | None:
    """ "last 30 minutes", "过去2小时" -> a duration."""
    m = _LAST.search(text)
    if not m:
        return None
    unit = m.group(2).lower()
    unit = _UNIT.get(unit, unit[0])
    try:
        return parse_duration(f"{m.group(1)}{unit}")
    except ValueError:
        return None


def run_intake(
    question: str,
    *,
    now: datetime,
    env: str | None = None,
    services: Sequence[str] = (),
    since: str | None = None,
    known_services: Iterable[str] = (),
    known_envs: Sequence[str] = (),
    bundle_env: str | None = None,
    bundle_window: tuple[datetime, datetime] | None = None,
    default_env: str | None = None,
    namespaces: Sequence[str] = (),
    max_window: timedelta = timedelta(hours=6),
    default_lookback: timedelta = timedelta(hours=1),
) -> Intake:
    """Turn the question and the flags into constraints (see module doc for precedence)."""
    notes: list[str] = []
    env_source = "none"
    environment: str | None = None
    if env:
        environment, env_source = map_environment(env, known_envs), "flag"
    else:
        q_env = detect_environment(question, known_envs)
        if q_env:
            environment, env_source = q_env, "question"
        elif bundle_env:
            environment, env_source = bundle_env, "bundle"
        elif default_env:
            environment, env_source = default_env, "default"
    known = list(known_services)
    focus = list(services) or detect_services(question, known)
    # time window
    lookback: timedelta | None = None
    if since:
        try:
            lookback = parse_duration(since)
        except ValueError as exc:
            from opsmate.errors import UsageError

            raise UsageError(f"--since: {exc}") from exc
    else:
        lookback = detect_lookback(question)
    if bundle_window is not None and lookback is None:
        w_from, w_to = bundle_window
    else:
        w_to = bundle_window[1] if bundle_window else now
        w_from = w_to - (lookback or default_lookback)
    if w_to - w_from > max_window:
        notes.append(f"time window narrowed to the last {max_window} (the longest allowed)")
        w_from = w_to - max_window
    onset = detect_onset(question, w_to)
    exclude = [*focus, *known, *(w for ws in ENV_ALIASES.values() for w in ws)]
    identifiers = detect_identifiers(question, exclude)
    nodes = sorted(
        set(re.findall(r"(?<![\w-])((?:ip|node|worker|gke|aks)-[a-z0-9-]+)", question.lower()))
    )
    constraints = Constraints(
        environment=environment,
        services=focus,
        namespaces=list(namespaces),
        window_from=w_from,
        window_to=w_to,
        max_window=max_window,
    )
    return Intake(
        constraints=constraints,
        identifiers=identifiers,
        onset=onset,
        nodes=nodes,
        env_source=env_source,
        notes=notes,
    )


def _is_cjk(word: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in word)


def _word_iter(low: str, word: str) -> Iterable[int]:
    """Start offsets of ``word`` in ``low`` as a whole word (CJK: anywhere)."""
    if _is_cjk(word):
        yield from (m.start() for m in re.finditer(re.escape(word), low))
        return
    pat = re.compile(r"(?<![A-Za-z0-9_-])" + re.escape(word) + r"(?![A-Za-z0-9_-])")
    yield from (m.start() for m in pat.finditer(low))
