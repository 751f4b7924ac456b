"""Size budget of a tool result: keep what a model sees under a token budget.

Tokens are estimated as ``len(compact JSON) / 4``. Over budget, the largest list in
``data`` (``items``, ``series``, ``pods``, ``events`` ...; an outer list always
outweighs the lists inside it) loses items from its end until the data fits, keeping
at least one; then the next largest; then over-long strings are cut. The envelope
gets ``truncated`` (items dropped and a hint on how to narrow the query),
``complete: false``, and ``success`` becomes ``partial``.
"""

from __future__ import annotations

import json
from typing import Any

from opsmate.tools.base import ToolResult, Truncation

CHARS_PER_TOKEN = 4
_CUT_MARK = "…[cut {n} chars]"

HINTS: dict[str, str] = {
    "search_logs": "narrow the time range, add service/level filters or terms, "
    "or use log_stats for counts",
    "log_stats": "narrow the time range or filter by service or level",
    "query_metrics": "aggregate (sum by (...), topk) or narrow the time range",
    "list_alerts": "filter by state",
    "list_pods": "give a namespace or a label_selector",
    "get_events": "name the object (kind and name) or a namespace",
    "rollout_history": "name a single deployment",
    "node_conditions": "name a single node",
    "pod_logs": "lower tail_lines or set since_seconds",
    "search_runbooks": "lower top_k or make the query more specific",
}


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, default=str, separators=(",", ":"))


def estimate_tokens(obj: Any) -> int:
    """Rough token count of ``obj`` as the model would see it (compact JSON / 4)."""
    return (len(_dumps(obj)) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _lists(obj: Any, seen: list[list[Any]]) -> None:
    if isinstance(obj, dict):
        for value in obj.values():
            _lists(value, seen)
    elif isinstance(obj, list):
        if len(obj) > 1:
            seen.append(obj)
        for value in obj:
            _lists(value, seen)


def _strings(obj: Any, holder: Any, key: Any, seen: list[tuple[Any, Any, int]]) -> None:
    if isinstance(obj, str):
        if holder is not None:
            seen.append((holder, key, len(obj)))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _strings(v, obj, k, seen)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _strings(v, obj, i, seen)


def _drop_items(data: dict[str, Any], limit_chars: int) -> tuple[int, int | None]:
    """Trim lists in place; returns (items dropped, items kept in the first list trimmed)."""
    dropped = 0
    first_kept: int | None = None
    done: set[int] = set()
    while len(_dumps(data)) > limit_chars:
        candidates: list[list[Any]] = []
        _lists(data, candidates)
        candidates = [c for c in candidates if id(c) not in done]
        if not candidates:
            break
        target = max(candidates, key=lambda c: len(_dumps(c)))
        done.add(id(target))
        sizes = [len(_dumps(item)) for item in target]
        overhead = len(_dumps(data)) - (sum(sizes) + len(sizes) + 1)
        room = limit_chars - overhead - 2
        keep, used = 0, 0
        for size in sizes:
            if used + size + (1 if keep else 0) > room:
                break
            used += size + (1 if keep else 0)
            keep += 1
        keep = max(keep, 1)
        if keep < len(target):
            dropped += len(target) - keep
            if first_kept is None:
                first_kept = keep
            del target[keep:]
    return dropped, first_kept


def _cut_strings(data: dict[str, Any], limit_chars: int) -> int:
    """Shorten the longest strings in place until the data fits; returns chars removed."""
    removed = 0
    for _ in range(50):
        excess = len(_dumps(data)) - limit_chars
        if excess <= 0:
            break
        found: list[tuple[Any, Any, int]] = []
        _strings(data, None, None, found)
        if not found:
            break
        holder, key, length = max(found, key=lambda t: t[2])
        mark_len = len(_CUT_MARK.format(n=length)) + 2
        keep = max(0, length - excess - mark_len)
        if keep >= length or length <= mark_len + 16:
            break
        cut = length - keep
        holder[key] = holder[key][:keep] + _CUT_MARK.format(n=cut)
        removed += cut
    return removed


def fit_to_budget(result: ToolResult, budget_tokens: int) -> ToolResult:
    """Return ``result`` with ``data`` under ``budget_tokens`` (marked truncated if it was not)."""
    if budget_tokens <= 0 or estimate_tokens(result.data) <= budget_tokens:
        return result
    data = json.loads(_dumps(result.data))  # a private copy we may cut in place
    limit = budget_tokens * CHARS_PER_TOKEN
    before = estimate_tokens(data)
    dropped, kept = _drop_items(data, limit)
    cut_chars = _cut_strings(data, limit)
    hint = HINTS.get(result.tool, "narrow the query")
    if kept is not None and "page_size" in result.args:
        hint += f", or lower page_size to {kept}"
    hint += f" (result was ~{before} tokens, budget {budget_tokens})"
    if cut_chars:
        hint += f"; {cut_chars} characters of long text were cut"
    previous = result.truncated or Truncation()
    truncated = Truncation(
        items_dropped=previous.items_dropped + dropped,
        hint=f"{previous.hint}; {hint}" if previous.hint else hint,
    )
    status = "partial" if result.status == "success" else result.status
    return result.model_copy(
        update={"data": data, "truncated": truncated, "complete": False, "status": status}
    )
