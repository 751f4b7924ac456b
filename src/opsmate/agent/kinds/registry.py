"""The catalog of cards, and which card a fact is.

``card_for(fact)`` is the failure mode of a fact: the first finer card of its kind whose
reasons / words select it (cards are tried in catalog order, most specific first), else
the kind's base card. ``base(kind)`` is the base card; ``by_id`` one card;
``candidates(question)`` the cards whose symptom words the question uses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import timedelta
from functools import lru_cache

from opsmate.agent.kinds.card import Card, Role, Trait
from opsmate.agent.observe.facts import Fact, FactKind


@lru_cache(maxsize=1)
def cards() -> tuple[Card, ...]:
    """Every card: the base card of each kind first, then the finer failure modes."""
    from opsmate.agent.kinds.catalog import CARDS

    ids = [c.id for c in CARDS]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ValueError(f"failure-mode cards with the same id: {sorted(dup)}")
    return CARDS


@lru_cache(maxsize=1)
def _index() -> tuple[dict[FactKind, Card], dict[FactKind, tuple[Card, ...]], dict[str, Card]]:
    bases: dict[FactKind, Card] = {}
    finer: dict[FactKind, list[Card]] = {}
    ids: dict[str, Card] = {}
    for c in cards():
        ids[c.id] = c
        if c.base:
            bases.setdefault(c.fact, c)
        else:
            finer.setdefault(c.fact, []).append(c)
    return bases, {k: tuple(v) for k, v in finer.items()}, ids


def base(kind: FactKind) -> Card:
    """The base card of a kind (every kind has one: a test proves it)."""
    return _index()[0][kind]


def by_id(card_id: str) -> Card:
    return _index()[2][card_id]


def finer(kind: FactKind) -> tuple[Card, ...]:
    """The failure modes of a kind finer than its base card, in catalog order."""
    return _index()[1].get(kind, ())


@lru_cache(maxsize=8192)
def _lookup(kind: FactKind, reason: str, quote: str, message: str) -> Card:
    probe = Fact(
        key="", statement="", kind=kind, reason=reason or None, quote=quote, message=message
    )
    for c in finer(kind):
        if c.selects(probe):
            return c
    return base(kind)


def error_mode(text: str) -> Card | None:
    """The failure mode an error line's words name (a finer card of logged errors: a broker
    ACL, a pool run dry), or None: a line its level calls a warning that says one of them is
    an error that happened."""
    card = _lookup(FactKind.LOG_ERROR, "", text[:2000], "")
    return None if card.base else card


def card_for(f: Fact) -> Card:
    """The failure mode of fact ``f``."""
    return _lookup(f.kind, f.reason or "", f.quote or "", f.message or "")


@lru_cache(maxsize=1)
def _any_level() -> re.Pattern[str] | None:
    words = [f"(?:{c.words})" for c in cards() if c.any_level and c.words]
    return re.compile("|".join(words), re.I) if words else None


def logged_at_any_level(text: str) -> bool:
    """Whether a line is a failure its software logs at an informational level (a card with
    ``any_level`` whose words select it): read as a warning, whatever its level. One pattern
    for every such card, compiled once: this runs for each information line read."""
    pattern = _any_level()
    return pattern is not None and pattern.search(text) is not None


def role(f: Fact | FactKind) -> Role:
    """The role of a fact (its card's) or of a kind (its base card's)."""
    return card_for(f).role if isinstance(f, Fact) else base(f).role


def kinds_with(trait: Trait) -> frozenset[FactKind]:
    """The kinds whose base card has ``trait``."""
    return frozenset(c.fact for c in cards() if c.base and trait in c.traits)


def _starts_a_word(text: str, i: int) -> bool:
    """Whether position ``i`` of ``text`` starts a word, or a capitalised part of one."""
    if i == 0 or not text[i - 1].isalpha():
        return True
    return text[i - 1].islower() and text[i].isupper()


def candidates(question: str) -> list[Card]:
    """Cause cards whose symptom words (``asks``) the question uses (at the start of a
    word), base cards last; the others by how telling the words they were chosen by are: a
    word that selects one card ("drop") says more than one that selects many ("connect")."""
    said: dict[str, set[str]] = {}  # card id -> the words of the question that selected it
    for c in cards():
        if c.asks and c.role == Role.CAUSE:
            # a symptom word starts a word: "space" is not said by "namespace"; a word
            # inside a name written in camel case is ("DNS" in "CoreDNS")
            hits = {
                m.group(0).lower()
                for m in re.finditer(rf"(?:{c.asks})", question, re.I)
                if _starts_a_word(question, m.start())
            }
            if hits:
                said[c.id] = hits
    share: dict[str, int] = {}
    for hits in said.values():
        for w in hits:
            share[w] = share.get(w, 0) + 1
    weight = {i: sum(1 / share[w] for w in hits) for i, hits in said.items()}
    out = [c for c in cards() if c.id in said]
    return sorted(out, key=lambda c: (c.base, -round(weight[c.id], 3)))


# what is seen: the symptoms and the errors that were read
_SEEN = frozenset(
    {FactKind.ERROR_RATE, FactKind.LATENCY, FactKind.ALERT, FactKind.LOG_ERROR,
     FactKind.LOG_WARNING, FactKind.DEPENDENCY_FAILURE, FactKind.LAST_WORDS,
     FactKind.PROBE_FAILURE, FactKind.CONTAINER_EXIT}
)  # fmt: skip


def seen(card: Card, question: str, facts: Iterable[Fact]) -> bool:
    """Whether the question or the symptoms and errors read (``facts``) show ``card``'s
    failure mode the one way it shows itself (its ``seen_as``); a card without one shows
    any way."""
    if not card.seen_as:
        return True
    texts = [
        question,
        *(
            f"{f.quote or ''} {f.message or ''}"
            for f in facts
            if f.kind in _SEEN and f.severity != "info"  # context (how long work takes) shows none
        ),
    ]
    return any(re.search(card.seen_as, t, re.I) for t in texts if t)


def weak_root(f: Fact) -> bool:
    """A root cause that says little on its own: a failure mode that is itself an effect
    (a caller's refused connection, a probe that times out) or an unclassified error line.
    An investigation does not stop on one while checks remain."""
    card = card_for(f)
    return (
        card.needs_deeper
        or (card.base and card.fact == FactKind.LOG_ERROR)
        or run_down_elsewhere(f)
    )


def run_down_elsewhere(f: Fact) -> bool:
    """A limit its card says a failure elsewhere runs down (a pool that runs dry while its
    statements wait on locks in the database): not a failure of its own that settles why,
    and not one that stops the walk into what it depends on."""
    card = card_for(f)
    return bool(card.deeper_cards) and not card.has(Trait.OWN_LIMIT)


def too_few(f: Fact) -> bool:
    """Fewer occurrences than make the failure act: below the card's ``at_least``; or, for a
    failure that acts only after ``at_least`` in a row (a probe's failureThreshold), fewer
    than three runs' worth spread over ten minutes or more: a flap (at most a couple of
    brief episodes), not a pod taken out of service."""
    need = card_for(f).at_least
    if f.count < need:
        return True
    if need < 3 or f.time is None or f.last_time is None:
        return False
    return f.last_time - f.time >= timedelta(minutes=10) and f.count < 3 * need
