"""The failure-mode catalog: the base card of every fact kind, then the finer failure modes
by family. Order matters among the finer cards of one kind: the first that selects a fact
is its card, so narrower families come first (disk before generic saturation, an upstream
rate limit before CPU throttling)."""

from __future__ import annotations

from opsmate.agent.kinds.card import Card
from opsmate.agent.kinds.catalog import (
    application,
    changes,
    network,
    nodes,
    pods,
    routing,
    runtime,
    scheduling,
    storage,
    workloads,
)
from opsmate.agent.kinds.catalog.base import BASE

# runtime limits before storage: /dev/shm's "No space left on device" is not a disk's
FAMILIES = (pods, scheduling, runtime, storage, routing, network, nodes, workloads, application,
            changes)  # fmt: skip

CARDS: tuple[Card, ...] = (*BASE, *(c for m in FAMILIES for c in m.CARDS))
