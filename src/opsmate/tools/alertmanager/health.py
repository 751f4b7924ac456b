"""The ``doctor`` probe of an Alertmanager: reachable, authenticated, version.

One short ``GET /api/v2/status`` (the same read-only API the source uses); returns a
:class:`opsmate.health.Check`, never raises.
"""

from __future__ import annotations

from opsmate.health import REQUEST_TIMEOUT, Check
from opsmate.tools.alertmanager.client import AlertmanagerClient
from opsmate.tools.base import ToolFailure


def check_alertmanager(env: str, url: str, timeout: float, verify: bool) -> Check:
    """``alertmanager[<env>]``: ok with the version and cluster status, or what to fix."""
    from opsmate.credentials import get_credential

    name = f"alertmanager[{env}]"
    setting = f"environments.{env}.alertmanager.url"
    cred = get_credential("alertmanager", env)
    client = AlertmanagerClient(
        url=url.rstrip("/"),
        timeout=min(timeout, REQUEST_TIMEOUT),
        verify_tls=verify,
        headers=cred.headers() if cred else {},
        environment=env,
    )
    try:
        status = client.status()
    except ToolFailure as exc:
        if exc.code == "auth":
            fix = (
                f"the credential was refused: opsmate auth set alertmanager --env {env}"
                if cred
                else f"it needs credentials: opsmate auth set alertmanager --env {env} "
                "(or OPSMATE_ALERTMANAGER_TOKEN)"
            )
            return Check(name, "fail", "authentication failed", fix)
        if exc.code in ("unreachable", "timeout"):
            return Check(
                name,
                "fail",
                exc.message,
                f"is it running and reachable from here? check {setting}",
                unreachable=True,
            )
        return Check(
            name,
            "fail",
            exc.message,
            f"is {setting} the Alertmanager base URL (without /api/v2)?",
        )
    info = status.get("versionInfo") if isinstance(status.get("versionInfo"), dict) else {}
    version = (info or {}).get("version")
    cluster = status.get("cluster") if isinstance(status.get("cluster"), dict) else {}
    if not version and not cluster:
        return Check(name, "fail", f"{url} answered, but not like Alertmanager", f"check {setting}")
    state = (cluster or {}).get("status") or "?"
    auth = f", {cred.describe()}" if cred else ""
    return Check(name, "ok", f"Alertmanager {version or '?'} at {url} (cluster {state}){auth}")
