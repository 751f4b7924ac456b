"""Incident bundles: loading, validation errors (file + line), archives, and every replayed tool."""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from opsmate.errors import BundleError
from opsmate.knowledge.types import SearchHit, SearchResponse
from opsmate.paths import cache_dir
from opsmate.tools.audit import AuditLog
from opsmate.tools.base import CallContext, Constraints, ToolFailure, ToolOutput, ToolSpec
from opsmate.tools.bundle import Bundle, load_bundle
from opsmate.tools.executor import Executor
from opsmate.tools.registry import ToolRegistry
from opsmate.tools.schemas import ARGS_MODELS, QueryMetricsArgs
from opsmate.tools.shaping import metric_ref

FIXTURE = Path(__file__).parent / "data" / "bundle-min"
RATE_Q = 'sum by (code) (rate(http_requests_total{service="order-service"}[5m]))'
POOL_Q = 'max(db_pool_connections_in_use{service="order-service"})'
KX = "order-service-7d4b9c6f8-kx2lp"


@pytest.fixture(scope="module")
def bundle() -> Bundle:
    return load_bundle(FIXTURE)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURE, tmp_path / "b"))


def call(b: Bundle, tool: str, *ctx: CallContext, **args: Any) -> ToolOutput:
    """Run one replayed tool directly (optionally with a CallContext), as the executor would."""
    spec = {s.name: s for s in b.tool_specs()}[tool]
    model = spec.args_model.model_validate(args)
    return spec.run(model, ctx[0] if ctx else context(b))


def context(b: Bundle, **constraints: Any) -> CallContext:
    return CallContext(
        call_id="call_001", constraints=Constraints(**constraints), now=b.meta.captured_at
    )


# --------------------------------------------------------------------------- loading
def test_load_directory(bundle: Bundle) -> None:
    m = bundle.meta
    assert m.format == "opsmate-bundle/v1" and m.environment == "test" and m.cluster == "dev-1"
    assert m.captured_at.isoformat() == "2026-10-21T10:06:00+08:00"
    assert bundle.window == (m.window_from, m.window_to)
    assert m.window_to - m.window_from == timedelta(minutes=36)
    assert len(bundle.metrics) == 4 and bundle.metrics[1].index == 2
    assert len(bundle.logs) == 22
    kinds = sorted({o["kind"] for o in bundle.objects})
    assert kinds == ["Deployment", "Event", "Node", "Pod", "ReplicaSet"]
    assert sum(o["kind"] == "Node" for o in bundle.objects) == 2  # kind: List expanded
    assert bundle.runbooks_dir == FIXTURE / "runbooks"
    assert bundle.expected is not None and bundle.expected.must_mention == [
        "PoolTimeout",
        "connection pool",
    ]
    assert bundle.expected.model_extra == {"difficulty": "easy"}
    # diagnose never reads the answer key: the default question is bundle.yaml's
    assert bundle.question == "order-service error rate rose after the 10:00 release"
    assert bundle.recorded_queries()[:2] == [RATE_Q, POOL_Q]


def test_minimal_bundle_only_bundle_yaml(tmp_path: Path) -> None:
    (tmp_path / "bundle.yaml").write_text(
        "format: opsmate-bundle/v1\ncaptured_at: '2026-10-21T10:06:00Z'\n"
        "window: {from: '-30m', to: now}\nenvironment: prod\n"
    )
    b = load_bundle(tmp_path)
    assert b.meta.title == tmp_path.name and b.expected is None and b.runbooks_dir is None
    assert b.metrics == [] and b.logs == [] and b.objects == [] and b.question is None
    out = call(b, "query_metrics", query="up")
    assert out.error is not None and out.error.code == "not_available"
    assert out.data["recorded_queries"] == []
    assert call(b, "list_alerts").error is not None


def _expect_error(root: Path, *fragments: str) -> str:
    with pytest.raises(BundleError) as info:
        load_bundle(root)
    msg = str(info.value)
    for f in fragments:
        assert f in msg, msg
    return msg


def test_missing_bundle_yaml(copy: Path) -> None:
    (copy / "bundle.yaml").unlink()
    _expect_error(copy, "bundle.yaml missing")


def test_not_a_bundle_path(tmp_path: Path) -> None:
    _expect_error(tmp_path / "nope", "no such bundle")
    (tmp_path / "notes.txt").write_text("x")
    _expect_error(tmp_path / "notes.txt", "not a bundle")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_wrong_format_names_line(copy: Path) -> None:
    _edit(copy / "bundle.yaml", "opsmate-bundle/v1", "opsmate-bundle/v9")
    _expect_error(copy, "bundle.yaml:1:", "opsmate-bundle/v9")


