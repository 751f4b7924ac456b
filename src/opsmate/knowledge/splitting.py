"""Size-bounded splitting and packing of Markdown blocks (used by ``markdown.py``).

Token counts here are a cheap, deterministic approximation (:func:`count_tokens`):
one token per run of letters/digits/underscore, per CJK character and per run of
punctuation. It is additive over text joined by whitespace, which lets a chunk's
size be the sum of its pieces' sizes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from opsmate.knowledge.types import ChunkKind

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_COUNT_RE = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\w\s]+")
# Cut points inside prose: after a sentence end (and the whitespace after it).
_SENTENCE_CUT_RE = re.compile(r"(?:[.!?;](?=\s)|[。！？；])\s*")
_LINE_CUT_RE = re.compile(r"\n")

#: A lead-in of at most this many tokens is repeated in front of every part of the
#: block it introduces when that block has to be split.
LEAD_REPEAT_MAX_TOKENS = 60
#: Below this many tokens of room, a lead-in is not glued (it would leave no room).
MIN_PART_TOKENS = 40


def count_tokens(text: str) -> int:
    """Approximate token count: words/identifiers + CJK characters + punctuation runs.

    ``max_connections`` is 1, ``HTTP 503`` is 2, ``连接池`` is 3 and ``--replicas=6``
    is 4 (``--``, ``replicas``, ``=``, ``6``). It is linear in the text, deterministic
    and independent of any model; for English prose it is close to the word count,
    which is below what subword tokenizers (WordPiece, BPE) count.
    """
    return sum(1 for _ in _COUNT_RE.finditer(text))


@dataclass
class Piece:
    """A packable unit of a section: a whole block or one part of a split block."""

    text: str
    tokens: int
    kind: ChunkKind


def _cuts(text: str, start: int, end: int, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    """Contiguous spans of ``text[start:end]`` cut after each match of ``pattern``."""
    spans: list[tuple[int, int]] = []
    pos = start
    for m in pattern.finditer(text, start, end):
        if m.end() > pos and m.end() < end:
            spans.append((pos, m.end()))
            pos = m.end()
    spans.append((pos, end))
    return spans


def _token_cuts(text: str, start: int, end: int, budget: int) -> list[tuple[int, int]]:
    """Spans of at most ``budget`` tokens, cut between tokens (last resort)."""
    spans: list[tuple[int, int]] = []
    pos = start
    n = 0
    for m in _COUNT_RE.finditer(text, start, end):
        if n == budget:
            spans.append((pos, m.start()))
            pos = m.start()
            n = 0
        n += 1
    spans.append((pos, end))
    return spans


def _atoms(text: str, start: int, end: int, budget: int, level: int) -> list[tuple[int, int, int]]:
    """(start, end, tokens) spans covering ``text[start:end]``, each within ``budget``.

    Levels: 0 sentences, 1 lines, 2 tokens.
    """
    if level == 0:
        spans = _cuts(text, start, end, _SENTENCE_CUT_RE)
    elif level == 1:
        spans = _cuts(text, start, end, _LINE_CUT_RE)
    else:
        spans = _token_cuts(text, start, end, budget)
    out: list[tuple[int, int, int]] = []
    for s, e in spans:
        n = count_tokens(text[s:e])
        if n > budget and level < 2:
            out.extend(_atoms(text, s, e, budget, level + 1))
        else:
            out.append((s, e, n))
    return out


def split_text(text: str, budget: int) -> list[str]:
    """Cut prose into contiguous parts of at most ``budget`` tokens.

    Cuts at sentence ends first; a sentence over the budget is cut at line ends,
    and a line over the budget between tokens (never inside a word).
    """
    total = count_tokens(text)
    if total <= budget:
        return [text]
    parts: list[str] = []
    cur_start = 0
    cur_end = 0
    cur_tokens = 0
    for s, e, n in _atoms(text, 0, len(text), budget, 0):
        if cur_tokens and cur_tokens + n > budget:
            parts.append(text[cur_start:cur_end].strip())
            cur_start, cur_tokens = s, 0
        cur_end = e
        cur_tokens += n
    parts.append(text[cur_start:cur_end].strip())
    return [p for p in parts if p]


def _assemble(
    units: Sequence[str], wrap: tuple[str, str] | None, header: Sequence[str] | None
) -> str:
    body = "\n".join(units)
    if wrap is not None:
        return f"{wrap[0]}\n{body}\n{wrap[1]}" if units else f"{wrap[0]}\n{wrap[1]}"
    if header:
        return "\n".join([*header, *units])
    return body


def block_pieces(
    kind: ChunkKind,
    units: Sequence[str | Piece],
    budget: int,
    *,
    lead: Piece | None = None,
    wrap: tuple[str, str] | None = None,
    header: Sequence[str] | None = None,
) -> list[Piece]:
    """Pieces of one block made of ``units`` (list items, code lines, table rows, prose).

    ``wrap`` (opening and closing fence) and ``header`` (table header + separator)
    are repeated around every part. ``lead`` is put in front of the first part and,
    when short, of every part (a unit that cannot be cut and does not fit beside
    the lead keeps it anyway: the lead-in is never separated from its action). Prose
    and list items (``str`` units of a block with
    neither wrap nor header) over the room left are cut with :func:`split_text`;
    code lines, table rows and ready-made :class:`Piece` units never are.
    """
    texts = [u.text if isinstance(u, Piece) else u for u in units]
    overhead = count_tokens(_assemble([], wrap, header))
    whole = _assemble(texts, wrap, header)
    whole_tokens = count_tokens(whole)
    lead_tokens = lead.tokens if lead is not None else 0
    if whole_tokens + lead_tokens <= budget:
        text = f"{lead.text}\n\n{whole}" if lead is not None else whole
        return [Piece(text, whole_tokens + lead_tokens, kind)]

    pieces: list[Piece] = []
    repeat = lead is not None and lead_tokens <= LEAD_REPEAT_MAX_TOKENS
    room = budget - overhead - lead_tokens  # for a part that carries the lead
    if lead is not None and room < MIN_PART_TOKENS:
        pieces.append(lead)  # too long to glue: it stands on its own, just before
        lead, lead_tokens, repeat, room = None, 0, False, budget - overhead
    part_room = room if (repeat or lead is None) else budget - overhead

    divisible = wrap is None and header is None and kind != "code"
    sized: list[tuple[str, int]] = []
    for unit in units:
        if isinstance(unit, Piece):
            sized.append((unit.text, unit.tokens))
            continue
        n = count_tokens(unit)
        if n > room and divisible:
            sized.extend((p, count_tokens(p)) for p in split_text(unit, room))
        else:
            sized.append((unit, n))

    groups: list[list[str]] = []
    current: list[str] = []
    used = 0
    limit = room if lead is not None else part_room
    for unit, n in sized:
        if current and used + n > limit:
            groups.append(current)
            current, used, limit = [], 0, part_room
        current.append(unit)
        used += n
    if current or not groups:
        groups.append(current)  # an empty code block still yields its (empty) fences

    for i, group in enumerate(groups):
        text = _assemble(group, wrap, header)
        if lead is not None and (i == 0 or repeat):
            text = f"{lead.text}\n\n{text}"
        pieces.append(Piece(text, count_tokens(text), kind))
    return pieces


def _greedy(pieces: Sequence[Piece], limit: int) -> list[list[Piece]]:
    groups: list[list[Piece]] = []
    current: list[Piece] = []
    used = 0
    for piece in pieces:
        if current and used + piece.tokens > limit:
            groups.append(current)
            current, used = [], 0
        current.append(piece)
        used += piece.tokens
    if current:
        groups.append(current)
    return groups


def pack_pieces(pieces: Sequence[Piece], max_tokens: int) -> list[list[Piece]]:
    """Pack consecutive pieces into as few groups of at most ``max_tokens`` as possible,
    balanced: among packings with that many groups, the largest group is smallest.

    So 320 tokens of small pieces become two chunks of about 160, not 300 + 20.
    (Greedy packing is optimal for a given limit; a binary search finds the
    smallest limit that keeps the group count.) A piece over ``max_tokens`` is a
    group of its own.
    """
    groups = _greedy(pieces, max_tokens)
    if len(groups) < 2:
        return groups
    lo = max(1, -(-sum(p.tokens for p in pieces) // len(groups)))
    hi = max_tokens
    while lo < hi:
        mid = (lo + hi) // 2
        if len(_greedy(pieces, mid)) <= len(groups):
            hi = mid
        else:
            lo = mid + 1
    return _greedy(pieces, lo)
