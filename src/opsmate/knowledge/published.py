"""Reading the published index: the snapshot a query searches, and index statistics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from opsmate.errors import KnowledgeIndexError
from opsmate.knowledge.corpus import Corpus, DocInfo
from opsmate.knowledge.fields import FIELDS_DIR, FieldIndex
from opsmate.knowledge.generation import GENS
from opsmate.knowledge.lexical import load_lexical
from opsmate.knowledge.manifest import Manifest
from opsmate.knowledge.store import ManifestStore
from opsmate.knowledge.vectors import ChromaVectors, NumpyVectors


def load_corpus(index_dir: Path, m: Manifest) -> tuple[Corpus, str | None]:
    """The published generation as a :class:`Corpus` (one consistent manifest read).

    Chunks of the generation whose document is no longer published (tombstoned
    after the generation was built) are present but invisible.
    """
    with m.read() as db:
        gen = m.get_meta("generation")
        revision = m.get_meta("revision")
        model_id = m.get_meta("embedding_model") or None
        vector_backend = m.get_meta("vector_backend") or "numpy"
        doc_rows = db.execute(
            "SELECT id, source, version, title, meta_json FROM documents WHERE published = 1"
        ).fetchall()
        chunk_rows = db.execute(
            "SELECT c.rowid, c.id, c.parent_id, c.doc_id FROM chunks c "
            "JOIN documents d ON c.doc_id = d.id WHERE d.published = 1"
        ).fetchall()
    if not gen:
        raise KnowledgeIndexError(
            f"the runbook index in {index_dir} is empty",
            hint=f"run `opsmate index PATH --index-dir {index_dir}`",
        )
    folder = index_dir / GENS / gen
    if not folder.is_dir():
        raise KnowledgeIndexError(
            f"the runbook index in {index_dir} is incomplete (generation {gen} missing)",
            hint="run `opsmate index` again",
        )
    docs = [DocInfo(r[1], r[2], r[3], json.loads(r[4]), key=r[0]) for r in doc_rows]
    doc_index = {d.key: i for i, d in enumerate(docs)}
    by_rowid = {int(r[0]): r for r in chunk_rows}
    rowids = np.load(folder / "rowids.npy")
    n = len(rowids)
    chunk_ids, parent_ids = [""] * n, [""] * n
    doc_of = np.zeros(n, dtype=np.int64)
    visible = np.zeros(n, dtype=bool)
    for i, rid in enumerate(rowids.tolist()):
        row = by_rowid.get(rid)
        if row is not None:
            chunk_ids[i], parent_ids[i] = row[1], row[2]
            doc_of[i] = doc_index[row[3]]
            visible[i] = True
    lexical = load_lexical(folder / "lexical")
    fields = FieldIndex.load(folder / FIELDS_DIR)  # None for a generation built before it
    corpus = Corpus(
        chunk_ids=chunk_ids,
        parent_ids=parent_ids,
        doc_of=doc_of,
        docs=docs,
        visible=visible,
        lexical=lexical,
        store=ManifestStore(m, rowids),
        model_id=model_id,
        keys=[str(r) for r in rowids.tolist()],
        fields=fields if fields is not None and fields.n_docs == n else None,
    )
    if model_id and vector_backend == "numpy" and (folder / "vectors.npy").exists():
        corpus.vectors = NumpyVectors.load(folder)
    elif model_id and vector_backend == "chroma":
        corpus.vectors_loader = lambda: ChromaVectors(index_dir, model_id)
    return corpus, revision


def index_stats(index_dir: Path) -> dict[str, Any]:
    """Documents, chunks and settings of the published index (for ``opsmate doctor``)."""
    m = Manifest(Path(index_dir).expanduser())
    try:
        with m.read() as db:
            docs = db.execute("SELECT count(*) FROM documents WHERE published = 1").fetchone()[0]
            chunks = db.execute(
                "SELECT count(*) FROM chunks c JOIN documents d ON c.doc_id = d.id "
                "WHERE d.published = 1"
            ).fetchone()[0]
            return {
                "documents": int(docs),
                "chunks": int(chunks),
                "generation": int(m.get_meta("generation") or 0),
                "embedding_model": m.get_meta("embedding_model") or None,
                "lexical_backend": m.get_meta("lexical_backend"),
                "vector_backend": m.get_meta("vector_backend"),
            }
    finally:
        m.close()