def test_missing_required_key(copy: Path) -> None:
    _edit(copy / "bundle.yaml", "environment: test\n", "")
    _expect_error(copy, "bundle.yaml:1:", "missing required key(s): environment")


def test_bad_time_names_line(copy: Path) -> None:
    _edit(copy / "bundle.yaml", 'to: "2026-10-21T10:06:00+08:00"', 'to: "yesterday-ish"')
    _expect_error(copy, "bundle.yaml:4:", "window.to", "yesterday-ish")
    _edit(copy / "bundle.yaml", 'to: "yesterday-ish"', 'to: "2026-10-21T09:00:00+08:00"')
    _expect_error(copy, "bundle.yaml:4:", "after")


def test_bad_captured_at(copy: Path) -> None:
    _edit(copy / "bundle.yaml", 'captured_at: "2026-10-21T10:06:00+08:00"', "captured_at: soon")
    _expect_error(copy, "bundle.yaml:3:", "captured_at")


def test_invalid_yaml_names_line(copy: Path) -> None:
    _edit(copy / "bundle.yaml", "cluster: dev-1", "cluster: [dev-1")
    msg = _expect_error(copy, "bundle.yaml:", "invalid YAML")
    assert "bundle.yaml:1:" not in msg


def test_metrics_entry_not_prometheus_data(copy: Path) -> None:
    (copy / "metrics.yaml").write_text(
        "- query: up\n"
        "  type: instant\n"
        "  result: {resultType: vector, result: []}\n"
        "- query: rate(x[5m])\n"
        "  type: range\n"
        "  result:\n"
        "    resultType: matrix\n"
        "    result: [{metric: {}}]\n"
    )
    _expect_error(copy, "metrics.yaml:7:", "entry 2", "not a Prometheus data object")


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        (
            "- query: up\n  type: sideways\n  result: {resultType: vector, result: []}\n",
            ("metrics.yaml:2:", "entry 1", "type"),
        ),
        (
            "- type: instant\n  result: {resultType: vector, result: []}\n",
            ("metrics.yaml:1:", "missing 'query'"),
        ),
        ("- query: up\n  type: instant\n", ("metrics.yaml:1:", "missing 'result'")),
        (
            "- query: up\n  start: later\n  result: {resultType: vector, result: []}\n",
            ("metrics.yaml:2:", "start"),
        ),
        ("query: up\n", ("metrics.yaml:1:", "list")),
    ],
)
def test_metrics_validation(copy: Path, text: str, fragments: tuple[str, ...]) -> None:
    (copy / "metrics.yaml").write_text(text)
    _expect_error(copy, *fragments)


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ('{"message": "x"}', "missing '@timestamp'"),
        ('{"@timestamp": "2026-10-21T10:00:00Z"}', "missing 'message'"),
        ('{"@timestamp": "half past ten", "message": "x"}', "@timestamp"),
        ("[1, 2]", "JSON object"),
    ],
)
def test_logs_line_errors_name_the_line(copy: Path, line: str, fragment: str) -> None:
    path = copy / "logs.ndjson"
    lines = path.read_text().splitlines()
    lines.insert(2, line)  # becomes line 3
    path.write_text("\n".join(lines) + "\n")
    _expect_error(copy, "logs.ndjson:3:", fragment)


def test_logs_non_utf8_line(copy: Path) -> None:
    with (copy / "logs.ndjson").open("ab") as fh:
        fh.write(b'{"@timestamp": "2026-10-21T10:00:00Z", "message": "caf\xe9"}\n')
    _expect_error(copy, "logs.ndjson:23:", "UTF-8")


def test_k8s_document_errors_name_file_and_document(copy: Path) -> None:
    (copy / "k8s" / "extra.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\n"
        "---\napiVersion: v1\nkind: Service\nmetadata: {namespace: shop}\n"
    )
    _expect_error(copy, "k8s/extra.yaml: document 2 (line 5)", "metadata.name")
    (copy / "k8s" / "extra.yaml").write_text("metadata: {name: x}\n")
    _expect_error(copy, "k8s/extra.yaml: document 1", "missing 'kind'")
    (copy / "k8s" / "extra.yaml").write_text("kind: List\nitems:\n  - {kind: Pod}\n")
    _expect_error(copy, "k8s/extra.yaml: document 1", "item 1", "metadata.name")


