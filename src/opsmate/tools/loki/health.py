"""The ``doctor`` probe of a Loki: ready, reachable, authenticated, labels seen.

``GET /ready`` (Loki's readiness endpoint), then ``GET /loki/api/v1/labels`` (the same
read-only API the tools use, which also proves the tenant and credentials); returns a
:class:`opsmate.health.Check`, never raises.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opsmate.health import REQUEST_TIMEOUT, Check
from opsmate.tools.base import ToolFailure

if TYPE_CHECKING:
    from opsmate.config import LokiSource


def check_loki(env: str, src: LokiSource) -> Check:
    """``loki[<env>]``: ok with the labels it holds (the service label among them), or what
    to fix."""
    from opsmate.tools.loki.client import LokiClient

    name = f"loki[{env}]"
    setting = f"environments.{env}.loki"
    client = LokiClient(env, src.model_copy(update={"timeout": min(src.timeout, REQUEST_TIMEOUT)}))
    try:
        labels = client.labels()
    except ToolFailure as exc:
        if exc.code == "auth":
            fix = (
                "set OPSMATE_LOKI_TOKEN (or OPSMATE_LOKI_USERNAME / OPSMATE_LOKI_PASSWORD), "
                f"and {setting}.tenant on a multi-tenant Loki"
            )
            return Check(name, "fail", "authentication failed", fix)
        if exc.code in ("unreachable", "timeout"):
            return Check(name, "fail", exc.message,
                         f"is it running and reachable from here? check {setting}.url",
                         unreachable=True)  # fmt: skip
        return Check(name, "fail", exc.message,
                     f"is {setting}.url the Loki base URL (without /loki/api/v1)?")  # fmt: skip
    finally:
        client.close()
    service = src.labels.service
    if labels and service not in labels:
        return Check(
            name, "warn",
            f"Loki at {src.url} answers, but has no '{service}' label "
            f"(labels: {', '.join(labels[:12])})",
            f"set {setting}.labels.service to the label that names the service",
        )  # fmt: skip
    return Check(name, "ok", f"Loki at {src.url}: {len(labels)} labels")
