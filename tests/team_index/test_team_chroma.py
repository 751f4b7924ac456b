"""The team index on a real Chroma server (`chroma run`): publish with `opsmate index --to`,
versioned generations behind one pointer, the reader's BM25 cache, team domains."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from teams import PAYMENTS, PLATFORM, QUERIES, TEAM_RUNBOOKS, only, write_tree

from opsmate.config import EmbeddingConfig, Settings
from opsmate.errors import IndexLockedError, KnowledgeIndexError, SourceUnreachableError
from opsmate.knowledge import team_cache
from opsmate.knowledge.chroma_http import ChromaHTTP
from opsmate.knowledge.chroma_publish import Publisher, PublishSummary, publish
from opsmate.knowledge.chroma_server import ServerIndex, read_pointer
from opsmate.knowledge.index import KnowledgeIndex
from opsmate.knowledge.retrieve import open_retriever
from opsmate.knowledge.sources import discover

pytestmark = pytest.mark.needs_minilm
OPSMATE = Path(sys.executable).parent / "opsmate"


def cli(*args: str, config: Path) -> tuple[int, Any, str]:
    proc = subprocess.run(
        [str(OPSMATE), *args, "--config", str(config)],
        capture_output=True, text=True, timeout=300, env=os.environ.copy(),
    )  # fmt: skip
    data = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else None
    return proc.returncode, data, proc.stderr


def team_settings(url: str, collection: str, domains: list[str] | None, **kw: Any) -> Settings:
    knowledge = {"backend": "chroma-server", "url": url, "collection": collection,
                 "domains": domains, **kw}  # fmt: skip
    return Settings(knowledge=knowledge)


def write_config(path: Path, url: str, collection: str, domains: list[str] | None) -> Path:
    lines = ["knowledge:", "  backend: chroma-server", f"  url: {url}",
             f"  collection: {collection}"]  # fmt: skip
    if domains is not None:
        lines.append(f"  domains: [{', '.join(domains)}]")
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def signature(resp: Any) -> list[tuple[Any, ...]]:
    return [(h.chunk_id, h.source, round(h.score, 4), h.bm25_rank, h.vector_rank)
            for h in resp.hits]  # fmt: skip


def publish_tree(root: Path, url: str, collection: str) -> PublishSummary:
    files, _ = discover([root])
    settings = team_settings(url, collection, None)
    return publish(files, settings, url=url, embedding=EmbeddingConfig())


@pytest.fixture(scope="module")
def published(module_env: Path, team_root: Path, chroma_url: str) -> dict[str, Any]:
    """The two teams' runbooks published once with the CLI, and one-team embedded indexes."""
    collection = f"team-{uuid.uuid4().hex[:8]}"
    config = write_config(module_env / "publisher.yaml", chroma_url, collection, None)
    rc, summary, err = cli("index", str(team_root), "--to", chroma_url, "--json", config=config)
    assert rc == 0, err
    alone = {}
    for name, files in (("payments", PAYMENTS), ("platform", PLATFORM)):
        root = write_tree(module_env / f"only-{name}", only(files))
        found, _ = discover([root])
        KnowledgeIndex(module_env / f"idx-{name}").update(found, embedding=EmbeddingConfig())
        alone[name] = module_env / f"idx-{name}"
    return {"collection": collection, "summary": summary, "alone": alone}


def test_index_to_publishes_a_generation_with_its_domains(
    published: dict[str, Any], chroma_url: str
) -> None:
    s = published["summary"]
    assert s["backend"] == "chroma-server" and s["published"] is True
    assert s["generation"] == 1 and s["previous_generation"] is None
    assert s["documents"] == len(TEAM_RUNBOOKS) and s["chunks"] > len(TEAM_RUNBOOKS)
    assert s["domains"] == {"payments": 4, "platform": 3, "security": 1, "shared": 1}
    api = ChromaHTTP(Settings().knowledge, chroma_url)
    _pid, ptr = read_pointer(api, published["collection"])
    assert ptr is not None and ptr.generation == 1 and ptr.chunks == s["chunks"]
    assert api.count(ptr.generation_id) == s["chunks"]


