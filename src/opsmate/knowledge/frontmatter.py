"""Runbook front matter: YAML text -> validated :class:`RunbookMeta`.

Errors name the runbook and the line (1-based, counted in the whole file, where
line 1 is the opening ``---``), so a user can fix the file without guessing. The YAML
is read through :mod:`opsmate.safeyaml`: nesting deeper than :data:`MAX_DEPTH` and any
alias (``*name``: a 418-byte alias bomb would otherwise cost seconds and hundreds of
MiB) are refused, so one hostile runbook is rejected and the rest are indexed.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

import yaml
from pydantic import ValidationError

from opsmate.errors import InputError
from opsmate.knowledge.types import RunbookCheck, RunbookMeta
from opsmate.safeyaml import Limits, load_single

#: nesting a front matter may have (``checks: [{args: {...}}]`` needs 4)
MAX_DEPTH = 16
_LIMITS = Limits(max_depth=MAX_DEPTH, aliases=False)

#: Dummy values substituted for check-argument placeholders before validation.
PLACEHOLDERS: dict[str, str] = {
    "{service}": "placeholder-service",
    "{namespace}": "placeholder-namespace",
    "{environment}": "placeholder-environment",
}
_LIST_KEYS = ("environment", "alerts", "tags", "domains")
_STATUSES = ("active", "deprecated", "draft")


def _jsonable(value: Any) -> Any:
    """Dates and other YAML scalars become JSON-friendly values (kept in ``extra``)."""
    if isinstance(value, _dt.date | _dt.datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _fill_placeholders(value: Any) -> Any:
    if isinstance(value, str):
        for key, dummy in PLACEHOLDERS.items():
            value = value.replace(key, dummy)
        return value
    if isinstance(value, dict):
        return {k: _fill_placeholders(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill_placeholders(v) for v in value]
    return value


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err.get("loc", ()))
    return f"{loc}: {err.get('msg', 'invalid')}" if loc else str(err.get("msg", "invalid"))


class _Lines:
    """File line numbers of top-level keys and of ``checks`` items, from the YAML node tree."""

    def __init__(self, node: yaml.Node | None, offset: int) -> None:
        self.offset = offset  # file line of the first YAML line, 1-based
        self.keys: dict[str, int] = {}
        self.checks: list[int] = []
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = str(key_node.value)
                self.keys[key] = key_node.start_mark.line + offset
                if key == "checks" and isinstance(value_node, yaml.SequenceNode):
                    self.checks = [item.start_mark.line + offset for item in value_node.value]

    def key(self, key: str) -> int:
        return self.keys.get(key, self.offset - 1)

    def check(self, index: int) -> int:
        return self.checks[index] if index < len(self.checks) else self.key("checks")


def _validate_check(raw: Any, index: int, source: str, line: int) -> RunbookCheck:
    from opsmate.tools.schemas import ARGS_MODELS, TOOL_NAMES

    where = f"{source}:{line}: checks[{index}]"
    if not isinstance(raw, dict):
        raise InputError(f"{where} must be a mapping with `tool` and `args`")
    name = raw.get("name", "")
    if name:
        where = f"{where} ({name})"
    tool = raw.get("tool")
    if tool not in TOOL_NAMES:
        raise InputError(
            f"{where}: unknown tool {tool!r}",
            hint=f"tool must be one of: {', '.join(TOOL_NAMES)}",
        )
    args = raw.get("args", {})
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise InputError(f"{where}: `args` must be a mapping, got {type(args).__name__}")
    try:
        ARGS_MODELS[tool].model_validate(_fill_placeholders(args))
    except ValidationError as exc:
        raise InputError(f"{where}: invalid args for {tool}: {_first_error(exc)}") from exc
    try:
        return RunbookCheck.model_validate({**raw, "args": _jsonable(args)})
    except ValidationError as exc:
        raise InputError(f"{where}: {_first_error(exc)}") from exc


def parse_front_matter(content: str, source: str, first_line: int = 2) -> RunbookMeta:
    """Parse and validate the YAML between the ``---`` fences.

    ``first_line`` is the file line (1-based) of the first YAML line. Raises
    :class:`InputError` naming ``source`` and the line for invalid YAML, a front
    matter that is not a mapping, a bad ``status`` or a malformed ``checks`` entry.
    """
    try:
        data, node = load_single(content, _LIMITS)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = first_line + mark.line if mark is not None else first_line - 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{source}:{line}: invalid YAML in front matter: {problem}") from exc
    if data is None:
        return RunbookMeta()
    lines = _Lines(node, first_line)
    if not isinstance(data, dict):
        raise InputError(
            f"{source}:{first_line - 1}: front matter must be a mapping (key: value), "
            f"got {type(data).__name__}"
        )
    fields: dict[str, Any] = {str(k): v for k, v in data.items()}
    for key in _LIST_KEYS:
        value = fields.get(key)
        if value is None:
            fields.pop(key, None)
        elif isinstance(value, str | int | float):
            fields[key] = [str(value)]
        elif isinstance(value, list):
            fields[key] = [str(v) for v in value if v is not None]
        else:
            raise InputError(f"{source}:{lines.key(key)}: `{key}` must be a string or a list")
    for key in ("title", "service", "version", "owner", "supersedes"):
        if key in fields and fields[key] is not None and not isinstance(fields[key], str):
            fields[key] = str(fields[key])
    if fields.get("status") is None:
        fields.pop("status", None)
    else:
        status = str(fields["status"]).strip().lower()
        if status not in _STATUSES:
            raise InputError(
                f"{source}:{lines.key('status')}: status must be one of "
                f"{', '.join(_STATUSES)}, got {fields['status']!r}"
            )
        fields["status"] = status
    raw_checks = fields.pop("checks", None)
    checks: list[RunbookCheck] = []
    if raw_checks is not None:
        if not isinstance(raw_checks, list):
            raise InputError(f"{source}:{lines.key('checks')}: `checks` must be a list")
        checks = [_validate_check(c, i, source, lines.check(i)) for i, c in enumerate(raw_checks)]
    known = RunbookMeta.model_fields
    fields = {k: (v if k in known else _jsonable(v)) for k, v in fields.items()}
    try:
        meta = RunbookMeta.model_validate(fields)
    except ValidationError as exc:
        loc = exc.errors()[0].get("loc", ("",))
        line = lines.key(str(loc[0])) if loc else first_line - 1
        raise InputError(f"{source}:{line}: invalid front matter: {_first_error(exc)}") from exc
    meta.checks = checks
    return meta
