"""Follow-up answers built from the question's intent, asked as a user would.

``opsmate diagnose --session FILE QUESTION`` on the demo bundle and on
``tests/agent/data/cart-restarts`` (a cart-service release that changed two redis
settings and a feature flag; its pod restarted 3 times): yes/no about a change names
every changed setting the evidence ties to the topic, "which" lists, "what was X
before" gives the value, "is X healthy" names the problems, a Chinese question gets a
Chinese frame, every answer says what was not read, and none of these makes a call.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from session_cli_util import CART_RESTARTS, follow_up, isolated_env, run


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("follow-up-answers")
    env = isolated_env(root)
    out: dict[str, Any] = {"env": env, "root": root}
    for name, where in (("demo", ["--demo"]), ("cart", ["--bundle", str(CART_RESTARTS)])):
        path = root / f"{name}.json"
        proc = run("diagnose", *where, "--session", str(path), "--json", env=env)
        assert proc.returncode == 0, proc.stderr
        out[name] = path
    return out


def ask(sessions: dict[str, Any], which: str, question: str, tmp_path: Path) -> dict[str, Any]:
    """The follow-up block of ``question`` asked in a copy of session ``which``."""
    path = tmp_path / f"{which}.json"
    shutil.copyfile(sessions[which], path)
    report = follow_up(path, question, sessions["env"])
    fu = report["follow_up"]
    assert fu["question"] == question
    cited = {e["id"] for e in report["evidence"]} | {r["id"] for r in report["runbooks"]}
    assert set(fu["evidence"]) <= cited  # every id it cites is in the report
    return dict(fu)


def test_yes_no_about_a_change_names_every_pool_setting(
    sessions: dict[str, Any], tmp_path: Path
) -> None:
    fu = ask(sessions, "demo", "did the release change the pool settings?", tmp_path)
    answer = fu["answer"]
    assert answer.startswith("Yes: rollout revision 7 of order-service at 09:59:41 changed")
    assert "DB_POOL_SIZE '20' -> '10'" in answer and "DB_MAX_OVERFLOW '10' -> '0'" in answer
    assert "max_overflow=0" in answer  # the read line that ties it to the pool, quoted
    assert "image" not in answer.split("(E5)")[0]  # the image is not a pool setting
    assert "Not read: anything outside test, 2026-10-21 09:30 .. 10:06." in answer
    assert fu["new_calls"] == 0 and "E5" in fu["evidence"]


def test_the_same_question_in_chinese_gets_a_chinese_frame(
    sessions: dict[str, Any], tmp_path: Path
) -> None:
    fu = ask(sessions, "demo", "发布是否更改了连接池设置？", tmp_path)
    answer = fu["answer"]
    assert answer.startswith("是的：rollout revision 7 of order-service（09:59:41）更改了")
    assert "DB_POOL_SIZE '20' -> '10'" in answer and "DB_MAX_OVERFLOW '10' -> '0'" in answer
    assert "未读取：" in answer and "Not read" not in answer
    assert fu["new_calls"] == 0  # answered from what was read, not about other things


def test_which_pods_restarted_when_none_did(sessions: dict[str, Any], tmp_path: Path) -> None:
    fu = ask(sessions, "demo", "which pods restarted?", tmp_path)
    answer = fu["answer"]
    assert answer.startswith("None of the 10 pods read restarted")
    assert "stopped and replaced during the rollout, not restarted" in answer
    assert "order-service-5b7c6d9f8b-5kxbf" in answer and fu["new_calls"] == 0


def test_which_pods_restarted_lists_them(sessions: dict[str, Any], tmp_path: Path) -> None:
    fu = ask(sessions, "cart", "which pods restarted?", tmp_path)
    answer = fu["answer"]
    assert answer.startswith("1 pod(s) restarted: cart-service-8a9b7-mm2qz (3 restart(s), last")
    assert "catalog-service" not in answer and fu["new_calls"] == 0
    zh = ask(sessions, "cart", "哪些 pod 重启过？", tmp_path)["answer"]
    assert zh.startswith("1 个 Pod 重启过：cart-service-8a9b7-mm2qz（重启 3 次")


def test_what_value_before_answers_the_value(sessions: dict[str, Any], tmp_path: Path) -> None:
    fu = ask(sessions, "demo", "what was DB_POOL_SIZE before?", tmp_path)
    assert fu["answer"].startswith("DB_POOL_SIZE was '20' before rollout revision 7")
    assert "set it to '10'" in fu["answer"] and not fu["answer"].startswith("Yes")
    fu = ask(sessions, "demo", "what was the error rate before?", tmp_path)
    assert fu["answer"].startswith("Before 10:05:00 it was 0.0: order-service request rate")


def test_is_it_healthy_names_the_problems_and_what_was_not_read(
    sessions: dict[str, Any], tmp_path: Path
) -> None:
    fu = ask(sessions, "demo", "is orders-db healthy?", tmp_path)
    answer = fu["answer"]
    assert answer.startswith("No: problems were seen for orders-db:")
    assert "Liveness probe failed: pg_isready" in answer and "orders-db-0 Running 1/1" in answer
    # its logs were read (the pool that ran dry is order-service's client of orders-db);
    # its metrics were not, and the answer says so
    assert "Not read: metrics of orders-db;" in answer and "logs of orders-db" not in answer
    assert fu["new_calls"] == 0


def test_a_change_question_names_only_what_touches_the_topic(
    sessions: dict[str, Any], tmp_path: Path
) -> None:
    fu = ask(sessions, "cart", "did the release change the redis settings?", tmp_path)
    answer = fu["answer"]
    assert (
        "REDIS_POOL_SIZE '32' -> '8'" in answer and "REDIS_READ_TIMEOUT_MS '500' -> '50'" in answer
    )
    assert "FEATURE_BANNER" not in answer and answer.startswith("Yes:")


def test_the_follow_ups_are_kept_in_the_session(sessions: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "kept.json"
    shutil.copyfile(sessions["demo"], path)
    for q in ("which pods restarted?", "is orders-db healthy?"):
        follow_up(path, q, sessions["env"])
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["state"]["questions"][-2:] == ["which pods restarted?", "is orders-db healthy?"]
    assert [r["follow_up"]["new_calls"] for r in saved["reports"][1:]] == [0, 0]
