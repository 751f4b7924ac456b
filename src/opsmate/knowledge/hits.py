"""From ranked candidates to the hits of a response: one per parent section, with texts."""

from __future__ import annotations

from opsmate.knowledge.corpus import Corpus
from opsmate.knowledge.rerank import Candidate, explain_hit
from opsmate.knowledge.types import SearchHit


def one_per_parent(corpus: Corpus, cands: list[Candidate], top_k: int) -> list[Candidate]:
    """The first ``top_k`` candidates, a chunk whose parent section is already in dropped."""
    chosen: list[Candidate] = []
    seen: set[tuple[int, str]] = set()
    for c in cands:
        key = (int(corpus.doc_of[c.pos]), corpus.parent_ids[c.pos])
        if key in seen:
            continue
        seen.add(key)
        chosen.append(c)
        if len(chosen) >= top_k:
            break
    return chosen


def build_hits(
    corpus: Corpus, chosen: list[Candidate], explain_weights: dict[str, float] | None = None
) -> list[SearchHit]:
    """The :class:`SearchHit` of each candidate (``explain`` filled when weights are given)."""
    texts = corpus.store.texts([c.pos for c in chosen])
    hits: list[SearchHit] = []
    for c in chosen:
        t = texts.get(c.pos)
        if t is None:  # removed by a concurrent cleanup
            continue
        doc = corpus.docs[int(corpus.doc_of[c.pos])]
        hits.append(
            SearchHit(
                rank=len(hits) + 1,
                score=round(float(c.score), 6),
                chunk_id=corpus.chunk_ids[c.pos],
                source=doc.source,
                heading_path=t.heading_path,
                text=t.text,
                parent_text=t.parent_text,
                doc_version=doc.version,
                metadata=doc.meta,
                bm25_rank=c.bm25_rank,
                vector_rank=c.vector_rank,
                vector_similarity=(
                    round(c.vector_similarity, 6) if c.vector_similarity is not None else None
                ),
                explain=explain_hit(c, explain_weights) if explain_weights is not None else None,
            )
        )
    return hits
