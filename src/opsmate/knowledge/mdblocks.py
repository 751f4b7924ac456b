"""Markdown -> top-level blocks with their line ranges (markdown-it-py), for chunking.

The parser is CommonMark with the table rule and YAML front matter. Blocks keep
only line ranges (markdown-it's ``token.map``) so that chunk text is always sliced
from the original source, never re-rendered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any


@dataclass
class Item:
    """A top-level list item: its line range and the range of its tokens."""

    start: int
    end: int
    tok_lo: int
    tok_hi: int


@dataclass
class Block:
    kind: str  # heading | text | list | code | table | hr
    start: int  # first line (0-based)
    end: int  # line after the last one
    level: int = 0  # heading level
    title: str = ""  # heading text
    fence: tuple[str, str] | None = None  # (opening line, closing line) of fenced code
    items: list[Item] = field(default_factory=list)  # top-level list items


class Doc:
    """The parsed source: its lines and markdown-it tokens."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.tokens: list[Any] = _markdown_parser().parse(text)


@lru_cache(maxsize=1)
def _markdown_parser() -> Any:
    """Block-level parser: CommonMark + tables + front matter, inline parsing off.

    Only headings need inline parsing (done by :func:`_heading_text`); skipping it
    for every paragraph makes large files about a fifth faster.
    """
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    return MarkdownIt("commonmark").enable("table").use(front_matter_plugin).disable("inline")


@lru_cache(maxsize=1)
def _inline_parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


def _heading_text(source: str) -> str:
    """Plain text of a heading's inline Markdown (emphasis and code markers removed)."""
    tokens = _inline_parser().parseInline(source)
    parts: list[str] = []
    for child in (tokens[0].children or []) if tokens else []:
        if child.type in ("text", "code_inline", "html_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(child.content)
    return " ".join("".join(parts).split())


_CLOSING_FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*$")


def collect(doc: Doc, lo: int, hi: int, level: int) -> tuple[list[Block], Any]:
    """Blocks at nesting ``level`` among ``tokens[lo:hi]``, plus the front-matter token."""
    tokens, lines = doc.tokens, doc.lines
    blocks: list[Block] = []
    front = None
    for i in range(lo, hi):
        tok = tokens[i]
        if tok.level != level or tok.nesting == -1 or tok.map is None:
            continue
        start, end = tok.map
        kind = tok.type
        if kind == "front_matter":
            front = tok
        elif kind == "heading_open":
            title = _heading_text(tokens[i + 1].content) if i + 1 < hi else ""
            blocks.append(Block("heading", start, end, level=int(tok.tag[1]), title=title))
        elif kind in ("bullet_list_open", "ordered_list_open"):
            blocks.append(Block("list", start, end, items=list_items(tokens, i, level)))
        elif kind == "fence":
            last = lines[end - 1] if end - 1 > start else ""
            closed = end - 1 > start and _CLOSING_FENCE_RE.match(last) is not None
            closing = last.strip() if closed else tok.markup
            blocks.append(Block("code", start, end, fence=(lines[start], closing)))
        elif kind == "code_block":
            blocks.append(Block("code", start, end))
        elif kind == "table_open":
            blocks.append(Block("table", start, end))
        elif kind == "hr":
            blocks.append(Block("hr", start, end))  # no content; covers its line
        else:  # paragraph, blockquote, html_block, anything a plugin adds
            blocks.append(Block("text", start, end))
    return blocks, front


def list_items(tokens: list[Any], open_index: int, level: int) -> list[Item]:
    """The items of the list opened at ``tokens[open_index]`` (a list at ``level``)."""
    items: list[Item] = []
    for j in range(open_index + 1, len(tokens)):
        tok = tokens[j]
        if tok.level <= level:
            break
        if tok.level == level + 1 and tok.map is not None and tok.type == "list_item_open":
            items.append(Item(tok.map[0], tok.map[1], j + 1, j + 1))
        elif tok.level == level + 1 and tok.type == "list_item_close" and items:
            items[-1].tok_hi = j
    return items


def with_gaps(blocks: list[Block], lines: list[str], first: int, last: int) -> list[Block]:
    """Add text blocks for non-blank lines no token covers (e.g. link reference definitions)."""
    out: list[Block] = []
    pos = first

    def gap(until: int) -> None:
        start = pos
        while start < until and not lines[start].strip():
            start += 1
        stop = until
        while stop > start and not lines[stop - 1].strip():
            stop -= 1
        if stop > start:
            out.append(Block("text", start, stop))

    for block in blocks:
        if block.start > pos:
            gap(block.start)
        out.append(block)
        pos = max(pos, block.end)
    gap(last)
    return out


def slice_lines(lines: list[str], start: int, end: int) -> str:
    return "\n".join(lines[start:end]).strip("\n").rstrip()
