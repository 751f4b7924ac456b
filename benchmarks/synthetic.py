"""Synthetic runbook corpora for the benchmarks, grown from the repo's ``runbooks/``.

Variant ``k`` of a runbook renames every service and component (``order-service`` ->
``order-service-k17``), shifts the numbers, and appends a sentence of words drawn
from the whole corpus, so variants share structure and vocabulary with the real
runbooks but are not duplicates (IDF and document lengths stay realistic).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUNBOOKS = REPO / "runbooks"
_NAMES = re.compile(
    r"\b(order-service|payment-service|inventory-service|api-gateway|orders-db|redis|kafka|"
    r"postgresql|order-projector|shop)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(?<![\w.])(\d{1,4})(?![\w.])")
_WORD = re.compile(r"[A-Za-z]{4,}")


def base_runbooks() -> list[tuple[str, str]]:
    """(relative path, text) of the repo's runbooks."""
    return [
        (p.relative_to(RUNBOOKS).as_posix(), p.read_text("utf-8"))
        for p in sorted(RUNBOOKS.rglob("*.md"))
        if p.name != "README.md"
    ]


def vocabulary(texts: list[str]) -> list[str]:
    return sorted({w.lower() for t in texts for w in _WORD.findall(t)})


def variant(text: str, k: int, vocab: list[str]) -> str:
    """Variant ``k`` of a runbook text (``k = 0`` is the original)."""
    if k == 0:
        return text
    rng = random.Random(k)
    text = _NAMES.sub(lambda m: f"{m.group(1)}-k{k}", text)
    text = _NUMBER.sub(lambda m: str(int(m.group(1)) + k), text)
    extra = " ".join(rng.sample(vocab, 12))
    return f"{text.rstrip()}\n\nVariant {k} notes: {extra}.\n"


def write_corpus(folder: Path, variants: int) -> int:
    """Write ``variants`` copies of every runbook under ``folder/vNNNN/``; returns files."""
    base = base_runbooks()
    vocab = vocabulary([t for _, t in base])
    n = 0
    for k in range(variants):
        for rel, text in base:
            p = folder / f"v{k:04d}" / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(variant(text, k, vocab), "utf-8")
            n += 1
    return n


def chunk_texts(n_chunks: int) -> list[str]:
    """``n_chunks`` index texts (heading path + chunk) from runbook variants."""
    from opsmate.knowledge.markdown import parse_runbook
    from opsmate.knowledge.store import index_text

    base = base_runbooks()
    vocab = vocabulary([t for _, t in base])
    out: list[str] = []
    k = 0
    while len(out) < n_chunks:
        for rel, text in base:
            doc = parse_runbook(variant(text, k, vocab), f"v{k}/{rel}")
            out.extend(index_text(c.heading_path, c.text) for c in doc.chunks)
        k += 1
    return out[:n_chunks]


def golden_queries() -> list[str]:
    import yaml

    data = yaml.safe_load((REPO / "tests" / "golden" / "retrieval.yaml").read_text("utf-8"))
    return [str(item["query"]) for item in data]
