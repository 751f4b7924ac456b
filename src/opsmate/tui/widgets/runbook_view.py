"""The detail of one runbook reference (``R1``): source, heading path, applicability.

A runbook entry is one document the investigation consulted, with the section that
matched (its heading path) and the metadata that decides whether it applies
(status, environments, service, version). Deprecated runbooks are flagged. The body
is the runbook itself, rendered as Markdown (code fences as code, no raw front matter).
"""

from __future__ import annotations

import re
from typing import Any

from textual.content import Content

_FRONT_MATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n.*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)


def strip_front_matter(markdown: str) -> str:
    """``markdown`` without its YAML front matter (the header above shows what matters)."""
    return _FRONT_MATTER.sub("", markdown, count=1).lstrip("\n")


def runbook_markdown(r: Any, document: str | None, sections: str | None = None) -> str:
    """What the runbook viewer renders for ``r``: the section that matched, then the whole
    runbook (``document``, the file as written, without front matter). Without the file,
    ``sections`` (the text the engine kept) stands in and the viewer says so."""
    path = " › ".join(r.heading_path) if r.heading_path else "(whole document)"
    excerpt = (r.excerpt or "").strip()
    parts = [f"**Matched:** {path}", "", excerpt or "*(no excerpt)*", "", "---", ""]
    if document and document.strip():
        parts += [f"**The whole runbook** · `{r.source}`", "", strip_front_matter(document)]
    elif sections and sections.strip() and sections.strip() != excerpt:
        parts += [
            f"**The runbook's text** · `{r.source}` *(the file is not on this machine: "
            "the sections the engine read)*",
            "",
            sections.strip(),
        ]
    return "\n".join(parts) + "\n"


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
