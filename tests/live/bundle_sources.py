"""A bundle served as live sources, and the same incident diagnosed live and replayed.

:func:`serve_bundle` starts the protocol fixtures over one incident bundle's data: the
Kubernetes API server fixture (tests/sources/k8s_fixture.py) over its objects and, as the
kubelet's ``log`` subresource, the log lines of its pods (the current container's log, and
with ``previous=true`` the lines up to the container's last termination, as bundle replay
tells instances apart); Elasticsearch (es_fixture.py) or Loki (loki_fixture.py) over its
log records; and :class:`~prom_bundle_fixture.BundlePrometheus` over its recorded queries
(and the series they imply, for metric discovery). A config file names them as the
bundle's environment, as a user's config names their servers.

:func:`live_report` then investigates the bundle's question against those servers through
the same public API ``opsmate diagnose`` uses (``--model none``), with two things a user
of a live run would set themselves: the clock is the bundle's capture time (the
investigation happens as the incident did), and the runbooks are the bundle's own (those
the replay searches). :func:`replay_report` is ``opsmate diagnose --bundle``.
:func:`same_root_cause` compares two reports.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "sources"))
sys.path.insert(0, str(HERE))

from es_fixture import ESFixture  # noqa: E402
from k8s_fixture import K8sFixture, write_kubeconfig  # noqa: E402
from loki_fixture import LokiFixture  # noqa: E402
from prom_bundle_fixture import BundlePrometheus  # noqa: E402

LogMap = dict[tuple[str, str, str], list[tuple[datetime, str]]]
# the fixtures answer from Python lists (100,000 records are scanned per search): a loaded
# laptop must not turn their slowness into time-outs a real server would not have
TIMEOUT = 120


class BundleK8s(K8sFixture):
    """The API server fixture over a bundle's objects; pod logs from its records.

    Each log line is what the container wrote (the record's message, its level in front
    when the record keeps the level apart and the message does not say it); with
    ``timestamps=true`` the kubelet's RFC 3339 time (UTC) comes first. ``previous=true``
    answers the lines up to the container's last termination (plus one second), else
    none; the current log is every line (a bundle does not tell the instances apart, and
    replay answers the same); ``sinceSeconds`` counts back from ``now`` (the capture
    time), not the wall clock."""

    def __init__(self, objects: list[dict[str, Any]], logs: LogMap, now: datetime) -> None:
        self.now = now
        super().__init__(objects, logs)

    def _log(self, ns: str, name: str, q: dict[str, str]) -> str:
        keep = {k: v for k, v in q.items() if k not in ("sinceSeconds", "tailLines")}
        super()._log(ns, name, keep)  # the API server's checks (pod, container)
        pod = next(
            o
            for o in self.objects
            if o["kind"] == "Pod"
            and o["metadata"]["name"] == name
            and o["metadata"].get("namespace") == ns
        )
        container = q.get("container") or pod["spec"]["containers"][0]["name"]
        lines = self.logs.get((ns, name, container), [])
        if q.get("previous") == "true":
            until = _terminated(pod, container)
            lines = [(t, ln) for t, ln in lines if until is not None and t <= until]
        if q.get("sinceSeconds"):
            since = self.now - timedelta(seconds=int(q["sinceSeconds"]))
            lines = [(t, ln) for t, ln in lines if t >= since]
        if q.get("tailLines"):
            lines = lines[-int(q["tailLines"]) :] if int(q["tailLines"]) else []
        if q.get("timestamps") == "true":
            return "".join(f"{_nano(t)} {ln}\n" for t, ln in lines)
        return "".join(ln + "\n" for _, ln in lines)


def _nano(t: datetime) -> str:
    """RFC 3339 with nanoseconds in UTC, as the kubelet stamps a line."""
    u = t.astimezone(UTC)
    return u.strftime("%Y-%m-%dT%H:%M:%S.") + f"{u.microsecond:06d}000Z"


def _terminated(pod: dict[str, Any], container: str) -> datetime | None:
    from opsmate.timeparse import parse_time

    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        if isinstance(cs, dict) and cs.get("name") == container:
            raw = ((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt")
            if raw:
                with contextlib.suppress(ValueError, OverflowError):
                    return parse_time(str(raw)) + timedelta(seconds=1)
    return None


def pod_log_lines(bundle: Any) -> LogMap:
    """``(namespace, pod, container) -> [(time, line)]`` of the records that name a pod."""
    from opsmate.tools.shaping import get_field

    pods = {
        (o["metadata"].get("namespace") or "", o["metadata"]["name"]): o
        for o in bundle.objects
        if o.get("kind") == "Pod" and isinstance(o.get("metadata"), dict)
    }
    out: LogMap = {}
    data = bundle.replay.d
    for rec, t in zip(data.logs, data.log_times, strict=True):
        name = get_field(rec, "pod")
        if not name:
            continue
        ns = str(get_field(rec, "namespace") or "")
        pod = pods.get((ns, str(name))) or next(
            (o for (pns, pn), o in pods.items() if pn == str(name) and not ns), None
        )
        if pod is None:
            continue
        ns = pod["metadata"].get("namespace") or ""
        names = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
        cont = get_field(rec, "container")
        targets = [str(cont)] if cont and str(cont) in names else names
        message = str(rec.get("message", ""))
        level = str(get_field(rec, "level") or "")
        said = level and level.lower() in message[:80].lower()
        line = message if said or not level else f"{level.upper()} {message}"
        for c in targets:
            out.setdefault((ns, str(name), str(c)), []).append((t, line))
    for lines in out.values():
        lines.sort(key=lambda x: x[0])
    return out


def log_documents(bundle: Any) -> list[dict[str, Any]]:
    """The bundle's log records as documents (``@timestamp`` in RFC 3339)."""
    from opsmate.timeparse import format_time

    data = bundle.replay.d
    docs = []
    for rec, t, line in zip(data.logs, data.log_times, data.log_lines, strict=True):
        doc = dict(rec)
        doc["@timestamp"] = format_time(t)
        # the record's id as replay names it (log://service/<id>): its own, else its line
        doc["_id"] = str(rec.get("id") or rec.get("_id") or line)
        docs.append(doc)
    return docs


