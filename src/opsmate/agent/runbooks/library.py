"""Runbooks as the engine uses them: documents, applicability, conflicts, declared checks.

A search hit names a runbook; :class:`RunbookLibrary` loads the whole document
(front matter with its ``checks``, every section) from the bundle's or the
configured runbook folders, or falls back to what the hit itself carries.
Applicability (environment, service, status, supersession, version) decides which
runbook applies when two disagree — never the retrieval score.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opsmate.knowledge.types import RunbookMeta, SearchHit
from opsmate.tools.base import Constraints


@dataclass
class RunbookDoc:
    """One runbook document and the best search hit that led to it."""

    source: str
    title: str
    meta: RunbookMeta
    doc_version: str = ""
    sections: list[tuple[list[str], str]] = field(default_factory=list)
    rank: int = 99
    hit_heading: list[str] = field(default_factory=list)
    hit_text: str = ""

    @property
    def service(self) -> str | None:
        return self.meta.service

    def extra(self, key: str) -> Any:
        return (self.meta.model_extra or {}).get(key)

    @property
    def superseded_by(self) -> str | None:
        value = self.extra("superseded_by") or self.extra("replaced_by")
        return str(value) if value else None

    def full_text(self) -> str:
        """Title, tags, alerts and every section: what evidence terms are matched against."""
        head = [self.title, " ".join(self.meta.tags), " ".join(self.meta.alerts)]
        return "\n".join(head + [t for _, t in self.sections])

    def meta_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "service": self.meta.service,
            "environment": list(self.meta.environment),
            "status": self.meta.status,
            "version": self.meta.version,
        }


class RunbookLibrary:
    """Loads runbook documents by source path from a list of root folders (cached)."""

    def __init__(self, roots: Sequence[Path] = ()) -> None:
        self.roots = [Path(r) for r in roots if r]
        self._docs: dict[str, RunbookDoc | None] = {}

    def load(self, source: str) -> RunbookDoc | None:
        if source in self._docs:
            return self._docs[source]
        doc: RunbookDoc | None = None
        for root in self.roots:
            path = root / source
            if path.is_file():
                doc = _load(path, root)
                if doc is not None:
                    break
        self._docs[source] = doc
        return doc

    def doc_for_hit(self, hit: SearchHit) -> RunbookDoc:
        """The document behind ``hit`` (loaded from disk, else rebuilt from the hit)."""
        doc = self.load(hit.source)
        if doc is None:
            meta = _meta_from(hit.metadata)
            doc = RunbookDoc(
                source=hit.source,
                title=meta.title or (hit.heading_path[0] if hit.heading_path else hit.source),
                meta=meta,
                doc_version=hit.doc_version,
                sections=[(list(hit.heading_path), hit.parent_text or hit.text)],
            )
            self._docs[hit.source] = doc
        elif not any(h == list(hit.heading_path) for h, _ in doc.sections):
            doc.sections.append((list(hit.heading_path), hit.parent_text or hit.text))
        if not doc.hit_heading:  # the first search that found it says why it matters
            doc.rank = hit.rank
            doc.hit_heading = list(hit.heading_path)
            doc.hit_text = hit.text
        return doc

    def services(self, limit: int = 2000) -> set[str]:
        """Service names declared in the runbooks' front matter (read cheaply, no parsing)."""
        names: set[str] = set()
        for root in self.roots:
            for path in sorted(root.rglob("*.md"))[:limit]:
                try:
                    head = path.read_text(encoding="utf-8", errors="replace")[:3000]
                except OSError:
                    continue
                if not head.startswith("---"):
                    continue
                front = head.split("\n---", 1)[0]
                m = re.search(r"^service:\s*[\"']?([A-Za-z0-9_.-]+)", front, re.M)
                if m:
                    names.add(m.group(1))
        return names

    def find(self, reference: str, limit: int = 5000) -> RunbookDoc | None:
        """The runbook a URL or path points at (an alert's ``runbook_url``), or None.

        The longest runbook path (relative to its root, ``.md`` optional) that the
        reference's path ends with wins; else a file name that only one runbook has."""
        best: tuple[int, str] | None = None
        by_name: dict[str, list[str]] = {}
        for root in self.roots:
            for path in sorted(root.rglob("*.md"))[:limit]:
                source = path.relative_to(root).as_posix()
                score = reference_match(reference, source)
                if score and (best is None or score > best[0]):
                    best = (score, source)
                by_name.setdefault(path.stem.lower(), []).append(source)
        if best is None:
            stem = _reference_path(reference).rsplit("/", 1)[-1].lower().removesuffix(".md")
            found = by_name.get(stem, [])
            if len(found) == 1:
                best = (1, found[0])
        return self.load(best[1]) if best else None

    def all_docs(self, limit: int = 400) -> list[RunbookDoc]:
        """Every runbook under the roots (at most ``limit``), e.g. to learn service names."""
        out: list[RunbookDoc] = []
        for root in self.roots:
            for path in sorted(root.rglob("*.md"))[:limit]:
                source = path.relative_to(root).as_posix()
                doc = self.load(source)
                if doc is not None:
                    out.append(doc)
        return out


