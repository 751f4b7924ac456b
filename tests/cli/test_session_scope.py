"""A session's scope is fixed when it starts: a saved file edited to widen it is refused.

Editing ``state.constraints.environment`` to prod, emptying ``allowed_services``,
changing the flags or the signed scope itself, pointing the session at the live sources
or at another bundle, or swapping the bundle's contents for a prod one: each follow-up
is exit 2 naming the file, before anything is read. Flags on a follow-up that disagree
with the session (``--env``, ``--service``, ``--since``, ``--bundle``) are exit 2 too.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from session_cli_util import MINI, follow_up, isolated_env, run

ONLY_CART = "only cart-service: why does it return 500 since the 12:00 release?"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A private bundle and a session on it restricted to cart-service (one signing key)."""
    root = tmp_path_factory.mktemp("session-scope")
    env = isolated_env(root)
    bundle = Path(shutil.copytree(MINI, root / "bundle"))
    session = root / "cart.json"
    proc = run("diagnose", "--bundle", str(bundle), "--session", str(session), ONLY_CART,
               "--json", env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(session.read_text(encoding="utf-8"))
    assert data["state"]["constraints"]["allowed_services"] == ["cart-service"]
    assert data["state"]["constraints"]["environment"] == "test"
    return {"root": root, "env": env, "bundle": bundle, "session": session}


def _tamper(world: dict[str, Any], tmp: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    data = json.loads(world["session"].read_text(encoding="utf-8"))
    edit(data)
    out = tmp / "tampered.json"
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def _audit_lines(world: dict[str, Any]) -> int:
    audit = Path(world["env"]["OPSMATE_DATA_DIR"]) / "audit.jsonl"
    return len(audit.read_text(encoding="utf-8").splitlines()) if audit.exists() else 0


def _env_prod(d: dict[str, Any]) -> None:
    d["state"]["constraints"]["environment"] = "prod"


def _allowed_emptied(d: dict[str, Any]) -> None:
    d["state"]["constraints"]["allowed_services"] = []


def _focus_widened(d: dict[str, Any]) -> None:
    d["state"]["constraints"]["services"].append("catalog-service")


def _window_widened(d: dict[str, Any]) -> None:
    d["state"]["constraints"]["window_from"] = "2026-10-01T00:00:00+08:00"


def _flags_prod(d: dict[str, Any]) -> None:
    d["flags"]["env"] = "prod"


def _scope_and_state_prod(d: dict[str, Any]) -> None:  # edits both: the signature breaks
    d["state"]["constraints"]["environment"] = "prod"
    d["scope"]["constraints"]["environment"] = "prod"


def _live(d: dict[str, Any]) -> None:
    d["source"] = {"bundle": None, "live": True, "bundle_digest": None}


def _other_bundle(d: dict[str, Any]) -> None:
    d["source"]["bundle"] = str(MINI.resolve())


def _model_elsewhere(d: dict[str, Any]) -> None:  # the next turn's data would go there
    d["model"] = "openai:https://models.example.invalid/v1#m"


def _state_removed(d: dict[str, Any]) -> None:  # the next question would start afresh
    d["state"] = None


def _unsigned(d: dict[str, Any]) -> None:
    d.pop("scope")
    d.pop("scope_mac")


TAMPERING = {
    "environment set to prod": (_env_prod, "state.constraints.environment is not as signed"),
    "allowed_services emptied": (_allowed_emptied, "state.constraints.allowed_services"),
    "focus outside allowed": (_focus_widened, "outside allowed_services"),
    "window widened": (_window_widened, "state.constraints.window_from"),
    "flags set to prod": (_flags_prod, "flags is not as signed"),
    "scope re-written": (_scope_and_state_prod, "does not match its signature"),
    "switched to live": (_live, "source (the bundle or the live sources)"),
    "another bundle": (_other_bundle, "source (the bundle or the live sources)"),
    "state removed": (_state_removed, "state (removed"),
    "model pointed elsewhere": (_model_elsewhere, "model is not as signed"),
    "no signed scope": (_unsigned, "has no signed scope"),
}


# the cases the issue names, through the console script; the rest through Session.load
BY_CLI = ("environment set to prod", "allowed_services emptied", "scope re-written")


@pytest.mark.parametrize("case", BY_CLI)
def test_a_tampered_session_is_refused_before_any_read(
    case: str, world: dict[str, Any], tmp_path: Path
) -> None:
    edit, needle = TAMPERING[case]
    path = _tamper(world, tmp_path, edit)
    calls = _audit_lines(world)
    proc = run("diagnose", "--session", str(path), "what about catalog-service?",
               env=world["env"])  # fmt: skip
    assert proc.returncode == 2, (case, proc.stderr[-800:])
    assert str(path) in proc.stderr and needle in proc.stderr, proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    assert _audit_lines(world) == calls  # nothing was read


@pytest.mark.parametrize("case", [c for c in TAMPERING if c not in BY_CLI])
def test_session_load_refuses_a_tampered_session(
    case: str, world: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from opsmate.agent.session.session import Session
    from opsmate.errors import InputError

    edit, needle = TAMPERING[case]
    path = _tamper(world, tmp_path, edit)
    monkeypatch.setenv("OPSMATE_DATA_DIR", world["env"]["OPSMATE_DATA_DIR"])  # its key
    with pytest.raises(InputError) as err:
        Session.load(path)
    assert str(path) in err.value.message and needle in err.value.message, err.value.message


def test_a_session_from_another_data_dir_is_refused(world: dict[str, Any], tmp_path: Path) -> None:
    other = isolated_env(tmp_path)  # another user: no key, or another key
    proc = run("diagnose", "--session", str(world["session"]), "anything new?", env=other)
    assert proc.returncode == 2 and "cannot check the session's scope" in proc.stderr


def test_a_swapped_bundle_is_refused(world: dict[str, Any], tmp_path: Path) -> None:
    bundle = Path(shutil.copytree(MINI, tmp_path / "bundle"))
    session = tmp_path / "s.json"
    env = world["env"]
    proc = run("diagnose", "--bundle", str(bundle), "--session", str(session), "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    meta = bundle / "bundle.yaml"  # the same path, now a prod bundle
    meta.write_text(meta.read_text().replace("environment: test", "environment: prod"))
    proc = run("diagnose", "--session", str(session), "anything new?", env=env)
    assert proc.returncode == 2
    assert f"{session}: the bundle {bundle.resolve()} is not the one" in proc.stderr


def test_a_follow_up_outside_the_scope_is_refused_without_a_call(world: dict[str, Any]) -> None:
    path = world["root"] / "follow.json"
    shutil.copyfile(world["session"], path)
    calls = _audit_lines(world)
    report = follow_up(path, "check catalog-service in prod too", world["env"])
    fu = report["follow_up"]
    assert fu["new_calls"] == 0 and len(fu["refused"]) == 2, fu
    assert fu["answer"].startswith("Not done: 'prod' is not read")
    assert "'catalog-service' is not read: this session is limited to cart-service" in fu["answer"]
    assert "No call was made for this question" in fu["answer"]
    assert _audit_lines(world) == calls
    saved = json.loads(path.read_text(encoding="utf-8"))  # the refusal is kept, scope intact
    assert saved["state"]["constraints"]["allowed_services"] == ["cart-service"]


FLAGS = {
    "--env prod": (["--env", "prod"], "--env prod: the session"),
    "--service catalog-service": (
        ["--service", "catalog-service"],
        "--service catalog-service: the session",
    ),
    "--since 2h": (["--since", "2h"], "--since 2h: the time window of the session"),
    "--bundle another": (["--bundle", str(MINI)], "a follow-up cannot switch"),
    "--demo": (["--demo"], "--demo: the session"),
}


def test_env_on_a_follow_up_that_disagrees_is_exit_2(world: dict[str, Any]) -> None:
    flags, needle = FLAGS["--env prod"]
    proc = run("diagnose", "--session", str(world["session"]), "anything new?", *flags,
               env=world["env"])  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-600:]
    assert needle in proc.stderr and str(world["session"]) in proc.stderr


@pytest.mark.parametrize("case", list(FLAGS))
def test_session_load_refuses_flags_that_disagree(
    case: str, world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from opsmate.agent.session.session import Session
    from opsmate.errors import UsageError

    flags, needle = FLAGS[case]
    kwargs: dict[str, Any] = {
        "--env": {"env": "prod"},
        "--service": {"services": ["catalog-service"]},
        "--since": {"since": "2h"},
        "--bundle": {"bundle": MINI},
        "--demo": {"demo": True},
    }[flags[0]]
    monkeypatch.setenv("OPSMATE_DATA_DIR", world["env"]["OPSMATE_DATA_DIR"])
    with pytest.raises(UsageError) as err:
        Session.load(world["session"], **kwargs)
    assert err.value.exit_code == 2 and needle in err.value.message, err.value.message


def test_follow_up_flags_that_agree_are_accepted(world: dict[str, Any]) -> None:
    path = world["root"] / "agree.json"
    shutil.copyfile(world["session"], path)
    flags = ("--env", "test", "--service", "cart-service", "--bundle", str(world["bundle"]))
    report = follow_up(path, "which pods restarted?", world["env"], *flags)
    assert report["follow_up"]["new_calls"] == 0
    assert report["constraints"]["environment"] == "test"
