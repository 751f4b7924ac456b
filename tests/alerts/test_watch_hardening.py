"""``watch`` (a network listener) and alert input against hostile clients and failing disks
(issue 24 §4), over real loopback HTTP and a REAL Alertmanager:

- hostile webhook bodies (nesting, huge numbers, lone surrogates, impossible times) are
  answered 400 with the reason, and ``diagnose --alert-file`` exits 2 with it;
- only ``application/json`` is read (a cross-site ``text/plain`` post is 415);
- half-sent requests are cut at their wall-clock deadline; connections are capped;
- ``--listen [::1]:PORT`` listens on IPv6;
- ``--out`` is checked at start; a folder that cannot take a report makes the receiver
  answer 503 (the notification is not acknowledged); a failed write leaves no ``.tmp``
  and the report is written once the folder can take it;
- secrets added with the ``alert_group`` block never reach the report files;
- the ``alerts`` table prints no raw control characters and no token; ``--alert`` on a
  silenced alert says so; an alert in another namespace than the configured one says it.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from am_fixture import AmServer, create_silence, post_alerts, run_alertmanager, wait_for

from opsmate.alerting.outdir import ReportFolder, ReportWriteError
from opsmate.alerting.receiver import WebhookReceiver
from opsmate.alerting.webhook import WebhookMessage, parse_webhook
from opsmate.cli import main

REPO = Path(__file__).resolve().parents[2]
BUNDLE = REPO / "src" / "opsmate" / "data" / "demo" / "01-pool-exhaustion"
OPSMATE = str(Path(sys.executable).parent / "opsmate")
ALERT = {
    "status": "firing",
    "labels": {"alertname": "OrderServiceHigh5xxRate", "service": "order-service"},
    "annotations": {"summary": "order-service 5xx above 5%"},
    "startsAt": "2026-10-21T02:02:00Z",
    "fingerprint": "fp-1",
}


def body(**alert: Any) -> dict[str, Any]:
    return {"version": "4", "status": "firing", "groupKey": "g", "alerts": [{**ALERT, **alert}]}


def hostile_bodies() -> dict[str, tuple[bytes, str]]:
    """name -> (raw body, what the refusal must say)."""
    ok = json.dumps(body())
    return {
        "deep nesting": (
            ok.replace('"fp-1"', '"fp-1", "x": ' + "[" * 50_000 + "]" * 50_000).encode(),
            "nested deeper than 32 levels",
        ),
        "5,000-digit number": (
            ok.replace('"groupKey"', '"truncatedAlerts": ' + "9" * 5000 + ', "groupKey"').encode(),
            "a number of 5000 characters",
        ),
        "lone surrogate in an annotation": (
            ok.replace("5xx above 5%", "5xx \\ud800 above").encode(),
            "alerts[0].annotations.summary: a lone UTF-16 surrogate",
        ),
        "lone surrogate in the alert name": (
            ok.replace(
                '"alertname": "OrderServiceHigh5xxRate"', '"alertname": "X\\udfff"'
            ).encode(),
            "alerts[0].labels.alertname: a lone UTF-16 surrogate",
        ),
        "startsAt 9999-12-31": (
            ok.replace("2026-10-21T02:02:00Z", "9999-12-31T23:59:59Z").encode(),
            "alerts[0].startsAt: '9999-12-31T23:59:59Z' is not a plausible alert time",
        ),
    }


class Recording:
    def __init__(self) -> None:
        self.seen: list[WebhookMessage] = []

    def __call__(self, msg: WebhookMessage) -> None:
        self.seen.append(msg)


@contextlib.contextmanager
def receiver(**kwargs: Any) -> Iterator[tuple[WebhookReceiver, Recording, str]]:
    handler = Recording()
    host = kwargs.pop("host", "127.0.0.1")
    rx = WebhookReceiver(host, 0, handler, workers=1, **kwargs)
    rx.start()
    h, port = rx.address
    try:
        yield rx, handler, f"http://{'[' + h + ']' if ':' in h else h}:{port}/"
    finally:
        rx.drain()


def raw_post(
    url: str, raw: bytes, content_type: str | None = "application/json"
) -> tuple[int, dict]:
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, data=raw, method="POST")
    if content_type is not None:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


# -- hostile bodies and content types ------------------------------------------------------
def test_hostile_bodies_are_answered_400_with_the_reason() -> None:
    with receiver() as (rx, handler, url):
        for name, (raw, reason) in hostile_bodies().items():
            status, answer = raw_post(url, raw)
            assert status == 400, (name, status, answer)
            assert reason in answer["error"], (name, answer)
        assert raw_post(url, json.dumps(body()).encode())[0] == 200  # still serving
        wait_for(lambda: len(handler.seen) == 1, "the good notification")
    assert rx.stats.rejected_bad == len(hostile_bodies())


def test_only_json_is_read() -> None:
    raw = json.dumps(body()).encode()
    with receiver() as (_rx, handler, url):
        for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
            status, answer = raw_post(url, raw, kind)
            assert status == 415 and "application/json" in answer["error"], (kind, answer)
        status, answer = raw_post(url, raw, None)
        assert status == 415, answer
        assert raw_post(url, raw, "application/json; charset=utf-8")[0] == 200
        wait_for(lambda: len(handler.seen) == 1, "the JSON notification")


@pytest.mark.parametrize("name", list(hostile_bodies()))
def test_diagnose_alert_file_exits_2_with_the_reason(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw, reason = hostile_bodies()[name]
    path = tmp_path / "webhook.json"
    path.write_bytes(raw)
    with pytest.raises(SystemExit) as done:
        main(["diagnose", "--demo", "--alert-file", str(path), "--json"])
    out, err = capsys.readouterr()
    assert done.value.code == 2, err
    assert reason in err and str(path) in err and "Traceback" not in err
    assert not out


# -- slow and piled-up clients -------------------------------------------------------------
def _connect(url: str) -> socket.socket:
    host, port = url.split("//")[1].rstrip("/").rsplit(":", 1)
    return socket.create_connection((host.strip("[]"), int(port)), timeout=5)


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def test_half_sent_requests_are_cut_at_their_deadline() -> None:
    with receiver(request_seconds=1.0) as (_rx, handler, url):
        slow = [_connect(url) for _ in range(3)]
        began = time.monotonic()
        for s in slow:  # headers trickle in, one byte at a time, never finished
            s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n")
        stop = threading.Event()

        def trickle() -> None:
            while not stop.wait(0.2):
                for s in slow:
                    with contextlib.suppress(OSError):
                        s.sendall(b"X")

        t = threading.Thread(target=trickle, daemon=True)
        t.start()
        try:
            closed = [_closed_by_server(s, 5.0) for s in slow]
            took = time.monotonic() - began
        finally:
            stop.set()
            for s in slow:
                s.close()
        # a body promised and never sent is cut too
        half = _connect(url)
        half.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 500\r\n\r\n{\"version\"")  # fmt: skip
        began_body = time.monotonic()
        assert _closed_by_server(half, 5.0)
        took_body = time.monotonic() - began_body
        half.close()
        assert raw_post(url, json.dumps(body()).encode())[0] == 200  # still serving
    print(f"slow headers cut after {took:.2f} s, slow body after {took_body:.2f} s")
    assert all(closed) and took < 1.0 + 2.0 and took_body < 1.0 + 2.0
    assert handler.seen and len(handler.seen) == 1


def _accepted(url: str) -> bool:
    """A notification is taken (200). While every slot is still held the server answers 503
    and closes at once, which can reach the client as a broken pipe mid-request: not yet."""
    import urllib.error

    try:
        return raw_post(url, json.dumps(body()).encode())[0] == 200
    except (urllib.error.URLError, OSError):
        return False


def test_connections_are_capped() -> None:
    before = threading.active_count()
    with receiver(request_seconds=30.0, max_connections=4) as (_rx, _handler, url):
        idle = [_connect(url) for _ in range(4)]
        time.sleep(0.3)  # each holds a handler thread, waiting for a request
        extra = [_connect(url) for _ in range(20)]
        answers = []
        for s in extra:
            s.settimeout(5)
            answers.append(s.recv(200))
        threads = threading.active_count()
        for s in idle + extra:
            s.close()
        wait_for(lambda: _accepted(url), "a free slot")
    assert all(a.startswith(b"HTTP/1.1 503") for a in answers), answers[:2]
    head, _, raw = answers[0].partition(b"\r\n\r\n")
    assert json.loads(raw) == {"status": "too many connections"} and b"Retry-After" in head
    # receiver: 1 HTTP + 1 reaper + 1 worker; 4 handlers: nothing per refused connection
    assert threads - before <= 3 + 4 + 1, (before, threads)


def test_listen_on_ipv6_loopback() -> None:
    from opsmate.commands.watch import parse_listen
    from opsmate.errors import UsageError

    assert parse_listen("[::1]:9095") == ("::1", 9095)
    with pytest.raises(UsageError, match="HOST:PORT"):
        parse_listen("::1:9095")
    with receiver(host="::1") as (_rx, handler, url):
        assert url.startswith("http://[::1]:")
        assert raw_post(url, json.dumps(body()).encode())[0] == 200
        wait_for(lambda: len(handler.seen) == 1, "the notification over IPv6")


# -- --out: checked, 503 while it cannot take a report, nothing lost or left behind ----------
def test_out_that_cannot_take_a_report_exits_2_at_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "not-a-folder"
    a_file.write_text("x")
    for out, why in ((a_file, "cannot create the folder"), (a_file / "sub", "cannot create")):
        with pytest.raises(SystemExit) as done:
            main(["watch", "--listen", "127.0.0.1:0", "--out", str(out), "--bundle", str(BUNDLE)])
        err = capsys.readouterr().err
        assert done.value.code == 2 and f"--out {out}" in err and why in err, err
    folder = ReportFolder(tmp_path / "small", min_free=1 << 62)  # "no space left"
    with pytest.raises(Exception, match="bytes free"):
        folder.check()


def test_503_while_out_cannot_take_a_report_then_the_kept_report_is_written(
    tmp_path: Path,
) -> None:
    out = tmp_path / "reports"
    folder = ReportFolder(out)
    folder.check()
    with receiver(can_accept=folder.problem) as (rx, handler, url):
        aside = tmp_path / "aside"
        out.rename(aside)
        out.write_text("the folder was replaced by a file")  # unmounted, removed ...
        status, answer = raw_post(url, json.dumps(body()).encode())
        assert status == 503 and "not a folder" in answer["error"], answer
        assert handler.seen == [] and rx.stats.unwritable == 1
        # a report whose write fails after the probe: nothing left, kept for later
        with pytest.raises(ReportWriteError, match="kept in memory"):
            folder.write({out / "r.json": "{}\n", out / "r.md": "# r\n"})
        out.unlink()
        aside.rename(out)
        assert not list(out.iterdir()) and folder.pending == 1
        assert raw_post(url, json.dumps(body()).encode())[0] == 200  # the probe flushes it
        assert sorted(p.name for p in out.iterdir()) == ["r.json", "r.md"]
        assert folder.pending == 0


def test_a_failed_write_leaves_no_tmp_and_nothing_half_written(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    folder = ReportFolder(out)
    folder.check()
    blocker = out / "b.md.tmp"  # the second file's temporary name is taken by a folder
    blocker.mkdir()
    with pytest.raises(ReportWriteError):
        folder.write({out / "a.json": "{}\n", out / "b.md": "# b \ud800\n"})
    blocker.rmdir()
    assert list(out.iterdir()) == []  # a.json removed again: all or nothing
    assert folder.flush() == 1
    assert (out / "b.md").read_text(encoding="utf-8") == "# b ?\n"  # never an encode error
    assert sorted(p.name for p in out.iterdir()) == ["a.json", "b.md"]


def test_secrets_in_the_alert_group_never_reach_the_files(tmp_path: Path) -> None:
    from opsmate.commands.watch import Investigator
    from opsmate.config import Settings

    slack = "xoxb-" + "1234567890-0987654321-" + "AbCdEfGhIjKlMnOpQrStUvWx"
    msg = parse_webhook(
        {
            **body(),
            "groupKey": f'{{}}:{{alertname="X"}} password=Gr0upPassw0rd {slack}',
            "receiver": "https://bot:Rcv5ecretPw@hooks.example/x?token=QueryTok3nValue",
        }
    )
    out = tmp_path / "reports"
    out.mkdir()
    Investigator(Settings(), out, bundle=BUNDLE, env=None, model="none", index_dir=None)(msg)
    files = sorted(out.iterdir())
    assert [p.suffix for p in files] == [".json", ".md"]
    text = "\n".join(p.read_text(encoding="utf-8") for p in files)
    for secret in ("Gr0upPassw0rd", slack, "Rcv5ecretPw", "QueryTok3nValue"):
        assert secret not in text, secret
    assert json.loads(files[0].read_text())["alert_group"]["group_key"]


# -- live alerts: the table, silences, namespaces ------------------------------------------
HOSTILE_LABELS = {
    "alertname": "PodBad",
    "severity": "warning\x1b[31m",
    "namespace": "shop",
    "pod": "api-7f\x1b]8;;http://evil\x07x\x9b2J\u202eevil",
    "token": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
}


@pytest.fixture(scope="module")
def am(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AmServer]:
    with run_alertmanager(tmp_path_factory.mktemp("am")) as server:
        post_alerts(
            server.url,
            [
                {"labels": HOSTILE_LABELS, "annotations": {"summary": "bad pod"}},
                {"labels": {"alertname": "Hushed", "namespace": "shop", "pod": "api-1"}},
                {"labels": {"alertname": "Elsewhere", "namespace": "billing", "pod": "inv-1"}},
            ],
        )
        create_silence(server.url, {"alertname": "Hushed"}, "planned maintenance")
        yield server


def _opsmate(cfg: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPSMATE_CONFIG": str(cfg), "COLUMNS": "200"}
    return subprocess.run(
        [OPSMATE, *args], capture_output=True, text=True, timeout=120, env=env, check=False
    )


def _config(tmp_path: Path, am_url: str, extra: str = "") -> Path:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        "model: none\ndefault_environment: test\nembedding: {backend: none}\n"
        f"environments:\n  test:\n    alertmanager: {{url: '{am_url}', timeout: 5}}\n{extra}",
        encoding="utf-8",
    )
    return cfg


def test_alerts_table_prints_no_control_characters_and_no_token(
    am: AmServer, tmp_path: Path
) -> None:
    cfg = _config(tmp_path, am.url)
    wait_for(lambda: "PodBad" in _opsmate(cfg, "alerts", "--json").stdout, "the alerts")
    for argv in (["alerts"], ["alerts", "--json"]):
        r = _opsmate(cfg, *argv)
        assert r.returncode == 0, r.stderr
        assert "PodBad" in r.stdout and "api-7f" in r.stdout
        for bad in ("\x1b", "\x9b", "\u202e", "\x07", HOSTILE_LABELS["token"]):
            assert bad not in r.stdout, (argv, repr(bad))


def test_alert_on_a_silenced_alert_says_it_is_silenced(am: AmServer, tmp_path: Path) -> None:
    cfg = _config(tmp_path, am.url)
    wait_for(lambda: '"silenced": true' in _opsmate(cfg, "alerts", "--json").stdout, "silence")
    r = _opsmate(cfg, "diagnose", "--alert", "Hushed", "--json")
    assert r.returncode in (0, 1), r.stderr
    assert "Hushed is silenced (silence " in r.stderr and "planned maintenance" in r.stderr
    notes = json.loads(r.stdout)["notes"]
    assert any("Hushed is silenced" in n and "planned maintenance" in n for n in notes), notes


def test_alert_in_another_namespace_says_where_it_is_investigated(
    am: AmServer, tmp_path: Path
) -> None:
    missing = tmp_path / "no-cluster.kubeconfig"  # never read: the note comes first
    extra = f"    kubernetes: {{kubeconfig: '{missing}', namespaces: [shop], timeout: 2}}\n"
    cfg = _config(tmp_path, am.url, extra)
    r = _opsmate(cfg, "diagnose", "--alert", "Elsewhere", "--json")
    said = "the alert names namespace billing, which environments.test.kubernetes.namespaces"
    assert said in r.stderr and "investigated in shop instead" in r.stderr, r.stderr
    assert any(said in n for n in json.loads(r.stdout)["notes"])
    assert "Traceback" not in r.stderr
