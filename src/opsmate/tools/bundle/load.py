"""Reading and validating incident bundles (contracts section 2, ``opsmate-bundle/v1``).

Every problem is a :class:`~opsmate.errors.BundleError` whose message names the
file and, where there is one, the line (``metrics.yaml:14: entry 3: ...``), so a
person fixing a hand-written bundle knows where to look. Archive handling lives in
:mod:`opsmate.tools.bundle.archive`; replay in :mod:`opsmate.tools.bundle.replay`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from opsmate.errors import BundleError
from opsmate.safeyaml import Limits, iter_documents
from opsmate.timeparse import parse_time
from opsmate.tools.shaping import is_prom_data

BUNDLE_FORMAT = "opsmate-bundle/v1"
#: nesting a bundle's YAML and JSON may have (a Kubernetes object needs ~15 levels);
#: deeper data is refused at load time, so no later walk of it can recurse too far
MAX_DEPTH = 100
# aliases are allowed (a repeated time, shared labels) but may not add more than
# 100,000 items when expanded: a 418-byte "billion laughs" is refused
_LIMITS = Limits(max_depth=MAX_DEPTH, aliases=True, max_alias_items=100_000)

try:  # orjson reads NDJSON lines ~3x faster than json; lines it refuses go the json way
    import orjson

    _fast_loads: Any = orjson.loads
    _FAST_ERRORS: tuple[type[Exception], ...] = (orjson.JSONDecodeError, ValueError, TypeError)
except ImportError:  # pragma: no cover - orjson is a dependency
    _fast_loads = None
    _FAST_ERRORS = (ValueError,)
# an integer of 19+ digits may not fit 64 bits: orjson would read it as a float (found
# as a run of 19 "0" once every digit is mapped to "0": faster than a regex search)
_DIGITS_TO_0 = bytes.maketrans(b"123456789", b"000000000")
_DIGIT_RUN = b"0" * 19


class BundleMeta(BaseModel):
    """``bundle.yaml``: what was captured, when, from where."""

    format: str
    title: str
    captured_at: datetime
    window_from: datetime
    window_to: datetime
    environment: str
    cluster: str | None = None
    question: str | None = None
    # ``capture`` (written by opsmate snapshot / --save-bundle): by whom, what was left out
    captured_by: str | None = None
    not_captured: list[dict[str, str]] = Field(default_factory=list)
    captured_sources: list[str] | None = None  # the live sources configured (None: unknown)


class Expected(BaseModel):
    """``expected.yaml``: the answer key, read only by ``opsmate eval`` (extra keys kept;
    :meth:`unknown_keys` names them so eval can warn). ``status`` is one report status
    or a list of acceptable ones."""

    model_config = ConfigDict(extra="allow")

    question: str | None = None
    env: str | None = None
    must_mention: list[str] = Field(default_factory=list)
    runbooks: list[str] = Field(default_factory=list)
    must_not_query_env: list[str] = Field(default_factory=list)
    max_steps: int | None = None
    status: str | list[str] | None = None
    secrets: list[str] = Field(default_factory=list)

    def unknown_keys(self) -> list[str]:
        """Keys of the file that are neither contract keys nor known extensions."""
        return sorted(k for k in (self.model_extra or {}) if k not in EXPECTED_EXTENSIONS)


#: extension keys of expected.yaml that ``opsmate eval`` understands (besides the
#: contract's); any other key is reported as unknown and ignored
EXPECTED_EXTENSIONS = frozenset({"accept_status", "must_not_mention"})


class RecordedQuery(BaseModel):
    """One entry of ``metrics.yaml``: a PromQL query and the ``data`` it returned."""

    query: str
    type: str = "range"
    start: datetime | None = None
    end: datetime | None = None
    step: int | None = None
    time: datetime | None = None
    description: str | None = None
    result: dict[str, Any]
    index: int = 0  # 1-based position in metrics.yaml
    line: int = 0  # line of the entry in metrics.yaml


@dataclass
class LoadedData:
    """Everything read from a bundle directory, validated."""

    meta: BundleMeta
    expected: Expected | None
    metrics: list[RecordedQuery] = field(default_factory=list)
    logs: list[dict[str, Any]] = field(default_factory=list)
    log_times: list[datetime] = field(default_factory=list)
    log_lines: list[int] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)
    alerts: list[dict[str, Any]] | None = None


# --------------------------------------------------------------------------- YAML with lines


def _yaml_docs(path: Path, rel: str) -> Iterator[tuple[Any, yaml.Node | None]]:
    """(data, node) per YAML document of ``path``; node marks give line numbers."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BundleError(f"{rel}: cannot read: {exc}") from exc
    try:
        yield from iter_documents(text, _LIMITS)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{rel}:{mark.line + 1}" if mark is not None else rel
        problem = getattr(exc, "problem", None) or str(exc)
        raise BundleError(f"{where}: invalid YAML: {problem}") from exc


