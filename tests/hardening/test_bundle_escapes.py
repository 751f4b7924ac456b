"""Escapes and integrity of incident bundles: links out of a directory bundle, archives
with a member twice, the bounded extraction cache, and hostile content (a 100,000-deep
JSON line, deep or alias-bombed Kubernetes YAML) that must be a named error, not a
traceback."""

from __future__ import annotations

import io
import json
import os
import tarfile
import time
from pathlib import Path

import pytest
from hardening_util import POOL, assert_no_traceback, copy_bundle, run_cli

from opsmate.errors import BundleError
from opsmate.tools.bundle import archive as bundle_archive
from opsmate.tools.bundle import load_bundle


# -- symbolic links in directory bundles ----------------------------------------------------
def test_link_out_of_a_directory_bundle_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("root:x:0:0:SECRET-OUTSIDE-THE-BUNDLE\n", encoding="utf-8")
    bundle = copy_bundle(tmp_path)
    (bundle / "runbooks" / "x.md").symlink_to(secret)
    with pytest.raises(BundleError) as info:
        load_bundle(bundle)
    assert "runbooks/x.md" in str(info.value) and "outside the bundle" in str(info.value)

    code, out, err = run_cli(["diagnose", "--bundle", str(bundle), "--json"], capsys)
    assert code == 2 and "runbooks/x.md" in err
    assert "SECRET-OUTSIDE" not in out + err


def test_links_to_etc_passwd_and_dangling_links_are_refused(tmp_path: Path) -> None:
    bundle = copy_bundle(tmp_path)
    link = bundle / "k8s" / "more.yaml"
    link.symlink_to("/etc/passwd")
    with pytest.raises(BundleError, match=r"k8s/more\.yaml"):
        load_bundle(bundle)
    link.unlink()
    (bundle / "runbooks" / "loop.md").symlink_to(bundle / "runbooks" / "loop.md")
    with pytest.raises(BundleError, match=r"runbooks/loop\.md"):
        load_bundle(bundle)


def test_a_linked_directory_out_of_the_bundle_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "a.md").write_text("# A\n", encoding="utf-8")
    bundle = copy_bundle(tmp_path)
    (bundle / "runbooks" / "more").symlink_to(outside, target_is_directory=True)
    with pytest.raises(BundleError, match="runbooks/more"):
        load_bundle(bundle)


def test_links_inside_the_bundle_are_fine(tmp_path: Path) -> None:
    bundle = copy_bundle(tmp_path)
    first = sorted((bundle / "runbooks").rglob("*.md"))[0]
    (bundle / "runbooks" / "alias.md").symlink_to(first)
    assert load_bundle(bundle).meta.environment == "test"


# -- archives -------------------------------------------------------------------------------
def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(time.time())
    tar.addfile(info, io.BytesIO(data))


