"""A page cut by the size budget must not lose the items it dropped: the next
cursor resumes right after the last item delivered (bundle replay + executor)."""

from __future__ import annotations

from pathlib import Path

from opsmate.config import ToolsConfig
from opsmate.paths import demo_dir
from opsmate.tools.audit import AuditLog
from opsmate.tools.base import Constraints
from opsmate.tools.bundle import load_bundle
from opsmate.tools.executor import Executor
from opsmate.tools.registry import ToolRegistry


def _executor(budget: int, tmp_path: Path) -> Executor:
    bundle = load_bundle(demo_dir() / "01-pool-exhaustion")
    return Executor(
        ToolRegistry(bundle.tool_specs()),
        Constraints(
            environment=bundle.meta.environment,
            window_from=bundle.meta.window_from,
            window_to=bundle.meta.window_to,
        ),
        config=ToolsConfig(result_token_budget=budget),
        now=bundle.meta.captured_at,
        audit=AuditLog(tmp_path / f"audit-{budget}.jsonl"),
    )


def _all_refs(ex: Executor, args: dict[str, object]) -> tuple[list[str], int]:
    refs: list[str] = []
    cursor = None
    cut_pages = 0
    for _ in range(200):
        call = dict(args)
        if cursor:
            call["cursor"] = cursor
        res = ex.call("search_logs", call)
        assert res.status in ("success", "partial"), res.error
        refs.extend(item["ref"] for item in res.data["items"])
        if res.truncated is not None:
            cut_pages += 1
        cursor = res.next_cursor
        if not cursor:
            break
    return refs, cut_pages


def test_pages_cut_for_size_lose_nothing(tmp_path: Path) -> None:
    args = {"service": "order-service", "page_size": 40}
    full, full_cuts = _all_refs(_executor(1_000_000, tmp_path), args)
    small, small_cuts = _all_refs(_executor(600, tmp_path), args)
    assert full_cuts == 0
    assert small_cuts > 0, "the budget should have cut some pages"
    assert small == full  # same items, same order, none lost or repeated
    assert len(full) > 40


def test_resumed_cursor_still_bound_to_its_query(tmp_path: Path) -> None:
    ex = _executor(600, tmp_path)
    first = ex.call("search_logs", {"service": "order-service", "page_size": 40})
    assert first.next_cursor
    other = ex.call("search_logs", {"service": "payment-service", "cursor": first.next_cursor})
    assert other.status == "rejected"
    assert other.error is not None and other.error.code == "bad_cursor"
