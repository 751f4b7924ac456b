"""logs.ndjson read through orjson where it can be: what is accepted, refused and built is
what ``json.loads`` and ``parse_time`` give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opsmate.errors import BundleError
from opsmate.timeparse import parse_time
from opsmate.tools.bundle.load import (
    LoadedData,
    _iso_time,
    _no_surrogates,
    load_logs,
    load_meta,
)

META = (
    "format: opsmate-bundle/v1\ntitle: t\ncaptured_at: '2031-04-02T09:00:00Z'\n"
    "window: {from: '2031-04-02T08:00:00Z', to: '2031-04-02T09:00:00Z'}\nenvironment: test\n"
)


def _load(tmp_path: Path, raw: bytes) -> LoadedData:
    (tmp_path / "bundle.yaml").write_text(META)
    (tmp_path / "logs.ndjson").write_bytes(raw)
    data = LoadedData(meta=load_meta(tmp_path), expected=None)
    load_logs(tmp_path, data)
    return data


def test_values_json_reads_differently_from_orjson_are_json_s(tmp_path: Path) -> None:
    lines = [
        b'{"@timestamp": "2031-04-02T08:00:00Z", "message": "a", "n": 123456789012345678901234}',
        b'{"@timestamp": "2031-04-02T08:00:01Z", "message": "b", "x": NaN, "y": -Infinity}',
        b'{"@timestamp": "2031-04-02T08:00:02Z", "message": "\\ud800 lone", "k": 1, "k": 2}',
        b'{"@timestamp": "2031-04-02T08:00:03+02:00", "message": "\\ud83d\\ude00 pair"}',
        b"",
        b'  {"@timestamp": 1900000000, "message": "unix", "f": 1e400}  ',
    ]
    data = _load(tmp_path, b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n")
    want = [json.loads(x) for x in lines if x.strip()]
    assert [list(r) for r in data.logs] == [list(r) for r in want]
    assert data.logs[0]["n"] == 123456789012345678901234
    assert data.logs[1]["x"] != data.logs[1]["x"]  # NaN
    assert data.logs[2] == _no_surrogates(want[2])  # what reading with json alone gave
    assert data.logs[2]["message"].endswith("\ufffd lone") and data.logs[2]["k"] == 2
    assert data.logs[3]["message"] == "\U0001f600 pair"
    assert data.log_lines == [1, 2, 3, 4, 6]
    assert data.log_times == [parse_time(r["@timestamp"]) for r in want]


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (b'{"@timestamp": "2031-04-02T08:00:00Z", "message": "\xff"}\n', "ndjson:1: not UTF-8"),
        (b'{"@timestamp": "x", "message": "a"}\n', "logs.ndjson:1: @timestamp: bad time"),
        (b'{"message": "a"}\n', "logs.ndjson:1: missing '@timestamp'"),
        (b'{"@timestamp": "2031-04-02T08:00:00Z"}\n', "logs.ndjson:1: missing 'message'"),
        (b'{"@timestamp": "2031-04-02T08:00:00Z", "message": 3}\n', "must be a string"),
        (b"[1, 2]\n", "logs.ndjson:1: expected a JSON object"),
        (b"{nope}\n", "logs.ndjson:1: not valid JSON"),
        (b'{"@timestamp": "2031-04-02T08:00:00Z", "message": "a", "d": ' + b"[" * 150
         + b"]" * 150 + b"}\n", "nested deeper than 100"),
    ],
)  # fmt: skip
def test_refusals_are_unchanged(tmp_path: Path, raw: bytes, error: str) -> None:
    with pytest.raises(BundleError, match=error.replace("(", r"\(")):
        _load(tmp_path, raw)


@pytest.mark.parametrize(
    "text",
    [
        "2031-04-02T08:00:00Z", "2031-04-02T08:00:00.123456+05:30", "2031-04-02 08:00:00",
        "2031-04-02T08:00:00z", "2031-04-02", "2031-04-02T08:00:00Z ", "20310402T080000Z",
        "1900000000", "now", "-30m", "2031-13-45T00:00:00Z", "1-2",
    ],
)  # fmt: skip
def test_iso_time_is_parse_time(text: str) -> None:
    fast = _iso_time(text)
    try:
        slow = parse_time(text)
    except ValueError:
        assert fast is None
        return
    assert fast is None or (fast == slow and fast.utcoffset() == slow.utcoffset())
