"""A stored record's level read from the application's own level field."""

from __future__ import annotations

from opsmate.loganalysis.parse import parse_record


def test_a_records_severity_field_is_its_level_not_its_words() -> None:
    # GCP structured logging (and apps modelled on it) put the level in "severity"
    rec = {"message": "ENV_PLATFORM environment variable is not set", "severity": "INFO"}
    pl = parse_record(rec)
    assert (pl.level, pl.inferred) == ("info", False)
    rec = {"message": "ready", "severity": "ERROR"}
    assert parse_record(rec).level == "error"


def test_the_level_field_wins_and_a_printed_level_counts_without_one() -> None:
    both = {"message": "connection refused", "level": "warn", "severity": "ERROR"}
    assert parse_record(both).level == "warn"
    printed = parse_record({"message": "ERROR: connection refused to db:5432"})
    assert (printed.level, printed.inferred) == ("error", False)


def test_source_lines_and_nginx_host_headers_are_not_dependencies() -> None:
    from opsmate.loganalysis.signals import hosts_in

    line = (
        "[error] 14#14: *7 [lua] read.lua:64: ReadUserTimeline(): connect() failed: "
        'Connection refused, client: 10.244.0.72, server: localhost, request: "GET /r '
        'HTTP/1.1", host: "front:8080"'
    )
    assert hosts_in(line) == []  # read.lua:64 is a source line; host: is the request's
    proxied = (
        "connect() failed (111: Connection refused) while connecting to upstream, client: "
        '1.2.3.4, server: _, request: "GET / HTTP/1.1", upstream: "http://10.0.0.7:8080/", '
        'host: "shop"'
    )
    assert hosts_in(proxied) == ["10.0.0.7:8080"]
    assert hosts_in("dial tcp: lookup cartservice on 10.96.0.10:53")[0] == "cartservice"


def test_grpc_resolved_addresses_name_the_ip_and_port() -> None:
    from opsmate.loganalysis.signals import hosts_in

    text = (
        "failed to connect to all addresses; last error: UNKNOWN: ipv4:10.96.200.14:8080: "
        "Failed to connect to remote host: Connection refused"
    )
    assert hosts_in(text) == ["10.96.200.14:8080"]


def test_zerolog_console_levels_and_callers() -> None:
    from opsmate.loganalysis.parse import parse_line

    pl = parse_line("2025-04-22T02:33:10Z FTL cmd/geo/db.go:52 > auth error: sasl conversation")
    assert (pl.level, pl.inferred, pl.logger) == ("fatal", False, "cmd/geo/db.go:52")
    assert pl.message == "auth error: sasl conversation"
    assert parse_line("3:04PM INF listening on :8080").level == "info"
    assert parse_line("2025-04-22T02:33:10Z WRN slow").level == "warn"


def test_envoy_response_flags_mark_a_failed_request_whatever_its_status() -> None:
    from opsmate.loganalysis.parse import parse_line

    failed = parse_line(
        '[2025-04-22T02:40:01.123Z] "POST /geo.Geo/Nearby HTTP/2" 200 UH no_healthy_upstream '
        '"-" 0 0 0 - "-" "grpc-go/1.58.3" "1fd5" "geo:8083" "-" '
        "outbound|8083||geo.hotel-reservation.svc.cluster.local - 10.96.1.2:8083 - default"
    )
    assert failed.kind == "access" and failed.level == "error" and failed.host == "geo"
    assert failed.error is not None and "no healthy upstream" in failed.error
    ok = parse_line(
        '[2025-04-22T02:40:01.123Z] "GET /x HTTP/1.1" 200 - via_upstream - "-" 0 10 3 2 "-" '
        '"curl" "id" "web" "10.0.0.1:80" outbound|80||web.ns.svc.cluster.local'
    )
    assert ok.level is None and ok.error is None
    client_gone = parse_line('[t] "GET /x HTTP/1.1" 0 DC downstream_remote_disconnect - "-"')
    assert client_gone.error is None  # the client hung up: not the server's failure


def test_a_backend_refusing_credentials_is_a_dependency_failure() -> None:
    from opsmate.loganalysis.signals import classify

    for line in (
        "connection handshake: auth error: sasl conversation error: (AuthenticationFailed)",
        'FATAL: password authentication failed for user "orders"',
        "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN",
        "WRONGPASS invalid username-password pair or user is disabled.",
    ):
        sig = classify(line)
        assert (sig.kind, sig.reason) == ("dependency", "auth"), line
    assert classify("user logged in").kind is None


def test_nested_fields_are_read_per_record_not_from_the_first_of_its_shape() -> None:
    from opsmate.loganalysis.parse import parse_line

    first = '{"t":{"$date":"x"},"s":"I","c":"NET","ctx":"a","msg":"Listening","attr":{"port":1}}'
    later = (
        '{"t":{"$date":"x"},"s":"F","c":"STORAGE","ctx":"a","msg":"Terminating.",'
        '"attr":{"reason":"28: No space left on device"}}'
    )
    assert parse_line(first).error is None
    pl = parse_line(later)  # same top-level keys, other nested ones
    assert pl.error == "28: No space left on device"


def test_a_record_whose_own_fields_say_it_failed_is_an_error_at_any_level() -> None:
    report = '{"error": true, "error_message": "Could not decrypt the stored password", "rows": []}'
    pl = parse_record({"message": report, "level": "info", "service": "sync"})
    assert pl.level == "error" and pl.inferred
    assert pl.error == "Could not decrypt the stored password"
    ok = parse_record({"message": '{"error": false, "error_message": "", "rows": [1]}',
                       "level": "info"})  # fmt: skip
    assert ok.level == "info" and ok.error is None
    failed = parse_record({"message": "sync done", "level": "info", "success": False,
                           "error": "upstream returned 401"})  # fmt: skip
    assert failed.level == "error" and failed.error == "upstream returned 401"


def test_a_logrus_records_error_detail_is_its_error() -> None:
    """The Distribution registry writes ``msg="response completed with error"`` and the
    error itself in ``err.detail`` (``err.message`` says only "unknown error")."""
    line = (
        'time="2026-02-17T13:17:02Z" level=error msg="response completed with error" '
        'err.code=unknown err.detail="filesystem: mkdir /var/lib/registry/x: no space left on '
        'device" err.message="unknown error" http.response.status=500'
    )
    pl = parse_record({"message": line})
    assert pl.error is not None and "no space left on device" in pl.error
    assert pl.status == "500"
