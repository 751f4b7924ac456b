"""GBNF grammars from JSON schemas, for llama.cpp's constrained generation.

Uses llama-cpp-python's copy of llama.cpp's schema converter, with two defects
of its 0.3 release fixed as upstream llama.cpp fixed them (see below), and checks
each grammar with llama.cpp's own parser before it is used: a grammar that does
not parse would otherwise leave generation unconstrained.
"""

from __future__ import annotations

import contextlib
import copy
import os
import re
from collections.abc import Iterator
from typing import Any

# Two defects of llama-cpp-python 0.3's copy of llama.cpp's schema converter, fixed
# here as upstream fixed them: literals (enum / const values) did not escape a
# backslash, so a value such as 'rate(x{service=\"a\"}[5m])' broke the grammar; and the
# string-character rule let raw control characters (a newline) in, which is not JSON.
_LITERAL_ESCAPE_RE = re.compile(r'[\r\n"\\]')
_LITERAL_ESCAPES = {"\r": "\\r", "\n": "\\n", '"': '\\"', "\\": "\\\\"}
_CHAR_RULE = (
    r'char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] '
    r"[0-9a-fA-F] [0-9a-fA-F])"
)


def schema_to_gbnf(schema: dict[str, Any]) -> str:
    """The GBNF grammar of a JSON schema (llama.cpp's converter, with the fixes above)."""
    from llama_cpp.llama_grammar import SchemaConverter

    class _Converter(SchemaConverter):
        def _format_literal(self, literal: str) -> str:
            escaped = _LITERAL_ESCAPE_RE.sub(lambda m: _LITERAL_ESCAPES[m.group(0)], literal)
            return f'"{escaped}"'

    converter = _Converter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    resolved = converter.resolve_refs(copy.deepcopy(schema), "stdin")
    converter.visit(resolved, "")
    return strict_strings(converter.format_grammar())


def grammar_parses(llama: Any, gbnf: str) -> bool:
    """Whether llama.cpp accepts ``gbnf`` (it prints parse errors straight to fd 2: hidden)."""
    import llama_cpp

    with _quiet_fd2():
        vocab = llama_cpp.llama_model_get_vocab(llama.model)
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), b"root")
    if not sampler:
        return False
    llama_cpp.llama_sampler_free(sampler)
    return True


@contextlib.contextmanager
def _quiet_fd2() -> Iterator[None]:
    """Send file descriptor 2 to /dev/null for a moment (C code writing to stderr)."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
    finally:
        os.close(saved)


def strict_strings(gbnf: str) -> str:
    """``gbnf`` with its JSON string-character rule excluding control characters."""
    return "\n".join(_CHAR_RULE if ln.startswith("char ::=") else ln for ln in gbnf.splitlines())
