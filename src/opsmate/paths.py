"""Where opsmate keeps its files: user config, data (index, sessions, audit log), cache.

Each location can be overridden with an environment variable, which tests use to
keep the developer's own home out of the test run.
"""

from __future__ import annotations

import os
from pathlib import Path

APP = "opsmate"


def _override(var: str) -> Path | None:
    value = os.environ.get(var)
    return Path(value).expanduser() if value else None


def config_dir() -> Path:
    """``OPSMATE_CONFIG_DIR`` or the platform's user config dir (``~/.config/opsmate``)."""
    o = _override("OPSMATE_CONFIG_DIR")
    if o:
        return o
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP))


def data_dir() -> Path:
    """``OPSMATE_DATA_DIR`` or the platform's user data dir (``~/.local/share/opsmate``)."""
    o = _override("OPSMATE_DATA_DIR")
    if o:
        return o
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP))


def cache_dir() -> Path:
    """``OPSMATE_CACHE_DIR`` or the platform's user cache dir (``~/.cache/opsmate``)."""
    o = _override("OPSMATE_CACHE_DIR")
    if o:
        return o
    from platformdirs import user_cache_dir

    return Path(user_cache_dir(APP))


def default_index_dir() -> Path:
    return data_dir() / "index"


def sessions_dir() -> Path:
    return data_dir() / "sessions"


def audit_log_path() -> Path:
    return data_dir() / "audit.jsonl"


def demo_dir() -> Path:
    """The demo bundles shipped inside the package."""
    return Path(__file__).parent / "data" / "demo"
