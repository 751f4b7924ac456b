"""JSON-schema helpers shared by the model backends: a generation schema and a fitter.

:func:`generation_schema` returns a *narrower* copy of a step's schema for grammar
generation: strings and lists without limits get generous ones, so a small model
that starts repeating itself still has to close the object within the answer's
token budget (anything it can then emit still satisfies the original schema), and
regex patterns the grammar converter cannot take are left out. Given the answer's
room (``max_chars``), long strings and lists are shortened in proportion until the
longest answer the schema allows fits it, so the object closes before the token limit
instead of being cut and retried.

:func:`fit_to_schema` repairs what a grammar cannot express: numbers outside
``minimum``/``maximum`` are clamped, over-long strings and lists cut. Everything
else is returned as it came; the engine validates the answer again.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

STRING_CAP = 256  # characters, for a string the schema leaves unbounded
ARRAY_CAP = 16  # items, for a list the schema leaves unbounded
_STRING_BOUNDED_BY = ("maxLength", "enum", "const", "pattern", "format")


CHARS_PER_TOKEN = 2  # conservative: a small model rambling, or lists of ids, run near 2
_MIN_STRING = 24  # never shorten a string limit below this
_MIN_ITEMS = 3  # nor a list limit below this


def generation_schema(schema: dict[str, Any], max_chars: int | None = None) -> dict[str, Any]:
    """A copy of ``schema`` whose every value is bounded (for grammar-constrained generation).

    With ``max_chars``, string and list limits are scaled down (not below 24 characters /
    3 items) until the longest JSON text the schema allows is about that long.
    """
    out = _narrow(copy.deepcopy(schema))
    if not isinstance(out, dict):
        return schema
    if max_chars:
        defs = {**(out.get("definitions") or {}), **(out.get("$defs") or {})}
        for _ in range(6):
            longest = _max_chars(out, defs, 0)
            if longest <= max_chars:
                break
            if not _shrink(out, max_chars / longest):
                break
    return out


def _max_chars(node: Any, defs: dict[str, Any], depth: int) -> int:
    """The length of the longest compact JSON text ``node`` accepts (an estimate)."""
    if not isinstance(node, dict) or depth > 24:
        return 32
    if "$ref" in node:
        return _max_chars(defs.get(str(node["$ref"]).rsplit("/", 1)[-1]), defs, depth + 1)
    branches = node.get("anyOf") or node.get("oneOf")
    if isinstance(branches, list) and branches:
        return max(_max_chars(b, defs, depth + 1) for b in branches)
    if "const" in node:
        return len(json.dumps(node["const"], ensure_ascii=False))
    if isinstance(node.get("enum"), list) and node["enum"]:
        return max(len(json.dumps(v, ensure_ascii=False)) for v in node["enum"])
    types = _types(node)
    if "properties" in node:
        props = node.get("properties") or {}
        return 2 + sum(len(k) + 4 + _max_chars(v, defs, depth + 1) for k, v in props.items())
    if "string" in types:
        return int(node.get("maxLength", STRING_CAP)) + 2
    if "array" in types:
        per = _max_chars(node.get("items"), defs, depth + 1) + 1
        return 2 + int(node.get("maxItems", ARRAY_CAP)) * per
    if types & {"integer", "number"}:
        return 20
    if "object" in types:
        return 200  # a free-form object: the grammar cannot bound it
    return 8


def _shrink(node: Any, factor: float) -> bool:
    """Scale every string / list limit in ``node`` by ``factor``; False when none could move."""
    moved = False
    if isinstance(node, list):
        for v in node:
            moved = _shrink(v, factor) or moved
        return moved
    if not isinstance(node, dict):
        return False
    for key, value in node.items():
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            for sub in value.values():
                moved = _shrink(sub, factor) or moved
        elif key not in ("enum", "const", "default", "examples", "required"):
            moved = _shrink(value, factor) or moved
    for key, floor in (("maxLength", _MIN_STRING), ("maxItems", _MIN_ITEMS)):
        limit = node.get(key)
        low = max(floor, int(node.get("minLength" if key == "maxLength" else "minItems", 0)))
        if isinstance(limit, int) and limit > low:
            node[key] = max(low, int(limit * factor))
            moved = moved or node[key] < limit
    return moved


def _types(node: dict[str, Any]) -> set[str]:
    typ = node.get("type")
    if isinstance(typ, list):
        return {str(t) for t in typ}
    return {str(typ)} if typ else set()


def _narrow(node: Any) -> Any:
    if isinstance(node, list):
        return [_narrow(v) for v in node]
    if not isinstance(node, dict):
        return node
    for key, value in list(node.items()):
        if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(
            value, dict
        ):
            node[key] = {name: _narrow(sub) for name, sub in value.items()}
        elif key in ("enum", "const", "default", "examples", "required"):
            continue
        else:
            node[key] = _narrow(value)
    types = _types(node)
    pattern = node.get("pattern")
    if isinstance(pattern, str) and not (pattern.startswith("^") and pattern.endswith("$")):
        del node["pattern"]  # the grammar converter only takes anchored patterns
    if "string" in types and not any(k in node for k in _STRING_BOUNDED_BY):
        node["maxLength"] = max(STRING_CAP, int(node.get("minLength", 0)))
    if "array" in types and "maxItems" not in node and not isinstance(node.get("items"), list):
        node["maxItems"] = max(ARRAY_CAP, int(node.get("minItems", 0)))
    return node


def fit_to_schema(value: Any, schema: dict[str, Any]) -> Any:
    """``value`` with numeric bounds clamped and over-long strings/lists cut to ``schema``."""
    defs = dict(schema.get("$defs") or {})
    defs.update(schema.get("definitions") or {})
    return _Fitter(schema, defs).fit(value, schema, 0)


class _Fitter:
    def __init__(self, root: dict[str, Any], defs: dict[str, Any]) -> None:
        self.root = root
        self.defs = defs

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        seen = 0
        while isinstance(node, dict) and "$ref" in node and seen < 16:
            name = str(node["$ref"]).rsplit("/", 1)[-1]
            node = self.root if node["$ref"] == "#" else self.defs.get(name, {})
            seen += 1
        return node if isinstance(node, dict) else {}

    def valid(self, value: Any, node: dict[str, Any]) -> bool:
        try:
            import jsonschema
        except ImportError:  # no validator: trust the structural fit
            return True
        probe = dict(node)
        if self.defs and "$defs" not in probe:
            probe["$defs"] = self.defs
        try:
            return bool(jsonschema.Draft202012Validator(probe).is_valid(value))
        except Exception:  # a schema the validator cannot use: do not block the answer
            return True

    def fit(self, value: Any, node: Any, depth: int) -> Any:
        if not isinstance(node, dict) or depth > 32:
            return value
        node = self.resolve(node)
        branches = node.get("anyOf") or node.get("oneOf")
        if isinstance(branches, list) and branches:
            value = self.pick(value, branches, depth)
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int | float):
            return _clamp(value, node)
        if isinstance(value, str):
            limit = node.get("maxLength")
            return value[:limit] if isinstance(limit, int) and len(value) > limit else value
        if isinstance(value, list):
            limit = node.get("maxItems")
            if isinstance(limit, int) and len(value) > limit:
                value = value[:limit]
            items = node.get("items")
            if isinstance(items, dict):
                return [self.fit(v, items, depth + 1) for v in value]
            return value
        if isinstance(value, dict):
            props = node.get("properties") or {}
            return {
                k: self.fit(v, props[k], depth + 1) if k in props else v for k, v in value.items()
            }
        return value

    def pick(self, value: Any, branches: list[Any], depth: int) -> Any:
        """The value as is when a branch accepts it, else its first fit a branch accepts."""
        resolved = [self.resolve(b) for b in branches if isinstance(b, dict)]
        if any(self.valid(value, b) for b in resolved):
            return value
        for branch in resolved:
            candidate = self.fit(value, branch, depth + 1)
            if candidate is not value and self.valid(candidate, branch):
                return candidate
        return value


def _clamp(value: float, node: dict[str, Any]) -> float:
    integer = "integer" in _types(node)
    low, high = node.get("minimum"), node.get("maximum")
    xlow, xhigh = node.get("exclusiveMinimum"), node.get("exclusiveMaximum")
    out: float = value
    if isinstance(low, int | float) and out < low:
        out = math.ceil(low) if integer else low
    if isinstance(xlow, int | float) and out <= xlow and integer:
        out = math.floor(xlow) + 1
    if isinstance(high, int | float) and out > high:
        out = math.floor(high) if integer else high
    if isinstance(xhigh, int | float) and out >= xhigh and integer:
        out = math.ceil(xhigh) - 1
    if integer and isinstance(out, float) and out.is_integer():
        return int(out)
    return out


def parse_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a raw model answer, or None."""
    try:
        value = json.loads(
            text.strip(), strict=False
        )  # strict=False: tolerate a raw newline in a string
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def excerpt(text: str, limit: int = 240) -> str:
    """The start and end of a raw model answer, for error messages."""
    flat = " ".join(text.split())
    if not flat:
        return "empty"
    if len(flat) <= limit:
        return repr(flat)
    half = limit // 2
    return repr(flat[:half] + " ... " + flat[-half:])
