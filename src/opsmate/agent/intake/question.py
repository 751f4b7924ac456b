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

from opsmate.agent.intake.names import detect_namespace, detect_subject, guessed_only
from opsmate.agent.intake.subject import Subject
from opsmate.agent.intake.times import absolute_time, detect_onset
from opsmate.errors import UsageError
from opsmate.timeparse import parse_duration
from opsmate.tools.base import Constraints

__all__ = [
    "Intake",
    "detect_environment",
    "detect_identifiers",
    "detect_lookback",
    "detect_onset",
    "detect_restriction",
    "detect_services",
    "map_environment",
    "run_intake",
]

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
    subject: Subject = field(default_factory=Subject)


def detect_environment(text: str, known: Sequence[str] = ()) -> str | None:
    """The environment a question restricts itself to, or None.

    "test environment only", "only in staging", "生产环境", "仅测试环境": mentions
    with "only"/"environment" beat bare words; negated mentions ("not prod",
    "不要动生产") never count; "the production namespace" / "namespace prod" name a
    namespace, not an environment. The result is mapped onto ``known`` names when given.
    """
    found = environment_mention(text, known)
    return found[0] if found else None


def environment_mention(text: str, known: Sequence[str] = ()) -> tuple[str, int] | None:
    """The environment a question names and how strongly: 3 "only"/"仅", 2 "environment" or
    "in prod", 1 a bare word."""
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
                if re.match(r"[\s-]*(?:namespace|ns|命名空间)\b", after) or re.search(
                    r"(?:namespace|ns|命名空间)[\s:=]*$", before
                ):
                    continue  # "the production namespace", "namespace prod": a namespace
                if re.match(r"\s*(?:environment|env|cluster|环境|集群)", after):
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
    return map_environment(best[2], known), -best[0]


def map_environment(name: str, known: Sequence[str] = ()) -> str:
    """Map an alias (``production``, ``生产``) onto a known environment name."""
    low = name.lower()
    canon = next((c for c, words in ENV_ALIASES.items() if low == c or low in words), low)
    for k in known:
        kl = k.lower()
        if kl in (low, canon) or kl in ENV_ALIASES.get(canon, ()):
            return k
    return canon


_NS_BEFORE = re.compile(r"(?:\bnamespace|\bns|命名空间)\s*[:=]?\s*[\"'`]?$")
_NS_AFTER = re.compile(r"^[\"'`]?\s*(?:namespace\b|命名空间)")


def _names_a_namespace(low: str, pos: int, n: int) -> bool:
    """Whether the word at ``pos`` is said as a namespace ("namespace X", "X namespace",
    "ns: X")."""
    return bool(_NS_BEFORE.search(low[max(0, pos - 16) : pos])) or bool(
        _NS_AFTER.match(low[pos + n : pos + n + 14])
    )


def detect_services(text: str, known: Iterable[str] = ()) -> list[str]:
    """Service names in ``text``: known names (in text order), then ``xxx-service`` patterns."""
    found: list[tuple[int, str]] = []
    low = text.lower()
    for name in sorted({k for k in known if k}, key=len, reverse=True):
        for pos in _word_iter(low, name.lower(), plural=True):
            if _names_a_namespace(low, pos, len(name)):
                continue  # "in namespace gitea": the namespace, not a service of that name
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
    """Turn the question and the flags into constraints (see module doc for precedence).

    Raises :class:`~opsmate.errors.UsageError` when a flag contradicts a restriction the
    question states ("test environment only" with ``--env prod``), naming both.
    """
    notes: list[str] = []
    env_source = "none"
    environment: str | None = None
    q_env = environment_mention(question, known_envs)
    if env:
        environment, env_source = map_environment(env, known_envs), "flag"
        if q_env and q_env[1] >= 3 and q_env[0] != environment:
            raise UsageError(
                f"the question says '{q_env[0]}' only, but --env {env} was given",
                hint="drop --env or change the question; opsmate never widens a restriction",
            )
    elif q_env:
        environment, env_source = q_env[0], "question"
    elif bundle_env:
        environment, env_source = bundle_env, "bundle"
    elif default_env:
        environment, env_source = default_env, "default"
    known = list(known_services)
    healthy = said_healthy(question)
    focus = list(services) or [s for s in detect_services(question, known) if s not in healthy]
    allowed = detect_restriction(question, [*focus, *known])
    if services and allowed and not set(services) <= set(allowed):
        raise UsageError(
            f"the question limits the task to {', '.join(allowed)}, but --service "
            f"{', '.join(services)} was given"
        )
    namespace = detect_namespace(question)
    env_words = [w for ws in ENV_ALIASES.values() for w in ws]
    subject = detect_subject(
        question, services=focus, namespace=namespace, exclude=[*env_words, *healthy]
    )
    if not services:
        late = [n for n in guessed_only(question, focus, namespace) if n not in subject.suspects]
        subject.suspects = sorted({*subject.suspects, *(n.lower() for n in late)})
        subject.names = [n for n in subject.names if n not in subject.suspects]
    if subject.suspects and not services:
        # a service named only in a guess is read, not the focus of the task
        focus = [s for s in focus if s.lower() not in subject.suspects]
        notes.append(
            "the question's guess " + ", ".join(subject.suspects) + " is checked, not taken "
            "as the subject"
        )
    if healthy:
        notes.append(
            "the question says " + ", ".join(sorted(healthy)) + " is healthy: it is not the "
            "subject (its state is still read)"
        )
    # time window
    lookback: timedelta | None = None
    if since:
        try:
            lookback = parse_duration(since)
        except ValueError as exc:
            raise UsageError(f"--since: {exc}") from exc
    else:
        lookback = detect_lookback(question)
    if bundle_window is not None and lookback is None:
        w_from, w_to = bundle_window
    else:
        w_to = bundle_window[1] if bundle_window else now
        w_from = w_to - (lookback or default_lookback)
    anchor = absolute_time(question, w_to)
    if anchor is not None and not since:
        # an absolute time in the question anchors the window around it
        at, _ = anchor
        lo = at - min(max_window / 2, timedelta(hours=2))
        hi = at + min(max_window / 2, timedelta(hours=1))
        if bundle_window is not None:
            lo, hi = max(lo, bundle_window[0]), min(hi, bundle_window[1])
        else:
            hi = min(hi, now)
        if lo < hi:
            w_from, w_to = lo, hi
            notes.append(f"time window anchored on {at.isoformat()} named in the question")
    if w_to - w_from > max_window:
        notes.append(f"time window narrowed to the last {max_window} (the longest allowed)")
        w_from = w_to - max_window
    onset = anchor[0] if anchor is not None else detect_onset(question, w_to)
    exclude = [*focus, *known, *env_words, *subject.names]
    identifiers = detect_identifiers(question, exclude)
    nodes = sorted(
        set(re.findall(r"(?<![\w-])((?:ip|node|worker|gke|aks)-[a-z0-9-]+)", question.lower()))
    )
    ns_list = list(namespaces)
    constraints = Constraints(
        environment=environment,
        services=focus,
        allowed_services=allowed,
        namespaces=ns_list,
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
        subject=subject,
    )


