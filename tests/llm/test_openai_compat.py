"""The OpenAI-compatible backend against the protocol fixture (a real HTTP server on 127.0.0.1)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from openai_protocol import ProtocolServer, Reply

from opsmate.config import Settings
from opsmate.errors import ExitCode, ModelError, SourceUnreachableError
from opsmate.llm.base import load_model
from opsmate.llm.openai_compat import OpenAIModel

SCHEMA: dict[str, Any] = {
    "title": "NextAction",
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["call_tool", "finish"]},
        "reason": {"type": "string"},
        "page_size": {"type": "integer", "minimum": 1, "maximum": 200},
    },
    "required": ["action", "reason"],
}
ANSWER = {"action": "finish", "reason": "the pool is exhausted"}
MESSAGES = [
    {"role": "system", "content": "You are opsmate."},
    {"role": "user", "content": "What next?"},
]


@pytest.fixture
def server() -> Iterator[ProtocolServer]:
    srv = ProtocolServer(default=Reply(content=json.dumps(ANSWER))).start()
    yield srv
    srv.stop()


def _model(server: ProtocolServer, **kw: Any) -> OpenAIModel:
    return OpenAIModel(server.base_url, server.model, api_key="sk-test", **kw)


def test_plain_completion_sends_a_strict_json_schema(server: ProtocolServer) -> None:
    model = _model(server)
    value, usage = model.complete_json(MESSAGES, SCHEMA, max_tokens=64)
    assert value == ANSWER
    assert (usage.prompt_tokens, usage.completion_tokens) == (11, 7)
    (req,) = server.chat_requests()
    assert req.headers["authorization"] == "Bearer sk-test"
    body = req.body
    assert body["model"] == "tiny-test" and body["max_tokens"] == 64
    assert body["messages"] == MESSAGES
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "NextAction"
    assert fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["properties"]["action"]["enum"] == ["call_tool", "finish"]
    assert "stream" not in body
    model.close()


def test_streaming_hands_over_each_piece(server: ProtocolServer) -> None:
    text = json.dumps({"action": "call_tool", "reason": "check the pool metrics first"})
    server.replies.append(Reply(content=text, usage=(40, 12)))
    pieces: list[str] = []
    value, usage = _model(server).complete_json(
        MESSAGES, SCHEMA, max_tokens=64, on_token=pieces.append
    )
    assert len(pieces) > 5 and "".join(pieces) == text
    assert value["action"] == "call_tool"
    assert (usage.prompt_tokens, usage.completion_tokens) == (40, 12)
    body = server.chat_requests()[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_stream_without_usage_falls_back_to_an_estimate(server: ProtocolServer) -> None:
    server.replies.append(Reply(content=json.dumps(ANSWER), usage=None))
    value, usage = _model(server).complete_json(
        MESSAGES, SCHEMA, max_tokens=64, on_token=lambda _: None
    )
    assert value == ANSWER
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0


def test_server_rejecting_json_schema_gets_json_object(server: ProtocolServer) -> None:
    def reject(body: dict[str, Any]) -> str | None:
        if body.get("response_format", {}).get("type") == "json_schema":
            return "response_format type json_schema is not supported"
        return None

    server.reject = reject
    model = _model(server)
    value, _ = model.complete_json(MESSAGES, SCHEMA, max_tokens=64)
    assert value == ANSWER
    assert model.mode == "json_object"
    reqs = server.chat_requests()
    assert [r.body["response_format"]["type"] for r in reqs] == [
        "json_schema",
        "json_schema",
        "json_object",
    ]
    assert [r.body["response_format"].get("json_schema", {}).get("strict") for r in reqs[:2]] == [
        True,
        False,
    ]
    last_user = reqs[-1].body["messages"][-1]["content"]
    assert last_user.startswith("What next?") and '"enum":["call_tool","finish"]' in last_user
    # the working mode is kept: the next call goes straight to json_object
    model.complete_json(MESSAGES, SCHEMA, max_tokens=64)
    assert len(server.chat_requests()) == 4


def test_server_rejecting_only_strict_keeps_the_schema(server: ProtocolServer) -> None:
    def reject(body: dict[str, Any]) -> str | None:
        js = body.get("response_format", {}).get("json_schema") or {}
        return (
            "Invalid schema: strict mode needs additionalProperties" if js.get("strict") else None
        )

    server.reject = reject
    model = _model(server)
    assert model.complete_json(MESSAGES, SCHEMA, max_tokens=64)[0] == ANSWER
    assert model.mode == "json_schema"


def test_other_400_is_a_model_error_with_the_server_text(server: ProtocolServer) -> None:
    server.reject = lambda body: "context length exceeded: 9000 > 8192"
    with pytest.raises(ModelError) as exc:
        _model(server).complete_json(MESSAGES, SCHEMA, max_tokens=64)
    assert "HTTP 400" in str(exc.value) and "context length exceeded" in str(exc.value)


def test_time_out_is_source_unreachable(server: ProtocolServer) -> None:
    server.replies.append(Reply(content=json.dumps(ANSWER), sleep=1.5))
    with pytest.raises(SourceUnreachableError) as exc:
        _model(server, timeout=0.3).complete_json(MESSAGES, SCHEMA, max_tokens=64)
    assert "did not answer within 0.3 s" in str(exc.value)
    assert exc.value.exit_code == ExitCode.UNREACHABLE


def test_http_500_is_a_model_error_quoting_the_server(server: ProtocolServer) -> None:
    server.replies.append(Reply(status=500, body='{"error": {"message": "CUDA out of memory"}}'))
    with pytest.raises(ModelError) as exc:
        _model(server).complete_json(MESSAGES, SCHEMA, max_tokens=64)
    assert "HTTP 500" in str(exc.value) and "CUDA out of memory" in str(exc.value)


def test_http_503_is_retried_once(server: ProtocolServer) -> None:
    server.replies.append(Reply(status=503, body="loading model"))
    assert _model(server).complete_json(MESSAGES, SCHEMA, max_tokens=64)[0] == ANSWER
    assert len(server.chat_requests()) == 2


def test_persistent_503_is_unreachable(server: ProtocolServer) -> None:
    server.replies.extend([Reply(status=503, body="loading model")] * 2)
    with pytest.raises(SourceUnreachableError, match=r"HTTP 503.*loading model"):
        _model(server).complete_json(MESSAGES, SCHEMA, max_tokens=64)


def test_body_that_is_not_json_is_a_model_error(server: ProtocolServer) -> None:
    server.replies.append(Reply(body="<html>502 Bad Gateway</html>"))
    with pytest.raises(ModelError) as exc:
        _model(server).complete_json(MESSAGES, SCHEMA, max_tokens=64)
    assert "not JSON" in str(exc.value) and "Bad Gateway" in str(exc.value)


def test_content_that_is_not_json_is_retried_with_more_room(server: ProtocolServer) -> None:
    server.replies.append(Reply(content='{"action": "fin', finish_reason="length"))
    value, usage = _model(server).complete_json(MESSAGES, SCHEMA, max_tokens=32)
    assert value == ANSWER
    assert [r.body["max_tokens"] for r in server.chat_requests()] == [32, 64]
    assert usage.completion_tokens == 14  # both attempts counted


def test_content_never_json_fails_with_an_excerpt(server: ProtocolServer) -> None:
    server.default = Reply(content="Sure! Here is the JSON you asked for: {action: finish")
    with pytest.raises(ModelError) as exc:
        _model(server).complete_json(MESSAGES, SCHEMA, max_tokens=32)
    msg = str(exc.value)
    assert "two attempts" in msg and "Here is the JSON" in msg


def test_numbers_out_of_bounds_are_clamped(server: ProtocolServer) -> None:
    server.replies.append(Reply(content=json.dumps({**ANSWER, "page_size": 0})))
    value, _ = _model(server).complete_json(MESSAGES, SCHEMA, max_tokens=64)
    assert value["page_size"] == 1


def test_error_event_in_a_stream(server: ProtocolServer) -> None:
    server.replies.append(Reply(content=json.dumps(ANSWER), stream_error="slot unavailable"))
    with pytest.raises(ModelError, match="slot unavailable"):
        _model(server).complete_json(MESSAGES, SCHEMA, max_tokens=64, on_token=lambda _: None)


def test_unauthorised_says_which_key(server: ProtocolServer) -> None:
    server.replies.append(Reply(status=401, body='{"error": "invalid api key"}'))
    with pytest.raises(ModelError) as exc:
        _model(server).complete_json(MESSAGES, SCHEMA, max_tokens=64)
    assert "401" in str(exc.value) and "OPENAI_API_KEY" in str(exc.value)


def test_refused_connection_is_source_unreachable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = OpenAIModel(f"http://127.0.0.1:{port}/v1", "m", timeout=2)
    with pytest.raises(SourceUnreachableError) as exc:
        model.complete_json(MESSAGES, SCHEMA, max_tokens=16)
    assert "unreachable" in str(exc.value) and "--model none" in str(exc.value)


def test_health_lists_served_models(server: ProtocolServer) -> None:
    model = _model(server)
    assert model.health() == ["tiny-test"]
    server.models_status = 500
    with pytest.raises(ModelError, match="HTTP 500"):
        model.health()


def test_load_model_builds_the_backend_from_a_spec(server: ProtocolServer) -> None:
    settings = Settings(llm={"temperature": 0.2, "max_answer_tokens": 99})
    model = load_model(f"openai:{server.base_url}#{server.model}", settings)
    assert isinstance(model, OpenAIModel) and model.name == "openai:tiny-test"
    value, _ = model.complete_json(MESSAGES, SCHEMA, max_tokens=0)  # 0: the configured room
    assert value == ANSWER
    body = server.chat_requests()[0].body
    assert body["max_tokens"] == 99 and body["temperature"] == 0.2
