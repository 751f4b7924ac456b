"""The webhook receiver over real loopback HTTP: bounded queue, 503, de-duplication,
token, size limit, bad bodies, resolved notifications, drain. The handler blocks on an
event the test controls, so what is queued or running is never a matter of timing."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from am_fixture import http, wait_for

from opsmate.alerting.receiver import WebhookReceiver
from opsmate.alerting.webhook import WebhookMessage

DATA = Path(__file__).parent / "data"


def body(group: str, *, status: str = "firing", starts: str = "2026-11-03T05:52:00Z") -> dict:
    return {
        "version": "4",
        "groupKey": f'{{}}:{{alertname="{group}"}}',
        "status": status,
        "receiver": "opsmate",
        "groupLabels": {"alertname": group},
        "commonLabels": {"alertname": group},
        "alerts": [
            {
                "status": status,
                "labels": {"alertname": group, "namespace": "shop"},
                "annotations": {},
                "startsAt": starts,
                "fingerprint": f"fp-{group}",
            }
        ],
    }


class Blocking:
    """A handler that records each group and waits until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, msg: WebhookMessage) -> None:
        with self.lock:
            self.started.append(msg.alertname)
        self.release.wait(60)


@pytest.fixture
def blocking() -> Iterator[tuple[WebhookReceiver, Blocking, str]]:
    handler = Blocking()
    rx = WebhookReceiver("127.0.0.1", 0, handler, queue_size=2, workers=1, token="s3cret")
    rx.start()
    host, port = rx.address
    try:
        yield rx, handler, f"http://{host}:{port}/"
    finally:
        handler.release.set()
        rx.drain()


AUTH = {"Authorization": "Bearer s3cret"}


def post(url: str, payload: Any, headers: dict[str, str] | None = None) -> int:
    return http("POST", url, payload, {**AUTH, **(headers or {})})[0]


def test_full_queue_answers_503_and_duplicates_do_no_work(
    blocking: tuple[WebhookReceiver, Blocking, str],
) -> None:
    rx, handler, url = blocking
    assert post(url, body("A")) == 200
    wait_for(lambda: handler.started == ["A"], "A to start")  # the one worker is busy
    assert post(url, body("B")) == 200  # queued
    assert post(url, body("C")) == 200  # queued (queue of 2 now full)
    status, raw = http("POST", url, body("D"), AUTH)
    assert status == 503 and json.loads(raw)["status"] == "queue full"
    assert post(url, body("A")) == 200  # A runs: a duplicate, no new work
    assert post(url, body("B")) == 200  # B is queued: a duplicate
    assert rx.stats.duplicates == 2 and rx.stats.rejected_full == 1
    handler.release.set()
    wait_for(lambda: rx.stats.handled == 3, "the three groups")
    assert sorted(handler.started) == ["A", "B", "C"]
    assert post(url, body("D")) == 200  # the retry Alertmanager makes is now accepted
    assert post(url, body("A")) == 200  # the same notification again: already investigated
    wait_for(lambda: rx.stats.handled == 4, "D")
    assert sorted(handler.started) == ["A", "B", "C", "D"]
    # a changed group (a new start time) is new work
    assert post(url, body("A", starts="2026-11-03T07:00:00Z")) == 200
    wait_for(lambda: rx.stats.handled == 5, "A again")
    assert handler.started.count("A") == 2


def test_refusals(blocking: tuple[WebhookReceiver, Blocking, str]) -> None:
    rx, handler, url = blocking
    assert http("POST", url, body("A"))[0] == 401
    assert http("POST", url, body("A"), {"Authorization": "Bearer wrong"})[0] == 401
    bad = body("A")
    del bad["alerts"][0]["labels"]["alertname"]
    status, raw = http("POST", url, bad, AUTH)
    assert status == 400
    assert "alerts[0].labels.alertname: missing" in json.loads(raw)["error"]
    status, raw = http("POST", url, body("R", status="resolved"), AUTH)
    assert status == 200 and json.loads(raw)["investigated"] is False
    assert http("GET", url + "-/healthy")[0] == 200
    assert rx.stats.unauthorized == 2 and rx.stats.rejected_bad == 1 and rx.stats.resolved == 1
    assert handler.started == []


def test_body_size_limit() -> None:
    rx = WebhookReceiver("127.0.0.1", 0, lambda m: None, max_body_bytes=200)
    rx.start()
    host, port = rx.address
    try:
        status, raw = http("POST", f"http://{host}:{port}/", body("A"))
        assert status == 413 and "200 bytes" in json.loads(raw)["error"]
    finally:
        rx.drain()


def test_a_burst_of_50_with_retries_loses_nothing_and_repeats_nothing() -> None:
    seen: list[str] = []
    lock = threading.Lock()

    def handle(msg: WebhookMessage) -> None:
        with lock:
            seen.append(msg.alertname)

    rx = WebhookReceiver("127.0.0.1", 0, handle, queue_size=3, workers=2)
    rx.start()
    host, port = rx.address
    url = f"http://{host}:{port}/"
    groups = [f"G{i % 10}" for i in range(50)]  # 10 groups, each notified 5 times

    def send(group: str) -> int:
        refusals = 0
        while (status := http("POST", url, body(group))[0]) == 503:  # as Alertmanager retries
            refusals += 1
            threading.Event().wait(0.05)
        assert status == 200
        return refusals

    try:
        with ThreadPoolExecutor(max_workers=16) as pool:
            list(pool.map(send, groups))
        wait_for(lambda: rx.stats.in_flight == set(), "the queue to empty")
    finally:
        rx.drain()
    assert sorted(seen) == sorted(f"G{i}" for i in range(10))
    s = rx.stats
    assert s.received == 50 + s.rejected_full
    assert s.queued == 10 and s.handled == 10 and s.duplicates == 40


def test_drain_finishes_queued_work() -> None:
    release = threading.Event()
    done: list[str] = []

    def handle(msg: WebhookMessage) -> None:
        release.wait(60)
        done.append(msg.alertname)

    rx = WebhookReceiver("127.0.0.1", 0, handle, queue_size=4, workers=1)
    rx.start()
    host, port = rx.address
    for g in ("A", "B", "C"):
        assert http("POST", f"http://{host}:{port}/", body(g))[0] == 200
    stopper = threading.Thread(target=rx.drain)
    stopper.start()
    wait_for(lambda: not rx._accepting, "the receiver to stop accepting")
    release.set()
    stopper.join(30)
    assert not stopper.is_alive()
    assert done == ["A", "B", "C"]