def _plain(obj: Any) -> Any:
    """An object as JSON carries it (YAML timestamps as RFC 3339 strings)."""

    def when(v: Any) -> str:
        if isinstance(v, datetime):
            from opsmate.timeparse import format_time

            return format_time(v if v.tzinfo else v.replace(tzinfo=UTC)).replace("+00:00", "Z")
        return str(v)

    return json.loads(json.dumps(obj, default=when))


def _namespaces(objects: list[dict[str, Any]]) -> list[str]:
    found = {
        str((o.get("metadata") or {}).get("namespace"))
        for o in objects
        if isinstance(o, dict) and (o.get("metadata") or {}).get("namespace")
    }
    return sorted(found)


@dataclass
class Served:
    """The running fixtures of one bundle and the config file naming them."""

    bundle: Any
    config: Path
    k8s: BundleK8s
    prom: BundlePrometheus | None
    logs: ESFixture | LokiFixture | None
    namespaces: list[str] = field(default_factory=list)


@contextlib.contextmanager
def serve_bundle(bundle: Any, tmp: Path, *, log_source: str = "elasticsearch") -> Iterator[Served]:
    """The bundle's data behind protocol fixtures, and a config file (``model: none``)."""
    env = bundle.meta.environment
    objects = [_plain(o) for o in bundle.objects if isinstance(o, dict) and o.get("kind")]
    namespaces = _namespaces(objects)
    one_ns = namespaces[0] if len(namespaces) == 1 else None
    with contextlib.ExitStack() as stack:
        k8s = stack.enter_context(
            BundleK8s(objects, pod_log_lines(bundle), bundle.meta.captured_at)
        )
        prom = None
        if bundle.metrics:
            prom = stack.enter_context(BundlePrometheus(bundle.metrics, bundle.alerts, one_ns))
        logs: ESFixture | LokiFixture | None = None
        docs = log_documents(bundle)
        block: dict[str, Any] = {}
        if docs and log_source == "loki":
            fields = {"service": "app", "namespace": "namespace", "pod": "pod",
                      "container": "container"}  # fmt: skip
            logs = stack.enter_context(LokiFixture(docs, label_fields=fields))
            block["loki"] = {"url": logs.url, "timeout": TIMEOUT}
        elif docs:
            logs = stack.enter_context(ESFixture({f"logs-{env}": docs}))
            block["elasticsearch"] = {"url": logs.url, "index": f"logs-{env}", "timeout": TIMEOUT}
        kube = write_kubeconfig(tmp / "kubeconfig", {"fx": k8s.url}, current="fx")
        block["kubernetes"] = {"kubeconfig": str(kube), "context": "fx", "timeout": TIMEOUT}
        if namespaces:
            block["kubernetes"]["namespaces"] = namespaces
        if prom is not None:
            block["prometheus"] = {"url": prom.url, "timeout": TIMEOUT}
        span = bundle.meta.window_to - bundle.meta.window_from
        hours = max(6.0, math.ceil(span.total_seconds() / 3600))
        cfg = {"model": "none", "default_environment": env, "environments": {env: block},
               "tools": {"max_window_hours": hours, "timeout_seconds": TIMEOUT}}  # fmt: skip
        config = tmp / "config.yaml"
        config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
        yield Served(bundle, config, k8s, prom, logs, namespaces)


def question_of(bundle: Any) -> str:
    """The question the replay answers: the answer key's, else the bundle's."""
    key = None
    with contextlib.suppress(Exception):
        key = bundle.expected
    return str((key.question if key is not None else None) or bundle.question or "")


def _env_flag(bundle: Any) -> str | None:
    key = None
    with contextlib.suppress(Exception):
        key = bundle.expected
    return key.env if key is not None else None


def replay_report(bundle_path: Path) -> dict[str, Any]:
    """``opsmate diagnose --bundle PATH --model none --json``, in-process."""
    from opsmate.agent.session.session import Session
    from opsmate.config import Settings
    from opsmate.tools.bundle import load_bundle

    bundle = load_bundle(bundle_path)
    session = Session.open(settings=Settings(), bundle=bundle_path, model="none",
                           env=_env_flag(bundle))  # fmt: skip
    try:
        return session.ask(question_of(bundle)).to_json()
    finally:
        session.close()


