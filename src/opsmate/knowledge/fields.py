"""Field-aware lexical scoring: BM25F over a chunk's body, headings, runbook metadata, symptoms.

A runbook's title, its alert names and its headings say what it is about more reliably
than any sentence of its body, and a "Symptoms" section is written in the words of
someone who sees the problem. BM25F (Robertson, Zaragoza, Taylor 2004) scores a term
once per chunk from its frequencies in every field, each weighted and
length-normalised per field *before* the saturation, so a term in the title and the
body is not counted twice the way a sum of per-field BM25 scores would count it::

    tf~(t, d) = sum_f w_f * tf_f(t, d) / (1 - b_f + b_f * len_f(d) / avglen_f)
    score(q, d) = sum_{t in q} q_w(t) * idf(t) * tf~ / (k1 + tf~)

Fields of a chunk (see :func:`chunk_fields`):

- ``body``: the indexed text (heading path + chunk text + English equivalents of
  Chinese terms), exactly the terms of the plain BM25 index;
- ``heading``: its heading path (document title, H1, H2 ...);
- ``meta``: the runbook's title, alert names (split: ``KubePodCrashLooping`` also gives
  kube pod crash looping), tags and service, repeated on every chunk of the runbook;
- ``symptom``: the body again when the chunk sits under a symptom-like heading
  (Symptoms, What it looks like, 现象, 症状 ...), else empty.

The per-(chunk, term) scores are precomputed into a term-major sparse matrix (numpy
arrays, no scipy), so a query costs one slice per term, like ``bm25s``. Weights are
fixed when the index is built (:data:`FIELD_WEIGHTS`); ``benchmarks/bench_retrieval_stages.py``
measures them against the plain BM25 index.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

FIELDS = ("body", "heading", "meta", "symptom")
FIELD_WEIGHTS: dict[str, float] = {"body": 1.0, "heading": 2.0, "meta": 1.5, "symptom": 0.5}
FIELD_B: dict[str, float] = {"body": 0.75, "heading": 0.5, "meta": 0.5, "symptom": 0.75}
K1 = 1.2
FIELDS_VERSION = "bm25f-1"
FIELDS_DIR = "fields"
SYMPTOM_HEADING_RE = re.compile(
    r"symptom|what (?:it|you) (?:looks? like|see)|signs?\b|how it shows|alerts? and symptoms|"
    r"现象|症状|表现|告警与现象",
    re.I,
)
_FILES = ("data.npy", "indices.npy", "indptr.npy")


def is_symptom_heading(heading_path: Sequence[str]) -> bool:
    """Whether a chunk's heading path names a symptoms section (not the title)."""
    return any(SYMPTOM_HEADING_RE.search(h) for h in heading_path[1:])


def meta_field_text(meta: dict[str, Any]) -> str:
    """The ``meta`` field's text of a runbook: title, alerts (also split), tags, service."""
    return _meta_text(
        str(meta.get("title") or ""),
        tuple(str(a) for a in meta.get("alerts") or []),
        tuple(str(t) for t in meta.get("tags") or []),
        str(meta.get("service") or ""),
    )


@lru_cache(maxsize=4096)
def _meta_text(title: str, alerts: tuple[str, ...], tags: tuple[str, ...], service: str) -> str:
    # memoised: chunks of one runbook share it, and splitting the alert identifiers
    # again for every chunk of a 10k-chunk build costs ~0.4 s
    from opsmate.knowledge.signature import split_identifier

    return " ".join([title, *alerts, *(split_identifier(a) for a in alerts), *tags, service])


def chunk_fields(
    body_terms: list[str],
    heading_path: Sequence[str],
    meta: dict[str, Any],
    memo: dict[str, list[str]] | None = None,
    prior: dict[str, list[str]] | None = None,
    meta_text: str | None = None,
) -> dict[str, list[str]]:
    """The field terms of one chunk (``body_terms`` are its stored BM25 terms).

    ``memo`` caches the tokenized headings and metadata across the chunks of a build
    (chunks of one section share them); ``prior`` is the previous build's memo (same
    analyzer), read before tokenizing, so re-indexing after one edit tokenizes only
    the texts of that edit. ``meta_text``: :func:`meta_field_text` of ``meta`` when the
    caller has it (computed once per runbook, not once per chunk).
    """
    from opsmate.knowledge.analyzers import tokenize

    memo = {} if memo is None else memo
    if meta_text is None:
        meta_text = meta_field_text(meta)
    head_text = " ".join(heading_path)
    for text in (head_text, meta_text):
        if text not in memo:
            known = prior.get(text) if prior else None
            memo[text] = known if known is not None else tokenize(text)
    return {
        "body": body_terms,
        "heading": memo[head_text],
        "meta": memo[meta_text],
        "symptom": body_terms if is_symptom_heading(heading_path) else [],
    }


