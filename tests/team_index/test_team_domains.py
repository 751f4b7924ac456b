"""Team domains on the embedded index: two teams see disjoint runbooks, and a user's view
answers exactly what an index of its domains alone answers (hits, scores, low_evidence)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from teams import PAYMENTS, PLATFORM, QUERIES, only, write_tree

from opsmate.config import EmbeddingConfig, Settings
from opsmate.errors import KnowledgeIndexError
from opsmate.knowledge.domains import SHARED_DOMAIN, doc_domains
from opsmate.knowledge.index import KnowledgeIndex
from opsmate.knowledge.retrieve import open_retriever
from opsmate.knowledge.sources import discover
from opsmate.knowledge.types import SearchResponse


def build(root: Path, index_dir: Path) -> Path:
    files, errors = discover([root])
    assert not errors
    KnowledgeIndex(index_dir).update(files, embedding=EmbeddingConfig())
    return index_dir


@pytest.fixture(scope="module")
def indexes(module_env: Path, team_root: Path) -> dict[str, Path]:
    out = {"all": build(team_root, module_env / "idx-all")}
    for name, files in (("payments", PAYMENTS), ("platform", PLATFORM)):
        root = write_tree(module_env / f"only-{name}", only(files))
        out[name] = build(root, module_env / f"idx-{name}")
    return out


def user(index_dir: Path, domains: list[str] | None) -> Any:
    return open_retriever(index_dir, Settings(knowledge={"domains": domains}))


def signature(resp: SearchResponse) -> list[tuple[Any, ...]]:
    return [(h.chunk_id, h.source, round(h.score, 5), h.bm25_rank, h.vector_rank,
             None if h.vector_similarity is None else round(h.vector_similarity, 5))
            for h in resp.hits]  # fmt: skip


def test_a_runbooks_domains_come_from_front_matter_or_its_top_folder() -> None:
    assert doc_domains("payments/refunds.md", {}) == {"payments"}
    assert doc_domains("Payments/deep/refunds.md", {}) == {"payments"}
    assert doc_domains("top.md", {}) == {SHARED_DOMAIN}
    assert doc_domains("payments/x.md", {"domains": ["Security", "payments"]}) == {
        "security",
        "payments",
    }
    assert doc_domains("x.md", {"domains": "platform"}) == {"platform"}


def test_the_config_names_domains_or_says_what_is_wrong() -> None:
    assert Settings(knowledge={"domains": ["Payments", "payments"]}).knowledge.domains == [
        "payments"
    ]
    assert Settings().knowledge.domains is None  # unset: every domain
    with pytest.raises(ValidationError, match="domains is empty"):
        Settings(knowledge={"domains": []})
    with pytest.raises(ValidationError, match="not a name"):
        Settings(knowledge={"domains": ["pay ments"]})


@pytest.mark.needs_minilm
def test_two_teams_get_disjoint_results(indexes: dict[str, Path]) -> None:
    pay, plat = user(indexes["all"], ["payments"]), user(indexes["all"], ["platform"])
    seen_pay: set[str] = set()
    seen_plat: set[str] = set()
    for q in QUERIES:
        for mode in ("hybrid", "bm25", "vector"):
            seen_pay |= {h.source for h in pay.search(q, top_k=10, mode=mode).hits}
            seen_plat |= {h.source for h in plat.search(q, top_k=10, mode=mode).hits}
    assert seen_pay <= PAYMENTS and seen_plat <= PLATFORM
    assert seen_pay and seen_plat and not seen_pay & seen_plat
    # both teams: the union; the shared domain: the runbook at the top only
    both = user(indexes["all"], ["payments", "platform"])
    assert {h.source for h in both.search("connection pool", top_k=10).hits} & PLATFORM
    shared = user(indexes["all"], [SHARED_DOMAIN]).search("restart the worker", top_k=10)
    assert {h.source for h in shared.hits} == {"oncall-basics.md"}


@pytest.mark.needs_minilm
def test_a_domain_view_answers_as_an_index_of_that_domain_alone(
    indexes: dict[str, Path],
) -> None:
    """Filtered before ranking: another team's runbooks move no score, rank or flag."""
    for team in ("payments", "platform"):
        view = user(indexes["all"], [team])
        alone = user(indexes[team], None)
        for q in [*QUERIES, "mongodb replica set election"]:  # the last: in no runbook
            for mode in ("hybrid", "bm25", "vector"):
                a = view.search(q, top_k=5, mode=mode, explain=True)
                b = alone.search(q, top_k=5, mode=mode, explain=True)
                assert signature(a) == signature(b), (team, q, mode)
                assert a.low_evidence == b.low_evidence, (team, q, mode)
                assert a.explain and b.explain
                assert a.explain["evidence"] == b.explain["evidence"], (team, q, mode)


@pytest.mark.needs_minilm
def test_the_whole_index_differs_so_the_view_is_not_trivially_equal(
    indexes: dict[str, Path],
) -> None:
    """The check above could not pass by accident: unrestricted, scores do change."""
    whole = user(indexes["all"], None).search("connection pool exhausted PoolTimeout", top_k=5)
    alone = user(indexes["payments"], None).search("connection pool exhausted PoolTimeout", top_k=5)
    assert signature(whole) != signature(alone)
    assert {h.source for h in whole.hits} & PLATFORM


@pytest.mark.needs_minilm
def test_a_user_with_no_runbook_in_its_domains_is_told_so(indexes: dict[str, Path]) -> None:
    with pytest.raises(KnowledgeIndexError, match=r"no runbook in your domains \(nobody\)"):
        user(indexes["all"], ["nobody"])
