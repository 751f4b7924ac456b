"""Alertmanager as a read-only data source (API v2: ``/api/v2/alerts``, ``/api/v2/silences``).

- :mod:`.model`: :class:`Alert`, the shape alerts take in opsmate (API and webhook).
- :mod:`.client`: :class:`AlertmanagerClient`, :func:`client_for` (config + credentials).
- :mod:`.tools`: ``list_alerts`` answered from Alertmanager where configured.
- :mod:`.health`: the ``doctor`` probe.

The tool registry imports this package and calls :func:`tool_specs`; nothing heavy is
imported here (httpx is imported when a request is made).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opsmate.tools.alertmanager.model import Alert
from opsmate.tools.source import Source

if TYPE_CHECKING:
    from opsmate.config import Settings
    from opsmate.health import Check
    from opsmate.tools.base import ToolSpec

__all__ = ["SOURCE", "Alert", "tool_specs"]


def tool_specs(settings: Settings) -> list[ToolSpec]:
    """The tools this source serves for ``settings`` (see :mod:`.tools`)."""
    from opsmate.tools.alertmanager.tools import tool_specs as specs

    return specs(settings)


def _probe(env: str, block: Any) -> Check:
    from opsmate.tools.alertmanager.health import check_alertmanager

    return check_alertmanager(env, block.url, block.timeout, block.verify_tls)


SOURCE = Source(
    key="alertmanager",
    kind="alerts",
    order=50,  # after Prometheus: its list_alerts replaces Prometheus' one
    tool_specs=tool_specs,
    probe=_probe,
)
