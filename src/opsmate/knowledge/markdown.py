"""Structure-aware chunking of Markdown runbooks.

A runbook is parsed with markdown-it-py (CommonMark + tables + YAML front matter);
each top-level block (paragraph, list, fenced code, table, quote ...) is cut out
of the *original* text by its line range, so nothing is re-rendered or lost.

Blocks are grouped into sections by heading. Inside a section, blocks become
*pieces* (a whole block, or parts of an oversized block) that are packed, in
order, into child chunks of at most :data:`CHILD_MAX_TOKENS` (balanced: 320 tokens
become two chunks of ~160, not 300 + 20). Sizes are :func:`count_tokens`. The rules:

* a code block is split only at line boundaries, each part wrapped in the
  original opening fence (with its info string) and a closing fence;
* a table is split only at row boundaries, each part repeating header and
  separator rows;
* a list is split only between its top-level items; an item that alone is over
  the limit is cut along its own blocks (paragraphs, code, nested lists) by these
  same rules;
* a paragraph is split only at sentence ends, then (for a single sentence over
  the limit) at line ends, then as a last resort between words;
* a *lead-in* (a paragraph that ends with ``:`` or is one short sentence) directly
  followed by a list, code block or table stays in the same chunk as it; if that
  block is split, a short lead-in is repeated in front of every part, so a
  condition ("Only in test:") is never separated from the action it governs.

The one exception to the size limit is an indivisible unit that does not fit:
a single code line or table row longer than the room left beside its fence /
header and lead-in. Prose never is one (it is cut between words as a last resort).

Each section's children are grouped into parents (:class:`Section`) of at most
:data:`PARENT_MAX_TOKENS`, each a contiguous run of children (balanced the same
way). A section is the content directly under one heading; a document without
headings is one section whose heading path is just the title.

A thematic break (``---``) carries no content and is dropped; lines no parser
token covers (link reference definitions) are kept as text.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path, PurePosixPath

from opsmate.errors import InputError
from opsmate.knowledge.frontmatter import parse_front_matter
from opsmate.knowledge.mdblocks import Block, Doc, collect, slice_lines, with_gaps
from opsmate.knowledge.splitting import (
    MIN_PART_TOKENS,
    Piece,
    block_pieces,
    count_tokens,
    pack_pieces,
)
from opsmate.knowledge.types import Chunk, ChunkKind, ParsedDocument, RunbookMeta, Section

__all__ = [
    "CHILD_MAX_TOKENS",
    "CHUNKING_VERSION",
    "PARENT_MAX_TOKENS",
    "count_tokens",
    "load_runbook",
    "parse_runbook",
]

#: Bump when chunk boundaries or chunk text change (it is part of every chunk id).
CHUNKING_VERSION = "md-2"
CHILD_MAX_TOKENS = 300
PARENT_MAX_TOKENS = 1200
#: A paragraph of at most this many tokens holding one sentence counts as a lead-in.
LEAD_IN_MAX_TOKENS = 40
#: A paragraph ending with ":" up to this size is a lead-in (a longer one is just prose).
LEAD_IN_COLON_MAX_TOKENS = CHILD_MAX_TOKENS // 2

# "key: value" right after an opening "---": meant as front matter, not a thematic break.
_UNCLOSED_FRONT_RE = re.compile(r"\s*[A-Za-z_][\w-]*\s*:(\s|$)")
_SENTENCE_END_RE = re.compile(r"[.!?](?=\s)|[。！？]")


def _is_lead_in(text: str) -> bool:
    """A paragraph that introduces what follows: ends with a colon, or is one short sentence."""
    stripped = text.rstrip()
    tokens = count_tokens(stripped)
    if stripped.endswith((":", "：")):
        return tokens <= LEAD_IN_COLON_MAX_TOKENS
    if tokens > LEAD_IN_MAX_TOKENS:
        return False
    return len(_SENTENCE_END_RE.findall(stripped.rstrip(".!?。！？"))) == 0


def _section_pieces(doc: Doc, blocks: list[Block], budget: int) -> list[Piece]:
    """Pieces of one section's content blocks, lead-ins glued to what they introduce."""
    pieces: list[Piece] = []
    i = 0
    while i < len(blocks):
        block = blocks[i]
        if block.kind == "hr":  # a thematic break carries no content
            i += 1
            continue
        nxt = blocks[i + 1] if i + 1 < len(blocks) else None
        if block.kind == "text" and nxt is not None and nxt.kind in ("list", "code", "table"):
            text = slice_lines(doc.lines, block.start, block.end)
            if _is_lead_in(text):
                lead = Piece(text, count_tokens(text), "text")
                pieces.extend(_block_pieces(doc, nxt, budget, lead))
                i += 2
                continue
        pieces.extend(_block_pieces(doc, block, budget, None))
        i += 1
    return pieces


