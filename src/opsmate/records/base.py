"""The record base class and tolerant parsers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

R = TypeVar("R", bound="Record")


class Record(BaseModel):
    """A typed view of one item of tool data (unknown keys ignored, all fields optional)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    def dump(self) -> dict[str, Any]:
        """The JSON form put into a tool envelope (None fields and empty lists left out)."""
        return _prune(self.model_dump(mode="json", by_alias=True))


def _prune(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _prune(v) for k, v in value.items() if v is not None and v != [] and v != {}}
    if isinstance(value, list):
        return [_prune(v) for v in value]
    return value


def parse_one(model: type[R], value: Any) -> R | None:
    """``value`` as a ``model`` record, or None when it is not a mapping or does not parse."""
    if isinstance(value, model):
        return value
    if not isinstance(value, Mapping):
        return None
    try:
        return model.model_validate(dict(value))
    except ValidationError:
        return None


def parse_list(model: type[R], data: Any, *keys: str) -> tuple[list[R], int]:
    """The records under the first of ``keys`` present in ``data`` (or ``data`` itself when
    it is a list), and how many items were skipped because they did not parse."""
    items: Any = data
    if isinstance(data, Mapping):
        items = next((data[k] for k in keys if isinstance(data.get(k), list)), [])
    if not isinstance(items, list):
        return [], 0
    out: list[R] = []
    skipped = 0
    for it in items:
        rec = parse_one(model, it)
        if rec is None:
            skipped += 1
        else:
            out.append(rec)
    return out, skipped
