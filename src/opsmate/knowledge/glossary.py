"""The operations glossary: what an on-call engineer's words mean in runbook vocabulary.

Query understanding (:mod:`.query`) looks a question up here before retrieval. Each
entry maps a *term* to *expansions* (the words runbooks tend to use for it), with a
*kind*:

- ``alias`` (default): jargon, kubectl states and reasons, slang, metric and alert-name
  words, Chinese terms. ``CreateContainerConfigError`` -> ``secret not found; configmap``,
  ``打满`` -> ``full; exhausted; saturated``, ``keep restarting`` -> ``crashloopbackoff``.
- ``env``: an environment name (``production``, ``线上`` -> ``prod``). Environments are
  boosts in ranking, never filters or mandatory terms.
- ``product``: the name of a technology (``mongodb``, ``rabbitmq``). Expansions are its
  aliases. A question about a product that no indexed runbook mentions is weak evidence
  (``low_evidence``), whatever else it shares with the runbooks.

File format (UTF-8, one entry a line, ``#`` starts a comment)::

    term<TAB>expansion; expansion; ...[<TAB>kind]

Terms are matched case-insensitively. A Chinese (CJK) term matches as a substring,
longer terms first (``镜像拉不下来`` before ``镜像``). An English term matches as a
sequence of words after a light normalisation (``restarting``, ``restarted``,
``restarts`` all match ``restart``); the words of a multi-word term may have up to
:data:`MAX_GAP` other words between them (``keep getting restarted`` matches
``keep restart``). Identifiers match whole (``nf_conntrack``, ``exit code 137``).

The built-in glossaries are ``data/ops_glossary.tsv`` (bilingual, query time) and
``data/zh_en_glossary.tsv`` (Chinese -> English, also used at index time by
:mod:`.analyzers`). Sites add their own files with ``retrieval.glossary`` in the
config; a site entry for a term replaces the built-in one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from opsmate.errors import ConfigError

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
OPS_GLOSSARY_PATH = DATA_DIR / "ops_glossary.tsv"
ZH_EN_GLOSSARY_PATH = DATA_DIR / "zh_en_glossary.tsv"
KINDS = ("alias", "env", "product")
MAX_GAP = 2  # other words allowed between the words of a multi-word English term

_CJK_RE = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
# words for matching: identifiers with inner separators stay whole ("nf_conntrack",
# "ephemeral-storage", "max.poll.interval.ms"); trailing punctuation is not part of them
_WORD_RE = re.compile(r"[A-Za-z0-9]+(?:[-_./'][A-Za-z0-9]+)*")


def normalize_word(word: str) -> str:
    """A matching key: lowercase, one inflection suffix removed (-ing, -ed, -es, -s, -e).

    Only for glossary matching, never for indexing: ``restarting``, ``restarted``,
    ``restarts`` and ``restart`` share a key, as do ``throttled`` and ``throttle``.
    """
    w = word.lower()
    if not w.isalpha() or len(w) <= 3:
        return w
    for suffix in ("ing", "ed", "es", "s", "e"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":  # stopp -> stop
        w = w[:-1]
    return w


def words(text: str) -> list[str]:
    """Normalised words of ``text`` (Latin script only), in order."""
    return [normalize_word(m.group(0)) for m in _WORD_RE.finditer(text)]


@dataclass(frozen=True)
class Entry:
    """One glossary line."""

    term: str
    expansions: tuple[str, ...]
    kind: str = "alias"
    source: str = "built-in"


@dataclass(frozen=True)
class Match:
    """A glossary term found in a text (``start`` is its character offset, for order)."""

    entry: Entry
    start: int
    surface: str  # the text as written in the question


@dataclass
class Glossary:
    """Entries indexed for matching: CJK terms by substring, English terms by word sequence."""

    entries: dict[str, Entry] = field(default_factory=dict)  # lowercase term -> entry

    def __post_init__(self) -> None:
        self._cjk: list[Entry] = []
        self._latin: dict[str, list[tuple[tuple[str, ...], Entry]]] = {}
        self._reindex()

    def _reindex(self) -> None:
        self._cjk = sorted(
            (e for e in self.entries.values() if _CJK_RE.search(e.term)),
            key=lambda e: len(e.term),
            reverse=True,
        )
        self._latin = {}
        for e in self.entries.values():
            if _CJK_RE.search(e.term):
                continue
            key = tuple(words(e.term))
            if key:
                self._latin.setdefault(key[0], []).append((key, e))
        for cands in self._latin.values():
            cands.sort(key=lambda item: len(item[0]), reverse=True)

    def add(self, entry: Entry) -> None:
        """Add or replace the entry for ``entry.term``."""
        self.entries[entry.term.lower()] = entry
        self._reindex()

    def __len__(self) -> int:
        return len(self.entries)

    def products(self) -> list[Entry]:
        return [e for e in self.entries.values() if e.kind == "product"]

    def match(self, text: str) -> list[Match]:
        """Every glossary term in ``text``, in order of appearance, overlaps resolved.

        CJK terms: longest first, a term inside an already matched one is skipped.
        English terms: at each word the longest term wins; matched words are consumed.
        """
        found: list[Match] = []
        if _CJK_RE.search(text):
            covered = bytearray(len(text))
            for e in self._cjk:
                start = text.find(e.term)
                while start != -1:
                    end = start + len(e.term)
                    if not any(covered[start:end]):
                        covered[start:end] = b"\x01" * len(e.term)
                        found.append(Match(e, start, e.term))
                    start = text.find(e.term, end)
        found.extend(self._match_latin(text))
        found.sort(key=lambda m: m.start)
        return found

    def _match_latin(self, text: str) -> list[Match]:
        spans = [(m.start(), m.end(), normalize_word(m.group(0))) for m in _WORD_RE.finditer(text)]
        keys = [s[2] for s in spans]
        used = [False] * len(keys)
        out: list[Match] = []
        for i, key in enumerate(keys):
            if used[i]:
                continue
            for term_words, entry in self._latin.get(key, ()):
                hit = _match_at(keys, used, i, term_words)
                if hit is not None:
                    for j in hit:
                        used[j] = True
                    out.append(Match(entry, spans[i][0], text[spans[i][0] : spans[hit[-1]][1]]))
                    break
        return out


def _match_at(keys: list[str], used: list[bool], i: int, term: tuple[str, ...]) -> list[int] | None:
    """Positions of ``term``'s words starting at ``i`` (gaps of at most MAX_GAP), or None."""
    pos = [i]
    j = i
    for w in term[1:]:
        for k in range(j + 1, min(len(keys), j + 2 + MAX_GAP)):
            if keys[k] == w and not used[k]:
                pos.append(k)
                j = k
                break
        else:
            return None
    return pos