def _yaml_single(path: Path, rel: str) -> tuple[Any, yaml.Node | None]:
    docs = list(_yaml_docs(path, rel))
    if len(docs) > 1:
        raise BundleError(f"{rel}: expected one YAML document, found {len(docs)}")
    return docs[0] if docs else (None, None)


def _line(node: yaml.Node | None, *path: str | int) -> int:
    """1-based line of the value at ``path`` inside ``node`` (deepest one found)."""
    if node is None:
        return 1
    cur: yaml.Node = node
    for step in path:
        nxt: yaml.Node | None = None
        if isinstance(cur, yaml.MappingNode) and isinstance(step, str):
            for k, v in cur.value:
                if isinstance(k, yaml.ScalarNode) and k.value == step:
                    nxt = v
                    break
        elif (
            isinstance(cur, yaml.SequenceNode)
            and isinstance(step, int)
            and 0 <= step < len(cur.value)
        ):
            nxt = cur.value[step]
        if nxt is None:
            break
        cur = nxt
    return int(cur.start_mark.line) + 1


def _time(value: Any, where: str) -> datetime:
    if value is None or value == "":
        raise BundleError(f"{where}: missing time")
    try:
        return parse_time(value if isinstance(value, datetime | int | float) else str(value))
    except (ValueError, OverflowError, OSError) as exc:  # 1e20 / a 20-digit string: no date
        raise BundleError(f"{where}: bad time {value!r}: {exc}") from exc


# --------------------------------------------------------------------------- files


def load_meta(root: Path, default_title: str | None = None) -> BundleMeta:
    """Read and validate ``bundle.yaml`` (``title`` defaults to ``default_title`` or the
    directory's name)."""
    path = root / "bundle.yaml"
    if not path.is_file():
        raise BundleError(
            f"bundle.yaml missing in {root}",
            hint="a bundle is a directory (or .tar.gz) with bundle.yaml at its top",
        )
    data, node = _yaml_single(path, "bundle.yaml")
    if not isinstance(data, Mapping):
        raise BundleError("bundle.yaml:1: expected a mapping of keys (format, captured_at, ...)")
    missing = [k for k in ("format", "captured_at", "window", "environment") if k not in data]
    if missing:
        raise BundleError(f"bundle.yaml:1: missing required key(s): {', '.join(missing)}")
    if data["format"] != BUNDLE_FORMAT:
        raise BundleError(
            f"bundle.yaml:{_line(node, 'format')}: format must be {BUNDLE_FORMAT!r}, "
            f"got {data['format']!r}"
        )
    window = data["window"]
    if not isinstance(window, Mapping) or "from" not in window or "to" not in window:
        raise BundleError(f"bundle.yaml:{_line(node, 'window')}: window needs 'from' and 'to'")
    captured = _time(data["captured_at"], f"bundle.yaml:{_line(node, 'captured_at')}: captured_at")
    w_from = _time(window["from"], f"bundle.yaml:{_line(node, 'window', 'from')}: window.from")
    w_to = _time(window["to"], f"bundle.yaml:{_line(node, 'window', 'to')}: window.to")
    if w_from > w_to:
        raise BundleError(f"bundle.yaml:{_line(node, 'window')}: window.from is after window.to")
    env = data["environment"]
    if not isinstance(env, str) or not env.strip():
        raise BundleError(
            f"bundle.yaml:{_line(node, 'environment')}: environment must be a non-empty string"
        )
    for key in ("title", "cluster", "question"):
        if data.get(key) is not None and not isinstance(data[key], str | int | float):
            raise BundleError(f"bundle.yaml:{_line(node, key)}: {key} must be a string")
    return BundleMeta(
        format=data["format"],
        title=str(data.get("title") or default_title or root.name),
        captured_at=captured,
        window_from=w_from,
        window_to=w_to,
        environment=env.strip(),
        cluster=None if data.get("cluster") is None else str(data["cluster"]),
        question=None if data.get("question") is None else str(data["question"]),
        **_capture_info(data.get("capture")),
    )


