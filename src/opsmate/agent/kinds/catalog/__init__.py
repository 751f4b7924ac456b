"""The failure-mode catalog: the base card of every fact kind, then the finer failure modes
by family. Order matters among the finer cards of one kind: the first that selects a fact
is its card, so narrower cards come first within a family module."""

from __future__ import annotations

from opsmate.agent.kinds.card import Card
from opsmate.agent.kinds.catalog.base import BASE

CARDS: tuple[Card, ...] = (*BASE,)
