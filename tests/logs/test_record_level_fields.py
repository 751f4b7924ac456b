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
