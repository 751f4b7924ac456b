"""Typed lines of a pod's log tail (``pod_logs``), shared by the live tool and replay.

:func:`line_record` turns one parsed line into the JSON form of
:class:`opsmate.records.logs.PodLogLine` (time, canonical level, whether it was inferred,
the line as written, its shape, error, exit code); :func:`fit_tail` says how many of the
newest lines fit in a size: ``data["records"]`` keeps only those, so the last words
survive the result budget (which cuts the largest list, ``lines``, from its end, where a
tail keeps its newest lines).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from opsmate.loganalysis.parse import ParsedLine
from opsmate.timeparse import format_time, parse_time

POD_LOGS_CHARS = 2800  # the typed records of a pod_logs answer: the newest lines within this

__all__ = ["POD_LOGS_CHARS", "fit_tail", "line_record"]


def _line_time(pl: ParsedLine) -> datetime | None:
    text = pl.time_text
    if not text or len(text) < 16 or not text[:4].isdigit():
        return None
    try:
        return parse_time(text.replace(",", ".").replace(" ", "T", 1))
    except (ValueError, OverflowError):
        return None


_FRAME = re.compile(r"^\s+(?:at [\w$.<>/]+[(\[]|\.\.\. \d+ (?:more|common frames)|File \")")
KEEP_FRAMES = 2


def compact_stack(text: str) -> str:
    """A multi-line record with its stack frames cut to the first two and the last of each
    run (``… 9 frames``): the exception lines and ``Caused by`` stay, so a pod's tail keeps
    the line that says what failed within its size."""
    if text.count("\n") < 2 * KEEP_FRAMES + 2:
        return text
    lines = text.split("\n")
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if len(run) > KEEP_FRAMES + 2:
            out.extend(run[:KEEP_FRAMES])
            out.append(f"\t… {len(run) - KEEP_FRAMES - 1} frames")
            out.append(run[-1])
        else:
            out.extend(run)
        run.clear()

    for ln in lines:
        if _FRAME.match(ln):
            run.append(ln)
            continue
        if run and ln.startswith("    ") and run[-1].lstrip().startswith("File "):
            run.append(ln)  # a Python frame's source line
            continue
        flush()
        out.append(ln)
    flush()
    return "\n".join(out)


def line_record(
    pl: ParsedLine,
    *,
    message: str | None = None,
    time: datetime | None = None,
    container: str | None = None,
    previous: bool = False,
    ref: str | None = None,
) -> dict[str, Any]:
    """The PodLogLine JSON of one parsed line (``message``: the line as stored, when the
    parse was of a record's message; ``time``: the record's time, else one read from the
    line)."""
    written = compact_stack((message if message is not None else pl.raw).rstrip("\r\n"))
    when = time or _line_time(pl)
    out: dict[str, Any] = {}
    if when is not None:
        out["time"] = format_time(when)
    if pl.level is not None:
        out["level"] = pl.level
        if pl.inferred:
            out["level_inferred"] = True
    out["message"] = written
    if container:
        out["container"] = container
    if previous:
        out["previous"] = True
    text = compact_stack(pl.message) if pl.message else pl.message
    if text and text != written.strip():
        out["text"] = text
    if pl.kind != "text":
        out["kind"] = pl.kind
    if pl.error and pl.kind in ("json", "logfmt"):
        out["error"] = pl.error[:1000]
    if pl.exit_code is not None:
        out["exit_code"] = pl.exit_code
    if ref:
        out["ref"] = ref
    return out


def fit_tail(lines: list[str], records: list[dict[str, Any]], limit_chars: int) -> int:
    """How many of the newest records fit in ``limit_chars`` (at least 1). The plain ``lines``
    are not counted: the result budget cuts that list on its own, and counting a long line
    twice (a start-up check's report, a stack) would drop the very line that explains an
    exit."""
    used = 0
    kept = 0
    for _line, rec in zip(reversed(lines), reversed(records), strict=True):
        size = len(json.dumps(rec, ensure_ascii=False, default=str)) + 8
        if kept and used + size > limit_chars:
            break
        used += size
        kept += 1
    return kept
