"""Field types shared by the records: lenient values that degrade to a default.

A malformed field (labels given as a list, a count given as text, a time that does not
parse) becomes the field's empty value instead of making the whole record unreadable:
one odd field must not hide a crash-looping pod.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any

from pydantic import PlainSerializer, ValidationError, ValidatorFunctionWrapHandler, WrapValidator

from opsmate.timeparse import format_time, parse_time


def lenient(default: Callable[[], Any]) -> WrapValidator:
    """A validator that returns ``default()`` when the value does not validate."""

    def wrap(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        if value is None:
            return default()
        try:
            return handler(value)
        except (ValidationError, ValueError, TypeError):
            return default()

    return WrapValidator(wrap)


def _time(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        return value
    try:
        return parse_time(value if isinstance(value, int | float) else str(value))
    except (ValueError, TypeError, OverflowError):
        return None


def _text(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int | float | bool):
        return str(value)
    return None


def _opt_int(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    if value in (None, ""):
        return None
    try:
        return int(value)
    except (ValueError, TypeError, OverflowError):
        return None


def _str_map(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    if not isinstance(value, dict):
        return {}
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def _str_list(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list | tuple):
        return []
    return [str(v) for v in value if v is not None]


Time = Annotated[
    datetime | None,
    WrapValidator(_time),
    PlainSerializer(lambda v: format_time(v) if v is not None else None, return_type=str | None),
]
"""A point in time: RFC 3339 text, unix seconds or a datetime in; RFC 3339 out."""

Text = Annotated[str | None, WrapValidator(_text)]
"""Optional text (numbers are turned into text; anything else becomes None)."""

OptInt = Annotated[int | None, WrapValidator(_opt_int)]
Count = Annotated[int, lenient(int)]
Flag = Annotated[bool, lenient(bool)]
StrMap = Annotated[dict[str, str], WrapValidator(_str_map)]
StrList = Annotated[list[str], WrapValidator(_str_list)]
AnyMap = Annotated[dict[str, Any], lenient(dict)]


def items(model: type[Any]) -> Any:
    """A list of ``model`` records in which items that do not parse are dropped."""

    def wrap(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        if not isinstance(value, list | tuple):
            return []
        out = []
        for v in value:
            if isinstance(v, model):
                out.append(v)
                continue
            if not isinstance(v, dict):
                continue
            try:
                out.append(model.model_validate(v))
            except ValidationError:
                continue
        return out

    return WrapValidator(wrap)


OptFloat = Annotated[float | None, lenient(lambda: None)]
OptBool = Annotated[bool | None, lenient(lambda: None)]
BoolMap = Annotated[dict[str, bool], lenient(dict)]
