"""BM25 behind one small interface, with two interchangeable backends.

- ``bm25s`` (default): scores precomputed into a sparse matrix at build time, saved as
  ``.npy`` files and loaded with mmap; a query is a few sparse-column sums. It needs a
  full rebuild per index version (about 0.15 s at 10k chunks), which fits the versioned
  index: each published generation has its own BM25 folder.
- ``rank_bm25``: the design card's library (pure Python loops over every document per
  query), kept for comparison. Its IDF is switched to Lucene's
  ``log(1 + (N - df + 0.5) / (df + 0.5))`` and its scores divided by ``k1 + 1`` so
  both backends score identically (same k1, b, tokens and formula);
  ``benchmarks/bench_bm25.py`` measures both.

Both take pre-tokenized documents (``opsmate.knowledge.analyzers.tokenize``) and
return a full score vector per query, so metadata filters are applied as a mask
*before* the top-N is chosen (see :func:`top_n`).
"""

from __future__ import annotations

import json
import math
import pickle
from pathlib import Path
from typing import Literal, Protocol

import numpy as np

K1 = 1.5
B = 0.75
Backend = Literal["bm25s", "rank_bm25"]
_KIND_FILE = "lexical.json"
_NO_DOCS = np.zeros(0, dtype=np.int64)


class LexicalIndex(Protocol):
    """A built BM25 index over ``n_docs`` documents addressed by position."""

    backend: str
    n_docs: int

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every document (float32, length ``n_docs``)."""
        ...

    def doc_freq(self, token: str) -> int:
        """Number of documents containing ``token`` (0 when unknown)."""
        ...

    def postings(self, token: str) -> np.ndarray:
        """Positions of the documents containing ``token`` (int array, any order)."""
        ...

    def save(self, folder: Path) -> None: ...


def lucene_idf(n_docs: int, df: int) -> float:
    """Lucene's always-positive BM25 IDF."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


class Bm25sIndex:
    """BM25 with the ``bm25s`` library (sparse matrix, mmap-able)."""

    backend = "bm25s"

    def __init__(self, model: object) -> None:
        self._m = model
        self.n_docs = int(model.scores["num_docs"])  # type: ignore[attr-defined]
        self._vocab: dict[str, int] = model.vocab_dict  # type: ignore[attr-defined]
        self._df = np.diff(np.asarray(model.scores["indptr"]))  # type: ignore[attr-defined]

    @classmethod
    def build(cls, corpus: list[list[str]]) -> Bm25sIndex:
        """The index over ``corpus``, in bm25s's own format (saved and loaded by bm25s).

        The score matrix is computed with numpy (the term-major sparse matrix of
        :class:`~opsmate.knowledge.fields.FieldIndex` with one field, the same Lucene
        formula, k1 and b as ``bm25s.BM25(method="lucene")``): 10k chunks in ~0.15 s
        instead of bm25s's ~0.5 s of per-document Python.
        """
        import bm25s

        from opsmate.knowledge.fields import FieldIndex

        # "" stands for an empty document, as bm25s needs one token per document
        docs = [{"body": doc or [""]} for doc in corpus] or [{"body": [""]}]
        f = FieldIndex.build(docs, weights={"body": 1.0}, b={"body": B}, k1=K1)
        model = bm25s.BM25(k1=K1, b=B, method="lucene")
        model.scores = {
            "data": f.data,
            "indices": f.indices.astype(np.int32, copy=False),
            "indptr": f.indptr,
            "num_docs": len(docs),
        }
        model.vocab_dict = f.vocab
        model.nonoccurrence_array = None  # Lucene BM25 has no non-occurrence score
        index = cls(model)
        index.n_docs = len(corpus)
        return index

    @classmethod
    def load(cls, folder: Path) -> Bm25sIndex:
        import bm25s

        return cls(bm25s.BM25.load(str(folder), mmap=True, show_progress=False))

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        known = [t for t in query_tokens if t in self._vocab and t]
        if not known or self.n_docs == 0:
            return np.zeros(self.n_docs, dtype=np.float32)
        return np.asarray(self._m.get_scores(known), dtype=np.float32)  # type: ignore[attr-defined]

    def doc_freq(self, token: str) -> int:
        i = self._vocab.get(token)
        return 0 if i is None or not token else int(self._df[i])

    def postings(self, token: str) -> np.ndarray:
        i = self._vocab.get(token)
        if i is None or not token:
            return _NO_DOCS
        ptr = self._m.scores["indptr"]  # type: ignore[attr-defined]
        return np.asarray(self._m.scores["indices"][ptr[i] : ptr[i + 1]])  # type: ignore[attr-defined]

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._m.save(str(folder), show_progress=False)  # type: ignore[attr-defined]
        (folder / _KIND_FILE).write_text(json.dumps({"backend": self.backend}))


class RankBm25Index:
    """BM25 with ``rank-bm25`` (BM25Okapi with Lucene IDF), pickled to disk."""

    backend = "rank_bm25"

    def __init__(self, model: object) -> None:
        self._m = model
        self.n_docs = int(model.corpus_size)  # type: ignore[attr-defined]

    @classmethod
    def build(cls, corpus: list[list[str]]) -> RankBm25Index:
        from collections import Counter

        from rank_bm25 import BM25Okapi

        docs = [doc or [""] for doc in corpus] or [[""]]
        model = BM25Okapi(docs, k1=K1, b=B)
        df = Counter(t for doc in docs for t in set(doc))
        n = len(corpus)
        model.idf = {w: lucene_idf(n, c) for w, c in df.items()}  # Lucene IDF, as bm25s
        model.opsmate_df = dict(df)
        model.corpus_size = n
        return cls(model)

    @classmethod
    def load(cls, folder: Path) -> RankBm25Index:
        with (folder / "rank_bm25.pkl").open("rb") as fh:
            return cls(pickle.load(fh))  # our own file, written by save()

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        known = [t for t in query_tokens if t and t in self._m.idf]  # type: ignore[attr-defined]
        if not known or self.n_docs == 0:
            return np.zeros(self.n_docs, dtype=np.float32)
        raw = self._m.get_scores(known)  # type: ignore[attr-defined]
        # BM25Okapi keeps the (k1 + 1) factor that Lucene (and bm25s) drop: same ranking
        return np.asarray(raw, dtype=np.float32) / (K1 + 1.0)

    def doc_freq(self, token: str) -> int:
        return int(self._m.opsmate_df.get(token, 0)) if token else 0  # type: ignore[attr-defined]

    def postings(self, token: str) -> np.ndarray:
        if not token or token not in self._m.opsmate_df:  # type: ignore[attr-defined]
            return _NO_DOCS
        freqs = self._m.doc_freqs  # type: ignore[attr-defined]
        return np.fromiter((i for i, f in enumerate(freqs) if token in f), dtype=np.int64)

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / "rank_bm25.pkl").open("wb") as fh:
            pickle.dump(self._m, fh, protocol=pickle.HIGHEST_PROTOCOL)
        (folder / _KIND_FILE).write_text(json.dumps({"backend": self.backend}))


def build_lexical(corpus: list[list[str]], backend: Backend = "bm25s") -> LexicalIndex:
    """Build a BM25 index over tokenized documents (positions = list order)."""
    if backend == "bm25s":
        return Bm25sIndex.build(corpus)
    if backend == "rank_bm25":
        return RankBm25Index.build(corpus)
    raise ValueError(f"unknown BM25 backend: {backend}")


def load_lexical(folder: Path) -> LexicalIndex:
    """Load an index written by ``save`` (the backend is recorded in the folder)."""
    kind = json.loads((folder / _KIND_FILE).read_text())["backend"]
    if kind == "bm25s":
        return Bm25sIndex.load(folder)
    return RankBm25Index.load(folder)


def top_n(scores: np.ndarray, n: int, mask: np.ndarray | None = None) -> list[tuple[int, float]]:
    """The ``n`` best (position, score) pairs with a positive score, allowed by ``mask``."""
    if mask is not None:
        scores = np.where(mask, scores, 0.0)
    positive = np.flatnonzero(scores > 0)
    if positive.size == 0:
        return []
    if positive.size > n:
        part = np.argpartition(-scores[positive], n - 1)[:n]
        positive = positive[part]
    order = positive[np.argsort(-scores[positive], kind="stable")]
    return [(int(i), float(scores[i])) for i in order]


def query_coverage(
    index: LexicalIndex, query_tokens: list[str], doc_tokens: list[str] | set[str]
) -> float:
    """Share of the query's IDF mass found in one document (0..1).

    A BM25 score normalised by what a perfect match would get: query terms unknown
    to the whole index count with the highest IDF, so a query about something the
    runbooks never mention scores near 0. Used for the ``low_evidence`` flag.
    """
    terms = list(dict.fromkeys(t for t in query_tokens if t and t.strip()))
    if not terms:
        return 0.0
    doc = set(doc_tokens)
    n = max(index.n_docs, 1)
    total = matched = 0.0
    for t in terms:
        w = lucene_idf(n, index.doc_freq(t))
        total += w
        if t in doc:
            matched += w
    return matched / total if total else 0.0
