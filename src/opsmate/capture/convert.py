"""Raw recorded reads into the parts of an ``opsmate-bundle/v1`` (contracts section 2).

- Kubernetes answers → objects in API shape: list items get the ``kind`` and
  ``apiVersion`` a list answer leaves out (Secrets, read as ``PartialObjectMetadata``, get
  ``kind: Secret`` and keep only their metadata); the latest read of an object wins.
- Pod logs (the ``log`` subresource) → log records with ``pod``, ``namespace``,
  ``container``; the time is the line's own timestamp, else the container's last
  termination (a previous instance) or the time of the read (the current one).
- Elasticsearch hits → log records: the configured time, message, service, level and
  environment fields under the bundle's names, ``_id`` kept (so ``log://`` references
  stay the same), one record per hit id. A record of a pod whose own log (the kubelet's)
  was read too keeps its pod as ``kubernetes.pod.name`` (ECS): replay answers ``pod_logs``
  from every record with a ``pod`` field, and live it answered from the kubelet only.
- Loki entries → log records: the JSON line (else the line as ``message``), the time and
  the labels the config maps (service, namespace, pod, container, level), ``_id`` the id
  of its live ``log://`` reference.
- PromQL answers → ``metrics.yaml`` entries with the exact query text, type, window and
  step and the API's ``data`` object.
- Alerts API answers (Prometheus', Alertmanager's with their silence state) →
  ``alerts.yaml``; inactive alerting rules join as ``state: inactive``.

Only one environment goes into a bundle; reads of others are listed as not captured.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from opsmate.capture.recorder import K8sRead, PromRead, Recorder
from opsmate.timeparse import format_time, parse_time
from opsmate.tools.kubernetes.tools import split_kubelet_stamp
from opsmate.tools.prometheus.tools import result_data
from opsmate.tools.shaping import get_field

_POD_LOG = "read_namespaced_pod_log"


def _stems() -> dict[str, tuple[str, str]]:
    from opsmate.tools.k8s_kinds import KIND_TABLE

    out = {k.stem: (k.kind, k.api_version) for k in KIND_TABLE}
    out["event"] = ("Event", "v1")
    return out


def kind_of_method(method: str) -> tuple[str, str] | None:
    """``(kind, apiVersion)`` a kubernetes client method reads (``list_namespaced_pod``)."""
    name = method.removesuffix("_for_all_namespaces")
    for prefix in ("list_namespaced_", "read_namespaced_", "list_", "read_"):
        if name.startswith(prefix):
            return _stems().get(name[len(prefix) :])
    return None


def k8s_objects(reads: list[K8sRead]) -> tuple[list[dict[str, Any]], list[str]]:
    """API-shaped objects from recorded answers (latest wins), and what could not be read."""
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    problems: list[str] = []
    for read in reads:
        if read.method == _POD_LOG:
            continue
        kind = kind_of_method(read.method)
        if kind is None:
            continue
        try:
            body = json.loads(read.body.decode("utf-8", "replace"))
        except ValueError:
            problems.append(f"kubernetes {read.method}: the answer was not JSON")
            continue
        if not isinstance(body, dict):
            continue
        items = body.get("items") if read.method.startswith("list_") else [body]
        for item in items if isinstance(items, list) else []:
            obj = _api_shape(item, *kind)
            if obj is not None:
                meta = obj["metadata"]
                found[(obj["kind"], str(meta.get("namespace") or ""), str(meta["name"]))] = obj
    return list(found.values()), problems


def _api_shape(item: Any, kind: str, api_version: str) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        return None
    meta = item.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        return None
    if item.get("kind") in (None, "", "PartialObjectMetadata"):
        rest = {k: v for k, v in item.items() if k not in ("kind", "apiVersion")}
        return {"apiVersion": api_version, "kind": kind, **rest}
    return dict(item)


def _line_time(line: str) -> datetime | None:
    from opsmate.loganalysis.parse import parse_line

    text = parse_line(line).time_text
    if not text or len(text) < 16 or not text[:4].isdigit():
        return None
    try:
        return parse_time(text.replace(",", ".").replace(" ", "T", 1))
    except (ValueError, OverflowError):
        return None


def _terminated_at(objects: list[dict[str, Any]], ns: str, pod: str, container: str | None
                   ) -> datetime | None:  # fmt: skip
    for o in objects:
        meta = o.get("metadata") or {}
        if o.get("kind") != "Pod" or meta.get("name") != pod or meta.get("namespace") != ns:
            continue
        for cs in (o.get("status") or {}).get("containerStatuses") or []:
            if not isinstance(cs, dict) or (container and cs.get("name") != container):
                continue
            raw = ((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt")
            try:
                return parse_time(str(raw)) if raw else None
            except (ValueError, OverflowError):
                return None
    return None


def pod_log_records(reads: list[K8sRead], env: str, objects: list[dict[str, Any]],
                    max_lines: int | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Log records of the pod logs read (the longest read per pod, container and instance;
    its last ``max_lines`` lines when given: a read asks one line more than it shows)."""
    best: dict[tuple[str, str, str, bool], K8sRead] = {}
    for read in reads:
        if read.method != _POD_LOG or len(read.args) < 2:
            continue
        key = (str(read.args[1]), str(read.args[0]), str(read.kwargs.get("container") or ""),
               bool(read.kwargs.get("previous")))  # fmt: skip
        if key not in best or len(read.body) > len(best[key].body):
            best[key] = read
    out: list[dict[str, Any]] = []
    for (ns, pod, container, previous), read in best.items():
        fallback = read.at
        ended = _terminated_at(objects, ns, pod, container or None) if previous else None
        if previous:
            fallback = ended if ended is not None else read.at - timedelta(seconds=1)
        lines = [ln for ln in read.body.decode("utf-8", "replace").splitlines() if ln.strip()]
        for stamped in lines[-max_lines:] if max_lines else lines:
            # the kubelet's time of the line (timestamps=true), else one the line says
            stamp, line = split_kubelet_stamp(stamped)
            when = stamp or _line_time(line) or fallback
            if ended is not None and when > ended:  # replay tells instances apart by time
                when = ended
            rec: dict[str, Any] = {"@timestamp": when.isoformat(), "message": line,
                                   "pod": pod, "namespace": ns, "environment": env}  # fmt: skip
            if container:
                rec["container"] = container
            out.append(rec)
    return out


