"""The model interface the investigation engine talks to, and model specs.

A model backend does one thing for the engine: given chat messages and a JSON
schema, return one JSON object that satisfies the schema (``complete_json``).
Every structured step (next action, fact extraction, report narrative) goes
through it; the engine validates the answer again and never lets a model act
outside the executor.

Backends: ``none`` (no model: the deterministic engine), ``scripted:PATH``
(canned replies, :mod:`opsmate.llm.scripted`), ``gguf:PATH`` (llama.cpp,
:mod:`opsmate.llm.gguf`) and ``openai:BASE_URL#MODEL`` (any OpenAI-compatible
server, :mod:`opsmate.llm.openai_compat`). Model files are never downloaded.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from opsmate.errors import ModelError
from opsmate.llm.usage import Usage, approx_tokens

if TYPE_CHECKING:
    from opsmate.config import Settings

ModelKind = Literal["none", "scripted", "gguf", "openai"]


@runtime_checkable
class ChatModel(Protocol):
    """What the engine needs from a model backend.

    ``complete_json`` returns a dict that satisfies ``schema`` (backends constrain
    generation with it where they can) and the tokens used. ``on_token`` receives
    text pieces as they are generated (for streaming to a UI); a backend that
    cannot stream calls it once with the whole text or not at all. A backend may
    also offer ``count_tokens(text) -> int`` (its own tokenizer) and ``close()``;
    the engine uses them when present (see :func:`count_tokens`).
    """

    name: str

    def complete_json(
        self,
        messages: list[dict[str, Any]],
        schema: dict[str, Any],
        *,
        max_tokens: int,
        on_token: Callable[[str], None] | None = None,
    ) -> tuple[dict[str, Any], Usage]: ...


@dataclass(frozen=True)
class ModelSpec:
    """A parsed ``--model`` value."""

    kind: ModelKind
    path: Path | None = None  # scripted / gguf
    base_url: str | None = None  # openai
    model: str | None = None  # openai model name
    raw: str = "none"


def parse_model_spec(spec: str | None) -> ModelSpec:
    """Parse ``none | scripted:PATH | gguf:PATH | openai:BASE_URL#MODEL``; ModelError otherwise."""
    raw = (spec or "none").strip()
    if raw.lower() in ("none", ""):
        return ModelSpec(kind="none", raw="none")
    kind, sep, rest = raw.partition(":")
    kind = kind.strip().lower()
    rest = rest.strip()
    usage = "use none | scripted:PATH | gguf:PATH | openai:BASE_URL#MODEL"
    if not sep or kind not in ("scripted", "gguf", "openai"):
        raise ModelError(f"unknown model spec {raw!r}", hint=usage)
    if not rest:
        raise ModelError(f"model spec {raw!r} names no {kind} target", hint=usage)
    if kind == "openai":
        url, hsep, name = rest.partition("#")
        url, name = url.strip(), name.strip()
        if not url.startswith(("http://", "https://")):
            raise ModelError(
                f"model spec {raw!r}: the base URL must start with http:// or https://",
                hint="e.g. openai:http://127.0.0.1:8080/v1#qwen2.5-7b-instruct",
            )
        if not hsep or not name:
            raise ModelError(
                f"model spec {raw!r} names no model after '#'",
                hint="e.g. openai:http://127.0.0.1:11434/v1#qwen2.5:7b",
            )
        return ModelSpec(kind="openai", base_url=url.rstrip("/"), model=name, raw=raw)
    return ModelSpec(kind=kind, path=Path(rest).expanduser(), raw=raw)  # type: ignore[arg-type]


def _import_backend(module: str, cls: str, what: str) -> Any:
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise ModelError(
            f"the {what} model backend is not available ({exc.name} is missing)",
            hint="install opsmate with its llm extra, or run with --model none",
        ) from exc
    try:
        return getattr(mod, cls)
    except AttributeError as exc:
        raise ModelError(f"the {what} model backend {module}.{cls} is missing") from exc


def load_model(spec: str | ModelSpec | None, settings: Settings | None = None) -> ChatModel | None:
    """The model a spec names, ready to use; ``None`` for ``none``.

    Never downloads anything: a missing file is a ModelError that says where to put
    one and that ``--model none`` works without a model.
    """
    ms = spec if isinstance(spec, ModelSpec) else parse_model_spec(spec)
    if ms.kind == "none":
        return None
    if ms.kind == "scripted":
        from opsmate.llm.scripted import ScriptedModel

        assert ms.path is not None
        return ScriptedModel.from_file(ms.path)
    if ms.kind == "gguf":
        assert ms.path is not None
        check_model_file(ms)
        cls = _import_backend("opsmate.llm.gguf", "GGUFModel", "gguf (llama.cpp)")
        model: ChatModel = cls(ms.path, settings=settings)
        return model
    cls = _import_backend("opsmate.llm.openai_compat", "OpenAIModel", "openai-compatible")
    remote: ChatModel = cls(ms.base_url, ms.model, settings=settings)
    return remote


def check_model_file(spec: str | ModelSpec | None) -> ModelSpec:
    """Parse a spec and check that a file it names exists (nothing is loaded); ModelError if not."""
    ms = spec if isinstance(spec, ModelSpec) else parse_model_spec(spec)
    if ms.kind == "gguf" and ms.path is not None and not ms.path.is_file():
        raise ModelError(
            f"model file not found: {ms.path}",
            hint=(
                "put a GGUF model there (e.g. ~/models/qwen2.5-7b-instruct-q4_k_m.gguf) "
                "and set `model: gguf:PATH` in the config, or run with --model none "
                "(opsmate never downloads models)"
            ),
        )
    if ms.kind == "scripted" and ms.path is not None and not ms.path.is_file():
        raise ModelError(
            f"script file not found: {ms.path}", hint="scripted:PATH needs a YAML/JSON file"
        )
    return ms


def count_tokens(model: ChatModel | None, text: str) -> int:
    """Tokens in ``text``: the model's own tokenizer when it has one, else len/4."""
    counter = getattr(model, "count_tokens", None) if model is not None else None
    if callable(counter):
        try:
            return int(counter(text))
        except Exception:  # a tokenizer failure must not stop an investigation
            pass
    return approx_tokens(text)
