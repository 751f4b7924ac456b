"""An alert's ``runbook_url`` that points at an indexed runbook makes it the first one read."""

from __future__ import annotations

from pathlib import Path

from opsmate.agent.runbooks.library import RunbookLibrary, reference_match
from opsmate.agent.session.session import Session
from opsmate.config import Settings

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "src/opsmate/data/demo/01-pool-exhaustion"


def test_references_match_runbook_paths() -> None:
    src = "order-service/db-connection-pool.md"
    for ref in (
        "https://git.example.com/ops/runbooks/-/blob/main/order-service/db-connection-pool.md",
        "https://wiki.example.com/runbooks/order-service/db-connection-pool",
        "order-service/db-connection-pool.md",
        "/srv/runbooks/order-service/db-connection-pool.md",
        "file:///srv/runbooks/order-service/db%2Dconnection-pool.md#diagnosis",
    ):
        assert reference_match(ref, src) > 0, ref
    assert reference_match("https://x.example/other/db-connection-pool.md", src) == 0
    assert reference_match("https://x.example/service/db-connection-pool.md", src) == 0


def test_library_finds_by_path_then_by_unique_file_name() -> None:
    lib = RunbookLibrary([DEMO / "runbooks"])
    doc = lib.find("https://git.example.com/r/blob/main/order-service/db-connection-pool.md")
    assert doc is not None and doc.source == "order-service/db-connection-pool.md"
    by_name = lib.find("https://wiki.example.com/page/stock-sync-lag")
    assert by_name is not None and by_name.source == "inventory-service/stock-sync-lag.md"
    assert lib.find("https://runbooks.example/kubernetes/kubepodcrashlooping") is None


def ask(preferred: list[str]) -> Session:
    session = Session.open(
        settings=Settings(), bundle=DEMO, model="none", preferred_runbooks=preferred
    )
    session.ask("order-service error rate rose after the 10:00 release")
    session.close()
    return session


def test_the_preferred_runbook_is_read_first() -> None:
    plain = ask([])
    wanted = "order-service/db-connection-pool.md"
    assert plain.store.runbooks[0].source != wanted  # the question's search ranks another first
    hinted = ask([f"https://git.example.com/ops/runbooks/-/blob/main/{wanted}"])
    assert hinted.store.runbooks[0].source == wanted
    assert hinted.store.runbooks[0].id == "R1"
    assert hinted.reports[-1].status == "complete"


def test_a_preferred_runbook_for_another_service_is_read_but_not_followed() -> None:
    wanted = "inventory-service/stock-sync-lag.md"
    hinted = ask([f"https://git.example.com/ops/runbooks/-/blob/main/{wanted}"])
    assert hinted.store.runbooks[0].source == wanted
    calls = [str(c.args) for c in hinted.sources.executor.calls]
    assert not any("kafka_consumergroup_lag" in c for c in calls)  # its checks do not apply


def test_an_unknown_runbook_url_is_a_note_not_a_failure() -> None:
    session = ask(["https://runbooks.example/nowhere/unknown-thing"])
    assert session.reports[-1].status in ("complete", "partial")
    assert session.store.runbooks[0].source != "nowhere/unknown-thing"
