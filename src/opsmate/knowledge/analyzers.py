"""The one text analyzer of the knowledge base, used for both indexing and queries.

``tokenize`` turns runbook text or a query into BM25 terms:

* Latin text is cut into *words* (runs of letters, digits and ``_``, joined by the
  separators ``- . / : @``). A word with structure - ``max_connections``,
  ``PoolTimeout``, ``ORA-00054``, ``order-service``, ``deployment/order-service`` -
  is an *identifier*: it is emitted whole (lowercased, never stemmed) and then
  split into its parts, recursively (``/:@`` first, then ``.``, ``-``, ``_`` and
  camelCase), so ``deployment/order-service`` gives ``deployment/order-service``,
  ``deployment``, ``order-service``, ``order``, ``service``. Dotted numbers
  (``127.0.0.1``, ``3.14``) and words mixing letters and digits without other
  structure (``x509``, ``55P03``, ``k8s``) stay whole.
* Plain English words are lowercased, a small stop-word list is dropped and a
  minimal plural rule (``connections`` -> ``connection``, ``queries`` -> ``query``)
  is applied. The same rule applies to identifier *parts* so that the query
  ``max connections`` meets ``max_connections``; the whole identifier is never
  changed. Numbers are never dropped.
* CJK runs are segmented with jieba in search mode with the ops dictionary
  (``data/jieba_ops_dict.txt``). Only pure CJK runs reach jieba, so identifiers are
  protected from it by construction. Single-character function words (的, 了, 是
  ...) and punctuation are dropped.

jieba is imported lazily, only when CJK text is present, and its built prefix
dictionary is cached under :func:`opsmate.paths.cache_dir`.

``expand_query`` appends the English equivalents of the Chinese ops terms found in
a text (``data/zh_en_glossary.tsv``), so a Chinese question finds English runbooks.
"""

from __future__ import annotations

import logging
import re
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
GLOSSARY_PATH = DATA_DIR / "zh_en_glossary.tsv"
JIEBA_DICT_PATH = DATA_DIR / "jieba_ops_dict.txt"

_CJK_CLASS = (
    "\u3040-\u30ff"  # kana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uf900-\ufaff"  # compatibility ideographs
    "\uac00-\ud7af"  # hangul syllables
)
# A Latin "word": alphanumeric runs (no CJK) joined by single separators.
_ALNUM = rf"[^\W{_CJK_CLASS}]"
_WORD_RE = re.compile(rf"{_ALNUM}+(?:[-./:@]{_ALNUM}+)*")
_CJK_RUN_RE = re.compile(rf"[{_CJK_CLASS}]+")
_CJK_PUNCT_RE = re.compile(r"[\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]")
_TOKEN_RE = re.compile(rf"(?P<cjk>[{_CJK_CLASS}]+)|(?P<word>{_ALNUM}+(?:[-./:@]{_ALNUM}+)*)")

_SPLIT_LEVELS: tuple[re.Pattern[str], ...] = (
    re.compile(r"[/:@]"),
    re.compile(r"\."),
    re.compile(r"-"),
    re.compile(r"_+"),
    # camelCase / PascalCase / ACRONYMWord boundaries (never letter/digit boundaries)
    re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])"),
)
_DOTTED_NUMBER_RE = re.compile(r"\d+(?:\.\d+)+")
_PLAIN_WORD_RE = re.compile(r"[A-Za-z][a-z]*")

