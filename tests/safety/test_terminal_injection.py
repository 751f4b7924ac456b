"""Terminal injection: no planted control sequence reaches any output, on any path.

The shared bundle (``canary_bundle``) carries each sequence of ``SEQUENCES`` (ESC[2J,
OSC 0 / 8 / 52, C1 CSI U+009B, BEL, C1 OSC, a carriage return, a bidi override) in the
question, a follow-up, log lines, event messages, annotations, metric labels and the
runbook, each after a marker ``inj-<name>``. One test per sequence per output path: the
raw sequence is absent, no control character is left (newline and tab aside), JSON carries
no escaped form of one either (they are stripped, not just escaped), and on the paths
where the planted text is known to arrive the marker proves it did.
"""

from __future__ import annotations

import json
import re

import pytest
from canary_bundle import SEQUENCES
from safety_util import OUTPUTS

from opsmate.textsafe import dumps_json, has_control, safe_text

# outputs every planted sequence demonstrably reaches (its marker is there)
FLOW = {
    "tool search_logs",
    "tool search_logs --json",
    "tool get_events",
    "tool get_events --json",
    "diagnose --json",
    "diagnose --markdown",
    "diagnose rich",
    "search --json",
    "session file",
    "model prompts (raw)",
    "report markdown",
    "tui messages",
    "tui saved report",
    "tui runbook viewer",
}
_ESCAPED = re.compile(r"\\u00(?:0[0-8bcef]|1[0-9a-f]|7f|[89][0-9a-f])|\\u20(?:2[a-e]|6[6-9])", re.I)


@pytest.mark.parametrize("name", OUTPUTS)
@pytest.mark.parametrize("seq", sorted(SEQUENCES))
def test_no_control_sequence_in_output(outputs: dict[str, str], name: str, seq: str) -> None:
    text = outputs[name]
    raw = SEQUENCES[seq]
    assert raw not in text, f"{name}: the raw {seq} sequence is printed"
    left = sorted({f"U+{ord(c):04X}" for c in text if has_control(c)})
    assert not left, f"{name}: control characters {left} reach it"
    escaped = sorted(set(_ESCAPED.findall(text)))
    assert not escaped, f"{name}: control characters only escaped, not removed: {escaped}"
    if name in FLOW:
        assert f"inj-{seq}" in text, f"{name}: the planted {seq} text never reached it"


@pytest.mark.parametrize("seq", sorted(SEQUENCES))
def test_safe_text_removes_the_whole_sequence(seq: str) -> None:
    clean = safe_text(f"before {SEQUENCES[seq]}after")
    assert clean.startswith("before ") and clean.endswith("after")
    assert not has_control(clean)
    for payload in ("pwned-title", "evil.example", "ZWNobyBwd25lZA", "c1-title", "2J"):
        assert payload not in clean, f"{seq}: {payload!r} survives as text: {clean!r}"


@pytest.mark.parametrize("seq", sorted(SEQUENCES))
def test_dumps_json_leaves_no_raw_control_and_round_trips(seq: str) -> None:
    value = {"message": f"x {SEQUENCES[seq]} y", "k\x9b": ["\u202e"]}
    text = dumps_json(value, indent=2)
    assert not has_control(text.replace("\n", "")), repr(text)
    assert json.loads(text) == value
