"""``opsmate watch``: receive Alertmanager webhooks and diagnose each firing group.

Each firing group (one webhook notification) becomes one incident
(:mod:`opsmate.alerting.incident`), investigated with the configured live sources, or
``--bundle`` for a fixed data set, and written to ``--out`` as
``<UTC time>-<alertname>.json`` (the report, contracts section 3, plus an
``alert_group`` extension: group key, alert names, fingerprints) and ``.md``. Resolved
notifications are logged, never investigated. Receiving, the bounded queue, the 503s
and the de-duplication are :mod:`opsmate.alerting.receiver`.

Loopback by default; a bearer token (keyring entry ``watch``, or ``OPSMATE_WATCH_TOKEN``)
is demanded when one is set, and required with ``alerting.require_token``. Ctrl-C (or
SIGTERM) stops accepting, lets queued and running investigations finish and exits 0;
a second Ctrl-C aborts (130). Progress lines go to stderr.
"""

from __future__ import annotations

import ipaddress
import re
import signal
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from opsmate.config import Settings, load_settings
from opsmate.errors import ConfigError, ExitCode, OpsmateError, UsageError

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
SINK_DRAIN_SECONDS = 30.0  # at shutdown, how long queued sink deliveries may still take


class Interrupted(OpsmateError):
    """A second Ctrl-C: investigations abandoned."""

    exit_code = ExitCode.INTERRUPTED


