"""The llama.cpp backend (``gguf:PATH``): structured answers from a local GGUF model.

Every answer is generated under a grammar compiled from the step's JSON schema, so
even a tiny model can only emit a JSON object of that schema. The schema is first
tightened for generation (:func:`opsmate.llm.schema_fit.generation_schema`: string
and list limits, so a rambling model still closes its object) and the answer is
fitted afterwards (numeric bounds the grammar cannot express). If the text still
does not parse (the token limit cut the object), the call is retried once with more
room, then fails with a :class:`ModelError` quoting the raw text.

One ``Llama`` instance is kept per model file (and context settings) for the
whole process. llama.cpp reuses the longest matching prefix of the previous prompt
(its KV cache), so a prompt whose stable part comes first costs only its new tail:
on this machine a 1,300-token prompt costs seconds cold and a fraction of a second
warm. ``OPSMATE_LLM_NO_PREFIX_CACHE=1`` disables the reuse (``reset()`` before each
call), for benchmarks. :attr:`GGUFModel.last_stats` says what each call reused.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opsmate.errors import ModelError
from opsmate.llm.grammar import grammar_parses, schema_to_gbnf
from opsmate.llm.schema_fit import (
    CHARS_PER_TOKEN,
    excerpt,
    fit_to_schema,
    generation_schema,
    parse_object,
)
from opsmate.llm.usage import Usage

if TYPE_CHECKING:
    from opsmate.config import LLMConfig, Settings

log = logging.getLogger(__name__)
ENV_NO_PREFIX_CACHE = "OPSMATE_LLM_NO_PREFIX_CACHE"
MAX_STATS = 256  # call statistics kept per model object
MISSING_HINT = (
    "put a GGUF model file there (e.g. ~/models/qwen2.5-7b-instruct-q4_k_m.gguf) and set "
    "`model: gguf:PATH` in the config, or run with --model none, which works without "
    "a model (opsmate never downloads models)"
)


@dataclass
class CallStats:
    """What one ``complete_json`` call cost and how much of its prompt was cached."""

    prompt_tokens: int
    completion_tokens: int
    reused_tokens: int  # prompt tokens whose KV cache came from the previous call
    seconds: float
    first_token_seconds: float | None  # prompt evaluation + first token (time to first step)
    attempts: int
    finish_reason: str  # stop | length | timeout | cancelled

    @property
    def tokens_per_second(self) -> float:
        """Generation speed (completion tokens over the time after the first token)."""
        gen = self.seconds - (self.first_token_seconds or 0.0)
        return self.completion_tokens / gen if gen > 0 and self.completion_tokens > 1 else 0.0


class _Shared:
    """One loaded llama.cpp model, shared by every GGUFModel on the same file."""

    def __init__(self, llama: Any) -> None:
        self.llama = llama
        self.lock = threading.Lock()  # one generation at a time per instance
        self.refs = 0


_INSTANCES: dict[tuple[Any, ...], _Shared] = {}
_INSTANCES_LOCK = threading.Lock()


def _no_prefix_cache() -> bool:
    return os.environ.get(ENV_NO_PREFIX_CACHE, "").strip().lower() in ("1", "true", "yes", "on")


def _llama_kwargs(cfg: LLMConfig) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "n_ctx": int(cfg.n_ctx),
        "n_gpu_layers": int(cfg.n_gpu_layers),
        "verbose": False,
    }
    # Default: half the cores for prompts as well as generation. llama.cpp's own default
    # (all cores for prompts) is 3-5x slower on a busy 2-core machine: its threads spin.
    threads = int(cfg.n_threads) if cfg.n_threads else max(1, (os.cpu_count() or 2) // 2)
    kwargs["n_threads"] = threads
    kwargs["n_threads_batch"] = threads
    return kwargs


def _load(path: Path, kwargs: dict[str, Any]) -> Any:
    """A ``Llama`` for ``path``; llama.cpp's own log lines go into the error, not stderr."""
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise ModelError(
            "the gguf backend needs llama-cpp-python, which is not installed",
            hint='CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install llama-cpp-python, '
            "or run with --model none",
        ) from exc
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            return Llama(str(path), **kwargs)
    except (ValueError, RuntimeError, OSError) as exc:
        detail = " ".join(captured.getvalue().split())[-300:]
        raise ModelError(
            f"cannot load the GGUF model {path}: {exc}" + (f" ({detail})" if detail else ""),
            hint="is it a complete GGUF file this llama-cpp-python version supports? "
            "Or run with --model none",
        ) from exc


def _acquire(path: Path, kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], _Shared]:
    key = (str(path), *sorted(kwargs.items()))
    with _INSTANCES_LOCK:
        shared = _INSTANCES.get(key)
        if shared is None:
            shared = _Shared(_load(path, kwargs))
            _INSTANCES[key] = shared
        shared.refs += 1
        return key, shared


def _release(key: tuple[Any, ...]) -> None:
    with _INSTANCES_LOCK:
        shared = _INSTANCES.get(key)
        if shared is None:
            return
        shared.refs -= 1
        if shared.refs <= 0:
            del _INSTANCES[key]
            with shared.lock:
                shared.llama.close()


def loaded_instances() -> int:
    """How many llama.cpp models this process holds (tests, diagnostics)."""
    with _INSTANCES_LOCK:
        return len(_INSTANCES)


class GGUFModel:
    """A local GGUF model behind the :class:`~opsmate.llm.base.ChatModel` protocol."""

    def __init__(self, path: str | Path, *, settings: Settings | None = None) -> None:
        from opsmate.config import LLMConfig

        self.path = Path(path).expanduser()
        if not self.path.is_file():
            raise ModelError(f"model file not found: {self.path}", hint=MISSING_HINT)
        cfg = settings.llm if settings is not None else LLMConfig()
        self.name = f"gguf:{self.path.name}"
        self.temperature = float(cfg.temperature)
        self.max_answer_tokens = int(cfg.max_answer_tokens)
        self.timeout = float(cfg.timeout)
        self.prefix_cache = not _no_prefix_cache()
        self.last_stats: CallStats | None = None
        self.stats: list[CallStats] = []  # every call of this object, oldest first
        self._cancel = threading.Event()
        self._busy = threading.Event()  # set while a call of this object runs
        self._grammars: dict[str, Any] = {}
        self._key, self._shared = _acquire(self.path, _llama_kwargs(cfg))
        self._closed = False

    # -- small public helpers ----------------------------------------------------------
    @property
    def n_ctx(self) -> int:
        """The context window the model was loaded with (prompt + answer)."""
        return int(self._shared.llama.n_ctx())

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in this model's own tokenizer (for prompt budgets)."""
        if not text:
            return 0
        return len(self._shared.llama.tokenize(text.encode("utf-8"), add_bos=False))

    def reset(self) -> None:
        """Forget the cached prompt: the next call evaluates its whole prompt."""
        with self._shared.lock:
            self._shared.llama.reset()

    def cancel(self) -> None:
        """Stop the generation in flight at the next token (it raises ModelError).

        A new ``complete_json`` on this object does the same to a call still running
        (one whose caller stopped waiting for it), so an abandoned answer never delays
        the next one by more than its prompt evaluation.
        """
        self._cancel.set()

    def close(self) -> None:
        """Cancel what is running and release this object's hold on the loaded model."""
        self._cancel.set()
        if not self._closed:
            self._closed = True
            _release(self._key)

    # -- the protocol ------------------------------------------------------------------
    def complete_json(
        self,
        messages: list[dict[str, Any]],
        schema: dict[str, Any],
        *,
        max_tokens: int,
        on_token: Callable[[str], None] | None = None,
    ) -> tuple[dict[str, Any], Usage]:
        """One JSON object satisfying ``schema``, generated under its grammar, and the usage."""
        if self._closed:
            raise ModelError(f"{self.name} is closed")
        room = max_tokens if max_tokens > 0 else self.max_answer_tokens
        deadline = time.monotonic() + self.timeout if self.timeout > 0 else None
        started = time.perf_counter()
        usage = Usage()
        first: float | None = None
        reused = 0
        text, finish = "", "length"
        if self._busy.is_set():  # a call of ours is still running: its caller gave up on it
            self._cancel.set()
        with self._shared.lock, _flag(self._busy):
            self._cancel.clear()
            for attempt in (1, 2):
                if attempt == 2 and on_token is not None:
                    on_token("\n")  # the stream starts over
                text, finish, p_tok, c_tok, ttft, hit = self._generate(
                    messages, self._grammar(schema, room), room, on_token, deadline
                )
                usage.prompt_tokens += p_tok
                usage.completion_tokens += c_tok
                if attempt == 1:
                    first, reused = ttft, hit
                self._record(usage, reused, started, first, attempt, finish)
                if finish == "cancelled":
                    raise ModelError(f"{self.name}: the answer was cancelled ({excerpt(text)})")
                if finish == "timeout":
                    raise ModelError(
                        f"{self.name}: the answer timed out after {self.timeout:g} s "
                        f"({excerpt(text)})",
                        hint="raise llm.timeout in the config, or use a smaller model",
                    )
                value = parse_object(text)
                if value is not None:
                    return fit_to_schema(value, schema), usage
                room = self._more_room(room, p_tok)
        raise ModelError(
            f"{self.name} produced no complete JSON object in two attempts "
            f"(finish: {finish}, raw text: {excerpt(text)})",
            hint="raise llm.max_answer_tokens, or use a larger model",
        )

    # -- internals ---------------------------------------------------------------------
    def _grammar(self, schema: dict[str, Any], room: int) -> Any:
        """The grammar of ``schema`` sized so its longest answer fits ``room`` tokens (cached)."""
        from llama_cpp import LlamaGrammar
        from llama_cpp.llama_grammar import JSON_GBNF

        key = f"{room}:" + json.dumps(schema, sort_keys=True, ensure_ascii=False)
        grammar = self._grammars.get(key)
        if grammar is None:
            gen = generation_schema(schema, max_chars=room * CHARS_PER_TOKEN)
            try:
                gbnf = schema_to_gbnf(gen)
            except Exception:  # a schema feature the converter lacks
                gbnf = ""
            if not gbnf or not grammar_parses(self._shared.llama, gbnf):
                # any JSON object then: the answer is fitted and validated afterwards
                log.warning("no grammar for schema %s; generating plain JSON", schema.get("title"))
                gbnf = JSON_GBNF
            grammar = LlamaGrammar.from_string(gbnf, verbose=False)
            if len(self._grammars) > 32:
                self._grammars.clear()
            self._grammars[key] = grammar
        return grammar

    def _more_room(self, room: int, prompt_tokens: int) -> int:
        free = self.n_ctx - prompt_tokens - 1
        return max(min(room * 2, free), 1)

    def _generate(
        self,
        messages: list[dict[str, Any]],
        grammar: Any,
        room: int,
        on_token: Callable[[str], None] | None,
        deadline: float | None,
    ) -> tuple[str, str, int, int, float | None, int]:
        """(text, finish reason, prompt tokens, completion tokens, time to first token, reused)."""
        llama = self._shared.llama
        if not self.prefix_cache:
            llama.reset()
        before = llama.input_ids[: llama.n_tokens].copy()
        t0 = time.perf_counter()
        first: float | None = None
        pieces: list[str] = []
        finish = "length"
        try:
            stream = llama.create_chat_completion(
                messages=messages,
                grammar=grammar,
                max_tokens=room,
                temperature=self.temperature,
                stream=True,
            )
            for chunk in _chunks(stream):
                choice = chunk["choices"][0]
                piece = (choice.get("delta") or {}).get("content")
                if piece:
                    if first is None:
                        first = time.perf_counter() - t0
                    pieces.append(piece)
                    if on_token is not None:
                        on_token(piece)
                if choice.get("finish_reason"):
                    finish = str(choice["finish_reason"])
                if self._cancel.is_set():
                    finish = "cancelled"
                    break
                if deadline is not None and time.monotonic() > deadline:
                    finish = "timeout"
                    break
        except ValueError as exc:
            raise _context_error(self.name, exc, self.n_ctx) from exc
        except RuntimeError as exc:
            raise ModelError(f"{self.name}: llama.cpp failed: {exc}") from exc
        text = "".join(pieces)
        completion = len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))
        evaluated = llama.n_tokens - (0 if finish == "stop" else max(completion - 1, 0))
        prompt = max(evaluated - (completion if finish == "stop" else 0), 0)
        after = llama.input_ids[:prompt]
        return text, finish, prompt, completion, first, _common_prefix(before, after)

    def _record(
        self,
        usage: Usage,
        reused: int,
        started: float,
        first: float | None,
        attempts: int,
        finish: str,
    ) -> None:
        stats = CallStats(
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            reused_tokens=reused,
            seconds=time.perf_counter() - started,
            first_token_seconds=first,
            attempts=attempts,
            finish_reason=finish,
        )
        if attempts > 1 and self.stats:
            self.stats[-1] = stats
        else:
            self.stats.append(stats)
            del self.stats[:-MAX_STATS]
        self.last_stats = stats


@contextlib.contextmanager
def _flag(event: threading.Event) -> Iterator[None]:
    event.set()
    try:
        yield
    finally:
        event.clear()


def _chunks(stream: Any) -> Iterator[dict[str, Any]]:
    """Iterate a llama-cpp-python stream and close it however the loop ends."""
    try:
        yield from stream
    finally:
        close = getattr(stream, "close", None)
        if callable(close):
            close()


def _common_prefix(a: Any, b: Any) -> int:
    n = min(len(a), len(b))
    if n == 0:
        return 0
    import numpy as np

    diff = np.flatnonzero(np.asarray(a[:n]) != np.asarray(b[:n]))
    return int(diff[0]) if diff.size else n


_TOO_LONG = re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)")


def _context_error(name: str, exc: ValueError, n_ctx: int) -> ModelError:
    m = _TOO_LONG.search(str(exc))
    if m:
        return ModelError(
            f"{name}: the prompt ({m.group(1)} tokens) does not fit the context window "
            f"({m.group(2)} tokens)",
            hint="raise llm.n_ctx in the config (the model must support it)",
        )
    return ModelError(f"{name}: llama.cpp rejected the request: {exc} (n_ctx {n_ctx})")
