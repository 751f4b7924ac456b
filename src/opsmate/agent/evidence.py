"""The evidence store: every observation the report may cite, with stable ids.

``E1, E2 ...`` are tool results (one per call that could look: success, partial or
no_data); ``R1, R2 ...`` are runbooks (one per document, with the section that
matched). Excerpts are compact text summaries of the data, redacted again and
bounded in size; the full (already redacted) result stays in the store for the
extractors, never in the report.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from opsmate.records.k8s import Pod
from opsmate.records.metrics import Point, Series
from opsmate.records.payloads import (
    AlertsPayload,
    EventsPayload,
    LogsPayload,
    LogStatsPayload,
    MetricsPayload,
    NodesPayload,
    PodLogsPayload,
    PodsPayload,
    RolloutPayload,
    RunbooksPayload,
)
from opsmate.timeparse import format_time
from opsmate.tools.base import ToolResult
from opsmate.tools.redact import Redactor, default_redactor

EXCERPT_CHARS = 900


class Evidence(BaseModel):
    """A report ``evidence`` entry (contracts section 3)."""

    id: str
    tool: str
    call_id: str
    source_ref: str
    scope: dict[str, Any] = Field(default_factory=dict)
    complete: bool = True
    excerpt: str = ""
    status: str = "success"  # extension: the envelope's status


class RunbookRef(BaseModel):
    """A report ``runbooks`` entry (contracts section 3, plus optional metadata)."""

    id: str
    source: str
    heading_path: list[str] = Field(default_factory=list)
    doc_version: str = ""
    excerpt: str = ""
    title: str | None = None
    status: str | None = None
    environment: list[str] = Field(default_factory=list)
    service: str | None = None
    version: str | None = None


class EvidenceStore:
    """Assigns ids, keeps results and runbook texts, and answers ``known(id)``."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        self.redactor = redactor or default_redactor()
        self.evidence: list[Evidence] = []
        self.runbooks: list[RunbookRef] = []
        self.results: dict[str, ToolResult] = {}
        self.runbook_text: dict[str, str] = {}  # R id -> full text used for matching
        self._by_source: dict[str, str] = {}

    # -- tool results --------------------------------------------------------------
    def add_result(self, result: ToolResult) -> str | None:
        """Store a result that looked (success / partial / no_data); return its E id."""
        if result.status not in ("success", "partial", "no_data"):
            return None
        eid = f"E{len(self.evidence) + 1}"
        ref = (
            result.source_refs[0]
            if result.source_refs
            else f"tool://{result.tool}/{result.call_id}"
        )
        self.evidence.append(
            Evidence(
                id=eid,
                tool=result.tool,
                call_id=result.call_id,
                source_ref=self.clean(ref, 300),
                scope=_jsonable(result.scope),
                complete=result.complete,
                excerpt=self.clean(summarize(result), EXCERPT_CHARS),
                status=result.status,
            )
        )
        self.results[eid] = result.full()  # the analyzers read the whole (redacted) answer
        return eid

    # -- runbooks --------------------------------------------------------------------
    def add_runbook(
        self,
        source: str,
        *,
        heading_path: list[str] | None = None,
        doc_version: str = "",
        excerpt: str = "",
        meta: dict[str, Any] | None = None,
        full_text: str = "",
    ) -> str:
        """The R id of runbook ``source`` (one per document; the first section seen is kept)."""
        if source in self._by_source:
            rid = self._by_source[source]
            if full_text and len(full_text) > len(self.runbook_text.get(rid, "")):
                self.runbook_text[rid] = full_text
            return rid
        meta = meta or {}
        rid = f"R{len(self.runbooks) + 1}"
        env = meta.get("environment") or []
        self.runbooks.append(
            RunbookRef(
                id=rid,
                source=source,
                heading_path=list(heading_path or []),
                doc_version=doc_version,
                excerpt=self.clean(excerpt, 600),
                title=meta.get("title"),
                status=meta.get("status"),
                environment=[str(e) for e in (env if isinstance(env, list) else [env])],
                service=meta.get("service"),
                version=None if meta.get("version") is None else str(meta.get("version")),
            )
        )
        self._by_source[source] = rid
        self.runbook_text[rid] = full_text or excerpt
        return rid

    def runbook_id(self, source: str) -> str | None:
        return self._by_source.get(source)

    def runbook(self, rid: str) -> RunbookRef | None:
        return next((r for r in self.runbooks if r.id == rid), None)

    def get(self, eid: str) -> Evidence | None:
        return next((e for e in self.evidence if e.id == eid), None)

    def known(self, ident: str) -> bool:
        return ident in self.results or any(r.id == ident for r in self.runbooks)

    def cover(self, eid: str, needles: list[str]) -> None:
        """Make E ``eid``'s excerpt show the data a statement citing it relies on: each
        ``needle`` (a fact's quote, message or changed key) that the excerpt lacks is
        looked up in the fields of the stored result and the line holding it is added."""
        ev = self.get(eid)
        result = self.results.get(eid)
        if ev is None or result is None:
            return
        have = _norm(ev.excerpt)
        added: list[str] = []
        for needle in needles:
            key = _norm(needle)[:80]
            if len(key) < 6 or key in have:
                continue
            found = result.find_text(_holding(key))
            if found is None:
                continue
            line = self.clean("» " + " ".join(found.split()), 400)
            if line not in added:
                added.append(line)
                have += " " + _norm(found)
        if added:
            ev.excerpt = ev.excerpt + "\n" + "\n".join(added[:6])

    def clean(self, text: str, limit: int) -> str:
        """Redact and bound a text for the report."""
        red, _ = self.redactor.redact_text(text)
        return red if len(red) <= limit else red[: limit - 1] + "…"


