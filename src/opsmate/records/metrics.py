"""Records of metric tools: series summaries (query_metrics) and alerts (list_alerts)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from opsmate.records.base import Record
from opsmate.records.types import (
    Count,
    OptBool,
    OptFloat,
    StrList,
    StrMap,
    Text,
    Time,
    items,
    lenient,
)


def _none() -> None:
    return None


class Point(Record):
    time: Time = None
    value: OptFloat = None


class Change(Record):
    time: Time = None
    size: OptFloat = None
    from_: OptFloat = Field(None, alias="from")
    to: OptFloat = None


class Series(Record):
    """One series summarised: labels, first/last/min/max, mean, the largest step, samples."""

    labels: StrMap = Field(default_factory=dict)
    points: Count = 0
    first: Annotated[Point | None, lenient(_none)] = None
    last: Annotated[Point | None, lenient(_none)] = None
    min: Annotated[Point | None, lenient(_none)] = None
    max: Annotated[Point | None, lenient(_none)] = None
    mean: OptFloat = None
    largest_change: Annotated[Change | None, lenient(_none)] = None
    samples: Annotated[list[list[Any]], lenient(list)] = Field(
        default_factory=list
    )  # [[rfc3339, value], ...]


class MetricResult(Record):
    query: Text = None
    description: Text = None
    result_type: Text = None
    series_total: Count = 0
    series: Annotated[list[Series], items(Series)] = Field(default_factory=list)


class Alert(Record):
    name: Text = None
    state: Text = "firing"
    severity: Text = None
    labels: StrMap = Field(default_factory=dict)
    annotations: StrMap = Field(default_factory=dict)
    active_at: Time = None
    value: Text = None
    # Alertmanager's: whether a silence or an inhibition holds it, and its fingerprint
    silenced: OptBool = None
    silenced_by: StrList = Field(default_factory=list)
    inhibited: OptBool = None
    fingerprint: Text = None