def _capture_info(capture: Any) -> dict[str, Any]:
    """``captured_by`` and ``not_captured`` from the optional ``capture`` mapping (an
    extension written by opsmate; anything malformed in it is ignored, never an error)."""
    if not isinstance(capture, Mapping):
        return {}
    by = capture.get("by")
    missing = [
        {"what": str(x.get("what") or ""), "why": str(x.get("why") or "")}
        for x in capture.get("not_captured") or []
        if isinstance(x, Mapping)
    ] if isinstance(capture.get("not_captured"), list) else []  # fmt: skip
    sources = capture.get("sources")
    listed = [str(x) for x in sources] if isinstance(sources, list) else None
    return {"captured_by": str(by) if isinstance(by, str) else None, "not_captured": missing,
            "captured_sources": listed}  # fmt: skip


def load_expected(root: Path) -> Expected | None:
    """Read ``expected.yaml`` when present."""
    path = root / "expected.yaml"
    if not path.is_file():
        return None
    data, node = _yaml_single(path, "expected.yaml")
    if data is None:
        return Expected()
    if not isinstance(data, Mapping):
        raise BundleError("expected.yaml:1: expected a mapping of keys")
    try:
        return Expected.model_validate(dict(data))
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [p for p in err["loc"] if isinstance(p, str | int)]
        raise BundleError(
            f"expected.yaml:{_line(node, *loc)}: {'.'.join(map(str, loc))}: {err['msg']}"
        ) from exc


def load_metrics(root: Path) -> list[RecordedQuery]:
    """Read ``metrics.yaml``: a list of recorded queries whose ``result`` is a Prometheus
    ``data`` object."""
    path = root / "metrics.yaml"
    if not path.is_file():
        return []
    data, node = _yaml_single(path, "metrics.yaml")
    if data is None:
        return []
    if not isinstance(data, list):
        raise BundleError("metrics.yaml:1: expected a list of recorded queries")
    out: list[RecordedQuery] = []
    for i, entry in enumerate(data):
        where = f"metrics.yaml:{_line(node, i)}: entry {i + 1}"
        if not isinstance(entry, Mapping):
            raise BundleError(f"{where}: expected a mapping with query and result")
        query = entry.get("query")
        if not isinstance(query, str) or not query.strip():
            raise BundleError(f"{where}: missing 'query'")
        qtype = entry.get("type", "range")
        if qtype not in ("range", "instant"):
            raise BundleError(
                f"metrics.yaml:{_line(node, i, 'type')}: entry {i + 1}: "
                f"type must be range or instant, got {qtype!r}"
            )
        if "result" not in entry:
            raise BundleError(f"{where}: missing 'result' (the Prometheus API data object)")
        problem = is_prom_data(entry["result"])
        if problem is not None:
            raise BundleError(
                f"metrics.yaml:{_line(node, i, 'result')}: entry {i + 1}: result is not a "
                f"Prometheus data object ({{resultType, result}}): {problem}"
            )
        times: dict[str, datetime | None] = {}
        for key in ("start", "end", "time"):
            raw = entry.get(key)
            where_k = f"metrics.yaml:{_line(node, i, key)}: entry {i + 1}: {key}"
            times[key] = None if raw is None else _time(raw, where_k)
        step = entry.get("step")
        if step is not None and (not isinstance(step, int | float) or step <= 0):
            raise BundleError(
                f"metrics.yaml:{_line(node, i, 'step')}: entry {i + 1}: "
                "step must be a positive number of seconds"
            )
        desc = entry.get("description")
        out.append(
            RecordedQuery(
                query=query,
                type=qtype,
                start=times["start"],
                end=times["end"],
                time=times["time"],
                step=None if step is None else int(step),
                description=None if desc is None else str(desc),
                result=dict(entry["result"]),
                index=i + 1,
                line=_line(node, i),
            )
        )
    return out


