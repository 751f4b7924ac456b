"""Registry (allow-list, descriptions), live registry assembly, search_runbooks as a tool."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from opsmate.config import Settings
from opsmate.knowledge.types import SearchHit, SearchResponse
from opsmate.tools.audit import AuditLog
from opsmate.tools.base import CallContext, Constraints, ToolOutput, ToolSpec
from opsmate.tools.executor import Executor
from opsmate.tools.registry import ToolRegistry, catalog, live_registry
from opsmate.tools.runbooks import search_runbooks_spec
from opsmate.tools.schemas import ARGS_MODELS, TOOL_NAMES, ListAlertsArgs, SearchLogsArgs


def _run(args: BaseModel, ctx: CallContext) -> ToolOutput:
    return ToolOutput()


def _spec(name: str, model: type[BaseModel] = SearchLogsArgs) -> ToolSpec:
    return ToolSpec(name=name, description=f"about {name}", args_model=model, run=_run)


class FakeRetriever:
    def __init__(self, hits: list[SearchHit]) -> None:
        self.hits = hits
        self.seen: list[tuple[str, int, dict[str, Any] | None]] = []

    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        mode: str = "hybrid",
        filters: dict[str, Any] | None = None,
        include_deprecated: bool = False,
    ) -> SearchResponse:
        self.seen.append((query, top_k, filters))
        return SearchResponse(query=query, hits=self.hits[:top_k], low_evidence=not self.hits)


def _hit(rank: int) -> SearchHit:
    return SearchHit(
        rank=rank,
        score=1.0 / rank,
        chunk_id=f"c{rank}",
        source="order-service/db-connection-pool.md",
        heading_path=["DB connection pool", "Check"],
        text="Check pool usage with db_pool_in_use",
        parent_text="P" * 5000,
        doc_version="v123",
        metadata={"service": "order-service", "version": "3"},
    )


def test_register_get_names_describe() -> None:
    reg = ToolRegistry([_spec("search_logs"), _spec("list_alerts", ListAlertsArgs)])
    assert reg.names() == ["search_logs", "list_alerts"]
    assert reg.get("search_logs") is not None and reg.get("rm_rf") is None
    assert "list_alerts" in reg and len(reg) == 2
    described = {d["name"]: d for d in reg.describe()}
    params = described["search_logs"]["parameters"]
    assert described["search_logs"]["description"] == "about search_logs"
    assert "from" in params["properties"] and "from_" not in params["properties"]
    assert params["additionalProperties"] is False
    assert "title" not in params and "title" not in params["properties"]["page_size"]
    reg.register(_spec("search_logs", ListAlertsArgs))  # replaces
    assert reg.names() == ["search_logs", "list_alerts"]
    assert reg.get("search_logs").args_model is ListAlertsArgs  # type: ignore[union-attr]


def test_invalid_tool_name_is_refused() -> None:
    with pytest.raises(ValueError):
        ToolRegistry([_spec("rm -rf")])


def test_catalog_lists_every_stable_tool() -> None:
    entries = catalog(ToolRegistry([_spec("search_logs"), _spec("custom_tool")]))
    names = [e["name"] for e in entries]
    assert names[: len(TOOL_NAMES)] == list(TOOL_NAMES) and names[-1] == "custom_tool"
    by_name = {e["name"]: e for e in entries}
    assert by_name["search_logs"]["available"] is True
    assert by_name["query_metrics"]["available"] is False
    assert by_name["query_metrics"]["parameters"]["required"] == ["query"]
    assert by_name["rollout_history"]["parameters"]["required"] == ["name"]
    for name, model in ARGS_MODELS.items():
        assert set(by_name[name]["parameters"]["properties"]) == {
            f.alias or n for n, f in model.model_fields.items()
        }


def _source_tree(root: Path, top: str, packages: dict[str, str]) -> None:
    """A package ``top`` under ``root`` with one sub-package per entry (its __init__ text)."""
    (root / top).mkdir()
    (root / top / "__init__.py").write_text("")
    (root / top / "plain_module.py").write_text("SOURCE = 'not a package'\n")
    for name, text in packages.items():
        (root / top / name).mkdir()
        (root / top / name / "__init__.py").write_text(text)


_SOURCE_TEXT = """
from opsmate.tools.base import ToolSpec
from opsmate.tools.schemas import ListAlertsArgs
from opsmate.tools.source import Source

