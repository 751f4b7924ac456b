"""Run the engine in-process over scenario bundles and check what a reader sees.

Used by the report tests: every bundle of ``evals/`` and the built-in demos (with their
answer key's question and environment, as ``opsmate eval`` runs them), and each peer
bundle of ``/work/shared/peer-dev/bundles`` staged as its ``run.py`` stages it (parts
linked, no answer key, ``logs.ndjson.gz`` unpacked).
"""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path
from typing import Any

import yaml

PEER = Path("/work/shared/peer-dev/bundles")
PARTS = ("bundle.yaml", "metrics.yaml", "logs.ndjson", "k8s", "runbooks")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'`(])")


def eval_bundles(repo: Path) -> list[Path]:
    found = sorted(p.parent for p in (repo / "evals").glob("*/*/bundle.yaml"))
    found += sorted(p.parent for p in (repo / "src/opsmate/data/demo").glob("0*/bundle.yaml"))
    return found


def peer_bundles() -> list[Path]:
    if not PEER.is_dir():
        return []
    return sorted(d for d in PEER.iterdir() if (d / "bundle.yaml").is_file())


def stage(bundle: Path, into: Path) -> Path:
    """A copy of ``bundle`` as peer-dev's run.py stages it."""
    d = into / bundle.name
    d.mkdir(parents=True)
    for part in PARTS:
        if (bundle / part).exists():
            (d / part).symlink_to(bundle / part)
    gz = bundle / "logs.ndjson.gz"
    if gz.exists():
        with gzip.open(gz, "rb") as f, (d / "logs.ndjson").open("wb") as g:
            shutil.copyfileobj(f, g)
    return d


def diagnose(bundle: Path, question: str | None = None, env: str | None = None) -> dict[str, Any]:
    """The report JSON of one investigation (deterministic engine)."""
    from opsmate.agent.session.session import Session
    from opsmate.config import Settings

    session = Session.open(settings=Settings(), bundle=bundle, model="none", env=env)
    try:
        return session.ask(question).to_json()
    finally:
        session.close()


def answer_key(bundle: Path) -> tuple[str | None, str | None]:
    f = bundle / "expected.yaml"
    if not f.is_file():
        return None, None
    key = yaml.safe_load(f.read_text()) or {}
    return key.get("question"), key.get("env")


def sentences(text: str) -> list[str]:
    """The sentences of a text, normalised (case, spaces, evidence ids)."""
    out = []
    for s in _SENTENCE.split(text or ""):
        s = re.sub(r"\s*[\[(](?:[ER]\d+(?:,\s*)?)+[\])]", "", s)
        s = " ".join(s.lower().split()).strip(" .;")
        if len(s.split()) >= 4:
            out.append(s)
    return out


def said(report: dict[str, Any]) -> list[tuple[str, str]]:
    """(where, sentence) for every sentence the report says to a reader."""
    out: list[tuple[str, str]] = []

    def add(where: str, text: str | None) -> None:
        out.extend((where, s) for s in sentences(text or ""))

    add("summary", report.get("summary"))
    add("root_cause", (report.get("root_cause") or {}).get("statement"))
    for key, field in (
        ("chain", "statement"),
        ("hypotheses", "statement"),
        ("facts", "statement"),
        ("next_steps", "action"),
        ("conflicts", "statement"),
    ):
        for n, item in enumerate(report.get(key) or []):
            add(f"{key}[{n}]", item.get(field))
    for n, text in enumerate(report.get("unfinished") or []):
        add(f"unfinished[{n}]", text)
    add("follow_up", (report.get("follow_up") or {}).get("answer"))
    return out


def repeated(report: dict[str, Any]) -> list[str]:
    """Sentences said more than once, with where."""
    seen: dict[str, str] = {}
    out = []
    for where, s in said(report):
        if s in seen:
            out.append(f"{seen[s]} & {where}: {s[:100]}")
        else:
            seen[s] = where
    return out
