"""Unit tests of runbook parsing and chunking (opsmate.knowledge.markdown)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from opsmate.errors import InputError
from opsmate.knowledge.markdown import (
    CHILD_MAX_TOKENS,
    CHUNKING_VERSION,
    PARENT_MAX_TOKENS,
    count_tokens,
    load_runbook,
    parse_runbook,
)
from opsmate.knowledge.types import ParsedDocument

FENCE_RE = re.compile(r"^\s{0,3}(```|~~~)", re.MULTILINE)


def _words(n: int, stem: str = "word") -> str:
    return " ".join(f"{stem}{i}" for i in range(n))


def _chunk_with(doc: ParsedDocument, needle: str) -> int:
    hits = [c.ordinal for c in doc.chunks if needle in c.text]
    assert hits, f"{needle!r} not in any chunk"
    return hits[0]


# --- counting ---------------------------------------------------------------


def test_count_tokens_words_cjk_and_punctuation() -> None:
    assert count_tokens("") == 0
    assert count_tokens("max_connections") == 1
    assert count_tokens("HTTP 503") == 2
    assert count_tokens("连接池") == 3
    assert count_tokens("--replicas=6") == 4
    assert count_tokens("Restart it.") == 3
    # additive over whitespace joins, which chunk sizes rely on
    a, b = "kubectl get pods -n shop", "连接池耗尽: PoolTimeout!"
    assert count_tokens(f"{a}\n\n{b}") == count_tokens(a) + count_tokens(b)


# --- heading path and title -------------------------------------------------


def test_heading_path_title_from_h1_not_repeated() -> None:
    doc = parse_runbook(
        "# Redis restart\n\nIntro text.\n\n## Symptoms\n\nSlow.\n\n### Deep\n\nDeeper.\n\n"
        "## Fix\n\nDo it.\n",
        "redis/restart.md",
    )
    assert doc.title == "Redis restart"
    paths = [c.heading_path for c in doc.chunks]
    assert paths == [
        ["Redis restart"],
        ["Redis restart", "Symptoms"],
        ["Redis restart", "Symptoms", "Deep"],
        ["Redis restart", "Fix"],
    ]
    assert doc.chunks[1].text == "Slow."
    assert doc.chunks[1].index_text() == "Redis restart › Symptoms\nSlow."


def test_heading_path_uses_front_matter_title_and_inline_markup_is_stripped() -> None:
    doc = parse_runbook(
        "---\ntitle: Pool exhaustion\n---\n# Order **service**\n\nText.\n\n## `max_connections` "
        "too low\n\nMore.\n",
        "a/b.md",
    )
    assert doc.title == "Pool exhaustion"
    assert doc.chunks[0].heading_path == ["Pool exhaustion", "Order service"]
    assert doc.chunks[1].heading_path == [
        "Pool exhaustion",
        "Order service",
        "max_connections too low",
    ]


def test_title_falls_back_to_file_stem_and_setext_headings() -> None:
    doc = parse_runbook("Some text first.\n\nSection\n-------\n\nBody.\n", "x/plain-notes.md")
    assert doc.title == "plain-notes"
    assert [c.heading_path for c in doc.chunks] == [["plain-notes"], ["plain-notes", "Section"]]


def test_heading_levels_pop_correctly() -> None:
    doc = parse_runbook("# T\n## A\n### A1\nx\n## B\ny\n#### B-deep\nz\n# Second\nw\n", "t.md")
    assert [c.heading_path for c in doc.chunks] == [
        ["T", "A", "A1"],
        ["T", "B"],
        ["T", "B", "B-deep"],
        ["T", "Second"],
    ]


# --- front matter -----------------------------------------------------------

GOOD_FM = """---
title: Order pool
service: order-service
environment: test
version: 2.0
owner: team-orders
alerts: OrderServiceDBPoolSaturated
tags: [db, pool]
reviewed: 2026-01-02
runbook_id: 42
checks:
  - name: pool usage
    tool: query_metrics
    args: {query: 'sum(db_pool_in_use{service="{service}"})', type: range}
  - tool: pod_logs
    args: {name: "{service}-0", namespace: "{namespace}", tail_lines: 100}
  - tool: list_alerts