def test_expected_yaml_errors(copy: Path) -> None:
    _edit(copy / "expected.yaml", "max_steps: 12", "max_steps: lots")
    bundle = load_bundle(copy)  # only `opsmate eval` reads the answer key ...
    with pytest.raises(BundleError) as info:
        _ = bundle.expected  # ... and it names the file, line and key
    assert "expected.yaml:6:" in str(info.value) and "max_steps" in str(info.value)


def test_alerts_yaml_error(copy: Path) -> None:
    (copy / "alerts.yaml").write_text("- labels: {alertname: A}\n- labels: {severity: page}\n")
    _expect_error(copy, "alerts.yaml:2:", "alert 2", "alertname")


# --------------------------------------------------------------------------- archives
def _tar(path: Path, src: Path, prefix: str) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        tar.add(src, arcname=prefix or ".")
    return path


@pytest.mark.parametrize("prefix", ["bundle-min", ""])
def test_load_tar_gz(tmp_path: Path, prefix: str) -> None:
    archive = _tar(tmp_path / "incident.tar.gz", FIXTURE, prefix)
    b = load_bundle(archive)
    assert b.source == archive
    assert b.root.is_relative_to(cache_dir() / "bundles")
    assert b.meta.title == "order-service 5xx after the 10:00 release"
    assert len(b.logs) == 22 and len(b.objects) == 13
    assert b.runbooks_dir is not None
    assert (b.runbooks_dir / "order-service" / "db-connection-pool.md").is_file()
    again = load_bundle(archive)  # same content: the extraction is reused
    assert again.root == b.root
    out = call(b, "search_logs", query="PoolTimeout")
    assert out.data["total"] == 7


def test_archive_title_defaults_to_archive_name(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "bundle.yaml").write_text(
        "format: opsmate-bundle/v1\ncaptured_at: '2026-10-21T10:06:00Z'\n"
        "window: {from: '2026-10-21T09:00:00Z', to: '2026-10-21T10:06:00Z'}\nenvironment: test\n"
    )
    b = load_bundle(_tar(tmp_path / "inc-42.tar.gz", src, ""))
    assert b.meta.title == "inc-42"


def test_old_extractions_are_cleaned(tmp_path: Path) -> None:
    base = cache_dir() / "bundles"
    stale = base / "0123456789abcdef0123"
    stale.mkdir(parents=True)
    (stale / "bundle.yaml").write_text("x")
    abandoned = base / "tmp-deadbeef"
    abandoned.mkdir()
    old = time.time() - 30 * 86400
    os.utime(stale, (old, old))
    os.utime(abandoned, (old, old))
    fresh = base / "fffffffffffffffffff0"
    fresh.mkdir()
    load_bundle(_tar(tmp_path / "b.tar.gz", FIXTURE, "x"))
    assert not stale.exists() and not abandoned.exists() and fresh.exists()


def _evil_tar(path: Path, member: tarfile.TarInfo, data: bytes = b"pwned") -> Path:
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("bundle.yaml")
        body = (FIXTURE / "bundle.yaml").read_bytes()
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
        if member.isfile():
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
        else:
            tar.addfile(member)
    return path


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    m = tarfile.TarInfo(name)
    m.type = kind
    m.linkname = link
    return m


@pytest.mark.parametrize(
    ("member", "fragment"),
    [
        (_member("../evil.txt"), "'..'"),
        (_member("k8s/../../evil.txt"), "'..'"),
        (_member("/tmp/opsmate-evil.txt"), "absolute path"),
        (_member("k8s/link", tarfile.SYMTYPE, "../../../etc/passwd"), "outside the bundle"),
        (_member("k8s/abs", tarfile.SYMTYPE, "/etc/passwd"), "absolute path"),
        (_member("k8s/hard", tarfile.LNKTYPE, "../outside"), "outside the bundle"),
        (_member("dev", tarfile.CHRTYPE), "not a regular file"),
    ],
)
def test_tar_path_traversal_is_rejected(
    tmp_path: Path, member: tarfile.TarInfo, fragment: str
) -> None:
    archive = _evil_tar(tmp_path / "evil.tar.gz", member)
    with pytest.raises(BundleError) as info:
        load_bundle(archive)
    assert "evil.tar.gz" in str(info.value) and fragment in str(info.value)
    assert not (tmp_path / "evil.txt").exists()
    assert not Path("/tmp/opsmate-evil.txt").exists()
    base = cache_dir() / "bundles"
    leftovers = [p.name for p in base.iterdir()] if base.exists() else []
    assert not any(n.startswith("tmp-") for n in leftovers)


def test_corrupt_archive(tmp_path: Path) -> None:
    bad = tmp_path / "broken.tar.gz"
    bad.write_bytes(b"\x1f\x8b not really gzip")
    _expect_error(bad, "broken.tar.gz", "not a readable tar archive")


def test_archive_without_bundle_yaml(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    (src / "b").mkdir()
    (src / "a" / "x.txt").write_text("x")
    _expect_error(_tar(tmp_path / "e.tar.gz", src, ""), "e.tar.gz", "bundle.yaml missing")


# --------------------------------------------------------------------------- tool specs
def test_tool_specs_names_and_models(bundle: Bundle) -> None:
    specs = bundle.tool_specs()
    names = [s.name for s in specs]
    assert set(names) == set(ARGS_MODELS) - {"search_runbooks"}
    for s in specs:
        assert issubclass(s.args_model, ARGS_MODELS[s.name])
        if s.name != "query_metrics":
            assert s.args_model is ARGS_MODELS[s.name]
    qm = next(s for s in specs if s.name == "query_metrics")
    schema = qm.json_schema()
    assert schema["properties"]["query"]["enum"] == bundle.recorded_queries()
    assert schema["required"] == ["query"]
    with pytest.raises(ValueError):
        qm.args_model.model_validate({"query": "up", "bogus": 1})  # extra still forbidden


class TinyRetriever:
    """The smallest Retriever: one fixed hit (the real index lives in opsmate.knowledge)."""

    def search(self, query: str, **kw: Any) -> SearchResponse:
        hit = SearchHit(
            rank=1,
            score=0.9,
            chunk_id="c1",
            source="order-service/db-connection-pool.md",
            heading_path=["order-service: DB connection pool exhausted"],
            text="PoolTimeout",
            parent_text="PoolTimeout",
            doc_version="v1",
        )
        return SearchResponse(query=query, hits=[hit], low_evidence=False)


def test_search_runbooks_only_with_retriever(bundle: Bundle) -> None:
    specs = {s.name: s for s in bundle.tool_specs(TinyRetriever())}
    assert "search_runbooks" in specs
    spec = specs["search_runbooks"]
    out = spec.run(spec.args_model.model_validate({"query": "pool"}), context(bundle))
    assert out.source_refs == ["runbook://order-service/db-connection-pool.md#c1"]


# --------------------------------------------------------------------------- query_metrics
def test_query_metrics_matches_after_whitespace_normalisation(bundle: Bundle) -> None:
    out = call(
        bundle,
        "query_metrics",
        query=' sum by(code)  (rate(http_requests_total{ service="order-service" }[5m]))',
    )
    assert out.status == "success" and out.error is None
    assert out.data["query"] == RATE_Q and out.data["description"] == "request rate by status code"
    assert out.data["result_type"] == "matrix" and out.data["series_total"] == 2
    s500 = next(s for s in out.data["series"] if s["labels"] == {"code": "500"})
    assert s500["first"]["value"] == 0.0 and s500["max"]["value"] == 4.2
    assert s500["largest_change"]["time"].startswith("2026-10-21T10:0")
    assert s500["points"] == 37
    assert out.source_refs == [metric_ref(RATE_Q)]
    assert out.scope["step"] == 60 and out.scope["environment"] == "test"
    assert out.scope["start"] == "2026-10-21T09:30:00+08:00"


def test_query_metrics_window_trims_and_relative_times(bundle: Bundle) -> None:
    out = call(bundle, "query_metrics", query=POOL_Q, start="-10m", end="now", step=15)
    series = out.data["series"][0]
    assert series["points"] == 11  # 09:56 .. 10:06, minute steps
    assert series["first"]["time"] == "2026-10-21T09:56:00+08:00"
    assert out.scope["start"] == "2026-10-21T09:56:00+08:00"
    assert out.scope["step_asked"] == 15 and out.scope["step"] == 60
    before = call(bundle, "query_metrics", query=POOL_Q, start="-3h", end="-2h")
    assert before.status == "no_data" and before.error is None
    assert before.scope["recorded"]["start"] == "2026-10-21T09:30:00+08:00"


def test_query_metrics_instant(bundle: Bundle) -> None:
    out = call(bundle, "query_metrics", query='up{job="order-service"}', type="instant")
    assert out.status == "success" and out.data["result_type"] == "vector"
    assert len(out.data["series"]) == 2 and out.scope["time"] == "2026-10-21T10:06:00+08:00"
    wrong = call(bundle, "query_metrics", query='up{job="order-service"}')  # default: range
    assert wrong.error is not None and wrong.error.code == "not_available"
    assert "type='instant'" in wrong.error.message


def test_query_metrics_unrecorded_is_not_available(bundle: Bundle) -> None:
    out = call(bundle, "query_metrics", query="rate(node_cpu_seconds_total[5m])")
    assert out.status == "no_data"
    assert out.error is not None and out.error.code == "not_available" and not out.error.retryable
    assert out.data["recorded_queries"] == bundle.recorded_queries()
    assert out.data["descriptions"][RATE_Q] == "request rate by status code"
    assert out.source_refs == []


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("query_metrics", {"query": RATE_Q}),
        ("list_alerts", {}),
        ("search_logs", {}),
        ("log_stats", {}),
        ("list_pods", {}),
        ("get_events", {}),
        ("rollout_history", {"name": "order-service"}),
        ("node_conditions", {}),
        ("pod_logs", {"name": KX}),
    ],
)
def test_environment_mismatch(bundle: Bundle, tool: str, args: dict[str, Any]) -> None:
    out = call(bundle, tool, environment="prod", **args)
    assert out.status == "no_data" and out.error is not None
    assert out.error.code == "not_available" and not out.error.retryable
    assert "bundle holds only environment 'test'" in out.error.message
    assert out.scope["environment"] == "prod"
    # the task's environment is the default when the call names none
    via_task = call(bundle, tool, context(bundle, environment="prod"), **args)
    assert via_task.error is not None and via_task.error.code == "not_available"
    ok = call(bundle, tool, environment="test", **args)
    assert ok.error is None


# --------------------------------------------------------------------------- alerts
def test_list_alerts_from_alerts_query(bundle: Bundle) -> None:
    out = call(bundle, "list_alerts")
    assert out.status == "success" and out.data["count"] == 1
    a = out.data["alerts"][0]
    assert (a["name"], a["state"], a["severity"]) == ("OrderServiceHighErrorRate", "firing", "page")
    assert a["active_at"] == "2026-10-21T10:03:00+08:00" and a["labels"] == {
        "service": "order-service"
    }
    assert out.source_refs == [metric_ref('ALERTS{alertstate="firing"}')]
    assert call(bundle, "list_alerts", state="pending").status == "no_data"


def test_list_alerts_from_alerts_yaml(copy: Path) -> None:
    (copy / "alerts.yaml").write_text(
        "status: success\ndata:\n  alerts:\n"
        "    - labels: {alertname: PodRestarting, severity: warning, pod: x}\n"
        "      annotations: {summary: pod restarts}\n      state: pending\n"
        "      activeAt: '2026-10-21T02:04:00Z'\n      value: '2'\n"
        "    - labels: {alertname: HighErrorRate}\n      state: firing\n"
    )
    b = load_bundle(copy)
    out = call(b, "list_alerts")
    assert [a["name"] for a in out.data["alerts"]] == ["HighErrorRate", "PodRestarting"]
    pending = call(b, "list_alerts", state="pending").data["alerts"]
    assert len(pending) == 1 and pending[0]["annotations"] == {"summary": "pod restarts"}
    assert pending[0]["active_at"] == "2026-10-21T10:04:00+08:00"
    assert "alert://PodRestarting" in out.source_refs


# --------------------------------------------------------------------------- logs
def _times(out: ToolOutput) -> list[str]:
    return [i["@timestamp"] for i in out.data["items"]]


def test_search_logs_defaults_to_bundle_window_newest_first(bundle: Bundle) -> None:
    out = call(bundle, "search_logs")
    assert out.data["total"] == 21  # the 09:20 record is before the window
    times = _times(out)
    assert times == sorted(times, reverse=True)
    assert out.complete and out.next_cursor is None
    assert (
        out.scope["from"] == "2026-10-21T09:30:00+08:00"
        and out.scope["to"] == "2026-10-21T10:06:00+08:00"
    )
    assert len(out.source_refs) == 21 and all(r.startswith("log://") for r in out.source_refs)
    wider = call(bundle, "search_logs", **{"from": "-60m"})
    assert wider.data["total"] == 22


