"""Across the bundles of evals/, the demos and the peer bundles: root causes a person reads
in ten seconds (at most 50 words), summaries of at most three sentences, no sentence said
twice. One process runs the engine in-process over them: every demo and scenario, and a
fixed third of each other set (the whole walk took minutes once the sets grew past 200
bundles; ``benchmarks/eval_sets.py`` runs every bundle)."""

from __future__ import annotations

from pathlib import Path

import walk


def test_every_bundle_reads_short_and_says_each_sentence_once(
    repo_root: Path, tmp_path: Path
) -> None:
    bundles = walk.eval_bundles(repo_root)
    every = [b for b in bundles if b.parent.name in ("scenarios", "demo")]
    sampled = [b for b in bundles if b not in every][::3]
    items = [(b, *walk.answer_key(b)) for b in every + sampled]
    items += [(walk.stage(b, tmp_path), None, None) for b in walk.peer_bundles()[::3]]
    assert len(items) >= 20, "the eval scenarios and demos are part of this walk"
    problems: list[str] = []
    roots = 0
    for bundle, question, env in items:
        report = walk.diagnose(bundle, question, env)
        statement = (report.get("root_cause") or {}).get("statement") or ""
        roots += bool(statement)
        if len(statement.split()) > 50:
            problems.append(f"{bundle.name}: root cause of {len(statement.split())} words")
        n = len(walk._SENTENCE.split(report["summary"].strip()))
        if n > 3:
            problems.append(f"{bundle.name}: summary of {n} sentences")
        problems += [f"{bundle.name}: said twice: {r}" for r in walk.repeated(report)]
        if statement and not any(s["kind"] == "mitigation" for s in report["next_steps"]):
            problems.append(f"{bundle.name}: a root cause without a mitigation step")
        cited = {i for i in report["root_cause"]["evidence"]} if statement else set()
        for group in ("hypotheses", "facts", "next_steps", "chain"):
            for item in report.get(group) or []:
                cited |= set(item["evidence"])
        cited |= {i for c in report["conflicts"] for i in c["sources"]}
        listed = {r["id"] for r in report["runbooks"]}
        if listed - cited:
            problems.append(f"{bundle.name}: runbooks listed but not cited: {listed - cited}")
    assert roots >= 10
    assert not problems, "\n".join(problems)