_STOP_WORDS_TEXT = """a an and are as at be been being but by for from had has have he her his
    i if in into is it its me my of on or our she so than that the their them then there these
    they this those to was we were what which who will with would you your"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_WORDS_TEXT.split())
# Single CJK characters and short words that carry no meaning for retrieval.
_CJK_STOP_WORDS_TEXT = (
    "的 了 是 在 和 与 或 及 就 都 也 而 把 被 让 给 对 从 到 向 吗 呢 吧 啊 着 过 个 这 那 "
    "之 其 并 等 为 以 于 则 即 如 若 但 又 还 很 已 要 会 能 可 该 此 各 每 "
    "如果 然后 可以 我们 这个 那个 进行 或者 以及 因为 所以 需要 一下 一个"
)
CJK_STOP_WORDS: frozenset[str] = frozenset(_CJK_STOP_WORDS_TEXT.split())

_log = logging.getLogger(__name__)
_jieba_lock = threading.Lock()
_jieba_tokenizer: Any = None


def _stem(word: str) -> str:
    """Minimal English plural rule (after Lucene's EnglishMinimalStemmer).

    Applied only to lowercase alphabetic words of 4+ letters; keeps ``-ss``,
    ``-us`` and ``-is`` endings (``ingress``, ``status``, ``redis``).
    """
    n = len(word)
    if n < 4 or word[-1] != "s" or not word.isalpha():
        return word
    prev = word[-2]
    if prev in "usi":
        return word
    if prev == "e":
        if n > 4 and word[-3] == "i" and word[-4] not in "ae":
            return word[:-3] + "y"
        if word[-3] in "iaoe":
            return word
    return word[:-1]


def _split_once(word: str) -> list[str]:
    """Split ``word`` at the first structural level that actually divides it."""
    if _DOTTED_NUMBER_RE.fullmatch(word):
        return [word]
    for pattern in _SPLIT_LEVELS:
        parts = [p for p in pattern.split(word) if p]
        if len(parts) > 1:
            return parts
    return [word]


def _emit_part(part: str, out: list[str]) -> None:
    """Emit an identifier part (already split as far as it goes)."""
    low = part.lower()
    if low in STOP_WORDS:
        return
    out.append(_stem(low) if _PLAIN_WORD_RE.fullmatch(part) else low)


def _expand_identifier(word: str, out: list[str]) -> None:
    """Emit ``word`` whole and, recursively, its parts."""
    parts = _split_once(word)
    if len(parts) == 1:
        _emit_part(word, out)
        return
    out.append(word.lower())
    for part in parts:
        sub = _split_once(part)
        if len(sub) == 1:
            _emit_part(part, out)
        else:
            _expand_identifier(part, out)


def _analyze_word(word: str, out: list[str]) -> None:
    if _PLAIN_WORD_RE.fullmatch(word):  # "restart", "Connections": plain English
        low = word.lower()
        if len(low) > 1 and low not in STOP_WORDS:
            out.append(_stem(low))
        return
    _expand_identifier(word, out)


def _get_jieba() -> Any:
    """A jieba tokenizer with the ops dictionary, its prefix dict cached in the user cache."""
    global _jieba_tokenizer
    if _jieba_tokenizer is not None:
        return _jieba_tokenizer
    with _jieba_lock:
        if _jieba_tokenizer is None:
            import jieba

            from opsmate.paths import cache_dir

            jieba.setLogLevel(logging.WARNING)
            tok = jieba.Tokenizer()
            tmp = cache_dir() / "jieba"
            try:
                tmp.mkdir(parents=True, exist_ok=True)
                tok.tmp_dir = str(tmp)
                tok.cache_file = "jieba.cache"
            except OSError as exc:  # unwritable cache: jieba falls back to the temp dir
                _log.debug("jieba cache dir %s unusable: %s", tmp, exc)
            tok.initialize()
            tok.load_userdict(str(JIEBA_DICT_PATH))
            for term in _glossary():
                if len(term) > 1 and _CJK_RUN_RE.fullmatch(term):
                    tok.add_word(term, 3000)
            _jieba_tokenizer = tok
    return _jieba_tokenizer


def _segment_cjk(run: str, out: list[str]) -> None:
    for piece in _get_jieba().lcut_for_search(run):
        piece = piece.strip()
        if not piece or piece in CJK_STOP_WORDS or not _CJK_RUN_RE.fullmatch(piece):
            continue
        out.append(piece)


def tokenize(text: str) -> list[str]:
    """Analyze ``text`` into BM25 terms (the one analyzer for index and query)."""
    out: list[str] = []
    for m in _TOKEN_RE.finditer(text):
        cjk = m.group("cjk")
        if cjk is not None:
            _segment_cjk(cjk, out)
        else:
            _analyze_word(m.group("word"), out)
    return out


@lru_cache(maxsize=1)
def _glossary() -> dict[str, tuple[str, ...]]:
    """Chinese term -> English equivalents, from ``data/zh_en_glossary.tsv``."""
    terms: dict[str, tuple[str, ...]] = {}
    for raw in GLOSSARY_PATH.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "\t" not in line:
            continue
        zh, en = line.split("\t", 1)
        equivalents = tuple(e.strip() for e in en.split(";") if e.strip())
        if zh.strip() and equivalents:
            terms[zh.strip()] = equivalents
    return terms


@lru_cache(maxsize=1)
def _glossary_by_length() -> tuple[str, ...]:
    return tuple(sorted(_glossary(), key=len, reverse=True))


def glossary_terms(text: str) -> list[str]:
    """English equivalents of the Chinese glossary terms in ``text``, in order of first use.

    Longer terms win over the terms they contain (连接池 rather than 连接).
    """
    if not _CJK_RUN_RE.search(text):
        return []
    covered = bytearray(len(text))
    found: list[tuple[int, str]] = []
    for term in _glossary_by_length():
        start = text.find(term)
        while start != -1:
            end = start + len(term)
            if not any(covered[start:end]):
                covered[start:end] = b"\x01" * len(term)
                found.append((start, term))
            start = text.find(term, end)
    seen: set[str] = set()
    english: list[str] = []
    for _, term in sorted(found):
        for eq in _glossary()[term]:
            if eq.lower() not in seen:
                seen.add(eq.lower())
                english.append(eq)
    return english


def expand_query(text: str) -> str:
    """``text`` followed by the English equivalents of the Chinese ops terms in it.

    Text without glossary terms is returned unchanged. Also usable on Chinese chunk
    text at index time, so English queries can reach Chinese runbooks.
    """
    extra = glossary_terms(text)
    return f"{text} {' '.join(extra)}" if extra else text


def translate_cjk(text: str) -> str:
    """``text`` with each CJK run replaced, in place, by the English of its glossary terms.

    What the (English-only) embedding model reads for Chinese text: ``节点磁盘满，Pod 被驱逐``
    becomes ``node disk full, Pod evicted``. Untranslated CJK is dropped; text
    without CJK is returned unchanged.
    """
    if not _CJK_RUN_RE.search(text):
        return text
    gl = _glossary()

    def run_english(m: re.Match[str]) -> str:
        run = m.group(0)
        covered = bytearray(len(run))
        found: list[tuple[int, str]] = []
        for term in _glossary_by_length():
            if len(term) > len(run):
                continue
            start = run.find(term)
            while start != -1:
                end = start + len(term)
                if not any(covered[start:end]):
                    covered[start:end] = b"\x01" * len(term)
                    found.append((start, term))
                start = run.find(term, end)
        words = [" ".join(gl[t]) for _, t in sorted(found)]
        return f" {' '.join(words)} " if words else " "

    return " ".join(_CJK_PUNCT_RE.sub(" ", _CJK_RUN_RE.sub(run_english, text)).split())
