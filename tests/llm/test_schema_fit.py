"""The generation schema (bounded values) and the fitter (numeric bounds, lengths)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from opsmate.llm.schema_fit import ARRAY_CAP, STRING_CAP, fit_to_schema, generation_schema
from opsmate.tools.schemas import ARGS_MODELS


def test_generation_schema_bounds_strings_and_lists_only_where_unbounded() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "free": {"type": "string"},
            "short": {"type": "string", "maxLength": 10},
            "choice": {"type": "string", "enum": ["a", "b"]},
            "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "ids": {"type": "array", "items": {"type": "string", "enum": ["E1"]}},
            "few": {"type": "array", "maxItems": 2, "items": {"type": "integer"}},
            "loose": {"type": "string", "pattern": "[a-z]+"},
        },
    }
    out = generation_schema(schema)
    props = out["properties"]
    assert props["free"]["maxLength"] == STRING_CAP
    assert props["short"]["maxLength"] == 10
    assert "maxLength" not in props["choice"]
    assert props["maybe"]["anyOf"][0]["maxLength"] == STRING_CAP
    assert props["ids"]["maxItems"] == ARRAY_CAP
    assert props["few"]["maxItems"] == 2
    assert "pattern" not in props["loose"]  # unanchored: the grammar converter cannot take it
    assert "maxLength" not in schema["properties"]["free"]  # the input is not modified


def test_every_tool_schema_converts_to_a_grammar() -> None:
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    for name, model in ARGS_MODELS.items():
        gbnf = json_schema_to_gbnf(json.dumps(generation_schema(model.model_json_schema())))
        assert "root ::=" in gbnf, name


def test_fit_clamps_numbers_inside_any_of_and_nested_objects() -> None:
    schema = ARGS_MODELS["search_logs"].model_json_schema()
    value = {"service": "order-service", "page_size": 0}
    fitted = fit_to_schema(value, schema)
    assert fitted["page_size"] == 1
    jsonschema.validate(fitted, schema)
    pods = ARGS_MODELS["pod_logs"].model_json_schema()
    fitted = fit_to_schema({"name": "p", "tail_lines": 99999, "since_seconds": -5}, pods)
    assert fitted["tail_lines"] == 5000 and fitted["since_seconds"] == 1
    jsonschema.validate(fitted, pods)


def test_fit_picks_the_any_of_branch_and_cuts_lengths() -> None:
    schema = {
        "anyOf": [
            {
                "type": "object",
                "properties": {"action": {"const": "finish"}, "reason": {"type": "string"}},
                "required": ["action"],
            },
            {
                "type": "object",
                "properties": {
                    "action": {"const": "call_tool"},
                    "args": {
                        "type": "object",
                        "properties": {"top_k": {"type": "integer", "minimum": 1, "maximum": 50}},
                    },
                    "ids": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
                    "note": {"type": "string", "maxLength": 5},
                },
                "required": ["action"],
            },
        ]
    }
    value = {
        "action": "call_tool",
        "args": {"top_k": 80},
        "ids": ["a", "b", "c"],
        "note": "abcdefg",
    }
    fitted = fit_to_schema(value, schema)
    assert fitted == {
        "action": "call_tool",
        "args": {"top_k": 50},
        "ids": ["a", "b"],
        "note": "abcde",
    }
    jsonschema.validate(fitted, schema)
    ok = {"action": "finish", "reason": "done"}
    assert fit_to_schema(ok, schema) == ok


def test_fit_leaves_a_valid_value_alone() -> None:
    schema = ARGS_MODELS["query_metrics"].model_json_schema()
    value = {"query": "up", "type": "instant", "step": None}
    assert fit_to_schema(value, schema) == value


def test_generation_schema_fits_the_answer_room() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "summary": {"type": "string", "maxLength": 800},
            "detail": {"anyOf": [{"type": "null"}, {"type": "string", "maxLength": 600}]},
            "ids": {"type": "array", "items": {"type": "string", "enum": ["E1", "E22"]}},
            "tag": {"type": "string", "minLength": 30},
        },
        "required": ["summary"],
    }
    roomy = generation_schema(schema, max_chars=10_000)
    assert roomy["properties"]["summary"]["maxLength"] == 800  # fits: nothing shortened
    tight = generation_schema(schema, max_chars=600)
    props = tight["properties"]
    assert props["summary"]["maxLength"] < 400
    assert props["detail"]["anyOf"][1]["maxLength"] < 300
    assert 3 <= props["ids"]["maxItems"] < ARRAY_CAP
    assert props["tag"]["maxLength"] >= 30  # never below the schema's own minimum
    longest = {
        "summary": "x" * props["summary"]["maxLength"],
        "detail": "y" * props["detail"]["anyOf"][1]["maxLength"],
        "ids": ["E22"] * props["ids"]["maxItems"],
        "tag": "z" * props["tag"]["maxLength"],
    }
    jsonschema.validate(longest, schema)  # still inside the original schema
    assert len(json.dumps(longest, separators=(",", ":"))) <= 600 * 1.1
