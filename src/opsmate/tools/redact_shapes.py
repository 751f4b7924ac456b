"""What a value looks like: random (a secret by its shape), made of words, an identifier.

The fuzzy judgements behind :mod:`opsmate.tools.redact_rules`, measured on the
repository's own bundles (``benchmarks/redact_false_positives.py``):

- :func:`high_entropy`: random-looking (16+ characters, three character classes, 3.5+
  bits each, not hex, not a file name, not made of words); the test for a value a key
  marks as possibly secret and for annotation, label and env values under any key.
- :func:`random_token`: the stricter test for a token that stands alone in free text
  (20+ characters, both cases and digits): masked wherever it appears.
- :func:`wordlike`: alert, class and flag names (``OrderServiceHigh5xxRate``) are words,
  told from random tokens by the mean length of their camel-case pieces.
- :func:`id_key` and :func:`plain_setting`: a key that names an identifier, and a value
  under a secret-sounding key that is no secret (``yes``, a file path, an image).
"""

from __future__ import annotations

import math
import re
from collections import Counter

_HEXISH = re.compile(r"[0-9a-fA-F-]+")
_PREFIXED_HEX = re.compile(r"[A-Za-z]{1,4}[_-]?[0-9a-fA-F]{16,}")
_FILE_NAME = re.compile(r"[\w.+/-]+\.[a-z]{1,5}")
_NAME_SEP = re.compile(r"[-_.:]")
_NOT_A_TOKEN = re.compile(r"[\s\"'{}\[\](),;<>]")  # structure or prose, not one token
ID_KEY = re.compile(  # a key whose value is an identifier (clusterId, request_id, etag)
    r"(?:(?:^|[^A-Za-z])(?i:ids?|uid|uuid|guid|digest|hash|checksum|etag|fingerprint|commit"
    r"|sha\d*|revision|resourceversion)|[a-z0-9](?:Id|ID|Ids|IDs|Uid|UID))$"
)
_PIECE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
WORD_PIECE = 3.0  # mean camel-case piece length from which a token is made of words
BARE_MIN = 20  # a random token standing alone is masked from this length on
NOT_AN_ID = re.compile(r"(?i)sess|sid\b|token|secret|key|auth|pass")


def shannon(value: str) -> float:
    """Bits per character of ``value``."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


def wordlike(value: str) -> bool:
    """Made of words: alert names, class names, flags (``OrderServiceHigh5xxRate``,
    ``-XX:MaxRAMPercentage=75``, ``redis-cart:6379/Interactive``). The letters and digits
    split into camel-case pieces (``Order`` ``Service`` ``High`` ``5`` ``xx`` ``Rate``) three
    characters long or more on average; a random token's pieces average under two (one in
    a hundred random 24-character tokens reaches three)."""
    pieces = _PIECE.findall(value)
    return bool(pieces) and sum(map(len, pieces)) >= WORD_PIECE * len(pieces)


def high_entropy(value: str) -> bool:
    """A random-looking token: 16+ chars, 3 of (lower, upper, digit, +/), not hex, 3.5+ bits,
    not made of words (:func:`wordlike`) and not a file name (``jwtRS256.key.pub``)."""
    v = value.strip("=\"'")
    if len(v) < 16 or _HEXISH.fullmatch(v) or _NOT_A_TOKEN.search(v):
        return False  # too short, a hex id, words ("POST /v1/orders"), JSON or a list
    if "/" in v and not any(
        any(c.islower() for c in seg) and any(c.isupper() for c in seg) for seg in v.split("/")
    ):
        return False  # a path or object key ("uploads/2026/05/a.png"): no mixed-case segment
    if _FILE_NAME.fullmatch(v) or _PREFIXED_HEX.fullmatch(v):
        return False  # a file name, or a hex id behind a type prefix (Twilio's SM0f3a...)
    classes = sum(
        1
        for test in (str.islower, str.isupper, str.isdigit, lambda c: c in "+/")
        if any(test(c) for c in v)
    )
    if classes < 3 or shannon(v) < 3.5:
        return False
    parts = [p for p in _NAME_SEP.split(v) if p]
    if len(parts) > 1:  # a name (payments-api-PR-118-ds4t4-2jr5m, java-streams-<uuid>-...):
        return any(_random_piece(p) for p in parts)  # random only with a long random part
    return not wordlike(v)


def _random_piece(part: str) -> bool:
    """One part of a dashed or dotted token that is random on its own: 12+ characters of
    lower and upper case and digits, not hex, not words, few repeats."""
    if len(part) < 12 or _HEXISH.fullmatch(part):
        return False
    if not (any(c.islower() for c in part) and any(c.isupper() for c in part)):
        return False
    if not any(c.isdigit() or c in "+/" for c in part):
        return False
    return len(set(part)) >= 0.6 * len(part) and not wordlike(part)


def random_token(token: str) -> bool:
    """A token that is a secret by its shape alone, wherever it stands (no key names it):
    20+ characters, lower and upper case and digits (or ``+``/``/``), random-looking
    (:func:`high_entropy`). Hex of any length (trace ids, digests, UUIDs), words, paths,
    dotted or kebab-case names and pod names are not."""
    v = token.strip("=\"'")
    if len(v) < BARE_MIN or not any(c.isupper() for c in v) or not any(c.islower() for c in v):
        return False
    if not any(c.isdigit() or c in "+/" for c in v):
        return False
    return high_entropy(v)


def id_key(key: str) -> bool:
    """A key whose value is an identifier (``clusterId``, ``request_id``, ``etag``), so a
    random-looking value under it stays; a session id is a credential and does not."""
    return ID_KEY.search(key) is not None and NOT_AN_ID.search(key) is None


_IMAGE_REF = re.compile(  # registry/path/name:tag or @sha256:...
    r"[a-z0-9][\w.-]*(?::\d+)?(?:/[\w.-]+)+(?::[\w][\w.-]{0,127}|@sha256:[0-9a-f]{64})"
)
_PATH = re.compile(r"(?:/[\w.@-]+){2,}/?")


def plain_setting(value: str) -> bool:
    """A value under a secret-sounding key that is no secret: a switch (``yes``,
    ``false``), an absolute file path (``/etc/tls/tls.key``), a container image
    (``harbor.example/shop/auth:1.4.2``), a reference to a variable that holds it
    (``$(REDIS_PASSWORD)``, ``${DB_PASSWORD}``)."""
    v = value.strip().strip("\"'")
    return (
        v.lower() in _SWITCHES
        or _PATH.fullmatch(v) is not None
        or _IMAGE_REF.fullmatch(v) is not None
        or _VAR_REF.fullmatch(v) is not None
    )


# $(NAME) and ${NAME} (the closing bracket may be cut off by the pair rule), or $NAME
_VAR_REF = re.compile(r"\$(?:\([A-Za-z_]\w*\)?|\{[A-Za-z_]\w*\}?|[A-Z_][A-Z0-9_]*)")


_SWITCHES = frozenset({"true", "false", "yes", "no", "on", "off", "enabled", "disabled"})