def parse_lines(text: str, source: str) -> list[Entry]:
    """Entries of a glossary file's text; ConfigError naming ``source:line`` when malformed."""
    out: list[Entry] = []
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) < 2 or not parts[0].strip():
            raise ConfigError(
                f"{source}:{no}: a glossary line is term<TAB>expansions[<TAB>kind]",
                hint="separate the columns with one TAB character",
            )
        kind = parts[2].strip().lower() if len(parts) > 2 and parts[2].strip() else "alias"
        if kind not in KINDS:
            raise ConfigError(f"{source}:{no}: unknown glossary kind '{kind}'",
                              hint=f"use one of: {', '.join(KINDS)}")  # fmt: skip
        exps = tuple(e.strip() for e in re.split(r"[;；]", parts[1]) if e.strip())
        if not exps and kind != "product":
            raise ConfigError(f"{source}:{no}: glossary term '{parts[0].strip()}' has no expansion")
        out.append(Entry(parts[0].strip(), exps, kind, source))
    return out


def _zh_en_entries() -> list[Entry]:
    """The index-time Chinese glossary (``term<TAB>a;b``, several words per expansion)."""
    return parse_lines(ZH_EN_GLOSSARY_PATH.read_text(encoding="utf-8"), "zh_en_glossary.tsv")


@lru_cache(maxsize=8)
def load_glossary(extra: tuple[str, ...] = ()) -> Glossary:
    """The built-in glossaries plus the site files ``extra`` (later files win per term).

    Raises ConfigError for a missing or malformed site file (naming file and line).
    """
    g = Glossary()
    entries = _zh_en_entries()
    entries += parse_lines(OPS_GLOSSARY_PATH.read_text(encoding="utf-8"), "ops_glossary.tsv")
    for name in extra:
        path = Path(name).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(
                f"retrieval.glossary: cannot read {path}: {exc}",
                hint="fix or remove the file from retrieval.glossary in the config",
            ) from exc
        entries += parse_lines(text, str(path))
    for e in entries:
        g.entries[e.term.lower()] = e
    g._reindex()
    return g
