"""Small text helpers for analyzers: event/message signatures, short times, quoting."""

from __future__ import annotations

import re
from datetime import datetime

_VOLATILE = (
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?"
        ),
        "<ts>",
    ),
    (re.compile(r"\([0-9a-f]{8}-?[0-9a-f-]{4,}\)"), "(<uid>)"),
    (re.compile(r"(?<=[a-z0-9])-[a-z0-9]{8,10}-[a-z0-9]{5}(?![a-z0-9])"), "-<pod>"),
    (re.compile(r"(?<=[a-z0-9])-[a-z0-9]{5}(?=[\"'\s/:_(]|$)"), "-<id>"),
    (re.compile(r"\b(?:\d+(?:\.\d+)?(?:h|m|s|ms))+\b"), "<dur>"),
    (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b"), "<ip>"),
    (re.compile(r"\b\d+(?:\.\d+)?(?:ms|s|m|h|µs|us|ns)\b"), "<dur>"),
    (re.compile(r"(?<![A-Za-z])\d+(?![A-Za-z])"), "<n>"),
)


def message_signature(message: str | None) -> str:
    """A grouping key for a message that keeps names (quoted values, object names) and masks
    what varies between occurrences of the same problem (times, ids, numbers, pod suffixes)."""
    text = (message or "").strip().splitlines()[0] if (message or "").strip() else ""
    for pat, repl in _VOLATILE:
        text = pat.sub(repl, text)
    return re.sub(r"\s+", " ", text).strip().lower()[:240]


def hm(t: datetime | None) -> str:
    """``10:01:53`` of a time (empty when unknown)."""
    return t.strftime("%H:%M:%S") if t else ""


def span(first: datetime | None, last: datetime | None) -> str:
    """`` between 10:01 and 10:05`` / `` at 10:01`` / empty."""
    a, b = hm(first), hm(last)
    if a and b and a != b:
        return f" between {a} and {b}"
    return f" at {a}" if a else ""


def clip(text: str | None, limit: int = 300) -> str:
    """``text`` on one line, at most ``limit`` characters (cut at a space, with an ellipsis)."""
    s = re.sub(r"\s+", " ", text or "").strip()
    if len(s) <= limit:
        return s
    cut = s[:limit]
    sp = cut.rfind(" ")
    return (cut[:sp] if sp > limit // 2 else cut) + " …"


def clip_wrapped(text: str | None, limit: int = 300) -> str:
    """Like :func:`clip`, but a long wrapped error (``a: b: c: 401 Unauthorized``) keeps its
    last clause, the innermost cause, after the cut: ``a: b … 401 Unauthorized``."""
    s = re.sub(r"\s+", " ", text or "").strip()
    if len(s) <= limit or ": " not in s:
        return clip(s, limit)
    tail = s.rsplit(": ", 1)[1]
    if not tail or len(tail) > limit // 3:
        return clip(s, limit)
    return clip(s, limit - len(tail) - 3).removesuffix(" …") + " … " + tail


_POD_SUFFIX = re.compile(r"-(?:[a-z0-9]{8,10}-[a-z0-9]{5}|[a-z0-9]{5}|\d+)$")


def workload_of(pod_name: str | None) -> str | None:
    """The workload a pod name belongs to: ``web-7d9f8c6b5-x2x1q`` -> ``web``;
    ``job-abc12`` -> ``job``; ``db-0`` -> ``db``."""
    if not pod_name:
        return None
    base = _POD_SUFFIX.sub("", pod_name)
    return base or pod_name


# how a log classifier's reason is said in a fact's statement
_REASON_WORDS = {
    "protocol_mismatch": "one side speaks TLS and the other plain text",
    "dns": "its name does not resolve",
    "refused": "connection refused",
    "timeout": "timed out",
    "unavailable": "unavailable",
    "slow": "slow",
    "undefined_env": "an environment variable is not set",
    "missing_key": "a configuration key is missing",
    "invalid_value": "an invalid configuration value",
    "config_file": "the configuration cannot be read",
    "certificate": "a certificate problem",
    "not_yet_valid": "a certificate or token that is not yet valid",
    "permission": "permission denied",
    "pool_exhausted": "a connection pool is exhausted",
    "out_of_memory": "out of memory",
    "queue_full": "a queue is full",
    "pids_exhausted": "no thread or process can be started (a PID / thread limit)",
    "shm_exhausted": "shared memory (/dev/shm) is full",
    "inotify_exhausted": "the inotify watch limit is reached (file watchers cannot start)",
    "resource_exhausted": "a resource is exhausted",
    "config_reload": "configuration reload",
    "feature_flag": "feature flag",
    "deploy": "deploy",
    "failover": "failover",
    "rebalance": "rebalance",
    "maintenance": "maintenance",
}


def reason_words(reason: str | None) -> str:
    """A classifier reason in words (``resource_exhausted`` -> ``a resource is exhausted``)."""
    return _REASON_WORDS.get(reason or "", (reason or "").replace("_", " "))
