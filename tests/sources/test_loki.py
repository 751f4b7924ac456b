"""Loki-specific behaviour: the LogQL sent, Loki's 400 on LogQL it cannot parse, paging
through one nanosecond, pod_logs, tenant, doctor probe, config, per-environment dispatch,
and a whole diagnosis over Loki equal to one over Elasticsearch with the same records."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from es_fixture import WINDOW_FROM, WINDOW_TO, ESFixture, sample_logs
from loki_fixture import LokiFixture
from prom_fixture import free_port

from opsmate.cli import main
from opsmate.config import Settings, load_settings
from opsmate.errors import ConfigError
from opsmate.tools import schemas as s
from opsmate.tools.base import CallContext, Constraints, ToolFailure
from opsmate.tools.loki.health import check_loki
from opsmate.tools.registry import live_registry

LABELS = {"service": "app", "namespace": "namespace", "pod": "pod", "level": "level",
          "environment": "env"}  # fmt: skip


def loki(records: list[dict[str, Any]] | None = None) -> LokiFixture:
    return LokiFixture(records if records is not None else sample_logs(),
                       label_fields=LABELS, metadata_fields={"_id": "event_id"})  # fmt: skip


def settings(url: str, **block: Any) -> Settings:
    labels = {**LABELS, "id": "event_id"}
    return Settings(environments={"test": {"loki": {"url": url, "labels": labels, **block}}})


def ctx() -> CallContext:
    c = Constraints(environment="test", window_from=WINDOW_FROM, window_to=WINDOW_TO)
    return CallContext(call_id="call_loki", constraints=c, now=WINDOW_TO)


def run(url: str, tool: str, args: Any, **block: Any) -> Any:
    spec = live_registry(settings(url, **block)).get(tool)
    assert spec is not None
    return spec.run(args, ctx())


def test_the_logql_sent_for_filters() -> None:
    with loki() as fx:
        run(fx.url, "search_logs", s.SearchLogsArgs(service="order-service", level="warn",
                                                   query='pool -"in prod"'))  # fmt: skip
        log_q = fx.requests[0]["params"]
    assert log_q["query"] == (
        "{app=~`(?i)order\\-service`, env=~`test|`, level=~`(?i)(warn|warning)`} "
        "|~ `(?i)pool` !~ `(?i)in\\ prod`"
    )
    assert log_q["direction"] == "backward" and log_q["limit"] == "51"
    assert log_q["end"] == "1792548360000000001"  # Loki's end is exclusive: 02:06:00 included


def test_level_from_json_lines_uses_the_json_parser() -> None:
    with LokiFixture(sample_logs(), label_fields={"service": "app"}) as fx:
        spec = live_registry(Settings(environments={"test": {"loki": {"url": fx.url}}})).get(
            "search_logs"
        )
        assert spec is not None
        out = spec.run(s.SearchLogsArgs(level="warn", page_size=200), ctx())
        sent = fx.requests[0]["params"]["query"]
    assert sent == "{app=~`.+`} | json | level=~`(?i)(warn|warning)`"
    assert Counter_of(out.data["items"]) == {"WARNING": 12, "WARN": 6}


def Counter_of(items: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in items:
        out[i["level"]] = out.get(i["level"], 0) + 1
    return out


def test_loki_refuses_logql_it_cannot_parse() -> None:
    with loki() as fx:
        bad = httpx.get(fx.url + "/loki/api/v1/query_range",
                        params={"query": '{app=~".*"}', "start": "0", "end": "1"})  # fmt: skip
        rate = {"query": 'rate({app="x"}[5m])', "start": "0", "end": "1"}
        odd = httpx.get(fx.url + "/loki/api/v1/query_range", params=rate)
    assert bad.status_code == 400 and "empty-compatible value" in bad.text
    assert odd.status_code == 400 and odd.text.startswith("parse error")


def test_a_400_from_loki_is_bad_request_with_its_reason(tmp_path: Path) -> None:
    with loki() as fx:
        fx.max_entries = 20  # the server's max_entries_limit_per_query
        with pytest.raises(ToolFailure) as info:
            run(fx.url, "search_logs", s.SearchLogsArgs(page_size=50))
        fine = run(fx.url, "search_logs", s.SearchLogsArgs(page_size=50), max_lines=20)
    assert info.value.code == "bad_request" and not info.value.retryable
    assert "max entries limit" in info.value.message
    assert fine.status == "success" and len(fine.data["items"]) == 19  # limit 20 = 19 + 1
    assert not fine.complete and fine.next_cursor and fine.scope["page_size"] == 19


def test_paging_through_entries_of_one_nanosecond_returns_each_once() -> None:
    stamp = "2026-10-21T02:00:00Z"
    recs = [{"_id": f"same-{i:02d}", "@timestamp": stamp, "service": "burst", "level": "INFO",
             "message": f"burst line {i}", "pod": f"burst-{i % 3}"} for i in range(23)]  # fmt: skip
    with loki(recs) as fx:
        refs: list[str] = []
        cursor = None
        pages = 0
        while True:
            out = run(fx.url, "search_logs",
                      s.SearchLogsArgs(service="burst", page_size=5, cursor=cursor))  # fmt: skip
            pages += 1
            refs += out.source_refs
            assert out.data["total"] == 23
            if out.complete:
                break
            cursor = out.next_cursor
    assert pages == 5 and len(refs) == len(set(refs)) == 23


def test_pod_logs_tail_of_one_pod_oldest_first() -> None:
    pod = "order-service-7d9f8b6c4-x2x9k"
    with loki() as fx:
        out = run(fx.url, "pod_logs", s.PodLogsArgs(name=pod, namespace="shop", tail_lines=10))
        sent = fx.requests[0]["params"]
        none = run(fx.url, "pod_logs", s.PodLogsArgs(name="no-such-pod"))
    assert sent["query"] == "{pod=`order-service-7d9f8b6c4-x2x9k`, namespace=`shop`}"
    want = [r for r in sample_logs() if r.get("pod") == pod][-10:]
    assert out.status == "success" and not out.complete and out.data["returned"] == 10
    assert [line.split(" ", 2)[2] for line in out.data["lines"]] == [r["message"] for r in want]
    assert out.data["records"][-1]["message"] == want[-1]["message"]
    assert out.source_refs[0] == f"k8s://shop/Pod/{pod}"
    assert f"log://order-service/{want[-1]['_id']}" in out.source_refs  # an ERROR line
    assert none.status == "no_data" and none.data["lines"] == []


def test_tenant_header_and_labels_endpoints() -> None:
    with loki() as fx:
        run(fx.url, "search_logs", s.SearchLogsArgs(service="x"), tenant="team-a")
        assert all(r["headers"]["x-scope-orgid"] == "team-a" for r in fx.requests)
        # no record of the service: the hint lists the services Loki has (label values)
        assert fx.requests[-1]["path"] == "/loki/api/v1/label/app/values"


def test_doctor_probe_of_loki() -> None:
    with loki() as fx:
        ok = check_loki("test", settings(fx.url).environments["test"].loki)  # type: ignore[arg-type]
        wrong = settings(fx.url).environments["test"].loki.model_copy(  # type: ignore[union-attr]
            update={"labels": settings(fx.url).environments["test"].loki.labels.model_copy(  # type: ignore[union-attr]
                update={"service": "service_name"})})  # fmt: skip
        warn = check_loki("test", wrong)
        fx.mode = "unauthorized"
        auth = check_loki("test", settings(fx.url).environments["test"].loki)  # type: ignore[arg-type]
    assert ok.status == "ok" and "labels" in ok.detail
    assert warn.status == "warn" and "labels.service" in warn.fix
    assert auth.status == "fail" and "OPSMATE_LOKI_TOKEN" in auth.fix
    down = check_loki("test", settings(f"http://127.0.0.1:{free_port()}").environments["test"].loki)  # type: ignore[arg-type]
    assert down.status == "fail" and down.unreachable


def test_an_environment_with_both_log_sources_is_a_config_error(tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text("environments:\n  staging:\n    elasticsearch: {url: 'http://a'}\n"
                   "    loki: {url: 'http://b'}\n")  # fmt: skip
    with pytest.raises(ConfigError) as info:
        load_settings(cfg)
    assert "environments.staging" in info.value.message and "one log source" in info.value.message


def test_each_environment_searches_its_own_log_source() -> None:
    with loki() as lk, ESFixture({"logs-test-2026.10.21": sample_logs()}) as es:
        both = Settings(environments={
            "test": {"elasticsearch": {"url": es.url, "index": "logs-*"}},
            "stage": {"loki": {"url": lk.url, "labels": {**LABELS, "id": "event_id"}}},
        })  # fmt: skip
        spec = live_registry(both).get("search_logs")
        assert spec is not None
        a = spec.run(s.SearchLogsArgs(level="error"), ctx())
        c = Constraints(environment="stage", window_from=WINDOW_FROM, window_to=WINDOW_TO)
        stage = CallContext(call_id="call_stage", constraints=c, now=WINDOW_TO)
        b = spec.run(s.SearchLogsArgs(level="error", environment="stage"), stage)
    assert a.scope["source"] == "elasticsearch" and b.scope["source"] == "loki"
    assert len(es.requests) == 1 and lk.requests
    # the records' env label is test: in stage only the record that carries no environment
    assert [i["message"] for i in b.data["items"]] == ["legacy record without environment field"]


# --------------------------------------------------------------------------- a whole diagnosis


def _shifted_demo_records(repo_root: Path) -> list[dict[str, Any]]:
    """The demo incident's records, moved so that the newest is two minutes old."""
    path = repo_root / "src/opsmate/data/demo/01-pool-exhaustion/logs.ndjson"
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    times = [datetime.fromisoformat(r["@timestamp"]) for r in recs]
    shift = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=2) - max(times)
    out = []
    for i, (r, t) in enumerate(zip(recs, times, strict=True)):
        stamp = (t + shift).astimezone(UTC).isoformat(timespec="milliseconds")
        out.append({**r, "@timestamp": stamp.replace("+00:00", "Z"), "_id": f"rec-{i:04d}"})
    return out


