"""The engine never imports Textual, and its modules stay light to import."""

from __future__ import annotations

import subprocess
import sys


def test_engine_imports_without_textual_or_heavy_libraries() -> None:
    code = (
        "import sys\n"
        "import opsmate.agent.session.session, opsmate.agent.report.model\n"
        "import opsmate.commands.diagnose\n"
        "heavy = [m for m in ('textual', 'chromadb', 'llama_cpp', 'kubernetes', 'elasticsearch')"
        " if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""
