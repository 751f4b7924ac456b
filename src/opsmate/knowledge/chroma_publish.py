"""Publishing the team runbook index to a Chroma server: ``opsmate index PATH --to URL``.

A publish is two steps, so readers never see a half-written index:

1. :meth:`Publisher.stage` writes generation N+1 as a new collection ``<collection>-g<N+1>``
   (every chunk: vector, text, metadata - :mod:`.chroma_server`), then checks the server
   holds all of it. Readers are still on generation N: nothing points at N+1 yet. Vectors
   of chunks already in generation N (same chunk id, same model) are copied from it, so
   an edit re-embeds only what changed; the rest come from the local embedding cache or
   the model.
2. :meth:`Publisher.flip` replaces the pointer collection's metadata - one write on the
   server - to name N+1. A reader that re-reads the pointer moves to N+1; one in the middle
   of a query finishes it on N, which is kept (``knowledge.keep_generations``, default 2:
   the published one and the one before); older generations are removed after the flip.

Content that did not change (same chunk ids, domains, model and analyzer as the published
generation: :func:`~opsmate.knowledge.records.records_digest`) publishes nothing.

Two CI jobs publishing at once: the second to create the same generation number gets
:class:`IndexLockedError`; a build whose number was overtaken by a newer publish before its
flip is discarded rather than published over it. The flip is not a compare-and-swap on the
server, so run publishes one at a time (a CI concurrency group).
"""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from opsmate.errors import IndexLockedError, InputError
from opsmate.knowledge.chroma_http import AlreadyExists, ChromaHTTP, Collection, NotFound
from opsmate.knowledge.chroma_server import (
    FORMAT,
    GENERATION_KIND,
    PAGE,
    POINTER_KIND,
    Pointer,
    read_pointer,
    record_metadata,
)
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

STALE_BUILD_SECONDS = 3600.0  # an unpublished generation older than this was abandoned


@dataclass
class PublishSummary:
    """What ``opsmate index --to URL --json`` prints."""

    backend: str = "chroma-server"
    server: str = ""
    collection: str = ""
    generation: int = 0
    previous_generation: int | None = None
    published: bool = False  # false: the content equals the published generation
    documents: int = 0
    chunks: int = 0
    reused: int = 0  # vectors copied from the previous generation
    embedded: int = 0  # vectors computed now (the rest came from the embedding cache)
    seconds: float = 0.0
    embedding_model: str | None = None
    domains: dict[str, int] = field(default_factory=dict)  # documents per domain
    removed_generations: list[int] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Staged:
    """A generation written to the server and not yet published."""

    collection: Collection | None
    pointer: Pointer | None  # what the flip writes (None: nothing to publish)
    previous: Pointer | None


