"""Shared fixtures. Tests never see the developer's own config, data or home.

The MiniLM ONNX embedding model (vector search) is found where a user has it: chromadb's
cache of the real home (``~/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx``, filled by
the first ``opsmate index`` with internet access), ``OPSMATE_TEST_MINILM_DIR``, or the
development machine's ``../shared/models``; the isolated test HOME gets it symlinked.
Without it, the tests marked ``needs_minilm`` skip with a reason saying how to get it
(``OPSMATE_TEST_MINILM_DIR=none`` simulates such a machine); everything else runs.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MINILM = Path("all-MiniLM-L6-v2") / "onnx"
SHARED_MODELS = REPO.parent / "shared" / "models" / MINILM
USER_CHROMA_CACHE = Path.home() / ".cache" / "chroma" / "onnx_models" / MINILM  # the real home
MINILM_HOW = (
    "the MiniLM ONNX embedding model is not on this machine: run `opsmate index PATH` once "
    "with internet access (chromadb downloads it into ~/.cache/chroma/onnx_models/"
    "all-MiniLM-L6-v2/onnx), or set OPSMATE_TEST_MINILM_DIR to a folder holding its "
    "model.onnx and tokenizer.json"
)
_SESSION_HOME: Path | None = None


def minilm_source() -> Path | None:
    """The folder holding the MiniLM ONNX files (see the module docstring), or None."""
    chosen = os.environ.get("OPSMATE_TEST_MINILM_DIR", "")
    if chosen.lower() == "none":
        return None
    candidates = [Path(chosen).expanduser()] if chosen else []
    for folder in [*candidates, USER_CHROMA_CACHE, SHARED_MODELS]:
        if (folder / "model.onnx").is_file() and (folder / "tokenizer.json").is_file():
            return folder
    return None


MINILM_SOURCE = minilm_source()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "needs_minilm: needs the MiniLM ONNX embedding model (skips without it)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if MINILM_SOURCE is not None:
        return
    skip = pytest.mark.skip(reason=MINILM_HOW)
    for item in items:
        if item.get_closest_marker("needs_minilm") is not None:
            item.add_marker(skip)


def _seeded_home(tmp_root: Path) -> Path:
    """A HOME whose chromadb cache holds the MiniLM ONNX files (symlinked, no copy)."""
    home = tmp_root / "home"
    onnx = home / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"
    onnx.mkdir(parents=True, exist_ok=True)
    if MINILM_SOURCE is not None:
        for f in MINILM_SOURCE.iterdir():
            dst = onnx / f.name
            if not dst.exists():
                os.symlink(f, dst)
    return home


@pytest.fixture(scope="session")
def session_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _seeded_home(tmp_path_factory.mktemp("session"))


@pytest.fixture(autouse=True)
def isolated_user_dirs(
    tmp_path: Path, session_home: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Point every user dir at tmp paths; HOME has the seeded embedding model."""
    monkeypatch.setenv("HOME", str(session_home))
    monkeypatch.setenv("OPSMATE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("OPSMATE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OPSMATE_CACHE_DIR", str(session_home / ".cache" / "opsmate"))
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    for var in list(os.environ):
        if var.startswith("OPSMATE_") and var not in (
            "OPSMATE_CONFIG_DIR",
            "OPSMATE_DATA_DIR",
            "OPSMATE_CACHE_DIR",
        ):
            monkeypatch.delenv(var, raising=False)
    yield


@pytest.fixture(scope="session")
def minilm_available() -> bool:
    return MINILM_SOURCE is not None


@pytest.fixture
def repo_root() -> Path:
    return REPO


def copy_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst
