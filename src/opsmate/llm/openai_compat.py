"""The OpenAI-compatible backend (``openai:BASE_URL#MODEL``): llama-server, Ollama, vLLM, ...

Each structured step is one ``POST {BASE_URL}/chat/completions`` whose
``response_format`` carries the step's JSON schema (``json_schema``, strict). A
server that rejects that gets the same schema non-strict, then plain
``json_object`` with the schema spelled out in the request; the first mode the
server accepts is kept for the rest of the session. With ``on_token`` the answer
is streamed (server-sent events) and each piece handed over as it arrives.

:meth:`OpenAIModel.cancel` stops a request at once, streamed or not: the model keeps
the network streams its connections opened (httpx ``trace`` extension) and shuts
their sockets down, so a read blocked on a server that is still thinking returns
immediately. The engine cancels when the task's time budget ends, so the backend
never outlives ``--timeout`` by more than a moment.

Failures are opsmate errors with the server's own words: an unreachable server,
a time-out or an overloaded server is a :class:`SourceUnreachableError` (exit 3);
a refusal, an unknown model, a server error or an answer that is not the JSON
asked for is a :class:`ModelError`. The API key, when one is needed, comes from
``OPSMATE_OPENAI_API_KEY`` or ``OPENAI_API_KEY``; it is never logged.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from opsmate.errors import ModelError, SourceUnreachableError
from opsmate.llm.schema_fit import (
    CHARS_PER_TOKEN,
    excerpt,
    fit_to_schema,
    generation_schema,
    parse_object,
)
from opsmate.llm.usage import Usage, approx_tokens

if TYPE_CHECKING:
    import httpx

    from opsmate.config import Settings

MODES = ("json_schema_strict", "json_schema", "json_object")
_FORMAT_WORDS = ("response_format", "json_schema", "schema", "strict", "grammar")
_UNREACHABLE_HINT = (
    "start the model server (llama-server, Ollama, vLLM) or fix the URL in "
    "--model openai:BASE_URL#MODEL, or run with --model none"
)


class OpenAIModel:
    """A model served over the OpenAI chat-completions API, behind the ChatModel protocol."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        settings: Settings | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        import httpx

        from opsmate.config import LLMConfig

        cfg = settings.llm if settings is not None else LLMConfig()
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{model}"
        self.temperature = float(cfg.temperature)
        self.max_answer_tokens = int(cfg.max_answer_tokens)
        self.timeout = float(timeout if timeout is not None else cfg.timeout)
        self.mode = MODES[0]  # the response_format mode the server accepts
        self.stream_usage = True  # ask for usage in the last streamed chunk
        self.last_usage: Usage | None = None
        self._cancel = threading.Event()
        self._streams: list[Any] = []  # network streams of this client's connections
        self._streams_lock = threading.Lock()
        self._extensions = {"trace": self._trace}
        key = (
            api_key or os.environ.get("OPSMATE_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY")
        )
        headers = {"Accept": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._client = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
            transport=transport,
        )

    # -- small public helpers ----------------------------------------------------------
    def health(self) -> list[str]:
        """The model ids the server lists (``GET /models``); raises when it cannot answer."""
        resp = self._send("GET", "/models", None)
        data = _json_body(resp, self.base_url + "/models")
        models = data.get("data") if isinstance(data, dict) else None
        if not isinstance(models, list):
            raise ModelError(f"{self.base_url}/models answered without a 'data' list")
        return [str(m.get("id")) for m in models if isinstance(m, dict) and m.get("id")]

    def count_tokens(self, text: str) -> int:
        """An estimate (the API has no standard tokenizer endpoint)."""
        return approx_tokens(text)

    def cancel(self) -> None:
        """Stop the request in flight now (it raises ModelError): its connections' sockets
        are shut down, which wakes a read blocked on a server that has not answered."""
        self._cancel.set()
        with self._streams_lock:
            streams, self._streams = self._streams, []
        for stream in streams:
            _shutdown(stream)

    def _trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore trace hook: remember each new connection's stream (for ``cancel``)."""
        if event != "connection.connect_tcp.complete":
            return
        stream = info.get("return_value")
        if stream is None:
            return
        with self._streams_lock:
            self._streams = [*self._streams[-7:], stream]
        if self._cancel.is_set():  # cancelled while connecting
            _shutdown(stream)

    def _cancelled_error(self) -> ModelError:
        return ModelError(f"{self.name}: the answer was cancelled (time budget or stop)")

    def close(self) -> None:
        """Cancel what is streaming and close the HTTP connections."""
        self._cancel.set()
        self._client.close()

    # -- the protocol ------------------------------------------------------------------
    def complete_json(
        self,
        messages: list[dict[str, Any]],
        schema: dict[str, Any],
        *,
        max_tokens: int,
        on_token: Callable[[str], None] | None = None,
    ) -> tuple[dict[str, Any], Usage]:
        """One JSON object satisfying ``schema``, and the tokens used."""
        self._cancel.clear()
        room = max_tokens if max_tokens > 0 else self.max_answer_tokens
        usage = Usage()
        text, finish = "", ""
        for attempt in (1, 2):
            if attempt == 2 and on_token is not None:
                on_token("\n")  # the stream starts over
            text, finish, part = self._chat(messages, schema, room, on_token)
            usage.prompt_tokens += part.prompt_tokens
            usage.completion_tokens += part.completion_tokens
            self.last_usage = usage
            value = parse_object(text)
            if value is not None:
                return fit_to_schema(value, schema), usage
            room *= 2
        raise ModelError(
            f"{self.name} at {self.base_url} gave no complete JSON object in two attempts "
            f"(finish: {finish or 'unknown'}, raw text: {excerpt(text)})",
            hint="raise llm.max_answer_tokens, or use a model that follows JSON schemas",
        )

    # -- one request -------------------------------------------------------------------
    def _chat(
        self,
        messages: list[dict[str, Any]],
        schema: dict[str, Any],
        room: int,
        on_token: Callable[[str], None] | None,
    ) -> tuple[str, str, Usage]:
        """(content, finish reason, usage) of one completion; adapts to what the server takes."""
        while True:
            body = self._body(messages, schema, room, stream=on_token is not None)
            try:
                if on_token is None:
                    return self._complete(body, messages)
                return self._stream(body, messages, on_token)
            except _Rejected as rej:
                if self._adapt(rej.text):
                    continue
                raise ModelError(
                    f"{self.name} at {self.base_url} rejected the request: "
                    f"HTTP {rej.status}: {excerpt(rej.text)}",
                    hint="check the model name after '#' and that the server supports "
                    "chat completions",
                ) from None

    def _adapt(self, error_text: str) -> bool:
        """Drop what the server refused (stream usage, then stricter response formats)."""
        low = error_text.lower()
        if self.stream_usage and "stream_options" in low:
            self.stream_usage = False
            return True
        if any(w in low for w in _FORMAT_WORDS) and self.mode != MODES[-1]:
            self.mode = MODES[MODES.index(self.mode) + 1]
            return True
        return False

    def _body(
        self, messages: list[dict[str, Any]], schema: dict[str, Any], room: int, *, stream: bool
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": room,
            "temperature": self.temperature,
        }
        gen = generation_schema(schema, max_chars=room * CHARS_PER_TOKEN)
        if self.mode == "json_object":
            body["response_format"] = {"type": "json_object"}
            body["messages"] = with_schema_hint(messages, gen)
        else:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": _schema_name(schema),
                    "schema": gen,
                    "strict": self.mode == "json_schema_strict",
                },
            }
        if stream:
            body["stream"] = True
            if self.stream_usage:
                body["stream_options"] = {"include_usage": True}
        return body

    def _complete(
        self, body: dict[str, Any], messages: list[dict[str, Any]]
    ) -> tuple[str, str, Usage]:
        resp = self._send("POST", "/chat/completions", body)
        data = _json_body(resp, self.base_url + "/chat/completions")
        choice = _first_choice(data, self.base_url)
        message = choice.get("message") or {}
        text = message.get("content") or ""
        if not isinstance(text, str):
            raise ModelError(f"{self.base_url} answered a non-text message content")
        return text, str(choice.get("finish_reason") or ""), _usage(data, messages, text)

    def _stream(
        self,
        body: dict[str, Any],
        messages: list[dict[str, Any]],
        on_token: Callable[[str], None],
    ) -> tuple[str, str, Usage]:
        import httpx

        url = self.base_url + "/chat/completions"
        pieces: list[str] = []
        finish = ""
        usage_data: dict[str, Any] = {}
        deadline = time.monotonic() + self.timeout
        try:
            with self._client.stream(
                "POST", "/chat/completions", json=body, extensions=self._extensions
            ) as resp:
                if resp.status_code >= 400:
                    resp.read()
                    self._check_status(resp)
                for event in _sse_events(resp.iter_lines()):
                    if event == "[DONE]":
                        break
                    try:
                        data = json.loads(event)
                    except ValueError:
                        raise ModelError(
                            f"{url} streamed an event that is not JSON: {excerpt(event)}"
                        ) from None
                    if isinstance(data, dict) and data.get("error"):
                        raise ModelError(f"{url} reported an error: {excerpt(str(data['error']))}")
                    if isinstance(data, dict) and isinstance(data.get("usage"), dict):
                        usage_data = {"usage": data["usage"]}
                    for choice in (data.get("choices") or []) if isinstance(data, dict) else []:
                        piece = (choice.get("delta") or {}).get("content")
                        if isinstance(piece, str) and piece:
                            pieces.append(piece)
                            on_token(piece)
                        if choice.get("finish_reason"):
                            finish = str(choice["finish_reason"])
                    if self._cancel.is_set():
                        raise self._cancelled_error()
                    if time.monotonic() > deadline:
                        raise SourceUnreachableError(
                            f"{url} did not finish its answer within {self.timeout:g} s",
                            hint="raise llm.timeout in the config, or check the server's load",
                        )
        except httpx.HTTPError as exc:
            if self._cancel.is_set():
                raise self._cancelled_error() from None
            raise self._transport_error(exc, url) from exc
        text = "".join(pieces)
        return text, finish, _usage(usage_data, messages, text)

    # -- HTTP plumbing -----------------------------------------------------------------
    def _send(self, method: str, path: str, body: dict[str, Any] | None) -> httpx.Response:
        """One request, retried once when the server is busy (429, 502-504)."""
        import httpx

        url = self.base_url + path
        for attempt in (1, 2):
            if self._cancel.is_set():
                raise self._cancelled_error()
            try:
                resp = self._client.request(method, path, json=body, extensions=self._extensions)
            except httpx.HTTPError as exc:
                if self._cancel.is_set():
                    raise self._cancelled_error() from None
                raise self._transport_error(exc, url) from exc
            if resp.status_code in (429, 502, 503, 504) and attempt == 1:
                time.sleep(0.5)
                continue
            self._check_status(resp)
            return resp
        raise AssertionError("unreachable")  # pragma: no cover

    def _check_status(self, resp: httpx.Response) -> None:
        status = resp.status_code
        if status < 400:
            return
        url = str(resp.request.url)
        text = resp.text
        if status in (400, 422):
            raise _Rejected(status, text)
        if status in (401, 403):
            raise ModelError(
                f"{url} refused the request: HTTP {status}",
                hint="set OPSMATE_OPENAI_API_KEY (or OPENAI_API_KEY) to the server's key",
            )
        if status == 404:
            raise ModelError(
                f"{url} answered HTTP 404: {excerpt(text)}",
                hint=f"is the base URL right (usually ending in /v1) and does the server "
                f"serve '{self.model}'?",
            )
        if status in (429, 502, 503, 504):
            raise SourceUnreachableError(
                f"model server at {self.base_url} is unavailable: HTTP {status}: {excerpt(text)}",
                hint="try again when the server is less busy",
            )
        raise ModelError(f"model server at {self.base_url} failed: HTTP {status}: {excerpt(text)}")

    def _transport_error(self, exc: Exception, url: str) -> SourceUnreachableError:
        import httpx

        if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout):
            return SourceUnreachableError(
                f"model server at {url} did not answer within {self.timeout:g} s "
                f"({type(exc).__name__})",
                hint="raise llm.timeout in the config, or check the server's load",
            )
        return SourceUnreachableError(
            f"model server unreachable at {url}: {type(exc).__name__}: {exc}",
            hint=_UNREACHABLE_HINT,
        )


