"""The engine reads tool answers through typed payloads, never ``result.data`` by key.

Every module of the engine and of what drives it (agent, capture, alerting, evaluation,
tui) is read as an AST: no attribute read ``.data`` at all, on a ToolResult or anything
else (the simplest honest rule: a name is not typed in the AST). The envelope's own reads
of ``data`` (its JSON text, a verbatim quote) live on :class:`~opsmate.tools.base.ToolResult`
(``data_json``, ``find_text``); typed reads go through ``result.payload`` /
``result.payload_as(Model)`` (:mod:`opsmate.records.payloads`).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "opsmate"
PACKAGES = ("agent", "capture", "alerting", "evaluation", "tui")

# (module path relative to src/opsmate, line text) of genuine `.data` reads that are not a
# tool answer's data, each with the reason. Keep it empty unless such a use is added.
ALLOWED: dict[tuple[str, str], str] = {}


def _data_reads() -> list[tuple[str, int, str]]:
    found = []
    for pkg in PACKAGES:
        for path in sorted((SRC / pkg).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            lines = text.splitlines()
            for node in ast.walk(ast.parse(text, str(path))):
                if isinstance(node, ast.Attribute) and node.attr == "data":
                    rel = str(path.relative_to(SRC))
                    line = lines[node.lineno - 1].strip()
                    if (rel, line) not in ALLOWED:
                        found.append((rel, node.lineno, line))
    return found


def test_no_data_attribute_reads_in_the_engine() -> None:
    found = _data_reads()
    assert not found, "read result.payload / payload_as(Model), not .data:\n" + "\n".join(
        f"  {rel}:{n}: {line}" for rel, n, line in found
    )


def test_the_rule_sees_a_data_read(tmp_path: Path) -> None:
    tree = ast.parse("def f(result):\n    return result.data.get('pods')\n")
    assert any(isinstance(n, ast.Attribute) and n.attr == "data" for n in ast.walk(tree))


def test_packages_exist() -> None:
    for pkg in PACKAGES:
        assert (SRC / pkg).is_dir(), pkg
