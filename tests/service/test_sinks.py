"""Sinks against real local HTTP receivers: the Slack-compatible message and the webhook
JSON, redaction and escaping, retries with back-off, final failures, a dead and a hanging
receiver (nothing lost: the report stays in --out and is listed in undelivered.jsonl),
and the configuration errors a user can make."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from sink_receiver import Hanging, Receiver

from opsmate.alerting.delivery import UNDELIVERED, SinkDispatcher
from opsmate.alerting.metrics import WatchMetrics
from opsmate.alerting.sinks import resolve_sinks, slack_escape
from opsmate.config import SinkConfig, load_settings
from opsmate.errors import ConfigError
from opsmate.tools.redact import Redactor

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def report_data() -> dict[str, Any]:
    """A report as watch writes it (report + alert_group), with a planted secret and a
    chat mention in texts that came from data."""
    return {
        "question": "Investigate this alert: OrderServiceHigh5xxRate",
        "constraints": {"environment": "test", "services": ["order-service"], "window": {}},
        "status": "complete",
        "summary": "Root cause: resource exhaustion in order-service.",
        "root_cause": {
            "statement": f"order-service pool exhausted <!channel> (token {SECRET}) (E7)",
            "confidence": 0.85,
            "evidence": ["E7"],
        },
        "chain": [
            {"statement": "order-service returns 500", "evidence": ["E1"]},
            {"statement": "pool at 10 of 10 & <b>", "evidence": ["E7"]},
        ],
        "next_steps": [
            {"action": "check the pool", "kind": "check", "requires_human": True, "evidence": []},
            {"action": "roll back revision 7", "kind": "mitigation", "requires_human": True},
        ],
        "seen_before": [{"id": "H1", "time": "2026-10-01T02:00:00Z", "status": "complete"}],
        "alert_group": {"alertnames": ["OrderServiceHigh5xxRate"], "group_key": "g"},
    }


def write_report(out: Path, name: str = "20261021T020200Z-OrderServiceHigh5xxRate") -> tuple:
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / f"{name}.json", out / f"{name}.md"
    json_path.write_text(json.dumps(report_data()), encoding="utf-8")
    md_path.write_text("# report\n", encoding="utf-8")
    return json_path, md_path


def dispatcher(out: Path, configs: list[dict[str, Any]], logs: list[str], **env: str):
    sinks = resolve_sinks([SinkConfig(**c) for c in configs], environ=env)
    metrics = WatchMetrics()
    d = SinkDispatcher(sinks, out=out, redactor=Redactor(), log=logs.append, metrics=metrics)
    return d, metrics


def sample(metrics: WatchMetrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


def undelivered(out: Path) -> list[dict[str, Any]]:
    path = out / UNDELIVERED
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_slack_and_webhook_receivers_get_the_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    json_path, md_path = write_report(out)
    logs: list[str] = []
    with Receiver() as rx:
        slack_url = rx.url + "/services/T000/B000/XXXXSECRETPATH"
        d, metrics = dispatcher(
            out,
            [
                {
                    "type": "slack",
                    "url_env": "SLACK_URL",
                    "report_url": "https://reports.example/r/{json}",
                },
                {
                    "type": "webhook",
                    "name": "incidents",
                    "url": rx.url + "/hook",
                    "token_env": "HOOK_TOKEN",
                },
            ],
            logs,
            SLACK_URL=slack_url,
            HOOK_TOKEN="hook-token-1",
        )
        d.submit(report_data(), json_path, md_path)
        d.close(timeout=30)
        (slack,) = rx.posts("/services/T000/B000/XXXXSECRETPATH")
        (hook,) = rx.posts("/hook")
    msg = slack["body"]
    assert slack["headers"]["content-type"] == "application/json"
    text = msg["text"]
    assert text.startswith("*[complete] OrderServiceHigh5xxRate*")
    assert "*Root cause:* order-service pool exhausted" in text
    assert "order-service returns 500 → pool at 10 of 10 &amp; &lt;b&gt;" in text  # the chain
    assert "*Next step:* roll back revision 7" in text  # the top mitigation
    link = f"<https://reports.example/r/{json_path.name}|Full report>"
    assert link in text
    assert "<!channel>" not in json.dumps(msg) and "&lt;!channel&gt;" in text
    assert SECRET not in json.dumps(msg) and "[REDACTED]" in text
    kinds = [b["type"] for b in msg["blocks"]]
    assert kinds == ["header", "section", "section", "section", "section", "context"]
    assert "not evidence" in msg["blocks"][4]["text"]["text"]  # seen before: context only
    # the webhook gets the report JSON itself (redacted), named, with its bearer token
    assert hook["headers"]["x-opsmate-report"] == json_path.name
    assert hook["headers"]["authorization"] == "Bearer hook-token-1"
    body = hook["body"]
    assert body["status"] == "complete" and body["alert_group"]["group_key"] == "g"
    assert SECRET not in json.dumps(body)
    assert (
        sample(metrics, "opsmate_watch_sink_deliveries_total", sink="slack1", outcome="delivered")
        == 1
    )
    assert (
        sample(
            metrics, "opsmate_watch_sink_deliveries_total", sink="incidents", outcome="delivered"
        )
        == 1
    )
    assert not any("XXXXSECRETPATH" in line for line in logs)  # a Slack URL path is a secret
    assert undelivered(out) == []


def test_retried_with_back_off_until_delivered(tmp_path: Path) -> None:
    out = tmp_path / "out"
    json_path, md_path = write_report(out)
    logs: list[str] = []
    with Receiver({"/hook": [503, 429, 500]}, retry_after="0") as rx:
        d, metrics = dispatcher(
            out,
            [{"type": "webhook", "url": rx.url + "/hook", "attempts": 5, "backoff_seconds": 0.05}],
            logs,
        )
        d.submit(report_data(), json_path, md_path)
        d.close(timeout=30)
        statuses = [g["status"] for g in rx.posts("/hook")]
    assert statuses == [503, 429, 500, 200]
    assert sample(metrics, "opsmate_watch_sink_retries_total", sink="webhook1") == 3
    assert (
        sample(metrics, "opsmate_watch_sink_deliveries_total", sink="webhook1", outcome="delivered")
        == 1
    )
    assert undelivered(out) == []


def test_a_refusal_is_final_and_listed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    json_path, md_path = write_report(out)
    logs: list[str] = []
    with Receiver({"/hook": [400]}) as rx:
        d, metrics = dispatcher(
            out, [{"type": "webhook", "url": rx.url + "/hook", "backoff_seconds": 0.05}], logs
        )
        d.submit(report_data(), json_path, md_path)
        d.close(timeout=30)
        assert len(rx.posts("/hook")) == 1  # a 400 is not retried
    (line,) = undelivered(out)
    assert line["report"] == json_path.name and line["error"] == "HTTP 400"
    assert line["attempts"] == 1 and line["outcome"] == "failed"
    assert (
        sample(metrics, "opsmate_watch_sink_deliveries_total", sink="webhook1", outcome="failed")
        == 1
    )


def test_a_dead_receiver_loses_no_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    json_path, md_path = write_report(out)
    logs: list[str] = []
    with Receiver() as rx:
        dead_url = rx.url  # a port nothing listens on once the receiver is gone
    d, metrics = dispatcher(
        out,
        [
            {
                "type": "slack",
                "name": "chat",
                "url": dead_url + "/x",
                "attempts": 3,
                "backoff_seconds": 0.05,
            }
        ],
        logs,
    )
    d.submit(report_data(), json_path, md_path)
    d.close(timeout=30)
    (line,) = undelivered(out)
    assert line["sink"] == "chat" and line["attempts"] == 3 and "ConnectError" in line["error"]
    assert json_path.is_file() and md_path.is_file()  # the report itself stays in --out
    assert json.loads(json_path.read_text())["status"] == "complete"
    assert sample(metrics, "opsmate_watch_sink_retries_total", sink="chat") == 2
    assert any("not delivered" in x and "stays in" in x for x in logs)


def test_a_hanging_receiver_blocks_neither_submit_nor_other_sinks(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = write_report(out, "a")
    second = write_report(out, "b")
    logs: list[str] = []
    with Hanging() as stuck, Receiver() as rx:
        d, metrics = dispatcher(
            out,
            [
                {"type": "webhook", "name": "stuck", "url": stuck.url, "timeout": 60},
                {"type": "webhook", "name": "ok", "url": rx.url + "/hook"},
            ],
            logs,
        )
        submitted = threading.Event()

        def submit_both() -> None:
            d.submit(report_data(), *first)
            d.submit(report_data(), *second)
            submitted.set()

        threading.Thread(target=submit_both, daemon=True).start()
        assert submitted.wait(10), "submit waited on a sink"
        for _ in range(200):  # the other sink delivers both while "stuck" holds the first
            if len(rx.posts("/hook")) == 2:
                break
            threading.Event().wait(0.05)
        assert [g["headers"]["x-opsmate-report"] for g in rx.posts("/hook")] == ["a.json", "b.json"]
        assert len(stuck.held) == 1 and d.pending() == 1  # "b" waits behind "a" for stuck
        d.close(timeout=0.5)  # stop: what "stuck" did not take is listed, not lost
    reports = sorted(line["report"] for line in undelivered(out) if line["sink"] == "stuck")
    assert reports == ["a.json", "b.json"]
    assert (
        sample(metrics, "opsmate_watch_sink_deliveries_total", sink="stuck", outcome="dropped") == 2
    )


def test_sink_configuration_errors_name_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"sinks\[0\]\.url_env: the variable NOPE is not set"):
        resolve_sinks([SinkConfig(type="slack", url_env="NOPE")], environ={})
    twice = [
        SinkConfig(type="webhook", name="a", url="http://x"),
        SinkConfig(type="slack", name="a", url="http://y"),
    ]
    with pytest.raises(ConfigError, match=r"sinks\[1\]\.name: 'a' is used twice"):
        resolve_sinks(twice, environ={})
    cfg = tmp_path / "c.yaml"
    cfg.write_text("sinks:\n  - {type: slack, url: 'ftp://x', url_env: Y}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"sinks\.0.*exactly one of url and url_env"):
        load_settings(cfg)
    cfg.write_text("sinks:\n  - {type: teams, url: 'http://x'}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"sinks\.0\.type"):
        load_settings(cfg)
    cfg.write_text("sinks:\n  - {type: webhook, url: 'http://x', colour: red}\n")
    with pytest.raises(ConfigError, match=r"unknown key 'sinks\.0\.colour'"):
        load_settings(cfg)


def test_slack_escape() -> None:
    assert slack_escape("a <@U1> & <!here>\n b") == "a &lt;@U1&gt; &amp; &lt;!here&gt; b"
