"""The evidence viewer's text: the whole tool result, rendered or as raw JSON, and what it covers.

The report's excerpt of a result is a summary cut to fit (a few lines, long messages
cut); the viewer shows the whole result the engine kept instead (redacted, as the
engine read it): every record on its own line, nothing cut, long lines left to wrap.
:func:`coverage` says honestly what is on screen, so a cut view is never called
"complete". Runbook search results list each hit with the steps of its section and
the search mode that actually ran (BM25 only, when the response's warnings say so).

No Textual import here: these are plain functions a test can call.
"""

from __future__ import annotations

import json
import re
from typing import Any

_STEP = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+\S")
_FENCE = re.compile(r"^\s*(```|~~~)")
_TIME_KEYS = ("@timestamp", "timestamp", "time", "last_timestamp")
_WHO_KEYS = ("service", "pod", "name")
CODE = "│"  # marks a line of a code block in a section's steps (a command, or output)


def raw_json(envelope: dict[str, Any]) -> str:
    """The whole result envelope as indented JSON (what the engine kept, redacted)."""
    return json.dumps(envelope, indent=2, ensure_ascii=False, default=str)


def _compact(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def record_line(item: dict[str, Any]) -> str:
    """One record on one (long, wrapping) line: a log-like record reads ``time level who:
    message``, then every other field as ``key=value``; nothing is left out or cut."""
    rest = dict(item)
    head: list[str] = []
    if "message" in rest:
        when = next((rest.pop(k) for k in _TIME_KEYS if k in rest), None)
        level = rest.pop("level", None) or rest.pop("type", None)
        who = next((rest.pop(k) for k in _WHO_KEYS if k in rest), None)
        parts = [str(p) for p in (when, level) if p not in (None, "")]
        if who not in (None, ""):
            parts.append(f"{who}:")
        head.append(" ".join([*parts, str(rest.pop("message"))]))
    head.extend(f"{k}={_compact(v)}" for k, v in rest.items() if v not in (None, "", [], {}))
    return " · ".join(head)


def outline(data: dict[str, Any], indent: str = "") -> list[str]:
    """``data`` as readable lines: lists of records numbered, one record a line."""
    out: list[str] = []
    for key, value in data.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            out.append(f"{indent}{key} ({len(value)}):")
            width = len(str(len(value)))
            for i, item in enumerate(value, 1):
                out.append(f"{indent}  {i:>{width}}. {record_line(item)}")
        elif isinstance(value, list):
            out.append(f"{indent}{key} ({len(value)}):" if value else f"{indent}{key}: none")
            out.extend(f"{indent}  - {_compact(v)}" for v in value)
        elif isinstance(value, dict):
            out.append(f"{indent}{key}:")
            out.extend(outline(value, indent + "  ") or [f"{indent}  (empty)"])
        else:
            out.append(f"{indent}{key}: {value}")
    return out


def section_steps(text: str) -> list[str]:
    """The steps of a runbook section: its list items and commands, in order.

    A heading's first sentence says what a section is about; a person deciding what to
    do wants its steps. When a section has no list or code, its first lines stand in.
    """
    steps: list[str] = []
    in_code = False
    lines = (text or "").splitlines()
    for line in lines:
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            if line.strip():
                steps.append(CODE + " " + line.strip())
        elif _STEP.match(line):
            steps.append(line.strip())
        elif steps and line.startswith(("  ", "\t")) and line.strip() and steps[-1][0] != CODE:
            steps[-1] += " " + line.strip()  # a list item's continuation line
    if steps:
        return steps
    prose = [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    return prose[:3]


def search_mode(data: dict[str, Any]) -> str:
    """What ran: ``BM25 only`` when the response's warnings say so (a retriever that falls
    back from vectors always says so there), else its ``mode`` (``hybrid`` by default)."""
    warnings = [str(w) for w in data.get("warnings") or []]
    if any("bm25 only" in w.lower() for w in warnings):
        return "BM25 only"
    mode = data.get("mode")
    if isinstance(mode, str) and mode:
        return "BM25 only" if mode == "bm25" else mode
    return "hybrid"


def search_lines(data: dict[str, Any]) -> list[str]:
    """A runbook search result: the mode that ran, then each hit with its section's steps."""
    hits = [h for h in data.get("hits") or [] if isinstance(h, dict)]
    out = [f"search mode: {search_mode(data)} · {len(hits)} hit(s)"]
    out.extend(f"  ! {w}" for w in data.get("warnings") or [])
    if data.get("low_evidence"):
        out.append("  ! low evidence: no hit matches the question well")
    for h in hits:
        path = " › ".join(str(p) for p in h.get("heading_path") or [])
        out.append("")
        out.append(f"{h.get('rank', '?')}. {h.get('source')} › {path}  (score {h.get('score')})")
        section = str(h.get("parent_text") or h.get("text") or "")
        for step in section_steps(section):
            out.append(f"     {step}")
        if section.endswith("…"):
            out.append("     … (the section goes on: the runbook viewer, ctrl+r, shows it all)")
    return out


def rendered(tool: str, data: dict[str, Any]) -> str:
    """The whole result ``data`` of ``tool`` as readable text (nothing cut)."""
    if not data:
        return "(the result holds no data)"
    if tool == "search_runbooks" and "hits" in data:
        shown = ("hits", "warnings", "low_evidence", "mode")
        rest = {k: v for k, v in data.items() if k not in shown}
        return "\n".join(search_lines(data) + (["", *outline(rest)] if rest else []))
    return "\n".join(outline(data))


def item_count(data: dict[str, Any]) -> int:
    """How many records the result holds (the longest list of records in it)."""
    counts = [len(v) for v in data.values() if isinstance(v, list)]
    return max(counts, default=0)


def coverage(evidence: Any, envelope: dict[str, Any] | None) -> tuple[str, str]:
    """``(level, text)`` saying what the viewer shows of a result; level is ok | warn.

    ``envelope`` is the whole result the engine kept (None when the session has only the
    report's excerpt). Only a view of everything the source returned is called complete.
    """
    if envelope is None:
        return "warn", (
            "excerpt only — a summary cut to fit the report; the whole result is not in "
            "this session"
        )
    n = item_count(envelope.get("data") or {})
    shown = f"all {n} record(s) shown" if n else "all of it shown"
    if envelope.get("complete", True):
        text = f"complete — everything the source returned for this call; {shown}"
        if not getattr(evidence, "complete", True):
            text += " (the report's copy was cut to fit its size budget)"
        return "ok", text
    cut = envelope.get("truncated") or {}
    more = cut.get("items_dropped") if isinstance(cut, dict) else None
    hint = cut.get("hint") if isinstance(cut, dict) else None
    text = "partial — the source had more than this call read"
    if more:
        text += f" ({more} more not read)"
    text += f"; all it read is shown ({n} record(s))" if n else "; all it read is shown"
    return "warn", text + (f". {hint}" if hint else "")
