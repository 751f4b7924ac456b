"""The evidence viewer's text without a screen: what it covers, runbook steps, records."""

from __future__ import annotations

from types import SimpleNamespace

from opsmate.tui.result_view import CODE, coverage, record_line, rendered, section_steps

SECTION = """Each pod opens at most `DB_POOL_SIZE` connections; this paragraph explains why.

1. Confirm the 5xx are order-service's own:

   ```promql
   sum by (code) (rate(http_requests_total{service="order-service"}[5m]))
   ```

2. Compare connections in use with the configured capacity. In use pinned at the
   maximum means the pool is exhausted.
"""


def test_section_steps_are_the_list_items_and_commands_not_the_first_sentence() -> None:
    steps = section_steps(SECTION)
    assert steps[0] == "1. Confirm the 5xx are order-service's own:"
    query = 'sum by (code) (rate(http_requests_total{service="order-service"}[5m]))'
    assert steps[1] == f"{CODE} {query}"
    assert steps[2].startswith("2. Compare connections") and steps[2].endswith("is exhausted.")
    assert not any("this paragraph explains" in s for s in steps)
    assert section_steps("Just prose.\nTwo lines.") == ["Just prose.", "Two lines."]


def test_coverage_never_calls_a_cut_view_complete() -> None:
    cut = SimpleNamespace(complete=False)
    level, text = coverage(cut, None)
    assert level == "warn" and text.startswith("excerpt only") and "complete" not in text
    whole = {"complete": True, "data": {"items": [{"a": 1}, {"a": 2}]}}
    level, text = coverage(cut, whole)
    assert level == "ok" and "all 2 record(s) shown" in text and "report's copy was cut" in text
    paged = {"complete": False, "truncated": {"items_dropped": 40}, "data": {"items": [{}]}}
    level, text = coverage(SimpleNamespace(complete=False), paged)
    assert level == "warn" and text.startswith("partial") and "40 more not read" in text


def test_records_are_whole_one_a_line() -> None:
    url = "https://sqlalche.me/e/20/3o7r"
    msg = "PoolTimeout: QueuePool limit reached (Background on this error at: " + url + ")" * 3
    item = {"@timestamp": "10:04:49", "level": "error", "service": "orders", "message": msg,
            "pod": "orders-1", "labels": {"app": "orders"}}  # fmt: skip
    line = record_line(item)
    assert line.startswith(f"10:04:49 error orders: {msg}")
    assert "pod=orders-1" in line and 'labels={"app": "orders"}' in line
    text = rendered("search_logs", {"total": 2, "items": [item, item]})
    assert text.splitlines()[:2] == ["total: 2", "items (2):"] and text.count(url) == 2