class FieldIndex:
    """BM25F scores of every (chunk, term) pair, term-major; built once per generation."""

    def __init__(
        self,
        vocab: dict[str, int],
        data: np.ndarray,
        indices: np.ndarray,
        indptr: np.ndarray,
        n_docs: int,
        weights: dict[str, float] | None = None,
    ) -> None:
        self.vocab = vocab
        self.data = data
        self.indices = indices
        self.indptr = indptr
        self.n_docs = n_docs
        self.weights = dict(weights or FIELD_WEIGHTS)

    @classmethod
    def build(
        cls,
        docs: Sequence[dict[str, list[str]]],
        weights: dict[str, float] | None = None,
        b: dict[str, float] | None = None,
        k1: float = K1,
    ) -> FieldIndex:
        """Index ``docs`` (one dict of field -> terms per chunk, positions = order)."""
        w = dict(FIELD_WEIGHTS if weights is None else weights)
        bb = dict(FIELD_B if b is None else b)
        n = len(docs)
        vocab: dict[str, int] = {}
        keys_all: list[np.ndarray] = []
        vals_all: list[np.ndarray] = []
        for f in FIELDS:
            if w.get(f, 0.0) <= 0:
                continue
            lists = [d.get(f, ()) for d in docs]
            lengths = np.fromiter((len(x) for x in lists), dtype=np.float64, count=n)
            flat = list(chain.from_iterable(lists))
            if not flat:
                continue
            for t in dict.fromkeys(flat):  # first-seen order: the same ids on every build
                if t not in vocab:
                    vocab[t] = len(vocab)
            term_ids = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))
            doc_ids = np.repeat(np.arange(n, dtype=np.int64), lengths.astype(np.int64))
            avg = float(lengths[lengths > 0].mean()) if (lengths > 0).any() else 1.0
            norm = 1.0 - bb.get(f, 0.75) + bb.get(f, 0.75) * lengths / avg
            keys, tf = np.unique(term_ids * max(n, 1) + doc_ids, return_counts=True)
            keys_all.append(keys)
            vals_all.append(w[f] * tf / norm[keys % max(n, 1)])
        if not keys_all:
            return cls({}, *_empty(), n, w)
        keys = np.concatenate(keys_all)
        vals = np.concatenate(vals_all)
        order = np.argsort(keys, kind="stable")
        keys, vals = keys[order], vals[order]
        uniq, start = np.unique(keys, return_index=True)
        tf_tilde = np.add.reduceat(vals, start)
        term_of = uniq // max(n, 1)
        docs_of = (uniq % max(n, 1)).astype(np.int32)
        df = np.bincount(term_of, minlength=len(vocab))
        idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
        scores = (idf[term_of] * tf_tilde / (k1 + tf_tilde)).astype(np.float32)
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        return cls(vocab, scores, docs_of, indptr, n, w)

    def scores(self, terms: Iterable[tuple[str, float]] | Iterable[str]) -> np.ndarray:
        """BM25F score of every chunk for weighted query terms (plain terms weigh 1)."""
        out = np.zeros(self.n_docs, dtype=np.float32)
        seen: set[str] = set()
        for item in terms:
            t, qw = (item, 1.0) if isinstance(item, str) else item
            i = self.vocab.get(t)
            if i is None or t in seen or qw <= 0:
                continue
            seen.add(t)
            lo, hi = self.indptr[i], self.indptr[i + 1]
            out[self.indices[lo:hi]] += np.float32(qw) * self.data[lo:hi]
        return out

    def doc_freq(self, term: str) -> int:
        i = self.vocab.get(term)
        return 0 if i is None else int(self.indptr[i + 1] - self.indptr[i])

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for name, arr in zip(_FILES, (self.data, self.indices, self.indptr), strict=True):
            np.save(folder / name, arr)
        meta = {"version": FIELDS_VERSION, "n_docs": self.n_docs, "weights": self.weights}
        (folder / "fields.json").write_text(json.dumps(meta))
        (folder / "vocab.json").write_text(json.dumps(self.vocab, ensure_ascii=False))

    @classmethod
    def load(cls, folder: Path) -> FieldIndex | None:
        """The index saved in ``folder``; None when absent or of another version."""
        try:
            meta = json.loads((folder / "fields.json").read_text())
            if meta.get("version") != FIELDS_VERSION:
                return None
            vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
            # plain ndarray views of the maps: slicing a ``np.memmap`` subclass costs
            # ~2 us of Python per slice, and a query takes two slices per term
            arrays = [np.asarray(np.load(folder / name, mmap_mode="r")) for name in _FILES]
        except (OSError, ValueError):
            return None
        return cls(vocab, arrays[0], arrays[1], arrays[2], int(meta["n_docs"]), meta["weights"])


def _empty() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (
        np.zeros(0, dtype=np.float32),
        np.zeros(0, dtype=np.int32),
        np.zeros(1, dtype=np.int64),
    )


def idf(n_docs: int, df: int) -> float:
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
