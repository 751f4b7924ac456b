"""Secret redaction: the one cleaning step every output of opsmate passes through.

:class:`Redactor` is applied to every tool result (the executor), the report (JSON,
Markdown, terminal), saved sessions, model prompts, the TUI, the audit log and search
output. :meth:`Redactor.redact_text` also removes terminal control sequences
(:func:`opsmate.textsafe.safe_text`), so whatever passed the redactor is safe to print.
The patterns live in :mod:`opsmate.tools.redact_rules`.

What is replaced with ``[REDACTED]`` (the key name or scheme is kept, only the value goes):

- PEM private keys (the body between the BEGIN/END lines)
- ``Authorization``/``Proxy-Authorization`` headers (Bearer, Basic, Token, Digest ...),
  a bare ``Bearer <token>``, and a bare ``Basic <base64 of user:pass>`` (a metric label)
- ``Cookie:`` / ``Set-Cookie:`` values
- JSON Web Tokens (``eyJ...``.``eyJ...``.``...``)
- connection strings: passwords in URLs (``postgres://user:PASS@host``,
  ``redis://:PASS@host``, ``mongodb+srv://``, ``amqp://`` ...), ``Password=``/``Pwd=``
  in ADO.NET, ODBC, JDBC and libpq strings, Azure ``AccountKey=``, ``SharedAccessKey=``,
  SAS ``sig=``, ``X-Amz-Signature``/``X-Amz-Credential``, Oracle ``user/PASS@db``,
  ``mysql -pPASS``, ``redis-cli -a PASS``, ``requirepass``, ``.netrc`` passwords
- AWS access key ids and secret keys next to an AWS key name
- provider tokens: OpenAI ``sk-proj-``/``sk-...``, Anthropic ``sk-ant-``, Stripe
  ``sk_live_``, GitHub ``ghp_``/``github_pat_``, GitLab ``glpat-``, Slack ``xoxb-`` and
  webhooks, Google ``AIza``/``ya29.``/``GOCSPX-``, npm, Hugging Face, PyPI, DigitalOcean,
  Vault ``hvs.``, Databricks, SendGrid, Shopify
- ``key=value``, ``key: value``, ``"key": "value"`` (also with a full-width colon) and
  ``--key value`` where the key ends with password, passwd, pwd, secret, token,
  api[-_]key, auth, credential(s), cookie, authorization, access/secret/private/account
  key, 密码, 口令, 令牌, 密钥 (glued prefixes count: ``PGPASSWORD=``, ``DB_PASSWORD=``);
  Kubernetes env entries ``{name: DB_PASSWORD, value: ...}``; in structured data, string
  values under such keys
- random-looking values (:func:`~opsmate.tools.redact_shapes.high_entropy`) under keys
  that only contain such a word (``SECRET_KEY_BASE``), signature/session/nonce-like keys,
  and custom header names (``X-Acme-Sig``)
- by shape alone, wherever it stands: a random token of 20+ characters in free text
  (:func:`~opsmate.tools.redact_shapes.random_token`; kept after words that call it an
  id, inside a certificate, or when it is base64 of readable text), and the values of
  annotations, labels and env entries under any key (:func:`looks_secret`)
- base64 tokens whose decoded text holds any of the above (``cGFzc3dvcmQ9...``)
- Kubernetes Secret objects (``kind: Secret``): every value of ``data`` / ``stringData``
  and the ``last-applied-configuration`` annotation that repeats them
- configured patterns (``tools.redact_patterns``): a regex without groups has its whole
  match replaced; with groups, only group 1 is.

Non-secrets such as trace ids, git shas, UUIDs, alert and class names made of words,
``password_reset_requested``, ``timeout=30``, ``ALLOW_EMPTY_PASSWORD=yes`` or a key
file's path are left alone; a value under a key naming an id (``clusterId``) is never
judged random.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from opsmate.errors import ConfigError
from opsmate.textsafe import safe_text
from opsmate.tools.redact_rules import (
    B64_TOKEN,
    HEADER_KEY,
    KNOWN_TOKEN,
    MASK,
    RULES,
    SECRET_KEY_NAME,
    WEAK_KEY,
    Gate,
    Repl,
    b64_text,
    bare_secret,
    high_entropy,
    id_key,
    keep,
    plain_setting,
)

__all__ = ["MASK", "Redactor", "clean", "default_redactor"]

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_MAX_DEPTH = 2  # base64 inside base64 inside text, no deeper


class Redactor:
    """Replaces secrets (and terminal control) in text and JSON-like data; counts secrets."""

    def __init__(self, extra_patterns: Sequence[str] = ()) -> None:
        self._extra: list[re.Pattern[str]] = []
        for pattern in extra_patterns:
            try:
                self._extra.append(re.compile(pattern))
            except re.error as exc:
                raise ConfigError(
                    f"tools.redact_patterns: invalid regular expression {pattern!r}: {exc}"
                ) from exc
        # None marks the base64 rule, which needs the depth of the current scan
        self._rules: list[tuple[re.Pattern[str], Repl | str | None, Gate]] = list(RULES)
        self._rules.append((B64_TOKEN, None, None))
        for rx in self._extra:
            self._rules.append((rx, keep(1) if rx.groups else MASK, None))
        # text -> (its clean form, None when unchanged; secrets replaced): tool results
        # repeat the same strings (a namespace, an image, a condition) thousands of times
        self._memo: dict[str | tuple[str], tuple[str | None, int]] = {}
        self._memo_chars = 0  # characters of the remembered strings

    # -- text ------------------------------------------------------------------------
    def redact_text(self, text: str, *, bare: bool = True) -> tuple[str, int]:
        """Return ``(clean text, number of secret values replaced)``.

        Terminal control sequences are removed too (not counted). ``bare=False``: a
        random-looking token standing alone is kept (the text is the value of an id key).
        """
        if not text:
            return text, 0
        if type(text) is not str:
            text = str.__str__(text)  # a StrEnum member: its plain text, as re.sub gives
        memo_key: str | tuple[str] = text if bare else (text,)
        hit = self._memo.get(memo_key)
        if hit is not None:
            return (text if hit[0] is None else hit[0]), hit[1]
        clean, count = self._scan(safe_text(text), bare=bare)
        size = len(text)
        if size <= _MEMO_TEXT:
            if len(self._memo) >= _MEMO_SIZE or self._memo_chars + size > _MEMO_CHARS:
                self._memo.clear()
                self._memo_chars = 0
            self._memo[memo_key] = (None if clean == text else clean, count)
            self._memo_chars += size
        return clean, count

    def clean_text(self, text: str) -> str:
        """:meth:`redact_text` without the count."""
        return self.redact_text(text)[0]

    def _scan(self, text: str, depth: int = 0, *, bare: bool = True) -> tuple[str, int]:
        total = 0
        low = text.lower()
        for rx, rule, gate in self._rules:
            if gate is not None and gate.search(low) is None:
                continue
            if rx.search(text) is None:
                continue  # nothing to replace: skip building the replacement
            count = 0
            repl: Repl | str = rule if rule is not None else self._b64(depth, bare)

            def counted(m: re.Match[str], repl: Repl | str = repl) -> str:
                nonlocal count
                new = repl if isinstance(repl, str) else repl(m)
                if new != m.group(0):
                    count += 1
                return new

            text = rx.sub(counted, text)
            total += count
        return text, total

    def _b64(self, depth: int, bare: bool = True) -> Repl:
        """A base64 token whose decoded text carries a secret is masked whole; so is a
        random token standing alone (``bare``: :func:`~opsmate.tools.redact_rules.bare_secret`).
        """

        def repl(m: re.Match[str]) -> str:
            if bare and depth == 0:
                masked = bare_secret(m)
                if masked is not None:
                    return masked
            if depth >= _MAX_DEPTH:
                return m.group(0)
            decoded = b64_text(m.group(0))
            if decoded is None or not self._scan(decoded, depth + 1)[1]:
                return m.group(0)
            return MASK

        return repl

    # -- structured data ----------------------------------------------------------------
    def redact_obj(self, obj: Any) -> tuple[Any, int]:
        """Deep-redact str values of dicts/lists/tuples/pydantic models; a new object, a count.

        Values under secret-named keys (``password``, ``api_key``, ``DB_PASSWORD`` ...)
        are replaced whole, random-looking ones under weaker keys too; an env entry
        ``{"name": "DB_PASSWORD", "value": ...}`` loses its value; a mapping with
        ``kind: Secret`` has every ``data`` / ``stringData`` value replaced.
        """
        counter = [0]
        result = self._walk(obj, counter)
        return result, counter[0]

    def clean(self, obj: T) -> T:
        """A redacted copy of a str, JSON-like data or a pydantic model, without the count.

        Models keep their type (a ``SearchResponse`` stays one, a ``TaskState`` too): each
        field is cleaned as the value of a dict key of that name would be.
        """
        if isinstance(obj, str):
            return self.clean_text(obj)  # type: ignore[return-value]
        return self.redact_obj(obj)[0]

    def clean_model(self, model: M) -> M:
        """:meth:`clean` for a pydantic model (a ``SearchResponse``, a ``Report``)."""
        return self.clean(model)

    def _walk(self, obj: Any, counter: list[int]) -> Any:
        kind = type(obj)
        if kind in _PLAIN:
            return obj  # numbers, booleans, None: nothing to clean
        if kind is str:
            text, n = self.redact_text(obj)
            counter[0] += n
            return text
        if kind is list:
            return [self._walk(v, counter) for v in obj]
        if isinstance(obj, str):
            text, n = self.redact_text(obj)
            counter[0] += n
            return obj if text == obj else text  # a clean str keeps its type (StrEnum)
        if isinstance(obj, dict):
            return self._walk_dict(obj, counter)
        if isinstance(obj, BaseModel):
            fields = {name: getattr(obj, name) for name in type(obj).model_fields}
            return obj.model_copy(update=self._walk_dict(fields, counter))
        if isinstance(obj, list | tuple):
            items = [self._walk(v, counter) for v in obj]
            return items if isinstance(obj, list) else tuple(items)
        return obj

    def _walk_dict(
        self, obj: dict[Any, Any], counter: list[int], *, by_shape: bool = False
    ) -> dict[Any, Any]:
        is_secret = obj.get("kind") == "Secret"
        env_value = _env_secret(obj)
        out: dict[Any, Any] = {}
        for key, value in obj.items():
            if isinstance(key, str):
                clean_key, marks = _key_info(key)
            else:
                clean_key, marks = key, _NONE
            if (
                by_shape
                and isinstance(value, str)
                and value != MASK
                and looks_secret(value, id_value=marks == _ID)
            ):
                out[clean_key] = MASK  # any annotation / label key: judged by the value
                counter[0] += 1
            elif key in SHAPE_KEYS and isinstance(value, dict):
                out[clean_key] = self._walk_dict(value, counter, by_shape=True)
            elif is_secret and key in ("data", "stringData") and isinstance(value, dict):
                out[clean_key] = {safe_text(str(k)): MASK for k in value}
                counter[0] += len(value)
            elif is_secret and key == "metadata" and isinstance(value, dict):
                out[clean_key] = self._secret_metadata(value, counter)
            elif (
                isinstance(value, str)
                and value not in ("", MASK)
                and (
                    (env_value and key == "value")
                    or marks == _SECRET
                    or (marks == _WEAK and high_entropy(value))
                )  # _secret_value(key, value)
                and not plain_setting(value)  # ALLOW_EMPTY_PASSWORD: "yes", a key's path
            ):
                out[clean_key] = MASK
                counter[0] += 1
            elif type(value) is str:
                text, n = self.redact_text(value, bare=marks != _ID)
                counter[0] += n
                out[clean_key] = text
            elif type(value) in _PLAIN:
                out[clean_key] = value
            else:
                out[clean_key] = self._walk(value, counter)
        return out

    def _secret_metadata(self, meta: dict[Any, Any], counter: list[int]) -> dict[Any, Any]:
        new = self._walk(meta, counter)
        annotations = new.get("annotations")
        if isinstance(annotations, dict) and annotations.get(_LAST_APPLIED):
            annotations[_LAST_APPLIED] = MASK
            counter[0] += 1
        return dict(new)


_MEMO_SIZE = 50_000  # strings remembered per redactor (emptied when full) ...
_MEMO_CHARS = 4_000_000  # ... or when they hold this many characters
_MEMO_TEXT = 2_000  # longer strings are scanned each time, not remembered
_PLAIN = frozenset({int, float, bool, type(None)})

# dict key -> (key without terminal control, how it marks its value): _SECRET always,
# _WEAK when the value looks random, _NONE never, _ID never and its value is an id (a
# random-looking value under it is not judged by its shape either)
_NONE, _WEAK, _SECRET, _ID = 0, 1, 2, 3
_KEYS: dict[str, tuple[str, int]] = {}
_KEYS_SIZE = 20_000  # keys remembered (emptied when full)
_KEY_TEXT = 200  # longer keys are judged each time


def _key_info(key: str) -> tuple[str, int]:
    """``_KEYS[key]``, computed once per distinct key (a ``str`` subclass, a ``StrEnum``,
    each time: its clean form keeps its type)."""
    exact = type(key) is str
    info = _KEYS.get(key) if exact else None
    if info is None:
        if SECRET_KEY_NAME.fullmatch(key):
            kind = _SECRET
        elif id_key(key):
            kind = _ID  # a key that names an id (X-Request-Id, clusterId)
        elif WEAK_KEY.search(key) or HEADER_KEY.fullmatch(key):
            kind = _WEAK
        else:
            kind = _NONE
        info = (safe_text(key), kind)
        if exact and len(key) <= _KEY_TEXT:
            if len(_KEYS) >= _KEYS_SIZE:
                _KEYS.clear()
            _KEYS[key] = info
    return info


def _secret_value(key: Any, value: str) -> bool:
    """A string value that a dict key marks as secret (always, or when it looks random)."""
    if not isinstance(key, str):
        return False
    kind = _key_info(key)[1]
    return kind == _SECRET or (kind == _WEAK and high_entropy(value))


def _env_secret(obj: dict[Any, Any]) -> bool:
    """``{"name": "DB_PASSWORD", "value": ...}`` (Kubernetes env, header lists), or any
    name whose value has the shape of a secret (``{"name": "ACME_SIGNING", "value": ..}``)."""
    name = obj.get("name", obj.get("key"))
    if not isinstance(name, str) or "value" not in obj:
        return False
    value = obj.get("value")
    return bool(SECRET_KEY_NAME.fullmatch(name)) or (isinstance(value, str) and looks_secret(value))


# keys whose values are judged by shape whatever their own key is called
SHAPE_KEYS = frozenset({"annotations", "labels", "env", "environment_variables"})


def looks_secret(value: str, *, id_value: bool = False) -> bool:
    """A value with the shape of a secret: a known token format, or random-looking
    (:func:`high_entropy`; not when ``id_value``: the value of an id key). Trace ids, git
    shas and UUIDs (hex), words, alert and class names (``OrderServiceHigh5xxRate``) are not.
    """
    v = value.strip()
    if not v or len(v) > 4096:
        return False
    return (not id_value and high_entropy(v)) or bool(KNOWN_TOKEN.search(v))


_DEFAULT: Redactor | None = None


def default_redactor() -> Redactor:
    """A shared redactor with the built-in patterns only."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Redactor()
    return _DEFAULT


def clean(obj: T, redactor: Redactor | None = None) -> T:
    """Redact (and strip terminal control from) a str or JSON-like value: the exit function.

    ``redactor``: the one built from the configured ``tools.redact_patterns`` (e.g. the
    executor's); the built-in patterns only when None.
    """
    return (redactor or default_redactor()).clean(obj)