def test_search_logs_filters(bundle: Bundle) -> None:
    svc = call(bundle, "search_logs", service="payment-service")
    assert svc.data["total"] == 2 and all(
        i["service"] == "payment-service" for i in svc.data["items"]
    )
    assert svc.source_refs[0].startswith("log://payment-service/")
    err = call(bundle, "search_logs", level="ERROR", service="order-service")
    assert err.data["total"] == 9 and {i["level"] for i in err.data["items"]} == {"error"}
    warn = call(bundle, "search_logs", level="warning")  # alias of warn
    assert warn.data["total"] == 3
    both = call(bundle, "search_logs", level="error,warn")
    assert both.data["total"] == 13
    window = call(
        bundle,
        "search_logs",
        **{"from": "2026-10-21T10:00:00+08:00", "to": "2026-10-21T10:01:00+08:00"},
    )
    assert window.data["total"] == 3


def test_search_logs_terms_phrases_and_exclusions(bundle: Bundle) -> None:
    terms = call(bundle, "search_logs", query="pooltimeout WAITING")
    assert terms.data["total"] == 7
    phrase = call(bundle, "search_logs", query='PoolTimeout "waiting 57"')
    assert phrase.data["total"] == 1 and "waiting 57" in phrase.data["items"][0]["message"]
    apart = call(bundle, "search_logs", query='"pool waiting"')
    assert apart.status == "no_data" and apart.data["items"] == []
    excluded = call(bundle, "search_logs", query="PoolTimeout -kx2lp")  # matches any field
    assert excluded.data["total"] == 3
    by_field = call(bundle, "search_logs", query="4bf92f3577b34da6a3ce929d0e0e4736")
    assert by_field.data["total"] == 1


def test_search_logs_record_refs(bundle: Bundle) -> None:
    out = call(bundle, "search_logs", query="exhausted")
    assert out.source_refs == ["log://order-service/evt-9001"]  # the record's own id
    assert out.data["items"][0]["ref"] == "log://order-service/evt-9001"
    line = call(bundle, "search_logs", query='"waiting 57"')
    assert line.source_refs == ["log://order-service/11"]  # else its line in logs.ndjson


def test_search_logs_pagination(bundle: Bundle) -> None:
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        args: dict[str, Any] = {"service": "order-service", "page_size": 4}
        if cursor:
            args["cursor"] = cursor
        out = call(bundle, "search_logs", **args)
        pages += 1
        seen += out.source_refs
        assert out.data["total"] == 19
        if out.complete:
            assert out.next_cursor is None
            break
        assert out.status == "success" and out.next_cursor
        cursor = out.next_cursor
    assert pages == 5 and len(seen) == 19 == len(set(seen))
    with pytest.raises(ToolFailure) as info:
        call(bundle, "search_logs", service="payment-service", cursor=cursor)
    assert info.value.code == "bad_cursor"
    with pytest.raises(ToolFailure):
        call(bundle, "search_logs", cursor="garbage")


def test_search_logs_page_size_capped_by_constraints(bundle: Bundle) -> None:
    out = call(bundle, "search_logs", context(bundle, max_page_size=5), page_size=100)
    assert len(out.data["items"]) == 5 and out.scope["page_size"] == 5 and not out.complete


def test_search_logs_bad_time_is_bad_request(bundle: Bundle) -> None:
    with pytest.raises(ToolFailure) as info:
        call(bundle, "search_logs", **{"from": "teatime"})
    assert info.value.code == "bad_request" and "from" in info.value.message
    with pytest.raises(ToolFailure):
        call(bundle, "search_logs", **{"from": "-1m", "to": "-5m"})


def test_log_stats(bundle: Bundle) -> None:
    out = call(bundle, "log_stats", service="order-service")
    assert out.data["total"] == 19
    assert out.data["by_level"] == {"error": 9, "info": 7, "warn": 3}
    top = out.data["top_messages"][0]
    assert top["count"] == 7 and top["pattern"].startswith("PoolTimeout: could not acquire")
    assert top["first_seen"] == "2026-10-21T10:01:10+08:00"
    assert "waiting 41" in top["example"]  # the first occurrence
    assert top["example_ref"] == out.source_refs[0] == "log://order-service/10"
    errors = call(bundle, "log_stats", level="error")
    assert errors.data["by_level"] == {"error": 10}
    none = call(bundle, "log_stats", service="nobody")
    assert none.status == "no_data" and none.data["total"] == 0


