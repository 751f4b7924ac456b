"""Application failures read from logs: databases, caches, queues, certificates, upstream
limits, code defects (the classic application failures; HolmesGPT's and Robusta's
playbooks; RCAEval's code-level faults; Chaos Mesh HTTPChaos / JVMChaos / TimeChaos).

These select facts of the log kinds (configuration errors, exhausted resources, failing
dependencies, error templates, last words) by the words the programs print."""

from __future__ import annotations

from opsmate.agent.kinds.card import Role, Trait, read
from opsmate.agent.kinds.catalog.base import _POD_TROUBLE, _REQUESTS, variant, variants
from opsmate.agent.observe.facts import FactKind as K

_CERT = (
    r"certificate (?:has )?expired|cert(?:ificate)? expired|x509: certificate has expired"
    r"|notafter|expiredcertexception|certificate is not yet valid|not yet valid"
    r"|unknown authority|signed by unknown|certificate verify failed|tls handshake"
    r"|doesn'?t contain any ip sans|not valid for (?:any )?names?|hostname mismatch"
    r"|x509: certificate is valid for"
)

_SKEW = (
    r"RequestTimeTooSkewed|request time and the server's time is too large|Signature expired"
    r"|RequestExpired|Clock skew too great|clock skew (?:detected|too large)|time too skewed"
)


# cert-manager's Certificates: which expired, and why their renewal fails
_CERTIFICATES = read(
    "list_objects",
    "certificates, their validity and renewal",
    kind="Certificate",
    namespace="{ns}",
)

