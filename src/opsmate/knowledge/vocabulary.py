"""What a corpus knows, for query understanding: services, environments, terms, topics.

Built once per published snapshot (memoised in ``Corpus.cache``) and handed to
:func:`opsmate.knowledge.query.understand` as a :class:`~opsmate.knowledge.query.Vocabulary`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opsmate.knowledge.corpus import Corpus
from opsmate.knowledge.query import Vocabulary

TOPIC_MIN_CHUNKS = 3  # a product mentioned in this many chunks counts as covered


def corpus_vocabulary(corpus: Corpus) -> Vocabulary:
    """The :class:`Vocabulary` of ``corpus`` (memoised per snapshot)."""
    vocab = corpus.cache.get("vocabulary")
    if vocab is None:
        services = {d.service for d in corpus.docs if d.service}
        services |= {d.source.split("/", 1)[0] for d in corpus.docs if "/" in d.source}
        envs = {e for d in corpus.docs for e in d.environments}
        lex = corpus.lexical
        topics = topic_terms(corpus)
        vocab = Vocabulary(
            frozenset(services),
            frozenset(envs),
            known_term=lambda t: lex.doc_freq(t) > 0,
            topic_term=lambda t: t in topics or lex.doc_freq(t) >= TOPIC_MIN_CHUNKS,
            variants=inflection_variants(corpus),
        )
        corpus.cache["vocabulary"] = vocab
    return vocab


def topic_terms(corpus: Corpus) -> set[str]:
    """Terms of what the runbooks are about: titles, tags, services, alerts, folders."""
    from opsmate.knowledge.analyzers import tokenize

    out: set[str] = set()
    for d in corpus.docs:
        meta = d.meta
        words = [d.title, d.source.rsplit("/", 1)[0], str(meta.get("service") or "")]
        words += [str(x) for x in (meta.get("tags") or []) + (meta.get("alerts") or [])]
        out.update(tokenize(" ".join(words)))
    return out


def inflection_variants(corpus: Corpus) -> Callable[[str], list[str]]:
    """word -> the index's plain words of the same inflection key (restart: restarting ...)."""
    from opsmate.knowledge.glossary import normalize_word

    vocab: Any = corpus.fields.vocab if corpus.fields is not None else None
    if vocab is None:
        vocab = getattr(corpus.lexical, "_vocab", None) or getattr(
            getattr(corpus.lexical, "_m", None), "idf", {}
        )
    groups: dict[str, list[str]] = {}
    for term in vocab:
        if isinstance(term, str) and term.isalpha() and len(term) >= 4:
            groups.setdefault(normalize_word(term), []).append(term)

    def variants(word: str) -> list[str]:
        return [t for t in groups.get(normalize_word(word), ()) if t != word]

    return variants