def load_logs(root: Path, data: LoadedData) -> None:
    """Read ``logs.ndjson`` or ``logs.ndjson.gz`` into ``data.logs`` (with parsed times
    and line numbers). A bundle holding both is an error naming both."""
    import gzip
    import zlib

    plain, packed = root / "logs.ndjson", root / "logs.ndjson.gz"
    if plain.is_file() and packed.is_file():
        raise BundleError(
            "logs.ndjson and logs.ndjson.gz: a bundle holds one of the two, not both",
            hint="remove one of them (they should hold the same records)",
        )
    path = packed if packed.is_file() else plain
    name = path.name
    if not path.is_file():
        return
    try:
        fh = gzip.open(path, "rb") if path is packed else path.open("rb")  # noqa: SIM115
    except OSError as exc:
        raise BundleError(f"{name}: cannot read: {exc}") from exc
    try:
        with fh:
            _read_log_lines(fh, name, data)
    except (OSError, EOFError, zlib.error) as exc:  # a damaged or truncated gzip stream
        raise BundleError(f"{name}: cannot read: {exc}") from exc


def _read_log_lines(fh: Any, name: str, data: LoadedData) -> None:
    """Parse and check one NDJSON stream (``name`` is what errors cite).

    Each line is parsed from its bytes with orjson when it can be: a line orjson refuses
    (not UTF-8, a byte-order mark, ``NaN``, a lone surrogate, nesting past its limit ...)
    or that holds a run of 19 digits (an integer orjson would turn into a float) goes the
    ``json`` way, so what is accepted, what is refused and every error message stay those
    of ``json.loads``."""
    logs, times, lines = data.logs, data.log_times, data.log_lines
    for n, raw_bytes in enumerate(fh, start=1):
        rec: Any = None
        if _fast_loads is not None and _DIGIT_RUN not in raw_bytes.translate(_DIGITS_TO_0):
            try:
                rec = _fast_loads(raw_bytes)
            except _FAST_ERRORS:
                rec = None
        if type(rec) is dict:
            if b"\\ud" in raw_bytes or b"\\uD" in raw_bytes:  # no lone surrogates
                rec = _no_surrogates(rec)
            if raw_bytes.count(b"[") + raw_bytes.count(b"{") > MAX_DEPTH and (
                _depth(rec) > MAX_DEPTH
            ):
                raise BundleError(_too_deep(f"{name}:{n}"))
        else:
            rec = _json_line(raw_bytes, n, name)
            if rec is None:
                continue
        if "@timestamp" not in rec or "message" not in rec:
            key = "@timestamp" if "@timestamp" not in rec else "message"
            raise BundleError(f"{name}:{n}: missing '{key}'")
        if not isinstance(rec["message"], str):
            raise BundleError(f"{name}:{n}: 'message' must be a string")
        ts = rec["@timestamp"]
        t = _iso_time(ts) if type(ts) is str else None
        times.append(t if t is not None else _time(ts, f"{name}:{n}: @timestamp"))
        logs.append(rec)
        lines.append(n)


