"""A shared runbook index (chroma-server, elasticsearch) has no local folder: diagnose and
`opsmate tool` must still open it instead of treating the missing folder as "no index"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from opsmate.agent.session.sources import configured_retriever
from opsmate.commands.tool import open_index_retriever
from opsmate.config import Settings


def _settings(tmp_path: Path, backend: str) -> Settings:
    return Settings.model_validate(
        {
            "index_dir": str(tmp_path / "absent"),
            "knowledge": {"backend": backend, "url": "http://127.0.0.1:9"},
        }
    )


@pytest.mark.parametrize("backend", ["chroma-server", "elasticsearch"])
def test_shared_backend_is_opened_without_a_local_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    opened: list[Any] = []
    sentinel = object()

    def fake_open(path: Any, settings: Settings) -> object:
        opened.append(settings.knowledge.backend)
        return sentinel

    monkeypatch.setattr("opsmate.knowledge.retrieve.open_retriever", fake_open)
    settings = _settings(tmp_path, backend)
    assert configured_retriever(settings, None) is sentinel
    assert open_index_retriever(settings, None) is sentinel
    assert opened == [backend, backend]


def test_embedded_backend_without_a_folder_has_no_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*_: Any) -> None:
        raise AssertionError("an absent embedded index must not be opened")

    monkeypatch.setattr("opsmate.knowledge.retrieve.open_retriever", fail)
    settings = _settings(tmp_path, "embedded")
    assert configured_retriever(settings, None) is None
    assert open_index_retriever(settings, None) is None
