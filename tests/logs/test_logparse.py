"""Parsing log lines: JSON, logfmt, text layouts, stack shapes, access lines, inference."""

from __future__ import annotations

import json

import pytest

from opsmate.config import LogsConfig
from opsmate.loganalysis import parse as logparse
from opsmate.loganalysis.parse import canonical_level, infer_level, parse_line, parse_record


@pytest.fixture(autouse=True)
def _default_names() -> None:
    logparse.configure(None)


def test_json_in_message_gives_fields() -> None:
    line = json.dumps(
        {
            "ts": "2031-04-02T08:00:00Z",
            "severity": "ERROR",
            "msg": "upstream call failed",
            "err": "dial tcp 10.1.2.3:6380: connect: connection refused",
            "logger": "billing.client",
            "http": {"route": "/v2/invoices/88123/lines"},
            "method": "POST",
            "status_code": 502,
            "latency_ms": 1250.5,
            "traceId": "7f3a9c",
            "service": "ledger",
        }
    )
    pl = parse_line(line)
    assert pl.kind == "json" and pl.level == "error" and not pl.inferred
    assert pl.message == "upstream call failed"
    assert pl.error is not None and "connection refused" in pl.error
    assert pl.logger == "billing.client" and pl.service == "ledger"
    assert pl.status == "502" and pl.http_status() == 502
    assert pl.duration_ms == 1250.5 and pl.duration_field == "latency_ms"
    assert pl.endpoint == "POST /v2/invoices/{id}/lines"
    assert pl.trace_id == "7f3a9c" and pl.time_text == "2031-04-02T08:00:00Z"
    assert pl.raw == line  # kept for quoting


def test_json_duration_units_from_names_and_values() -> None:
    assert parse_line('{"msg": "q", "elapsed_seconds": 2}').duration_ms == 2000.0
    assert parse_line('{"msg": "q", "duration": "1.5s"}').duration_ms == 1500.0
    assert parse_line('{"msg": "q", "took": 40}').duration_ms == 40.0  # bare numbers: ms
    assert parse_line('{"msg": "q", "request_time": 0.25}').duration_ms == 250.0
    assert parse_line('{"msg": "q", "event": {"duration": 3000000}}').duration_ms is None


def test_json_without_message_is_summarised_and_not_an_error() -> None:
    pl = parse_line('{"level": "info", "user": "u1", "cart_items": 3}')
    assert pl.kind == "json" and pl.level == "info" and "cart_items=3" in pl.message


def test_bunyan_numeric_levels_and_aliases() -> None:
    assert parse_line('{"level": 50, "msg": "x"}').level == "error"
    assert parse_line('{"level": 30, "msg": "x"}').level == "info"
    assert canonical_level("WARNING") == "warn" and canonical_level("critical") == "fatal"
    assert canonical_level("nonsense") is None and canonical_level(True) is None


def test_logfmt() -> None:
    pl = parse_line(
        'time=2031-04-02T08:00:00Z level=warn msg="cache refill slow" duration=850ms key=u:9'
    )
    assert pl.kind == "logfmt" and pl.level == "warn" and pl.message == "cache refill slow"
    assert pl.duration_ms == 850.0
    assert pl.fields["key"] == "u:9"


@pytest.mark.parametrize(
    ("line", "level", "message"),
    [
        ("[ERROR] disk quota reached on /data", "error", "disk quota reached on /data"),
        ("ERROR: replica lagging", "error", "replica lagging"),
        ("WARNING:worker:queue is deep", "warn", "queue is deep"),
        ("2031-04-02 08:00:01,123 - ERROR - cannot open ledger", "error", "cannot open ledger"),
        ("2031-04-02T08:00:01Z |WARN| retry budget low", "warn", "retry budget low"),
        ("<ERROR> job 7 aborted", "error", "job 7 aborted"),
        ("2031-04-02 08:00:01 INFO started worker pool", "info", "started worker pool"),
        ("Tue Apr 01 08:00:01 UTC 2031 INFO: heartbeat ok", "info", "heartbeat ok"),
        ("E0402 08:00:01.000123    12 reconciler.go:88] sync failed", "error", "sync failed"),
        ("FATAL: shared memory segment missing", "fatal", "shared memory segment missing"),
        ("error: could not lock index", "error", "error: could not lock index"),
    ],
)
def test_text_layouts(line: str, level: str, message: str) -> None:
    pl = parse_line(line)
    assert pl.level == level and not pl.inferred
    assert pl.message == message


def test_a_level_word_inside_a_sentence_is_not_a_marker() -> None:
    pl = parse_line("the report counts ERROR lines per hour")
    assert pl.level == "error" and pl.inferred  # read from content ("error"), not a marker


def test_python_traceback_lines() -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "/srv/app/main.py", line 12, in <module>',
        "    start()",
        "KeyError: 'QUEUE_URL'",
    ]
    kinds = [parse_line(x).kind for x in lines]
    assert kinds == ["traceback", "frame", "frame", "exception"]
    last = parse_line(lines[-1])
    assert last.level == "error" and last.inferred and last.error == "KeyError: 'QUEUE_URL'"
    assert parse_line(lines[1]).level is None  # frames are continuation, never errors


def test_go_panic_and_exit_status() -> None:
    panic = parse_line("panic: runtime error: index out of range [3] with length 3")
    assert panic.kind == "panic" and panic.level == "fatal"
    assert parse_line("goroutine 1 [running]:").kind == "frame"
    assert parse_line("\t/src/cmd/main.go:41 +0x1d").kind == "frame"
    exited = parse_line("exit status 3")
    assert exited.kind == "exit" and exited.exit_code == 3 and exited.level == "error"
    clean = parse_line("process exited with code 0")
    assert clean.exit_code == 0 and clean.level is None


def test_java_stack_trace() -> None:
    head = parse_line('Exception in thread "main" java.lang.IllegalStateException: no config')
    assert head.kind == "exception" and head.level == "error"
    assert parse_line("\tat org.acme.Boot.main(Boot.java:17)").kind == "frame"
    assert parse_line("Caused by: java.net.UnknownHostException: ledger-db").kind == "exception"
    assert parse_line("\t... 12 more").kind == "frame"


@pytest.mark.parametrize(
    ("line", "method_path", "status", "ms"),
    [
        ('INFO:     10.1.0.4:51234 - "GET /healthz HTTP/1.1" 200 OK', "GET /healthz", "200", None),
        (
            '10.1.0.4 - - [02/Apr/2031:08:00:01 +0000] "POST /api/pay?x=1 HTTP/1.1" 503 12 "-" '
            '"curl/8" rt=1.250',
            "POST /api/pay",
            "503",
            1250.0,
        ),
        (
            '[WARN] "GET /api/items/77 HTTP/1.1" 404 9ms - missing',
            "GET /api/items/{id}",
            "404",
            9.0,
        ),
        (
            '127.0.0.1 - - [02/Apr/2031 08:00:01] "\x1b[33mGET /x HTTP/1.1\x1b[0m" 200 -',
            "GET /x",
            "200",
            None,
        ),
    ],
)
def test_access_lines(line: str, method_path: str, status: str, ms: float | None) -> None:
    pl = parse_line(line)
    assert pl.kind == "access" and pl.endpoint == method_path and pl.status == status
    assert pl.duration_ms == ms


def test_an_unleveled_5xx_access_line_is_not_an_info_line() -> None:
    pl = parse_line('10.0.0.9 - - [02/Apr/2031:08:00:01 +0000] "GET /a HTTP/1.1" 502 0')
    assert pl.status == "502" and pl.level is None  # no level is invented for access lines


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("Environment variable SHOP_REGION is undefined", "error"),
        ("curl: (6) Could not resolve host: ledger.internal", "error"),
        ("wget: can't connect to remote host (10.0.0.7): Connection refused", "error"),
        ("Retrying in 5s", "warn"),
        ("processed 40 orders, 0 errors", None),
        ("errors=0 failed=0", None),
        ("Payment gateway connection established", None),
        ("segmentation fault (core dumped)", "fatal"),
    ],
)
def test_level_inferred_from_content(text: str, level: str | None) -> None:
    assert infer_level(text) == level
    pl = parse_line(text)
    assert pl.level == level and pl.inferred == (level is not None)


def test_a_written_level_wins_over_content() -> None:
    pl = parse_line("INFO: connection refused count reset to zero")
    assert pl.level == "info" and not pl.inferred


def test_durations_written_in_text() -> None:
    assert parse_line("report rendered in 7.5 seconds").duration_ms == 7500.0
    assert parse_line("query took 35ms").duration_ms == 35.0
    assert parse_line("gave up after 30s").duration_ms is None  # a limit, not a measurement
    assert parse_line("retrying in 5s").duration_ms is None  # a pause


def test_progress_meter_noise_is_left_out_of_the_message() -> None:
    line = "  0     0    0     0    0     0      0      0 --:--:-- --:--:--     0curl: (7) fail"
    pl = parse_line(line)
    assert pl.message == "curl: (7) fail" and pl.raw == line


def test_record_level_field_json_level_and_flat_fields() -> None:
    inner = json.dumps({"level": "ERROR", "message": "boom"})
    assert parse_record({"message": inner, "level": "info"}).level == "error"  # the line's own
    flat = parse_record(
        {"message": "GET done", "level": "INFO", "response_time_ms": 80, "path": "/a/1"}
    )
    assert flat.level == "info" and flat.level_raw == "info"
    assert flat.duration_ms == 80.0 and flat.endpoint == "/a/{id}"
    unleveled = parse_record({"message": "could not open socket"})
    assert unleveled.level == "error" and unleveled.inferred


def test_invalid_utf8_and_lone_surrogates() -> None:
    decoded = b"ERROR bad \xff\xfe bytes".decode("utf-8", "replace")
    pl = parse_line(decoded)
    assert pl.level == "error" and "\ufffd" in pl.message
    lone = parse_line("ERROR half a pair \ud800 here")
    lone.raw.encode("utf-8")  # printable and storable: no lone surrogate left
    lone.message.encode("utf-8")


def test_a_one_megabyte_line_parses() -> None:
    big = "ERROR payload rejected: " + "x" * 1_000_000
    pl = parse_line(big)
    assert pl.level == "error" and len(pl.raw) == len(big)
    as_json = parse_line(json.dumps({"level": "warn", "message": "y" * 1_000_000}))
    assert as_json.level == "warn" and len(as_json.message) == 1_000_000


def test_site_field_names_from_config() -> None:
    line = json.dumps({"sev": "E", "txt": "vault sealed", "rt": 1.5, "db_host": "vault-0"})
    before = parse_line(line)
    assert before.message != "vault sealed"
    logparse.configure(
        LogsConfig(
            level_fields=["sev"],
            message_fields=["txt"],
            duration_fields=["rt"],
            duration_units={"rt": "s"},
            host_fields=["db_host"],
        )
    )
    pl = parse_line(line)
    assert pl.level == "error" and pl.message == "vault sealed"
    assert pl.duration_ms == 1500.0 and pl.host == "vault-0"


def test_gauges_with_their_limit() -> None:
    pl = parse_line('{"msg": "tick", "heap_used_mb": 512, "heap_max_mb": 1024, "jobs": 3}')
    assert pl.gauges == (("heap_used_mb", 512.0, 1024.0),)


@pytest.mark.parametrize(
    ("line", "level"),
    [
        ("2026-11-21 09:13:06.123 UTC [88412] LOG:  could not receive data from client: "
         "Connection reset by peer", "info"),
        ("2026-11-21 09:13:06 UTC [1] LOG:  checkpoint complete: wrote 12 buffers", "info"),
        ("UTC [88412] DETAIL:  Key (id)=(7) already exists.", "info"),
        ('2026-11-21 09:13:06 UTC [88412] ERROR:  relation "orders" does not exist', "error"),
        ("2026-11-21 09:13:06 UTC [88412] FATAL:  password authentication failed", "fatal"),
    ],
)  # fmt: skip
def test_postgresql_severities(line: str, level: str) -> None:
    """PostgreSQL writes its own severity after the pid: LOG / DETAIL are informational,
    whatever words the message holds (a client hanging up is not an error of the server)."""
    assert parse_line(line).level == level


def test_a_server_noting_that_a_client_went_away_names_no_dependency() -> None:
    from opsmate.loganalysis.signals import classify

    for said in (
        "could not receive data from client: Connection reset by peer",
        "unexpected EOF on client connection with an open transaction",
        "client closed connection while waiting for request",
    ):
        assert classify(said).kind is None, said
    assert classify("dial tcp 10.0.0.1:5432: connection reset by peer").kind == "dependency"
    assert classify("connect to db:5432 from client pod: connection refused").reason == "refused"


def test_a_client_naming_what_timed_out_names_its_dependency() -> None:
    from opsmate.loganalysis.signals import classify

    sig = classify("face: smiley timed out after 1000ms (cell 2,2)")
    assert (sig.kind, sig.reason, sig.targets) == ("dependency", "timeout", ("smiley",))
    assert classify("the job timed out after 30s").kind is None  # the work, not a dependency
    assert classify("request timed out after 5s").kind is None


def test_hikari_running_out_of_connections_is_an_exhausted_pool() -> None:
    from opsmate.loganalysis.signals import classify

    line = ("HikariPool-1 - Connection is not available, request timed out after 30000ms "
            "(total=10, active=10, idle=0, waiting=37)")  # fmt: skip
    assert classify(line).reason == "pool_exhausted"


@pytest.mark.parametrize(
    "line",
    [
        "Unable to acquire JDBC Connection [Sorry, acquisition timeout!]",  # Agroal (Quarkus)
        "Knex: Timeout acquiring a connection. The pool is probably full.",
        "QueuePool limit of size 5 overflow 10 reached, connection timed out, timeout 30.00",
        "SequelizeConnectionAcquireTimeoutError: Operation timeout",
        "Cannot get a connection, pool error Timeout waiting for idle object",  # DBCP
    ],
)
def test_the_pool_libraries_own_words_for_running_dry_are_an_exhausted_pool(line: str) -> None:
    from opsmate.loganalysis.signals import classify

    assert classify(line).reason == "pool_exhausted"


def test_a_postgres_lock_wait_is_lock_contention_at_any_level() -> None:
    from opsmate.agent.kinds import card_for
    from opsmate.agent.observe.facts import Fact, FactKind

    line = ("process 45923 still waiting for RowExclusiveLock on relation 16412 of database "
            "16384 after 1000.837 ms")  # fmt: skip
    for kind in (FactKind.LOG_ERROR, FactKind.LOG_WARNING):
        f = Fact(key="k", statement="s", kind=kind, quote=line)
        assert card_for(f).id.startswith("db-lock-contention")


def test_a_failure_that_names_a_flag_or_a_deploy_is_a_failure_not_a_change() -> None:
    from opsmate.loganalysis.signals import classify

    line = (
        'error when evicting pods/"flags-6b7d8f9c4-z8kq2" -n "feature-flags" (will retry after '
        "5s): Cannot evict pod as it would violate the pod's disruption budget."
    )
    assert classify(line).kind != "change"
    assert classify("feature flag new-checkout enabled for 10% of users").kind == "change"


def test_a_keyerror_is_a_missing_setting_only_when_the_key_is_one() -> None:
    from opsmate.loganalysis.signals import classify

    assert classify("KeyError: 'DATABASE_URL'").reason == "missing_key"
    said = "url = os.environ[\"db_url\"]\nKeyError: 'db_url'"
    assert classify(said).reason == "missing_key"  # read from the environment
    # a data key that was not found (a product id): a failed lookup, not configuration
    assert classify("KeyError: 'the_graf_zeppelin'").reason != "missing_key"