class Publisher:
    """Writes generations of the team index to one Chroma server."""

    def __init__(self, settings: Settings, url: str | None = None) -> None:
        self.settings = settings
        self.name = settings.knowledge.collection
        self.api = ChromaHTTP(settings.knowledge, url)
        self._gen_re = re.compile(rf"^{re.escape(self.name)}-g(\d+)$")

    def stage(
        self,
        files: list[SourceFile],
        embedding: EmbeddingConfig,
        summary: PublishSummary,
        progress: Progress | None = None,
    ) -> Staged:
        """Step 1: write the next generation (see the module docstring)."""
        from opsmate.knowledge.embeddings import config_to_spec
        from opsmate.knowledge.store import strategy_version

        pointer_id, current = read_pointer(self.api, self.name)
        summary.previous_generation = current.generation if current else None
        found = read_records(files, progress)
        summary.errors += found.errors
        summary.warnings += found.warnings
        if not found.records:
            raise InputError("nothing to publish: no runbook could be read", hint="check the paths")
        records = found.records
        emb = embed_records(records, embedding, self._reuser(current), progress)
        summary.reused, summary.embedded = emb.reused, emb.embedded
        summary.embedding_model = emb.model_id
        summary.documents, summary.chunks = found.documents, len(records)
        summary.domains = domain_counts(records)
        digest = records_digest(records, emb.model_id, strategy_version())
        if current is not None and current.digest == digest:
            summary.generation = current.generation
            return Staged(None, None, current)
        if pointer_id is None:
            pointer_id = self.api.create_collection(
                self.name, {"opsmate": POINTER_KIND, "format": FORMAT}, get_or_create=True
            ).id
        gen = max([current.generation if current else 0, *self._generations()]) + 1
        name = f"{self.name}-g{gen}"
        meta = {"opsmate": GENERATION_KIND, "generation": gen, "started_at": time.time(),
                "model_id": emb.model_id}  # fmt: skip
        try:
            col = self.api.create_collection(name, meta)
        except AlreadyExists as exc:
            raise IndexLockedError(
                f"another `opsmate index --to` is writing generation {gen} ({name}) on "
                f"{self.api.url}",
                hint="run publishes one at a time (a CI concurrency group); an abandoned "
                "build is removed after an hour",
            ) from exc
        try:
            self._write(col, records, emb.matrix, progress)
            held = self.api.count(col.id)
            if held != len(records):
                raise InputError(f"{name} holds {held} of {len(records)} chunks after writing")
        except BaseException:
            self._drop(name)
            raise
        summary.generation = gen
        pointer = Pointer(
            collection_id=pointer_id, generation=gen, name=name, generation_id=col.id,
            model_id=emb.model_id, embedding_spec=config_to_spec(embedding),
            strategy=strategy_version(), digest=digest, chunks=len(records),
            documents=found.documents, published_at=0.0,
        )  # fmt: skip
        return Staged(col, pointer, current)

    def flip(self, staged: Staged, summary: PublishSummary) -> None:
        """Step 2: point readers at the staged generation, then remove old generations."""
        if staged.pointer is None:
            return
        _pid, now = read_pointer(self.api, self.name)
        if now is not None and now.generation >= staged.pointer.generation:
            self._drop(staged.pointer.name)
            raise IndexLockedError(
                f"generation {now.generation} was published on {self.api.url} while "
                f"generation {staged.pointer.generation} was built; this build is discarded",
                hint="run publishes one at a time (a CI concurrency group)",
            )
        published = Pointer(**{**staged.pointer.__dict__, "published_at": time.time()})
        self.api.set_metadata(published.collection_id, published.metadata())
        summary.published = True
        summary.removed_generations = self.cleanup(published.generation)

    def cleanup(self, current: int) -> list[int]:
        """Remove generations older than the ``keep_generations`` newest published ones,
        and unpublished builds abandoned for over an hour."""
        keep = self.settings.knowledge.keep_generations
        removed: list[int] = []
        cols = {int(m.group(1)): c for c in self.api.list_collections()
                if (m := self._gen_re.match(c.name))}  # fmt: skip
        older = sorted((g for g in cols if g <= current), reverse=True)
        for g in older[keep:]:
            self._drop(cols[g].name)
            removed.append(g)
        for g in (g for g in cols if g > current):
            started = float(cols[g].metadata.get("started_at") or 0)
            if time.time() - started > STALE_BUILD_SECONDS:
                self._drop(cols[g].name)
                removed.append(g)
        return sorted(removed)

    # -- helpers ------------------------------------------------------------------------
    def _generations(self) -> list[int]:
        return [int(m.group(1)) for c in self.api.list_collections()
                if (m := self._gen_re.match(c.name))]  # fmt: skip

    def _reuser(self, current: Pointer | None) -> Any:
        """``reuse(model_id, ids)``: vectors of ``ids`` held by the published generation."""

        def reuse(model_id: str, ids: list[str]) -> dict[str, np.ndarray]:
            if current is None or current.model_id != model_id:
                return {}
            out: dict[str, np.ndarray] = {}
            try:
                for start in range(0, len(ids), PAGE):
                    got = self.api.get(
                        current.generation_id, ids=ids[start : start + PAGE],
                        include=["embeddings"],
                    )  # fmt: skip
                    for cid, emb in zip(got["ids"], got["embeddings"], strict=True):
                        out[cid] = np.asarray(emb, dtype=np.float32)
            except NotFound:  # removed meanwhile: embed (or take from the cache) instead
                return {}
            return out

        return reuse

    def _write(
        self, col: Collection, records: list[ChunkRecord], matrix: np.ndarray,
        progress: Progress | None,
    ) -> None:  # fmt: skip
        for start in range(0, len(records), PAGE):
            part = records[start : start + PAGE]
            self.api.add(
                col.id,
                [r.id for r in part],
                matrix[start : start + len(part)].tolist(),
                [r.text for r in part],
                [record_metadata(r) for r in part],
            )
            if progress:
                progress("publish", start + len(part), len(records))

    def _drop(self, name: str) -> None:
        with contextlib.suppress(NotFound):
            self.api.delete_collection(name)


def domain_counts(records: list[ChunkRecord]) -> dict[str, int]:
    docs: dict[str, set[str]] = {}
    for r in records:
        for d in r.domains:
            docs.setdefault(d, set()).add(r.source)
    return {d: len(s) for d, s in sorted(docs.items())}


def publish(
    files: list[SourceFile],
    settings: Settings,
    *,
    url: str | None,
    embedding: EmbeddingConfig,
    progress: Progress | None = None,
) -> PublishSummary:
    """Stage and flip in one go (what ``opsmate index --to`` runs)."""
    t0 = time.perf_counter()
    pub = Publisher(settings, url)
    summary = PublishSummary(server=pub.api.url, collection=pub.name)
    try:
        staged = pub.stage(files, embedding, summary, progress)
        pub.flip(staged, summary)
    finally:
        pub.api.close()
    summary.seconds = round(time.perf_counter() - t0, 3)
    return summary