def _reference_path(reference: str) -> str:
    """The path part of a URL (or a path), unquoted, without leading / trailing slashes."""
    from urllib.parse import unquote, urlsplit

    ref = reference.strip()
    parts = urlsplit(ref)
    path = parts.path if parts.scheme in ("http", "https", "file") else ref.split("#")[0]
    return unquote(path).strip("/")


def reference_match(reference: str, source: str) -> int:
    """How well ``reference`` (URL or path) points at runbook ``source``: the matched
    length, 0 for no match. ``.../order-service/db-pool.md`` and ``.../db-pool`` both
    point at ``order-service/db-pool.md``."""
    ref = _reference_path(reference).lower()
    src = source.lower().strip("/")
    for cand in (src, src.removesuffix(".md")):
        if cand and (ref == cand or ref.endswith("/" + cand)):
            return len(cand)
    return 0


def _meta_from(metadata: dict[str, Any]) -> RunbookMeta:
    data = {k: v for k, v in (metadata or {}).items() if v is not None}
    env = data.get("environment")
    if isinstance(env, str):
        data["environment"] = [e.strip() for e in env.split(",") if e.strip()]
    for key in ("alerts", "tags"):
        if isinstance(data.get(key), str):
            data[key] = [t.strip() for t in data[key].split(",") if t.strip()]
    if data.get("status") not in ("active", "deprecated", "draft"):
        data.pop("status", None)
    if not isinstance(data.get("checks"), list):
        data.pop("checks", None)
    try:
        return RunbookMeta.model_validate(data)
    except Exception:  # a malformed metadata blob must not stop an investigation
        return RunbookMeta(title=str(data.get("title") or "") or None)


def _load(path: Path, root: Path) -> RunbookDoc | None:
    from opsmate.errors import OpsmateError
    from opsmate.knowledge.markdown import load_runbook

    try:
        parsed = load_runbook(path, root)
    except OpsmateError:
        return None
    return RunbookDoc(
        source=parsed.source,
        title=parsed.title,
        meta=parsed.meta,
        doc_version=parsed.doc_version,
        sections=[(list(s.heading_path), s.text) for s in parsed.sections],
    )


# ----------------------------------------------------------------------------- applicability


@dataclass
class Applicability:
    applies: bool
    reasons: list[str]  # why it applies / why not, in words for the report
    key: tuple[int, int, float, int]  # sort key: lower is more applicable


def _version_num(v: str | None) -> float:
    m = re.match(r"\s*v?(\d+(?:\.\d+)?)", v or "")
    return float(m.group(1)) if m else 0.0


def applicability(
    doc: RunbookDoc,
    constraints: Constraints,
    superseded: Iterable[str] = (),
) -> Applicability:
    """Does ``doc`` apply to this task (environment, status, supersession, service)?"""
    reasons: list[str] = []
    applies = True
    env = constraints.environment
    envs = [e.lower() for e in doc.meta.environment]
    if doc.meta.status == "deprecated":
        applies = False
        reasons.append("deprecated")
    elif doc.meta.status == "draft":
        reasons.append("draft")
    if doc.superseded_by or doc.source in set(superseded):
        applies = False
        reasons.append(f"superseded by {doc.superseded_by}" if doc.superseded_by else "superseded")
    if env and envs:
        if env.lower() in envs:
            reasons.append(f"covers environment {env}")
        else:
            applies = False
            reasons.append(f"written for {'/'.join(doc.meta.environment)}, not {env}")
    focus = [s.lower() for s in constraints.services]
    svc_match = 0 if (not focus or not doc.service or doc.service.lower() in focus) else 1
    if doc.service and focus and svc_match == 0:
        reasons.append(f"about {doc.service}")
    key = (0 if applies else 1, svc_match, -_version_num(doc.meta.version), doc.rank)
    return Applicability(applies, reasons, key)


