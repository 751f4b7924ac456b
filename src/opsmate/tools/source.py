"""The seam every live data source plugs into: one :class:`Source` per package under
``opsmate.tools``.

A source package (``tools/prometheus/``, ``tools/elasticsearch/``, ``tools/loki/``,
``tools/kubernetes/``, ``tools/alertmanager/``) exposes ``SOURCE``: which environment
config block it serves (``environments.<env>.<key>``), what kind of data it holds, the
tools it provides for a configuration, and its health probe for ``opsmate doctor``. The
registry and the doctor find sources here, by walking ``opsmate.tools``; adding a source
is a new package plus its config block and docs (README "Adding a data source").

Bundle replay (``tools/bundle/``) is not a source of this kind: it serves every tool from
one captured incident, whatever the sources were.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from opsmate.config import Settings
    from opsmate.health import Check
    from opsmate.tools.base import ToolSpec

log = logging.getLogger(__name__)

SourceKind = Literal["metrics", "logs", "cluster", "alerts"]
SOURCE_PACKAGE = "opsmate.tools"  # whose sub-packages are searched for a SOURCE


@dataclass(frozen=True)
class Source:
    """A live data source: its config block, its tools and its probe."""

    key: str  # the environment config block it serves: environments.<env>.<key>
    kind: SourceKind
    # registration order: where two sources offer a tool of the same name, each call runs on
    # the later one whose block the call's environment configures (Loki's pod_logs yields to
    # the Kubernetes API's; Alertmanager's list_alerts replaces Prometheus')
    order: int
    tool_specs: Callable[[Settings], list[ToolSpec]]
    # (environment, its config block) -> a doctor check; never raises
    probe: Callable[[str, Any], Check] | None = None
    # shown when the probe gets no answer in time
    fix: str = "is it running and reachable? check environments.{env}.{key}.url"

    def block(self, settings: Settings, env: str) -> Any:
        """This source's config block in environment ``env`` (None when not configured)."""
        cfg = settings.environments.get(env)
        return getattr(cfg, self.key, None) if cfg is not None else None

    def fix_for(self, env: str) -> str:
        return self.fix.format(env=env, key=self.key)


@dataclass
class Discovery:
    """The sources found, and the packages that failed to import (name -> why)."""

    sources: list[tuple[str, Source]]  # (package, source), in registration order
    skipped: dict[str, str]


def discover(package: str | None = None) -> Discovery:
    """Every ``SOURCE`` of a sub-package of ``package``, ordered by :attr:`Source.order`.

    A package that fails to import (a broken optional dependency) is skipped with a
    warning and listed in ``skipped``, so the other sources still work.
    """
    package = package or SOURCE_PACKAGE
    root = importlib.import_module(package)
    found: list[tuple[str, Source]] = []
    skipped: dict[str, str] = {}
    for info in pkgutil.iter_modules(root.__path__, prefix=f"{package}."):
        if not info.ispkg:
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError as exc:
            skipped[info.name] = f"{type(exc).__name__}: {exc}"
            log.warning("data source %s unavailable: %s", info.name, exc)
            continue
        source = getattr(module, "SOURCE", None)
        if isinstance(source, Source):
            found.append((info.name, source))
    found.sort(key=lambda pair: (pair[1].order, pair[0]))
    return Discovery(found, skipped)
