"""The canary test: one canary of every secret class in every input, absent from every output.

A bundle built in a tmp dir (``conftest.outputs``, ``canary_bundle``) carries the canaries
in its logs, events, annotations, metric labels and runbooks; the question and a follow-up
carry their own.
Every output path runs once: ``diagnose --json`` / ``--markdown`` / rich, ``opsmate tool``
(human and JSON) for each tool that reads those inputs, ``opsmate index`` + ``search``
over the bundle's runbooks, a session with a scripted model (its saved file, its reports,
the prompts the model received), the audit log, and the TUI (every message the bridge
posts, the saved report, the runbook viewer). Each output is one test: no canary in it,
and the ``seen-XX`` markers prove the planted text really reached it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from canary_bundle import leaks, plants
from safety_util import OUTPUTS, SEARCH_QUERY

from opsmate.tools.redact import default_redactor

# which markers each output must show (the planted text demonstrably reached it)
FLOW: dict[str, tuple[str, ...]] = {
    "tool search_logs": ("seen-LG",),
    "tool search_logs --json": ("seen-LG",),
    "tool get_events": ("seen-EV",),
    "tool get_events --json": ("seen-EV",),
    "tool rollout_history --json": ("seen-AN",),
    "tool query_metrics --json": ("seen-ML",),
    "search --json": ("seen-RB",),
    "diagnose --json": ("seen-QU", "seen-LG"),
    "diagnose --markdown": ("seen-QU",),
    "session file": ("seen-QU", "seen-FU", "seen-LG", "seen-EV", "seen-RB"),
    "model prompts": ("seen-QU", "seen-LG"),
    "report json (follow-up)": ("seen-FU",),
    "tui messages": ("seen-QU", "seen-FU", "seen-LG"),
    "tui runbook viewer": ("seen-RB",),
}


@pytest.mark.parametrize("name", OUTPUTS)
def test_no_canary_in_output(outputs: dict[str, str], name: str) -> None:
    text = outputs[name]
    assert text.strip(), f"{name}: no output at all"
    found = leaks(text)
    assert not found, f"{name} leaks {len(found)} canaries:\n" + "\n".join(found[:40])
    missing = [m for m in FLOW.get(name, ()) if m not in text]
    assert not missing, f"{name}: the planted text never reached it ({missing})"


def test_every_output_path_was_checked(outputs: dict[str, str]) -> None:
    assert sorted(k for k in outputs if not k.startswith("_")) == sorted(OUTPUTS)


def test_search_output_cleaned_by_the_redactor(outputs: dict[str, str]) -> None:
    """What ``opsmate search`` must print: the response through ``Redactor.clean`` and
    ``dumps_json`` (the call ``commands/search.py`` makes; see the README, Safety)."""
    from opsmate.config import Settings
    from opsmate.knowledge.retrieve import open_retriever
    from opsmate.textsafe import dumps_json, has_control
    from opsmate.tools.redact import Redactor

    retriever = open_retriever(Path(outputs["_index_dir"]), Settings())
    raw = retriever.search(SEARCH_QUERY, top_k=10)
    assert leaks(dumps_json(raw.model_dump(mode="json"))), "no canary to clean: proves nothing"
    clean = Redactor().clean(raw)
    assert type(clean) is type(raw) and len(clean.hits) == len(raw.hits)
    text = dumps_json(clean.model_dump(mode="json"))
    assert not leaks(text) and not has_control(text)
    assert "seen-RB" in text


def test_the_canaries_would_be_found() -> None:
    """The leak detector itself: a raw planted text is caught, its masked form is not."""
    for p in plants("LG"):
        assert leaks(p.text), f"{p.cls}: the canary is not in its own planted text"
        masked, n = default_redactor().redact_text(p.text)
        assert n >= 1 and not leaks(masked), f"{p.cls}: {masked!r}"


def test_every_class_is_masked_once_and_idempotent() -> None:
    for p in plants("ID"):
        once, n1 = default_redactor().redact_text(p.text)
        twice, n2 = default_redactor().redact_text(once)
        assert n1 >= 1 and n2 == 0 and twice == once, (p.cls, once, twice)
