"""``opsmate tool``: --list, one call through the executor, exit codes, bundle replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from opsmate.cli import main
from opsmate.config import Settings
from opsmate.tools.audit import read_records
from opsmate.tools.base import CallContext, ToolFailure, ToolOutput, ToolSpec
from opsmate.tools.registry import ToolRegistry
from opsmate.tools.schemas import TOOL_NAMES, ListPodsArgs, SearchLogsArgs

DEMO = Path(__file__).resolve().parents[2] / "src" / "opsmate" / "data" / "demo"
BUNDLE = DEMO / "01-pool-exhaustion"


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def fake_logs(args: BaseModel, ctx: CallContext) -> ToolOutput:
    query = getattr(args, "query", None) or ""
    if query == "refused":
        raise ToolFailure("unreachable", "connection refused to 127.0.0.1:9", retryable=True)
    if query == "denied":
        raise ToolFailure("auth", "HTTP 401", retryable=False)
    if query == "bug":
        raise RuntimeError("bug")
    return ToolOutput(
        data={"items": [{"message": f"hit for {query} token=abc123"}]},
        source_refs=["log://order-service/1"],
    )


@pytest.fixture
def fake_live(monkeypatch: pytest.MonkeyPatch) -> None:
    """The live registry replaced by one fake search_logs / list_pods (no network)."""

    def registry(settings: Settings, *, retriever: Any = None) -> ToolRegistry:
        return ToolRegistry(
            [
                ToolSpec("search_logs", "fake logs", SearchLogsArgs, fake_logs, timeout_s=5),
                ToolSpec("list_pods", "fake pods", ListPodsArgs, lambda a, c: ToolOutput()),
            ]
        )

    monkeypatch.setattr("opsmate.commands.tool.live_registry", registry)
    monkeypatch.setattr("opsmate.tools.executor._BACKOFF_S", (0.01,))


@pytest.fixture
def config(tmp_path: Path) -> Path:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        "default_environment: test\n"
        "environments:\n"
        "  test:\n"
        "    kubernetes: {namespaces: [shop]}\n"
        "tools: {max_page_size: 20}\n"
    )
    return cfg


def test_list_json_describes_every_stable_tool(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["tool", "--list", "--json"], capsys)
    assert code == 0
    entries = json.loads(out)
    names = [e["name"] for e in entries]
    assert names[: len(TOOL_NAMES)] == list(TOOL_NAMES)
    logs = next(e for e in entries if e["name"] == "search_logs")
    assert logs["description"] and "from" in logs["parameters"]["properties"]
    assert {"name", "description", "parameters", "available"} <= set(logs)


def test_list_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["tool", "--list"], capsys)
    assert code == 0 and "rollout_history" in out and "name*" in out


def test_invalid_args_json_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["tool", "search_logs", "--args", "{query: x}", "--json"], capsys)
    assert code == 2 and out == "" and "--args is not valid JSON" in err
    code, _, err = run_cli(["tool", "search_logs", "--args", "[1, 2]"], capsys)
    assert code == 2 and "must be a JSON object" in err
    code, _, err = run_cli(["tool"], capsys)
    assert code == 2 and "name a tool" in err


def test_call_prints_the_envelope_and_audits(
    fake_live: None, config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["tool", "search_logs", "--args", '{"query": "PoolTimeout", "page_size": 500}']
    code, out, _ = run_cli([*argv, "--json", "--config", str(config)], capsys)
    assert code == 0
    env = json.loads(out)
    assert env["call_id"] == "call_001" and env["status"] == "success"
    assert env["scope"]["environment"] == "test"
    assert env["scope"]["clamped"]["page_size"] == {"asked": 500, "used": 20}
    assert env["data"]["items"][0]["message"] == "hit for PoolTimeout token=[REDACTED]"
    assert env["redactions"] == 1
    records = list(read_records(tmp_path / "data" / "audit.jsonl"))
    assert records[-1]["tool"] == "search_logs" and records[-1]["status"] == "success"


def test_namespace_comes_from_the_config(
    fake_live: None, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(
        [
            "tool",
            "list_pods",
            "--json",
            "--config",
            str(config),
            "--args",
            '{"namespace": "kube-system"}',
        ],
        capsys,
    )
    assert code == 2
    assert json.loads(out)["error"]["code"] == "forbidden_scope"


@pytest.mark.parametrize(
    ("args", "code", "status", "error"),
    [
        ('{"environment": "prod"}', 2, "rejected", "forbidden_scope"),
        ('{"bogus": 1}', 2, "rejected", "invalid_arguments"),
        ('{"query": "refused"}', 3, "error", "unreachable"),
        ('{"query": "denied"}', 1, "error", "auth"),
        ('{"query": "bug"}', 4, "error", "internal"),
    ],
)
def test_exit_codes(
    fake_live: None,
    capsys: pytest.CaptureFixture[str],
    args: str,
    code: int,
    status: str,
    error: str,
) -> None:
    rc, out, err = run_cli(
        ["tool", "search_logs", "--env", "test", "--args", args, "--json"], capsys
    )
    env = json.loads(out)
    assert (rc, env["status"], env["error"]["code"]) == (code, status, error)
    assert f"({error})" in err


def test_unknown_tool(fake_live: None, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run_cli(["tool", "scale_deployment", "--json"], capsys)
    env = json.loads(out)
    assert rc == 2 and env["error"]["code"] == "unknown_tool"
    assert "search_logs" in env["error"]["message"]


def test_readable_rendering(fake_live: None, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run_cli(["tool", "search_logs", "--args", '{"query": "x"}'], capsys)
    assert rc == 0 and "call_001" in out and "success" in out and "hit for x" in out
    rc, out, _ = run_cli(["tool", "search_logs", "--args", '{"query": "denied"}'], capsys)
    assert rc == 1 and "auth" in out and "not retryable" in out


def test_bundle_replay_through_the_executor(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tool", "search_logs", "--bundle", str(BUNDLE), "--json"]
    rc, out, _ = run_cli([*argv, "--args", '{"query": "PoolTimeout", "page_size": 2}'], capsys)
    first = json.loads(out)
    assert rc == 0 and first["status"] == "success" and first["complete"] is False
    assert first["scope"]["environment"] == "test"
    assert first["scope"]["from"] == "2026-10-21T09:30:00+08:00"  # the bundle's window
    assert len(first["data"]["items"]) == 2 and first["next_cursor"]
    page2 = json.dumps({"query": "PoolTimeout", "page_size": 2, "cursor": first["next_cursor"]})
    rc, out, _ = run_cli([*argv, "--args", page2], capsys)
    second = json.loads(out)
    assert rc == 0 and second["status"] == "success"
    assert not {i["ref"] for i in first["data"]["items"]} & {
        i["ref"] for i in second["data"]["items"]
    }
    other = json.dumps({"query": "OOMKilled", "cursor": first["next_cursor"]})
    rc, out, _ = run_cli([*argv, "--args", other], capsys)
    assert rc == 2 and json.loads(out)["error"]["code"] == "bad_cursor"


def test_bundle_environment_is_the_constraint(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run_cli(
        [
            "tool",
            "query_metrics",
            "--bundle",
            str(BUNDLE),
            "--json",
            "--args",
            '{"query": "up", "environment": "prod"}',
        ],
        capsys,
    )
    env = json.loads(out)
    assert rc == 2 and env["error"]["code"] == "forbidden_scope"
    assert "'test'" in env["error"]["message"]


def test_search_runbooks_uses_the_local_index(
    tmp_path: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index_dir = tmp_path / "idx"
    runbooks = tmp_path / "rb"
    (runbooks / "order-service").mkdir(parents=True)
    src = repo_root / "runbooks" / "order-service" / "db-connection-pool.md"
    (runbooks / "order-service" / "db-connection-pool.md").write_text(src.read_text())
    code, _, _ = run_cli(
        ["index", str(runbooks), "--index-dir", str(index_dir), "--embedding", "none", "--json"],
        capsys,
    )
    assert code == 0
    code, out, _ = run_cli(
        [
            "tool", "search_runbooks", "--args", '{"query": "PoolTimeout"}',
            "--index-dir", str(index_dir), "--env", "test", "--json",
        ],
        capsys,
    )  # fmt: skip
    envelope = json.loads(out)
    assert code == 0, envelope
    hits = envelope["data"]["hits"]
    assert hits and hits[0]["source"] == "order-service/db-connection-pool.md"


def test_without_an_index_search_runbooks_is_not_offered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(
        [
            "tool", "search_runbooks", "--args", '{"query": "x"}',
            "--index-dir", str(tmp_path / "none"), "--json",
        ],
        capsys,
    )  # fmt: skip
    envelope = json.loads(out)
    assert code == 2
    assert envelope["status"] == "rejected"
    assert envelope["error"]["code"] == "unknown_tool"
