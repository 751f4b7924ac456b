"""The safety tests share one run of every output path over a planted bundle."""

from __future__ import annotations

from pathlib import Path

import pytest
from safety_util import run_every_output


@pytest.fixture(scope="session")
def outputs(tmp_path_factory: pytest.TempPathFactory, session_home: Path) -> dict[str, str]:
    """Output path name -> everything it printed or stored (see ``safety_util.OUTPUTS``)."""
    return run_every_output(tmp_path_factory.mktemp("safety"), session_home)
