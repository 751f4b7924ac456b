"""The webhook body parser: good bodies parse, bad ones name the key that is wrong."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from opsmate.alerting.webhook import parse_webhook, parse_webhook_bytes, read_webhook_file
from opsmate.errors import InputError

DATA = Path(__file__).parent / "data"


def good() -> dict[str, Any]:
    return json.loads((DATA / "03-node-disk-full.json").read_text(encoding="utf-8"))


def test_a_real_shaped_body_parses() -> None:
    msg = parse_webhook(good())
    assert msg.status == "firing"
    assert msg.group_key == '{}:{alertname="KubePodEvicted"}'
    assert [a.name for a in msg.alerts] == ["KubePodEvicted", "ApiGatewayHigh5xxRate"]
    first = msg.alerts[0]
    assert first.labels["pod"] == "order-service-7b9c8d6f5-w2x8r"
    assert first.starts_at is not None and first.starts_at.isoformat() == (
        "2026-11-11T19:16:40+00:00"
    )
    assert first.ends_at is None  # Alertmanager's zero time means "not set"
    assert first.fingerprint == "1111aaaa2222bbbb"
    assert msg.alertname == "KubePodEvicted"
    assert len(msg.firing) == 2


def _broken(path: list[Any], value: Any, delete: bool = False) -> dict[str, Any]:
    body = copy.deepcopy(good())
    target: Any = body
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return body


@pytest.mark.parametrize(
    ("path", "value", "delete", "named"),
    [
        (["version"], None, True, "version: missing"),
        (["version"], "3", False, "version: version '3' is not supported"),
        (["status"], "burning", False, "status: must be firing or resolved"),
        (["alerts"], None, True, "alerts: missing"),
        (["alerts"], [], False, "alerts: is empty"),
        (["alerts"], {"a": 1}, False, "alerts: must be a list"),
        (["alerts", 1, "labels", "alertname"], None, True, "alerts[1].labels.alertname: missing"),
        (["alerts", 0, "labels"], None, True, "alerts[0].labels: missing"),
        (["alerts", 0, "labels", "pod"], 7, False, "alerts[0].labels.pod: must be a string"),
        (["alerts", 1, "startsAt"], "yesterday", False, "alerts[1].startsAt: not an RFC 3339"),
        (["alerts", 0, "startsAt"], None, True, "alerts[0].startsAt: missing"),
        (["alerts", 0, "status"], "ok", False, "alerts[0].status: must be firing or resolved"),
        (["commonLabels"], ["x"], False, "commonLabels: must be an object"),
        (["truncatedAlerts"], -1, False, "truncatedAlerts: must be a whole number"),
    ],
)
def test_bad_bodies_name_the_key(path: list[Any], value: Any, delete: bool, named: str) -> None:
    with pytest.raises(InputError) as err:
        parse_webhook(_broken(path, value, delete), where="hook.json")
    assert f"hook.json: {named}" in err.value.message


def test_not_an_object_and_bad_json_are_named() -> None:
    with pytest.raises(InputError, match=r"\(top level\): must be a JSON object"):
        parse_webhook([1, 2])
    with pytest.raises(InputError, match=r"body:1:13: invalid JSON"):
        parse_webhook_bytes(b'{"version": ', where="body")


def test_a_hand_written_body_without_group_key_gets_one() -> None:
    body = good()
    del body["groupKey"]
    msg = parse_webhook(body)
    assert "KubePodEvicted" in msg.group_key and "ApiGatewayHigh5xxRate" in msg.group_key


def test_resolved_alerts_are_kept_apart() -> None:
    body = good()
    body["alerts"][0]["status"] = "resolved"
    body["alerts"][0]["endsAt"] = "2026-11-11T19:40:00Z"
    msg = parse_webhook(body)
    assert [a.name for a in msg.firing] == ["ApiGatewayHigh5xxRate"]
    assert msg.alerts[0].ends_at is not None


def test_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_webhook_file(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": "4", "status": "firing", "alerts": [{}]}', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.json: alerts\[0\].labels: missing"):
        read_webhook_file(bad)
    assert read_webhook_file(DATA / "01-pool-exhaustion.json").alerts[0].name == (
        "OrderServiceHigh5xxRate"
    )
