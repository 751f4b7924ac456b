"""The detail of one runbook reference (``R1``): source, heading path, applicability.

A runbook entry is one document the investigation consulted, with the section that
matched (its heading path) and the metadata that decides whether it applies
(status, environments, service, version). Deprecated runbooks are flagged.
"""

from __future__ import annotations

from typing import Any

from textual.content import Content


def runbook_content(r: Any) -> Content:
    """A header block describing runbook reference ``r`` (a RunbookRef model)."""
    path = " › ".join(r.heading_path) if r.heading_path else "(whole document)"
    status = r.status or "active"
    status_markup = (
        "[$success]$status[/]"
        if status == "active"
        else "[b $error]$status[/] — do not follow blindly"
    )
    applies = []
    if r.environment:
        applies.append("environment " + ", ".join(r.environment))
    if r.service:
        applies.append(f"service {r.service}")
    if r.version:
        applies.append(f"version {r.version}")
    return Content.from_markup(
        "[b $accent]$id[/]  [b]$title[/b]\n"
        "[b]source[/b]   $source  [dim]$version[/]\n"
        "[b]section[/b]  $path\n"
        f"[b]status[/b]   {status_markup}\n"
        "[b]applies[/b]  $applies",
        id=r.id,
        title=r.title or r.source,
        source=r.source,
        version=(r.doc_version or "")[:12],
        path=path,
        status=status,
        applies="; ".join(applies) or "no restriction stated",
    )
