"""Secret redaction: applied to every tool result before a model, a screen or the audit log.

What is replaced with ``[REDACTED]`` (the key name or scheme is kept, only the value goes):

- PEM private keys (the body between the BEGIN/END lines)
- ``Authorization: Bearer|Basic|Token ...`` headers and bare ``Bearer <token>``
- JSON Web Tokens (``eyJ...``.``eyJ...``.``...``)
- passwords in URLs (``postgres://user:PASS@host`` → ``postgres://user:[REDACTED]@host``)
- AWS access key ids (``AKIA``/``ASIA`` + 16) and secret keys next to an AWS key name
- provider tokens: ``sk_live_``/``rk_live_``/``sk_test_``, GitHub ``ghp_``/``gho_``/
  ``ghu_``/``ghs_``/``ghr_``/``github_pat_``, Slack ``xoxb-``/``xoxp-``/...
- ``key=value`` / ``key: value`` / ``"key": "value"`` pairs whose key is password, passwd,
  pwd, secret, token, api_key, apikey (also with a prefix: ``DB_PASSWORD=``,
  ``client_secret:``), and in structured data, string values under such keys
- Kubernetes Secret objects (``kind: Secret``): every value of ``data`` / ``stringData``
  and the ``last-applied-configuration`` annotation that repeats them
- configured patterns (``tools.redact_patterns``): a regex without groups has its whole
  match replaced; with groups, only group 1 is.

Non-secrets such as trace ids, git shas, ``password_reset_requested`` or ``timeout=30``
are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from opsmate.errors import ConfigError

MASK = "[REDACTED]"

_KEY_WORDS = (
    r"password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key"
    r"|private[_-]?key|client[_-]?secret|secret[_-]?access[_-]?key"
)
# a secret-bearing key name: one of the words, optionally after a prefix (DB_, aws_, x-)
_SECRET_KEY_NAME = re.compile(
    rf"(?i)(?:[a-z0-9]+[_.-])*(?:{_KEY_WORDS}|authorization|cookie|credentials?)"
)

_PEM = re.compile(
    r"(-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)"
    r"[\s\S]*?"
    r"(-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"
)
_AUTH_HEADER = re.compile(
    r"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|apikey|digest)\s+)"
    r"([^\s\"',;]+)"
)
_BEARER = re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9\-._~+/]{8,}=*)")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")
_URL_PASSWORD = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^/\s:@\"']+:)([^@\s/\"']+)(@)")
_AWS_ACCESS_KEY = re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b")
_AWS_SECRET = re.compile(
    r"(?i)(\baws[\w .-]{0,30}?(?:secret|key)[\w .-]{0,20}?[\"']?\s*[:=]\s*[\"']?)"
    r"([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
)
_PROVIDER_TOKEN = re.compile(
    r"\b(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[baprs]-[A-Za-z0-9-]{10,})"
)
# key=value, key: value, "key": "value"; the key may carry a prefix (DB_PASSWORD)
_PAIR = re.compile(
    rf"(?i)(?<![A-Za-z0-9])((?:[A-Za-z0-9]+[_.-])*(?:{_KEY_WORDS})[\"']?\s*[:=]\s*)"
    r"(?:\"((?:[^\"\\]|\\.)*)\"|'([^']*)'|([^\s&,;\"'}\])]+))"
)
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _keep_prefix(mask_group: int) -> Callable[[re.Match[str]], str]:
    """A replacement that keeps every group before ``mask_group`` and masks that one."""

    def repl(m: re.Match[str]) -> str:
        before = m.string[m.start() : m.start(mask_group)]
        after = m.string[m.end(mask_group) : m.end()]
        return f"{before}{MASK}{after}"

    return repl


def _pair_repl(m: re.Match[str]) -> str:
    for group in (2, 3, 4):
        if m.group(group) is not None:
            value = m.group(group)
            if value in ("", MASK) or value.startswith("[REDACTED"):
                return m.group(0)
            return _keep_prefix(group)(m)
    return m.group(0)  # pragma: no cover - one alternative always matches


class Redactor:
    """Replaces secrets in text and in JSON-like data; counts what it replaced."""

    def __init__(self, extra_patterns: Sequence[str] = ()) -> None:
        self._extra: list[re.Pattern[str]] = []
        for pattern in extra_patterns:
            try:
                self._extra.append(re.compile(pattern))
            except re.error as exc:
                raise ConfigError(
                    f"tools.redact_patterns: invalid regular expression {pattern!r}: {exc}"
                ) from exc
        self._rules: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str] | str]] = [
            (_PEM, lambda m: f"{m.group(1)}{MASK}{m.group(2)}"),
            (_AUTH_HEADER, _keep_prefix(2)),
            (_JWT, MASK),
            (_BEARER, _keep_prefix(2)),
            (_URL_PASSWORD, _keep_prefix(2)),
            (_AWS_ACCESS_KEY, MASK),
            (_AWS_SECRET, _keep_prefix(2)),
            (_PROVIDER_TOKEN, MASK),
            (_PAIR, _pair_repl),
        ]
        for rx in self._extra:
            self._rules.append((rx, _keep_prefix(1) if rx.groups else MASK))

    def redact_text(self, text: str) -> tuple[str, int]:
        """Return ``(redacted text, number of values replaced)``."""
        if not text:
            return text, 0
        total = 0
        for rx, repl in self._rules:
            count = 0

            def counted(
                m: re.Match[str],
                repl: Callable[[re.Match[str]], str] | str = repl,
            ) -> str:
                nonlocal count
                new = repl if isinstance(repl, str) else repl(m)
                if new != m.group(0):
                    count += 1
                return new

            text = rx.sub(counted, text)
            total += count
        return text, total

    def redact_obj(self, obj: Any) -> tuple[Any, int]:
        """Deep-redact str values of dicts/lists/tuples; returns a new object and the count.

        Values under secret-named keys (``password``, ``api_key``, ``DB_PASSWORD`` ...)
        are replaced whole; a mapping with ``kind: Secret`` has every ``data`` /
        ``stringData`` value replaced.
        """
        counter = [0]
        result = self._walk(obj, counter)
        return result, counter[0]

    # -- internals -----------------------------------------------------------
    def _walk(self, obj: Any, counter: list[int]) -> Any:
        if isinstance(obj, str):
            text, n = self.redact_text(obj)
            counter[0] += n
            return text
        if isinstance(obj, dict):
            return self._walk_dict(obj, counter)
        if isinstance(obj, list | tuple):
            items = [self._walk(v, counter) for v in obj]
            return items if isinstance(obj, list) else tuple(items)
        return obj

    def _walk_dict(self, obj: dict[Any, Any], counter: list[int]) -> dict[Any, Any]:
        is_secret = obj.get("kind") == "Secret"
        out: dict[Any, Any] = {}
        for key, value in obj.items():
            if is_secret and key in ("data", "stringData") and isinstance(value, dict):
                out[key] = {k: MASK for k in value}
                counter[0] += len(value)
            elif is_secret and key == "metadata" and isinstance(value, dict):
                out[key] = self._secret_metadata(value, counter)
            elif (
                isinstance(key, str)
                and isinstance(value, str)
                and value
                and value != MASK
                and _SECRET_KEY_NAME.fullmatch(key)
            ):
                out[key] = MASK
                counter[0] += 1
            else:
                out[key] = self._walk(value, counter)
        return out

    def _secret_metadata(self, meta: dict[Any, Any], counter: list[int]) -> dict[Any, Any]:
        new = self._walk(meta, counter)
        annotations = new.get("annotations")
        if isinstance(annotations, dict) and annotations.get(_LAST_APPLIED):
            annotations[_LAST_APPLIED] = MASK
            counter[0] += 1
        return dict(new)


_DEFAULT: Redactor | None = None


def default_redactor() -> Redactor:
    """A shared redactor with the built-in patterns only."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Redactor()
    return _DEFAULT
