"""Typed payloads: the whole ``data`` of one stable tool's answer as one model.

Each stable tool declares its payload beside its argument model
(:data:`opsmate.tools.schemas.PAYLOAD_MODELS`); the executor validates a result's ``data``
into it once (:func:`build_payload`) and the engine reads the typed attributes
(``result.payload_as(PodsPayload).pods``), never ``data`` by key. The envelope's JSON is
unchanged: it is still dumped from ``data``.

Payloads are as lenient as the records they hold: unknown keys are ignored, every field
has a default, and an item of a record list that does not parse is skipped and counted
(:attr:`Payload.skipped`), never failing the whole answer.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)

from opsmate.records.base import Record
from opsmate.records.k8s import Event, Node, Pod, Rollout
from opsmate.records.k8s_objects import record_type
from opsmate.records.logs import LogItem, LogStats, PodLogLine
from opsmate.records.metrics import Alert, MetricResult, Series
from opsmate.records.types import AnyMap, Count, Flag, OptBool, OptInt, StrList, Text, lenient

log = logging.getLogger(__name__)

P = TypeVar("P", bound=BaseModel)
R = TypeVar("R", bound=Record)

_SKIPPED = "skipped"  # the validation context's counter of items that did not parse


def _count_skipped(info: ValidationInfo, n: int) -> None:
    ctx = info.context
    if n and isinstance(ctx, dict):
        ctx[_SKIPPED] = int(ctx.get(_SKIPPED) or 0) + n


def _parse_items(model: type[Record], value: Any, info: ValidationInfo) -> list[Any]:
    """The items of ``value`` as ``model`` records; the others skipped and counted (as
    :func:`opsmate.records.base.parse_list`: a non-list is no items, none skipped)."""
    if not isinstance(value, list | tuple):
        return []
    out: list[Any] = []
    skipped = 0
    for v in value:
        if isinstance(v, model):
            out.append(v)
            continue
        if not isinstance(v, Mapping):
            skipped += 1
            continue
        try:
            out.append(model.model_validate(dict(v)))
        except ValidationError:
            skipped += 1
    _count_skipped(info, skipped)
    return out


def counted(model: type[Record]) -> WrapValidator:
    """A list of ``model`` records in which items that do not parse are skipped and counted."""

    def wrap(value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
        return _parse_items(model, value, info)

    return WrapValidator(wrap)


def _texts_only(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list | tuple) else []


TextList = Annotated[list[str], WrapValidator(_texts_only)]
"""A list of texts (anything else in it is left out)."""

MapList = Annotated[list[dict[str, Any]], lenient(list)]


class Payload(Record):
    """The base of every payload: lenient like a record, with the count of skipped items."""

    _skipped: int = PrivateAttr(default=0)

    @property
    def skipped(self) -> int:
        """Items of the record lists that did not parse (left out, never raised)."""
        return self._skipped

    def given(self, name: str) -> bool:
        """Whether the answer held the key of field ``name`` at all (an absent key and an
        empty value read differently in a summary)."""
        return name in self.model_fields_set


def build_payload(model: type[P] | None, data: Any) -> P | None:
    """``data`` validated into ``model``: None when there is no model, or when the payload
    cannot be built at all (logged at debug); items that do not parse are skipped and
    counted in :attr:`Payload.skipped`."""
    if model is None or not isinstance(data, Mapping):
        return None
    context: dict[str, Any] = {_SKIPPED: 0}
    try:
        payload = model.model_validate(dict(data), context=context)
    except Exception as exc:  # lenient as the engine's readers: never fails the call
        log.debug("payload %s not built: %s", model.__name__, exc)
        return None
    if isinstance(payload, Payload):
        payload._skipped = int(context[_SKIPPED])
    return payload


# ----------------------------------------------------------------------------- metrics


class MetricsPayload(MetricResult, Payload):
    """``query_metrics``: the series summaries (a string result's ``value``), or, from a
    bundle, the recorded queries when the query was not recorded."""

    series: Annotated[list[Series], counted(Series)] = Field(default_factory=list)
    series_dropped: Count = 0
    value: AnyMap = Field(default_factory=dict)  # a string result: {time, value}
    message: Text = None
    recorded_queries: StrList = Field(default_factory=list)
    descriptions: AnyMap = Field(default_factory=dict)


class AlertsPayload(Payload):
    """``list_alerts``: alerts (firing first) and, from Alertmanager, their silences."""

    alerts: Annotated[list[Alert], counted(Alert)] = Field(default_factory=list)
    count: Count = 0
    silences: MapList = Field(default_factory=list)
    silenced: Count = 0


class MetricNamesPayload(Payload):
    """``metric_names`` (a Prometheus extra tool): the names shown, how many there are."""

    names: StrList = Field(default_factory=list)
    count: Count = 0
    total: Count = 0


# ----------------------------------------------------------------------------- logs


class LogRecord(LogItem):
    """One ``search_logs`` record: the typed fields of :class:`LogItem`, and the record as
    its source stored it (:attr:`fields_as_stored`: a log record's own fields are open, and
    :func:`opsmate.loganalysis.parse.parse_record` reads them)."""

    _stored: dict[str, Any] = PrivateAttr(default_factory=dict)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_stored(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        out = handler(value)
        if isinstance(out, LogRecord) and isinstance(value, Mapping):
            out._stored = dict(value)
        return out

    @property
    def fields_as_stored(self) -> dict[str, Any]:
        return self._stored


class LogsPayload(Payload):
    """``search_logs``: one page of log records, newest first."""

    items: Annotated[list[LogRecord], counted(LogRecord)] = Field(default_factory=list)
    total: OptInt = None
    offset: Count = 0
    total_is_lower_bound: Flag = False
    hint: Text = None
    note: Text = None
    scanned: OptInt = None


class LogStatsPayload(LogStats, Payload):
    """``log_stats``: counts by level and the message groups (:class:`LogStats`)."""

    note: Text = None
    message: Text = None


class PodLogsPayload(Payload):
    """``pod_logs``: the tail as text lines and as parsed records (the newest that fit)."""

    lines: TextList = Field(default_factory=list)
    records: Annotated[list[PodLogLine], counted(PodLogLine)] = Field(default_factory=list)
    returned: Count = 0
    older_not_shown: OptInt = None
    container: Text = None
    records_note: Text = None
    older_note: Text = None
    message: Text = None
    pods_with_logs: StrList = Field(default_factory=list)


# ----------------------------------------------------------------------------- Kubernetes


class PodsPayload(Payload):
    """``list_pods``: pod summaries."""

    pods: Annotated[list[Pod], counted(Pod)] = Field(default_factory=list)
    count: Count = 0


class EventsPayload(Payload):
    """``get_events``: events, newest first."""

    events: Annotated[list[Event], counted(Event)] = Field(default_factory=list)
    count: Count = 0
    warnings: Count = 0


class RolloutPayload(Rollout, Payload):
    """``rollout_history``: a Deployment's revisions (:class:`Rollout`), or the names of
    the Deployments there are when it does not exist."""

    message: Text = None
    deployments: StrList = Field(default_factory=list)

    def rollout(self) -> Rollout:
        """The answer's :class:`Rollout` alone, a copy of its own (not revalidated)."""
        names = Rollout.model_fields
        return Rollout.model_construct(
            _fields_set=self.model_fields_set & set(names),
            **{k: getattr(self, k) for k in names},
        )


class NodesPayload(Payload):
    """``node_conditions``: node summaries (none, and the names there are, for a miss)."""

    nodes: Annotated[list[Node], counted(Node)] = Field(default_factory=list)
    count: Count = 0
    message: Text = None
    captured_nodes: StrList = Field(default_factory=list)


class ObjectsPayload(Payload):
    """``list_objects`` / ``get_object``: objects of one kind, each as its kind's record
    (:data:`~opsmate.records.k8s_objects.RECORD_TYPES`; none for a kind not read).
    A get that found nothing says ``found: false``; a bundle without the kind lists the
    kinds it holds."""

    kind: Text = None
    name: Text = None
    found: OptBool = None
    items: list[Record] = Field(default_factory=list)
    count: Count = 0
    message: Text = None
    kinds_held: StrList = Field(default_factory=list)
    namespaces_held: StrList = Field(default_factory=list)

    @model_validator(mode="wrap")
    @classmethod
    def _typed_items(
        cls, value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> Any:
        if not isinstance(value, Mapping):
            return handler(value)
        out = handler({k: v for k, v in value.items() if k != "items"})
        if not isinstance(out, ObjectsPayload):
            return out
        model = record_type(out.kind)
        if model is not None:  # the items as their kind's records (a kind not read: none)
            out.__dict__["items"] = _parse_items(model, value.get("items"), info)
        if "items" in value:
            out.model_fields_set.add("items")
        return out

    def of(self, model: type[R]) -> list[R]:
        """The objects that are ``model`` records."""
        return [r for r in self.items if isinstance(r, model)]


# ----------------------------------------------------------------------------- runbooks


class RunbookHit(Record):
    """One ``search_runbooks`` hit: a runbook section and where it sits."""

    rank: OptInt = None
    score: Annotated[float | None, lenient(lambda: None)] = None
    chunk_id: Text = None
    source: Text = None
    heading_path: StrList = Field(default_factory=list)
    doc_version: Text = None
    version: Text = None
    metadata: AnyMap = Field(default_factory=dict)
    text: Text = None
    parent_text: Text = None


class RunbooksPayload(Payload):
    """``search_runbooks``: the hits, best first."""

    hits: Annotated[list[RunbookHit], counted(RunbookHit)] = Field(default_factory=list)
    low_evidence: Flag = False
    warnings: StrList = Field(default_factory=list)


# ----------------------------------------------------------------------------- shared views


def pods_in(payload: BaseModel | None) -> list[Pod]:
    """The pods of a ``list_pods`` answer, or of a ``list_objects`` / ``get_object`` one."""
    if isinstance(payload, PodsPayload):
        return list(payload.pods)
    if isinstance(payload, ObjectsPayload):
        return payload.of(Pod)
    return []


def nodes_in(payload: BaseModel | None) -> list[Node]:
    """The nodes of a ``node_conditions`` answer, or of a ``list_objects`` one."""
    if isinstance(payload, NodesPayload):
        return list(payload.nodes)
    if isinstance(payload, ObjectsPayload):
        return payload.of(Node)
    return []


__all__ = [
    "AlertsPayload",
    "EventsPayload",
    "LogRecord",
    "LogStatsPayload",
    "LogsPayload",
    "MetricNamesPayload",
    "MetricsPayload",
    "NodesPayload",
    "ObjectsPayload",
    "Payload",
    "PodLogsPayload",
    "PodsPayload",
    "RolloutPayload",
    "RunbookHit",
    "RunbooksPayload",
    "build_payload",
    "counted",
    "nodes_in",
    "pods_in",
]