def _shutdown(stream: Any) -> None:
    """Shut a connection's socket down (both ways); a blocked read returns at once."""
    with contextlib.suppress(Exception):
        sock = stream.get_extra_info("socket")
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)


class _Rejected(Exception):
    """A 400/422: the server did not accept something in the request."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


def with_schema_hint(
    messages: list[dict[str, Any]], schema: dict[str, Any]
) -> list[dict[str, Any]]:
    """The messages with the JSON schema spelled out at the end (for ``json_object`` mode)."""
    hint = "Answer with exactly one JSON object that satisfies this JSON schema:\n" + json.dumps(
        schema, ensure_ascii=False, separators=(",", ":")
    )
    out = [dict(m) for m in messages]
    if out and out[-1].get("role") == "user" and isinstance(out[-1].get("content"), str):
        out[-1]["content"] = out[-1]["content"] + "\n\n" + hint
    else:
        out.append({"role": "user", "content": hint})
    return out


def _sse_events(lines: Iterator[str]) -> Iterator[str]:
    """The data payloads of a server-sent-event stream (multi-line data joined)."""
    data: list[str] = []
    for line in lines:
        if not line.strip():
            if data:
                yield "\n".join(data)
                data = []
            continue
        if line.startswith(":"):
            continue  # a comment / keep-alive
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data)


def _schema_name(schema: dict[str, Any]) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "answer"))[:64]
    return name or "answer"


def _json_body(resp: httpx.Response, url: str) -> Any:
    try:
        return resp.json()
    except ValueError:
        raise ModelError(
            f"{url} answered HTTP {resp.status_code} with a body that is not JSON: "
            f"{excerpt(resp.text)}",
            hint="is this an OpenAI-compatible API (the base URL usually ends in /v1)?",
        ) from None


def _first_choice(data: Any, base_url: str) -> dict[str, Any]:
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ModelError(f"{base_url} answered without choices: {excerpt(json.dumps(data))}")
    return choices[0]


def _usage(data: dict[str, Any], messages: list[dict[str, Any]], text: str) -> Usage:
    raw = data.get("usage") if isinstance(data, dict) else None
    if isinstance(raw, dict) and isinstance(raw.get("prompt_tokens"), int):
        return Usage(int(raw["prompt_tokens"]), int(raw.get("completion_tokens") or 0))
    prompt = sum(approx_tokens(str(m.get("content", ""))) for m in messages)
    return Usage(prompt, approx_tokens(text))