def _archive(path: Path, members: list[tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members:
            _add(tar, name, data)
    return path


def _pool_members(skip: tuple[str, ...] = ()) -> list[tuple[str, bytes]]:
    out = []
    for p in sorted(POOL.rglob("*")):
        rel = p.relative_to(POOL).as_posix()
        if p.is_file() and rel not in skip:
            out.append((f"b/{rel}", p.read_bytes()))
    return out


def test_tar_with_two_bundle_yaml_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPSMATE_CACHE_DIR", str(tmp_path / "cache"))
    test_meta = (POOL / "bundle.yaml").read_bytes()
    prod_meta = test_meta.replace(b"environment: test", b"environment: prod")
    assert prod_meta != test_meta
    members = [*_pool_members(), ("b/bundle.yaml", prod_meta)]  # tar t shows test first
    archive = _archive(tmp_path / "dup.tar.gz", members)
    with pytest.raises(BundleError) as info:
        load_bundle(archive)
    assert "b/bundle.yaml" in str(info.value) and "more than once" in str(info.value)
    code, _out, err = run_cli(["tool", "list_pods", "--bundle", str(archive), "--json"], capsys)
    assert code == 2 and "more than once" in err
    assert not list((tmp_path / "cache" / "bundles").glob("[0-9a-f]*"))  # nothing published

    # "./b/x" and "b/x" are the same path too
    members = [*_pool_members(), ("./b/metrics.yaml", b"[]\n")]
    with pytest.raises(BundleError, match="more than once"):
        load_bundle(_archive(tmp_path / "dup2.tar.gz", members))


def _big_archive(path: Path, payload: int, tag: str) -> Path:
    members = [*_pool_members(), (f"b/runbooks/big-{tag}.txt", b"\0" * payload)]
    return _archive(path, members)


def test_extraction_cache_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A small archive that expands a lot no longer sits in the cache for 7 days: large
    extractions are dropped after LARGE_KEEP_SECONDS, and the least recently used go
    when the whole cache passes MAX_CACHE_BYTES (limits scaled down for the test)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("OPSMATE_CACHE_DIR", str(cache))
    monkeypatch.setattr(bundle_archive, "MAX_CACHE_BYTES", 3 << 20)
    monkeypatch.setattr(bundle_archive, "LARGE_BYTES", 10 << 20)
    base = cache / "bundles"

    def extractions() -> set[str]:
        return {p.name for p in base.iterdir() if not p.name.startswith("tmp-")}

    first = load_bundle(_big_archive(tmp_path / "a.tar.gz", 1 << 20, "a")).root
    second = load_bundle(_big_archive(tmp_path / "b.tar.gz", 1 << 20, "b")).root
    first_dir, second_dir = first.parent.name, second.parent.name
    assert extractions() == {first_dir, second_dir}
    old = time.time() - 3600
    os.utime(first.parent, (old, old))  # the first one was used an hour ago
    third = load_bundle(_big_archive(tmp_path / "c.tar.gz", 1536 << 10, "c")).root
    # 1 + 1 + 1.5 MiB > 3 MiB: the least recently used extraction went
    assert extractions() == {second_dir, third.parent.name}
    marker = json.loads((third.parent / ".opsmate-extracted").read_text())
    assert marker["bytes"] >= 1536 << 10

    # an extraction above LARGE_BYTES is kept LARGE_KEEP_SECONDS only
    monkeypatch.setattr(bundle_archive, "LARGE_BYTES", 1 << 20)
    stale = time.time() - bundle_archive.LARGE_KEEP_SECONDS - 60
    os.utime(third.parent, (stale, stale))
    load_bundle(_big_archive(tmp_path / "d.tar.gz", 10, "d"))
    assert third.parent.name not in extractions()
    assert second_dir in extractions()  # small and recent: kept


# -- hostile content --------------------------------------------------------------------------
def test_100000_deep_json_line_is_a_named_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = copy_bundle(tmp_path)
    lines = (bundle / "logs.ndjson").read_text(encoding="utf-8").splitlines()
    deep = "[" * 100_000 + "]" * 100_000
    record = '{"@timestamp": "2026-10-21T09:40:00+08:00", "message": "x", "d": ' + deep + "}"
    lines.insert(2, record)
    (bundle / "logs.ndjson").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _out, err = run_cli(["tool", "search_logs", "--bundle", str(bundle), "--json"], capsys)
    assert code == 2 and "logs.ndjson:3" in err and "nested deeper" in err
    assert_no_traceback(err)


def test_moderately_deep_json_is_refused_before_anything_recurses(tmp_path: Path) -> None:
    bundle = copy_bundle(tmp_path)
    deep = "[" * 500 + "]" * 500  # json.loads accepts it; later walks would not
    record = '{"@timestamp": "2026-10-21T09:40:00+08:00", "message": "x", "d": ' + deep + "}"
    with (bundle / "logs.ndjson").open("a", encoding="utf-8") as fh:
        fh.write(record + "\n")
    with pytest.raises(BundleError, match=r"logs\.ndjson:\d+: nested deeper than 100"):
        load_bundle(bundle)


def test_deep_kubernetes_yaml_is_a_named_error(tmp_path: Path) -> None:
    bundle = copy_bundle(tmp_path)
    for depth in (100_000, 300):
        (bundle / "k8s" / "deep.yaml").write_text(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: deep}\n"
            f"spec: {'[' * depth}{']' * depth}\n",
            encoding="utf-8",
        )
        with pytest.raises(BundleError, match=r"k8s/deep\.yaml:4: invalid YAML"):
            load_bundle(bundle)


def test_alias_bomb_in_kubernetes_yaml_is_refused_fast(tmp_path: Path) -> None:
    bundle = copy_bundle(tmp_path)
    rows = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        rows.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    annotations = "\n".join("    " + r for r in rows)
    (bundle / "k8s" / "bomb.yaml").write_text(
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: bomb\n  annotations:\n{annotations}\n",
        encoding="utf-8",
    )
    started = time.monotonic()
    with pytest.raises(BundleError, match=r"k8s/bomb\.yaml.*alias bomb"):
        load_bundle(bundle)
    assert time.monotonic() - started < 2.0


def test_a_benign_alias_still_loads(tmp_path: Path) -> None:
    bundle = copy_bundle(tmp_path)
    (bundle / "k8s" / "svc.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  labels: &l {app: order-service}\n"
        "spec:\n  selector: *l\n",
        encoding="utf-8",
    )
    objects = load_bundle(bundle).objects
    svc = next(o for o in objects if o["kind"] == "Service")
    assert svc["spec"]["selector"] == {"app": "order-service"}
