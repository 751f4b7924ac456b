"""What a log message says about the system: a dependency failing, a configuration error,
an exhausted resource, a change.

:func:`classify` reads one message (and its error field) and returns a :class:`Signal`
with a kind and what it names: the dependency (a host, a host:port, a URL's host, a
service that answered 5xx), the configuration key or environment variable, the
resource. These are shapes of messages written by many programs (curl, wget, Go's
net package, JDBC drivers, Python requests, Node), never the text of one incident.
The log tools attach the signal to each template in ``log_stats`` and the engine's
log analyzers turn it into facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Signal", "classify", "dependency_targets", "hosts_in"]


@dataclass(frozen=True)
class Signal:
    """``kind``: dependency | config | saturation | change | None; ``targets``: the
    dependencies / keys / resources named (most specific first); ``reason``: a short
    machine reason (dns, refused, timeout, unavailable, undefined_env, missing_key,
    invalid_value, certificate, pool_exhausted, out_of_memory, config_reload ...)."""

    kind: str | None = None
    reason: str | None = None
    targets: tuple[str, ...] = field(default_factory=tuple)


_I = re.I

# -- dependencies ------------------------------------------------------------------------
_DNS = re.compile(
    r"could ?n[o']t resolve(?: host(?:name)?)?|unknown host|no such host|name or service not "
    r"known|temporary failure in name resolution|nxdomain|getaddrinfo \w+|name resolution|"
    r"unable to resolve|failed to resolve|dns (?:lookup|resolution) failed|UnknownHostException",
    _I,
)
_REFUSED = re.compile(r"connection refused|econnrefused|ConnectException|actively refused", _I)
_TIMEOUT = re.compile(
    r"timed? ?out|timeout|etimedout|deadline exceeded|not responding|no response from", _I
)
_CONN_FAIL = re.compile(
    r"(?:can(?:no|')?t|could ?n[o']t|unable to|failed to|fails? to|error) "
    r"(?:connect|establish (?:a )?connection|reach|open (?:a )?connection)|"
    r"connection (?:to \S+ )?(?:failed|failure|error|reset|closed|lost|aborted)|"
    r"lost connection|connection reset|econnreset|no route to host|host unreachable|"
    r"network (?:is )?unreachable|\bunreachable\b|broken pipe|all host\(s\) tried|"
    r"upstream connect error|(?:connection|session)[^.\n]{0,60}could not be established|"
    r"(?:broker|server|node|host)s? may not be available|"
    r"dial tcp|connect: |server closed the connection|could not connect|"
    r"\bconnect timed out|\bconnect timeout|ConnectTimeout|"
    r"(?:service|server|upstream|backend|dependency) (?:is )?unavailable|"
    r"(?:returned|responded with|answered) (?:http |status )?5\d\d|bad gateway|"
    r"service unavailable|gateway timeout|"
    # a replicated store that has too few live replicas to answer (quorum lost)
    r"cannot achieve consistency level|not enough (?:replicas|nodes)|NoHostAvailable|"
    r"UnavailableException|NotEnoughReplicas|no (?:reachable|available) (?:servers|hosts|replicas)|"
    r"quorum (?:lost|not (?:available|reached))",
    _I,
)
# a client naming what did not answer ("smiley timed out after 1000ms"); not the operation
# itself that timed out ("the job timed out after 30s")
_TIMED_OUT_AFTER = re.compile(
    r"\b(?!(?:job|request|call|query|operation|task|connection|read|write|transaction|statement"
    r"|lock|context|handshake|session|probe|command|process|test|step|wait|poll|it|this|that"
    r"|which|and|has|have|had|was|been)\b)"
    r"(?P<h>[a-z][\w.\-]{2,}) (?:call |request )?timed out after \d",
    _I,
)
_TARGET_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(
        r"resolve(?: host(?:name)?)?:?\s+['\"`]?(?P<h>[\w][\w.\-]*\.[\w\-]+|[\w][\w\-]+)", _I
    ),
    re.compile(r"lookup\s+(?P<h>[\w][\w.\-]*)", _I),
    # Node.js: "getaddrinfo EAI_AGAIN redis-master", "connect ECONNREFUSED 10.0.0.7:6379"
    re.compile(r"getaddrinfo\s+(?:EAI_AGAIN|ENOTFOUND|EAI_NONAME|EAI_FAIL)\s+(?P<h>[\w][\w.\-]*)"),
    re.compile(
        r"\b(?:ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH|ECONNRESET|ENETUNREACH)\s+"
        r"(?P<h>[\w][\w.\-]*):(?P<port>\d{2,5})\b"
    ),
    re.compile(r"tried:\s*(?P<h>[\w][\w.\-]*(?::\d{1,5})?)", _I),
    # gRPC's resolved addresses: "ipv4:10.96.1.2:8080", "ipv6:[fd00::1]:8080"
    re.compile(r"\bipv[46]:\[?(?P<h>[\d.]+|[0-9a-f:]+)\]?:(?P<port>\d{2,5})\b", _I),
    re.compile(r"https?://(?P<h>[\w][\w.\-]*(?::\d{1,5})?)", _I),
    re.compile(r"(?P<h>[A-Za-z][\w\-]*(?:\.[\w\-]+)*):(?P<port>\d{2,5})\b"),
    re.compile(r"\bhost[=:]\s*['\"]?(?P<h>[\w][\w.\-]*)", _I),
    re.compile(
        r"(?P<h>[\w][\w.\-]*) (?:returned|responded with|answered) (?:http |status )?[45]\d\d", _I
    ),
    re.compile(
        r"(?:connect(?:ing|ion)?|reach|dial(?: tcp)?|talk(?:ing)?) (?:to|with)\s+"
        r"['\"`]?(?P<h>[\w][\w.\-]*)",
        _I,
    ),
    re.compile(r"remote host \(?(?P<h>[\w][\w.\-:]*)", _I),
    _TIMED_OUT_AFTER,
)
_NOT_NAMES = frozenset(
    {
        "the", "a", "an", "remote", "host", "server", "service", "it", "this", "that",
        "localhost", "required", "upstream", "destination", "endpoint", "peer", "target",
        "api", "http", "https", "tcp", "udp", "port", "external", "internal", "any", "all",
        "some", "one", "connection", "error", "failed", "unknown", "timeout", "none", "null",
    }
)  # fmt: skip  # generic words are kept in statements, never made objects of their own


_TIMEISH = re.compile(r"[A-Za-z]\d+")


def _specificity(name: str) -> int:
    if ":" in name:
        return 0  # host:port
    if "." in name:
        return 1  # a DNS name or an address
    if "-" in name or "_" in name or any(c.isdigit() for c in name):
        return 2  # a service name (redis-master, db01)
    return 3  # a plain word (Redis, database)


SOURCE_FILE = re.compile(
    r"\.(?:go|py|java|kt|scala|js|mjs|ts|rb|rs|c|cc|cpp|h|hpp|cs|php|ex|exs|erl|swift|lua|pl"
    r"|sh)$",
    re.I,
)  # "reflector.go:232", "read.lua:64": a source file and line, not a host and port


# a Java class and line as log4j writes them ("(org.apache.kafka.connect.runtime.WorkerTask:234)"):
# a package path ending in a capitalised class name, not a host and port
_CLASS_LINE = re.compile(r"\b((?:[a-z_][a-z0-9_]*\.){2,}[A-Z][A-Za-z0-9_$]*):\d+")


def class_lines(text: str) -> set[str]:
    """The Java classes (lower-cased) that ``text`` names with a line number."""
    return {m.group(1).lower() for m in _CLASS_LINE.finditer(text)} if ":" in text else set()


def hosts_in(text: str) -> list[str]:
    """Dependencies named in ``text`` (host:port, URL hosts, ``connect to X``, ``host: X``
    ...), most specific first, generic words left out."""
    return sorted(_hosts_in(text), key=_specificity)


# nginx's error log ends with the request's Host header (``host: "web:8080"``): the server
# itself, not what it failed to reach (that is ``upstream: "http://..."``)
_NGINX_HOST_HEADER = re.compile(r',\s*host:\s*"[^"]*"')


# text that names a place but no dependency: a Node.js core-module frame
# (``node:dns:120:26``, ``node:internal/net:1``) and a link to documentation
# (``More info: http://pris.ly/d/...``, ``see https://...``)
_NOT_A_TARGET = re.compile(
    r"\bnode:[\w/]+(?::\d+)+"
    r"|\b(?:more info(?:rmation)?|see|docs?|documentation|details|read more|learn more|"
    r"for more (?:info(?:rmation)?|details))\b[:\s]+(?:at\s+|on\s+)?https?://\S+",
    re.I,
)


def _hosts_in(text: str) -> list[str]:
    out: list[str] = []
    if "client: " in text and "request: " in text:
        text = _NGINX_HOST_HEADER.sub("", text)
    text = _NOT_A_TARGET.sub(" ", text)
    classes = class_lines(text)
    for pat in _TARGET_PATTERNS:
        for m in pat.finditer(text):
            h = m.group("h").strip(".:'\"`()")
            port = m.groupdict().get("port")
            if port and h.lower() in ("http", "https", "tcp", "port", "line", "ipv4", "ipv6"):
                continue
            name = f"{h}:{port}" if port else h
            base = h.lower()
            if not h or base in _NOT_NAMES or base.isdigit() or len(h) < 2:
                continue
            if _TIMEISH.fullmatch(h):  # "T11:55" of a timestamp, "v2", "E1120"
                continue
            if SOURCE_FILE.search(h):  # "reflector.go:232": a source line, not a host
                continue
            if port and "_" in h:  # "log_response:241": a function and its line (a host
                continue  # name has no underscore)
            if port and base in classes:  # "org.apache.x.WorkerTask:234": log4j's class
                continue  # and line
            if name not in out:
                out.append(name)
    return out


def dependency_targets(text: str) -> list[str]:
    """Like :func:`hosts_in`, with ``host:port`` and the bare host both kept once."""
    out: list[str] = []
    for h in hosts_in(text):
        if h not in out:
            out.append(h)
    return out


# -- configuration -----------------------------------------------------------------------
_ENV_KEY = r"['\"`$]?(?P<k>[A-Za-z_][A-Za-z0-9_]*)['\"`]?"
_CONFIG_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"(?:environment variable|env(?:ironment)? var(?:iable)?|env)\s*:?\s*"
            + _ENV_KEY
            + r"\s+(?:is\s+|was\s+)?(?:not set|unset|undefined|missing|required|not defined|"
            r"empty|must be set|not provided|not found)",
            _I,
        ),
        "undefined_env",
    ),
    (
        re.compile(
            r"(?:missing|undefined|unset|required|no)\s+(?:required\s+)?(?:environment variable|"
            r"env(?:ironment)? var(?:iable)?)s?\s*:?\s*" + _ENV_KEY,
            _I,
        ),
        "undefined_env",
    ),
    (
        re.compile(
            r"\b(?P<k>[A-Z][A-Z0-9]*_[A-Z0-9_]+)\s+(?:is\s+)?(?:not set|unset|undefined|"
            r"missing|required|must be set|not defined)\b"
        ),
        "undefined_env",
    ),
    # a KeyError is a missing setting when the key is written as one (``DATABASE_URL``) or
    # read from the environment or a config; a data key ('the_widget', an id) is a lookup
    # of data that failed, not configuration
    (re.compile(r"KeyError: ['\"](?P<k>[A-Z][A-Z0-9_]*)['\"]"), "missing_key"),
    (
        re.compile(
            r"(?:environ|config|conf|settings|cfg)\w*\s*\[\s*['\"][\w.\-]+['\"]\s*\]"
            r"[\s\S]*?KeyError: ['\"](?P<k>[\w.\-]+)['\"]",
            _I,
        ),
        "missing_key",
    ),
    (
        re.compile(
            r"(?:missing|undefined|unknown|required|no)\s+(?:config(?:uration)?\s+)?"
            r"(?:key|setting|option|property|parameter|field|value)s?\s*:?\s*['\"`]?(?P<k>[\w.\-]+)",
            _I,
        ),
        "missing_key",
    ),
    (
        re.compile(
            r"invalid (?:value|setting|config(?:uration)?|option|format|port|url|number)"
            r"(?: for| of| in)?\s*:?\s*['\"`]?(?P<k>[\w.\-]+)",
            _I,
        ),
        "invalid_value",
    ),
    (
        re.compile(
            r"['\"`]?(?P<k>[\w.\-]+)['\"`]? (?:must be|should be) (?:a |an |one of|set)", _I
        ),
        "invalid_value",
    ),
    (
        re.compile(
            r"(?:failed to|could not|cannot|unable to) (?:load|parse|read|find|open) "
            r"(?:the )?config(?:uration)?(?: file)?\s*:?\s*['\"`]?(?P<k>[\w./\-]*)",
            _I,
        ),
        "config_file",
    ),
    (
        re.compile(
            r"wrong version number|gave HTTP response to HTTPS client|first record does not "
            r"look like a TLS handshake|(?:sent an|plain) HTTP request (?:was sent )?to (?:an )?"
            r"HTTPS|tls: (?:oversized record|first record)|SSL routines[^\n]{0,40}unknown protocol",
            _I,
        ),
        "protocol_mismatch",
    ),
    (
        # a certificate or a token whose validity starts later than the reader's clock says
        # (Go's x509 "current time X is before Y", the JWT libraries' not-before / issued-at
        # checks): one of the two clocks is off
        re.compile(
            r"current time \S+ is before|token is not yet valid|Token used before issued"
            r"|\bjwt not active\b|ImmatureSignatureError|SecurityTokenNotYetValidException"
            r"|\bIDX10222\b",
            _I,
        ),
        "not_yet_valid",
    ),
    (
        re.compile(
            r"(?:ssl |tls |x509: )?certificate (?:has )?(?:expired|is not yet valid|"
            r"verify failed|signed by unknown)|cert(?:ificate)? expired"
            # the platforms' own words for a certificate outside its validity: .NET's chain
            # status, Node's error code, Java's exception
            r"|certificate chain: NotTimeValid|\bCERT_HAS_EXPIRED\b|CertificateExpiredException",
            _I,
        ),
        "certificate",
    ),
    (
        re.compile(r"(?:permission denied|access denied)[^\n]{0,40}?(?P<k>/[\w./\-]+)", _I),
        "permission",
    ),
)

# -- settings that say where a dependency is ---------------------------------------------
# the name of a setting (an env variable, a ConfigMap key) that holds an address
ADDRESS_SETTING = re.compile(
    r"(?:HOST|HOSTNAME|ADDR|ADDRESS|URL|URI|ENDPOINT|SERVER|SERVERS|SERVICE|DSN|BROKER|BROKERS"
    r"|UPSTREAM|BACKEND|TARGET)S?$",
    re.I,
)
# settings whose name ends like an address but whose value is the workload's own name in
# telemetry (Datadog's unified service tagging): never a host to resolve
SERVICE_NAME_SETTINGS = frozenset({"DD_SERVICE", "DD_ENV", "DD_VERSION"})
# values such a setting may take that name no host: a switch ("SYSLOG_HOSTNAME=false"), a
# placeholder, the pod itself
NOT_A_HOST = frozenset(
    {"true", "false", "yes", "no", "on", "off", "enabled", "disabled", "none", "null", "nil",
     "localhost", "auto", "default", "unset",
     # a backend's kind, not its address ("STORAGE_BACKEND=s3", "CACHE_BACKEND=memory")
     "s3", "gcs", "azure", "local", "memory", "inmemory", "in-memory", "disk", "file",
     "filesystem", "fs", "builtin", "noop"}
)  # fmt: skip

# -- saturation --------------------------------------------------------------------------
_SATURATION: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        # no thread or process can be started: a PID / thread limit, whatever the runtime calls
        # it (Java reports it as an OutOfMemoryError)
        re.compile(
            r"unable to create (?:new )?native thread|pthread_create failed|cannot allocate thread"
            r"|fork: (?:retry: )?Resource temporarily unavailable",
            _I,
        ),
        "pids_exhausted",
    ),
    (
        # the kernel's connection-tracking table is full: the node drops new connections
        re.compile(
            r"nf_conntrack: table full|conntrack table (?:is )?full|"
            r"nf_conntrack[^\n]{0,40}dropping packet",
            _I,
        ),
        "conntrack_full",
    ),
    (
        # the kernel's inotify watch / instance limit (fs.inotify.max_user_watches): file
        # watchers cannot start, changes are noticed only at the next full scan. Its ENOSPC
        # ("no space left on device" from inotify_add_watch) is not the disk's
        re.compile(
            r"inotify (?:limits?|watch(?:es)? limit|instances? limit)|inotify_add_watch|"
            r"inotify handler|max_user_(?:watches|instances)|file watchers reached|"
            r"inotify[^\n]{0,40}(?:too many|no space left)",
            _I,
        ),
        "inotify_exhausted",
    ),
    (
        # /dev/shm full (its "No space left on device" is not the disk's)
        re.compile(r"shared memory segment|/dev/shm|shm_open", _I),
        "shm_exhausted",
    ),
    (
        re.compile(
            r"OutOfMemory|out of memory|heap space|memory exhausted|oom[- ]?kill|"
            r"cannot allocate memory|memory limit",
            _I,
        ),
        "out_of_memory",
    ),
    (
        re.compile(
            r"pool (?:is )?(?:exhausted|full|empty|timeout)|PoolExhausted|"
            r"PoolTimeout|(?:acquir(?:e|ing)|obtain(?:ing)?|get(?:ting)?|fetch(?:ing)?|"
            r"borrow(?:ing)?) (?:a )?(?:\w+ )?"
            r"connection (?:from|in) (?:the )?(?:\w+ )?pool|"
            r"connection pool (?:is )?(?:exhausted|full|timeout|timed out)|"
            # HikariCP: "HikariPool-1 - Connection is not available, request timed out after"
            r"Connection is not available, request timed out|"
            # Agroal (Quarkus), Sequelize, Knex, SQLAlchemy, c3p0, Commons DBCP
            r"acquisition timeout|ConnectionAcquireTimeout|Timeout acquiring a connection|"
            r"QueuePool limit|checkout a Connection has timed out|"
            r"Timeout waiting for idle object|"
            r"too many (?:connections|clients)|max(?:imum)? "
            r"(?:connections|pool size) (?:reached|exceeded)",
            _I,
        ),
        "pool_exhausted",
    ),
    (
        re.compile(r"queue (?:is )?full|reached its max|queue size exceeded|backlog full", _I),
        "queue_full",
    ),
    (
        re.compile(
            r"no space left|disk (?:is )?full|quota exceeded|too many open files|"
            r"resource exhausted|rate limit(?:ed)?|throttl|max(?:imum)? number of clients"
            r"|maxclients has been reduced|low ulimit|maximum open files",
            _I,
        ),
        "resource_exhausted",
    ),
)

# -- changes -----------------------------------------------------------------------------
_CHANGE: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"config(?:uration)? (?:re)?load(?:ed|ing)?|reload(?:ed|ing)? "
            r"(?:the )?config(?:uration)?|config(?:uration)? (?:changed|updated)",
            _I,
        ),
        "config_reload",
    ),
    (
        re.compile(
            r"feature[ _-]?flag|flag [\w.\-]+ (?:enabled|disabled|changed|set|toggled)|"
            r"toggled (?:on|off)",
            _I,
        ),
        "feature_flag",
    ),
    (
        re.compile(
            r"\bdeploy(?:ed|ing|ment (?:started|completed|finished))\b|rolled out|"
            r"rolling (?:update|restart)|new version|upgrad(?:ed|ing) to|"
            r"version [\w.\-]+ (?:deployed|released|rolled)",
            _I,
        ),
        "deploy",
    ),
    (
        re.compile(
            r"fail(?:ing|ed)? ?over|switchover|promoted to (?:primary|leader|master)|"
            r"leader (?:election|elected|changed)|new leader|became (?:the )?leader",
            _I,
        ),
        "failover",
    ),
    (
        re.compile(r"rebalanc\w*|partitions? (?:re)?(?:assigned|revoked)|resharding", _I),
        "rebalance",
    ),
    (
        re.compile(
            r"(?:schema )?migration (?:started|applied|completed|running)|"
            r"cache (?:flushed|cleared|invalidated)|scaled (?:up|down|to)|"
            r"maintenance (?:window|mode)|certificate (?:rotated|renewed)",
            _I,
        ),
        "maintenance",
    ),
)


def classify(message: str, error: str | None = None, host: str | None = None) -> Signal:
    """The signal in one message (``error``: its error field; ``host``: a dependency field)."""
    text = message if not error or error in message else f"{message} | {error}"
    text = text[:2000]
    for pat, reason in _CONFIG_PATTERNS:
        m = pat.search(text)
        if m:
            key = (m.groupdict().get("k") or "").strip(".:")
            keys: tuple[str, ...] = (key,) if key and key.lower() not in _NOT_NAMES else ()
            return Signal("config", reason, keys)
    dns = _DNS.search(text)
    refused = _REFUSED.search(text)
    timeout = _TIMEOUT.search(text)
    conn = _CONN_FAIL.search(text)
    targets: tuple[str, ...] = tuple(_with_host(hosts_in(text), host))
    failing = dns or refused or conn
    for pat, reason in _SATURATION:
        if pat.search(text) and not (failing and targets) and not _HEADROOM.search(text):
            return Signal("saturation", reason, targets)
    if failing and not (dns or refused) and _CLIENT_SIDE.search(text):
        failing = None  # a server noting that a client went away: not what it depends on
    if failing or (timeout and _names_target(text)):
        reason = "dns" if dns else "refused" if refused else "timeout" if timeout else "unavailable"
        return Signal("dependency", reason, targets)
    if _AUTH_REFUSED.search(text):
        return Signal("dependency", "auth", targets)
    if _FAILED.search(text):
        return Signal()  # a failure that names a flag or a deploy is a failure, not a change
    for pat, reason in _CHANGE:
        if pat.search(text):
            return Signal("change", reason, ())
    return Signal()


# a line that says something failed ("error when evicting pods/... -n feature-flags")
_FAILED = re.compile(r"\b(?:error|cannot|can't|could not|failed|failure|violate|denied)\b", _I)


# a server's own note that a client hung up ("could not receive data from client: Connection
# reset by peer", "client closed connection"): about its callers, not its dependencies
_CLIENT_SIDE = re.compile(
    r"\b(?:from|by|to) (?:the )?client\b|\bclient (?:closed|disconnected|went away|aborted|"
    r"reset|hung up)|on client connection|client connection (?:lost|closed|reset|aborted)",
    _I,
)

# a backend refusing the credentials it was given (a database, a broker, a cache)
_AUTH_REFUSED = re.compile(
    r"authentication failed|AuthenticationFailed|\bauth(?:entication)? error|"
    r"sasl (?:conversation|authentication)|password authentication failed|"
    r"access denied for user|login failed for user|\bNOAUTH\b|\bWRONGPASS\b|"
    r"ACCESS_REFUSED|invalid (?:username or password|credentials)|UserNotFound",
    _I,
)


# "rate limit low: 212 of 5000 requests remaining": headroom reported, nothing exhausted yet
_HEADROOM = re.compile(r"\b[1-9]\d* (?:of \d+ )?(?:\w+ )?(?:remaining|left)\b", _I)


def _names_target(text: str) -> bool:
    return bool(
        re.search(r"\b(?:to|from|with|of|calling|upstream)\b|->\s*\S+:\d+", text, _I)
        or _RPC_CALL.search(text)
        or _TIMED_OUT_AFTER.search(text)
    )


# a gRPC client's own account of a call that failed: always a call to another service
_RPC_CALL = re.compile(r"rpc error: code = (?:DeadlineExceeded|Unavailable)\b")


def _with_host(found: list[str], host: str | None) -> list[str]:
    if host and host.lower() not in _NOT_NAMES and host not in found:
        return [*found, host]
    return found
