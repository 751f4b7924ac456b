"""A ``--bundle`` archive that is not a readable tar archive: one line naming the file and
what it looks like (a ZIP renamed, a truncated download, an HTML error page ...), never
the five lines of tarfile's attempts, never a traceback."""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hardening_util import POOL, assert_no_traceback, run_cli


def _tar_bytes() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(POOL, arcname=".")
    return buf.getvalue()


def _zip(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for p in sorted(POOL.rglob("*")):
            if p.is_file():
                z.write(p, p.relative_to(POOL).as_posix())


def _cut_gzip(path: Path) -> None:
    data = gzip.compress(_tar_bytes())
    path.write_bytes(data[: len(data) // 3])


def _cut_tar(path: Path) -> None:
    path.write_bytes(_tar_bytes()[:3000])


CASES: dict[str, tuple[str, Callable[[Path], None], str]] = {
    "zip": ("bundle.tar.gz", _zip, "a ZIP archive"),
    "truncated gzip": ("bundle.tar.gz", _cut_gzip, "a gzip file cut short"),
    "truncated tar": ("bundle.tar", _cut_tar, "a tar archive cut short"),
    "empty": ("bundle.tgz", lambda p: p.write_bytes(b""), "an empty file"),
    "html page": (
        "bundle.tar.gz",
        lambda p: p.write_text("<!DOCTYPE html><html>404 Not Found</html>"),
        "an HTML page",
    ),
    "gzip of json": (
        "bundle.tar.gz",
        lambda p: p.write_bytes(gzip.compress(b'{"not": "a tar"}')),
        "a gzip file holding text (JSON), not a tar archive",
    ),
    "text": ("bundle.tar.gz", lambda p: p.write_text("hello\n"), "a text file"),
    "binary": ("bundle.tar.gz", lambda p: p.write_bytes(bytes(range(256)) * 8), "binary data"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_one_line_naming_the_file_and_what_it_looks_like(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name, make, looks = CASES[case]
    path = tmp_path / name
    make(path)
    code, out, err = run_cli(["diagnose", "why?", "--bundle", str(path), "--json"], capsys)
    assert code == 2 and out == ""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert name in lines[0] and looks in lines[0], lines[0]
    assert_no_traceback(err)


def test_a_good_archive_still_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "good.tar.gz"
    path.write_bytes(gzip.compress(_tar_bytes()))
    code, out, err = run_cli(
        ["tool", "list_pods", "--bundle", str(path), "--args", "{}", "--json"], capsys
    )
    assert code == 0, err
    assert "order-service" in out  # the pods of the bundle
