"""Property-based tests of chunking over generated Markdown (hypothesis).

Invariants, for any document made of headings, paragraphs, lists, fenced code
and tables:

* no text lost: every non-whitespace character of the body (everything except
  front matter and heading lines) appears in the chunks, in order;
* chunks are numbered in document order and their ids are unique;
* every chunk is within ``CHILD_MAX_TOKENS`` - the generated code lines and table
  rows are short, and prose is never indivisible, so the documented exception
  (a single code line / table row longer than the limit) cannot occur here;
* code fences are balanced in every chunk; a chunk holding table rows starts
  its table with the header and separator rows;
* parents are contiguous runs of children within ``PARENT_MAX_TOKENS``.
"""

from __future__ import annotations

import os
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opsmate.knowledge.markdown import (
    CHILD_MAX_TOKENS,
    PARENT_MAX_TOKENS,
    count_tokens,
    parse_runbook,
)

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHXYZ", min_size=1, max_size=9)
CODE_WORD = st.sampled_from(
    ["kubectl", "get", "pods", "-n", "shop", "--replicas=3", '"{x}"', "$VAR", "|", "grep", "0.7"]
)
SEPARATOR_RE = re.compile(r"^\|(\s*:?-+:?\s*\|)+$")
FENCE_RE = re.compile(r"^\s{0,3}(```|~~~)")


def _sized(draw: st.DrawFn, sizes: list[int]) -> int:
    """A size from ``sizes``: mostly small, sometimes far over the chunk limit."""
    return draw(st.sampled_from(sizes))


@st.composite
def sentence(draw: st.DrawFn) -> str:
    # a few drawn words cycled to the drawn length, numbered so each word is distinct
    base = draw(st.lists(WORD, min_size=1, max_size=6))
    n = _sized(draw, [1, 3, 8, 15, 30, 400])
    breaks = draw(st.lists(st.integers(0, max(0, n - 2)), max_size=5))
    out = []
    for i in range(n):
        out.append(f"{base[i % len(base)]}{i}" if n > len(base) else base[i])
        if i < n - 1:
            out.append("\n" if i in breaks else " ")
    end = draw(st.sampled_from([".", ".", "!", "?", ":", ""]))
    return "".join(out) + end


@st.composite
def paragraph(draw: st.DrawFn) -> str:
    n = _sized(draw, [1, 2, 4, 10, 30])
    return " ".join(draw(st.lists(sentence(), min_size=n, max_size=n)))


@st.composite
def bullet_list(draw: st.DrawFn) -> str:
    n = _sized(draw, [1, 3, 10, 40])
    items = draw(st.lists(st.lists(sentence(), min_size=1, max_size=4), min_size=n, max_size=n))
    ordered = draw(st.booleans())
    lines = []
    for i, item in enumerate(items):
        marker = f"{i + 1}. " if ordered else "- "
        text = " ".join(item).replace("\n", "\n" + " " * len(marker))
        lines.append(marker + text)
    return "\n".join(lines)


@st.composite
def code_block(draw: st.DrawFn) -> str:
    info = draw(st.sampled_from(["", "bash", "promql", "sql title=x"]))
    base = draw(st.lists(st.lists(CODE_WORD, max_size=15), min_size=1, max_size=5))
    n = _sized(draw, [0, 1, 5, 40, 150])
    body = "\n".join(f"{' '.join(base[i % len(base)])} #{i}" for i in range(n))
    return f"```{info}\n{body}\n```" if n else f"```{info}\n```"


@st.composite
def table(draw: st.DrawFn) -> str:
    cols = draw(st.integers(min_value=1, max_value=4))
    header = "| " + " | ".join(draw(WORD) for _ in range(cols)) + " |"
    sep = "|" + "|".join(" --- " for _ in range(cols)) + "|"
    base = draw(st.lists(st.lists(WORD, min_size=cols, max_size=cols), min_size=1, max_size=4))
    n = _sized(draw, [0, 1, 5, 30, 120])
    rows = ["| " + " | ".join(base[i % len(base)]) + f" {i} |" for i in range(n)]
    return "\n".join([header, sep, *rows])


@st.composite
def heading(draw: st.DrawFn) -> str:
    level = draw(st.integers(min_value=1, max_value=4))
    return "#" * level + " " + " ".join(draw(st.lists(WORD, min_size=1, max_size=5)))


@st.composite
def document(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Markdown text and the list of its non-heading blocks."""
    kinds = st.one_of(paragraph(), bullet_list(), code_block(), table())
    with_headings = draw(st.booleans())
    blocks: list[tuple[bool, str]] = []
    for _ in range(draw(st.integers(min_value=1, max_value=12))):
        if with_headings and draw(st.integers(0, 3)) == 0:
            blocks.append((True, draw(heading())))
        blocks.append((False, draw(kinds)))
    text = "\n\n".join(b for _, b in blocks) + "\n"
    return text, [b for is_heading, b in blocks if not is_heading]


def _is_subsequence(needle: str, haystack: str) -> bool:
    it = iter(haystack)
    return all(ch in it for ch in needle)


@settings(
    max_examples=int(os.environ.get("OPSMATE_HYPOTHESIS_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(document())
def test_chunking_invariants(doc_and_blocks: tuple[str, list[str]]) -> None:
    text, body_blocks = doc_and_blocks
    doc = parse_runbook(text, "gen/doc.md")

    # no text lost, in order
    expected = "".join("".join(b.split()) for b in body_blocks)
    actual = "".join("".join(c.text.split()) for c in doc.chunks)
    assert _is_subsequence(expected, actual)

    # order and identity
    assert [c.ordinal for c in doc.chunks] == list(range(len(doc.chunks)))
    assert len({c.id for c in doc.chunks}) == len(doc.chunks)

    for chunk in doc.chunks:
        assert chunk.tokens == count_tokens(chunk.text)
        assert 0 < chunk.tokens <= CHILD_MAX_TOKENS, chunk.text
        lines = chunk.text.split("\n")
        assert sum(1 for line in lines if FENCE_RE.match(line)) % 2 == 0, chunk.text
        in_code = False
        prev = ""
        table_start = True
        for line in lines:
            if FENCE_RE.match(line):
                in_code = not in_code
            elif not in_code and line.startswith("|") and not prev.startswith("|"):
                table_start = table_start and line.endswith("|")
                idx = lines.index(line)
                assert idx + 1 < len(lines) and SEPARATOR_RE.match(lines[idx + 1]), chunk.text
            prev = line if not in_code else ""
        assert table_start

    # parents: contiguous runs of children within the parent cap
    children: dict[str, list[int]] = {}
    for chunk in doc.chunks:
        children.setdefault(chunk.parent_id, []).append(chunk.ordinal)
    assert set(children) == {s.id for s in doc.sections}
    for section in doc.sections:
        ords = children[section.id]
        assert ords == list(range(ords[0], ords[-1] + 1))
        size = sum(doc.chunks[o].tokens for o in ords)
        assert size <= PARENT_MAX_TOKENS or len(ords) == 1
        assert all(doc.chunks[o].heading_path == section.heading_path for o in ords)
