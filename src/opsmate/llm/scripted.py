"""A scripted model: canned JSON replies from a file, for tests and demos.

File format (YAML or JSON)::

    delay: 0.0                 # optional default seconds per reply (streamed over tokens)
    replies:                   # consumed in order
      - {action: call_tool, tool: log_stats, args: {service: order-service}, reason: "..."}
      - schema: Narrative      # only consumed by a call whose schema title matches
        delay: 2.5             # this reply is slow (UI and time-out tests)
        reply: {summary: "..."}
    defaults:                  # optional: reply when the queue has nothing for a schema
      NextAction: {action: finish, reason: "script exhausted"}

A bare list is the same as ``replies``. When nothing matches, the built-in default
is ``{"action": "finish"}`` for a next-action schema and the smallest object the
schema accepts otherwise. Every call's messages are recorded in ``prompts``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from opsmate.errors import ModelError
from opsmate.llm.usage import Usage, approx_tokens


class ScriptedModel:
    """Replays canned replies; records the prompts it was given."""

    def __init__(
        self,
        replies: list[Any] | None = None,
        *,
        delay: float = 0.0,
        defaults: dict[str, dict[str, Any]] | None = None,
        name: str = "scripted",
    ) -> None:
        self.name = name
        self.delay = float(delay)
        self.defaults = dict(defaults or {})
        self._queue: list[dict[str, Any]] = [self._entry(r) for r in (replies or [])]
        self.prompts: list[list[dict[str, Any]]] = []
        self.schemas: list[str] = []
        self._lock = threading.Lock()
        self.cancelled = threading.Event()

    # -- construction ----------------------------------------------------------
    @staticmethod
    def _entry(item: Any) -> dict[str, Any]:
        if isinstance(item, dict) and "reply" in item and isinstance(item["reply"], dict):
            return {
                "schema": item.get("schema"),
                "delay": item.get("delay"),
                "reply": item["reply"],
            }
        if isinstance(item, dict):
            return {"schema": None, "delay": None, "reply": item}
        raise ModelError(f"scripted reply must be a JSON object, got {type(item).__name__}")

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        """Load a script; ModelError naming the file when it is missing or malformed."""
        import yaml

        p = Path(path).expanduser()
        if not p.is_file():
            raise ModelError(
                f"script file not found: {p}", hint="scripted:PATH needs a YAML/JSON file"
            )
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8"))
        except (yaml.YAMLError, OSError, UnicodeDecodeError) as exc:
            raise ModelError(f"{p}: cannot read the script: {exc}") from exc
        if isinstance(data, list):
            return cls(data, name=f"scripted:{p.name}")
        if not isinstance(data, dict):
            raise ModelError(f"{p}: a script is a list of replies or a mapping with 'replies'")
        replies = data.get("replies") or []
        if not isinstance(replies, list):
            raise ModelError(f"{p}: 'replies' must be a list")
        return cls(
            replies,
            delay=float(data.get("delay") or 0.0),
            defaults=data.get("defaults") or {},
            name=f"scripted:{p.name}",
        )

    # -- the ChatModel protocol --------------------------------------------------
    def count_tokens(self, text: str) -> int:
        return approx_tokens(text)

    @property
    def remaining(self) -> int:
        return len(self._queue)

    def complete_json(
        self,
        messages: list[dict[str, Any]],
        schema: dict[str, Any],
        *,
        max_tokens: int,
        on_token: Callable[[str], None] | None = None,
    ) -> tuple[dict[str, Any], Usage]:
        title = str(schema.get("title") or "")
        with self._lock:
            self.prompts.append([dict(m) for m in messages])
            self.schemas.append(title)
            entry = self._take(title)
        reply = entry["reply"] if entry else self._default(title, schema)
        delay = self.delay if entry is None or entry["delay"] is None else float(entry["delay"])
        text = json.dumps(reply, ensure_ascii=False)
        pieces = _pieces(text)
        per_piece = delay / len(pieces) if pieces and delay > 0 else 0.0
        for piece in pieces:
            if per_piece and self.cancelled.wait(per_piece):
                break
            if on_token is not None:
                on_token(piece)
        prompt_tokens = sum(approx_tokens(str(m.get("content", ""))) for m in messages)
        return json.loads(text), Usage(prompt_tokens, approx_tokens(text))

    def close(self) -> None:
        self.cancelled.set()

    # -- helpers -----------------------------------------------------------------
    def _take(self, title: str) -> dict[str, Any] | None:
        for i, e in enumerate(self._queue):
            if e["schema"] is None or e["schema"] == title:
                return self._queue.pop(i)
        return None

    def _default(self, title: str, schema: dict[str, Any]) -> dict[str, Any]:
        if title in self.defaults:
            return dict(self.defaults[title])
        props = schema.get("properties") or {}
        if "action" in props:
            return {"action": "finish", "reason": "script exhausted"}
        out = minimal_instance(schema)
        return out if isinstance(out, dict) else {}


def _pieces(text: str, size: int = 8) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [text]


def minimal_instance(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """The smallest value a (simple) JSON schema accepts: required keys only."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        ref = str(schema["$ref"]).rsplit("/", 1)[-1]
        return minimal_instance(defs.get(ref, {}), defs)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return minimal_instance(schema[key][0], defs)
    typ = schema.get("type")
    if isinstance(typ, list):
        typ = next((t for t in typ if t != "null"), "null")
    if typ == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {k: minimal_instance(props.get(k, {}), defs) for k in schema.get("required", [])}
    return {"array": [], "string": "", "integer": 0, "number": 0.0, "boolean": False}.get(str(typ))