def test_two_users_on_the_server_get_disjoint_results(
    published: dict[str, Any], chroma_url: str
) -> None:
    pay = open_retriever(None, team_settings(chroma_url, published["collection"], ["payments"]))
    plat = open_retriever(None, team_settings(chroma_url, published["collection"], ["platform"]))
    got_pay: set[str] = set()
    got_plat: set[str] = set()
    for q in QUERIES:
        got_pay |= {h.source for h in pay.search(q, top_k=10).hits}
        got_plat |= {h.source for h in plat.search(q, top_k=10).hits}
    assert got_pay and got_plat and got_pay <= PAYMENTS and got_plat <= PLATFORM


def test_a_server_user_answers_as_the_embedded_index_of_its_domain_alone(
    published: dict[str, Any], chroma_url: str
) -> None:
    """Same hybrid ranking as the embedded index: BM25 built on the reader from the
    server's records, kNN on the server with the domain clause in its where."""
    for team in ("payments", "platform"):
        server = open_retriever(None, team_settings(chroma_url, published["collection"], [team]))
        alone = open_retriever(published["alone"][team], Settings())
        for q in [*QUERIES, "mongodb replica set election"]:
            for mode in ("hybrid", "bm25", "vector"):
                a = server.search(q, top_k=5, mode=mode)
                b = alone.search(q, top_k=5, mode=mode)
                assert signature(a) == signature(b), (team, q, mode)
                assert a.low_evidence == b.low_evidence and a.mode == b.mode == mode


def test_search_cli_reads_the_team_index(
    published: dict[str, Any], chroma_url: str, tmp_path: Path
) -> None:
    config = write_config(tmp_path / "c.yaml", chroma_url, published["collection"], ["platform"])
    rc, out, err = cli("search", "too many clients already", "--json", config=config)
    assert rc == 0, err
    assert out["hits"] and {h["source"] for h in out["hits"]} <= PLATFORM
    assert out["hits"][0]["source"] == "platform/postgres-max-connections.md"
    assert out["hits"][0]["metadata"]["domains"] == []  # folder domain: not in front matter
    # a second process reads the generation from the local cache, not the server
    index = ServerIndex(team_settings(chroma_url, published["collection"], ["platform"]))
    index.corpus()
    assert index.synced_from_cache


def test_readers_see_the_old_generation_until_the_pointer_flips(
    module_env: Path, chroma_url: str, tmp_path: Path
) -> None:
    collection = f"flip-{uuid.uuid4().hex[:8]}"
    root = write_tree(tmp_path / "rb", only(PLATFORM))
    first = publish_tree(root, chroma_url, collection)
    assert first.published and first.generation == 1
    settings = team_settings(chroma_url, collection, None, refresh_seconds=0)
    reader = open_retriever(None, settings)
    query = "Scale CoreDNS up and enable NodeLocal DNSCache"
    assert "NodeLocal" in reader.search(query, top_k=1).hits[0].parent_text

    dns = root / "platform/dns-failures.md"
    dns.write_text(dns.read_text().replace("NodeLocal DNSCache", "the ndots:2 option"))
    pub = Publisher(settings)
    summary = PublishSummary()
    files, _ = discover([root])
    staged = pub.stage(files, EmbeddingConfig(), summary)
    assert summary.generation == 2 and summary.reused > 0  # unchanged chunks not re-embedded
    # written, not published: every reader, old or new, is still on generation 1
    for r in (reader, open_retriever(None, settings)):
        assert "NodeLocal" in r.search(query, top_k=1).hits[0].parent_text
    pub.flip(staged, summary)
    assert summary.published
    assert "ndots:2" in reader.search(query, top_k=1).hits[0].parent_text  # same process

    # unchanged content publishes nothing; a third generation removes the first
    again = publish_tree(root, chroma_url, collection)
    assert not again.published and again.generation == 2
    dns.write_text(dns.read_text() + "\nCheck the upstream resolvers too.\n")
    third = publish_tree(root, chroma_url, collection)
    assert third.generation == 3 and third.removed_generations == [1]
    names = {c.name for c in ChromaHTTP(settings.knowledge).list_collections()}
    assert {f"{collection}-g2", f"{collection}-g3"} <= names
    assert f"{collection}-g1" not in names