CARDS = (
    # -- certificates and time ---------------------------------------------------------
    variant(
        K.LOG_ERROR,
        "acme-challenge-failing",
        "cert-manager cannot complete an ACME challenge: the certificate is not issued or renewed",
        words=r"propagation check failed|error presenting challenge|acme: authorization error"
        r"|while attempting to find Zones|failed to (?:create|finalize) order"
        r"|error (?:waiting|checking) for (?:DNS|HTTP)",
        example=(
            "",
            "\"propagation check failed\" err=\"wrong status code '404', expected '200'\" "
            'resource_kind="Challenge" type="HTTP-01"',
        ),
        role=Role.CAUSE,
        specificity=2.7,
        phrase="cert-manager failing its ACME challenge (the certificate is not renewed)",
        check="`kubectl get challenges,orders -A` and `kubectl -n {ns} describe certificate` "
        "(the challenge's reason: the solver's reachability, the DNS provider's token)",
        mitigation="fix what the challenge fails on (the HTTP-01 solver's route, the DNS-01 "
        "provider's credentials), then let cert-manager retry (a person decides)",
        topics=("certificate", "acme", "cert-manager", "challenge", "letsencrypt", "renewal"),
        asks=r"certificate|acme|letsencrypt|cert-manager|not private|err_cert",
        reads=(_CERTIFICATES,),
        evidence="cert-manager's log (propagation check failed, errors presenting or checking "
        "the challenge) and the Certificate's status",
        catalog=("cert-manager: ACME troubleshooting", "classic: expired certificate"),
    ),
    variant(
        K.MISCONFIGURATION,
        "certificate-issuer-not-ready",
        "A cert-manager Issuer or ClusterIssuer cannot sign: its certificates are not renewed",
        reasons=("IssuerNotReady",),
        example=(
            "IssuerNotReady",
            'Error getting keypair for CA issuer: secret "internal-ca-keypair" not found',
        ),
        conclusive=True,
        specificity=2.8,
        phrase="a certificate issuer that cannot sign",
        check="`kubectl describe clusterissuer` / `kubectl -n {ns} describe issuer` (status "
        "conditions) and the Certificates that name it",
        mitigation="restore what the issuer needs (its CA key pair Secret, its ACME account, "
        "its Vault role), then let cert-manager re-issue (a person decides)",
        topics=("certificate", "issuer", "cert-manager", "tls", "renewal"),
        asks=r"certificate|cert-manager|issuer|tls|ssl",
        evidence="the Issuer's / ClusterIssuer's Ready condition; the Certificates' Issuing "
        "condition",
        confirms="Ready=False on the issuer a failing Certificate names (issuerRef)",
        rules_out="the issuer Ready (then: the Certificate's own Issuing message)",
        catalog=("cert-manager: Issuer status", "classic: expired certificate"),
    ),
    variant(
        K.CONFIG_ERROR,
        "certificate-not-yet-valid",
        "A certificate or token is not yet valid (clock skew)",
        reasons=("not_yet_valid",),
        traits=frozenset({Trait.CLOCK}),
        words=r"current time \S+ is before|certificate is not yet valid|not valid yet|before issued"
        r"|used before|clock skew|issued in the future|\bnbf\b|\biat\b",
        example=(
            "certificate",
            "x509: certificate has expired or is not yet valid: current time "
            "2024-01-01T00:00:00Z is before 2024-01-02T00:00:00Z",
        ),
        conclusive=True,
        specificity=2.9,
        phrase="a clock skew that makes certificates or tokens not yet valid",
        check="compare the pod's clock with the issuer's: `kubectl -n {ns} exec {obj} -- date` "
        "and the node's NTP",
        mitigation="restore time sync on the node (NTP/chrony) or remove the time fault (a person "
        "decides)",
        topics=("clock", "time", "ntp", "skew", "certificate", "token"),
        asks=r"clock|time|skew|ntp|token|certificate",
        catalog=("ChaosMesh:TimeChaos", "classic: clock skew"),
    ),
    *variants(
        ((K.LOG_ERROR, "token-expired"), (K.DEPENDENCY_FAILURE, "token-expired-call")),
        "Tokens are rejected as expired (their issuer's or the verifier's clock, or a lifetime "
        "too short)",
        words=r"ExpiredJwtException|JWT expired|jwt expired|TokenExpiredError|token (?:is |has )?"
        r"expired|expired token|\bexp\b claim|token used after expiry",
        example=(
            "",
            "io.jsonwebtoken.ExpiredJwtException: JWT expired at 2025-03-11T00:21:57Z. "
            "Current time: 2025-03-11T01:22:00Z",
        ),
        needs_deeper=True,
        deeper_cards=("clock-skew-observed",),
        phrase="tokens rejected as expired",
        check="compare the token's issue and expiry times with the clocks of the issuer and "
        "the verifier (`date` in their pods); a token expired seconds after it was issued "
        "points at a clock",
        topics=("jwt", "token", "expired", "clock", "auth", "login"),
        asks=r"token|jwt|expired|log(?:ged)? (?:in|out)|login|session|401",
        catalog=("ChaosMesh:TimeChaos", "classic: token expiry / clock skew"),
    ),
    variant(
        K.CONFIG_ERROR,
        "clock-skew-observed",
        "A service's clock is off: the times it writes differ from when its lines arrived",
        reasons=("clock_skew",),
        traits=frozenset({Trait.CLOCK}),
        role=Role.CAUSE,
        conclusive=True,
        specificity=3.0,
        phrase="a clock that is off (time skew)",
        check="compare `date` in its pods with the node's clock and NTP (node_timex_offset_"
        "seconds, node_timex_sync_status); a time fault injected into its pods shows only there",
        mitigation="restore the clock (NTP / chrony on the node, or remove the time fault), then "
        "let clients re-authenticate (a person decides)",
        topics=("clock", "time", "skew", "ntp", "token", "jwt", "expired"),
        asks=r"clock|time|skew|token|jwt|expired|log(?:ged)? (?:in|out)|login|session",
        evidence="its own timestamps against the collector's, in its log lines",
        catalog=("ChaosMesh:TimeChaos", "classic: node clock drift"),
    ),
    *variants(
        (
            (K.LOG_ERROR, "clock-skew-signature"),
            (K.DEPENDENCY_FAILURE, "clock-skew-signature-call"),
        ),
        "Requests signed with a clock the server does not accept (clock skew)",
        words=_SKEW,
        traits=frozenset({Trait.CLOCK}),
        example=(
            "",
            "An error occurred (RequestTimeTooSkewed) when calling the GetObject "
            "operation: The difference between the request time and the server's time "
            "is too large.",
        ),
        role=Role.CAUSE,
        conclusive=True,
        specificity=3.0,
        phrase="a clock skew: the server refuses requests signed with the client's time",
        check="compare the clocks of the client's node and the server (node_timex_offset / "
        "`date` in both pods; node_timex_sync_status)",
        mitigation="restore time synchronisation (NTP / chrony) on the node whose clock "
        "drifted; move the pods off it meanwhile (a person decides)",
        topics=("clock", "time", "ntp", "skew", "signature", "s3"),
        asks=r"clock|time|skew|ntp|signature|s3|upload|image",
        evidence="the server's refusal quoted by the client (RequestTimeTooSkewed, "
        "Signature expired, Clock skew too great), node time metrics",
        catalog=("ChaosMesh:TimeChaos", "classic: node clock drift (S3 / Kerberos)"),
    ),
    variant(
        K.CONFIG_ERROR,
        "tls-protocol-mismatch",
        "One side speaks TLS, the other plain text (backend protocol / mTLS mode mismatch)",
        reasons=("protocol_mismatch",),
        example=(
            "protocol_mismatch",
            "SSL_do_handshake() failed (SSL: error:0A00010B:SSL routines::wrong version number) "
            "while SSL handshaking to upstream",
        ),
        conclusive=True,
        specificity=2.9,
        phrase="a proxy or client that speaks TLS to a plain-text server (or plain text to a "
        "TLS one)",
        check="compare what the caller speaks with what the server serves: the Ingress's "
        "backend-protocol annotation, the Service port's appProtocol, a mesh's mTLS mode",
        mitigation="make both sides agree (drop or fix the backend-protocol annotation, or "
        "serve TLS); a person decides",
        reads=(
            read(
                "list_objects",
                "Ingresses and their backend protocol",
                kind="Ingress",
                namespace="{ns}",
            ),
        ),
        topics=("tls", "ssl", "https", "protocol", "backend-protocol", "mtls", "handshake"),
        evidence="the proxy's or client's log (a handshake that fails on a plain-text answer)",
        confirms="an annotation or setting that makes the caller speak TLS to a plain port",
        catalog=(
            "ingress-nginx: backend-protocol",
            "Istio: PeerAuthentication mode",
            "classic: http vs https",
        ),
    ),
    variant(
        K.CONFIG_ERROR,
        "certificate-expired",
        "A TLS certificate has expired",
        words=r"certificate (?:has )?expired|cert(?:ificate)? expired|has expired|notafter"
        r"|expiredcert|NotTimeValid|CERT_HAS_EXPIRED",
        traits=frozenset({Trait.CLOCK}),
        # cert-manager renews a certificate before it expires: one that expired was not
        # renewed, and its issuer that cannot sign says why
        deeper_cards=("certificate-issuer-not-ready", "acme-challenge-failing"),
        reads=(_CERTIFICATES,),
        example=("certificate", "x509: certificate has expired or is not yet valid"),
        conclusive=True,
        specificity=3.0,
        phrase="an expired TLS certificate",
        check="read the certificate's validity: `kubectl -n {ns} get secret NAME -o "
        "jsonpath='{{.data.tls\\.crt}}' | base64 -d | openssl x509 -noout -dates` (and "
        "cert-manager Certificates)",
        mitigation="renew the certificate (cert-manager: check the Issuer; manual: replace the "
        "Secret), then restart what reads it (a person decides)",
        topics=("certificate", "tls", "ssl", "expired", "x509", "cert"),
        # browsers say it their way: "Your connection is not private", NET::ERR_CERT_DATE_INVALID
        asks=r"certificate|tls|ssl|x509|https|not private|err_cert|证书",
        catalog=("HolmesGPT:crashpod ssl", "classic: expired certificate"),
    ),
    variant(
        K.CONFIG_ERROR,
        "certificate-untrusted",
        "A TLS certificate is not trusted or not valid for the name",
        words=r"unknown authority|signed by unknown|verify failed|not valid for|ip sans"
        r"|hostname mismatch|is valid for|tls handshake",
        example=("certificate", "x509: certificate signed by unknown authority"),
        conclusive=True,
        specificity=2.9,
        phrase="a TLS certificate the client does not trust or that names another host",
        mitigation="issue the certificate for the name clients use, or give clients the CA "
        "(a person decides)",
        topics=("certificate", "tls", "ssl", "x509", "ca", "san"),
        catalog=("classic: wrong SAN", "classic: CA rotation"),
    ),
    variant(
        K.LAST_WORDS,
        "last-words-certificate",
        "Exits on a TLS certificate error",
        reasons=("certificate",),
        conclusive=True,
        phrase="a TLS certificate error at start-up",
        topics=("certificate", "tls", "ssl", "expired"),
        catalog=("HolmesGPT:crashpod ssl",),
    ),
    variant(
        K.LOG_ERROR,
        "jwt-signature-invalid",
        "Tokens fail signature verification (key mismatch after rotation)",
        words=r"signature verification failed|invalid signature|signature is invalid"
        r"|jwt (?:malformed|signature)|token signature|verification failed",
        example=("", "jwt: signature verification failed"),
        conclusive=False,
        specificity=2.8,
        phrase="tokens signed with a key the verifier does not have",
        check="compare the signing and verifying keys (Secret versions, when each changed)",
        mitigation="re-sync the key pair between issuer and verifiers, then restart them (a "
        "person decides)",
        topics=("jwt", "token", "signature", "key", "auth"),
        catalog=("classic: key rotation mismatch",),
    ),
    # -- databases ------------------------------------------------------------------------
    variant(
        K.SATURATION,
        "db-too-many-connections",
        "A database refuses connections: max connections reached",
        words=r"too many (?:connections|clients)|max_connections|remaining connection slots"
        r"|connection limit exceeded|max(?:imum)? number of clients",
        example=("pool_exhausted", "FATAL: sorry, too many clients already"),
        conclusive=True,
        specificity=2.9,
        phrase="a database at its connection limit (max_connections)",
        check="count connections per client on the database (pg_stat_activity / SHOW "
        "PROCESSLIST) against max_connections",
        mitigation="lower the pool sizes x replicas of the clients, or raise max_connections "
        "(a person decides)",
        topics=("connection", "max_connections", "too many", "database", "pool"),
        catalog=("classic: db max connections",),
    ),
    variant(
        K.SATURATION,
        "pool-exhausted",
        "A client's connection pool is exhausted",
        reasons=("pool_exhausted",),
        words=r"pool (?:is )?(?:exhausted|full|timeout)|PoolExhausted|PoolTimeout"
        r"|acquire (?:a )?connection|connection pool",
        example=("pool_exhausted", "could not acquire connection from pool after 30s"),
        # what holds the connections: statements queued behind a lock on the database
        deeper_cards=("db-lock-contention", "db-lock-contention-warning"),
        traits=frozenset({Trait.CASCADE, Trait.WAITS}),
        reads=(
            read(
                "search_logs",
                "statements waiting for a lock on the database hold the "
                "connections (PostgreSQL's log_lock_waits)",
                query='"still waiting for"',
                page_size="200",
            ),
        ),
        phrase="an exhausted connection pool",
        topics=("pool", "connection", "exhaust", "database", "timeout"),
        catalog=("HolmesGPT:db pool exhaustion", "classic: pool"),
    ),
    *variants(
        ((K.LOG_ERROR, "db-lock-contention"), (K.LOG_WARNING, "db-lock-contention-warning")),
        "Database lock waits or deadlocks",
        # PostgreSQL's log_lock_waits: "process 4821 still waiting for RowExclusiveLock on
        # relation 16412 ... after 1000 ms", with the process holding it
        words=r"deadlock|lock wait timeout|could not obtain lock|lock timeout"
        r"|database is locked|waiting for lock|canceling statement due to lock"
        r"|still waiting for \w*Lock|Process(?:es)? holding the lock",
        example=("", "ERROR: deadlock detected"),
        specificity=2.7,
        phrase="database lock contention",
        check="list blocking sessions on the database (pg_locks / INNODB STATUS) and the "
        "statements holding them",
        mitigation="end the blocking session or migration, then fix the access order (a person "
        "decides)",
        topics=("lock", "deadlock", "database", "contention"),
        catalog=("classic: db locks",),
        any_level=True,
        # a lock wait the database reports is its own account of what blocks, whatever the
        # level: a cause (queries queue behind it, pools run dry), not background
        role=Role.CAUSE,
        explains=_POD_TROUBLE | _REQUESTS,
    ),
    variant(
        K.LOG_ERROR,
        "db-schema-mismatch",
        "The database schema does not match the code (a migration missing)",
        words=r"relation \S+ does not exist|column \S+ does not exist|no such table|no such column"
        r"|table \S+ doesn'?t exist|unknown column|undefined column|undefinedtable",
        example=("", 'ERROR: relation "orders_v2" does not exist'),
        specificity=2.8,
        phrase="a database schema older than the running code (a migration that did not run)",
        # the migration that would have changed the schema did not run: its Job refused,
        # never scheduled or never started
        deeper=frozenset(
            {
                K.QUOTA_REFUSAL,
                K.ADMISSION_DENIED,
                K.SCHEDULING,
                K.IMAGE_PULL,
                K.MISSING_REFERENCE,
            }
        ),
        check="compare the schema version with what the release expects (the migration job's "
        "log and status)",
        mitigation="run the missing migration or roll back the release (a person decides)",
        topics=("migration", "schema", "database", "column", "table"),
        catalog=("classic: bad rollout",),
    ),
    variant(
        K.LOG_ERROR,
        "db-xid-wraparound",
        "PostgreSQL refuses writes to protect against transaction ID wraparound (vacuum cannot "
        "freeze: a long-open transaction or replication slot holds it back)",
        words=r"to avoid wraparound data loss|transaction ID wraparound|wraparound protection"
        r"|must be vacuumed within \d+ transactions|multixact \w+ wraparound",
        example=(
            "",
            "ERROR: database is not accepting commands to avoid wraparound data loss in "
            'database "app"',
        ),
        role=Role.CAUSE,
        conclusive=True,
        specificity=3.1,
        phrase="PostgreSQL refusing writes to avoid transaction ID wraparound (vacuum cannot "
        "freeze rows)",
        check="find what holds the oldest transaction back: `SELECT pid, state, xact_start, query "
        "FROM pg_stat_activity ORDER BY xact_start` (a backup or a session idle in "
        "transaction for days), prepared transactions, replication slots; "
        "age(datfrozenxid) per database",
        mitigation="end the long-open transaction (the stuck job or session), then VACUUM "
        "(FREEZE) the oldest tables; a person decides",
        topics=("wraparound", "vacuum", "postgres", "xid", "long transaction", "freeze"),
        reads=(
            read(
                "list_objects",
                "Jobs that may hold a transaction open",
                kind="Job",
                namespace="{ns}",
            ),
        ),
        evidence="the database's own refusal ('not accepting commands to avoid wraparound') "
        "and its warnings that the database must be vacuumed",
        catalog=("classic: PostgreSQL XID wraparound", "postmortems: Sentry 2015, Mailchimp"),
    ),
    variant(
        K.LOG_ERROR,
        "db-read-only",
        "Writes refused: the database or replica is read-only",
        words=r"read[- ]only (?:transaction|replica|mode)|READONLY You can't write"
        r"|cannot execute \w+ in a read-only|super_read_only|is read only",
        example=("", "READONLY You can't write against a read only replica."),
        specificity=2.8,
        phrase="writes sent to a read-only database",
        topics=("read-only", "replica", "failover", "primary", "database", "redis"),
        catalog=("classic: failover",),
    ),
    # -- caches and queues ------------------------------------------------------------------
    variant(
        K.SATURATION,
        "replica-lag",
        "A replica lags behind its primary (reads from it are stale)",
        reasons=("replication_lag",),
        example=("replication_lag", "replication lag 420 s"),
        conclusive=True,  # the database's own gauge of how far behind the replica is
        specificity=3.0,
        phrase="a replica lagging behind its primary (reads it serves miss recent writes)",
        check="replication lag per member (`rs.printSecondaryReplicationInfo()`, "
        "`pg_stat_replication`, `SHOW REPLICA STATUS`) and what reads are sent to replicas",
        mitigation="send reads that must see their own writes to the primary; find why the "
        "replica cannot keep up (its disk, a bulk load) — a person decides",
        topics=("replica", "replication", "lag", "stale", "secondary", "database"),
        asks=r"disappear\w*|reappear\w*|\bstale\b|out of date|show(?:s|ing)? up again"
        r"|(?:replica|replication|secondary)\w* lag|read(?:s|ing)? (?:old|outdated)",
        reads=(
            read(
                "query_metrics",
                "how far each replica is behind its primary",
                query="mongodb_mongod_replset_member_replication_lag",
            ),
            read(
                "query_metrics",
                "how far each PostgreSQL standby is behind",
                query="pg_replication_lag",
            ),
            read(
                "query_metrics",
                "how far each MySQL replica is behind",
                query="mysql_slave_status_seconds_behind_master",
            ),
        ),
        catalog=("classic: replication lag",),
    ),
    variant(
        K.LOG_ERROR,
        "cache-maxmemory",
        "A cache refuses writes at its memory limit",
        words=r"OOM command not allowed|maxmemory|used memory > 'maxmemory'",
        example=("", "OOM command not allowed when used memory > 'maxmemory'."),
        conclusive=True,
        specificity=3.0,
        phrase="a cache at its maxmemory limit",
        software=("redis", "valkey", "keydb", "dragonfly"),
        check="`redis-cli INFO memory` (used_memory vs maxmemory, maxmemory-policy) on the cache",
        mitigation="raise maxmemory or set an eviction policy (a person decides)",
        topics=("redis", "maxmemory", "memory", "cache", "oom"),
        catalog=("classic: cache oom",),
    ),
    variant(
        K.LOG_ERROR,
        "queue-acl-denied",
        "A broker denies a client (ACL / authorization)",
        words=r"TopicAuthorization|GroupAuthorization|not authorized to access|"
        r"authorization failed|ACCESS_REFUSED|NOT_AUTHORIZED|access to (?:vhost|topic|queue) .* "
        r"refused|ClusterAuthorization",
        example=(
            "",
            "org.apache.kafka.common.errors.TopicAuthorizationException: Not authorized "
            "to access topics: [orders]",
        ),
        conclusive=True,
        specificity=3.0,
        phrase="a broker ACL that denies the client",
        check="list the broker's ACLs for the client's user (KafkaUser / rabbitmqctl "
        "list_permissions)",
        mitigation="restore the ACL / permission for the client's user (a reviewed change)",
        topics=("acl", "authoriz", "kafka", "rabbitmq", "permission", "broker"),
        catalog=("classic: broker ACL", "blind5"),
    ),
    *variants(
        (
            (K.LOG_ERROR, "object-store-access-denied"),
            (K.DEPENDENCY_FAILURE, "object-store-access-denied-call"),
        ),
        "A cloud access policy (a bucket policy, an IAM role's policy) denies the operation",
        words=r"AccessDenied|explicit deny|is not authorized to perform:"
        r"|does not have storage\.\w+\.\w+ access|AuthorizationPermissionMismatch"
        r"|InvalidAccessKeyId|SignatureDoesNotMatch|AllAccessDisabled",
        example=(
            "",
            "AccessDenied: User: arn:aws:sts::1:assumed-role/app/x is not authorized to "
            "perform: s3:PutObject on resource: arn:aws:s3:::bucket/k with an explicit deny "
            "in a resource-based policy",
        ),
        role=Role.CAUSE,
        conclusive=True,
        specificity=3.0,
        phrase="an access policy (bucket or IAM policy) that denies the operation",
        check="read the policy the error names (the bucket's policy, the role's policies) "
        "and what changed it (its history in the cloud's audit log or in Git)",
        mitigation="restore the permission the workload needs, or send what the policy now "
        "requires (a reviewed change; a person decides)",
        topics=("access denied", "bucket policy", "iam", "s3", "permission", "object storage"),
        asks=r"upload|bucket|s3|object|storage|denied|403|permission",
        evidence="the storage service's AccessDenied / 403 in the client's log, naming the "
        "action and the resource",
        catalog=("classic: cloud IAM / bucket policy denies", "ITBench: IAM misconfiguration"),
    ),
    variant(
        K.LOG_ERROR,
        "consumer-offset-out-of-range",
        "The broker's retention deleted records a consumer had not read yet (records lost)",
        words=r"offset is outside the range of offsets|OffsetOutOfRange|offset out of range"
        r"|Offset out of range|no longer available on the server|offsets? (?:was|were) "
        r"(?:deleted|truncated) by retention",
        example=(
            "",
            "kafka server: The requested offset is outside the range of offsets maintained "
            "by the server for the given topic/partition",
        ),
        role=Role.CAUSE,
        conclusive=True,
        specificity=3.1,
        phrase="the topic's retention deleting records before the consumer read them "
        "(offset out of range: those records are lost)",
        check="compare the topic's retention (retention.ms / retention.bytes) with the "
        "consumer group's lag at its peak; the broker logs each deleted segment",
        mitigation="raise the topic's retention above the worst lag, and scale or speed up "
        "the consumers (a reviewed change)",
        topics=("retention", "kafka", "consumer lag", "offset", "data loss", "topic"),
        asks=r"gap|hole|missing|lost|lag|kafka|topic|consumer",
        reads=(
            read(
                "search_logs",
                "the broker's log of segments deleted by retention",
                query='"retention"',
                page_size="50",
            ),
        ),
        evidence="the consumer's out-of-range error and the broker's 'Deleting segment ... "
        "due to retention' lines at the same time",
        catalog=("classic: Kafka retention shorter than consumer lag",),
    ),
    variant(
        K.LOG_ERROR,
        "tenant-limit-exceeded",
        "A multi-tenant backend (Mimir, Cortex, Loki, Tempo) rejects a tenant's writes over "
        "its limit",
        words=r"per-user series limit|per-metric series limit|series limit of \d+ exceeded"
        r"|err-mimir-[\w-]+|ingestion rate limit|max_global_series_per_\w+|per-tenant limit"
        r"|stream limit exceeded|per stream rate limit|max (?:live )?traces per (?:user|tenant)",
        example=(
            "",
            "send data to ingesters: user=team-a: per-user series limit of 150000 exceeded "
            "(err-mimir-max-series-per-user)",
        ),
        role=Role.CAUSE,
        conclusive=True,
        specificity=3.0,
        phrase="a tenant's series / ingestion limit that rejects its new writes",
        check="compare the tenant's usage with its limit: the backend's runtime overrides for "
        "that tenant id (spelled exactly as the writer sends it) and the global default",
        mitigation="raise the tenant's limit in the runtime overrides (or fix the override's "
        "tenant id), a reviewed change",
        topics=("tenant", "limit", "series", "mimir", "loki", "overrides", "cardinality"),
        asks=r"gap|missing|no data|patchy|dashboard|metrics|series|remote.?write",
        evidence="the backend's rejection naming the tenant and the limit, in the writer's or "
        "the distributor's log",
        catalog=("classic: Mimir/Loki per-tenant limits", "Grafana Mimir runbooks"),
    ),
    variant(
        K.LOG_ERROR,
        "poison-message",
        "A consumer fails on one message it cannot process (poison message)",
        words=r"deseriali[sz]\w*|SerializationException|poison|cannot deserialize"
        r"|failed to (?:parse|decode) (?:message|record|event)|malformed (?:message|record)"
        r"|RecordDeserialization|unexpected token .* in json",
        example=(
            "",
            "SerializationException: Error deserializing key/value for partition "
            "orders-0 at offset 1234",
        ),
        specificity=2.8,
        phrase="a message the consumer cannot process",
        check="read the record at the offset the error names and the consumer's lag",
        mitigation="skip or dead-letter the record, then fix the producer (a person decides)",
        topics=("poison", "deserializ", "consumer", "kafka", "message", "dead letter"),
        catalog=("classic: poison message",),
    ),
    variant(
        K.SATURATION,
        "queue-backlog",
        "A queue is full / a consumer lags behind",
        reasons=("queue_full",),
        words=r"consumer lag|lag (?:is )?(?:growing|increasing)|queue (?:is )?full|backlog",
        example=("queue_full", "queue size exceeded"),
        phrase="a queue that consumers do not keep up with",
        needs_deeper=True,  # why the consumer or the store behind it is slow is the cause
        topics=("queue", "lag", "consumer", "backlog", "kafka", "rabbitmq"),
        catalog=("classic: consumer lag",),
    ),
    # -- upstream limits and flags -------------------------------------------------------
    variant(
        K.SATURATION,
        "upstream-rate-limited",
        "An upstream API rate-limits the service (429)",
        words=r"\b429\b|too many requests|rate limit|ratelimit|throttled by|quota exceeded for",
        example=("resource_exhausted", "upstream answered 429 Too Many Requests"),
        specificity=2.8,
        phrase="an upstream rate limit (429)",
        check="compare the call rate to the upstream with its published limit; read the "
        "Retry-After / X-RateLimit headers in the responses",
        mitigation="slow down or batch the calls, add back-off, or raise the quota with the "
        "provider (a person decides)",
        topics=("rate limit", "429", "throttl", "quota", "api"),
        asks=r"429|rate|throttl|limit",
        catalog=("classic: upstream rate limit", "ChaosMesh:HTTPChaos"),
    ),
    variant(
        K.LOG_ERROR,
        "code-defect",
        "A code defect: an unhandled exception or panic on a request path",
        words=r"panic:|nil pointer|NullPointerException|NullReferenceException|TypeError"
        r"|AttributeError|KeyError|IndexError|segmentation fault|undefined is not|"
        r"Traceback \(most recent|unhandled exception|UnhandledPromiseRejection",
        example=("", "panic: runtime error: invalid memory address or nil pointer dereference"),
        needs_deeper=True,
        phrase="an unhandled error in the code",
        check="read the stack trace at its first occurrence and the release it began with",
        mitigation="roll back the release that introduced it, or fix forward (a person decides)",
        topics=("exception", "panic", "error", "bug", "release"),
        catalog=("RCAEval:code-level", "ChaosMesh:JVMChaos exception"),
    ),
)