def _json_line(raw_bytes: bytes, n: int, name: str) -> dict[str, Any] | None:
    """One NDJSON line read with ``json`` (None: a blank line), checked as a record."""
    try:
        raw = raw_bytes.decode("utf-8-sig" if n == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        raise BundleError(f"{name}:{n}: not UTF-8 text: {exc.reason}") from exc
    if not raw.strip():
        return None
    try:
        rec = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BundleError(f"{name}:{n}: not valid JSON: {exc.msg}") from exc
    except RecursionError:
        raise BundleError(_too_deep(f"{name}:{n}")) from None
    if not isinstance(rec, dict):
        raise BundleError(f"{name}:{n}: expected a JSON object")
    if "\\ud" in raw or "\\uD" in raw:  # \ud800-style escapes: no lone surrogates
        rec = _no_surrogates(rec)
    if raw.count("[") + raw.count("{") > MAX_DEPTH and _depth(rec) > MAX_DEPTH:
        raise BundleError(_too_deep(f"{name}:{n}"))
    return rec


def _iso_time(value: str) -> datetime | None:
    """What :func:`~opsmate.timeparse.parse_time` makes of an RFC 3339 text, read directly
    (None: not that shape, or not valid; the caller then asks parse_time, for its error)."""
    if not value[:1].isdigit() or "-" not in value:  # "now", "-30m", unix seconds ...
        return None
    try:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except (ValueError, OverflowError):
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def check_bundle_environment(bundle_env: str | None, env: str | None) -> None:
    """``--env E`` against a bundle captured in another environment is a usage error,
    raised before any call (the bundle holds no data of ``E``)."""
    from opsmate.errors import UsageError

    if env and bundle_env and env.strip() != bundle_env:
        raise UsageError(
            f"bundle captured in {bundle_env}; --env {env.strip()} cannot be read from it",
            hint=f"drop --env, or use --env {bundle_env}",
        )


def _no_surrogates(value: Any) -> Any:
    """``value`` with lone UTF-16 surrogates (valid JSON escapes, invalid text) replaced by
    U+FFFD, so every string of a record can be printed and written as UTF-8."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if isinstance(value, dict):
        return {_no_surrogates(k): _no_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_surrogates(v) for v in value]
    return value


def load_objects(root: Path) -> list[dict[str, Any]]:
    """Read every ``k8s/*.yaml`` (multi-document; ``kind: List`` is expanded)."""
    k8s = root / "k8s"
    if not k8s.is_dir():
        return []
    out: list[dict[str, Any]] = []
    files = sorted(p for p in k8s.iterdir() if p.suffix in (".yaml", ".yml", ".json"))
    for path in files:
        rel = f"k8s/{path.name}"
        for d, (doc, node) in enumerate(_yaml_docs(path, rel), start=1):
            if doc is None:
                continue
            where = f"{rel}: document {d} (line {_line(node)})"
            if not isinstance(doc, dict):
                raise BundleError(f"{where}: expected a Kubernetes object (a mapping)")
            items = doc.get("items") if str(doc.get("kind", "")).endswith("List") else [doc]
            if not isinstance(items, list):
                raise BundleError(f"{where}: a List needs 'items'")
            for j, obj in enumerate(items):
                label = where if obj is doc else f"{where} item {j + 1}"
                if not isinstance(obj, dict) or not obj.get("kind"):
                    raise BundleError(f"{label}: missing 'kind'")
                meta = obj.get("metadata")
                if not isinstance(meta, dict) or not meta.get("name"):
                    raise BundleError(f"{label}: missing 'metadata.name'")
                out.append(obj)
    return out


def load_alerts(root: Path) -> list[dict[str, Any]] | None:
    """Read the optional ``alerts.yaml``: a list of Prometheus alerts (as ``/api/v1/alerts``
    returns them: labels, annotations, state, activeAt, value), or that response's
    ``data`` / whole body."""
    path = root / "alerts.yaml"
    if not path.is_file():
        return None
    data, node = _yaml_single(path, "alerts.yaml")
    if isinstance(data, Mapping) and isinstance(data.get("data"), Mapping):
        data = data["data"]
    if isinstance(data, Mapping):
        data = data.get("alerts")
    if data is None:
        return []
    if not isinstance(data, list):
        raise BundleError("alerts.yaml:1: expected a list of alerts")
    for i, alert in enumerate(data):
        labels = alert.get("labels") if isinstance(alert, Mapping) else None
        if not isinstance(labels, Mapping) or "alertname" not in labels:
            raise BundleError(
                f"alerts.yaml:{_line(node, i)}: alert {i + 1}: missing labels.alertname"
            )
    return [dict(a) for a in data]


def _too_deep(where: str) -> str:
    return f"{where}: nested deeper than {MAX_DEPTH} levels (not a log record opsmate can read)"


def _depth(value: Any) -> int:
    """Nesting depth of JSON data (iterative; stops counting past MAX_DEPTH)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if level > deepest:
            deepest = level
            if deepest > MAX_DEPTH:
                break
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return deepest


def check_links(root: Path) -> None:
    """Refuse a symbolic link anywhere in the bundle directory that leads outside it (or
    cannot be resolved), as archive extraction does: a bundle is read as a whole into
    reports, so ``runbooks/x.md -> /etc/passwd`` must not put that file there."""
    base = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root):  # links are not followed
        for name in (*dirnames, *filenames):
            path = Path(dirpath, name)
            if not path.is_symlink():
                continue
            rel = path.relative_to(root).as_posix()
            try:
                target = path.resolve()
                text = os.readlink(path)
            except (OSError, RuntimeError) as exc:  # a loop, a vanished link
                raise BundleError(f"{rel}: symbolic link cannot be resolved: {exc}") from exc
            if target != base and not target.is_relative_to(base):
                other = _same_part_of_other_bundle(target, rel)
                if other is None:
                    raise BundleError(
                        f"{rel}: symbolic link to {text!r} points outside the bundle",
                        hint="copy the file into the bundle instead of linking to it",
                    )
                if target.is_dir():
                    _check_links_under(target, other)


def _same_part_of_other_bundle(target: Path, rel: str) -> Path | None:
    """The root of another bundle when ``target`` is the same part of it as ``rel`` is of
    this one (``k8s -> /cases/a/k8s`` where ``/cases/a/bundle.yaml`` exists): a staged copy
    of a bundle (without its answer key) may link its parts, never arbitrary files."""
    depth = len(Path(rel).parts)
    other = target.parents[depth - 1] if depth <= len(target.parents) else None
    if other is None or not (other / "bundle.yaml").is_file():
        return None
    return other if target.relative_to(other).as_posix() == rel else None


def _check_links_under(top: Path, base_root: Path) -> None:
    """Links inside a linked part must stay inside the bundle that part belongs to."""
    base = base_root.resolve()
    for dirpath, dirnames, filenames in os.walk(top):
        for name in (*dirnames, *filenames):
            path = Path(dirpath, name)
            if not path.is_symlink():
                continue
            try:
                target = path.resolve()
            except (OSError, RuntimeError) as exc:
                raise BundleError(f"{path}: symbolic link cannot be resolved: {exc}") from exc
            if not target.is_relative_to(base):
                raise BundleError(
                    f"{path}: symbolic link to {os.readlink(path)!r} points outside the bundle",
                    hint="copy the file into the bundle instead of linking to it",
                )


def load_dir(
    root: Path, default_title: str | None = None, *, with_expected: bool = False
) -> LoadedData:
    """Read and validate every part of the bundle directory ``root``.

    ``expected.yaml`` (the answer key) is read only with ``with_expected`` (``opsmate
    eval``); ``diagnose`` and ``tool`` never look at it.
    """
    if (root / "bundle.yaml").is_file() or (root / "bundle.yaml").is_symlink():
        check_links(root)
    meta = load_meta(root, default_title)
    data = LoadedData(meta=meta, expected=load_expected(root) if with_expected else None)
    data.metrics = load_metrics(root)
    load_logs(root, data)
    data.objects = load_objects(root)
    data.alerts = load_alerts(root)
    return data