def _list_units(doc: Doc, block: Block, room: int) -> list[str | Piece]:
    """A list's items; an item over ``room`` is cut along its own blocks into pieces."""
    units: list[str | Piece] = []
    for item in block.items:
        text = slice_lines(doc.lines, item.start, item.end)
        if count_tokens(text) <= room or item.tok_hi <= item.tok_lo:
            units.append(text)
            continue
        level = doc.tokens[item.tok_lo - 1].level + 1
        children, _ = collect(doc, item.tok_lo, item.tok_hi, level)
        children = with_gaps(children, doc.lines, item.start, item.end)
        units.extend(_section_pieces(doc, children, room))
    return units or [slice_lines(doc.lines, block.start, block.end)]


def _block_pieces(doc: Doc, block: Block, budget: int, lead: Piece | None) -> list[Piece]:
    lines = doc.lines
    if block.kind == "list":
        room = budget if lead is None else max(budget - lead.tokens, MIN_PART_TOKENS)
        return block_pieces("list", _list_units(doc, block, room), budget, lead=lead)
    if block.kind == "code":
        if block.fence is not None:
            opening, closing = block.fence
            has_close = block.end - 1 > block.start and lines[block.end - 1].strip() == closing
            body = lines[block.start + 1 : block.end - 1 if has_close else block.end]
            return block_pieces("code", body, budget, lead=lead, wrap=(opening, closing))
        return block_pieces("code", lines[block.start : block.end], budget, lead=lead)
    if block.kind == "table":
        rows = lines[block.start : block.end]
        return block_pieces("table", rows[2:], budget, lead=lead, header=rows[:2])
    return block_pieces("text", [slice_lines(lines, block.start, block.end)], budget, lead=lead)


def _stable_id(*parts: object) -> str:
    return hashlib.sha1("|".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:16]


def _heading_path(title: str, stack: list[tuple[int, str]]) -> list[str]:
    path = [title] + [t for _, t in stack]
    if len(path) > 1 and path[1].strip().casefold() == title.strip().casefold():
        del path[1]
    return path


def _kind(pieces: list[Piece]) -> ChunkKind:
    kinds = {p.kind for p in pieces}
    if len(kinds) == 1:
        return pieces[0].kind
    return "mixed"


