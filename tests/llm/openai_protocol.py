"""A protocol fixture: a small HTTP server on 127.0.0.1 speaking the OpenAI chat-completions API.

It answers ``GET /v1/models`` and ``POST /v1/chat/completions`` (plain JSON, or
server-sent events when the request says ``"stream": true``) from a queue of
scripted behaviours, and records every request, so tests exercise the real HTTP
client, JSON and SSE parsing, time-outs and error statuses without a model.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _QuietServer(ThreadingHTTPServer):
    """Ignores clients that hang up early (the time-out tests do that on purpose)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if not isinstance(exc, BrokenPipeError | ConnectionResetError):
            super().handle_error(request, client_address)


@dataclass
class Reply:
    """One scripted answer to a chat-completions request."""

    content: str = '{"ok": true}'
    status: int = 200
    body: str | None = None  # raw body instead of a completion (error pages, broken JSON)
    sleep: float = 0.0  # seconds before answering (time-outs)
    finish_reason: str = "stop"
    usage: tuple[int, int] | None = (11, 7)  # prompt, completion
    stream_error: str | None = None  # an error event in the middle of a stream


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ProtocolServer:
    """The fixture server; ``replies`` are consumed in order, then ``default`` is used."""

    model: str = "tiny-test"
    replies: list[Reply] = field(default_factory=list)
    default: Reply = field(default_factory=Reply)
    reject: Callable[[dict[str, Any]], str | None] | None = None  # -> 400 message or None
    models_status: int = 200
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._httpd = _QuietServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ProtocolServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def next_reply(self) -> Reply:
        with self._lock:
            return self.replies.pop(0) if self.replies else self.default

    def chat_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]


def _handler(server: ProtocolServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, body: str, ctype: str = "application/json") -> None:
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _record(self, body: Any) -> None:
            server.requests.append(
                Recorded(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
            )

        def do_GET(self) -> None:
            self._record(None)
            if self.path.rstrip("/") != "/v1/models":
                self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
                return
            if server.models_status != 200:
                self._send(server.models_status, json.dumps({"error": {"message": "down"}}))
                return
            models = {"object": "list", "data": [{"id": server.model, "object": "model"}]}
            self._send(200, json.dumps(models))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8")
            body = json.loads(raw) if raw else {}
            self._record(body)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
                return
            if server.reject is not None:
                why = server.reject(body)
                if why:
                    self._send(400, json.dumps({"error": {"message": why, "type": "invalid"}}))
                    return
            reply = server.next_reply()
            if reply.sleep:
                time.sleep(reply.sleep)
            if reply.body is not None or reply.status != 200:
                self._send(reply.status, reply.body or "")
                return
            if body.get("stream"):
                self._stream(body, reply)
                return
            completion = {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": server.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.content},
                        "finish_reason": reply.finish_reason,
                    }
                ],
            }
            if reply.usage:
                completion["usage"] = {
                    "prompt_tokens": reply.usage[0],
                    "completion_tokens": reply.usage[1],
                    "total_tokens": sum(reply.usage),
                }
            self._send(200, json.dumps(completion))

        def _stream(self, body: dict[str, Any], reply: Reply) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()

            def event(payload: Any) -> None:
                text = payload if isinstance(payload, str) else json.dumps(payload)
                self.wfile.write(f"data: {text}\n\n".encode())
                self.wfile.flush()

            def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
                return {
                    "id": "chatcmpl-1",
                    "object": "chat.completion.chunk",
                    "model": server.model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }

            self.wfile.write(b": keep-alive comment\n\n")
            event(chunk({"role": "assistant"}))
            text = reply.content
            pieces = [text[i : i + 5] for i in range(0, len(text), 5)]
            for n, piece in enumerate(pieces):
                if reply.stream_error and n == len(pieces) // 2:
                    event({"error": {"message": reply.stream_error}})
                    return
                event(chunk({"content": piece}))
            event(chunk({}, reply.finish_reason))
            if reply.usage and (body.get("stream_options") or {}).get("include_usage"):
                usage = {"prompt_tokens": reply.usage[0], "completion_tokens": reply.usage[1]}
                event({"id": "chatcmpl-1", "choices": [], "usage": usage})
            event("[DONE]")
            self.close_connection = True

    return Handler
