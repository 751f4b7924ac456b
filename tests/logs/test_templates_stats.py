"""Templates (Drain), the log_stats builder, and what messages say (signals)."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

from opsmate.loganalysis.parse import parse_line, parse_record
from opsmate.loganalysis.signals import classify, hosts_in
from opsmate.loganalysis.stats import StatsBuilder, example_text
from opsmate.loganalysis.templates import TemplateMiner, mask_message
from opsmate.records.logs import LogStats
from opsmate.tools.shaping import log_stats

T0 = datetime(2031, 4, 2, 8, 0, tzinfo=UTC)


# --------------------------------------------------------------------------- templates


def test_drain_groups_variants_and_keeps_different_messages_apart() -> None:
    m = TemplateMiner()
    a = m.add("user 1042 logged in from 10.0.0.7")
    b = m.add("user 877 logged in from 10.0.3.1")
    c = m.add("cache warmed with 300 entries")
    d = m.add("worker alpha picked job 17")
    e = m.add("worker beta picked job 18")
    assert a == b and a != c and d == e
    assert m.template(a) == "user <num> logged in from <ip>"
    assert m.template(d) == "worker <*> picked job <num>"  # Drain turned the varying word
    assert mask_message("took 35ms then 1.5s, id 7f3a9c2e01") == "took <dur> then <dur>, id <id>"


def test_json_lines_with_the_same_keys_do_not_collapse() -> None:
    b = StatsBuilder()
    for i in range(50):
        line = {"level": "INFO", "message": "order accepted", "order": i, "request_id": f"r{i}"}
        b.add(parse_line(json.dumps(line)), T0 + timedelta(seconds=i), "shop")
    err = {"level": "ERROR", "message": "card vault unreachable", "order": 51, "request_id": "r51"}
    b.add(parse_line(json.dumps(err)), T0 + timedelta(seconds=60), "shop")
    out = b.result()
    patterns = {g["pattern"] for g in out["top_messages"]}
    assert patterns == {"order accepted", "card vault unreachable"}
    assert out["by_level"] == {"info": 50, "error": 1}


def test_miner_stays_bounded_on_messages_of_unbounded_variety() -> None:
    rnd = random.Random(3)
    words = ["".join(rnd.choice("abcdefghij") for _ in range(6)) for _ in range(400)]
    m = TemplateMiner(max_insertions=300)
    for _ in range(2000):
        m.add(" ".join(rnd.choice(words) for _ in range(5)))
    assert m.insertions == 300 and len(m) > 300  # the rest grouped by their masked text


# --------------------------------------------------------------------------- builder


def _stats(lines: list[tuple[int, str]], **kw: object) -> LogStats:
    b = StatsBuilder(start=T0, end=T0 + timedelta(minutes=60), **kw)  # type: ignore[arg-type]
    for i, (minute, line) in enumerate(lines):
        b.add(parse_line(line), T0 + timedelta(minutes=minute, seconds=i % 50), "shop", i)
    parsed = LogStats.model_validate(b.result())
    return parsed


def test_levels_written_and_inferred_are_kept_apart_and_info_is_never_an_error() -> None:
    stats = _stats(
        [(1, "INFO connection refused counter reset")]  # written INFO, words of an error
        + [(2, "could not resolve host: ledger.internal")] * 3  # unleveled: inferred error
        + [(3, "[WARN] slow disk")]
    )
    assert stats.by_level == {"info": 1, "unknown": 3, "warn": 1}
    assert stats.by_level_inferred == {"error": 3}
    groups = {g.pattern: g for g in stats.groups()}
    info = next(g for p, g in groups.items() if p.startswith("connection refused"))
    assert info.severity == "info" and info.errors == 0 and info.signal is None
    dns = next(g for p, g in groups.items() if p.startswith("could not resolve"))
    assert dns.severity == "error" and dns.inferred and dns.errors == 3
    assert dns.levels_inferred == {"error": 3} and dns.levels == {}
    assert dns.signal == "dependency" and dns.reason == "dns" and dns.targets == ["ledger.internal"]


def test_a_single_error_among_many_info_lines_is_a_rare_error() -> None:
    lines = [(m % 60, f"GET /api/items/{m} 200 in {m % 90}ms") for m in range(3000)]
    lines += [(m % 60, "health ok") for m in range(2000)]
    lines.insert(4000, (41, "ERROR could not acquire connection from pool after 30s"))
    stats = _stats(lines, top=2)
    assert [g.count for g in stats.top_messages] == [3000, 2000]
    assert len(stats.rare_errors) == 1
    needle = stats.rare_errors[0]
    assert needle.count == 1 and needle.example.endswith("after 30s")
    assert needle.signal == "saturation" and needle.reason == "pool_exhausted"
    assert needle.first_seen is not None and needle.first_seen.minute == 41
    assert needle.timeline[8] == 1 and sum(needle.timeline) == 1  # minute 41 of 60: bucket 8


def test_latency_percentiles_timeline_and_shift_from_fields() -> None:
    lines = []
    for m in range(60):
        ms = 40 + m % 7 if m < 30 else 900 + m % 11  # slow from minute 30
        body = {"level": "info", "message": "served", "path": "/api/cart/9", "method": "GET",
                "status": 200 if m % 10 else 503, "duration_ms": ms}  # fmt: skip
        lines.append((m, json.dumps(body)))
    stats = _stats(lines)
    lat = stats.latency[0]
    assert lat.key == "GET /api/cart/{id}" and lat.source == "duration_ms" and lat.count == 60
    assert lat.p50_ms is not None and 40 <= lat.p50_ms <= 910
    assert lat.p99_ms is not None and lat.p99_ms >= 900
    assert lat.shift is not None and lat.shift.at is not None and lat.shift.at.minute == 30
    assert lat.shift.after_p50_ms is not None and lat.shift.after_p50_ms > 800
    assert lat.timeline_p50_ms[0] is not None and lat.timeline_p50_ms[0] < 50
    st = stats.status[0]
    assert st.key == "GET /api/cart/{id}" and st.codes == {"200": 54, "503": 6}
    assert st.errors == 6 and st.error_ratio == 0.1 and sum(st.timeline_errors) == 6
    assert stats.timeline["total"] and sum(stats.timeline["total"]) == 60


def test_durations_written_in_text_are_latency_too() -> None:
    stats = _stats([(m, f"report rendered in {4 + m % 3}.5 seconds") for m in range(20)])
    lat = stats.latency[0]
    assert lat.source == "text" and lat.key == "report rendered in <num> seconds"
    assert lat.p50_ms == 5500.0 and lat.max_ms == 6500.0


def test_outcome_words_count_as_failed_requests() -> None:
    lines = [
        (m, json.dumps({"message": "call done", "endpoint": "/upstream", "status": s}))
        for m, s in enumerate(["success"] * 8 + ["timeout"] * 2)
    ]
    st = _stats(lines).status[0]
    assert st.codes == {"success": 8, "timeout": 2} and st.errors == 2


def test_gauges_that_grow_towards_their_limit() -> None:
    lines = [
        (m, json.dumps({"level": "info", "message": "mem", "rss_mb": 100 + 30 * m,
                        "rss_limit_mb": 2048}))
        for m in range(60)
    ]  # fmt: skip
    g = _stats(lines).gauges[0]
    assert g.field == "rss_mb" and g.first == 100 and g.last == 1870 and g.limit == 2048
    assert g.rising == 1.0 and len(g.series) == 12


def test_shaping_log_stats_keeps_its_contract() -> None:
    recs = [
        {"@timestamp": "2031-04-02T08:00:00Z", "level": "ERROR", "message": "x failed 1", "id": 1},
        {"@timestamp": "2031-04-02T08:01:00Z", "level": "error", "message": "x failed 2", "id": 2},
        {"@timestamp": "2031-04-02T08:02:00Z", "message": "fine"},
    ]
    out = log_stats(recs, ref_of=lambda r: f"log://s/{r['id']}" if "id" in r else "log://s/-")
    assert out["total"] == 3 and out["by_level"] == {"error": 2, "unknown": 1}
    top = out["top_messages"][0]
    assert top["pattern"] == "x failed <num>" and top["example"] == "x failed 1"
    assert top["example_ref"] == "log://s/1"
    assert log_stats([])["top_messages"] == []


def test_two_hundred_thousand_records() -> None:
    b = StatsBuilder(start=T0, end=T0 + timedelta(hours=1))
    rnd = random.Random(5)
    for i in range(200_000):
        t = T0 + timedelta(milliseconds=18 * i)
        if i == 151_515:
            line = '{"level": "ERROR", "message": "ledger write rejected: disk full"}'
        else:
            line = f'{{"level": "INFO", "message": "ok", "latency_ms": {rnd.randint(1, 90)}}}'
        b.add(parse_line(line), t, "ledger", i)
    out = LogStats.model_validate(b.result())
    assert out.total == 200_000 and out.by_level == {"info": 199_999, "error": 1}
    assert out.rare_errors == [] and out.top_messages[1].example.startswith("ledger write")
    assert out.latency[0].count == 199_999


# --------------------------------------------------------------------------- signals


def test_signals_of_common_messages() -> None:
    assert classify("Environment variable SHOP_REGION is undefined").targets == ("SHOP_REGION",)
    assert classify("KeyError: 'QUEUE_URL'").reason == "missing_key"
    assert classify("x509: certificate has expired or is not yet valid").reason == "certificate"
    # the platforms' words for a certificate past its validity, and for one not valid yet
    for expired in ("The remote certificate is invalid because of errors in the certificate "
                    "chain: NotTimeValid", "request to https://api failed, reason: "
                    "CERT_HAS_EXPIRED", "java.security.cert.CertificateExpiredException: "
                    "NotAfter: Sat Mar 14 06:00:00 UTC 2026"):  # fmt: skip
        assert classify(expired).reason == "certificate", expired
    for early in ("x509: certificate has expired or is not yet valid: current time "
                  "2026-01-01T10:00:00Z is before 2026-01-01T11:00:00Z",
                  "IDX10222: Lifetime validation failed. The token is not yet valid.",
                  '{"message": "Token used before issued", "status_code": 401}',
                  "NotBeforeError: jwt not active"):  # fmt: skip
        assert classify(early).reason == "not_yet_valid", early
    dns = classify("dial tcp: lookup ledger-db on 10.96.0.10:53: no such host")
    assert dns.kind == "dependency" and dns.reason == "dns" and dns.targets[0] == "ledger-db"
    ref = classify("lost connection to cache: ECONNREFUSED kv-primary:6380")
    assert ref.reason == "refused" and ref.targets[0] == "kv-primary:6380"
    upstream = classify("checkout failed - inventory-api returned 503")
    assert upstream.kind == "dependency" and "inventory-api" in upstream.targets
    assert classify("java.lang.OutOfMemoryError: Java heap space").reason == "out_of_memory"
    assert classify("feature flag new-pricing enabled for 10% of users").kind == "change"
    assert classify("leader election won, promoted to primary").reason == "failover"
    assert classify("Initializing connection pool of 20").kind is None  # just words
    assert classify("all systems nominal").kind is None


def test_hosts_in_prefers_specific_names_and_skips_timestamps() -> None:
    assert (
        hosts_in("connect to Redis failed: kv-1.internal:6379 refused")[0] == "kv-1.internal:6379"
    )
    assert hosts_in("2031-04-02T08:00:01 upstream T08:00 closed") == []
    assert parse_record({"message": "x", "host": "db-1"}).host is None  # a record's own host


def test_frames_doc_links_and_function_lines_name_no_dependency() -> None:
    # a Node.js core-module frame, a link to documentation, a logger's function:line
    assert hosts_in("getaddrinfo EAI_AGAIN orders-api at onlookup (node:dns:120:26)") == [
        "orders-api"
    ]
    assert hosts_in("Timed out fetching a connection. More info: http://docs.example/pool") == []
    assert hosts_in("ERROR | django.request:log_response:241 - Internal Server Error") == []
    assert hosts_in("connect ECONNREFUSED 10.4.0.7:6379") == ["10.4.0.7:6379"]
    sig = classify("getaddrinfo ENOTFOUND search-svc")
    assert sig.reason == "dns" and sig.targets == ("search-svc",)


def test_a_pool_that_gives_no_connection_is_exhausted_not_a_timeout_of_a_dependency() -> None:
    sig = classify(
        "Invalid `prisma.order.findMany()` invocation: Timed out fetching a new connection "
        "from the connection pool. More info: http://docs.example/pool"
    )
    assert (sig.kind, sig.reason) == ("saturation", "pool_exhausted")


def test_a_response_body_quoted_on_a_long_line_keeps_the_servers_message() -> None:
    body = (
        '[{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods '
        'is forbidden: User \\"system:serviceaccount:shop:cart\\" cannot list resource \\"pods\\" '
        'in API group \\"\\" in the namespace \\"shop\\"","reason":"Forbidden","code":403}]'
    )
    line = (
        "[2026-03-24 13:40:23,026] [WARN] [discovery.KubeApiLookup]"
        " [cart-dispatcher-14] - "
        "Forbidden to list peers from the Kubernetes API server. "
        f"Response: {body}"
    )
    shown = example_text(parse_record({"message": line, "level": "warn"}))
    assert shown.endswith(
        '… pods is forbidden: User "system:serviceaccount:shop:cart" cannot list resource "pods" '
        'in API group "" in the namespace "shop"'
    )


def test_a_grpc_clients_deadline_or_unavailable_is_a_failing_call() -> None:
    sig = classify('request failed {"error": "rpc error: code = DeadlineExceeded desc = '
                   'context deadline exceeded"}')  # fmt: skip
    assert (sig.kind, sig.reason) == ("dependency", "timeout")
    assert classify("rpc error: code = Unavailable desc = connection error").kind == "dependency"
    assert classify("rpc error: code = InvalidArgument desc = bad id").kind is None


def test_limits_that_say_out_of_memory_or_no_space_are_named_for_what_ran_out() -> None:
    native = classify("java.lang.OutOfMemoryError: unable to create native thread: possibly out "
                      "of memory or process/resource limits reached")  # fmt: skip
    assert (native.kind, native.reason) == ("saturation", "pids_exhausted")
    shm = classify('could not resize shared memory segment "/PostgreSQL.1" to 8388608 bytes: '
                   "No space left on device")  # fmt: skip
    assert (shm.kind, shm.reason) == ("saturation", "shm_exhausted")
    assert classify("write /data/wal: no space left on device").reason == "resource_exhausted"
    assert classify("java.lang.OutOfMemoryError: Java heap space").reason == "out_of_memory"


def test_a_template_names_the_first_few_streams_that_wrote_it() -> None:
    b = StatsBuilder()
    for i in range(30):
        pod = f"db-{i % 2}" if i < 20 else f"web-{i}"
        b.add(parse_line("ERROR: no space left on device"), T0 + timedelta(seconds=i), "pg",
              stream=pod)  # fmt: skip
    b.add(parse_line("checkpoint complete"), T0, "pg")  # no stream known: none named
    groups = {g["example"]: g for g in b.result()["top_messages"]}
    assert "streams" not in groups["no space left on device"]  # four pods: everyone's line
    b.add(parse_line("FATAL: could not write lock file"), T0, "pg", stream="db-0")
    b.add(parse_line("FATAL: could not write lock file"), T0, "pg", stream="db-1")
    groups = {g["example"]: g for g in b.result()["top_messages"]}
    assert groups["could not write lock file"]["streams"] == ["db-0", "db-1"]
    assert "streams" not in groups["checkpoint complete"]


def test_a_quoted_response_body_says_what_failed_before_the_exception_that_wraps_it() -> None:
    body = ('{"kind":"Status","status":"Failure","message":"persistentvolumeclaims is forbidden: '
            'User \\"system:serviceaccount:lab:hub\\" cannot create resource '
            '\\"persistentvolumeclaims\\"","reason":"Forbidden","code":403}')  # fmt: skip
    text = ("Unhandled error starting the server: (403)\nReason: Forbidden\nHTTP response "
            f"headers: <{'x' * 300}>\nHTTP response body: {body}\n\nTraceback (most recent call "
            'last):\n  File "/app/spawner.py", line 9, in start\n    raise e\n'
            "kubernetes_asyncio.client.exceptions.ApiException: (403)")  # fmt: skip
    said = example_text(parse_line(text))
    assert said.endswith('cannot create resource "persistentvolumeclaims"')


def test_a_pod_tail_keeps_a_stack_records_exception_lines_and_cuts_its_frames() -> None:
    from opsmate.loganalysis.podlines import compact_stack, line_record

    frames = "".join(f"\n\tat org.apache.kafka.C{i}.m(C.java:{i})" for i in range(12))
    msg = ("ERROR Error while writing to checkpoint file /data/recovery-point\n"
           f"java.io.IOException: No space left on device{frames}\n"
           "Caused by: java.io.IOException: disk\n\tat x.Y.z(Y.java:1)")  # fmt: skip
    short = compact_stack(msg)
    assert "No space left on device" in short and "Caused by: java.io.IOException" in short
    assert "… 9 frames" in short and short.count("\tat org.apache.kafka") == 3
    assert line_record(parse_line(msg))["message"] == short
    assert compact_stack("one\ntwo") == "one\ntwo"