def _doc_version(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _default_title(source: str) -> str:
    return PurePosixPath(source).stem or source


def _emit(
    source: str,
    doc_version: str,
    path: list[str],
    pieces: list[Piece],
    sections: list[Section],
    chunks: list[Chunk],
) -> None:
    """Pack one section's pieces into children, group children into parents, append both."""
    children = [
        Piece("\n\n".join(p.text for p in group), sum(p.tokens for p in group), _kind(group))
        for group in pack_pieces(pieces, CHILD_MAX_TOKENS)
    ]
    for run in pack_pieces(children, PARENT_MAX_TOKENS):
        ordinal = len(sections)
        sid = _stable_id(source, doc_version, f"s{ordinal}", CHUNKING_VERSION)
        sections.append(
            Section(
                id=sid,
                heading_path=path,
                text="\n\n".join(c.text for c in run),
                ordinal=ordinal,
            )
        )
        for child in run:
            n = len(chunks)
            chunks.append(
                Chunk(
                    id=_stable_id(source, doc_version, n, CHUNKING_VERSION),
                    source=source,
                    heading_path=path,
                    text=child.text,
                    parent_id=sid,
                    ordinal=n,
                    kind=child.kind,
                    tokens=child.tokens,
                )
            )


def parse_runbook(text: str, source: str) -> ParsedDocument:
    """Parse a Markdown runbook into metadata, parent sections and child chunks.

    ``source`` is the path relative to the indexed root (POSIX); ``doc_version`` is
    the first 16 hex digits of the SHA-256 of ``text`` encoded as UTF-8. Raises
    :class:`InputError` (naming ``source`` and the line) for broken front matter.
    """
    return _parse(text, source, _doc_version(text.encode("utf-8", "surrogatepass")))


def _parse(text: str, source: str, doc_version: str) -> ParsedDocument:
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\x00", "\ufffd")
    warnings: list[str] = []
    if not text.strip():
        return ParsedDocument(
            source=source,
            doc_version=doc_version,
            title=_default_title(source),
            meta=RunbookMeta(),
            sections=[],
            chunks=[],
            warnings=[f"{source}: empty file, nothing to index"],
        )
    doc = Doc(text)
    blocks, front = collect(doc, 0, len(doc.tokens), 0)
    meta = RunbookMeta()
    first = 0
    if front is not None:
        meta = parse_front_matter(front.content, source, first_line=2)
        first = front.map[1]
    elif doc.lines[0].rstrip() == "---" and _UNCLOSED_FRONT_RE.match("\n".join(doc.lines[1:3])):
        raise InputError(
            f"{source}:1: front matter opened with '---' is never closed",
            hint="end the front matter with a line holding only '---'",
        )
    blocks = with_gaps(blocks, doc.lines, first, len(doc.lines))

    title = meta.title or next(
        (b.title for b in blocks if b.kind == "heading" and b.level == 1 and b.title),
        _default_title(source),
    )

    sections: list[Section] = []
    chunks: list[Chunk] = []
    stack: list[tuple[int, str]] = []
    content: list[Block] = []

    def flush() -> None:
        if content:
            pieces = _section_pieces(doc, content, CHILD_MAX_TOKENS)
            _emit(source, doc_version, _heading_path(title, stack), pieces, sections, chunks)
            content.clear()

    for block in blocks:
        if block.kind == "heading":
            flush()
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            stack.append((block.level, block.title or f"(untitled H{block.level})"))
        else:
            content.append(block)
    flush()
    if not chunks:
        warnings.append(f"{source}: no content to index (only front matter or headings)")
    return ParsedDocument(
        source=source,
        doc_version=doc_version,
        title=title,
        meta=meta,
        sections=sections,
        chunks=chunks,
        warnings=warnings,
    )


def load_runbook(path: Path, root: Path) -> ParsedDocument:
    """Read and parse the runbook at ``path``; ``source`` is its path relative to ``root``.

    Raises :class:`InputError` for an unreadable, binary (NUL bytes) or non-UTF-8
    file, or broken front matter. An empty file gives a document with no chunks
    and a warning. A UTF-8 byte-order mark is accepted. ``doc_version`` hashes the
    raw bytes.
    """
    try:
        source = path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        source = path.name
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{source}: cannot read file: {exc.strerror or exc}") from exc
    nul = data.find(b"\x00")
    if nul != -1:
        raise InputError(f"{source}: binary file (NUL byte at offset {nul}), not Markdown; skipped")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"{source}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start})",
            hint="convert the file to UTF-8, e.g. iconv -f GB18030 -t UTF-8",
        ) from exc
    return _parse(text, source, _doc_version(data))