def _normalised(report: dict[str, Any]) -> dict[str, Any]:
    """The report without what differs by source name or by the second it ran."""
    volatile = {"source", "index", "from", "to", "elapsed_ms", "attempts", "seconds"}

    def clean(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items() if k not in volatile}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v

    out = clean(report)
    out.get("constraints", {}).pop("window", None)
    return out


def _diagnose(config: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    argv = ["diagnose", "order-service returns errors since the release", "--env", "test",
            "--service", "order-service", "--since", "1h", "--model", "none", "--json",
            "--config", str(config)]  # fmt: skip
    with pytest.raises(SystemExit):
        main(argv)
    out = capsys.readouterr().out
    return json.loads(out)


def test_a_diagnosis_over_loki_equals_one_over_elasticsearch(
    repo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recs = _shifted_demo_records(repo_root)
    with ESFixture({"logs-test-live": recs}) as es, loki(recs) as lk:
        es_cfg, loki_cfg = tmp_path / "es.yaml", tmp_path / "loki.yaml"
        # no incident history: the second run would otherwise see the first as seen before
        es_cfg.write_text(json.dumps({"history": {"enabled": False},
            "environments": {"test": {"elasticsearch": {
            "url": es.url, "index": "logs-test-*"}}}}))  # fmt: skip
        loki_cfg.write_text(json.dumps({"history": {"enabled": False},
            "environments": {"test": {"loki": {
            "url": lk.url, "labels": {**LABELS, "id": "event_id"}}}}}))  # fmt: skip
        over_es = _diagnose(es_cfg, capsys)
        over_loki = _diagnose(loki_cfg, capsys)
    calls = [c["tool"] for c in over_es["tool_calls"]]
    assert {"search_logs", "log_stats"} & set(calls), calls  # the logs were read
    assert any(e["tool"] in ("search_logs", "log_stats") for e in over_es["evidence"])
    assert "PoolTimeout" in json.dumps(over_es["evidence"])  # the incident's error was found
    assert _normalised(over_loki) == _normalised(over_es)