---
# Order pool

Body.
"""


def test_front_matter_good() -> None:
    doc = parse_runbook(GOOD_FM, "order/pool.md")
    meta = doc.meta
    assert meta.title == "Order pool"
    assert meta.service == "order-service"
    assert meta.environment == ["test"]
    assert meta.version == "2.0"
    assert meta.status == "active"
    assert meta.alerts == ["OrderServiceDBPoolSaturated"]
    assert meta.tags == ["db", "pool"]
    extra = meta.model_extra or {}
    assert extra["reviewed"] == "2026-01-02"
    assert extra["runbook_id"] == 42
    assert [c.tool for c in meta.checks] == ["query_metrics", "pod_logs", "list_alerts"]
    # placeholders are kept as written; they were only filled for validation
    assert meta.checks[0].args["query"] == 'sum(db_pool_in_use{service="{service}"})'
    assert meta.checks[1].args["namespace"] == "{namespace}"
    assert meta.checks[2].args == {}
    # front matter is not chunk text
    assert [c.text for c in doc.chunks] == ["Body."]


def test_front_matter_environment_list_and_status() -> None:
    doc = parse_runbook("---\nenvironment: [test, prod]\nstatus: Deprecated\n---\nx\n", "a.md")
    assert doc.meta.environment == ["test", "prod"]
    assert doc.meta.status == "deprecated"


@pytest.mark.parametrize(
    ("front", "line", "words"),
    [
        ("title: a\nenvironment: [test\nowner: x\n", None, "invalid YAML"),
        ("title: a\n  bad: indent\n", 3, "invalid YAML"),
        ("- just\n- a list\n", 1, "must be a mapping"),
        ("title: x\nstatus: retired\n", 3, "status must be one of"),
        ("title: x\nchecks: {tool: list_pods}\n", 3, "must be a list"),
        ("title: x\nenvironment: {a: 1}\n", 3, "`environment` must be"),
    ],
)
def test_front_matter_broken_names_file_and_line(front: str, line: int | None, words: str) -> None:
    with pytest.raises(InputError) as err:
        parse_runbook(f"---\n{front}---\n# T\n\ntext\n", "dir/bad.md")
    msg = str(err.value)
    assert msg.startswith("dir/bad.md:")
    assert words in msg
    if line is not None:
        assert msg.startswith(f"dir/bad.md:{line}:"), msg
    else:  # the YAML error line is somewhere in the front matter (lines 2-5)
        assert re.match(r"dir/bad\.md:[2-5]:", msg), msg


@pytest.mark.parametrize(
    ("check", "words"),
    [
        ("tool: delete_pod\n    args: {name: x}", "unknown tool 'delete_pod'"),
        ("tool: list_pods\n    args: [a, b]", "`args` must be a mapping"),
        ("tool: query_metrics\n    args: {type: range}", "invalid args for query_metrics: query"),
        ("tool: pod_logs\n    args: {name: x, tail_lines: 0}", "tail_lines"),
        ("tool: list_pods\n    args: {bogus: 1}", "bogus"),
        ("tool: list_pods\n    colour: red", "colour"),
    ],
)
def test_front_matter_checks_validated_with_index_and_line(check: str, words: str) -> None:
    text = (
        "---\ntitle: x\nchecks:\n  - tool: list_pods\n    args: {namespace: '{namespace}'}\n"
        f"  - name: second\n    {check}\n---\nbody\n"
    )
    with pytest.raises(InputError) as err:
        parse_runbook(text, "c.md")
    msg = str(err.value)
    assert msg.startswith("c.md:6: checks[1] (second)"), msg
    assert words in msg


# --- lead-ins, code, tables, lists ---------------------------------------------


def test_lead_in_kept_with_command_and_list() -> None:
    filler = "\n\n".join(f"Background sentence number {i} about the pool. " * 6 for i in range(6))
    text = (
        f"# Restart\n\n{filler}\n\nOnly in the test environment:\n\n"
        "```bash\nkubectl rollout restart deployment/order-service -n shop\n```\n\n"
        f"{filler}\n\nCheck these first\n\n- pods are Ready\n- no migration runs\n"
    )
    doc = parse_runbook(text, "r.md")
    restart = _chunk_with(doc, "kubectl rollout restart")
    assert "Only in the test environment:" in doc.chunks[restart].text
    ready = _chunk_with(doc, "- pods are Ready")
    assert "Check these first" in doc.chunks[ready].text


def test_lead_in_repeated_when_the_list_it_introduces_is_split() -> None:
    items = "\n".join(f"- {_words(20, f'item{i}x')}" for i in range(40))
    doc = parse_runbook(f"# T\n\nOnly in staging, run each step:\n\n{items}\n", "s.md")
    assert len(doc.chunks) > 2
    for chunk in doc.chunks:
        assert chunk.text.startswith("Only in staging, run each step:")
        assert chunk.tokens <= CHILD_MAX_TOKENS
    # no item is cut
    joined = "\n".join(c.text for c in doc.chunks)
    for i in range(40):
        assert joined.count(f"item{i}x0 ") == 1


def test_long_code_block_split_at_lines_with_fence_repeated() -> None:
    body = "\n".join(f"kubectl get pods -n shop-{i} -o wide" for i in range(200))
    doc = parse_runbook(f"# Cmds\n\n```bash title=x\n{body}\n```\n", "c.md")
    assert len(doc.chunks) > 3
    seen: list[str] = []
    for chunk in doc.chunks:
        lines = chunk.text.split("\n")
        assert lines[0] == "```bash title=x"
        assert lines[-1] == "```"
        assert chunk.kind == "code"
        assert chunk.tokens <= CHILD_MAX_TOKENS
        seen.extend(lines[1:-1])
    assert seen == body.split("\n")


def test_long_table_split_at_rows_with_header_repeated() -> None:
    header = "| environment | cluster | replicas |\n| --- | --- | ---: |"
    rows = [f"| env{i} | cluster-{i} | {i} |" for i in range(150)]
    doc = parse_runbook("# Envs\n\nThe table:\n\n" + header + "\n" + "\n".join(rows), "t.md")
    assert len(doc.chunks) > 2
    seen: list[str] = []
    for chunk in doc.chunks:
        assert chunk.text.startswith("The table:\n\n" + header + "\n")
        assert chunk.tokens <= CHILD_MAX_TOKENS
        seen.extend(chunk.text.split("\n")[4:])
    assert seen == rows


def test_single_line_longer_than_max_is_the_only_oversized_chunk() -> None:
    long_line = " ".join(f"arg{i}" for i in range(CHILD_MAX_TOKENS + 50))
    doc = parse_runbook(f"# X\n\n```sh\n{long_line}\nshort line\n```\n", "x.md")
    over = [c for c in doc.chunks if c.tokens > CHILD_MAX_TOKENS]
    assert len(over) == 1
    assert over[0].text == f"```sh\n{long_line}\n```"
    assert doc.chunks[-1].text == "```sh\nshort line\n```"


def test_long_paragraph_split_at_sentences() -> None:
    sentences = [f"Sentence {i} says {_words(12, f's{i}w')}." for i in range(60)]
    doc = parse_runbook("# P\n\n" + " ".join(sentences) + "\n", "p.md")
    assert len(doc.chunks) > 1
    for chunk in doc.chunks:
        assert chunk.tokens <= CHILD_MAX_TOKENS
        assert chunk.text.startswith("Sentence ") and chunk.text.endswith(".")


def test_long_list_item_with_code_is_cut_along_its_blocks() -> None:
    code = "\n".join(f"   echo step {i} of the long procedure" for i in range(120))
    text = f"# L\n\n1. Prepare:\n\n   ```bash\n{code}\n   ```\n\n2. Then verify.\n"
    doc = parse_runbook(text, "l.md")
    assert len(doc.chunks) > 1
    for chunk in doc.chunks:
        assert len(FENCE_RE.findall(chunk.text)) % 2 == 0, chunk.text
        assert chunk.tokens <= CHILD_MAX_TOKENS
    assert "2. Then verify." in doc.chunks[-1].text


def test_small_blocks_are_packed_and_chunk_kinds() -> None:
    doc = parse_runbook(
        "# K\n\nA paragraph.\n\n- a\n- b\n\n```sh\nls\n```\n\n| a |\n| - |\n| 1 |\n", "k.md"
    )
    assert len(doc.chunks) == 1
    assert doc.chunks[0].kind == "mixed"
    only_code = parse_runbook("```sh\nls\n```\n", "k.md")
    assert only_code.chunks[0].kind == "code"


def test_document_without_headings_split_at_block_boundaries() -> None:
    paras = [f"Paragraph {i}. " + " ".join(f"p{i}w{j}" for j in range(90)) + "." for i in range(8)]
    text = "\n\n".join(paras) + "\n\n```sh\nkubectl get pods\n```\n"
    doc = parse_runbook(text, "ops/no-headings.md")
    assert len(doc.chunks) >= 3
    assert all(c.heading_path == ["no-headings"] for c in doc.chunks)
    for chunk in doc.chunks:
        # every chunk starts at a paragraph start or at the code fence
        assert chunk.text.startswith(("Paragraph ", "```sh"))
        assert chunk.tokens <= CHILD_MAX_TOKENS


def test_hidden_lines_and_crlf_are_kept() -> None:
    text = "# R\r\n\r\nSee [the docs][d].\r\n\r\n[d]: https://example.invalid/docs\r\n"
    doc = parse_runbook(text, "r.md")
    joined = "\n".join(c.text for c in doc.chunks)
    assert "[d]: https://example.invalid/docs" in joined
    assert "\r" not in joined


# --- sections (parents) and ids ------------------------------------------------


def test_parents_are_capped_contiguous_runs_of_children() -> None:
    paras = "\n\n".join(f"Para {i}. " + _words(120, f"q{i}w") + "." for i in range(30))
    doc = parse_runbook(f"# Big\n\n{paras}\n", "big.md")
    assert len(doc.sections) > 1
    by_parent: dict[str, list[int]] = {}
    for chunk in doc.chunks:
        by_parent.setdefault(chunk.parent_id, []).append(chunk.ordinal)
    for section in doc.sections:
        ords = by_parent[section.id]
        assert ords == list(range(ords[0], ords[-1] + 1))
        assert count_tokens(section.text) <= PARENT_MAX_TOKENS
        assert section.text == "\n\n".join(doc.chunks[o].text for o in ords)


def test_ids_are_stable_unique_and_versioned() -> None:
    text = GOOD_FM + "\n## More\n\nSecond section.\n"
    a = parse_runbook(text, "order/pool.md")
    b = parse_runbook(text, "order/pool.md")
    assert [c.id for c in a.chunks] == [c.id for c in b.chunks]
    assert [s.id for s in a.sections] == [s.id for s in b.sections]
    ids = [c.id for c in a.chunks] + [s.id for s in a.sections]
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 16 for i in ids)
    other = parse_runbook(text, "order/other.md")
    assert not {c.id for c in other.chunks} & {c.id for c in a.chunks}
    changed = parse_runbook(text + "\nEdit.\n", "order/pool.md")
    assert changed.doc_version != a.doc_version
    assert changed.chunks[0].id != a.chunks[0].id
    assert CHUNKING_VERSION
    assert [c.ordinal for c in a.chunks] == list(range(len(a.chunks)))


# --- files ------------------------------------------------------------------


def test_load_runbook_relative_source_and_bom(tmp_path: Path) -> None:
    (tmp_path / "svc").mkdir()
    path = tmp_path / "svc" / "a.md"
    path.write_bytes(b"\xef\xbb\xbf---\ntitle: With BOM\n---\n# H\n\nbody\n")
    doc = load_runbook(path, tmp_path)
    assert doc.source == "svc/a.md"
    assert doc.title == "With BOM"
    assert [c.text for c in doc.chunks] == ["body"]
    assert len(doc.doc_version) == 16


@pytest.mark.parametrize("content", [b"", b"   \n\n\t\n"])
def test_load_runbook_empty_is_a_warning(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "empty.md"
    path.write_bytes(content)
    doc = load_runbook(path, tmp_path)
    assert doc.chunks == [] and doc.sections == []
    assert doc.warnings and "empty.md" in doc.warnings[0]


def test_load_runbook_front_matter_only_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "fm.md"
    path.write_text("---\ntitle: only meta\n---\n# Heading\n", encoding="utf-8")
    doc = load_runbook(path, tmp_path)
    assert doc.chunks == []
    assert doc.meta.title == "only meta"
    assert "no content" in doc.warnings[0]


def test_load_runbook_binary(tmp_path: Path) -> None:
    path = tmp_path / "img.md"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(InputError, match=r"img\.md: binary file"):
        load_runbook(path, tmp_path)


def test_load_runbook_not_utf8_names_line_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "gbk.md"
    path.write_bytes(b"# Title\n\nline two\n" + "重启服务".encode("gbk") + b"\n")
    with pytest.raises(InputError) as err:
        load_runbook(path, tmp_path)
    msg = str(err.value)
    assert msg.startswith("gbk.md:4: not valid UTF-8")
    assert "offset 18" in msg  # len(b"# Title\n\nline two\n")


def test_five_megabyte_file_is_parsed_in_linear_time(repo_root: Path) -> None:
    base = (repo_root / "runbooks" / "order-service" / "db-connection-pool.md").read_text()
    body = base.split("---\n", 2)[2]
    text = body * (5_000_000 // len(body.encode()) + 1)
    started = time.perf_counter()
    doc = parse_runbook(text, "big.md")
    seconds = time.perf_counter() - started
    size_mb = len(text.encode()) / 1e6
    print(f"\n5 MB runbook: {size_mb:.1f} MB, {len(doc.chunks)} chunks, {seconds:.2f} s")
    assert len(text.encode()) >= 5_000_000
    assert len(doc.chunks) > 1000
    assert max(c.tokens for c in doc.chunks) <= CHILD_MAX_TOKENS


def test_every_repository_runbook_parses(repo_root: Path) -> None:
    root = repo_root / "runbooks"
    files = sorted(root.rglob("*.md"))
    assert files, "runbooks/ is empty"
    for path in files:
        doc = load_runbook(path, root)
        assert doc.chunks, path
        for chunk in doc.chunks:
            assert chunk.heading_path[0] == doc.title
            assert len(FENCE_RE.findall(chunk.text)) % 2 == 0, (path, chunk.text)
            assert chunk.tokens <= CHILD_MAX_TOKENS, (path, chunk.ordinal)


def test_packing_is_balanced_not_greedy() -> None:
    # ~330 tokens of small paragraphs: two chunks of about half each, not 300 + 30
    paras = "\n\n".join(f"Step {i} " + _words(20, f"b{i}w") + "." for i in range(15))
    doc = parse_runbook(f"# B\n\n{paras}\n", "b.md")
    sizes = [c.tokens for c in doc.chunks]
    assert len(sizes) == 2
    assert min(sizes) >= 120, sizes


def test_lead_in_stays_with_an_indivisible_code_line() -> None:
    long_line = " ".join(f"--flag{i}" for i in range(CHILD_MAX_TOKENS // 2))
    doc = parse_runbook(f"# X\n\nOnly in prod, with approval:\n\n```sh\n{long_line}\n```\n", "x.md")
    assert len(doc.chunks) == 1
    assert doc.chunks[0].text.startswith("Only in prod, with approval:\n\n```sh\n--flag0")


def test_unclosed_front_matter_is_an_error_but_a_leading_rule_is_not() -> None:
    with pytest.raises(InputError, match=r"^u\.md:1: front matter .* never closed"):
        parse_runbook("---\ntitle: x\nservice: y\n\n# H\n\ntext\n", "u.md")
    doc = parse_runbook("---\n\nJust a rule, then text.\n", "r.md")
    assert [c.text for c in doc.chunks] == ["Just a rule, then text."]
