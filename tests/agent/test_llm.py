"""Model specs, loading without downloads, and the scripted model."""

from __future__ import annotations

from pathlib import Path

import pytest

from opsmate.errors import ModelError
from opsmate.llm.base import approx_tokens, count_tokens, load_model, parse_model_spec
from opsmate.llm.scripted import ScriptedModel, minimal_instance


def test_parse_model_specs() -> None:
    assert parse_model_spec(None).kind == "none"
    assert parse_model_spec("none").kind == "none"
    s = parse_model_spec("scripted:/tmp/x.yaml")
    assert s.kind == "scripted" and s.path == Path("/tmp/x.yaml")
    g = parse_model_spec("gguf:~/models/m.gguf")
    assert g.kind == "gguf" and str(g.path).endswith("models/m.gguf") and "~" not in str(g.path)
    o = parse_model_spec("openai:http://127.0.0.1:8080/v1/#qwen2.5:7b")
    assert (o.kind, o.base_url, o.model) == ("openai", "http://127.0.0.1:8080/v1", "qwen2.5:7b")


@pytest.mark.parametrize(
    "bad",
    ["llama", "gguf:", "openai:http://x", "openai:127.0.0.1:8080#m", "openai:http://x#", "foo:bar"],
)
def test_bad_specs_are_model_errors(bad: str) -> None:
    with pytest.raises(ModelError) as err:
        parse_model_spec(bad)
    assert err.value.exit_code == 2


def test_missing_gguf_says_where_and_how_to_run_without(tmp_path: Path) -> None:
    with pytest.raises(ModelError) as err:
        load_model(f"gguf:{tmp_path / 'absent.gguf'}")
    text = str(err.value)
    assert "absent.gguf" in text and "--model none" in text and "download" in text


def test_none_loads_nothing() -> None:
    assert load_model("none") is None


def test_scripted_replies_in_order_by_schema_and_defaults(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "replies:\n"
        "  - {action: call_tool, tool: log_stats, args: {}, reason: first}\n"
        "  - schema: Narrative\n"
        "    reply: {summary: done}\n"
        "  - {action: finish, reason: second}\n",
        encoding="utf-8",
    )
    model = load_model(f"scripted:{path}")
    assert isinstance(model, ScriptedModel)
    nxt = {"title": "NextAction", "properties": {"action": {}}}
    tokens: list[str] = []
    first, usage = model.complete_json(
        [{"role": "user", "content": "hi"}], nxt, max_tokens=50, on_token=tokens.append
    )
    assert (
        first["reason"] == "first" and usage.prompt_tokens > 0 and "".join(tokens).startswith("{")
    )
    second, _ = model.complete_json([], nxt, max_tokens=50)
    assert second["reason"] == "second"  # the Narrative reply waits for its schema
    narrative, _ = model.complete_json([], {"title": "Narrative"}, max_tokens=50)
    assert narrative == {"summary": "done"}
    assert model.complete_json([], nxt, max_tokens=50)[0]["action"] == "finish"  # exhausted
    assert model.prompts[0] == [{"role": "user", "content": "hi"}] and len(model.prompts) == 4


def test_scripted_missing_file_is_a_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError):
        load_model(f"scripted:{tmp_path / 'nope.yaml'}")


def test_minimal_instance_and_token_counts() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"enum": [3, 4]}},
        "required": ["a", "b"],
    }
    assert minimal_instance(schema) == {"a": "", "b": 3}
    assert approx_tokens("abcd" * 10) == 10
    assert approx_tokens("连接池") == 3
    assert count_tokens(None, "abcdefgh") == 2
