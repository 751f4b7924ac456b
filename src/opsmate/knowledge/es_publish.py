"""Publishing the team runbook index to Elasticsearch: ``opsmate index PATH --to URL``
with ``knowledge.backend: elasticsearch``.

The same two steps as the Chroma backend (:mod:`.chroma_publish`), on Elasticsearch's own
primitives: generation N+1 is a new index ``<collection>-g<N+1>`` (created with its
mapping and ``_meta``, filled with ``_bulk``, refreshed, its ``_count`` checked), then
one ``_aliases`` request moves the alias from N to N+1 - an atomic switch in
Elasticsearch, so a search sees one generation or the other. Vectors of unchanged chunks
are read back from generation N (``_mget``); indices beyond ``keep_generations`` are
deleted after the switch.
"""

from __future__ import annotations

import contextlib
import re
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from opsmate.errors import IndexLockedError, InputError, KnowledgeIndexError
from opsmate.knowledge.chroma_publish import PublishSummary, domain_counts
from opsmate.knowledge.corpus import DocInfo
from opsmate.knowledge.es_index import (
    FORMAT,
    GENERATION_KIND,
    es_call,
    es_client,
    mappings,
    published_index,
)
from opsmate.knowledge.fields import chunk_fields
from opsmate.knowledge.records import (
    ChunkRecord,
    Progress,
    embed_records,
    read_records,
    records_digest,
)

if TYPE_CHECKING:
    from opsmate.config import EmbeddingConfig, Settings
    from opsmate.knowledge.sources import SourceFile

BULK = 500


def es_document(r: ChunkRecord, vector: np.ndarray, memo: dict[str, list[str]]) -> dict[str, Any]:
    """The Elasticsearch document of one chunk (see :mod:`.es_index` for the fields)."""
    doc = DocInfo(r.source, r.doc_version, r.title, r.meta)
    f = chunk_fields(r.terms, r.heading_path, r.meta, memo)
    return {
        "body": " ".join(f["body"]), "heading": " ".join(f["heading"]),
        "meta": " ".join(f["meta"]), "symptom": " ".join(f["symptom"]),
        "domains": r.domains, "service": doc.service, "status": doc.status,
        "environments": sorted(doc.environments), "env_all": not doc.environments,
        "source": r.source, "doc_version": r.doc_version, "parent_id": r.parent_id,
        "seq": r.seq, "embedding": [float(x) for x in vector],
        "stored": {"text": r.text, "parent_text": r.parent_text,
                   "heading_path": r.heading_path, "meta": r.meta, "title": r.title},
    }  # fmt: skip