def parse_listen(listen: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[::1]:PORT`` or ``:PORT`` (loopback) -> (host, port)."""
    text = listen.strip()
    m = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d+)|([^:\s]*):(\d+)", text)
    if not m:
        raise UsageError(f"--listen {listen!r}: expected HOST:PORT, e.g. 127.0.0.1:9095")
    host = m.group(1) or m.group(3) or "127.0.0.1"
    port = int(m.group(2) or m.group(4))
    if not 0 <= port <= 65535:
        raise UsageError(f"--listen {listen!r}: port out of range")
    return host, port


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _log(line: str) -> None:
    from opsmate.tools.redact import clean

    stamp = datetime.now(UTC).strftime("%H:%M:%S")
    sys.stderr.write(clean(f"[{stamp}] {line}\n"))
    sys.stderr.flush()


def report_paths(out: Path, alertname: str, now: datetime | None = None) -> tuple[Path, Path]:
    """``out/<UTC time>-<alertname>.json`` and ``.md``; never an existing file's name."""
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    name = _SAFE.sub("_", alertname)[:80] or "alert"
    base = f"{stamp}-{name}"
    n = 1
    while (out / f"{base}.json").exists() or (out / f"{base}.md").exists():
        n += 1
        base = f"{stamp}-{name}-{n}"
    return out / f"{base}.json", out / f"{base}.md"


def _write(path: Path, text: str) -> None:
    """One file through ``<name>.tmp`` (removed on failure: never left behind)."""
    from opsmate.alerting.outdir import _write_one

    _write_one(path, text)


class Investigator:
    """Diagnoses one webhook notification and writes its report files (thread-safe)."""

    def __init__(
        self,
        settings: Settings,
        out: Path,
        *,
        bundle: Path | None,
        env: str | None,
        model: str | None,
        index_dir: Path | None,
        extras: Any = None,
        folder: Any = None,
    ) -> None:
        from opsmate.alerting.outdir import ReportFolder

        self.settings = settings
        # --out: reports written all or nothing, kept and retried when a write fails
        self.folder = folder if folder is not None else ReportFolder(out, _log)
        self.extras = extras  # history, sinks, metrics (opsmate.alerting.aftercare)
        self.out = out
        self.bundle = bundle
        self.env = env
        self.model = model
        self.index_dir = index_dir
        self._names = threading.Lock()
        self.written: list[Path] = []

    def __call__(self, msg: Any) -> None:
        started = time.monotonic()
        box: dict[str, Any] = {"status": "failed"}
        try:
            self._investigate(msg, box)
        finally:
            if self.extras is not None:
                self.extras.observe(box["status"], time.monotonic() - started, box.get("session"))

    def _investigate(self, msg: Any, box: dict[str, Any]) -> None:
        from opsmate.agent.report.model import render_markdown
        from opsmate.agent.session.session import Session
        from opsmate.alerting.incident import build_incident
        from opsmate.textsafe import dumps_json
        from opsmate.tools.redact import Redactor

        incident = build_incident(
            msg.alerts,
            config=self.settings.alerting,
            known_environments=self.settings.environments,
        )
        _log(f"investigating {incident.title}: {incident.question[:160]}")
        started = time.monotonic()
        session = Session.open(
            settings=self.settings,
            bundle=self.bundle,
            model=self.model,
            index_dir=self.index_dir,
            env=self.env or incident.environment,
            services=[],
            preferred_runbooks=incident.runbook_urls,
        )
        box["session"] = session
        try:
            report = session.ask(incident.question)
        finally:
            session.close()
        rec = None
        if self.extras is not None:  # names the past incidents it has seen before
            report, rec = self.extras.before_write(report, session, msg.group_key, msg.alerts)
        data = report.to_json()
        data["alert_group"] = {
            "group_key": msg.group_key,
            "receiver": msg.receiver,
            "alertnames": incident.alertnames,
            "fingerprints": [a.fingerprint for a in incident.alerts if a.fingerprint],
            "notes": incident.notes,
        }
        # what leaves (files, sinks) is redacted last, whatever was added to the report
        red = Redactor(self.settings.tools.redact_patterns)
        data = red.clean(data)
        with self._names:  # two groups of one alert name in the same second: two files
            json_path, md_path = report_paths(self.out, msg.alertname)
            self.folder.write(  # ReportWriteError: kept for a retry, this group not deduped
                {
                    json_path: dumps_json(data, indent=2) + "\n",
                    md_path: red.clean_text(render_markdown(report)),
                }
            )
            self.written += [json_path, md_path]
        box["status"] = report.status  # counted once its files are in --out
        if self.extras is not None:  # the history row, the sinks (queued, never waited on)
            self.extras.after_write(rec, data, json_path, md_path)
        secs = time.monotonic() - started
        _log(f"wrote {json_path.name} and .md: {report.status} in {secs:.1f} s")


def _token(settings: Settings) -> str | None:
    from opsmate.credentials import get_credential

    cred = get_credential("watch", None)
    token = cred.token if cred is not None else None
    if settings.alerting.require_token and not token:
        raise ConfigError(
            "alerting.require_token is set but no watch token is stored",
            hint="opsmate auth set watch, or set OPSMATE_WATCH_TOKEN",
        )
    return token


def run_watch(
    *,
    listen: str,
    out: Path,
    bundle: Path | None,
    env: str | None,
    model: str | None,
    index_dir: Path | None,
    config_path: Path | None,
) -> None:
    """Implements ``opsmate watch`` (see the module docstring)."""
    from opsmate.alerting.aftercare import WatchExtras
    from opsmate.alerting.receiver import WebhookReceiver

    host, port = parse_listen(listen)
    settings = load_settings(config_path)
    if bundle is not None and not bundle.exists():
        raise UsageError(f"--bundle {bundle}: no such file or directory")
    if bundle is None and not any(
        e.prometheus or e.elasticsearch or e.kubernetes or e.alertmanager
        for e in settings.environments.values()
    ):
        raise ConfigError(
            "no live data sources are configured to investigate alerts with",
            hint="configure environments in the config, or give a data set: --bundle PATH",
        )
    token = _token(settings)
    from opsmate.alerting.outdir import ReportFolder

    folder = ReportFolder(out, _log)
    folder.check()  # a folder that cannot take a report: exit 2 before anything listens
    a = settings.alerting
    extras = WatchExtras.build(settings, out, _log)  # a sink without its URL: exit 2 here
    investigate = Investigator(
        settings, out, bundle=bundle, env=env, model=model, index_dir=index_dir, extras=extras,
        folder=folder,
    )  # fmt: skip
    try:
        receiver = WebhookReceiver(
            host,
            port,
            investigate,
            token=token,
            max_body_bytes=a.max_body_bytes,
            queue_size=a.queue_size,
            workers=a.workers,
            dedupe_seconds=a.dedupe_seconds,
            log=_log,
            can_accept=folder.problem,  # 503 while --out cannot take a report
            routes=extras.routes(),  # GET /metrics
            on_resolved=extras.resolved,  # the history notes when an incident resolved
        )
    except OSError as exc:
        raise UsageError(f"--listen {listen}: cannot listen there: {exc}") from exc
    if not _is_loopback(host) and not token:
        _log(f"warning: listening on {host} without a bearer token (opsmate auth set watch)")
    extras.watch_receiver(receiver)
    receiver.start()
    bound_host, bound_port = receiver.address
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    _log(
        f"listening on http://{shown}:{bound_port}/ (reports in {out}; "
        f"{'bundle ' + str(bundle) if bundle else 'live sources'}); Ctrl-C to stop"
    )
    _serve_until_stopped(receiver)
    extras.close(SINK_DRAIN_SECONDS)  # undelivered reports are listed in --out
    if folder.pending and not folder.flush() and folder.pending:
        from opsmate.alerting.outdir import ReportWriteError

        raise ReportWriteError(  # exit 1: the log named each report that was not written
            f"{folder.pending} report(s) could not be written to {out} and are lost"
        )


def _serve_until_stopped(receiver: Any) -> None:
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        try:
            while not stop.is_set():
                time.sleep(0.2)
        except KeyboardInterrupt:
            pass
        running = len(receiver.stats.in_flight)
        _log(f"stopping: finishing {running} queued or running investigation(s)")
        try:
            drained = threading.Thread(target=receiver.drain, daemon=True)
            drained.start()
            while drained.is_alive():
                time.sleep(0.1)
        except KeyboardInterrupt:
            raise Interrupted("interrupted again: investigations abandoned") from None
        s = receiver.stats
        _log(
            f"stopped: {s.handled} investigated, {s.duplicates} duplicates, "
            f"{s.resolved} resolved, {s.rejected_full} refused (503), {s.failed} failed"
        )
    finally:
        signal.signal(signal.SIGTERM, previous)
