"""Failure modes as data: one card per way things break (see :mod:`.card`), the catalog
(:mod:`.catalog`) and the lookups every phase uses (:mod:`.registry`)."""

from opsmate.agent.kinds.card import Card, Read, Role, Trait, read
from opsmate.agent.kinds.registry import (
    base,
    by_id,
    card_for,
    cards,
    finer,
    kinds_with,
    logged_at_any_level,
    role,
    seen,
    too_few,
)

__all__ = [
    "Card",
    "Read",
    "Role",
    "Trait",
    "base",
    "by_id",
    "card_for",
    "cards",
    "finer",
    "kinds_with",
    "logged_at_any_level",
    "read",
    "role",
    "seen",
    "too_few",
]
