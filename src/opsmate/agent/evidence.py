"""The evidence store: every observation the report may cite, with stable ids.

``E1, E2 ...`` are tool results (one per call that could look: success, partial or
no_data); ``R1, R2 ...`` are runbooks (one per document, with the section that
matched). Excerpts are compact text summaries of the data, redacted again and
bounded in size; the full (already redacted) result stays in the store for the
extractors, never in the report.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

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
            found = _find_text(result.data, key)
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


def _find_text(data: Any, key: str, depth: int = 0) -> str | None:
    """The first string in ``data`` whose normalised text contains ``key``; a dict whose
    values together hold it gives its compact JSON (a record with its fields)."""
    if depth > 12:
        return None
    if isinstance(data, str):
        return data if key in _norm(data) else None
    if isinstance(data, dict):
        for v in data.values():
            hit = _find_text(v, key, depth + 1)
            if hit is not None:
                return hit
        return None
    if isinstance(data, list):
        for v in data[:5000]:
            hit = _find_text(v, key, depth + 1)
            if hit is not None:
                return hit
    return None


def _jsonable(obj: Any) -> dict[str, Any]:
    try:
        out = json.loads(json.dumps(obj, default=str))
    except (TypeError, ValueError):
        return {}
    return out if isinstance(out, dict) else {}


# ----------------------------------------------------------------------------- summaries


def _items(data: dict[str, Any], *keys: str) -> list[dict[str, Any]]:
    for key in (*keys, "items"):
        value = data.get(key)
        if isinstance(value, list):
            return [v for v in value if isinstance(v, dict)]
    return []


def _hm(ts: Any) -> str:
    """``2026-10-21T10:01:53+08:00`` -> ``10:01:53`` (times in summaries stay short)."""
    s = str(ts or "")
    return s[11:19] if len(s) >= 19 and s[10] == "T" else s


def summarize(result: ToolResult, *, max_lines: int = 8) -> str:
    """A compact, human-readable text of a result's data (used for excerpts and transcripts)."""
    d = result.data or {}
    tool = result.tool
    lines: list[str] = []
    if result.status == "no_data":
        msg = result.error.message if result.error else "no matching data"
        lines.append(f"no data: {msg}")
    if tool == "log_stats" and "top_messages" in d:
        levels = ", ".join(f"{k} {v}" for k, v in (d.get("by_level") or {}).items())
        lines.append(f"{d.get('total', 0)} records ({levels})")
        for m in d.get("top_messages", [])[:max_lines]:
            lv = "/".join(m.get("levels") or {})
            lines.append(
                f"[{m.get('count')}x {lv} {_hm(m.get('first_seen'))}-{_hm(m.get('last_seen'))}] "
                f"{str(m.get('example') or m.get('pattern'))[:220]}"
            )
    elif tool in ("search_logs", "pod_logs"):
        items = _items(d, "lines", "records")
        if "total" in d:
            lines.append(f"{d.get('total')} matching records")
        for it in items[:max_lines]:
            if isinstance(it, dict):
                lines.append(
                    f"{_hm(it.get('@timestamp') or it.get('time'))} {it.get('level', '')} "
                    f"{it.get('service') or it.get('pod') or ''}: {str(it.get('message'))[:220]}"
                )
    elif tool == "query_metrics" and "series" in d:
        if d.get("description"):
            lines.append(str(d["description"]))
        for s in d.get("series", [])[:max_lines]:
            lines.append(series_line(s))
    elif tool == "list_pods":
        for p in _items(d, "pods")[: max_lines + 4]:
            lines.append(pod_line(p))
    elif tool == "get_events":
        evs = _items(d, "events")
        evs = sorted(evs, key=lambda e: (e.get("type") != "Warning", -(e.get("count") or 1)))
        for e in evs[:max_lines]:
            obj = e.get("object") or {}
            lines.append(
                f"{e.get('type')} {e.get('reason')} {obj.get('kind')}/{obj.get('name')} "
                f"x{e.get('count', 1)} (last {_hm(e.get('last_timestamp'))}): "
                f"{str(e.get('message'))[:200]}"
            )
    elif tool == "rollout_history" and "revisions" in d:
        lines.append(f"deployment {d.get('name')}: current revision {d.get('current_revision')}")
        for r in reversed(d.get("revisions", [])[-4:]):  # newest first: kept when cut
            lines.append(
                f"rev {r.get('revision')} {', '.join(r.get('images') or [])} created "
                f"{r.get('created')}"
                + (f" cause: {r.get('change_cause')}" if r.get("change_cause") else "")
            )
            for change in (r.get("changes") or [])[:6]:  # what the revision changed
                lines.append(f"  changed: {str(change)[:200]}")
    elif tool == "node_conditions":
        for n in _items(d, "nodes")[:max_lines]:
            bad = [
                f"{c.get('type')}={c.get('status')} ({c.get('reason')})"
                for c in n.get("conditions") or []
                if (c.get("type") == "Ready") != (c.get("status") == "True")
            ]
            lines.append(f"{n.get('name')}: " + ("; ".join(bad) if bad else "Ready, no pressure"))
    elif tool == "list_alerts":
        for a in _items(d, "alerts")[:max_lines]:
            labels = a.get("labels") or {}
            name = a.get("name") or labels.get("alertname")
            lines.append(
                f"{a.get('state', '')} {name} {labels} since "
                f"{a.get('active_at') or a.get('since', '')}"
            )
    elif tool == "search_runbooks":
        for h in _items(d, "hits")[:max_lines]:
            lines.append(f"{h.get('source')} › {' › '.join(h.get('heading_path') or [])}")
    if not lines or (len(lines) == 1 and result.status != "no_data" and not d):
        lines.append(json.dumps(d, ensure_ascii=False, default=str)[:600])
    return "\n".join(lines)


def series_line(s: dict[str, Any]) -> str:
    """One metric series summary as text."""
    labels = ",".join(f"{k}={v}" for k, v in (s.get("labels") or {}).items()) or "value"
    first, last, mx = s.get("first") or {}, s.get("last") or {}, s.get("max") or {}
    chg = s.get("largest_change") or {}
    text = (
        f"{{{labels}}}: {first.get('value')} -> {last.get('value')}, "
        f"max {mx.get('value')} at {_hm(mx.get('time'))}"
    )
    if chg:
        text += f", largest change {chg.get('from')} -> {chg.get('to')} at {_hm(chg.get('time'))}"
    return text


def pod_line(p: dict[str, Any]) -> str:
    """One pod summary as text (phase, readiness, restarts, last termination)."""
    parts = [f"{p.get('name')} {p.get('phase')} {p.get('ready')} restarts {p.get('restarts')}"]
    if p.get("reason"):
        parts.append(f"reason {p.get('reason')}")
    for c in p.get("containers") or []:
        if c.get("state") == "waiting" and c.get("reason"):
            parts.append(f"{c.get('name')} waiting {c.get('reason')}")
        last = c.get("last_termination") or {}
        if last.get("reason"):
            parts.append(
                f"{c.get('name')} last terminated {last.get('reason')} "
                f"(exit {last.get('exit_code')})"
            )
    return "; ".join(parts)
