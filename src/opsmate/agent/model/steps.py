"""Structured model turns: next action (with facts about the latest result) and narrative.

Every answer is constrained by a JSON schema built from the registry (tool names
as an enum, each tool's own argument schema) and checked again here; the
executor checks the call once more. A model call runs in a worker thread so a
wall-clock deadline or a cancel ends the wait (the answer is then ignored).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from opsmate.llm.base import ChatModel, Usage


def next_action_schema(describe: list[dict[str, Any]], ids: list[str]) -> dict[str, Any]:
    """``{"action": "call_tool"|"finish", "tool", "args", "reason", "facts"}``, args per tool."""
    names = [t["name"] for t in describe]
    facts = {
        "type": "array",
        "maxItems": 3,
        "items": {
            "type": "object",
            "properties": {
                "statement": {"type": "string", "maxLength": 300},
                "evidence": {"type": "array", "items": {"type": "string", "enum": ids or ["E0"]}},
            },
            "required": ["statement", "evidence"],
        },
    }
    variants: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {
                "action": {"const": "call_tool"},
                "tool": {"const": t["name"]},
                "args": t.get("parameters") or {"type": "object"},
                "reason": {"type": "string", "maxLength": 300},
                "facts": facts,
            },
            "required": ["action", "tool", "args", "reason"],
        }
        for t in describe
    ]
    variants.append(
        {
            "type": "object",
            "properties": {
                "action": {"const": "finish"},
                "reason": {"type": "string", "maxLength": 300},
                "facts": facts,
            },
            "required": ["action", "reason"],
        }
    )
    return {
        "title": "NextAction",
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["call_tool", "finish"]},
            "tool": {"type": "string", "enum": names},
            "args": {"type": "object"},
            "reason": {"type": "string"},
            "facts": facts,
        },
        "required": ["action", "reason"],
        "anyOf": variants,
    }


def narrative_schema(ids: list[str]) -> dict[str, Any]:
    """The closing narrative: a summary, and optionally a root-cause statement with citations."""
    cite = {"type": "array", "items": {"type": "string", "enum": ids or ["E0"]}, "minItems": 1}
    return {
        "title": "Narrative",
        "type": "object",
        "properties": {
            "summary": {"type": "string", "maxLength": 800},
            "root_cause": {
                "anyOf": [
                    {"type": "null"},
                    {
                        "type": "object",
                        "properties": {
                            "statement": {"type": "string", "maxLength": 600},
                            "evidence": cite,
                        },
                        "required": ["statement", "evidence"],
                    },
                ]
            },
        },
        "required": ["summary"],
    }


def degenerate(text: str) -> bool:
    """Text a small model loops on ("On-call engineer: On-call engineer: ..."): not usable."""
    words = text.split()
    if len(text.strip()) < 20 or not words:
        return True
    if len(words) >= 12 and len(set(words)) / len(words) < 0.35:
        return True
    grams = [" ".join(words[i : i + 3]) for i in range(len(words) - 2)]
    return any(grams.count(g) > 3 for g in set(grams))


@dataclass
class ModelAnswer:
    value: dict[str, Any] | None
    usage: Usage
    error: str | None = None  # timeout | cancelled | invalid: ... | failed: ...


def lenient(schema: Any) -> Any:
    """The schema with citation enums relaxed: unknown ids are repaired later, not fatal.

    Generation uses the strict schema (a grammar-bound model cannot invent an id); the
    answer is checked against this one, so a backend that ignores the schema still
    gets its valid parts used and its bad citations dropped by the citation check.
    """
    if isinstance(schema, dict):
        out = {}
        for k, v in schema.items():
            if k == "evidence" and isinstance(v, dict):
                out[k] = {**v, "items": {"type": "string"}}
            else:
                out[k] = lenient(v)
        return out
    if isinstance(schema, list):
        return [lenient(v) for v in schema]
    return schema


def validate(value: Any, schema: dict[str, Any]) -> str | None:
    """None when ``value`` satisfies ``schema``, else the most relevant problem.

    The schema is ours (built from the registry), so it is not re-checked against the
    meta-schema on every call (that costs far more than the validation itself).
    """
    import jsonschema

    try:
        validator = jsonschema.Draft202012Validator(schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    except (jsonschema.SchemaError, jsonschema.exceptions.RefResolutionError) as exc:
        return f"schema error: {str(exc)[:160]}"
    return None if error is None else error.message[:200]


def ask_model(
    model: ChatModel,
    messages: list[dict[str, str]],
    schema: dict[str, Any],
    *,
    max_tokens: int,
    deadline: float | None,
    cancelled: threading.Event,
    on_token: Callable[[str], None] | None = None,
) -> ModelAnswer:
    """Run one model call in a worker; give up at ``deadline`` or on cancel; validate."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["out"] = model.complete_json(
                messages, schema, max_tokens=max_tokens, on_token=on_token
            )
        except BaseException as exc:  # reported below
            box["exc"] = exc

    worker = threading.Thread(target=work, name="opsmate-model", daemon=True)
    worker.start()
    while worker.is_alive():
        gave_up = None
        if cancelled.is_set():
            gave_up = "cancelled"
        elif deadline is not None and time.monotonic() >= deadline:
            gave_up = "timeout"
        if gave_up:
            _stop(model, worker)
            return ModelAnswer(None, Usage(), gave_up)
        worker.join(0.02)
    if "exc" in box:
        exc = box["exc"]
        return ModelAnswer(None, Usage(), f"failed: {type(exc).__name__}: {exc}"[:300])
    value, usage = box.get("out", (None, Usage()))
    if not isinstance(value, dict):
        return ModelAnswer(None, usage, "invalid: not a JSON object")
    problem = validate(value, lenient(schema))
    if problem:
        return ModelAnswer(None, usage, f"invalid: {problem}")
    return ModelAnswer(value, usage)


def _stop(model: ChatModel, worker: threading.Thread, grace: float = 5.0) -> None:
    """Ask a backend that can cancel (llama.cpp, HTTP) to stop the abandoned call, and
    wait briefly for its worker, so no generation keeps running behind the engine."""
    cancel = getattr(model, "cancel", None)
    if callable(cancel):
        try:
            cancel()
        except Exception:  # a failing cancel must not break the investigation
            return
        worker.join(grace)
