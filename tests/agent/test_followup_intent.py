"""Follow-up intents, the root-cause comparison, and the same frame with a model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from opsmate.agent.report.model import RootCause
from opsmate.agent.session.followup import refusals, root_changed
from opsmate.agent.session.intent import read_intent
from opsmate.agent.session.session import Session
from opsmate.agent.state import TaskState
from opsmate.config import Settings
from opsmate.tools.base import Constraints

KNOWN = ["order-service", "orders-db", "payment-service"]


@pytest.mark.parametrize(
    ("question", "kind", "lang", "extra"),
    [
        ("did the release change the pool settings?", "yes_no", "en", {"about_change": True}),
        ("发布是否更改了连接池设置？", "yes_no", "zh", {"about_change": True}),
        ("which pods restarted?", "which", "en", {"entity": "pod", "predicate": "restart"}),
        ("哪些 pod 重启过？", "which", "zh", {"entity": "pod", "predicate": "restart"}),
        ("what was DB_POOL_SIZE before?", "value", "en", {"when": "before"}),
        ("DB_POOL_SIZE 之前是多少？", "value", "zh", {"when": "before"}),
        ("is orders-db healthy?", "health", "en", {"names": ["orders-db"]}),
        ("orders-db 健康吗？", "health", "zh", {"names": ["orders-db"]}),
        ("what about the kafka consumer lag?", "open", "en", {}),
    ],
)
def test_intent(question: str, kind: str, lang: str, extra: dict[str, object]) -> None:
    intent = read_intent(question, KNOWN)
    assert (intent.kind, intent.lang) == (kind, lang)
    for key, value in extra.items():
        assert getattr(intent, key) == value, (key, getattr(intent, key))


def test_the_pool_topic_is_the_same_in_both_languages() -> None:
    en = read_intent("did the release change the pool settings?", KNOWN)
    zh = read_intent("发布是否更改了连接池设置？", KNOWN)
    assert "pool" in en.topic and "pool" in zh.topic and zh.topic_text == "连接池"


def test_the_root_cause_changes_with_its_cause_not_its_ids_or_cut() -> None:
    before = RootCause(
        statement="order-service returns errors because order-service: connections checked out "
        "of the SQLAlchemy pool (busiest pod) {service=order-service} rose from 4.0 to … (E7); "
        'then "PoolTimeout: QueuePool limit of size 10 overflow …" (E3, E9). Triggered by '
        "rollout revision 7 of order-service: env DB_POOL_SIZE '20' -> '10' (E5).",
        confidence=0.85,
        evidence=["E7", "E5", "E3", "E9"],
    )
    same = before.model_copy(
        update={
            "statement": before.statement.replace("4.0 to … (E7)", "… (E7)").replace(
                "(E3, E9)", "(E3, E9, E17, E19)"
            ),
            "evidence": ["E7", "E5", "E3", "E9", "E17", "E19"],
        }
    )
    assert not root_changed(before, same)  # the case: only ids and the cut differ
    other = RootCause(
        statement="payment-service is OOMKilled: memory at its 512Mi limit (E12).",
        confidence=0.8,
        evidence=["E12"],
    )
    assert root_changed(before, other) and root_changed(None, other) and root_changed(before, None)


def test_refusals_are_said_in_the_question_language() -> None:
    state = TaskState(goal="g", constraints=Constraints(environment="test"))
    (zh,) = refusals("也看看生产环境", state, ["test", "prod"], [])
    assert zh.startswith("不读取 'prod'：本会话仅限于 'test'")


def test_with_a_model_the_same_frame_applies(write_script) -> None:  # type: ignore[no-untyped-def]
    answers = []
    for model in ("none", write_script({"replies": []})):
        session = Session.open(settings=Settings(), demo=True, model=model)
        session.ask()
        calls = len(session.sources.executor.calls)
        got = []
        for q in ("did the release change the pool settings?", "which pods restarted?"):
            fu = session.ask(q).follow_up
            assert fu is not None and fu.new_calls == 0
            got.append(fu.answer)
        refused = session.ask("check prod too").follow_up
        assert refused is not None and refused.new_calls == 0 and refused.refused
        assert len(session.sources.executor.calls) == calls  # nothing called for any of them
        answers.append(got)
        session.close()
    # the same frame and the same words; the evidence ids may differ (the scripted model's
    # fallback plan reads in another order, so the same objects get other numbers)
    ids = re.compile(r"\bE\d+\b")
    assert [[ids.sub("E?", a) for a in got] for got in answers[:1]] == [
        [ids.sub("E?", a) for a in got] for got in answers[1:]
    ]


def test_an_investigated_follow_up_uses_the_frame_too(mini_bundle: Path) -> None:
    session = Session.open(settings=Settings(), bundle=mini_bundle, model="none")
    session.ask()
    report = session.ask("is catalog-service healthy?")  # only its pod was listed: read more
    fu = report.follow_up
    assert fu is not None and fu.new_calls > 0
    assert fu.answer.split(":")[0] in (
        "No",
        "Mostly, with warnings for catalog-service",
        "Yes, as far as what was read shows",
    ), fu.answer
    assert "Not read:" in fu.answer and f"{fu.new_calls} read-only call(s)" in fu.answer
