"""Health probes of data sources and model servers: reachable, authenticated, version.

Used by ``opsmate doctor`` (and anything else that wants a quick status): each probe
makes one short request and returns a :class:`Check` that says what is wrong and how
to fix it, never raising. :class:`Probes` runs them concurrently, each in a daemon
thread under a *total* deadline of :data:`PROBE_TIMEOUT` seconds: a server that
drips its answer a byte at a time, a blackholed port or a hanging kubeconfig
credential plugin costs at most that, and the thread is left behind, never waited for. Prometheus:
``GET /api/v1/status/buildinfo``; Elasticsearch: ``GET /`` (version, and the
``X-Elastic-Product`` header the official client insists on); Kubernetes: ``/version``
through the kubernetes client with the configured kubeconfig and context;
OpenAI-compatible model servers: ``GET /models``.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from opsmate.credentials import ENV_VARS, get_credential

Status = Literal["ok", "warn", "fail"]
PROBE_TIMEOUT = 5.0  # total seconds per probe, whatever the server does
# one request's own time-out: a little under the total, so a plain time-out is reported
# in the client's words rather than as "no answer within 5 s"
REQUEST_TIMEOUT = PROBE_TIMEOUT - 0.5


@dataclass
class Check:
    """One line of the doctor's report."""

    check: str
    status: Status
    detail: str
    fix: str = ""
    unreachable: bool = False  # decides exit code 3; not part of the JSON

    def to_json(self) -> dict[str, str]:
        d = asdict(self)
        d.pop("unreachable")
        return d


class Probes:
    """Health probes running at once, each in a daemon thread with a total deadline.

    ``start`` launches one; ``results`` returns their checks in start order, waiting
    at most until each probe's deadline. A probe still running then becomes a
    ``fail`` check (unreachable) and its thread is abandoned (daemon: it never delays
    the process's exit).
    """

    def __init__(self, deadline_s: float = PROBE_TIMEOUT) -> None:
        self.deadline_s = deadline_s
        self._jobs: list[tuple[str, str, float, threading.Thread, dict[str, Check]]] = []

    def start(self, name: str, fix: str, fn: Callable[..., Check], *args: Any) -> None:
        """Run ``fn(*args)`` for the check ``name``; ``fix`` is shown when it times out."""
        box: dict[str, Check] = {}

        def work() -> None:
            try:
                box["check"] = fn(*args)
            except Exception as exc:  # a probe must never take the doctor down
                box["check"] = Check(name, "fail", f"probe failed: {type(exc).__name__}: {exc}")

        thread = threading.Thread(target=work, name=f"opsmate-probe-{name}", daemon=True)
        thread.start()
        self._jobs.append((name, fix, time.monotonic() + self.deadline_s, thread, box))

    def results(self) -> list[Check]:
        """The checks in start order (each waited for until its deadline at most)."""
        out = []
        for name, fix, deadline, thread, box in self._jobs:
            thread.join(max(0.0, deadline - time.monotonic()))
            check = box.get("check")
            if check is None:
                check = Check(
                    name,
                    "fail",
                    f"no answer within {self.deadline_s:g} s (a server that accepts but "
                    "does not answer, a blackholed address, or a hanging credential plugin)",
                    fix,
                    unreachable=True,
                )
            out.append(check)
        return out


def _http_failure(name: str, url: str, exc: Exception, setting: str) -> Check:
    return Check(
        name,
        "fail",
        f"unreachable at {url}: {type(exc).__name__}: {exc}",
        f"is it running and reachable from here? check {setting}",
        unreachable=True,
    )


def _auth_failure(name: str, source: str, env: str, status: int, has_cred: bool) -> Check:
    if has_cred:
        fix = f"the credential was refused: opsmate auth set {source} --env {env}"
    else:
        var = ENV_VARS[source]["token"]
        fix = f"it needs credentials: opsmate auth set {source} --env {env} (or {var})"
    return Check(name, "fail", f"authentication failed (HTTP {status})", fix)


def check_prometheus(env: str, url: str, timeout: float, verify: bool) -> Check:
    import httpx

    name = f"prometheus[{env}]"
    setting = f"environments.{env}.prometheus.url"
    cred = get_credential("prometheus", env)
    target = url.rstrip("/") + "/api/v1/status/buildinfo"
    try:
        resp = httpx.get(
            target,
            headers=cred.headers() if cred else {},
            timeout=min(timeout, REQUEST_TIMEOUT),
            verify=verify,
        )
    except httpx.HTTPError as exc:
        return _http_failure(name, url, exc, setting)
    if resp.status_code in (401, 403):
        return _auth_failure(name, "prometheus", env, resp.status_code, cred is not None)
    if resp.status_code != 200:
        return Check(
            name,
            "fail" if resp.status_code >= 500 else "warn",
            f"{target} answered HTTP {resp.status_code}",
            f"is {setting} the Prometheus base URL (without /api/v1)?",
        )
    try:
        version = resp.json()["data"]["version"]
    except (ValueError, KeyError, TypeError):
        return Check(
            name,
            "fail",
            f"{url} answered, but not with Prometheus build info",
            f"check {setting}",
        )
    auth = f", {cred.describe()}" if cred else ""
    return Check(name, "ok", f"Prometheus {version} at {url}{auth}")