def publish_es(
    files: list[SourceFile],
    settings: Settings,
    *,
    url: str,
    embedding: EmbeddingConfig,
    progress: Progress | None = None,
) -> PublishSummary:
    """Write the next generation and switch the alias to it (see the module docstring)."""
    import elasticsearch as es

    from opsmate.knowledge.embeddings import config_to_spec
    from opsmate.knowledge.store import strategy_version

    t0 = time.perf_counter()
    k = settings.knowledge
    alias = k.collection
    client = es_client(k, url)
    s = PublishSummary(backend="elasticsearch", server=url, collection=alias)
    try:
        current = published_index(client, url, alias)
        meta_now = current[1] if current else {}
        s.previous_generation = int(meta_now["generation"]) if current else None
        found = read_records(files, progress)
        s.errors += found.errors
        s.warnings += found.warnings
        if not found.records:
            raise InputError("nothing to publish: no runbook could be read", hint="check the paths")
        records = found.records

        def reuse(model_id: str, ids: list[str]) -> dict[str, np.ndarray]:
            if current is None or meta_now.get("model_id") != model_id:
                return {}
            out: dict[str, np.ndarray] = {}
            for start in range(0, len(ids), BULK):
                got = es_call(url, client.mget, index=current[0], ids=ids[start : start + BULK],
                              source_includes=["embedding"])  # fmt: skip
                for d in got["docs"]:
                    if d.get("found"):
                        out[d["_id"]] = np.asarray(d["_source"]["embedding"], dtype=np.float32)
            return out

        emb = embed_records(records, embedding, reuse, progress)
        s.reused, s.embedded, s.embedding_model = emb.reused, emb.embedded, emb.model_id
        s.documents, s.chunks, s.domains = found.documents, len(records), domain_counts(records)
        digest = records_digest(records, emb.model_id, strategy_version())
        if current is not None and meta_now.get("digest") == digest:
            s.generation = int(meta_now["generation"])
            return s
        gen_re = re.compile(rf"^{re.escape(alias)}-g(\d+)$")
        existing = _generations(client, url, alias, gen_re)
        gen = max([s.previous_generation or 0, *existing]) + 1
        name = f"{alias}-g{gen}"
        meta = {"opsmate": GENERATION_KIND, "format": FORMAT, "generation": gen,
                "model_id": emb.model_id, "embedding_spec": config_to_spec(embedding),
                "strategy": strategy_version(), "digest": digest, "chunks": len(records),
                "documents": found.documents, "started_at": time.time()}  # fmt: skip
        try:
            es_call(url, client.indices.create, index=name,
                    mappings=mappings(int(emb.matrix.shape[1]), meta))  # fmt: skip
        except KnowledgeIndexError as exc:
            if "already_exists" in exc.message or "already exists" in exc.message:
                raise IndexLockedError(
                    f"another `opsmate index --to` is writing {name} on {url}",
                    hint="run publishes one at a time (a CI concurrency group)",
                ) from exc
            raise
        try:
            _bulk(client, url, name, records, emb.matrix, progress)
            es_call(url, client.indices.refresh, index=name)
            held = int(es_call(url, client.count, index=name)["count"])
            if held != len(records):
                raise InputError(f"{name} holds {held} of {len(records)} chunks after writing")
            now = published_index(client, url, alias)
            if now is not None and int(now[1]["generation"]) >= gen:
                raise IndexLockedError(
                    f"generation {now[1]['generation']} was published on {url} while "
                    f"generation {gen} was built; this build is discarded",
                    hint="run publishes one at a time (a CI concurrency group)",
                )
            actions: list[dict[str, Any]] = [{"add": {"index": name, "alias": alias}}]
            if now is not None:
                actions.insert(0, {"remove": {"index": now[0], "alias": alias}})
            es_call(url, client.indices.update_aliases, actions=actions)
        except BaseException:
            with contextlib.suppress(es.NotFoundError, KnowledgeIndexError):
                es_call(url, client.indices.delete, index=name)
            raise
        s.generation, s.published = gen, True
        keep = sorted((g for g in existing if g < gen), reverse=True)[: k.keep_generations - 1]
        for g in sorted(g for g in existing if g < gen and g not in keep):
            try:
                es_call(url, client.indices.delete, index=f"{alias}-g{g}")
                s.removed_generations.append(g)
            except (es.NotFoundError, KnowledgeIndexError):
                pass
    finally:
        client.close()
        s.seconds = round(time.perf_counter() - t0, 3)
    return s


def _generations(client: Any, url: str, alias: str, gen_re: re.Pattern[str]) -> list[int]:
    import elasticsearch as es

    try:
        got = es_call(url, client.indices.get, index=f"{alias}-g*")
    except es.NotFoundError:
        return []
    return [int(m.group(1)) for n in got if (m := gen_re.match(n))]


def _bulk(
    client: Any, url: str, index: str, records: list[ChunkRecord], matrix: np.ndarray,
    progress: Progress | None,
) -> None:  # fmt: skip
    memo: dict[str, list[str]] = {}
    for start in range(0, len(records), BULK):
        ops: list[dict[str, Any]] = []
        for i, r in enumerate(records[start : start + BULK], start=start):
            ops.append({"index": {"_index": index, "_id": r.id}})
            ops.append(es_document(r, matrix[i], memo))
        res = es_call(url, client.bulk, operations=ops)
        if res.get("errors"):
            bad: dict[str, Any] = next(
                (it["index"] for it in res["items"] if it.get("index", {}).get("error")), {}
            )
            raise KnowledgeIndexError(
                f"Elasticsearch at {url} refused chunks of {index}: {bad.get('error')}"
            )
        if progress:
            progress("publish", min(start + BULK, len(records)), len(records))
