"""What a model call costs: :class:`Usage` (tokens used) and :func:`approx_tokens`.

The floor every backend module stands on (:mod:`opsmate.llm.base` loads the backends;
the backends import these from here, never from ``base``, so no import circle).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Usage", "approx_tokens"]


@dataclass
class Usage:
    """Tokens one model call used (prompt and completion)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


_CJK = re.compile(r"[\u3000-\u9fff\uf900-\ufaff]")


def approx_tokens(text: str) -> int:
    """A tokenizer-free estimate: about 4 characters a token (CJK: 1 a character)."""
    cjk = len(_CJK.findall(text)) if not text.isascii() else 0
    return (len(text) - cjk + 3) // 4 + cjk
