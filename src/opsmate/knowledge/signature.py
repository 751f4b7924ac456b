"""What a question says besides its topic: an error signature, time, version, identifiers.

Used by :mod:`.query` before retrieval.

- :func:`extract_signature`: from a pasted log line, error message or stack trace, the
  exception type (``java.net.UnknownHostException`` -> ``UnknownHostException``), error
  codes (``SQLSTATE 55P03``, ``ORA-00054``, ``exit code 137``, ``HTTP 503``, ``ENOSPC``)
  and the message *template*: the message with timestamps, ids, addresses, pod hashes and
  numbers replaced by ``<*>``, so ``lookup orders-db on 10.96.0.10:53: no such host`` and
  the runbook's copy of it meet on their words, not on an IP address.
- :func:`extract_times` / :func:`extract_version`: phrases such as ``since 10:00``,
  ``this morning``, ``昨天``, and versions such as ``3.15.0`` or ``the old 1.0 version``.
  They become ranking hints and are removed from the searched text: a runbook never
  mentions when an incident happened.
- :func:`split_identifier`: ``KubePodCrashLooping`` -> ``Kube Pod Crash Looping``,
  ``lock_not_available`` -> ``lock not available`` (for the embedding model and the
  glossary, which do not understand run-together words).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PLACEHOLDER = "<*>"

_EXC_SUFFIX = (
    "Error|Exception|Timeout|Failure|Fault|Refused|NotFound|Unavailable|Denied|Expired|"
    "Invalid|Canceled|Cancelled|Detected|NotAvailable|Exceeded"
)
_EXCEPTION_RE = re.compile(
    rf"\b((?:[a-z_][a-z0-9_]*\.)+)?([A-Z][A-Za-z0-9]*?(?:{_EXC_SUFFIX}))\b(?=[:(\s,.;]|$)"
)
_TRACEBACK_LAST_RE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Timeout|\w+)):\s", re.M)
_CODE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bSQLSTATE[\s:=]*([0-9A-Z]{5})\b"), "SQLSTATE {}"),
    (re.compile(r"\b((?:ORA|PLS|TNS)-\d{5})\b"), "{}"),
    (re.compile(r"\bERROR (\d{4}) \(\w+\)"), "MySQL {}"),
    (re.compile(r"\bexit(?:ed)?(?: with)?(?: status| code)[\s:=]*(\d{1,3})\b", re.I),
     "exit code {}"),
    (re.compile(r"\[Errno (-?\d+)\]"), "errno {}"),
    (re.compile(r"\b(E(?:NOSPC|CONNREFUSED|CONNRESET|TIMEDOUT|ACCES|PERM|NOENT|MFILE|NFILE|"
                r"ADDRINUSE|PIPE|HOSTUNREACH|NETUNREACH|NOMEM|AGAIN|DQUOT|ROFS))\b"), "{}"),
    (re.compile(r"\bcode = ([A-Z][A-Za-z]+)\b"), "grpc {}"),
)  # fmt: skip
_HTTP_RE = re.compile(
    r"(?:\bHTTP(?:/\d(?:\.\d)?)?\s*|\bstatus(?:\s*code)?[\s:=]*)([1-5]\d\d)\b"
    r"|(?<![\w.:/=-])(?<!exit code )(?<!exit status )([45]\d\d)(?![\w.:%/-])",
    re.I,
)
_LOG_MARKERS_RE = re.compile(
    r"Traceback \(most recent call last\)|^\s+at [\w.$]+\(|\b(?:FATAL|PANIC|ERROR|WARN(?:ING)?"
    r"|CRITICAL)\b[:\s]|^\s*\[?\d{4}-\d\d-\d\dT?|^\s*(?:E|W|I)\d{4} |level=(?:error|warn)"
    r"|^\s*(?:Error|Fatal|panic|Exception|Caused by):\s",
    re.M,
)
# noise to template away, most specific first
_NOISE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\[(?:FIRING|RESOLVED)(?::\d+)?\]", re.I), " "),
    (re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?"), " "),
    (re.compile(r"\b\d{4}-\d\d-\d\d\b"), " "),
    (re.compile(r"\b\d\d:\d\d:\d\d(?:[.,]\d+)?\b"), " "),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<*>"),
    (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?(?:->(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?)?"),
     "<*>"),
    (re.compile(r"\bip-\d+-\d+-\d+-\d+\b"), "<*>"),
    (re.compile(r"\b([a-z][a-z0-9-]*?)-[a-f0-9]{8,10}-[a-z0-9]{5}\b"), r"\1-<*>"),
    (re.compile(r"\b0x[0-9a-f]+\b|\b[0-9a-f]{12,}\b", re.I), "<*>"),
    (re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:[KMG]i?B?|ms|s|m|h|%)?(?![\w.])"), "<*>"),
)  # fmt: skip
_PLACEHOLDER_RUN_RE = re.compile(r"(?:<\*>[\s,:;/.-]*){2,}")

_CAMEL_SPLIT_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_IDENT_RE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b|\b[A-Za-z]+[a-z0-9][A-Z]\w*\b")

_TIME_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"\b(?:since|at|after|before|around|from|until|about)\s+(?:the\s+)?"
               r"\d{1,2}(?::\d\d)?\s*(?:am|pm)?(?:\s+(?:release|deploy|deployment))?\b", re.I),
    re.compile(r"(?<![\d.:T-])\d{1,2}:\d\d(?![\d:.])\s*(?:am|pm|utc)?\b", re.I),
    re.compile(r"\b\d+\s*(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?)\s+ago\b",
               re.I),
    re.compile(r"\b(?:last|past|previous)\s+(?:\d+\s+)?(?:night|week|hour|hours|minutes|"
               r"days|day|month)\b", re.I),
    re.compile(r"\b(?:since\s+)?(?:this|yesterday)\s+(?:morning|afternoon|evening|night)\b",
               re.I),
    re.compile(r"\bsince\s+(?:lunch(?:time)?|yesterday|today|monday|tuesday|wednesday|"
               r"thursday|friday|saturday|sunday|the weekend)\b", re.I),
    re.compile(r"\b(?:yesterday|today|tonight|overnight)\b", re.I),
    re.compile(r"(?<![\w-])-\d+[smhd]\b"),
    re.compile(r"昨天|前天|今天|今早|今晚|昨晚|刚才|刚刚|凌晨|上午|下午|晚上|早上|中午|半夜|"
               r"\d{1,2}\s*点(?:\s*\d{1,2}\s*分|半)?|\d+\s*(?:分钟|小时|天)(?:前|之前|以来)"),
)  # fmt: skip
_VERSION_RE = re.compile(
    r"(?:\b(?:version|release|rev(?:ision)?|v)\s*|版本\s*|\bv)(\d+(?:\.\d+){1,2})\b"
    r"|\b(\d+\.\d+(?:\.\d+)?)\s*(?:version|release|版本|版)"
    r"|(?<![\w.])(\d+\.\d+\.\d+)(?![\w.])",
    re.I,
)
_OLD_RE = re.compile(
    r"\b(?:old(?:er)?|previous|former|deprecated|outdated|legacy|superseded)\s+"
    r"(?:\d+(?:\.\d+)*\s+)?(?:version|runbook|page|doc|one|release)\b|旧版|老版|旧的|之前的版本|"
    r"上一版|以前的版本|过时",
    re.I,
)


@dataclass
class ErrorSignature:
    """The parts of a pasted error that identify it, without its ids and numbers."""

    exception: str | None = None  # short type name
    qualified: str | None = None  # with its module / package, when given
    codes: list[str] = field(default_factory=list)
    template: str = ""  # the message with ids and numbers as <*>
    is_log: bool = False  # the text looked like a log line or stack trace

    def search_text(self) -> str:
        """What to search for: type, codes and the template's words (no placeholders)."""
        template = self.template.replace(PLACEHOLDER, " ")
        parts = [p for p in (self.qualified or self.exception, *self.codes) if p]
        parts = [p for p in parts if p not in template]
        return " ".join(" ".join([*parts, template]).split())

    def to_json(self) -> dict[str, object]:
        return {
            "exception": self.exception,
            "qualified": self.qualified,
            "codes": self.codes,
            "template": self.template,
        }


