"""``opsmate diagnose`` keeps its incidents; ``opsmate history`` lists them.

A second alert for the same subject and cause names the first incident as ``H1``; the
demo is never kept; ``history.enabled: false`` keeps nothing; a damaged history file
costs no report (said on stderr) and is exit 2 for ``opsmate history``, naming it."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from opsmate.history.record import IncidentRecord
from opsmate.history.store import HistoryStore

REPO = Path(__file__).resolve().parents[2]
BUNDLE = REPO / "src" / "opsmate" / "data" / "demo" / "01-pool-exhaustion"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    """``opsmate ARGS`` in this process (the console script's entry point, output captured)."""
    from opsmate.cli import main

    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(args, int(exc.value.code or 0), out, err)


def history(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    return run(capsys, "history", *args)


def alert_file(tmp: Path, name: str, starts: str) -> Path:
    body = {
        "version": "4",
        "status": "firing",
        "alerts": [
            {
                "status": "firing",
                "labels": {"alertname": name, "service": "order-service", "namespace": "shop"},
                "annotations": {"summary": "order-service error rate rose"},
                "startsAt": starts,
                "fingerprint": f"fp-{name}",
            }
        ],
    }
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def diagnose(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    proc = run(capsys, "diagnose", "--bundle", str(BUNDLE), "--model", "none", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


def history_path() -> Path:
    return Path(os.environ["OPSMATE_DATA_DIR"]) / "history.sqlite3"


def test_a_second_alert_for_the_same_subject_and_cause_shows_the_first_as_h1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = diagnose(
        capsys, "--alert-file", str(alert_file(tmp_path, "OrderHigh5xx", "2026-10-21T02:02:00Z"))
    )
    assert first["seen_before"] == []
    second = diagnose(
        capsys,
        "--alert-file",
        str(alert_file(tmp_path, "OrderPoolSaturated", "2026-10-21T02:05:00Z")),
    )
    (h1,) = second["seen_before"]
    assert h1["id"] == "H1" and h1["time"] == "2026-10-21T02:02:00Z"
    assert h1["alertnames"] == ["OrderHigh5xx"] and h1["cause_kind"] == "saturation"
    assert h1["report"] is None  # diagnose printed its report; it wrote no file
    # the same alert again is the same incident: never "seen before" itself
    again = diagnose(
        capsys,
        "--alert-file",
        str(alert_file(tmp_path, "OrderPoolSaturated", "2026-10-21T02:05:00Z")),
    )
    assert [h["alertnames"] for h in again["seen_before"]] == [["OrderHigh5xx"]]
    listed = json.loads(history(capsys, "--json").stdout)
    assert listed["count"] == 3 and listed["path"] == str(history_path())
    assert {i["origin"] for i in listed["incidents"]} == {"diagnose"}


def test_the_demo_is_never_kept_and_disabled_history_keeps_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "diagnose", "--demo", "--json").returncode == 0
    assert not history_path().exists()
    cfg = tmp_path / "c.yaml"
    cfg.write_text("history: {enabled: false}\n", encoding="utf-8")
    assert diagnose(capsys, "--config", str(cfg))["seen_before"] == []
    assert not history_path().exists()
    assert json.loads(history(capsys, "--json").stdout)["count"] == 0


def test_history_filters_and_errors_name_the_flag_or_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    store = HistoryStore(history_path())
    for days, subject in ((60, "order-service"), (1, "order-service"), (2, "payment-service")):
        t = now - timedelta(days=days)
        store.add(
            IncidentRecord(
                time=t,
                recorded_at=t,
                origin="watch",
                subject=subject,
                status="partial",
                summary="s",
                question="q",
            )
        )
    recent = json.loads(history(capsys, "--json", "--since", "30d").stdout)["incidents"]
    assert [(i["subject"], i["time"]) for i in recent] == [
        ("order-service", (now - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")),
        ("payment-service", (now - timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")),
    ]
    piped = history(capsys, "--service", "order-service").stdout.splitlines()
    assert len(piped) == 2 and all(line.split("\t")[3] == "order-service" for line in piped)
    bad = history(capsys, "--since", "lately")
    assert bad.returncode == 2 and "--since 'lately'" in bad.stderr
    history_path().write_bytes(b"not a database" * 200)
    broken = history(capsys)
    assert broken.returncode == 2 and str(history_path()) in broken.stderr
    # a damaged history never costs a report: it is said on stderr
    proc = run(capsys, "diagnose", "--bundle", str(BUNDLE), "--model", "none", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["status"] == "complete"
    assert "the incident history was not used" in proc.stderr and str(history_path()) in proc.stderr
