"""Shared fixtures. Tests never see the developer's own config, data or home."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_MODELS = REPO.parent / "shared" / "models" / "all-MiniLM-L6-v2" / "onnx"
_SESSION_HOME: Path | None = None


def _seeded_home(tmp_root: Path) -> Path:
    """A HOME whose chromadb cache holds the MiniLM ONNX files (symlinked, no copy)."""
    home = tmp_root / "home"
    onnx = home / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"
    onnx.mkdir(parents=True, exist_ok=True)
    if SHARED_MODELS.is_dir():
        for f in SHARED_MODELS.iterdir():
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
    return (SHARED_MODELS / "model.onnx").exists()


@pytest.fixture
def repo_root() -> Path:
    return REPO


def copy_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst
