"""The cause/symptom model, read from the failure-mode cards (:mod:`opsmate.agent.kinds`).

Symptoms are what the user sees: a crash loop, a pending pod, pods not ready, a failed
Job, a 5xx rate, latency, an alert. They are never a root cause: they are what a root
cause must explain, and they appear in the root-cause statement as supporting evidence.

Causes explain symptoms. Some are *conclusive* on their own, because they are the
system's own account of why (the kubelet's OOMKilled with the memory limit, the
scheduler's message, the registry's answer to an image pull, a referenced object proven
absent, a quota's refusal, a failing probe with its target). Others are *inferred*
from application output (the last lines a container wrote before it exited, a DNS or
connection failure to a named dependency, a configuration error, an error template
in the logs) and weigh by how specific they are and when they appeared.

Changes (a rollout, a one-off workload, a config reload) explain a problem that began
right after them; they are causes only with such timing, otherwise context.

Each card lists the symptom kinds it can explain and the deeper cause kinds that can
explain it in turn. Every function here takes a fact (its own card: a failure mode finer
than its kind may say more) or a kind (the kind's base card).
"""

from __future__ import annotations

from opsmate.agent.kinds.card import Card, Role
from opsmate.agent.kinds.registry import base, card_for
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K

__all__ = [
    "Role",
    "builds_up",
    "can_explain",
    "conclusive",
    "deeper",
    "role",
    "specificity",
    "symptom_rank",
]


def _card(x: Fact | K) -> Card:
    return card_for(x) if isinstance(x, Fact) else base(x)


def role(x: Fact | K) -> Role:
    return _card(x).role


def can_explain(cause: Fact | K, symptom: Fact | K) -> bool:
    """Whether ``cause`` can explain ``symptom`` (a symptom is named by its kind)."""
    kind = symptom.kind if isinstance(symptom, Fact) else symptom
    return kind in _card(cause).explains


def deeper(cause: Fact | K, other: Fact | K) -> bool:
    """Whether ``other`` can explain ``cause`` in turn."""
    kind = other.kind if isinstance(other, Fact) else other
    return kind in _card(cause).deeper or (isinstance(other, Fact) and builds_up(cause, other))


def builds_up(cause: Fact | K, other: Fact) -> bool:
    """Whether ``other``'s failure mode is one ``cause``'s card names as building up to it
    (``deeper_cards``: an archiver failing for days fills a disk)."""
    ids = _card(cause).deeper_cards
    return bool(ids) and card_for(other).id in ids


def conclusive(f: Fact) -> bool:
    """The system's own account of why: confirmed on its own."""
    return _card(f).conclusive or f.conclusive


def specificity(f: Fact) -> float:
    return _card(f).specificity


def symptom_rank(f: Fact | K) -> int:
    """The order in which a subject's symptoms are named in a root-cause sentence."""
    r = _card(f).symptom_rank
    return 99 if r is None else r
