"""The engine is one core with two faces: importing it never loads Textual or the TUI.

Each check runs in a fresh interpreter, imports every module of the engine's
packages (``opsmate.agent``, ``opsmate.tools``, ``opsmate.knowledge``, ``opsmate.llm``),
the command implementations and ``opsmate.cli``, then lists what got loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

PROBE = textwrap.dedent(
    """
    import importlib, json, pkgutil, sys
    names = []
    for pkg in ("opsmate.agent", "opsmate.tools", "opsmate.knowledge", "opsmate.llm",
                "opsmate.commands"):
        mod = importlib.import_module(pkg)
        for info in pkgutil.walk_packages(mod.__path__, pkg + "."):
            names.append(info.name)
            importlib.import_module(info.name)
    importlib.import_module("opsmate.cli")
    loaded = sorted(m for m in sys.modules
                    if m == "textual" or m.startswith(("textual.", "opsmate.tui")))
    print(json.dumps({"imported": names, "loaded": loaded}))
    """
)


def _probe() -> dict[str, list[str]]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_engine_tools_knowledge_and_cli_import_without_textual() -> None:
    result = _probe()
    imported = set(result["imported"])
    # the probe really walked the engine (a broken walk must not pass as "clean")
    assert {
        "opsmate.agent.session.session",
        "opsmate.agent.loop.investigation",
        "opsmate.tools.executor",
    } <= imported
    assert "opsmate.commands.tui" in imported
    assert result["loaded"] == [], f"loaded by the engine or the CLI: {result['loaded']}"


def test_the_tui_does_load_textual() -> None:
    """The probe can see Textual when it is loaded (so the check above can fail)."""
    code = "import sys, opsmate.tui.app; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "True"