def es_records(
    hits: list[tuple[Any, dict[str, Any]]], env: str
) -> tuple[list[dict[str, Any]], int]:
    """Bundle log records from ``(source config, hit)`` pairs (one per hit id), and how many
    hits had no usable time."""
    seen: dict[str, dict[str, Any]] = {}
    dropped = 0
    for src, hit in hits:
        raw = hit.get("_source")
        if not isinstance(raw, dict):
            continue
        rec = dict(raw)
        when = get_field(raw, src.time_field)
        try:
            stamp = when if isinstance(when, str) else format_time(parse_time(when))
            parse_time(stamp)
        except (ValueError, OverflowError, OSError, TypeError):
            dropped += 1
            continue
        msg = get_field(raw, src.message_field)
        for name, configured in (("service", src.service_field), ("environment",
                                 src.environment_field), ("level", src.level_field)):  # fmt: skip
            configured = configured.removesuffix(".keyword")
            if configured != name:
                value = get_field(raw, configured)
                if value is not None:
                    rec[name] = value
        for name, configured in (("@timestamp", src.time_field), ("message", src.message_field)):
            if configured != name:
                rec.pop(configured, None)
        rec["@timestamp"] = stamp
        rec["message"] = msg if isinstance(msg, str) else ("" if msg is None else str(msg))
        ident = str(hit.get("_id") or f"{stamp}|{rec['message']}")
        rec["_id"] = ident
        seen[f"{hit.get('_index', '')}/{ident}"] = rec
    return list(seen.values()), dropped


def loki_records(entries: list[tuple[Any, Any]], env: str) -> list[dict[str, Any]]:
    """Bundle log records from ``(source config, entry)`` pairs: the record each entry
    stands for (its JSON line, else its line as ``message``, with the time and the labels
    the config maps: service, namespace, pod, container, level), one per entry, ``_id``
    the id its ``log://`` reference used live. A Loki that serves one environment (no
    environment label configured) gives its records that environment, as live it
    answered for it whatever their lines say."""
    from opsmate.tools.loki.records import ref_of, to_record

    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for src, entry in entries:
        key = entry.identity(src)
        if key in seen:
            continue
        rec = to_record(entry, src)
        if not src.labels.environment:  # one Loki per environment: its records are env's
            rec["environment"] = env
        rec["_id"] = ref_of(entry, rec, src).rsplit("/", 1)[-1]
        seen[key] = rec
    return list(seen.values())


