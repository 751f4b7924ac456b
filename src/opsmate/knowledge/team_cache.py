"""The reader's local copy of one published generation of a shared runbook index.

A shared server holds the vectors; the lexical side (BM25 and BM25F, which need every
chunk's terms and the corpus statistics) is built on the reader from the generation's
records. Downloading and building costs seconds at 10k chunks, so the result is kept in
``<cache dir>/team-index/<server key>/<generation key>/``:

    key.json       what it was built from (server, collection, generation number and
                   collection id, content digest, domains, this opsmate's analyzer)
    records.json   the records (texts, parents, front matter, terms) of the allowed domains
    lexical/       BM25 (bm25s files), fields/ (BM25F)

The folder name is a hash of the key, so a new publish (or another domain set, or another
opsmate version) can never be served from an older copy: a key that does not match the
server's current pointer is never read, and :func:`load` also refuses a folder whose
``key.json`` differs from the key asked for (a damaged or foreign copy). Writes go to a
temporary folder renamed into place, so a reader never sees half a copy; older copies of
the same server are pruned (the newest :data:`KEEP` stay).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from opsmate import paths
from opsmate.knowledge.records import ChunkRecord, record_from_json

ROOT = "team-index"
KEEP = 3


def server_dir(server_key: dict[str, Any]) -> Path:
    """The cache folder of one server + tenant + database + collection."""
    raw = json.dumps(server_key, sort_keys=True).encode()
    return paths.cache_dir() / ROOT / hashlib.sha256(raw).hexdigest()[:16]


def folder_for(server_key: dict[str, Any], key: dict[str, Any]) -> Path:
    raw = json.dumps(key, sort_keys=True).encode()
    return server_dir(server_key) / hashlib.sha256(raw).hexdigest()[:20]


def load(server_key: dict[str, Any], key: dict[str, Any]) -> tuple[list[ChunkRecord], Any] | None:
    """(records, (lexical, fields)) of the copy for ``key``, or None when there is none
    that matches exactly (then the caller downloads and :func:`save` s a fresh one)."""
    from opsmate.knowledge.fields import FieldIndex
    from opsmate.knowledge.lexical import load_lexical

    folder = folder_for(server_key, key)
    try:
        if json.loads((folder / "key.json").read_text("utf-8")) != key:
            return None
        import orjson

        raw = orjson.loads((folder / "records.json").read_bytes())
        records = [record_from_json(r) for r in raw]
        lexical = load_lexical(folder / "lexical")
        fields = FieldIndex.load(folder / "fields")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if fields is None or lexical.n_docs != len(records):
        return None
    os.utime(folder)  # recently used: pruned last
    return records, (lexical, fields)


def save(
    server_key: dict[str, Any], key: dict[str, Any], records: list[ChunkRecord], corpus: Any
) -> Path | None:
    """Write the copy for ``key`` (records + the corpus's BM25 and BM25F); None when the
    cache cannot be written (searching goes on from memory)."""
    import orjson

    folder = folder_for(server_key, key)
    tmp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
    try:
        tmp.mkdir(parents=True, exist_ok=True)
        (tmp / "records.json").write_bytes(orjson.dumps([r.to_json() for r in records]))
        corpus.lexical.save(tmp / "lexical")
        corpus.fields.save(tmp / "fields")
        (tmp / "key.json").write_text(json.dumps(key, sort_keys=True), "utf-8")
        try:
            os.replace(tmp, folder)
        except OSError:  # another reader wrote the same copy first: keep theirs
            shutil.rmtree(tmp, ignore_errors=True)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    prune(server_key)
    return folder


def prune(server_key: dict[str, Any], keep: int = KEEP) -> None:
    """Remove all but the ``keep`` most recently used copies (and stale temp folders)."""
    base = server_dir(server_key)
    try:
        entries = list(base.iterdir())
    except OSError:
        return
    now = time.time()
    for p in entries:
        if ".tmp-" in p.name and now - p.stat().st_mtime > 3600:
            shutil.rmtree(p, ignore_errors=True)
    done = sorted(
        (p for p in entries if p.is_dir() and ".tmp-" not in p.name),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for p in done[keep:]:
        shutil.rmtree(p, ignore_errors=True)
