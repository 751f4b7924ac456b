"""The secret patterns of :mod:`opsmate.tools.redact`, and the tests behind the fuzzy ones.

Each rule is ``(compiled regex, replacement, gate)``; a replacement either masks one
group (``keep(n)``: the text around it stays) or decides per match (base64 payloads,
bare ``Basic`` credentials, values that are secret only when they look random); the
gate is a cheap search on the lower-cased text that must succeed for the rule to run.
The order of :data:`RULES` matters: specific shapes (PEM, headers, cookies, provider
tokens) run before the generic ``key=value`` rules, so a value is masked and counted once.

Key names that make a value secret (``password``, ``PGPASSWORD``, ``client_secret``,
``X-Api-Key``, ``密码`` ...) are :data:`KEY`; a key is secret when it *ends* with one of
those words, so ``password_reset_requested=true`` stays while ``DB_PASSWORD=x`` does not.
``auth``, ``credentials``, ``cookie`` and ``authorization`` also appear in prose ("it
needs credentials: run ..."), so they count in ``key=value``, ``"key": value`` and
YAML ``key: value`` lines only. A key that merely contains such a word
(``SECRET_KEY_BASE``), a signature, session or nonce-like key, or a custom header name
(``X-Acme-Sig``) hides its value only when the value looks random (:func:`high_entropy`);
hex (trace ids, git shas, UUIDs) never does.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

from opsmate.tools.redact_shapes import (
    BARE_MIN,
    ID_KEY,
    NOT_AN_ID,
    WORD_PIECE,
    high_entropy,
    id_key,
    plain_setting,
    random_token,
    shannon,
    wordlike,
)

__all__ = [  # the shape judgements are used from here too
    "BARE_MIN",
    "ID_KEY",
    "WORD_PIECE",
    "high_entropy",
    "id_key",
    "plain_setting",
    "random_token",
    "shannon",
    "wordlike",
]

MASK = "[REDACTED]"

Repl = Callable[[re.Match[str]], str]
Gate = re.Pattern[str] | None

# words a secret-bearing key may end with, glued to a prefix or not (PGPASSWORD, csrftoken)
STRONG = (
    r"passwor[dt]|passwd|passphrase|secret|token|api[_-]?key"
    r"|(?:access|secret|private|account|encryption|signing|master|client)[_-]?key"
    r"|shared[_-]?access[_-]?(?:key|signature)|x-(?:amz|goog)-signature"
    r"|密码|口令|令牌|密钥|秘钥|凭证|凭据"
)
PROSE = r"credentials?|cookie|authorization"  # glued too, but common in prose
GLUED = rf"{STRONG}|{PROSE}"
# words that only count as a whole segment of the key (auth=, x-auth:, MYSQL_PWD=; not oauth)
SEGMENT = r"pwd|auth"
KEY = rf"(?:[\w.-]*?(?:{GLUED})|(?:[\w.-]*?[_.-])?(?:{SEGMENT}))"
_KEY_STRONG = rf"(?:[\w.-]*?(?:{STRONG})|(?:[\w.-]*?[_.-])?pwd)"
_KEY_PROSE = rf"(?:[\w.-]*?(?:{PROSE})|(?:[\w.-]*?[_.-])?auth)"
# a dict key naming a secret (spaces allowed: "User Password")
SECRET_KEY_NAME = re.compile(rf"(?i)(?:[\w. -]*?(?:{GLUED})|(?:[\w. -]*?[_. -])?(?:{SEGMENT}))")
# keys whose value is hidden when it looks random
WEAK_KEY = re.compile(
    rf"(?i)(?:{GLUED}|{SEGMENT}|sig|signature|hmac|session|sid|nonce|salt|key|pass)"
)
HEADER_KEY = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+")
_Q = r"\\?[\"']"  # a quote, perhaps escaped (JSON inside a JSON string)
_SEP = r"\\?[\"']?[ \t]*[:=：][ \t]*"
_VALUE = (
    r"(?:\\\"((?:[^\"\\]|\\[^\"])*)\\\""  # \"escaped\"
    r"|\"((?:[^\"\\]|\\.)*)\""  # "double"
    r"|'([^'\n]*)'"  # 'single'
    r"|\{([^}\n]*)\}"  # {odbc}
    r"|([^\s&,;\"'}\])<>，。；、）]+))"  # bare
)
_SCHEME = re.compile(r"(?i)bearer|basic|token|apikey|digest|negotiate|ntlm|sharedkey")


def _is_masked(value: str) -> bool:
    return value in ("", MASK) or value.startswith("[REDACTED")


def keep(group: int) -> Repl:
    """A replacement that masks ``group`` and keeps the rest of the match."""

    def repl(m: re.Match[str]) -> str:
        if _is_masked(m.group(group)):
            return m.group(0)
        return m.string[m.start() : m.start(group)] + MASK + m.string[m.end(group) : m.end()]

    return repl


def _first_value(m: re.Match[str], first: int) -> int | None:
    for group in range(first, first + 5):
        if m.group(group) is not None:
            return group
    return None


def _pair(m: re.Match[str]) -> str:
    group = _first_value(m, 2)
    if group is None or (group == 6 and _SCHEME.fullmatch(m.group(group))):
        return m.group(0)  # "authorization: Bearer [REDACTED]": the scheme is not the secret
    if group == 6 and _prose(m, group):
        return m.group(0)  # "error validating token: Signature has expired"
    if plain_setting(m.group(group)):
        return m.group(0)  # ALLOW_EMPTY_PASSWORD=yes, a key file's path, an image
    return keep(group)(m)


_WORD = re.compile(r"[A-Za-z]{2,20}")
_PROSE_NEXT = re.compile(r"[ \t]+[a-z]{2,}\b(?![=:])")


def _prose(m: re.Match[str], group: int) -> bool:
    """``key: Word more words``: a sentence about the key, not its value (the value is one
    word of letters after a colon, and a lower-case word follows)."""
    sep = m.group(1).rstrip(" \t\"'\\")
    return (
        sep.endswith((":", "："))
        and _WORD.fullmatch(m.group(group)) is not None
        and _PROSE_NEXT.match(m.string, m.end()) is not None
    )


def b64_text(token: str) -> str | None:
    """The printable UTF-8 text a base64 / base64url token decodes to, else None."""
    s = token.rstrip("=")
    if len(s) % 4 == 1 or (("-" in s or "_" in s) and ("+" in s or "/" in s)):
        return None
    s = s.translate(str.maketrans("-_", "+/")) + "=" * (-len(s) % 4)
    try:
        text = base64.b64decode(s, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    if len(text) < 4 or not all(c.isprintable() or c in "\n\t\r" for c in text):
        return None
    return text


def _basic(m: re.Match[str]) -> str:
    token = m.group(2)
    decoded = b64_text(token)
    looks_random = len(token) >= 12 and any(c.isdigit() or c in "+/=" for c in token)
    if (decoded is not None and ":" in decoded) or looks_random:
        return keep(2)(m)
    return m.group(0)


def _weak_pair(m: re.Match[str]) -> str:
    key, value = m.group(1), m.group(3)
    if (WEAK_KEY.search(key) or HEADER_KEY.fullmatch(key)) and high_entropy(value):
        return keep(3)(m)
    return m.group(0)


PEM = re.compile(
    r"(-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)"
    r"[\s\S]*?"
    r"(-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"
)
AUTH_HEADER = re.compile(
    r"(?i)(\b(?:proxy-)?authorization\\?[\"']?\s*[:=]\s*\\?[\"']?"
    r"(?:bearer|basic|token|apikey|digest|negotiate|ntlm|sharedkey)\s+)"
    r"([^\s\"',;\\]+)"
)
COOKIE = re.compile(  # not a file's name: ".erlang.cookie: eacces" is an error
    r"(?i)((?<![\w./])(?:set-)?cookie\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?)"
    r"([^\s;,\"'\\]+(?:;[ \t]*[^\s;,\"'\\]+)*)"
)
BEARER = re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9\-._~+/]{8,}=*)")
BASIC = re.compile(r"(?i)(\bbasic\s+)([A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])")
JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")
URL_PASSWORD = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^/\s:@\"']*:)([^@\s/\"']+)(@)")
SAS_SIG = re.compile(r"(?i)([?&;]sig=)([^&\s\"'#]+)")
SLACK_HOOK = re.compile(r"(https://hooks\.slack\.com/services/[A-Z0-9]+/[A-Z0-9]+/)([A-Za-z0-9]+)")
AWS_ACCESS_KEY = re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b")
AWS_SECRET = re.compile(
    r"(?i)(\baws[\w .-]{0,30}?(?:secret|key)[\w .-]{0,20}?[\"']?\s*[:=]\s*[\"']?)"
    r"([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
)
PROVIDER_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_-])(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"
    r"|sk-(?:proj|svcacct|admin|ant-(?:api|admin)\d\d)-[A-Za-z0-9_-]{16,}"
    r"|sk-[A-Za-z0-9]{32,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|gl(?:pat|ptt|dt|rt|cbt|oas|soat|ffct|imt|agent)-[0-9A-Za-z_-]{20,}"
    r"|GR1348941[0-9A-Za-z_-]{20,}"
    r"|xox[baprse]-(?:[A-Za-z0-9-]|<[a-z*]+>){10,}|xapp-[A-Za-z0-9-]{10,}"  # <num>: templated
    r"|AIza[0-9A-Za-z_-]{35}|ya29\.[0-9A-Za-z_-]{20,}|GOCSPX-[0-9A-Za-z_-]{20,}"
    r"|npm_[A-Za-z0-9]{36}|hf_[A-Za-z]{30,}|pypi-AgE[A-Za-z0-9_-]{40,}"
    r"|dop_v1_[a-f0-9]{64}|hvs\.[A-Za-z0-9_-]{24,}|dapi[0-9a-f]{32}"
    r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|whsec_[A-Za-z0-9]{20,}"
    r"|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})"
)
# a value that is a known token format on its own (judged by shape under any key)
KNOWN_TOKEN = re.compile(
    rf"{PROVIDER_TOKEN.pattern}|{JWT.pattern}|{AWS_ACCESS_KEY.pattern}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
)
ENV_JSON = re.compile(
    rf"(?i)({_Q}name{_Q}[ \t]*:[ \t]*{_Q}{KEY}{_Q}[ \t]*,[ \t]*{_Q}value{_Q}[ \t]*:[ \t]*{_Q})"
    r"((?:[^\"'\\]|\\[^\"'])+)"
)
ENV_YAML = re.compile(
    rf"(?im)(^[ \t]*-?[ \t]*name:[ \t]*[\"']?{KEY}[\"']?[ \t]*\n[ \t]*value:[ \t]*[\"']?)"
    r"([^\s\"'][^\n\"']*)"
)
# key=value, key: value, "key": "value" for the strong words
PAIR = re.compile(rf"(?i)(?<![\w.-])({_KEY_STRONG}{_SEP}){_VALUE}")
# the prose-prone words: key=value, "key": value, and YAML "key: value" at a line start
PAIR_PROSE = re.compile(
    rf"(?im)((?:(?<![\w.-]){_KEY_PROSE}[ \t]*=[ \t]*"
    rf"|(?<=[\"']){_KEY_PROSE}\\?[\"'][ \t]*[:=：][ \t]*"
    rf"|^[ \t]*-?[ \t]*{_KEY_PROSE}[ \t]*[:：][ \t]*)){_VALUE}"
)
CLI_FLAG = re.compile(
    r"(?i)((?<![\w-])--?(?:[a-z0-9]+-)*(?:password|passwd|pwd|secret|token|api-?key|access-key"
    r"|secret-key|requirepass|masterauth)(?:[ \t]+|=))([^\s\"'-][^\s\"']*|\"[^\"]*\"|'[^']*')"
)
CLI_TOOLS = re.compile(
    r"(\bmysql(?:dump|admin|sh)?\b[^\n]*?\s-p)([^\s-][^\s]*)"
    r"|(\bredis-cli\b[^\n]*?\s-a[ \t]+)(\S+)"
    r"|(?i:(\b(?:sqlplus|rman|expdp|impdp|sqlldr|dgmgrl)(?:[ \t]+-\w+)*[ \t]+[^\s/@]+/)"
    r"([^\s@\"']+))"
    r"|(?i:(jdbc:oracle:\w+:[^\s/@:]+/)([^\s@\"']+)(?=@))"
    r"|(?i:(\bmachine\s+\S+\s+login\s+\S+\s+password\s+)(\S+))"
    r"|(?im:(^[ \t]*(?:requirepass|masterauth)[ \t]+)(\S+))"
)
WEAK_PAIR = re.compile(
    r"(?<![\w.-])([A-Za-z_][\w.-]{0,60})(\\?[\"']?[ \t]*[:=：][ \t]*\\?[\"']?)"
    r"([A-Za-z0-9+/_=.~-]{16,})"
)
B64_TOKEN = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{12,}={0,2}(?![A-Za-z0-9+/=_-])")
# the words just before a token that make it an identifier: ``clusterId: ...``,
# ``request id ...``, ``"_id": "..."``, ``etag ...`` (a session id is a credential)
_ID_BEFORE = re.compile(
    r"(?i)(?<![a-z])(?!session|sess|sid\b)([a-z]*[_.-]?(?:id|ids|uid|uuid|guid)"
    r"|digest|hash|checksum|etag|fingerprint|commit|sha\d*|revision)"
    r"\\?[\"']?[ \t]*[:=]?[ \t]*\\?[\"']?$"
)
_PATH_WORD = re.compile(r"[a-z]{2,}|v\d+|\d+")  # api, send, v1, 2026: a path, not base64
_DOTTED_NEXT = re.compile(r"\.\w")
_PEM_ANY = re.compile(r"-----(BEGIN|END) ([A-Z0-9 ]+)-----")


def _in_public_pem(text: str, pos: int) -> bool:
    """Whether ``pos`` lies inside a certificate or public key block (not secret)."""
    last = None
    for m in _PEM_ANY.finditer(text, 0, pos):
        last = m
    return last is not None and last.group(1) == "BEGIN" and "PRIVATE" not in last.group(2)


def bare_secret(m: re.Match[str]) -> str | None:
    """The masked form of a token standing alone in text (a :data:`B64_TOKEN` match) that
    is a secret by its shape (:func:`random_token`), else None. A piece of a dotted name
    (``io.grpc.Token``) is not judged; a path (``/hooks/T0/q8Zr...``) loses only its random
    segments, base64 with slashes in it goes whole; the token stays when the words before
    it call it an id, when it is a line of a certificate, or when it is base64 of readable
    text (then the base64 rule reads what it says)."""
    token = m.group(0)
    if len(token) < BARE_MIN:
        return None
    text, start, end = m.string, m.start(), m.end()
    parts = token.split("/")
    path = len(parts) > 1 and any(_PATH_WORD.fullmatch(p) for p in parts)
    if path:
        secret = [random_token(p) for p in parts]
        if not any(secret):
            return None
    elif (start and text[start - 1] == ".") or _DOTTED_NEXT.match(text, end):
        return None  # a part of a dotted name
    elif not random_token(token) or b64_text(token) is not None:
        return None
    before = text[max(0, start - 40) : start]
    if _ID_BEFORE.search(before) and not NOT_AN_ID.search(before[-24:]):
        return None
    if "-----BEGIN" in text and _in_public_pem(text, start):
        return None
    if path:
        return "/".join(MASK if s else p for p, s in zip(parts, secret, strict=True))
    return MASK


def _cli_tools(m: re.Match[str]) -> str:
    for group in range(2, (m.re.groups or 0) + 1, 2):
        if m.group(group) is not None:
            return keep(group)(m)
    return m.group(0)  # pragma: no cover - one alternative always matches


def _pem(m: re.Match[str]) -> str:
    return f"{m.group(1)}{MASK}{m.group(2)}"


def _gate(*words: str) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(w) for w in words))


# words one of which a text must contain (lower-cased) for a key-based rule to match at all
_KEY_WORDS = (
    "pass", "pwd", "secret", "token", "key", "credential", "cookie", "auth", "sig",
    "密码", "口令", "令牌", "密钥", "秘钥", "凭证", "凭据",
)  # fmt: skip
_WEAK_WORDS = (*_KEY_WORDS, "-", "hmac", "session", "sid", "nonce", "salt")
_CLI_WORDS = (
    "mysql", "redis-cli", "sqlplus", "rman", "expdp", "impdp", "sqlldr", "dgmgrl",
    "jdbc:oracle", "machine", "requirepass", "masterauth",
)  # fmt: skip

# the fixed rules, in order; a base64 pass (which needs the whole redactor) runs after them
# and masks random tokens standing alone (:func:`bare_secret`) in the same scan
RULES: list[tuple[re.Pattern[str], Repl | str, Gate]] = [
    (PEM, _pem, _gate("private key")),
    (AUTH_HEADER, keep(2), _gate("authorization")),
    (COOKIE, keep(2), _gate("cookie")),
    (JWT, MASK, _gate("eyj")),
    (BEARER, keep(2), _gate("bearer")),
    (BASIC, _basic, _gate("basic")),
    (URL_PASSWORD, keep(2), _gate("://")),
    (SAS_SIG, keep(2), _gate("sig=")),
    (SLACK_HOOK, keep(2), _gate("hooks.slack.com")),
    (AWS_ACCESS_KEY, MASK, _gate("akia", "asia", "agpa", "aida", "aroa", "anpa")),
    (AWS_SECRET, keep(2), _gate("aws")),
    (PROVIDER_TOKEN, MASK, None),
    (ENV_JSON, keep(2), _gate("value")),
    (ENV_YAML, keep(2), _gate("value")),
    (PAIR, _pair, _gate(*_KEY_WORDS)),
    (PAIR_PROSE, _pair, _gate("credential", "cookie", "auth")),
    (CLI_FLAG, keep(2), _gate(*_KEY_WORDS)),
    (CLI_TOOLS, _cli_tools, _gate(*_CLI_WORDS)),
    (WEAK_PAIR, _weak_pair, _gate(*_WEAK_WORDS)),
]
