"""``--save-bundle`` of replayed runs: the demo and scenario bundles, saved and replayed,
give the same report; the saved bundle holds the part of the bundle that was read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from capture_env import bundle_files, opsmate

REPO = Path(__file__).resolve().parents[2]
SAME = ("status", "root_cause", "facts", "hypotheses", "summary", "runbooks", "unfinished")


def _report(*args: str) -> dict:
    out = opsmate(None, "diagnose", "--json", "--model", "none", *args)
    assert out.returncode in (0, 1), out.stderr[-3000:]
    return json.loads(out.stdout)


@pytest.mark.parametrize(
    "source",
    [
        "--demo",
        "evals/scenarios/red-herring-two-symptoms",
        "evals/scenarios/slow-step-noisy-namespace",
    ],
)
def test_saved_replay_gives_the_same_report(source: str, tmp_path: Path) -> None:
    saved = tmp_path / "saved.tar.gz"
    args = ["--demo"] if source == "--demo" else ["--bundle", str(REPO / source)]
    first = _report(*args, "--save-bundle", str(saved))
    second = _report("--bundle", str(saved))
    for key in SAME:
        assert first[key] == second[key], key
    assert [e["excerpt"] for e in first["evidence"]] == [e["excerpt"] for e in second["evidence"]]
    files = bundle_files(saved)
    meta = yaml.safe_load(files["bundle.yaml"])
    assert meta["question"] == first["question"]
    assert meta["capture"]["by"] == "opsmate diagnose --save-bundle"
    if "red-herring" in source:  # a subset: the records the calls read, not the whole bundle
        original = (REPO / source / "logs.ndjson").read_text(encoding="utf-8").splitlines()
        kept = files["logs.ndjson"].decode().splitlines()
        assert 0 < len(kept) < len(original)


def test_save_bundle_write_failure_names_the_file_after_the_report(tmp_path: Path) -> None:
    target = tmp_path / "gone" / "x.tar.gz"
    out = opsmate(None, "diagnose", "--demo", "--json", "--save-bundle", str(target))
    assert out.returncode == 2 and str(target) in out.stderr and not out.stdout
