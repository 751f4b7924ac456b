"""Bundle replay's filter reads only what a call needs (the records of the service asked
for, their levels one by one) and must find exactly what parsing every record finds,
whatever the order of the calls; log_stats counts a whole scan in one batch as it
counted record by record."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from opsmate.loganalysis.parse import canonical_level, parse_record
from opsmate.loganalysis.stats import StatsBuilder, stream_of
from opsmate.tools.bundle import load_bundle
from opsmate.tools.bundle.replay_logs import filter_logs
from opsmate.tools.shaping import expand_levels

T0 = datetime(2031, 4, 2, 8, 0, tzinfo=UTC)
SERVICES = ["cart", "Cart", "ledger", None, "", 7]
MESSAGES = [
    "GET /api/v1/items/42 200 12ms",
    "Could not resolve host: db",
    "ERROR: disk full",
    "[WARN] retrying in 5s",
    '{"level": "error", "message": "pool timeout", "service": "ledger"}',
    '{"message": "no level here", "service": "CART"}',
    '{"level": "info", "msg": "served", "duration_ms": 12, "status": 200}',
    "time=2031-04-02T08:00:00Z level=error msg=x service=cart",
    "a=1 b=2",
    "panic: runtime error",
]
LEVELS: list[Any] = [None, "info", "ERROR", "warn", "bogus"]


def _ts(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


@pytest.fixture(scope="module")
def bundle_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cols")
    rnd = random.Random(3)
    lines = []
    for i in range(600):
        rec: dict[str, Any] = {
            "@timestamp": _ts(T0 + timedelta(seconds=rnd.randint(0, 3600))),  # unsorted
            "message": rnd.choice(MESSAGES),
            "environment": rnd.choice(["test", "test", "prod"]),
            "pod": f"p-{i % 7}",
        }
        svc, lv = rnd.choice(SERVICES), rnd.choice(LEVELS)
        if svc is not None:
            rec["service"] = svc
        if lv is not None:
            rec["level"] = lv
        lines.append(json.dumps(rec))
    (root / "logs.ndjson").write_text("\n".join(lines) + "\n")
    meta = {
        "format": "opsmate-bundle/v1",
        "title": "t",
        "captured_at": _ts(T0 + timedelta(hours=1)),
        "window": {"from": _ts(T0), "to": _ts(T0 + timedelta(hours=1))},
        "environment": "test",
    }
    (root / "bundle.yaml").write_text(yaml.safe_dump(meta))
    return root


def _expected(
    b: Any, start: datetime, end: datetime, svc: str | None, level: str | None
) -> list[int]:
    d = b.replay.d
    wanted = expand_levels(level)
    wanted = None if wanted is None else {canonical_level(v) or v for v in wanted}
    hits = []
    for i, rec in enumerate(d.logs):
        t = d.log_times[i]
        if t < start or t > end or rec.get("environment") not in (None, "test"):
            continue
        pl = parse_record(rec)
        if svc is not None:
            field = str(rec.get("service") or "").lower()
            if field != svc.lower() and (pl.service or "").lower() != svc.lower():
                continue
        if wanted is not None and pl.level not in wanted:
            continue
        hits.append(i)
    hits.sort(key=lambda i: d.log_times[i].timestamp())
    return hits[::-1]


CALLS = [
    ("cart", "error"), (None, None), ("ledger", None), (None, "error"), ("CART", "info"),
    ("nobody", None), ("cart", None), (None, "warn"), ("ledger", "error"),
]  # fmt: skip


@pytest.mark.parametrize("order", [CALLS, CALLS[::-1], CALLS[3:] + CALLS[:3]])
def test_filter_finds_what_parsing_every_record_finds(
    bundle_dir: Path, order: list[tuple[str | None, str | None]]
) -> None:
    b = load_bundle(bundle_dir)
    start, end = T0 + timedelta(minutes=5), T0 + timedelta(minutes=50)
    for svc, level in order:
        hits, complete = filter_logs(
            b.replay, start=start, end=end, env="test", service=svc, level=level
        )
        assert complete
        assert hits == _expected(b, start, end, svc, level), (svc, level)


def test_a_batch_counts_as_records_one_by_one(bundle_dir: Path) -> None:
    b = load_bundle(bundle_dir)
    d = b.replay.d
    rows = [
        (parse_record(rec), d.log_times[i], rec.get("service"), i, None, stream_of(rec))
        for i, rec in enumerate(d.logs)
    ]
    rows[5] = (rows[5][0], None, *rows[5][2:])  # a record without a time
    one, many = (StatsBuilder(start=T0, end=T0 + timedelta(hours=1), ref_of=str) for _ in range(2))
    for row in rows:
        one.add(*row)
    many.add_many(rows)
    assert one.result() == many.result()