def _data(read: PromRead) -> dict[str, Any]:
    return result_data(read.result, instant=read.type != "range")


def metric_entries(reads: list[PromRead]) -> list[dict[str, Any]]:
    """``metrics.yaml`` entries, one per distinct (query, type, window, step, time)."""
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in reads:
        entry: dict[str, Any] = {"query": r.query, "type": r.type}
        if r.type == "range" and r.start is not None and r.end is not None:
            entry["start"], entry["end"] = format_time(r.start), format_time(r.end)
            if r.step:
                entry["step"] = max(round(r.step), 1)
        elif r.time is not None:
            entry["time"] = format_time(r.time)
        entry["result"] = _data(r)
        key = tuple(entry.get(k) for k in ("query", "type", "start", "end", "step", "time"))
        out[key] = entry
    return list(out.values())


def alert_list(alerts: list[dict[str, Any]] | None, rules: list[dict[str, Any]] | None
               ) -> list[dict[str, Any]] | None:  # fmt: skip
    """``alerts.yaml``: the active alerts, plus the inactive alerting rules."""
    if alerts is None and rules is None:
        return None
    out = [a for a in alerts or [] if isinstance(a, dict) and (a.get("labels") or {}).get(
        "alertname")]  # fmt: skip
    for group in rules or []:
        for rule in group.get("rules") or [] if isinstance(group, dict) else []:
            if rule.get("type", "alerting") != "alerting" or rule.get("state") != "inactive":
                continue
            out.append({"labels": {"alertname": rule.get("name"), **(rule.get("labels") or {})},
                        "annotations": dict(rule.get("annotations") or {}),
                        "state": "inactive"})  # fmt: skip
    return out


def _move_pod(rec: dict[str, Any]) -> None:
    """``pod`` → ``kubernetes.pod.name`` (still the record's stream, no longer a pod log)."""
    pod = rec.pop("pod")
    k8s = rec.get("kubernetes")
    k8s = dict(k8s) if isinstance(k8s, dict) else {}
    inner = k8s.get("pod")
    k8s["pod"] = {**(inner if isinstance(inner, dict) else {}), "name": pod}
    rec["kubernetes"] = k8s


def live_parts(rec: Recorder, env: str, max_pod_lines: int | None = None) -> dict[str, Any]:
    """The bundle parts of what ``rec`` read from environment ``env``: ``objects``, ``logs``,
    ``metrics``, ``alerts`` and ``not_captured`` (``{what, why}`` entries)."""
    not_captured = list(rec.skipped)
    for other in sorted(rec.environments() - {env}):
        not_captured.append({"what": f"reads from environment {other!r}",
                             "why": f"a bundle holds one environment ({env!r})"})  # fmt: skip
    k8s = [r for r in rec.k8s if r.env == env]
    objects, problems = k8s_objects(k8s)
    not_captured += [{"what": p, "why": "unreadable answer"} for p in problems]
    hits = [(r.source, h) for r in rec.es if r.env == env for h in r.hits]
    logs, dropped = es_records(hits, env)
    logs += loki_records([(r.source, e) for r in rec.loki if r.env == env for e in r.entries], env)
    if dropped:
        not_captured.append({"what": f"{dropped} log records", "why": "no readable time"})
    read_pods = {(str(r.args[1]), str(r.args[0])) for r in k8s if r.method == _POD_LOG
                 and len(r.args) >= 2}  # fmt: skip
    for rec_ in logs:
        if (str(rec_.get("namespace") or ""), str(rec_.get("pod") or "")) in read_pods:
            _move_pod(rec_)  # pod_logs answers from the kubelet's lines, as live
    logs += pod_log_records(k8s, env, objects, max_pod_lines)
    logs.sort(key=lambda x: parse_time(x["@timestamp"]).timestamp())
    return {
        "objects": objects,
        "logs": logs,
        "metrics": metric_entries([r for r in rec.prom if r.env == env]),
        "alerts": alert_list(rec.alerts.get(env), rec.rules.get(env)),
        "not_captured": not_captured,
    }