def live_report(served: Served) -> dict[str, Any]:
    """The bundle's question investigated against the served fixtures (``--model none``),
    as ``opsmate --config CONFIG diagnose QUESTION --since W`` would at the capture time."""
    from opsmate.agent.intake.question import detect_lookback
    from opsmate.agent.runbooks.library import RunbookLibrary
    from opsmate.agent.session.session import Session
    from opsmate.agent.session.sources import (
        builtin_runbooks_dir,
        bundle_retriever,
        open_sources,
    )
    from opsmate.config import load_settings
    from opsmate.tools.runbooks import search_runbooks_spec

    b = served.bundle
    settings = load_settings(served.config)
    question = question_of(b)
    sources = open_sources(settings, env=_env_flag(b))
    # the runbooks a user of this incident has: the bundle's own (as its replay searches)
    rb_dir = b.runbooks_dir or builtin_runbooks_dir()
    notes: list[str] = []
    retriever = bundle_retriever(rb_dir, settings, notes)
    if retriever is not None:
        sources.executor.registry.register(search_runbooks_spec(retriever))
        sources.retriever = retriever
    sources.library = RunbookLibrary([rb_dir] if rb_dir is not None else [])
    sources.known_services = sorted(set(sources.known_services) | sources.library.services())
    # the investigation happens when the incident did: at the end of the captured window,
    # looking back over it (``--since``) unless the question says how far
    now = b.meta.window_to
    sources.now = now
    sources.executor.fixed_now = now
    span = now - b.meta.window_from
    since = None
    if detect_lookback(question) is None and span.total_seconds() > 0:
        since = f"{max(1, math.ceil(span.total_seconds()))}s"
    session = Session(sources, settings=settings, model=None, model_spec="none",
                      env=_env_flag(b), since=since)  # fmt: skip
    try:
        return session.ask(question).to_json()
    finally:
        session.close()


_IDS = re.compile(r"\s*[\[(](?:[ER]\d+(?:,\s*)?)+[\])]")
_CLAUSE = re.compile(r"; then |\. Triggered by |; it appears ")
_CLOCK = re.compile(r"\b\d{2}:\d{2}(?::\d{2})?\b")


def root_cause_text(report: dict[str, Any]) -> str | None:
    """The root cause statement without its evidence ids (None: no root cause)."""
    rc = report.get("root_cause")
    if not rc:
        return None
    return " ".join(_IDS.sub("", str(rc.get("statement") or "")).split())


def canonical(text: str, bundle: Any) -> str:
    """``text`` with each recorded query's description replaced by its first metric name:
    a replay names a series by the description the bundle gives its query, a live run by
    the metric it reads (the statement is otherwise built the same way)."""
    from opsmate.agent.signals import metric_names

    for rec in sorted(bundle.metrics, key=lambda r: -len(r.description or "")):
        names = metric_names(rec.query)
        if rec.description and names:
            text = text.replace(f"{rec.description} (CPU)", names[0])
            text = text.replace(rec.description, names[0])
    return text


def _clause_agrees(a: str, b: str) -> bool:
    """Two clauses say the same up to where either was cut (``…``)."""
    wa, wb = a.split(), b.split()
    for x, y in zip(wa, wb, strict=False):
        if x == y:
            continue
        if "…" in x or "…" in y:
            return x.split("…")[0].startswith(y.split("…")[0]) or y.split("…")[0].startswith(
                x.split("…")[0]
            )
        return False
    shorter = wa if len(wa) <= len(wb) else wb
    return len(wa) == len(wb) or bool(shorter and "…" in shorter[-1])


def compare(replay: dict[str, Any], live: dict[str, Any], bundle: Any) -> str:
    """``same`` (status and root cause clause by clause, series named either way, clauses
    compared up to a cut), ``clock`` (the same but for clock times rendered in another time
    zone), ``status`` (same cause, other status) or ``different``."""
    a, b = root_cause_text(replay), root_cause_text(live)
    if (a is None) != (b is None):
        return "different"
    same_text = True
    clock = False
    if a is not None and b is not None:
        ca, cb = _CLAUSE.split(canonical(a, bundle)), _CLAUSE.split(b)
        agree = len(ca) == len(cb) and all(map(_clause_agrees, ca, cb))
        if not agree:
            same_text = False
            ta = [_CLOCK.sub("HH:MM", x) for x in ca]
            tb = [_CLOCK.sub("HH:MM", x) for x in cb]
            clock = len(ta) == len(tb) and all(map(_clause_agrees, ta, tb))
    if not same_text and not clock:
        return "different"
    if replay.get("status") != live.get("status"):
        return "status"
    return "same" if same_text else "clock"


def same_root_cause(replay: dict[str, Any], live: dict[str, Any], bundle: Any) -> bool:
    """The live report names the same root cause as the replay, with the same status."""
    return compare(replay, live, bundle) == "same"
