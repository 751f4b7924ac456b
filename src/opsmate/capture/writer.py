"""Writing an ``opsmate-bundle/v1`` archive: redaction first, then one atomic ``.tar.gz``.

:func:`write_bundle` takes the parts of a bundle (:class:`BundleContent`), passes every
one of them through the :class:`~opsmate.tools.redact.Redactor` (objects, log records,
metric labels and query texts, alerts, runbook text, the question and title), and
writes ``bundle.yaml``, ``k8s/<kind>.yaml``, ``logs.ndjson``, ``metrics.yaml``,
``alerts.yaml`` and ``runbooks/`` into a temporary file next to the target, renamed over
it only when complete: a failure leaves no half-written bundle behind.

``bundle.yaml`` gains an optional ``capture`` mapping (an extension of the format):
``captured`` (what is in the bundle, with counts), ``not_captured`` (``{what, why}``: read
or wanted but left out, and the reason), ``redactions`` (how many secret values were
masked), ``by`` (the command that wrote it) and ``sources`` (the live sources the
environment configured; replay offers only their tools and answers "not captured" for a
source of them that left nothing in the bundle).
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from opsmate.errors import InputError, UsageError
from opsmate.timeparse import format_time
from opsmate.tools.redact import Redactor

SUFFIXES = (".tar.gz", ".tgz")


@dataclass
class BundleContent:
    """Everything a bundle will hold, before redaction."""

    title: str
    captured_at: datetime
    window_from: datetime
    window_to: datetime
    environment: str
    by: str
    cluster: str | None = None
    question: str | None = None
    objects: list[dict[str, Any]] = field(default_factory=list)
    logs: list[dict[str, Any]] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    alerts: list[dict[str, Any]] | None = None
    runbooks: dict[str, str] = field(default_factory=dict)  # relative path -> text
    not_captured: list[dict[str, str]] = field(default_factory=list)
    extra_captured: list[dict[str, Any]] = field(default_factory=list)
    # the live sources the environment configured (prometheus, loki ...): replay offers
    # their tools only, as the live run had them; None: unknown (every tool)
    sources: list[str] | None = None


@dataclass
class WrittenBundle:
    """What :func:`write_bundle` wrote."""

    path: Path
    files: list[str]
    captured: list[dict[str, Any]]
    not_captured: list[dict[str, str]]
    redactions: int
    bytes: int

    def summary(self) -> dict[str, Any]:
        """A JSON-able account (``--json`` output of ``snapshot``)."""
        return {
            "bundle": str(self.path),
            "bytes": self.bytes,
            "files": self.files,
            "captured": self.captured,
            "not_captured": self.not_captured,
            "redactions": self.redactions,
        }


def check_out_path(out: Path, flag: str = "--out") -> Path:
    """The bundle path to write, or a UsageError / InputError naming what is wrong with it."""
    out = Path(out).expanduser()
    if not out.name.lower().endswith(SUFFIXES):
        raise UsageError(
            f"{flag} {out}: a bundle is written as a .tar.gz file",
            hint=f"e.g. {flag} incident.tar.gz",
        )
    if out.is_dir():
        raise InputError(f"{flag} {out}: is a directory, not a file name")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"{flag} {out}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise InputError(f"{flag} {out}: the folder {parent} is not writable")
    return out


def _yaml(data: Any, *, many: bool = False) -> bytes:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    kw: dict[str, Any] = {"Dumper": dumper, "sort_keys": False, "allow_unicode": True,
                          "default_flow_style": False, "width": 1000}  # fmt: skip
    text = yaml.dump_all(data, **kw) if many else yaml.dump(data, **kw)
    return text.encode("utf-8")


def _safe_rel(path: str) -> str | None:
    p = PurePosixPath(path.replace("\\", "/"))
    if p.is_absolute() or ".." in p.parts or not p.parts:
        return None
    return p.as_posix()


def _captured(c: BundleContent) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    kinds: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    for o in c.objects:
        kind = str(o.get("kind"))
        counts[kind] = counts.get(kind, 0) + 1
        ns = (o.get("metadata") or {}).get("namespace")
        kinds.setdefault(kind, set()).update([ns] if ns else [])
    for kind in sorted(counts):
        item: dict[str, Any] = {"what": f"k8s {kind}", "count": counts[kind]}
        if kinds[kind]:
            item["namespaces"] = sorted(kinds[kind])
        out.append(item)
    if c.logs:
        out.append({"what": "log records", "count": len(c.logs),
                    "from": c.logs[0]["@timestamp"], "to": c.logs[-1]["@timestamp"]})  # fmt: skip
    if c.metrics:
        out.append({"what": "metric queries", "count": len(c.metrics)})
    if c.alerts is not None:
        out.append({"what": "alerts", "count": len(c.alerts)})
    if c.runbooks:
        out.append({"what": "runbooks", "count": len(c.runbooks), "files": sorted(c.runbooks)})
    return out + c.extra_captured


def render(c: BundleContent, redactor: Redactor) -> tuple[dict[str, bytes], WrittenBundle]:
    """The files of the bundle (redacted), by path inside the archive."""
    total = 0

    def red(value: Any) -> Any:
        nonlocal total
        cleaned, n = redactor.redact_obj(value)
        total += n
        return cleaned

    c.objects = red(c.objects)
    c.logs = red(c.logs)
    c.metrics = red(c.metrics)
    c.alerts = red(c.alerts) if c.alerts is not None else None
    runbooks = {p: red(t) for p, t in c.runbooks.items()}
    files: dict[str, bytes] = {}
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for o in c.objects:
        by_kind.setdefault(str(o.get("kind")), []).append(o)
    for kind, objs in sorted(by_kind.items()):
        objs.sort(key=lambda o: ((o["metadata"].get("namespace") or ""), o["metadata"]["name"]))
        files[f"k8s/{kind.lower()}.yaml"] = _yaml(objs, many=True)
    if c.logs:
        lines = (json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in c.logs)
        files["logs.ndjson"] = ("\n".join(lines) + "\n").encode("utf-8")
    if c.metrics:
        files["metrics.yaml"] = _yaml(c.metrics)
    if c.alerts is not None:
        files["alerts.yaml"] = _yaml(c.alerts)
    for rel, text in sorted(runbooks.items()):
        safe = _safe_rel(rel)
        if safe is None:
            c.not_captured.append({"what": f"runbook {rel}", "why": "not a relative path"})
            continue
        files[f"runbooks/{safe}"] = text.encode("utf-8")
    captured = _captured(c)
    not_captured = red(c.not_captured)
    meta: dict[str, Any] = {
        "format": "opsmate-bundle/v1",
        "title": red(c.title),
        "captured_at": format_time(c.captured_at),
        "window": {"from": format_time(c.window_from), "to": format_time(c.window_to)},
        "environment": c.environment,
    }
    if c.cluster:
        meta["cluster"] = c.cluster
    if c.question:
        meta["question"] = red(c.question)
    meta["capture"] = {"by": c.by, "captured": captured, "not_captured": not_captured,
                       "redactions": total}  # fmt: skip
    if c.sources is not None:
        meta["capture"]["sources"] = sorted(c.sources)
    files = {"bundle.yaml": _yaml(meta), **files}
    info = WrittenBundle(Path(), list(files), captured, not_captured, total, 0)
    return files, info


def write_bundle(c: BundleContent, out: Path, redactor: Redactor) -> WrittenBundle:
    """Redact ``c`` and write it to ``out`` (``.tar.gz``) atomically; what was written."""
    out = check_out_path(out)
    files, info = render(c, redactor)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh, tarfile.open(fileobj=fh, mode="w:gz") as tar:
            now = time.time()
            for d in sorted({str(PurePosixPath(n).parent) for n in files} - {"."}):
                for part in _parents(d):
                    if part not in tar.getnames():
                        ti = tarfile.TarInfo(part)
                        ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, 0o755, int(now)
                        tar.addfile(ti)
            for name, data in files.items():
                ti = tarfile.TarInfo(name)
                ti.size, ti.mode, ti.mtime = len(data), 0o644, int(now)
                tar.addfile(ti, io.BytesIO(data))
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as a plain file would be (mkstemp makes it 0600)
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InputError(f"{out}: cannot write the bundle: {exc}") from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    info.path = out
    info.bytes = out.stat().st_size
    return info


def _parents(d: str) -> list[str]:
    parts = PurePosixPath(d).parts
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]
