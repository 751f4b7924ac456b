"""The live-parity tests import the fixtures of tests/sources and tests/live by name."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for folder in (HERE, HERE.parent / "sources"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
