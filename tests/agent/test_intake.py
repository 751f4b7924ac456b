"""Intake: environment, services, window and identifiers from a question and flags."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from opsmate.agent.intake.question import (
    detect_environment,
    detect_identifiers,
    detect_onset,
    detect_services,
    run_intake,
)
from opsmate.errors import UsageError

NOW = datetime.fromisoformat("2026-10-21T10:06:00+08:00")


@pytest.mark.parametrize(
    ("question", "env"),
    [
        ("order-service error rate rose after the 10:00 release, test environment only", "test"),
        ("checkout fails in prod, do not touch staging", "prod"),
        ("only staging please; prod-1 looks fine", "staging"),
        ("只在测试环境排查：order-service 10:00 发布后错误率升高", "test"),
        ("不要动生产环境，预发的 api-gateway 报 503", "staging"),
        ("the load test against payment-service is failing", None),
        ("why is production slow", "prod"),
    ],
)
def test_environment(question: str, env: str | None) -> None:
    assert detect_environment(question) == env


def test_environment_maps_to_known_names() -> None:
    assert detect_environment("production only", ["test", "production"]) == "production"
    assert detect_environment("生产环境的 api-gateway", ["test", "prod"]) == "prod"


def test_services_known_first_then_patterns() -> None:
    found = detect_services(
        "redis and order-service are slow; inventory-api too", ["redis", "order-service"]
    )
    assert found == ["redis", "order-service", "inventory-api"]
    assert detect_services("test 环境的 order-service 从 10:12 开始报错") == ["order-service"]


def test_identifiers_and_onset() -> None:
    ids = detect_identifiers(
        "PoolTimeout, ORA-00054, max_connections, exit code 137, HTTP 503, OOMKilled"
    )
    for want in (
        "PoolTimeout",
        "ORA-00054",
        "max_connections",
        "exit code 137",
        "HTTP 503",
        "OOMKilled",
    ):
        assert want in ids
    assert detect_onset("error rate rose after the 10:00 release", NOW) == NOW.replace(
        hour=10, minute=0, second=0
    )
    assert detect_onset("从 14:10 左右开始延迟升高", NOW.replace(hour=15)).hour == 14
    assert detect_onset("no clock here", NOW) is None


def test_run_intake_precedence_and_window() -> None:
    window = (NOW - timedelta(minutes=36), NOW)
    got = run_intake(
        "order-service failing in prod",
        now=NOW,
        env="test",
        bundle_env="staging",
        bundle_window=window,
    )
    assert got.constraints.environment == "test" and got.env_source == "flag"
    assert (got.constraints.window_from, got.constraints.window_to) == window
    q = run_intake("order-service failing, test environment only", now=NOW, bundle_env="staging")
    assert q.constraints.environment == "test" and q.constraints.services == ["order-service"]
    b = run_intake("what happened?", now=NOW, bundle_env="staging", since="30m")
    assert b.constraints.environment == "staging"
    assert b.constraints.window_to - b.constraints.window_from == timedelta(minutes=30)
    d = run_intake("what happened in the last 2 hours?", now=NOW, default_env="test")
    assert d.constraints.environment == "test" and d.constraints.window_to == NOW
    assert d.constraints.window_to - d.constraints.window_from == timedelta(hours=2)
    with pytest.raises(UsageError):
        run_intake("x", now=NOW, since="yesterday")


def test_a_name_whose_dashboards_look_fine_is_not_the_subject() -> None:
    from opsmate.agent.intake.question import said_healthy

    q = "since ~11:04 login fails for everyone. CoreDNS dashboards look fine. What broke?"
    assert said_healthy(q) == {"coredns"}
    assert said_healthy("checkout pods are fine but cart is slow") == {"checkout"}
    # its web front end works: the front end is healthy, not the whole application
    web = said_healthy("agents stopped running, although the Huginn web UI works fine")
    assert "huginn-web" in web and "huginn" not in web


def test_a_status_reason_phrase_names_no_object_and_a_guess_is_not_the_symptom() -> None:
    from opsmate.agent.intake.names import detect_subject, detect_symptom
    from opsmate.agent.intake.question import said_healthy
    from opsmate.agent.observe.facts import FactKind

    q = (
        "Our chatbots on bots.example.com answer '503 Service Temporarily Unavailable' since "
        "10:20, while the builder still works. Are the viewer pods crashing after the upgrade?"
    )
    s = detect_subject(q)
    assert s.names == [] and s.kind is None  # "Service Temporarily" is HTTP's, not a Service
    assert s.hosts == ["bots.example.com"]
    assert detect_symptom(q) == FactKind.ERROR_RATE  # the 503 seen, not the crash guessed
    assert detect_symptom("Is the checkout pod crashing?") == FactKind.CRASH_LOOP  # all it says
    assert said_healthy(q) == {"builder"}