def _specs(settings):
    return [ToolSpec("list_alerts", "d", ListAlertsArgs, lambda a, c: None)]

SOURCE = Source(key="prometheus", kind="alerts", order=5, tool_specs=_specs)
"""


def test_live_registry_finds_sources_by_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _source_tree(
        tmp_path,
        "fakesrc",
        {
            "good": _SOURCE_TEXT,
            "no_source": "X = 1\n",  # a package without SOURCE is not a source
            "broken": "import opsmate_dependency_not_installed\n",
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr("opsmate.tools.source.SOURCE_PACKAGE", "fakesrc")
    reg = live_registry(Settings())
    assert reg.names() == ["list_alerts"]
    # a broken optional dependency costs only its own source, and says so
    assert list(reg.skipped) == ["fakesrc.broken"]
    assert "opsmate_dependency_not_installed" in reg.skipped["fakesrc.broken"]
    reg = live_registry(Settings(), retriever=FakeRetriever([]))
    assert reg.names() == ["list_alerts", "search_runbooks"]


def test_the_real_sources_are_found_in_registration_order() -> None:
    from opsmate.tools.source import discover

    found = discover()
    assert [s.key for _, s in found.sources] == [
        "prometheus",
        "elasticsearch",
        "loki",
        "kubernetes",
        "alertmanager",
    ]
    assert found.skipped == {}
    assert all(s.probe is not None for _, s in found.sources)


def test_live_registry_with_the_real_source_modules() -> None:
    reg = live_registry(Settings(), retriever=FakeRetriever([]))
    assert "search_runbooks" in reg.names()
    for spec in reg.specs():  # whatever the sources serve uses the stable schemas
        if spec.name in ARGS_MODELS:
            assert spec.args_model is ARGS_MODELS[spec.name]


def test_a_source_whose_tool_specs_fails_is_not_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _SOURCE_TEXT.replace(
        "def _specs(settings):", "def _specs(settings):\n    raise RuntimeError('bug')"
    )
    _source_tree(tmp_path, "fakesrc_buggy", {"buggy": text})
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr("opsmate.tools.source.SOURCE_PACKAGE", "fakesrc_buggy")
    with pytest.raises(RuntimeError):
        live_registry(Settings())


def test_search_runbooks_tool(tmp_path: Path) -> None:
    retriever = FakeRetriever([_hit(1), _hit(2)])
    ex = Executor(
        ToolRegistry([search_runbooks_spec(retriever)]),
        Constraints(environment="test"),
        now=datetime(2026, 10, 21, tzinfo=UTC),
        audit=AuditLog(tmp_path / "a.jsonl"),
    )
    r = ex.call("search_runbooks", {"query": "PoolTimeout", "top_k": 2, "service": "order-service"})
    assert r.status == "success"
    assert retriever.seen == [
        ("PoolTimeout", 2, {"service": "order-service", "environment": "test"})
    ]
    hit = r.data["hits"][0]
    assert hit["chunk_id"] == "c1" and hit["heading_path"] == ["DB connection pool", "Check"]
    assert hit["doc_version"] == "v123" and hit["version"] == "3"
    assert hit["metadata"]["service"] == "order-service"
    assert len(hit["parent_text"]) <= 1201
    assert r.source_refs == [
        "runbook://order-service/db-connection-pool.md#c1",
        "runbook://order-service/db-connection-pool.md#c2",
    ]
    empty = Executor(
        ToolRegistry([search_runbooks_spec(FakeRetriever([]))]),
        Constraints(),
        audit=AuditLog(tmp_path / "a.jsonl"),
    ).call("search_runbooks", {"query": "nothing"})
    assert empty.status == "no_data" and empty.data["low_evidence"] is True
