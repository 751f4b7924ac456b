"""The import graph of ``src/opsmate``: no circles, and no import from a lower floor to a
higher one.

Every ``import`` / ``from ... import`` of an ``opsmate`` module is an edge, wherever it is
written (module level, inside a function, under ``TYPE_CHECKING``): a lazy import is
still a dependency. ``from opsmate.x import y`` where ``y`` is a submodule is an edge to
``opsmate.x.y`` (and to ``opsmate.x``, whose ``__init__`` runs).

Floors, lowest first (a module may import its own floor and the ones below):
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

FLOORS: list[tuple[str, ...]] = [
    # 0, 1: foundations (errors, paths ... then credentials, config, health)
    ("opsmate", "errors", "paths", "textsafe", "timeparse", "safeyaml", "fsguard"),
    ("credentials", "config", "health"),
    # 2: typed records and model backends
    ("records", "llm", "loganalysis"),
    # 3: runbook knowledge (indexing and retrieval)
    ("knowledge",),
    # 4: data sources behind the tool envelope
    ("tools",),
    # 5: the engine and what drives it without a face
    ("agent", "capture", "alerting", "probes", "history"),
    # 6: evaluation and the terminal UI (a face over the engine)
    ("evaluation", "tui"),
    # 7: the command implementations (one of which starts the TUI)
    ("commands",),
    # 8: the Typer entry point
    ("cli",),
]

# Modules whose floor is not their package's: the tool argument models are the stable tool
# contract (contracts section 4) that runbook front matter is validated against; they import
# nothing but pydantic, the kind table and typed records, so they stand on floor 2 although
# they live in tools/ beside the executor that enforces them.
MODULE_FLOORS = {
    "opsmate.tools.schemas": 2,
    "opsmate.tools.k8s_kinds": 2,
    # redaction is a pure text function (it imports the ground floor only): the runbook
    # reranker redacts what it sends a model with it, so it stands on floor 2 too
    "opsmate.tools.redact": 2,
    "opsmate.tools.redact_rules": 2,
    "opsmate.tools.redact_shapes": 2,
}

# Known circles, each to be removed by its owner (none today: keep it that way).
KNOWN_CYCLES: list[frozenset[str]] = []


def _modules() -> dict[str, Path]:
    out = {}
    for path in (SRC / "opsmate").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(module: str, node: ast.ImportFrom, is_pkg: bool) -> str | None:
    if node.level == 0:
        return node.module
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph() -> dict[str, set[str]]:
    """Module → the opsmate modules it imports (anywhere in its text)."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(mod, node, path.name == "__init__.py")
                if base:
                    targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                if target in mods and target != mod:
                    graph[mod].add(target)
    return graph


def floor_of(module: str) -> int:
    if module in MODULE_FLOORS:
        return MODULE_FLOORS[module]
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "opsmate"
    for i, names in enumerate(FLOORS):
        if top in names:
            return i
    raise AssertionError(f"{module}: package '{top}' has no floor; add it to FLOORS")


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return out


def test_every_package_has_a_floor() -> None:
    for mod in import_graph():
        floor_of(mod)


def test_no_import_circles() -> None:
    found = [c for c in _cycles(import_graph()) if frozenset(c) not in KNOWN_CYCLES]
    assert found == [], "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_import_from_a_lower_floor_to_a_higher_one() -> None:
    graph = import_graph()
    upward = sorted(
        f"{a} (floor {floor_of(a)}) -> {b} (floor {floor_of(b)})"
        for a, targets in graph.items()
        for b in targets
        if floor_of(b) > floor_of(a)
    )
    assert upward == [], "upward imports:\n" + "\n".join(upward)


@pytest.mark.parametrize(
    ("graph", "want"),
    [
        ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, [["a", "b", "c"]]),
    ],
)
def test_the_cycle_finder_finds_circles(graph: dict[str, set[str]], want: list[list[str]]) -> None:
    assert _cycles(graph) == want


def test_the_graph_sees_function_level_and_relative_imports() -> None:
    graph = import_graph()
    # a function-level import (load_model imports the scripted backend when asked for it)
    assert "opsmate.llm.scripted" in graph["opsmate.llm.base"]
    assert floor_of("opsmate.tools.loki.tools") == 4 and floor_of("opsmate.cli") == 8