def _norm(text: str) -> str:
    return " ".join(str(text or "").lower().split())


def _holding(key: str) -> Callable[[str], bool]:
    """Whether a text's normalised form contains ``key``."""
    return lambda text: key in _norm(text)


def _jsonable(obj: Any) -> dict[str, Any]:
    try:
        out = json.loads(json.dumps(obj, default=str))
    except (TypeError, ValueError):
        return {}
    return out if isinstance(out, dict) else {}


# ----------------------------------------------------------------------------- summaries


def _hm(ts: Any) -> str:
    """``2026-10-21T10:01:53+08:00`` -> ``10:01:53`` (times in summaries stay short)."""
    s = _when(ts)
    return s[11:19] if len(s) >= 19 and s[10] == "T" else s


def _when(ts: Any) -> str:
    """A record's time as the answer wrote it (RFC 3339), "" when it has none."""
    return format_time(ts) if isinstance(ts, datetime) else str(ts or "")


def _given(rec: BaseModel, name: str, absent: Any) -> Any:
    """Field ``name`` of ``rec`` when the answer held it (even empty), else ``absent``."""
    return getattr(rec, name) if name in rec.model_fields_set else absent


def summarize(result: ToolResult, *, max_lines: int = 8) -> str:
    """A compact, human-readable text of a result's data (used for excerpts and transcripts),
    read through its typed payload; the answer's own JSON when there is nothing to list."""
    p = result.payload
    lines: list[str] = []
    if result.status == "no_data":
        msg = result.error.message if result.error else "no matching data"
        lines.append(f"no data: {msg}")
    if isinstance(p, LogStatsPayload) and p.given("top_messages"):
        levels = ", ".join(f"{k} {v}" for k, v in p.by_level.items())
        lines.append(f"{p.total} records ({levels})")
        for m in p.top_messages[:max_lines]:
            lv = "/".join(m.levels)
            lines.append(
                f"[{m.count}x {lv} {_hm(m.first_seen)}-{_hm(m.last_seen)}] "
                f"{str(m.example or m.pattern)[:220]}"
            )
    elif isinstance(p, LogsPayload):
        if p.given("total"):
            lines.append(f"{p.total} matching records")
        for it in p.items[:max_lines]:
            lines.append(
                f"{_hm(it.timestamp)} {_given(it, 'level', '')} "
                f"{it.service or it.pod or ''}: {str(_given(it, 'message', None))[:220]}"
            )
    elif isinstance(p, PodLogsPayload):
        # a tail's lines are text: the answer's own JSON below shows them
        for ln in [] if p.given("lines") else p.records[:max_lines]:
            lines.append(
                f"{_hm(ln.time)} {_given(ln, 'level', '')} : "
                f"{str(_given(ln, 'message', None))[:220]}"
            )
    elif isinstance(p, MetricsPayload) and p.given("series"):
        if p.description:
            lines.append(str(p.description))
        for s in p.series[:max_lines]:
            lines.append(series_line(s))
    elif isinstance(p, PodsPayload):
        for pod in p.pods[: max_lines + 4]:
            lines.append(pod_line(pod))
    elif isinstance(p, EventsPayload):
        evs = sorted(p.events, key=lambda e: (e.type != "Warning", -(e.count or 1)))
        for e in evs[:max_lines]:
            obj = e.object
            lines.append(
                f"{e.type} {e.reason} {obj.kind}/{obj.name} "
                f"x{e.count} (last {_hm(e.last_timestamp)}): "
                f"{str(e.message)[:200]}"
            )
    elif isinstance(p, RolloutPayload) and p.given("revisions"):
        lines.append(f"deployment {p.name}: current revision {p.current_revision}")
        for r in reversed(p.revisions[-4:]):  # newest first: kept when cut
            created = _when(r.created) if r.created is not None else None
            lines.append(
                f"rev {r.revision} {', '.join(r.images)} created {created}"
                + (f" cause: {r.change_cause}" if r.change_cause else "")
            )
            for change in r.changes[:6]:  # what the revision changed
                lines.append(f"  changed: {str(change)[:200]}")
    elif isinstance(p, NodesPayload):
        for n in p.nodes[:max_lines]:
            bad = [
                f"{c.type}={c.status} ({c.reason})"
                for c in n.conditions
                if (c.type == "Ready") != (c.status == "True")
            ]
            lines.append(f"{n.name}: " + ("; ".join(bad) if bad else "Ready, no pressure"))
    elif isinstance(p, AlertsPayload):
        for a in p.alerts[:max_lines]:
            name = a.name or a.labels.get("alertname")
            since = _when(a.active_at) if a.active_at is not None else ""
            labels = ", ".join(f'{k}="{v}"' for k, v in a.labels.items() if k != "alertname")
            lines.append(f"{_given(a, 'state', '')} {name} {{{labels}}} since {since}")
    elif isinstance(p, RunbooksPayload):
        for h in p.hits[:max_lines]:
            lines.append(f"{h.source} › {' › '.join(h.heading_path)}")
    if not lines or (len(lines) == 1 and result.status != "no_data" and result.data_json() == "{}"):
        lines.append(result.data_json(600))
    return "\n".join(lines)


def series_line(s: Series) -> str:
    """One metric series summary as text."""
    labels = ",".join(f"{k}={v}" for k, v in s.labels.items()) or "value"
    first, last, mx = s.first or Point(), s.last or Point(), s.max or Point()
    text = f"{{{labels}}}: {first.value} -> {last.value}, max {mx.value} at {_hm(mx.time)}"
    chg = s.largest_change
    if chg is not None and chg.model_fields_set:
        text += f", largest change {chg.from_} -> {chg.to} at {_hm(chg.time)}"
    return text


def pod_line(p: Pod) -> str:
    """One pod summary as text (phase, readiness, restarts, last termination)."""
    parts = [f"{p.name} {p.phase} {p.ready} restarts {p.restarts}"]
    if p.reason:
        parts.append(f"reason {p.reason}")
    for c in p.containers:
        if c.state == "waiting" and c.reason:
            parts.append(f"{c.name} waiting {c.reason}")
        last = c.last_termination
        if last is not None and last.reason:
            parts.append(f"{c.name} last terminated {last.reason} (exit {last.exit_code})")
    return "; ".join(parts)
