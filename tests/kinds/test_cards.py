"""The failure-mode catalog is whole and consistent: every fact kind has a base card, every
finer card is reachable from its own example, the model's invariants hold, and
docs/failure-modes.md is the catalog's rendering."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from opsmate.agent.kinds import Role, base, card_for, cards
from opsmate.agent.kinds.doc import render
from opsmate.agent.observe.facts import Fact, FactKind
from opsmate.tools.k8s_kinds import KIND_TABLE
from opsmate.tools.schemas import ARGS_MODELS

FINER = [c for c in cards() if not c.base]


def test_every_fact_kind_has_a_base_card() -> None:
    for kind in FactKind:
        card = base(kind)
        assert card.fact == kind and card.base


def test_ids_are_unique_and_kebab_case() -> None:
    ids = [c.id for c in cards()]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", i) for i in ids)


def test_the_catalog_covers_the_field() -> None:
    assert len(cards()) >= 100
    sources = {s.split(":")[0] for c in cards() for s in c.catalog}
    for catalog in ("k8sgpt", "ChaosMesh", "RCAEval", "AIOpsLab", "HolmesGPT", "ITBench"):
        assert catalog in sources, catalog


@pytest.mark.parametrize("card", cards(), ids=lambda c: c.id)
def test_card_invariants(card) -> None:  # type: ignore[no-untyped-def]
    if card.role == Role.SYMPTOM:
        assert not card.explains and not card.conclusive and not card.deeper
    if card.conclusive:
        assert card.role == Role.CAUSE
    assert all(base(k).role == Role.SYMPTOM for k in card.explains), card.id
    assert all(base(k).role == Role.CAUSE for k in card.deeper), card.id
    if card.role in (Role.CAUSE, Role.CHANGE):
        assert card.phrase and card.check and card.mitigation, card.id
        assert card.explains, f"{card.id} explains nothing"
    for r in card.reads:
        assert r.tool in ARGS_MODELS or r.tool == "list_objects", (card.id, r.tool)
        kind = dict(r.args).get("kind")
        if kind:
            known = {k.kind for k in KIND_TABLE}
            assert kind in known, f"{card.id} reads unknown kind {kind}"
    if card.asks:
        re.compile(card.asks)


@pytest.mark.parametrize("card", FINER, ids=lambda c: c.id)
def test_each_failure_mode_selects_its_example_and_is_not_shadowed(card) -> None:  # type: ignore[no-untyped-def]
    reason, text = card.example
    f = Fact(key="k", statement=text, kind=card.fact, reason=reason or None, quote=text)
    assert card.selects(f), f"{card.id} does not select its own example {card.example}"
    assert card_for(f) is card, f"{card.id}'s example is taken by {card_for(f).id}"


def test_a_fact_with_no_finer_mode_gets_its_base_card() -> None:
    f = Fact(key="k", statement="s", kind=FactKind.LOG_ERROR, quote="something odd happened")
    assert card_for(f) is base(FactKind.LOG_ERROR)


def test_failure_modes_page_is_the_catalog(repo_root: Path) -> None:
    page = (repo_root / "docs" / "failure-modes.md").read_text(encoding="utf-8")
    assert page == render(), "run: python -m opsmate.agent.kinds.doc > docs/failure-modes.md"
