"""An in-memory retriever over the runbooks that travel inside an incident bundle.

A bundle carries a handful of runbooks; indexing them on disk would be slower than
searching them in memory. :func:`retriever_for_dir` parses them, builds BM25 in
memory and returns a :class:`~opsmate.knowledge.retrieve.HybridRetriever`; the same
search code as ``opsmate search`` (filters, RRF, parent expansion, low_evidence).

Vectors are used only when the embedding model is on this machine (``onnx`` files in
chromadb's cache, or a ``gguf`` file): a diagnosis never downloads anything and never
calls an embedding server. They are built lazily, at the first vector query, from the
persistent embedding cache (``<cache dir>/embeddings.sqlite3``), so a bundle seen before
costs one model load and no embedding. Otherwise search is BM25 only and every
response says so in ``warnings``.
"""

from __future__ import annotations

from pathlib import Path

from opsmate.config import Settings
from opsmate.errors import OpsmateError
from opsmate.knowledge.corpus import ChunkText, Corpus, DocInfo
from opsmate.knowledge.embeddings import Embedder, make_embedder, onnx_available
from opsmate.knowledge.fields import FieldIndex, chunk_fields
from opsmate.knowledge.lexical import build_lexical
from opsmate.knowledge.rerank_model import model_reranker_from_config
from opsmate.knowledge.retrieve import HybridRetriever
from opsmate.knowledge.sources import discover, read_checked
from opsmate.knowledge.store import MemoryStore, embed_text, index_text
from opsmate.knowledge.vectors import NumpyVectors


def _local_embedder_possible(settings: Settings) -> str | None:
    """None when a local model can be used, else the reason it cannot."""
    emb = settings.embedding
    if emb.backend == "none":
        return "embedding backend none: runbook search is BM25 only"
    if emb.backend == "onnx" and not onnx_available(emb):
        return "the MiniLM embedding model is not on this machine: runbook search is BM25 only"
    if emb.backend == "gguf" and not (
        emb.model_path and Path(emb.model_path).expanduser().is_file()
    ):
        return "the gguf embedding model file is missing: runbook search is BM25 only"
    if emb.backend == "openai":
        return "bundle runbooks are searched without the remote embedding server: BM25 only"
    return None


def retriever_for_dir(runbooks_dir: Path, settings: Settings | None = None) -> HybridRetriever:
    """A retriever over the Markdown files under ``runbooks_dir`` (kept in memory).

    Files that cannot be read or parsed are skipped with a warning in every response.
    An empty or missing folder gives a retriever that finds nothing.
    """
    from opsmate.knowledge.analyzers import tokenize
    from opsmate.knowledge.markdown import load_runbook

    settings = settings or Settings()
    warnings: list[str] = []
    files, errors = discover([runbooks_dir], warnings) if runbooks_dir.is_dir() else ([], [])
    warnings.extend(e["message"] for e in errors if runbooks_dir.is_dir() and files)
    docs: list[DocInfo] = []
    chunk_ids: list[str] = []
    parent_ids: list[str] = []
    doc_of: list[int] = []
    texts: list[ChunkText] = []
    terms: list[list[str]] = []
    embed_texts: list[str] = []
    field_docs: list[dict[str, list[str]]] = []
    field_memo: dict[str, list[str]] = {}
    for f in files:
        try:
            read_checked(f)
            doc = load_runbook(f.path, f.root)
        except OpsmateError as exc:
            warnings.append(f"runbook skipped: {exc}")
            continue
        meta = doc.meta.model_dump(mode="json")
        meta["title"] = doc.title
        docs.append(DocInfo(f.source, doc.doc_version, doc.title, meta))
        parents = {s.id: s.text for s in doc.sections}
        for c in doc.chunks:
            text = index_text(c.heading_path, c.text)
            chunk_ids.append(c.id)
            parent_ids.append(c.parent_id)
            doc_of.append(len(docs) - 1)
            texts.append(ChunkText(c.heading_path, c.text, parents.get(c.parent_id, c.text)))
            terms.append(tokenize(text))
            embed_texts.append(embed_text(c.heading_path, c.text))
            field_docs.append(chunk_fields(terms[-1], c.heading_path, meta, field_memo))

    import numpy as np

    corpus = Corpus(
        chunk_ids=chunk_ids,
        parent_ids=parent_ids,
        doc_of=np.array(doc_of, dtype=np.int64),
        docs=docs,
        visible=np.ones(len(chunk_ids), dtype=bool),
        lexical=build_lexical(terms, settings.retrieval.bm25_backend),
        store=MemoryStore(texts, terms),
        warnings=warnings,
        fields=FieldIndex.build(field_docs),
    )
    reason = _local_embedder_possible(settings)
    if reason is not None:
        warnings.append(reason)
        return HybridRetriever(
            corpus,
            None,
            config=settings.retrieval,
            model_reranker=model_reranker_from_config(settings),
        )

    holder: dict[str, Embedder | None] = {}

    def embedder() -> Embedder | None:
        if "e" not in holder:
            try:
                holder["e"] = make_embedder(settings.embedding, allow_download=False)
            except OpsmateError as exc:
                warnings.append(f"embedding model unavailable ({exc.message}): BM25 only")
                holder["e"] = None
        return holder["e"]

    def vectors() -> NumpyVectors | None:
        from opsmate.knowledge.embedding_cache import EmbeddingCache

        emb = embedder()
        if emb is None:
            corpus.model_id = None
            return None
        cache = EmbeddingCache()
        try:
            mat, _ = cache.embed_cached(emb.model_id, embed_texts, emb.embed)
        except OpsmateError as exc:
            warnings.append(f"embedding failed ({exc.message}): BM25 only")
            corpus.model_id = None
            return None
        finally:
            cache.close()
        corpus.model_id = emb.model_id
        return NumpyVectors(mat if mat is not None else np.zeros((0, 0), dtype=np.float32))

    corpus.model_id = "pending"  # known once the model is loaded (first vector query)
    corpus.vectors_loader = vectors
    return HybridRetriever(
        corpus,
        embedder,
        config=settings.retrieval,
        model_reranker=model_reranker_from_config(settings),
    )