def test_a_build_overtaken_by_a_newer_publish_is_discarded(
    module_env: Path, chroma_url: str, tmp_path: Path
) -> None:
    collection = f"race-{uuid.uuid4().hex[:8]}"
    root = write_tree(tmp_path / "rb", only(PAYMENTS))
    publish_tree(root, chroma_url, collection)
    settings = team_settings(chroma_url, collection, None)
    (root / "payments/card-declines.md").write_text("# Card declines\n\nCall the acquirer.\n")
    slow = Publisher(settings)
    files, _ = discover([root])
    staged = slow.stage(files, EmbeddingConfig(), PublishSummary())  # generation 2
    (root / "payments/refunds-stuck.md").write_text("# Refunds\n\nReplay the webhooks.\n")
    fast = publish_tree(root, chroma_url, collection)  # generation 3, published first
    assert fast.generation == 3 and fast.published
    with pytest.raises(IndexLockedError, match="generation 3 was published"):
        slow.flip(staged, PublishSummary())
    _pid, ptr = read_pointer(ChromaHTTP(settings.knowledge), collection)
    assert ptr is not None and ptr.generation == 3


def test_a_cached_copy_that_does_not_match_is_refused(
    published: dict[str, Any], chroma_url: str
) -> None:
    settings = team_settings(chroma_url, published["collection"], ["payments"])
    index = ServerIndex(settings)
    index.corpus()
    assert index.pointer is not None
    key_dir = team_cache.server_dir(index.server_key)
    copies = [p for p in key_dir.iterdir() if (p / "key.json").is_file()]
    assert copies
    for p in copies:  # damage every copy's key: none may be used
        data = json.loads((p / "key.json").read_text())
        data["generation"] = 999
        (p / "key.json").write_text(json.dumps(data))
    again = ServerIndex(settings)
    corpus = again.corpus()
    assert not again.synced_from_cache and corpus.visible_count == index.corpus().visible_count


def test_an_unreachable_server_is_exit_3_naming_it(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.yaml", "http://127.0.0.1:9", "opsmate-runbooks", None)
    rc, _out, err = cli("search", "disk full", "--json", config=config)
    assert rc == 3 and "http://127.0.0.1:9" in err
    with pytest.raises(SourceUnreachableError):
        open_retriever(None, team_settings("http://127.0.0.1:9", "opsmate-runbooks", None))


def test_nothing_published_yet_says_how_to_publish(chroma_url: str) -> None:
    settings = team_settings(chroma_url, f"none-{uuid.uuid4().hex[:8]}", None)
    with pytest.raises(KnowledgeIndexError, match="opsmate index RUNBOOK_DIR --to"):
        open_retriever(None, settings)


def test_a_reader_whose_pointer_read_fails_keeps_its_generation_and_says_so(
    published: dict[str, Any], chroma_url: str
) -> None:
    settings = team_settings(chroma_url, published["collection"], ["payments"], refresh_seconds=0)
    r = open_retriever(None, settings)
    index = r._corpus.__self__  # type: ignore[union-attr]  # the ServerIndex behind it
    before = r.search("refunds pending for hours", top_k=3)
    index.api = ChromaHTTP(settings.knowledge, "http://127.0.0.1:9")  # the pointer: unreachable
    after = r.search("refunds pending for hours", top_k=3)
    assert signature(after) == signature(before)
    assert any("pointer could not be re-read" in w for w in after.warnings)


def test_to_and_index_dir_together_are_a_usage_error(tmp_path: Path) -> None:
    from opsmate.commands.index import run_index
    from opsmate.errors import UsageError

    with pytest.raises(UsageError, match="give one"):
        run_index(paths=[tmp_path], index_dir=tmp_path / "idx", json_out=True, embedding=None,
                  config_path=None, to="http://127.0.0.1:9")  # fmt: skip
