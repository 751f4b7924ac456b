"""The incident history: the SQLite store (schema, filters, matching, damaged files,
concurrent writers), how subject and cause kind are derived, and the report field
``seen_before`` (context only: never accepted as evidence by the citation check)."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from opsmate.agent.report.model import (
    Report,
    ReportConstraints,
    ReportFact,
    RootCause,
    SeenBefore,
    render_markdown,
    repair,
    validate_citations,
)
from opsmate.history.keeper import seen_before
from opsmate.history.record import IncidentRecord, build_record, cause_kind, workload_name
from opsmate.history.store import SCHEMA_VERSION, HistoryError, HistoryStore

T0 = datetime(2026, 10, 21, 2, 0, tzinfo=UTC)


def rec(**kw: Any) -> IncidentRecord:
    base: dict[str, Any] = dict(
        time=T0,
        recorded_at=T0,
        origin="watch",
        subject="order-service",
        status="complete",
        summary="s",
        question="q",
        cause_kind="saturation",
        cause_kind_source="facts",
        root_cause="pool exhausted (E7)",
        services=["order-service"],
    )
    base.update(kw)
    return IncidentRecord(**base)


def report(statement: str | None = "pool exhausted", **kw: Any) -> Report:
    root = RootCause(statement=statement, confidence=0.8, evidence=["E1"]) if statement else None
    return Report(
        question="why",
        constraints=ReportConstraints(environment="test", services=["order-service"]),
        status="complete" if root else "partial",
        summary="summary",
        root_cause=root,
        **kw,
    )


def test_incidents_are_listed_newest_first_with_filters(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    a = store.add(rec(time=T0, subject="order-service"))
    b = store.add(rec(time=T0 + timedelta(days=1), subject="payment-service", services=[]))
    c = store.add(
        rec(
            time=T0 + timedelta(days=2),
            subject="api-gateway",
            services=["api-gateway", "Order-Service"],
        )
    )
    assert [r.id for r in store.incidents()][:3] == [c, b, a]
    assert [r.id for r in store.incidents(service="ORDER-SERVICE")] == [c, a]
    assert [r.id for r in store.incidents(since=T0 + timedelta(hours=12))] == [c, b]
    assert [r.id for r in store.incidents(limit=1)] == [c]
    d = store.add(rec(subject="batch", services=["pay_ment"]))  # LIKE wildcards are literal
    store.add(rec(subject="batch", services=["payXment"]))
    assert [r.id for r in store.incidents(service="pay_ment")] == [d]
    got = store.incidents(service="payment-service")[0]
    assert got.time == T0 + timedelta(days=1) and got.time.tzinfo is not None
    assert got.to_json()["time"] == "2026-10-22T02:00:00Z" and got.to_json()["id"] == b


def test_similar_needs_the_same_subject_and_cause_kind(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    old = store.add(rec(time=T0 - timedelta(days=400)))  # outside the window
    same = store.add(rec(time=T0, namespace="shop", content_key="k1"))
    store.add(rec(time=T0, cause_kind="oom_killed"))
    store.add(rec(time=T0, subject="payment-service"))
    store.add(rec(time=T0, namespace="staging"))
    later = store.add(rec(time=T0 + timedelta(hours=1)))
    now = rec(time=T0 + timedelta(days=3), namespace="shop", content_key="k2")
    found = store.similar(now, within=timedelta(days=365), limit=5)
    assert [r.id for r in found] == [later, same] and old not in [r.id for r in found]
    assert [r.id for r in store.similar(now, within=timedelta(days=365), limit=1)] == [later]
    # the same notification again is not a recurrence of itself
    again = rec(time=T0, namespace="shop", content_key="k1")
    assert same not in [r.id for r in store.similar(again, within=timedelta(days=9), limit=9)]
    assert store.similar(rec(cause_kind=None), within=timedelta(days=9), limit=9) == []
    assert store.similar(rec(subject=""), within=timedelta(days=9), limit=9) == []


def test_resolution_is_the_outcome(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    store.add(rec(group_key="g1"))
    assert store.mark_resolved("g1", T0 + timedelta(minutes=42)) == 1
    (got,) = store.incidents()
    assert got.outcome() == "complete, resolved 2026-10-21T02:42:00Z: pool exhausted (E7)"


def test_a_damaged_or_newer_file_is_an_error_naming_it(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(HistoryError, match=str(junk)):
        HistoryStore(junk).incidents()
    newer = tmp_path / "newer.sqlite3"
    with sqlite3.connect(newer) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(HistoryError, match="written by a newer opsmate"):
        HistoryStore(newer).add(rec())
    with sqlite3.connect(newer) as conn:  # and it was left as it was
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(10):
                HistoryStore(path).add(rec(subject=f"svc-{n}-{i}"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(HistoryStore(path).incidents()) == 40


def test_cause_kind_from_hypothesis_then_facts_then_words() -> None:
    r = report("order-service: PoolTimeout: QueuePool limit of size 10 reached")
    assert cause_kind(r) == ("saturation", "statement")
    facts = [
        SimpleNamespace(kind="error_rate", evidence=["E1"]),  # a symptom is no cause
        SimpleNamespace(kind="oom_killed", evidence=["E1"]),
    ]
    assert cause_kind(r, facts) == ("oom_killed", "facts")
    with_kind = report("x").model_dump(by_alias=True)
    with_kind["hypotheses"] = [
        {"statement": "x", "status": "confirmed", "evidence": ["E1"], "kind": "pool_exhaustion"}
    ]

    class WithKinds(Report):  # hypotheses as they read once the engine names their kind
        def to_json(self) -> dict[str, Any]:
            return with_kind

    assert cause_kind(WithKinds.model_validate(with_kind), facts) == (
        "pool_exhaustion",
        "hypothesis",
    )
    assert cause_kind(report(None)) == (None, "none")
    assert cause_kind(report("something odd happened")) == (None, "none")
    assert cause_kind(report("container was OOMKilled at its 512Mi limit"))[0] == "oom_killed"
    assert cause_kind(report("image pull failed: manifest unknown"))[0] == "image_pull"


def test_subject_and_record_from_a_report() -> None:
    assert workload_name("order-service-7d9f8b6c4-x2x9k") == "order-service"
    assert workload_name("nightly-abc12") == "nightly" and workload_name("db-0") == "db-0"
    alert = SimpleNamespace(
        labels={
            "alertname": "A",
            "pod": "web-7d9f8b6c4-x2x9k",
            "namespace": "shop",
            "api_token": "s3cr3t-" + "x" * 30,
        },
        status="firing",
        starts_at=T0,
        fingerprint="fp1",
        name="A",
    )
    r = report("pool exhausted", next_steps=[])
    got = build_record(r, origin="diagnose", alerts=[alert], now=T0 + timedelta(hours=1))
    assert got.subject == "web" and got.namespace == "shop" and got.time == T0
    assert got.alertnames == ["A"] and got.content_key and got.cause_kind == "saturation"
    assert got.alert_labels[0]["api_token"] == "[REDACTED]"  # labels pass the redactor
    engine_subject = SimpleNamespace(names=["order-service"], namespace=None)
    assert build_record(r, origin="watch", subject=engine_subject, alerts=[alert]).subject == (
        "order-service"
    )
    plain = build_record(r, origin="diagnose", now=T0)
    assert plain.subject == "order-service" and plain.time == T0 and plain.content_key is None


def test_seen_before_is_context_never_evidence() -> None:
    past = [rec(id=7, report_path="/out/a.json", alertnames=["A"])]
    (h1,) = seen_before(past)
    assert h1.id == "H1" and h1.incident == 7 and h1.time == "2026-10-21T02:00:00Z"
    assert h1.outcome == "complete: pool exhausted"  # that report's (E7) is not shown
    r = report("pool exhausted").model_copy(update={"seen_before": [h1]})
    r.evidence = []  # E1 does not resolve: the check below still sees only E/R ids
    assert validate_citations(r) == ["E1"]
    assert "H1" not in r.known_ids()
    cites_h1 = r.model_copy(deep=True)
    cites_h1.facts = [ReportFact(statement="it happened before", evidence=["H1"])]
    fixed, changes = repair(cites_h1)
    assert fixed.facts == [] and any("H1" in c for c in changes)  # H1 is no evidence
    assert fixed.seen_before == [h1]
    md = render_markdown(r)
    assert "## Seen before (past incidents, not evidence for this one)" in md
    assert "**H1** 2026-10-21T02:00:00Z · order-service · complete: pool exhausted" in md
    assert SeenBefore.model_validate(h1.model_dump()) == h1