def superseded_sources(docs: Iterable[RunbookDoc]) -> set[str]:
    """Sources that another document says it replaces (``supersedes`` / "replaces X")."""
    out: set[str] = set()
    for d in docs:
        if d.meta.supersedes:
            out.add(d.meta.supersedes)
    return out


@dataclass
class Conflict:
    statement: str
    sources: list[str]  # runbook sources, the applicable one first
    winner: str | None


def _topic_words(doc: RunbookDoc) -> set[str]:
    words = set(re.findall(r"[a-z][a-z0-9-]{2,}", doc.title.lower()))
    words |= {t.lower() for t in doc.meta.tags}
    words |= set(re.findall(r"[\u4e00-\u9fff]{2,}", doc.title))
    return words - {"the", "and", "for", "service", "notes", "old", "version", "runbook"}


def find_conflicts(docs: Sequence[RunbookDoc], constraints: Constraints) -> list[Conflict]:
    """Pairs of runbooks on the same topic whose applicability differs.

    Same topic: one supersedes the other, or the same service with overlapping title
    words / tags. Resolved by applicability (environment, status, supersession,
    service, version); the statement says which applies and why.
    """
    sup = superseded_sources(docs)
    out: list[Conflict] = []
    seen: set[frozenset[str]] = set()
    for i, a in enumerate(docs):
        for b in docs[i + 1 :]:
            pair = frozenset((a.source, b.source))
            if pair in seen or a.source == b.source:
                continue
            linked = b.source in (a.meta.supersedes, a.superseded_by) or a.source in (
                b.meta.supersedes,
                b.superseded_by,
            )
            wa, wb = _topic_words(a), _topic_words(b)
            overlap = len(wa & wb) / max(1, min(len(wa), len(wb)))
            same_topic = linked or (bool(a.service) and a.service == b.service and overlap >= 0.34)
            if not same_topic:
                continue
            pa, pb = applicability(a, constraints, sup), applicability(b, constraints, sup)
            differs = pa.applies != pb.applies or (a.meta.version != b.meta.version and linked)
            if not differs:
                continue
            seen.add(pair)
            win, lose, pw, pl = (a, b, pa, pb) if pa.key <= pb.key else (b, a, pb, pa)
            if pw.applies:
                verdict = (
                    f"'{win.title}' applies ({', '.join(pw.reasons) or 'active'}); "
                    f"'{lose.title}' does not ({', '.join(pl.reasons) or 'lower version'})"
                )
                winner: str | None = win.source
            else:
                verdict = "neither applies to this task: " + "; ".join(
                    f"'{d.title}': {', '.join(p.reasons)}" for d, p in ((win, pw), (lose, pl))
                )
                winner = None
            out.append(
                Conflict(
                    statement="runbooks on the same topic disagree; resolved by applicability: "
                    + verdict,
                    sources=[win.source, lose.source],
                    winner=winner,
                )
            )
    return out


# ----------------------------------------------------------------------------- checks


_PLACEHOLDERS = ("{service}", "{namespace}", "{environment}")


def fill_check_args(
    args: dict[str, Any], *, service: str | None, namespace: str | None, environment: str | None
) -> dict[str, Any] | None:
    """Fill ``{service}``, ``{namespace}``, ``{environment}``; None when a required one is unknown.

    An argument that is only a placeholder with no value is dropped (the tool's default
    applies); a placeholder inside a longer value with no value makes the check unusable.
    """
    values = {"{service}": service, "{namespace}": namespace, "{environment}": environment}
    out: dict[str, Any] = {}
    for key, value in args.items():
        if not isinstance(value, str) or not any(p in value for p in _PLACEHOLDERS):
            out[key] = value
            continue
        if value.strip() in values and values[value.strip()] is None:
            continue
        for ph, val in values.items():
            if ph in value:
                if val is None:
                    return None
                value = value.replace(ph, val)
        out[key] = value
    return out