def scrub_ids(text: str) -> str:
    """``text`` without timestamps, UUIDs, IP addresses, node and pod-hash ids (numbers kept).

    For questions that are not log lines: a pasted address or pod name only adds words no
    runbook contains.
    """
    out = text
    for pattern, repl in _NOISE[:-1]:
        out = pattern.sub(repl.replace(PLACEHOLDER, " "), out)
    return " ".join(out.split())


def template_of(message: str) -> str:
    """``message`` with timestamps, ids, addresses, hashes and numbers replaced by ``<*>``."""
    out = message
    for pattern, repl in _NOISE:
        out = pattern.sub(repl, out)
    out = _PLACEHOLDER_RUN_RE.sub(PLACEHOLDER + " ", out)
    return " ".join(out.split())


def _codes(text: str) -> list[str]:
    codes: list[str] = []
    for pattern, fmt in _CODE_PATTERNS:
        for m in pattern.finditer(text):
            codes.append(fmt.format(m.group(1)))
    for m in _HTTP_RE.finditer(text):
        code = m.group(1) or m.group(2)
        if code:
            codes.append(f"HTTP {code}")
    return list(dict.fromkeys(codes))


def _message_part(text: str) -> str:
    """The line that carries the error: a traceback's last exception line, else the text."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if len(lines) > 1:
        for ln in reversed(lines):
            if _TRACEBACK_LAST_RE.match(ln.strip()) or _EXCEPTION_RE.search(ln):
                return ln.strip()
        return lines[-1].strip()
    return text.strip()


def extract_signature(text: str) -> ErrorSignature | None:
    """The error signature of ``text``, or None when it carries no exception, code or log line."""
    is_log = bool(_LOG_MARKERS_RE.search(text))
    message = _message_part(text)
    exc = _EXCEPTION_RE.search(message) or _EXCEPTION_RE.search(text)
    codes = _codes(text)
    if exc is None and not codes and not is_log:
        return None
    sig = ErrorSignature(codes=codes, is_log=is_log)
    if exc is not None:
        sig.exception = exc.group(2)
        if exc.group(1):
            sig.qualified = exc.group(1) + exc.group(2)
    sig.template = template_of(message)
    return sig


def split_camel(text: str) -> str:
    """``text`` with a space at every camelCase boundary (``OrderService`` -> ``Order Service``)."""
    return _CAMEL_SPLIT_RE.sub(" ", text)


def split_identifier(word: str) -> str:
    """``KubePodCrashLooping`` -> ``Kube Pod Crash Looping``; ``max_connections`` likewise."""
    parts = [p for p in re.split(r"[_]+", word) if p]
    out: list[str] = []
    for p in parts:
        out.extend(s for s in _CAMEL_SPLIT_RE.split(p) if s)
    return " ".join(out)


def split_identifiers(text: str) -> list[tuple[str, str]]:
    """(identifier, its words) for every CamelCase or snake_case identifier in ``text``."""
    found: list[tuple[str, str]] = []
    for m in _IDENT_RE.finditer(text):
        word = m.group(0)
        split = split_identifier(word)
        if split != word and len(split.split()) > 1:
            found.append((word, split))
    return list(dict.fromkeys(found))


def extract_times(text: str) -> list[str]:
    """Time phrases of ``text`` (``since 10:00``, ``2 hours ago``, ``昨天``), in order."""
    spans: list[tuple[int, int]] = []
    for pattern in _TIME_RES:
        for m in pattern.finditer(text):
            if not any(s <= m.start() < e or s < m.end() <= e for s, e in spans):
                spans.append((m.start(), m.end()))
    return [text[s:e].strip() for s, e in sorted(spans)]


def extract_version(text: str) -> tuple[str | None, bool]:
    """(the version a question names, whether it asks about an old/previous one)."""
    version = None
    for m in _VERSION_RE.finditer(text):
        v = m.group(1) or m.group(2) or m.group(3)
        if v and not re.fullmatch(r"\d+\.\d+\.\d+\.\d+", v):
            version = v
            break
    return version, bool(_OLD_RE.search(text))


def remove_phrases(text: str, phrases: list[str]) -> str:
    """``text`` without the given phrases (whitespace collapsed)."""
    for p in phrases:
        text = text.replace(p, " ")
    return " ".join(text.split())
