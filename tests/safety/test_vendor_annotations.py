"""Secrets by value, not by name: credentials in annotations under keys no rule knows.

A copy of the demo bundle gets, on its Deployment, ReplicaSets and pods, annotations under
made-up vendor keys (``example.com/db-dsn``, ``acme.io/note`` ...) whose values are a DSN
with a password, a ``token=`` note, a JWT, a PEM private key, a bare random key, a bearer
header, a ``password=`` hint and a random key inside a sentence. The same texts go into
the ReplicaSets' change-cause (which ``rollout_history`` and the report show) and into an
event message. Every way out is read: ``opsmate tool rollout_history`` (human and JSON),
``get_events --json``, ``diagnose --json`` / ``--markdown``, the saved session, the saved
bundle (which keeps the raw annotations), the prompts a scripted model received, and the
report files ``opsmate watch`` writes. No secret may be in any of them; the ``seen-AN``
marker next to the secrets proves the text reached each one, and the ordinary values
planted beside them (a gRPC method, an image digest, a request id, an alert name, a build
id) must come out unchanged in the saved bundle.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
import yaml
from safety_util import cli_here, isolated, write_script

from opsmate.tools.redact import MASK

DEMO = Path(__file__).resolve().parents[2] / "src" / "opsmate" / "data" / "demo"
SERVICE = "order-service"
QUESTION = "order-service error rate rose after the 10:00 release"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ2ZW5kb3ItYW5ub3RhdGlvbiJ9"
    ".Vd9Kx2LmQ7pZ4rT8wY1nB6cF3hJ0sA5e"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAvEnDoRpEmB0dy7Qk3Lm9Xz\n"
    "q8Zr2LmP0vXw9TtY4sKd7Hn3PemLine2Zz\n"
    "-----END RSA PRIVATE KEY-----\n"
)
# key -> (value, the fragments that must never come out)
SECRETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "example.com/db-dsn": ("postgres://u:Dsn5ecretPw@h/db", ("Dsn5ecretPw",)),
    "acme.io/note": ("rotate weekly; token=NoteTok3nValue77", ("NoteTok3nValue77",)),
    "acme.io/session": (JWT, ("eyJzdWIiOiJ2ZW5kb3ItYW5ub3RhdGlvbiJ9", "Vd9Kx2LmQ7pZ4rT8")),
    "vendor.example/tls-key": (PEM, ("MIIEowIBAAKCAQEAvEnDoRpEmB0", "PemLine2Zz")),
    "acme.io/deploy": ("Zx9Qw8Er7Ty6Ui5Op4As3Df2", ("Zx9Qw8Er7Ty6Ui5Op4As3Df2",)),
    "acme.io/ci": (
        "pushed by ci with Kp3Lm9Nq2Rs8Tv4Wx7Yz1Bc6 as key",
        ("Kp3Lm9Nq2Rs8Tv4Wx7Yz1Bc6",),
    ),
    "acme.io/hook": ("Authorization: Bearer BearTok3nAbcdef123456", ("BearTok3nAbcdef123456",)),
    "acme.io/hint": ("password=Hunt3rPw99", ("Hunt3rPw99",)),
}
LEAKS = [frag for _value, frags in SECRETS.values() for frag in frags]
# ordinary values beside them: identifiers, never masked
KEEP = {
    "example.com/grpc": "hipstershop.RecommendationService/ListRecommendations",
    "example.com/digest": "sha256:" + "9fceb02d0ae598e95dc970b74767f19372d61af8" * 2,
    "example.com/request-id": "123e4567-e89b-12d3-a456-426614174000",
    "example.com/alert": "OrderServiceHigh5xxRate",
    "example.com/build-id": "vP3mkwq2S7ajcBfDj0Zi8A",
    "example.com/thread": "java-kafka-streams-6f1d2c3a-9b4e-4d8f-a2c7-1e5b8f0d3c42-StreamThread-1",
}
CAUSE_SECRETS = "; ".join(v.replace("\n", " ") for v, _ in SECRETS.values() if "BEGIN" not in v)


def _plant(bundle: Path) -> None:
    """The annotations on every order-service object; the texts in change-causes and one
    event message."""
    notes = {k: f"{v}" for k, (v, _) in SECRETS.items()} | KEEP | {"example.com/seen": "seen-AN"}
    for name in ("deployments", "replicasets", "pods", "events"):
        path = bundle / "k8s" / f"{name}.yaml"
        docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
        for d in docs:
            meta = d.setdefault("metadata", {})
            if name == "events":
                if d.get("involvedObject", {}).get("name", "").startswith(SERVICE):
                    d["message"] = f"{d.get('message', '')} seen-AN {CAUSE_SECRETS}"
                continue
            if not str(meta.get("name", "")).startswith(SERVICE):
                continue
            ann = meta.setdefault("annotations", {})
            ann.update(notes)
            cause = ann.get("kubernetes.io/change-cause")
            if cause:
                ann["kubernetes.io/change-cause"] = f"{cause} seen-AN {CAUSE_SECRETS}"
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False), encoding="utf-8")


def _watch_files(bundle: Path, out: Path) -> str:
    """The report files ``opsmate watch`` writes for one notification about the bundle."""
    from opsmate.alerting.webhook import parse_webhook
    from opsmate.commands.watch import Investigator
    from opsmate.config import Settings

    body = {
        "version": "4",
        "status": "firing",
        "receiver": "https://hooks:Rcv5ecretPw@chat.example/hook",
        "groupKey": '{}:{alertname="OrderServiceHigh5xxRate"} token=GroupTok3nValue9',
        "alerts": [
            {
                "status": "firing",
                "labels": {"alertname": "OrderServiceHigh5xxRate", "service": SERVICE},
                "annotations": {"summary": f"5xx on {SERVICE} seen-AN", **KEEP},
                "startsAt": "2026-10-21T10:01:00+08:00",
                "fingerprint": "a1b2c3d4e5f60718",
            }
        ],
    }
    out.mkdir()
    Investigator(Settings(), out, bundle=bundle, env=None, model="none", index_dir=None)(
        parse_webhook(body)
    )
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(out.iterdir()))


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory, session_home: Path) -> dict[str, str]:
    root = tmp_path_factory.mktemp("vendor")
    out: dict[str, str] = {}
    with isolated(root, session_home):
        bundle = root / "bundle"
        import shutil

        shutil.copytree(DEMO / "01-pool-exhaustion", bundle)
        _plant(bundle)
        b = str(bundle)
        rollout = ("tool", "rollout_history", "--bundle", b, "--args",
                   json.dumps({"name": SERVICE, "namespace": "shop"}))  # fmt: skip
        out["rollout_history"] = cli_here(*rollout)
        out["rollout_history --json"] = cli_here(*rollout, "--json")
        events = ("tool", "get_events", "--bundle", b, "--args", '{"namespace": "shop"}')
        out["get_events --json"] = cli_here(*events, "--json")
        session, saved = root / "session.json", root / "saved.tar.gz"
        out["diagnose --json"] = cli_here(
            "diagnose", QUESTION, "--bundle", b, "--model", "none", "--json",
            "--session", str(session), "--save-bundle", str(saved),
        )  # fmt: skip
        out["diagnose --markdown"] = cli_here("diagnose", QUESTION, "--bundle", b, "--markdown")
        out["session file"] = session.read_text(encoding="utf-8")
        with tarfile.open(saved) as tar:
            out["saved bundle"] = "\n".join(
                tar.extractfile(m).read().decode("utf-8")  # type: ignore[union-attr]
                for m in tar.getmembers()
                if m.isfile()
            )
        out["model prompts"] = _prompts(bundle, root)
        out["watch files"] = _watch_files(bundle, root / "watch")
    return out


def _prompts(bundle: Path, root: Path) -> str:
    from opsmate.agent.session.session import Session
    from opsmate.config import Settings

    spec = write_script(
        root / "model.yaml",
        [
            {"tool": "rollout_history", "args": {"name": SERVICE, "namespace": "shop"}},
            {"tool": "get_events", "args": {"namespace": "shop"}},
        ],
    )
    session = Session.open(settings=Settings(), bundle=bundle, model=spec, max_steps=8)
    try:
        session.ask(QUESTION)
        prompts = session.model.prompts  # type: ignore[union-attr]
    finally:
        session.close()
    return "\n".join(m["content"] for p in prompts for m in p)


OUTPUTS = [
    "rollout_history",
    "rollout_history --json",
    "get_events --json",
    "diagnose --json",
    "diagnose --markdown",
    "session file",
    "saved bundle",
    "model prompts",
    "watch files",
]


@pytest.mark.parametrize("name", OUTPUTS)
def test_no_annotation_secret_leaves(outputs: dict[str, str], name: str) -> None:
    text = outputs[name]
    assert "seen-AN" in text, f"{name}: the planted text never reached it (proves nothing)"
    found = [frag for frag in LEAKS if frag in text]
    assert not found, f"{name} leaks {found}"
    assert MASK in text, f"{name}: nothing was masked"


def test_watch_files_redact_what_is_added_after_the_report(outputs: dict[str, str]) -> None:
    text = outputs["watch files"]
    assert "Rcv5ecretPw" not in text and "GroupTok3nValue9" not in text
    assert "OrderServiceHigh5xxRate" in text  # the alert name is no secret


def test_ordinary_annotation_values_come_out_unchanged(outputs: dict[str, str]) -> None:
    """The saved bundle keeps the raw annotations: the identifiers beside the secrets are
    there verbatim (a shape rule that masked them would be a false positive)."""
    saved = outputs["saved bundle"]
    for key, value in KEEP.items():
        assert value in saved, f"{key}: {value} was changed in the saved bundle"
