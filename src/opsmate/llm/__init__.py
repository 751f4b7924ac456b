"""Model backends behind one small protocol (:class:`opsmate.llm.base.ChatModel`)."""

from opsmate.llm.base import (
    ChatModel,
    ModelSpec,
    Usage,
    approx_tokens,
    count_tokens,
    load_model,
    parse_model_spec,
)

__all__ = [
    "ChatModel",
    "ModelSpec",
    "Usage",
    "approx_tokens",
    "count_tokens",
    "load_model",
    "parse_model_spec",
]
