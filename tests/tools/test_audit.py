"""The audit log: one JSON line per call, schema version, never breaks a call."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from opsmate.tools.audit import SCHEMA_VERSION, AuditLog, read_records
from opsmate.tools.base import ToolErrorInfo, ToolResult


def _result(i: int, status: str = "success") -> ToolResult:
    err = (
        ToolErrorInfo(code="timeout", message="slow", retryable=True) if status == "error" else None
    )
    return ToolResult(
        call_id=f"call_{i:03d}",
        tool="search_logs",
        status=status,  # type: ignore[arg-type]
        elapsed_ms=12,
        redactions=2,
        error=err,
    )


def test_record_fields_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "audit.jsonl"
    log = AuditLog(path)
    log.record(_result(1), {"query": "x"}, {"environment": "test"})
    log.record(_result(2, "error"), {}, {})
    lines = path.read_text().splitlines()
    assert len(lines) == 2
    first = json.loads(lines[0])
    assert set(first) == {
        "schema_version",
        "time",
        "call_id",
        "tool",
        "args",
        "scope",
        "status",
        "error_code",
        "elapsed_ms",
        "redactions",
    }
    assert first["schema_version"] == SCHEMA_VERSION == 1
    assert first["args"] == {"query": "x"} and first["scope"] == {"environment": "test"}
    assert (first["elapsed_ms"], first["redactions"], first["error_code"]) == (12, 2, None)
    records = list(read_records(path))
    assert [r["status"] for r in records] == ["success", "error"]
    assert records[1]["error_code"] == "timeout"


def test_torn_lines_are_skipped_on_read(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    AuditLog(path).record(_result(1), {}, {})
    with path.open("a") as fh:
        fh.write('{"schema_version": 1, "call_id": "call_0')
    assert [r["call_id"] for r in read_records(path)] == ["call_001"]
    assert list(read_records(tmp_path / "missing.jsonl")) == []


def test_unwritable_log_does_not_raise(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a dir")
    log = AuditLog(blocker / "audit.jsonl")
    log.record(_result(1), {}, {})  # must not raise
    log.record(_result(2), {}, {})


def test_concurrent_records_stay_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path)
    big = {"query": "x" * 5000}

    def writer(base: int) -> None:
        for i in range(50):
            log.record(_result(base + i), big, {})

    threads = [threading.Thread(target=writer, args=(k * 100,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    records = list(read_records(path))
    assert len(records) == 200
    assert all(r["args"] == big for r in records)
