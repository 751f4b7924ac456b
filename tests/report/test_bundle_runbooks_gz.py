"""Runs that do not depend on the machine: gzipped logs read as plain ones; a personal
runbook index changes no bundle result; the report names the runbooks it searched."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from walk import diagnose

from opsmate.errors import BundleError, UsageError
from opsmate.tools.bundle import load_bundle

DEMO = "src/opsmate/data/demo/01-pool-exhaustion"


def _strip(report: dict) -> dict:
    out = dict(report)
    out["budget"] = {k: v for k, v in report["budget"].items() if k != "seconds"}
    out["index"] = None
    return out


def test_gzipped_logs_give_the_same_report(repo_root: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    shutil.copytree(repo_root / DEMO, plain)
    packed = tmp_path / "packed"
    shutil.copytree(repo_root / DEMO, packed)
    with (packed / "logs.ndjson").open("rb") as f, gzip.open(packed / "logs.ndjson.gz", "wb") as g:
        shutil.copyfileobj(f, g)
    (packed / "logs.ndjson").unlink()
    assert len(load_bundle(packed).logs) == len(load_bundle(plain).logs) > 0
    a, b = diagnose(plain), diagnose(packed)
    assert json.dumps(_strip(a), sort_keys=True) == json.dumps(_strip(b), sort_keys=True)


def test_a_bundle_with_both_log_files_is_an_error(repo_root: Path, tmp_path: Path) -> None:
    both = tmp_path / "both"
    shutil.copytree(repo_root / DEMO, both)
    with gzip.open(both / "logs.ndjson.gz", "wb") as g:
        g.write((both / "logs.ndjson").read_bytes())
    with pytest.raises(BundleError, match=r"logs\.ndjson and logs\.ndjson\.gz"):
        load_bundle(both)


def test_a_damaged_gzip_names_the_file(repo_root: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(repo_root / DEMO, bad)
    (bad / "logs.ndjson").unlink()
    (bad / "logs.ndjson.gz").write_bytes(b"\x1f\x8b\x08\x00not really gzip")
    with pytest.raises(BundleError, match=r"logs\.ndjson\.gz"):
        load_bundle(bad)


def test_env_of_another_environment_is_refused_before_any_call(repo_root: Path) -> None:
    from opsmate.agent.session.session import Session
    from opsmate.config import Settings

    with pytest.raises(UsageError, match="bundle captured in test; --env prod cannot be read"):
        Session.open(settings=Settings(), demo=True, model="none", env="prod")


def test_report_names_the_runbooks_it_searched(repo_root: Path) -> None:
    assert diagnose(repo_root / DEMO)["index"] == "bundle runbooks"