_ONLY = (
    re.compile(r"\bonly\s+(?:for\s+|in\s+|on\s+|at\s+)?(?:the\s+)?([a-z][a-z0-9-]+)", re.I),
    re.compile(r"([a-z][a-z0-9-]+)\s+only\b", re.I),
    re.compile(r"(?:只|仅)(?:限|看|查|排查)?\s*([a-z][a-z0-9-]+)", re.I),
)


def detect_restriction(text: str, services: Sequence[str]) -> list[str]:
    """Services the question restricts the task to ("only order-service", "只看 order-service").

    Only names that are services (known, or ``xxx-service``-style) count: "test environment
    only" restricts the environment, handled by :func:`detect_environment`.
    """
    known = {s.lower() for s in services}
    out: list[str] = []
    for pat in _ONLY:
        for m in pat.finditer(text):
            name = m.group(1).lower()
            if (name in known or _SERVICE_PATTERN.fullmatch(name)) and name not in out:
                out.append(name)
    return out


def _is_cjk(word: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in word)


def _word_iter(low: str, word: str, *, plural: bool = False) -> Iterable[int]:
    """Start offsets of ``word`` in ``low`` as a whole word (CJK: anywhere); ``plural``: its
    plural too ("checkouts fail" names the checkout service)."""
    if _is_cjk(word):
        yield from (m.start() for m in re.finditer(re.escape(word), low))
        return
    tail = "(?:e?s)?" if plural and word[-1:].isalpha() and len(word) >= 4 else ""
    pat = re.compile(r"(?<![A-Za-z0-9_-])" + re.escape(word) + tail + r"(?![A-Za-z0-9_-])")
    yield from (m.start() for m in pat.finditer(low))


_HEALTHY = re.compile(
    r"([a-z0-9][a-z0-9-]*[a-z0-9])((?:\s+(?:page|service|pod|pods|all|itself|api|dashboards?|"
    r"metrics|graphs?|panels?|side|status|web|ui|frontend))*)(?:\s+(?:still|also))?\s+(?:(?:is|are|looks?|"
    r"seems?|appears?)\s+(?:to be\s+)?(?:healthy|fine|ok|okay|up|working|normal|green"
    r"|not the problem)|works(?: fine)?|itself works)\b",
    re.I,
)


def said_healthy(question: str) -> set[str]:
    """Names the question says are healthy ("the billing team says ledger-api is
    healthy"): not the subject, whatever else the question says about them."""
    out: set[str] = set()
    for m in _HEALTHY.finditer(question):
        name = m.group(1).lower()
        if ("-" in name or len(name) >= 4) and name not in _PRONOUNS:
            part = set(m.group(2).lower().split()) & _FRONT_PARTS
            # "the Huginn web UI works fine": its web front end is, not the whole of Huginn
            out |= {f"{name}-{p}" for p in _FRONT_PARTS} if part else {name}
    return out


_FRONT_PARTS = frozenset({"web", "ui", "frontend"})


_PRONOUNS = {
    "everything", "everyone", "nothing", "which", "there", "cluster", "service", "this",
    "that", "what", "else", "rest", "site", "page", "still", "browsing", "mostly",
}  # fmt: skip