def check_elasticsearch(env: str, url: str, timeout: float, verify: bool) -> Check:
    import httpx

    name = f"elasticsearch[{env}]"
    setting = f"environments.{env}.elasticsearch.url"
    cred = get_credential("elasticsearch", env)
    try:
        resp = httpx.get(
            url.rstrip("/") + "/",
            headers=cred.headers() if cred else {},
            timeout=min(timeout, REQUEST_TIMEOUT),
            verify=verify,
        )
    except httpx.HTTPError as exc:
        return _http_failure(name, url, exc, setting)
    if resp.status_code == 401:
        return _auth_failure(name, "elasticsearch", env, 401, cred is not None)
    if resp.status_code == 403:
        return Check(
            name,
            "warn",
            "authenticated, but not allowed to read the cluster info at / (HTTP 403)",
            "searches may still work; grant the monitor privilege to check the version",
        )
    if resp.status_code != 200:
        return Check(name, "fail", f"{url} answered HTTP {resp.status_code}", f"check {setting}")
    try:
        version = resp.json()["version"]["number"]
    except (ValueError, KeyError, TypeError):
        return Check(
            name, "fail", f"{url} answered, but not like Elasticsearch", f"check {setting}"
        )
    if resp.headers.get("x-elastic-product") != "Elasticsearch":
        return Check(
            name,
            "warn",
            f"version {version}, but the X-Elastic-Product header is missing",
            "the elasticsearch client refuses such a server; point the URL at Elasticsearch",
        )
    auth = f", {cred.describe()}" if cred else ""
    return Check(name, "ok", f"Elasticsearch {version} at {url}{auth}")


def check_kubernetes(
    env: str, context: str | None, kubeconfig: str | None, timeout: float
) -> Check:
    name = f"kubernetes[{env}]"
    try:
        from kubernetes import client, config
        from kubernetes.client.rest import ApiException
    except ImportError:  # pragma: no cover - kubernetes is a dependency
        return Check(name, "fail", "the kubernetes package is missing", "pip install kubernetes")
    cfg_file = str(Path(kubeconfig).expanduser()) if kubeconfig else None
    configuration = client.Configuration()
    configuration.retries = 0  # before the client builds its connection pool with it
    try:
        api = config.new_client_from_config(
            config_file=cfg_file, context=context, client_configuration=configuration
        )
    except Exception as exc:
        return Check(
            name,
            "fail",
            f"cannot load kubeconfig {cfg_file or '~/.kube/config'}"
            f" (context {context or 'current'}): {exc}",
            f"check environments.{env}.kubernetes (kubectl config get-contexts)",
        )
    host = api.configuration.host
    try:
        resp: Any = client.VersionApi(api).get_code(
            _preload_content=False, _request_timeout=min(timeout, REQUEST_TIMEOUT)
        )
        version = json.loads(resp.data).get("gitVersion", "?")
    except ApiException as exc:
        if exc.status in (401, 403):
            return Check(
                name,
                "fail",
                f"the API server at {host} refused the credentials (HTTP {exc.status})",
                "refresh the kubeconfig credentials (kubectl get --raw /version)",
            )
        return Check(name, "fail", f"{host} answered HTTP {exc.status}", "check the context")
    except (ValueError, AttributeError) as exc:
        return Check(name, "fail", f"{host} did not answer like Kubernetes: {exc}", "check it")
    except Exception as exc:
        return Check(
            name,
            "fail",
            f"unreachable at {host}: {type(exc).__name__}",
            f"is the cluster of context '{context or 'current'}' reachable from here?",
            unreachable=True,
        )
    finally:
        api.close()
    return Check(name, "ok", f"Kubernetes {version} at {host} (context {context or 'current'})")


def check_openai(base_url: str, model: str) -> Check:
    import httpx

    key = os.environ.get("OPENAI_API_KEY")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        resp = httpx.get(base_url + "/models", headers=headers, timeout=REQUEST_TIMEOUT)
    except httpx.HTTPError as exc:
        return Check(
            "model",
            "fail",
            f"model server unreachable at {base_url}: {type(exc).__name__}",
            "start the server (llama-server, Ollama, vLLM) or fix the model URL",
            unreachable=True,
        )
    if resp.status_code in (401, 403):
        return Check(
            "model", "fail", f"{base_url} refused: HTTP {resp.status_code}", "set OPENAI_API_KEY"
        )
    try:
        served = [m.get("id") for m in resp.json().get("data", [])]
    except (ValueError, AttributeError):
        served = []
    if resp.status_code != 200:
        return Check(
            "model", "fail", f"{base_url}/models answered HTTP {resp.status_code}", "check the URL"
        )
    if model not in served:
        return Check(
            "model",
            "warn",
            f"{base_url} does not list '{model}' (serves: {', '.join(map(str, served))})",
            "use one of the served model names after '#'",
        )
    return Check("model", "ok", f"openai-compatible server at {base_url} serves '{model}'")
