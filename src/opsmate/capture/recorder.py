"""The recorder: everything an investigation read from its sources, raw, in memory.

One :class:`Recorder` per executor (:func:`opsmate.agent.session.sources.open_sources`
attaches it with :func:`opsmate.capture.attach.attach_recorder`). Live sources are seen at
the client level (:mod:`opsmate.capture.live_hooks`): the bytes the Kubernetes API server
sent, the Elasticsearch hits and Loki entries, the PromQL results with the query text,
window and step, the alerts (Prometheus' and Alertmanager's) and alerting rules. A bundle
replay is seen per call (:mod:`opsmate.capture.replay_reads`): which objects, records and
recordings the call's scope covers. Nothing is shaped, redacted or parsed here (that
happens only when a bundle is written), so recording costs a reference per answer. Memory
is bounded by :class:`RecordLimits`; what a limit stopped is listed in ``skipped`` and
ends up in the bundle's ``bundle.yaml`` under ``capture.not_captured``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opsmate.capture.replay_reads import ReplayReads


@dataclass(frozen=True)
class RecordLimits:
    """How much one recorder keeps (beyond it, reads are listed as skipped)."""

    max_bytes: int = 256 << 20  # Kubernetes answers, as sent
    max_log_records: int = 100_000
    max_queries: int = 5_000


@dataclass
class K8sRead:
    """One answer of the Kubernetes API server: the client method, its arguments, the body."""

    env: str
    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    body: bytes
    at: datetime


@dataclass
class EsRead:
    """The hits of one Elasticsearch search, with the source config (field names)."""

    env: str
    source: Any  # opsmate.config.ElasticsearchSource
    hits: list[dict[str, Any]]


@dataclass
class LokiRead:
    """The entries of one Loki log query, with the source config (its label names)."""

    env: str
    source: Any  # opsmate.config.LokiSource
    entries: list[Any]  # opsmate.tools.loki.records.Entry


@dataclass
class PromRead:
    """One PromQL answer: the exact query text, its type and window, the client's result."""

    env: str
    query: str
    type: str  # range | instant
    result: Any
    start: datetime | None = None
    end: datetime | None = None
    step: float | None = None
    time: datetime | None = None


@dataclass
class Followup:
    """A read to make when the bundle is written, so replay answers as live did: the records
    a server-side aggregation counted (``log_stats``), the list that proves an object absent."""

    what: str
    run: Callable[[], None]


@dataclass
class Recorder:
    """What one executor's tools read (thread-safe; tools run in worker threads)."""

    limits: RecordLimits = field(default_factory=RecordLimits)
    k8s: list[K8sRead] = field(default_factory=list)
    es: list[EsRead] = field(default_factory=list)
    loki: list[LokiRead] = field(default_factory=list)
    prom: list[PromRead] = field(default_factory=list)
    alerts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # env -> alerts
    rules: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # env -> rule groups
    followups: dict[str, Followup] = field(default_factory=dict)
    skipped: list[dict[str, str]] = field(default_factory=list)
    replay: ReplayReads | None = None  # set when the executor replays a bundle
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    _bytes: int = 0
    _records: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # -- recording (called from the hooks) --------------------------------------------------
    def skip(self, what: str, why: str) -> None:
        """Note something that was read but will not be in a bundle, and why (once)."""
        with self._lock:
            entry = {"what": what, "why": why}
            if entry not in self.skipped:
                self.skipped.append(entry)

    def add_k8s(self, env: str, method: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                body: bytes) -> None:  # fmt: skip
        with self._lock:
            if self._bytes + len(body) > self.limits.max_bytes:
                full = True
            else:
                full = False
                self._bytes += len(body)
                kept = {k: v for k, v in kwargs.items() if not k.startswith("_")}
                self.k8s.append(K8sRead(env, method, args, kept, body, datetime.now(UTC)))
        if full:
            self.skip(f"kubernetes {method}", f"over {self.limits.max_bytes >> 20} MiB recorded")

    def add_es(self, env: str, source: Any, hits: list[dict[str, Any]]) -> None:
        with self._lock:
            room = self.limits.max_log_records - self._records
            kept = hits[: max(room, 0)]
            self._records += len(kept)
            if kept:
                self.es.append(EsRead(env, source, kept))
        if len(kept) < len(hits):
            self.skip("log records", f"over {self.limits.max_log_records} records recorded")

    def add_loki(self, env: str, source: Any, entries: list[Any]) -> None:
        with self._lock:
            room = self.limits.max_log_records - self._records
            kept = entries[: max(room, 0)]
            self._records += len(kept)
            if kept:
                self.loki.append(LokiRead(env, source, kept))
        if len(kept) < len(entries):
            self.skip("log records", f"over {self.limits.max_log_records} records recorded")

    def add_prom(self, read: PromRead) -> None:
        with self._lock:
            full = len(self.prom) >= self.limits.max_queries
            if not full:
                self.prom.append(read)
        if full:
            self.skip(f"query {read.query}", f"over {self.limits.max_queries} queries recorded")

    def add_alerts(self, env: str, alerts: list[dict[str, Any]], *, merge: bool = False) -> None:
        """The alerts an answer held (``merge``: add to those of other answers, an alert of
        the same labels replacing the earlier one; else they replace them all)."""
        with self._lock:
            if not merge:
                self.alerts[env] = list(alerts)
                return
            known = {_alert_key(a): a for a in self.alerts.get(env, [])}
            for a in alerts:  # what one source knows of an alert joins what the other said
                known[_alert_key(a)] = {**known.get(_alert_key(a), {}), **a}
            self.alerts[env] = list(known.values())

    def add_rules(self, env: str, groups: list[dict[str, Any]]) -> None:
        with self._lock:
            self.rules[env] = list(groups)

    def follow_up(self, key: str, what: str, run: Callable[[], None]) -> None:
        """Register a read to make before writing (one per ``key``)."""
        with self._lock:
            self.followups.setdefault(key, Followup(what, run))

    # -- before writing ---------------------------------------------------------------------
    def run_followups(self) -> list[str]:
        """Make the registered follow-up reads (each once); what failed, and why."""
        with self._lock:
            todo = list(self.followups.values())
            self.followups.clear()
        failed = []
        for item in todo:
            try:
                item.run()
            except Exception as exc:  # a source gone since the run: say so, keep the rest
                failed.append(f"{item.what}: {exc}")
                self.skip(item.what, str(exc))
        return failed

    def environments(self) -> set[str]:
        """Environments anything was read from."""
        with self._lock:
            envs = {r.env for r in self.k8s} | {r.env for r in self.es} | {r.env for r in self.loki}
            envs |= {r.env for r in self.prom} | set(self.alerts) | set(self.rules)
        return envs

    def empty(self) -> bool:
        """Whether nothing at all was recorded."""
        if self.replay is not None:
            return self.replay.empty()
        return not (self.k8s or self.es or self.loki or self.prom or self.alerts or self.rules)


def _alert_key(alert: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    labels = alert.get("labels") if isinstance(alert.get("labels"), dict) else {}
    return tuple(sorted((str(k), str(v)) for k, v in (labels or {}).items()))
