"""The JSON body Alertmanager posts to a webhook receiver (version 4), parsed and checked.

::

    {"version": "4", "groupKey": "{}:{alertname=\\"X\\"}", "truncatedAlerts": 0,
     "status": "firing", "receiver": "opsmate", "groupLabels": {...},
     "commonLabels": {...}, "commonAnnotations": {...}, "externalURL": "...",
     "alerts": [{"status": "firing", "labels": {"alertname": "X", ...},
                 "annotations": {...}, "startsAt": "...", "endsAt": "...",
                 "generatorURL": "...", "fingerprint": "..."}]}

:func:`parse_webhook` raises :class:`~opsmate.errors.InputError` naming the key that is
wrong (``alerts[1].labels.alertname: missing``), and the file when one is given.
Required: ``version`` "4", ``status``, a non-empty ``alerts`` list whose items have a
``status``, ``labels.alertname`` and ``startsAt``; the other keys are optional.

Hostile bodies are refused with the reason, before anything else reads them: JSON nested
deeper than :data:`MAX_DEPTH` levels, numbers longer than :data:`MAX_NUMBER_CHARS`
characters, ``NaN`` / ``Infinity``, lone UTF-16 surrogates (``"\\ud800"``: text no file
or terminal can hold), and alert times outside 1970–2199.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from opsmate.errors import InputError
from opsmate.tools.alertmanager.model import Alert, parse_am_time

MAX_FILE_BYTES = 4 << 20
STATUSES = ("firing", "resolved")
MAX_DEPTH = 32  # a webhook body is 4 levels deep
MAX_NUMBER_CHARS = 40  # a count or a timestamp; 5,000 digits is an attack on int()
_SURROGATE = re.compile("[\ud800-\udfff]")
EARLIEST, LATEST = datetime(1970, 1, 1, tzinfo=UTC), datetime(2200, 1, 1, tzinfo=UTC)


@dataclass
class WebhookMessage:
    """One notification: a group of alerts Alertmanager sends together."""

    group_key: str
    status: str  # firing | resolved (firing when any alert of the group fires)
    alerts: list[Alert]
    receiver: str = ""
    group_labels: dict[str, str] = field(default_factory=dict)
    common_labels: dict[str, str] = field(default_factory=dict)
    common_annotations: dict[str, str] = field(default_factory=dict)
    external_url: str = ""
    truncated_alerts: int = 0

    @property
    def firing(self) -> list[Alert]:
        return [a for a in self.alerts if a.status == "firing"]

    @property
    def alertname(self) -> str:
        """The group's alert name (group label, common label, else the first alert's)."""
        return (
            self.group_labels.get("alertname")
            or self.common_labels.get("alertname")
            or (self.alerts[0].name if self.alerts else "unknown")
        )


class _Checker:
    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, key: str, problem: str) -> InputError:
        return InputError(
            f"{self.where}: {key}: {problem}",
            hint="an Alertmanager webhook body (version 4) is expected",
        )

    def mapping(self, value: Any, key: str, *, required: bool = False) -> dict[str, str]:
        if value is None:
            if required:
                raise self.fail(key, "missing")
            return {}
        if not isinstance(value, dict):
            raise self.fail(key, f"must be an object of strings, not {type(value).__name__}")
        out = {}
        for k, v in value.items():
            if not isinstance(v, str):
                raise self.fail(f"{key}.{k}", f"must be a string, not {type(v).__name__}")
            out[str(k)] = v
        return out

    def text(self, value: Any, key: str, *, required: bool = False) -> str:
        if value is None:
            if required:
                raise self.fail(key, "missing")
            return ""
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, not {type(value).__name__}")
        return value

    def status(self, value: Any, key: str) -> str:
        text = self.text(value, key, required=True)
        if text not in STATUSES:
            raise self.fail(key, f"must be firing or resolved, not {text!r}")
        return text


def parse_webhook(body: Any, *, where: str = "webhook body") -> WebhookMessage:
    """Check and convert a decoded webhook body (``where`` names it in errors)."""
    c = _Checker(where)
    if not isinstance(body, dict):
        raise c.fail("(top level)", "must be a JSON object")
    version = body.get("version")
    if version is None:
        raise c.fail("version", "missing")
    if str(version) != "4":
        raise c.fail("version", f"version {version!r} is not supported (only 4)")
    status = c.status(body.get("status"), "status")
    raw_alerts = body.get("alerts")
    if raw_alerts is None:
        raise c.fail("alerts", "missing")
    if not isinstance(raw_alerts, list):
        raise c.fail("alerts", f"must be a list, not {type(raw_alerts).__name__}")
    if not raw_alerts:
        raise c.fail("alerts", "is empty")
    alerts = [_alert(c, item, f"alerts[{i}]") for i, item in enumerate(raw_alerts)]
    group_labels = c.mapping(body.get("groupLabels"), "groupLabels")
    truncated = body.get("truncatedAlerts", 0)
    if not isinstance(truncated, int) or isinstance(truncated, bool) or truncated < 0:
        raise c.fail("truncatedAlerts", "must be a whole number >= 0")
    group_key = c.text(body.get("groupKey"), "groupKey")
    if not group_key:  # a hand-written body: the group is its alert names and group labels
        names = sorted({a.name for a in alerts})
        group_key = json.dumps({"alertnames": names, **group_labels}, sort_keys=True)
    return WebhookMessage(
        group_key=group_key,
        status=status,
        alerts=alerts,
        receiver=c.text(body.get("receiver"), "receiver"),
        group_labels=group_labels,
        common_labels=c.mapping(body.get("commonLabels"), "commonLabels"),
        common_annotations=c.mapping(body.get("commonAnnotations"), "commonAnnotations"),
        external_url=c.text(body.get("externalURL"), "externalURL"),
        truncated_alerts=truncated,
    )


def _alert(c: _Checker, item: Any, key: str) -> Alert:
    if not isinstance(item, dict):
        raise c.fail(key, "must be an object")
    labels = c.mapping(item.get("labels"), f"{key}.labels", required=True)
    if not labels.get("alertname"):
        raise c.fail(f"{key}.labels.alertname", "missing")
    started = c.text(item.get("startsAt"), f"{key}.startsAt", required=True)
    starts_at = parse_am_time(started)
    if starts_at is None:
        raise c.fail(f"{key}.startsAt", f"not an RFC 3339 time: {started!r}")
    _plausible(c, f"{key}.startsAt", started, starts_at)
    ended = c.text(item.get("endsAt"), f"{key}.endsAt")
    ends_at = parse_am_time(ended) if ended else None
    if ended and ends_at is None and not ended.startswith("0001-01-01"):
        raise c.fail(f"{key}.endsAt", f"not an RFC 3339 time: {ended!r}")
    if ends_at is not None:
        _plausible(c, f"{key}.endsAt", ended, ends_at)
    return Alert(
        labels=labels,
        annotations=c.mapping(item.get("annotations"), f"{key}.annotations"),
        status=c.status(item.get("status"), f"{key}.status"),
        starts_at=starts_at,
        ends_at=ends_at,
        fingerprint=c.text(item.get("fingerprint"), f"{key}.fingerprint"),
        generator_url=c.text(item.get("generatorURL"), f"{key}.generatorURL"),
    )


def _plausible(c: _Checker, key: str, raw: str, when: datetime) -> None:
    if not EARLIEST <= when < LATEST:
        raise c.fail(key, f"{raw!r} is not a plausible alert time (1970 to 2199)")


class _Refused(ValueError):
    """A JSON value refused while decoding (too long a number, NaN)."""


def _number(text: str) -> int | float:
    if len(text) > MAX_NUMBER_CHARS:
        raise _Refused(f"a number of {len(text)} characters (at most {MAX_NUMBER_CHARS})")
    value = float(text) if any(ch in text for ch in ".eE") else int(text)
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        raise _Refused(f"a number out of range ({text[:20]})")
    return value


def _constant(name: str) -> float:
    raise _Refused(f"{name} is not JSON")


def _check_tree(c: _Checker, value: Any, key: str, depth: int) -> None:
    """No nesting deeper than MAX_DEPTH, no lone surrogate in any key or string."""
    if depth > MAX_DEPTH:
        raise c.fail(key or "(top level)", f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        _no_surrogate(c, value, key)
    elif isinstance(value, dict):
        for k, v in value.items():
            _no_surrogate(c, k, f"{key}.{k!r}" if key else repr(k))
            _check_tree(c, v, f"{key}.{k}" if key else str(k), depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_tree(c, v, f"{key}[{i}]", depth + 1)


def _no_surrogate(c: _Checker, text: str, key: str) -> None:
    m = _SURROGATE.search(text)
    if m is not None:
        raise c.fail(
            key or "(top level)",
            f"a lone UTF-16 surrogate (\\u{ord(m.group()):04x}) at character {m.start()}: "
            "not valid text",
        )


def parse_webhook_bytes(raw: bytes, *, where: str = "webhook body") -> WebhookMessage:
    """Decode JSON and parse; InputError naming the line and column of bad JSON, or the
    key of a hostile value (see the module docstring)."""
    c = _Checker(where)
    try:
        body = json.loads(
            raw.decode("utf-8-sig"),
            parse_int=_number,
            parse_float=_number,
            parse_constant=_constant,
        )
    except UnicodeDecodeError as exc:
        raise InputError(f"{where}: not UTF-8 text: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from exc
    except RecursionError as exc:
        raise c.fail("(top level)", f"nested deeper than {MAX_DEPTH} levels") from exc
    except _Refused as exc:
        raise c.fail("(a value)", str(exc)) from exc
    _check_tree(c, body, "", 0)
    return parse_webhook(body, where=where)


def read_webhook_file(path: Path) -> WebhookMessage:
    """A webhook body saved in a file (``diagnose --alert-file``)."""
    if not path.is_file():
        raise InputError(f"{path}: no such file (an Alertmanager webhook body is expected)")
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc}") from exc
    if len(raw) > MAX_FILE_BYTES:
        raise InputError(f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB")
    return parse_webhook_bytes(raw, where=str(path))
