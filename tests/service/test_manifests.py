"""``deploy/`` and the ``Containerfile``: what a cluster would be given, checked as data.

Every manifest is parsed and validated against the Kubernetes API models (the
``kubernetes`` client's strict models: an unknown or mistyped field fails); no role grants
a write verb; the ClusterRole grants get/list on exactly the kinds opsmate reads; the pod
runs as non-root on a read-only root filesystem with resources set; its probes name the
endpoints ``watch`` really answers (a real receiver is asked); the token comes from a
Secret and the config from a ConfigMap that opsmate itself loads. With ``kubectl`` on the
PATH, ``kubectl apply --dry-run=client -f deploy/`` runs against a discovery protocol
fixture (see ``kube_discovery.py``). No container builder runs here, so the image is not
built: ``OPSMATE_TEST_IMAGE_BUILD=1`` builds it where docker/podman/buildah work.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from opsmate.tools.k8s_kinds import KIND_TABLE

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
READ_VERBS = {"get", "list", "watch"}
KUBECTL = ["kubectl"]
DRY_RUN = ["apply", "--dry-run=client", "--validate=false", "-f"]  # no OpenAPI: see fixture


def documents() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(DEPLOY.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if doc:
                out.append((path.name, doc))
    return out


def of_kind(kind: str) -> list[dict[str, Any]]:
    return [doc for _, doc in documents() if doc["kind"] == kind]


def deployment() -> dict[str, Any]:
    (dep,) = of_kind("Deployment")
    return dep


def test_every_manifest_is_valid_against_the_kubernetes_api_models() -> None:
    import kubernetes
    import kubernetes.client.models as models

    kinds = set()
    for name, doc in documents():
        cls = getattr(models, "V1" + doc["kind"], None)
        assert cls is not None, f"{name}: kind {doc['kind']} is not a v1 API kind"
        if not hasattr(cls, "model_validate"):
            pytest.skip(
                f"kubernetes {kubernetes.__version__} has no strict models; "
                "pip install 'kubernetes>=37' to validate the fields"
            )
        assert doc["apiVersion"].split("/")[-1] == "v1", name
        cls.model_validate(doc)  # unknown or mistyped fields raise
        kinds.add(doc["kind"])
        namespaced = doc["kind"] not in ("Namespace", "ClusterRole", "ClusterRoleBinding")
        assert (doc["metadata"].get("namespace") == "opsmate") == namespaced, name
    assert kinds == {
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "PersistentVolumeClaim",
        "Deployment",
        "Service",
    }
    assert not of_kind("Secret"), "no Secret is shipped: its token would be known to all"


def test_no_role_grants_a_write_verb() -> None:
    roles = of_kind("ClusterRole") + of_kind("Role")
    assert roles
    for role in roles:
        for rule in role["rules"]:
            assert set(rule["verbs"]) <= READ_VERBS, rule
            assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"], rule


def test_cluster_role_grants_exactly_the_kinds_opsmate_reads() -> None:
    (role,) = of_kind("ClusterRole")
    granted: dict[tuple[str, str], set[str]] = {}
    for rule in role["rules"]:
        for group in rule["apiGroups"]:
            for res in rule["resources"]:
                granted[(group, res)] = set(rule["verbs"])
    want = {(k.group, k.resource): {"get", "list"} for k in KIND_TABLE}
    want[("", "events")] = {"get", "list"}
    want[("", "pods/log")] = {"get"}
    assert granted == want
    (binding,) = of_kind("ClusterRoleBinding")
    (account,) = of_kind("ServiceAccount")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": role["metadata"]["name"],
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": account["metadata"]["name"], "namespace": "opsmate"}
    ]
    spec = deployment()["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == account["metadata"]["name"]


def test_the_pod_runs_as_non_root_on_a_read_only_root_with_resources_set() -> None:
    spec = deployment()["spec"]["template"]["spec"]
    pod_sc = spec["securityContext"]
    assert pod_sc["runAsNonRoot"] is True and pod_sc["runAsUser"] > 0
    assert pod_sc["seccompProfile"]["type"] == "RuntimeDefault"
    assert not spec.get("hostNetwork") and not spec.get("hostPID")
    for c in spec["containers"] + spec.get("initContainers", []):
        sc = c["securityContext"]
        assert sc["runAsNonRoot"] is True and sc.get("runAsUser", pod_sc["runAsUser"]) > 0
        assert sc["readOnlyRootFilesystem"] is True
        assert sc["allowPrivilegeEscalation"] is False and not sc.get("privileged")
        assert sc["capabilities"]["drop"] == ["ALL"] and not sc["capabilities"].get("add")
        for part in ("requests", "limits"):
            assert {"cpu", "memory"} <= set(c["resources"][part]), (c["name"], part)
        # what it writes lives on volumes (the root filesystem is read-only)
        env = {e["name"]: e.get("value") for e in c["env"]}
        mounts = {m["mountPath"] for m in c["volumeMounts"] if not m.get("readOnly")}
        for var in ("OPSMATE_DATA_DIR", "OPSMATE_CACHE_DIR"):
            assert env[var] in mounts, var
        assert "/tmp" in mounts
        out = c["args"][c["args"].index("--out") + 1]
        assert any(out.startswith(m + "/") for m in mounts)
    image_user = re.findall(r"^USER (\S+)", (REPO / "Containerfile").read_text(), re.M)
    assert image_user == ["${UID}:${UID}"]


def test_single_replica_replaced_with_recreate_and_volumes_that_exist() -> None:
    dep = deployment()
    assert dep["spec"]["replicas"] == 1
    assert dep["spec"]["strategy"] == {"type": "Recreate"}
    assert not of_kind("HorizontalPodAutoscaler")
    (pvc,) = of_kind("PersistentVolumeClaim")
    assert pvc["spec"]["accessModes"] == ["ReadWriteOnce"]
    spec = dep["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["data"]["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"]
    (cm,) = of_kind("ConfigMap")
    assert volumes["config"]["configMap"]["name"] == cm["metadata"]["name"]
    for c in spec["containers"]:
        assert {m["name"] for m in c["volumeMounts"]} <= set(volumes)
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert dep["spec"]["selector"]["matchLabels"].items() <= labels.items()
    (svc,) = of_kind("Service")
    assert svc["spec"]["selector"].items() <= labels.items()
    ports = {p["name"]: p["containerPort"] for p in spec["containers"][0]["ports"]}
    assert {p["targetPort"] for p in svc["spec"]["ports"]} <= set(ports)
    assert svc["metadata"]["annotations"]["prometheus.io/path"] == "/metrics"
    assert int(svc["metadata"]["annotations"]["prometheus.io/port"]) == ports["http"]


def test_token_from_a_secret_and_a_config_opsmate_loads(tmp_path: Path) -> None:
    from opsmate.config import load_settings

    c = deployment()["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in c["env"]}
    token = env["OPSMATE_WATCH_TOKEN"]["valueFrom"]["secretKeyRef"]
    assert token == {"name": "opsmate-watch", "key": "token"}  # required: no token, no start
    slack = env["OPSMATE_SLACK_WEBHOOK_URL"]["valueFrom"]["secretKeyRef"]
    assert slack["name"] == "opsmate-watch" and slack["optional"] is True
    (cm,) = of_kind("ConfigMap")
    mount = next(m for m in c["volumeMounts"] if m["name"] == "config")
    assert env["OPSMATE_CONFIG"]["value"] == f"{mount['mountPath']}/config.yaml"
    cfg = tmp_path / "config.yaml"
    cfg.write_text(cm["data"]["config.yaml"], encoding="utf-8")
    settings = load_settings(cfg)  # unknown keys would be a ConfigError
    assert settings.alerting.require_token is True
    assert settings.history.enabled and str(settings.history.path).startswith(
        env["OPSMATE_DATA_DIR"]["value"]
    )
    live = settings.environments[settings.default_environment or ""]
    assert live.kubernetes is not None and live.kubernetes.kubeconfig is None  # in-cluster


def test_the_watch_command_line_and_probes_name_real_endpoints(tmp_path: Path) -> None:
    """The container's args parse as ``opsmate watch``; the probe paths are answered 200
    by a real receiver with /metrics (a path the receiver does not serve would be 404)."""
    import click
    import typer

    from opsmate.alerting.metrics import WatchMetrics
    from opsmate.alerting.receiver import WebhookReceiver
    from opsmate.cli import app
    from opsmate.commands.watch import parse_listen

    c = deployment()["spec"]["template"]["spec"]["containers"][0]
    command = typer.main.get_command(app)
    assert c["args"][0] == "watch"
    sub = command.get_command(click.Context(command), "watch")  # type: ignore[attr-defined]
    sub_ctx = sub.make_context("watch", list(c["args"][1:]))  # a bad flag raises here
    host, port = parse_listen(sub_ctx.params["listen"])
    assert host == "0.0.0.0" and port == c["ports"][0]["containerPort"]
    metrics = WatchMetrics()
    receiver = WebhookReceiver(
        "127.0.0.1", 0, lambda _m: None, routes={"/metrics": metrics.exposition}
    )
    metrics.watch_receiver(receiver)
    receiver.start()
    try:
        base = f"http://127.0.0.1:{receiver.address[1]}"
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            get = c[probe]["httpGet"]
            assert get["port"] == "http"
            with urllib.request.urlopen(base + get["path"], timeout=5) as resp:
                assert resp.status == 200
        with urllib.request.urlopen(base + "/metrics", timeout=5) as resp:
            assert "opsmate_watch_queue_depth 0.0" in resp.read().decode()
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(base + "/-/nonexistent", timeout=5)
        assert err.value.code == 404
    finally:
        receiver.drain()


@pytest.mark.skipif(
    shutil.which("kubectl") is None,
    reason="kubectl not on PATH: apt-get install -y kubernetes-client (scripts/setup does)",
)
def test_kubectl_client_dry_run_applies_deploy(tmp_path: Path) -> None:
    from kube_discovery import KubeDiscovery

    with KubeDiscovery() as api:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(api.kubeconfig(), encoding="utf-8")
        proc = subprocess.run(
            [*KUBECTL, "--kubeconfig", str(kubeconfig), *DRY_RUN, str(DEPLOY)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "HOME": str(tmp_path)},
        )
    assert proc.returncode == 0, proc.stderr
    created = sorted(line.split()[0] for line in proc.stdout.splitlines())
    assert len(created) == len(documents())
    assert all("(dry run)" in line for line in proc.stdout.splitlines())
    assert {m for m, _ in api.requests} == {"GET"}  # a dry run writes nothing


def test_alertmanager_and_prometheus_snippets_pass_their_own_checkers(tmp_path: Path) -> None:
    am = DEPLOY / "alertmanager" / "opsmate-receiver.yml"
    prom = DEPLOY / "prometheus" / "scrape-opsmate.yml"
    for tool, args in (("amtool", ["check-config", str(am)]), ("promtool", ["check", "config"])):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} not found: apt-get install -y prometheus prometheus-alertmanager")
        extra = [str(prom)] if tool == "promtool" else []
        proc = subprocess.run([tool, *args, *extra], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    hook = yaml.safe_load(am.read_text())["receivers"][0]["webhook_configs"][0]
    (svc,) = of_kind("Service")
    port = svc["spec"]["ports"][0]["port"]
    assert hook["url"] == f"http://{svc['metadata']['name']}.opsmate.svc:{port}/"
    assert hook["http_config"]["authorization"]["type"] == "Bearer"
    target = yaml.safe_load(prom.read_text())["scrape_configs"][0]["static_configs"][0]
    assert target["targets"] == [f"opsmate.opsmate.svc:{port}"]


def containerfile_stages() -> list[list[str]]:
    text = (REPO / "Containerfile").read_text(encoding="utf-8")
    logical = re.sub(r"\\\n\s*", " ", text)  # continuation lines joined
    stages: list[list[str]] = []
    for line in logical.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            stages.append([])
        if stages:
            stages[-1].append(line)
    return stages


def test_containerfile_is_multi_stage_non_root_without_compilers() -> None:
    stages = containerfile_stages()
    assert len(stages) >= 2
    build, final = stages[0], stages[-1]
    assert any("build-essential" in line for line in build)  # compilers only here
    final_text = "\n".join(final)
    for compiler in ("build-essential", "gcc", "g++", "clang", "make ", "apt-get install"):
        assert compiler not in final_text, compiler
    assert "COPY --from=build /opt/opsmate /opt/opsmate" in final_text
    user = [line for line in final if line.startswith("USER ")]
    assert user and user[-1] != "USER root" and "ARG UID=10001" in final_text
    run_as = deployment()["spec"]["template"]["spec"]["securityContext"]["runAsUser"]
    assert run_as == 10001
    # the embedding model: baked in (default) or mounted, chosen at build time
    assert any("ARG EMBEDDING_MODEL=bake" in line for line in build)
    assert "bake)" in "\n".join(build) and "mount)" in "\n".join(build)
    mount_note = (REPO / "deploy" / "50-deployment.yaml").read_text()
    assert "onnx_models/all-MiniLM-L6-v2/onnx" in mount_note and "MODEL_DIR=" in final_text
    cmd = json.loads(final[-1].removeprefix("CMD "))
    assert cmd[:3] == ["watch", "--listen", "0.0.0.0:9095"]
    ignored = (REPO / ".dockerignore").read_text().split()
    assert {".venv", ".git", "tests"} <= set(ignored)


def _builder() -> list[str] | None:
    for tool, probe in (("docker", ["info"]), ("podman", ["info"]), ("buildah", ["version"])):
        if shutil.which(tool):
            ok = subprocess.run([tool, *probe], capture_output=True, timeout=30).returncode == 0
            if ok:
                return [tool, "build"] if tool != "buildah" else [tool, "bud"]
    return None


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("OPSMATE_TEST_IMAGE_BUILD") != "1",
    reason="building the image takes minutes and a container builder with registry access "
    "(none runs here): set OPSMATE_TEST_IMAGE_BUILD=1 where docker/podman/buildah work",
)
def test_the_image_builds_and_runs_as_non_root() -> None:
    builder = _builder()
    if builder is None:
        pytest.fail("OPSMATE_TEST_IMAGE_BUILD=1 but no docker/podman/buildah runs here")
    tag = "opsmate-test:latest"
    proc = subprocess.run(
        [*builder, "-f", "Containerfile", "-t", tag, "."],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    tool = builder[0] if builder[0] != "buildah" else "podman"
    out = subprocess.run(
        [tool, "run", "--rm", "--entrypoint", "id", tag, "-u"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.stdout.strip() == "10001"