def test_pod_logs(bundle: Bundle) -> None:
    out = call(bundle, "pod_logs", name=KX, tail_lines=3)
    lines = out.data["lines"]
    assert len(lines) == 3 and out.data["older_not_shown"] == 7 and not out.complete
    assert lines[0] == "2026-10-21T10:04:20+08:00 INFO health check ok"
    assert lines[-1].startswith("2026-10-21T10:05:05+08:00 ERROR db connect failed")
    assert out.source_refs[0] == f"k8s://shop/Pod/{KX}"
    since = call(bundle, "pod_logs", name=KX, since_seconds=120)  # after 10:04 (captured 10:06)
    assert since.data["returned"] == 3 and since.complete
    assert call(bundle, "pod_logs", name=KX, namespace="other").status == "no_data"
    missing = call(bundle, "pod_logs", name="ghost-pod")
    assert missing.status == "no_data" and KX in missing.data["pods_with_logs"]


# --------------------------------------------------------------------------- kubernetes
def test_list_pods(bundle: Bundle) -> None:
    everything = call(bundle, "list_pods")
    assert everything.data["count"] == 4 and everything.scope["namespaces"] == "all"
    shop = call(bundle, "list_pods", namespace="shop", label_selector="app=order-service")
    pods = shop.data["pods"]
    assert [p["name"] for p in pods] == [KX, "order-service-7d4b9c6f8-q9w7z"]
    assert pods[0]["ready"] == "1/2" and pods[0]["restarts"] == 2
    assert pods[0]["containers"][0]["last_termination"]["exit_code"] == 137
    assert pods[0]["start_time"] == "2026-10-21T10:00:01+08:00"  # shown in the bundle's offset
    assert shop.source_refs == [
        f"k8s://shop/Pod/{KX}",
        "k8s://shop/Pod/order-service-7d4b9c6f8-q9w7z",
    ]
    assert shop.scope["namespace"] == "shop" and shop.scope["cluster"] == "dev-1"
    sets = call(bundle, "list_pods", label_selector="app in (payment-service, redis),tier")
    assert [p["name"] for p in sets.data["pods"]] == ["payment-service-5f6d8c7b9-zz1aa"]
    assert call(bundle, "list_pods", namespace="cache").data["pods"][0]["phase"] == "Pending"
    assert call(bundle, "list_pods", namespace="nowhere").status == "no_data"
    task_ns = call(bundle, "list_pods", context(bundle, namespaces=["cache"]))
    assert task_ns.data["count"] == 1 and task_ns.scope["namespace"] == "cache"
    with pytest.raises(ToolFailure) as info:
        call(bundle, "list_pods", label_selector="app=~web")
    assert info.value.code == "bad_request"


def test_get_events(bundle: Bundle) -> None:
    out = call(bundle, "get_events")
    assert out.data["count"] == 3 and out.data["warnings"] == 2
    stamps = [e["last_timestamp"] for e in out.data["events"]]
    assert stamps == sorted(stamps, reverse=True)
    pod = call(bundle, "get_events", kind="pod", name=KX)
    assert [e["reason"] for e in pod.data["events"]] == ["Unhealthy", "BackOff"]
    assert pod.source_refs[0] == f"k8s://shop/Event/{KX}.17f1a"
    dep = call(bundle, "get_events", kind="Deployment", name="order-service")
    ev = dep.data["events"][0]  # events.k8s.io/v1 shape
    assert ev["reason"] == "ScalingReplicaSet" and ev["message"].startswith("Scaled up")
    assert ev["last_timestamp"] == "2026-10-21T10:00:00+08:00"
    assert call(bundle, "get_events", namespace="cache").status == "no_data"


def test_rollout_history(bundle: Bundle) -> None:
    out = call(bundle, "rollout_history", name="order-service")
    revs = out.data["revisions"]
    assert [r["revision"] for r in revs] == [3, 4] and revs[1]["current"]
    assert revs[1]["images"][0] == "registry.example/order-service:1.5.0"
    assert "maximumPoolSize 20 -> 10" in revs[1]["change_cause"]
    assert out.data["replicas"]["unavailable"] == 1
    assert out.source_refs[0] == "k8s://shop/Deployment/order-service"
    assert "k8s://shop/ReplicaSet/order-service-7d4b9c6f8" in out.source_refs
    assert "k8s://shop/ReplicaSet/payment-service-5f6d8c7b9" not in out.source_refs
    # no Deployment object captured: history from the ReplicaSets it owns
    rs_only = call(bundle, "rollout_history", name="payment-service")
    assert rs_only.status == "success" and rs_only.data["current_revision"] == 7
    assert rs_only.data["namespace"] == "shop"
    missing = call(bundle, "rollout_history", name="checkout")
    assert missing.status == "no_data" and missing.data["deployments"] == ["order-service"]
    assert (
        call(bundle, "rollout_history", name="order-service", namespace="cache").status == "no_data"
    )


