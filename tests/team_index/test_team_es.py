"""The team index in Elasticsearch, against the ES protocol fixture (no Elasticsearch runs
here): publish through _bulk and an atomic alias switch, search through one _msearch of
BM25F + kNN with the domain filter inside both queries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from es_protocol import ESKnowledgeFixture
from teams import PAYMENTS, PLATFORM, QUERIES, TEAM_RUNBOOKS, only, write_tree

from opsmate.config import EmbeddingConfig, Settings
from opsmate.errors import KnowledgeIndexError
from opsmate.knowledge.es_index import ESRetriever
from opsmate.knowledge.es_publish import publish_es
from opsmate.knowledge.retrieve import open_retriever
from opsmate.knowledge.sources import discover

pytestmark = pytest.mark.needs_minilm
OPSMATE = Path(sys.executable).parent / "opsmate"
DOMAINS_CLAUSE = {"terms": {"domains": ["payments"]}}


def es_settings(url: str, domains: list[str] | None, **kw: Any) -> Settings:
    return Settings(knowledge={"backend": "elasticsearch", "url": url, "domains": domains, **kw})


@pytest.fixture(scope="module")
def es(module_env: Path, team_root: Path) -> Iterator[ESKnowledgeFixture]:
    with ESKnowledgeFixture() as fx:
        config = module_env / "es.yaml"
        config.write_text(f"knowledge:\n  backend: elasticsearch\n  url: {fx.url}\n", "utf-8")
        proc = subprocess.run(
            [str(OPSMATE), "index", str(team_root), "--to", fx.url, "--json",
             "--config", str(config)],
            capture_output=True, text=True, timeout=300, env=os.environ.copy(),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        fx.summary = json.loads(proc.stdout)  # type: ignore[attr-defined]
        yield fx


def test_publish_writes_a_generation_index_and_points_the_alias_at_it(
    es: ESKnowledgeFixture,
) -> None:
    s = es.summary  # type: ignore[attr-defined]
    assert s["backend"] == "elasticsearch" and s["published"] and s["generation"] == 1
    assert s["domains"] == {"payments": 4, "platform": 3, "security": 1, "shared": 1}
    assert es.aliases == {"opsmate-runbooks": "opsmate-runbooks-g1"}
    index = es.indices["opsmate-runbooks-g1"]
    assert len(index.visible) == s["chunks"]
    props = index.mappings["properties"]
    assert props["embedding"] == {"type": "dense_vector", "dims": 384, "index": True,
                                  "similarity": "cosine"}  # fmt: skip
    assert props["body"]["analyzer"] == "whitespace" and props["domains"]["type"] == "keyword"
    assert index.mappings["_meta"]["digest"] and index.mappings["_meta"]["generation"] == 1
    doc = next(d for d in index.visible.values() if d["source"] == "security/psp-key-rotation.md")
    assert doc["domains"] == ["payments", "security"]


def test_the_domain_filter_is_inside_both_queries_before_scoring(
    es: ESKnowledgeFixture,
) -> None:
    es.require_domains = True  # the fixture refuses a search without it (HTTP 400)
    es.searches.clear()
    try:
        r = ESRetriever(es_settings(es.url, ["payments"]))
        resp = r.search("connection pool exhausted PoolTimeout", top_k=5)
    finally:
        es.require_domains = False
    assert resp.hits and {h.source for h in resp.hits} <= PAYMENTS
    bodies = [b for _i, b in es.searches if "query" in b or "knn" in b]
    lexical = next(b for b in bodies if "query" in b and "aggs" not in b)
    knn = next(b for b in bodies if "knn" in b)["knn"]
    assert DOMAINS_CLAUSE in lexical["query"]["bool"]["filter"]
    assert DOMAINS_CLAUSE in knn["filter"]  # a pre-filter: the k nearest among allowed only
    assert knn["k"] == 30 and knn["num_candidates"] >= knn["k"] and len(knn["query_vector"]) == 384
    fields = lexical["query"]["bool"]["should"][0]["combined_fields"]["fields"]
    assert fields == ["body^1", "heading^2", "meta^1.5", "symptom^0.5"]
    assert all(i == "opsmate-runbooks-g1" for i, _b in es.searches)  # the generation, not alias


def test_two_users_get_disjoint_results(es: ESKnowledgeFixture) -> None:
    pay = ESRetriever(es_settings(es.url, ["payments"]))
    plat = ESRetriever(es_settings(es.url, ["platform"]))
    got_pay: set[str] = set()
    got_plat: set[str] = set()
    for q in QUERIES:
        for mode in ("hybrid", "bm25", "vector"):
            got_pay |= {h.source for h in pay.search(q, top_k=10, mode=mode).hits}  # type: ignore[arg-type]
            got_plat |= {h.source for h in plat.search(q, top_k=10, mode=mode).hits}  # type: ignore[arg-type]
    assert got_pay and got_plat and got_pay <= PAYMENTS and got_plat <= PLATFORM


def test_hits_carry_the_contract_fields_and_rank_like_the_runbooks_say(
    es: ESKnowledgeFixture,
) -> None:
    r = open_retriever(None, es_settings(es.url, None))
    assert isinstance(r, ESRetriever)
    resp = r.search("too many clients already", top_k=3)
    top = resp.hits[0]
    assert top.source == "platform/postgres-max-connections.md" and not resp.low_evidence
    assert top.heading_path and top.text and top.parent_text and top.doc_version
    assert top.metadata["service"] == "postgresql" and top.bm25_rank and top.vector_rank
    assert [h.rank for h in resp.hits] == list(range(1, len(resp.hits) + 1))
    assert r.search("declines", top_k=3, filters={"environment": "test"}).hits
    assert all(  # card-declines is prod only
        h.source != "payments/card-declines.md"
        for h in r.search("card declines doubled", top_k=10, filters={"environment": "test"}).hits
    )
    assert r.search("mongodb replica set election quorum lost", top_k=3).low_evidence
    ex = r.search("too many clients already", top_k=3, explain=True)
    assert ex.explain and ex.explain["stages"] == ["fusion"] and "evidence" in ex.explain
    assert ex.hits[0].explain and ex.hits[0].explain["fused_rank"] == 1


def test_a_republish_switches_the_alias_atomically_and_keeps_one_generation_back(
    es: ESKnowledgeFixture, tmp_path: Path
) -> None:
    root = write_tree(tmp_path / "rb", TEAM_RUNBOOKS)
    settings = es_settings(es.url, None, collection="flip-runbooks")
    files, _ = discover([root])
    first = publish_es(files, settings, url=es.url, embedding=EmbeddingConfig())
    r = ESRetriever(es_settings(es.url, None, collection="flip-runbooks", refresh_seconds=0))
    assert r.search("NodeLocal DNSCache", top_k=1).hits[0].source == "platform/dns-failures.md"
    (root / "platform/dns-failures.md").unlink()
    files, _ = discover([root])
    second = publish_es(files, settings, url=es.url, embedding=EmbeddingConfig())
    assert (first.generation, second.generation) == (1, 2) and second.reused == second.chunks
    assert es.aliases["flip-runbooks"] == "flip-runbooks-g2"
    assert "platform/dns-failures.md" not in {
        h.source for h in r.search("NodeLocal DNSCache", top_k=10).hits
    }
    same = publish_es(files, settings, url=es.url, embedding=EmbeddingConfig())
    assert not same.published and same.generation == 2
    (root / "oncall-basics.md").write_text("# On-call\n\nPage the secondary.\n")
    files, _ = discover([root])
    third = publish_es(files, settings, url=es.url, embedding=EmbeddingConfig())
    assert third.generation == 3 and third.removed_generations == [1]
    assert {n for n in es.indices if n.startswith("flip-")} == {"flip-runbooks-g2",
                                                               "flip-runbooks-g3"}  # fmt: skip


def test_nothing_published_says_how_to_publish(es: ESKnowledgeFixture) -> None:
    with pytest.raises(KnowledgeIndexError, match="opsmate index RUNBOOK_DIR --to"):
        open_retriever(None, es_settings(es.url, None, collection="never-published"))


def test_one_team_tree_published_alone_ranks_its_runbooks_first(
    es: ESKnowledgeFixture, tmp_path: Path
) -> None:
    """Sanity of the fixture's BM25F and kNN: the obvious runbook comes first."""
    root = write_tree(tmp_path / "pay", only(PAYMENTS))
    files, _ = discover([root])
    publish_es(files, es_settings(es.url, None, collection="pay-only"), url=es.url,
               embedding=EmbeddingConfig())  # fmt: skip
    r = ESRetriever(es_settings(es.url, None, collection="pay-only"))
    for q, want in (("refunds pending for hours", "payments/refunds-stuck.md"),
                    ("rotate the provider API key", "security/psp-key-rotation.md"),
                    ("card declines doubled", "payments/card-declines.md")):  # fmt: skip
        for mode in ("hybrid", "bm25", "vector"):
            assert r.search(q, top_k=3, mode=mode).hits[0].source == want, (q, mode)  # type: ignore[arg-type]
