#!/usr/bin/env python3
"""What the redactor masks in the repository's own incident bundles: false positives, counted.

The eval bundles (``evals/*/*/``) and the demo bundles (``src/opsmate/data/demo/``) carry
no real secret (one planted ``DB_PASSWORD``-style value here and there aside), so almost
everything the redactor masks in them is a false positive: an identifier, a digest, an
alert name, a certificate. This script runs the redactor over every input as the tools see
it (log records and Kubernetes objects as structured data, metric results, runbook text)
and prints, per set, how many strings were read and changed, then every distinct masked
value (shortened) with where it was, so a person can judge each one.

Usage::

    .venv/bin/python benchmarks/redact_false_positives.py                 # every set
    .venv/bin/python benchmarks/redact_false_positives.py evals/blind5    # some bundles
    .venv/bin/python benchmarks/redact_false_positives.py --out results/redact_fp.json

To compare two versions of the redactor, run it once per version (e.g. with
``PYTHONPATH`` pointing at an older ``src``) and diff the JSON files.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
MASK = "[REDACTED]"


def bundles(roots: list[Path]) -> Iterator[Path]:
    """Every bundle folder (one holding bundle.yaml) under ``roots``."""
    for root in roots:
        for marker in sorted(root.rglob("bundle.yaml")):
            yield marker.parent


def changed(before: Any, after: Any, path: str) -> Iterator[tuple[str, str, str]]:
    """(path, original, redacted) of each string the redaction changed."""
    if isinstance(before, str):
        if before != after:
            yield path, before, str(after)
    elif isinstance(before, dict) and isinstance(after, dict):
        for (k, v), v2 in zip(before.items(), after.values(), strict=False):
            yield from changed(v, v2, f"{path}.{k}")
    elif isinstance(before, list) and isinstance(after, list):
        for v, v2 in zip(before, after, strict=False):
            yield from changed(v, v2, f"{path}[]")


def masked_parts(original: str, redacted: str) -> list[str]:
    """The pieces of ``original`` that became ``[REDACTED]`` (prefix/suffix alignment)."""
    out: list[str] = []
    pieces = redacted.split(MASK)
    pos = 0
    for i, piece in enumerate(pieces[:-1]):
        start = original.find(piece, pos) if i else 0
        if start < 0:
            break
        start += len(piece)
        nxt = pieces[i + 1]
        end = original.find(nxt, start) if nxt else len(original)
        if end < 0:
            end = len(original)
        out.append(original[start:end])
        pos = end
    return out or [original]


def inputs(bundle: Path) -> Iterator[tuple[str, Any]]:
    """(kind, value) of each input as the tools read it."""
    logs = bundle / "logs.ndjson"
    if logs.is_file():
        for line in logs.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                yield "log", json.loads(line)
            except ValueError:
                yield "log", line
    for path in sorted((bundle / "k8s").glob("*.yaml")) if (bundle / "k8s").is_dir() else []:
        try:
            docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
        except yaml.YAMLError:
            continue
        for doc in docs:
            if doc is not None:
                yield "k8s", doc
    metrics = bundle / "metrics.yaml"
    if metrics.is_file():
        try:
            recorded = yaml.safe_load(metrics.read_text(encoding="utf-8"))
        except yaml.YAMLError:
            recorded = None
        if recorded is not None:
            yield "metrics", recorded
    runbooks = bundle / "runbooks"
    if runbooks.is_dir():
        for md in sorted(runbooks.rglob("*.md")):
            yield "runbook", md.read_text(encoding="utf-8", errors="replace")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roots", nargs="*", type=Path)
    ap.add_argument("--out", type=Path, help="also write the numbers as JSON here")
    ap.add_argument("--show", type=int, default=60, help="distinct masked values listed")
    args = ap.parse_args()
    from opsmate.tools.redact import Redactor

    roots = args.roots or [REPO / "evals", REPO / "src" / "opsmate" / "data" / "demo"]
    redactor = Redactor()
    strings = 0
    changes = 0
    per_set: Counter[str] = Counter()
    values: dict[str, tuple[int, str]] = {}
    t0 = time.perf_counter()
    n_bundles = 0
    for bundle in bundles(roots):
        n_bundles += 1
        try:
            rel = bundle.relative_to(REPO)
        except ValueError:
            rel = bundle
        group = rel.parts[1] if rel.parts[0] == "evals" else "demo"
        for kind, value in inputs(bundle):
            out, n = redactor.redact_obj(value)
            strings += _count_strings(value)
            for where, original, redacted in changed(value, out, kind):
                changes += 1
                per_set[group] += 1
                for part in masked_parts(original, redacted):
                    key = part[:80]
                    seen = values.get(key)
                    values[key] = ((seen[0] if seen else 0) + 1, f"{rel}:{where}")
    secs = time.perf_counter() - t0
    print(f"{n_bundles} bundles, {strings} strings, {changes} changed, {secs:.1f} s")
    for group, n in sorted(per_set.items()):
        print(f"  {group:<14} {n} changed strings")
    print(f"{len(values)} distinct masked values:")
    ranked = sorted(values.items(), key=lambda kv: -kv[1][0])
    for value, (count, where) in ranked[: args.show]:
        print(f"  {count:>4}  {value!r}  ({where})")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "bundles": n_bundles,
            "strings": strings,
            "changed": changes,
            "per_set": dict(per_set),
            "masked": {v: {"count": c, "where": w} for v, (c, w) in ranked},
        }
        args.out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return 0


def _count_strings(value: Any) -> int:
    if isinstance(value, str):
        return 1
    if isinstance(value, dict):
        return sum(_count_strings(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_strings(v) for v in value)
    return 0


if __name__ == "__main__":
    sys.exit(main())