def test_rollout_history_by_selector_labels(copy: Path) -> None:
    path = copy / "k8s" / "deployments.yaml"
    owner = "    - {apiVersion: apps/v1, kind: Deployment, name: order-service, controller: true}\n"
    text = path.read_text().replace("  ownerReferences:\n" + owner, "")
    assert "name: order-service, controller" not in text
    path.write_text(text)
    out = call(load_bundle(copy), "rollout_history", name="order-service")
    assert [r["revision"] for r in out.data["revisions"]] == [3, 4]


def test_node_conditions(bundle: Bundle) -> None:
    out = call(bundle, "node_conditions")
    assert [n["name"] for n in out.data["nodes"]] == ["node-a", "node-b"]
    assert out.source_refs == ["k8s://_cluster/Node/node-a", "k8s://_cluster/Node/node-b"]
    b = call(bundle, "node_conditions", name="node-b").data["nodes"][0]
    assert b["pressure"]["memory"] and b["any_pressure"] and b["ready"]
    assert b["conditions"][0]["last_transition_time"] == "2026-10-21T09:58:00+08:00"
    missing = call(bundle, "node_conditions", name="node-z")
    assert missing.status == "no_data" and missing.data["captured_nodes"] == ["node-a", "node-b"]


# --------------------------------------------------------------------------- through the executor
def test_through_the_executor(bundle: Bundle, tmp_path: Path) -> None:
    constraints = Constraints(
        environment="test", window_from=bundle.meta.window_from, window_to=bundle.meta.window_to
    )
    ex = Executor(
        ToolRegistry(bundle.tool_specs()),
        constraints,
        now=bundle.meta.captured_at,
        audit=AuditLog(tmp_path / "audit.jsonl"),
    )
    r = ex.call("search_logs", {"query": "jdbc"})
    assert r.status == "success" and r.call_id == "call_001"
    assert "hunter2" not in json.dumps(r.model_dump()) and r.redactions >= 1
    assert "hunter2" not in (tmp_path / "audit.jsonl").read_text()

    # pages through the executor's wrapped cursor
    first = ex.call("search_logs", {"service": "order-service", "page_size": 10})
    assert first.status == "success" and not first.complete and first.next_cursor
    second = ex.call(
        "search_logs", {"service": "order-service", "page_size": 10, "cursor": first.next_cursor}
    )
    assert second.complete and not set(first.source_refs) & set(second.source_refs)
    assert len(first.source_refs) + len(second.source_refs) == 19

    m = ex.call("query_metrics", {"query": POOL_Q, "start": "-10m"})
    assert m.status == "success" and m.data["series"][0]["points"] == 11
    missing = ex.call("query_metrics", {"query": "up"})
    assert missing.status == "no_data" and missing.error is not None
    assert missing.error.code == "not_available" and RATE_Q in missing.data["recorded_queries"]
    prod = ex.call("list_pods", {"environment": "prod"})
    assert prod.status == "rejected" and prod.error is not None
    assert prod.error.code == "forbidden_scope"

    # a bundle from another environment: the executor passes, the bundle says not_available
    other = Executor(
        ToolRegistry(bundle.tool_specs()),
        Constraints(environment="prod"),
        now=bundle.meta.captured_at,
        audit=AuditLog(tmp_path / "audit2.jsonl"),
    )
    res = other.call("get_events", {})
    assert res.status == "no_data" and res.error is not None and res.error.code == "not_available"


def test_every_result_has_scope_and_refs(bundle: Bundle) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("query_metrics", {"query": RATE_Q}),
        ("list_alerts", {}),
        ("search_logs", {"query": "PoolTimeout"}),
        ("log_stats", {}),
        ("list_pods", {}),
        ("get_events", {}),
        ("rollout_history", {"name": "order-service"}),
        ("node_conditions", {}),
        ("pod_logs", {"name": KX}),
    ]
    for tool, args in calls:
        out = call(bundle, tool, **args)
        assert out.status == "success", tool
        assert out.scope and out.scope.get("source") == "bundle", tool
        assert out.source_refs and all("://" in r for r in out.source_refs), tool


def test_spec_type_is_a_toolspec(bundle: Bundle) -> None:
    spec = bundle.tool_specs()[0]
    assert isinstance(spec, ToolSpec) and spec.name == "query_metrics"
    model: BaseModel = spec.args_model.model_validate({"query": RATE_Q})
    assert isinstance(model, QueryMetricsArgs)
