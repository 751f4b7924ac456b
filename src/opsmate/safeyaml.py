"""YAML from files a person, or an attacker, wrote: bounded nesting, bounded aliases.

PyYAML's safe loader refuses arbitrary Python objects, but on its own it still

- recurses once per nesting level in its pure-Python composer, so a 5,000-deep
  document is a ``RecursionError`` (not a ``YAMLError``) that kills the caller;
- expands aliases when the data is walked: ``&a [x, x, ...]`` reused nine times over
  nine levels is a 418-byte "billion laughs" whose data walks as ~400 million items;
- builds cycles (``&a [*a]``) that send every later recursive walk into a crash;
- lets ``ValueError`` (or ``AttributeError``) escape for scalars it cannot build
  (``2026-13-45`` as a date).

:func:`iter_documents` composes each document (with libyaml when present), checks its
node graph iteratively against :class:`Limits` and only then constructs Python data.
Every problem is a :class:`SafeYAMLError`, a :class:`yaml.MarkedYAMLError`, so the
callers' ``except yaml.YAMLError`` handlers report it, with its line, like any syntax
error. Used by the bundle loader, the config loader and the runbook front matter.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import yaml

_CLoader: Any = getattr(yaml, "CSafeLoader", None)


@dataclass(frozen=True)
class Limits:
    """What a document may contain.

    ``max_depth``: nesting levels of collections (a Kubernetes object needs ~15).
    ``aliases``: whether ``*alias`` references are allowed at all.
    ``max_alias_items``: with aliases allowed, how many items (beyond the document's
    own nodes) the aliases may add when the data is walked.
    """

    max_depth: int = 64
    aliases: bool = True
    max_alias_items: int = 100_000


DEFAULT_LIMITS = Limits()


class SafeYAMLError(yaml.MarkedYAMLError):
    """A document that breaks :class:`Limits`, or a scalar that cannot be built."""

    def __init__(self, problem: str, mark: yaml.Mark | None = None) -> None:
        super().__init__(problem=problem, problem_mark=mark)


class _DepthLimitedLoader(yaml.SafeLoader):
    """The pure-Python loader (when libyaml is missing) with its recursion bounded."""

    max_depth = DEFAULT_LIMITS.max_depth
    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > self.max_depth + 1:
                raise SafeYAMLError(
                    f"nested deeper than {self.max_depth} levels", self.peek_event().start_mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _loader(text: str | bytes, limits: Limits) -> Any:
    if _CLoader is not None:  # libyaml refuses more than 1,000 levels itself
        return _CLoader(text)
    loader = _DepthLimitedLoader(text)
    loader.max_depth = limits.max_depth
    return loader


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def check_node(root: yaml.Node | None, limits: Limits = DEFAULT_LIMITS) -> None:
    """Raise :class:`SafeYAMLError` when the composed document ``root`` breaks ``limits``:
    too deep, an alias where none is allowed, a cycle, or aliases that expand too far.
    Iterative, so any depth libyaml accepts is checked without recursion. A document
    without aliases (the common case) costs one quick pass."""
    if root is None or _no_repeats(root, limits):
        return
    _check_graph(root, limits)


def _no_repeats(root: yaml.Node, limits: Limits) -> bool:
    """Check the depth; True when no collection (nor, with aliases refused, any scalar)
    is reached twice, so there is no alias and no cycle. False: look closer."""
    scalars = not limits.aliases  # an alias to a scalar adds one item: harmless otherwise
    seen = {id(root)}
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = node.value
        else:
            continue
        if children and depth >= limits.max_depth:
            raise SafeYAMLError(
                f"nested deeper than {limits.max_depth} levels", children[0].start_mark
            )
        for child in children:
            if isinstance(child, yaml.ScalarNode) and not scalars:
                continue
            key = id(child)
            if key in seen:
                return False
            seen.add(key)
            if not isinstance(child, yaml.ScalarNode):
                stack.append((child, depth + 1))
    return True


def _check_graph(root: yaml.Node, limits: Limits) -> None:
    """The full check of a document with repeated nodes: cycles, refused aliases, the
    size the aliases expand to."""
    state: dict[int, int] = {}  # id -> 1 on the current path, 2 done
    size: dict[int, int] = {}  # id -> items when walked with aliases expanded
    unique = 0
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, leaving = stack.pop()
        key = id(node)
        if leaving:
            state[key] = 2
            size[key] = 1 + sum(size[id(c)] for c in _children(node))
            continue
        seen = state.get(key)
        if seen == 1:
            raise SafeYAMLError(
                "a YAML alias refers to its own ancestor (a cycle)", node.start_mark
            )
        if seen == 2:
            if not limits.aliases:
                raise SafeYAMLError(
                    "YAML aliases (*name) are not allowed here; write the value out "
                    "(the value anchored here is reused by an alias)",
                    node.start_mark,
                )
            continue
        if depth > limits.max_depth:
            raise SafeYAMLError(f"nested deeper than {limits.max_depth} levels", node.start_mark)
        unique += 1
        children = _children(node)
        if not children:
            state[key] = 2
            size[key] = 1
            continue
        state[key] = 1
        stack.append((node, depth, True))
        stack.extend((c, depth + 1, False) for c in reversed(children))
    extra = size[id(root)] - unique
    if extra > limits.max_alias_items:
        raise SafeYAMLError(
            f"YAML aliases expand this document by {extra:,} items (at most "
            f"{limits.max_alias_items:,} allowed): an alias bomb?",
            root.start_mark,
        )


def iter_documents(
    text: str | bytes, limits: Limits = DEFAULT_LIMITS
) -> Generator[tuple[Any, yaml.Node | None], None, None]:
    """``(data, node)`` for each document of ``text``, each checked before it is built.

    The node's marks give 0-based line numbers for error messages. Raises
    :class:`yaml.YAMLError` (a :class:`SafeYAMLError` for broken limits) and nothing else.
    """
    loader = _loader(text, limits)
    try:
        while True:
            try:
                if not loader.check_node():
                    return
                node = loader.get_node()
            except RecursionError:
                raise SafeYAMLError(f"nested deeper than {limits.max_depth} levels") from None
            check_node(node, limits)
            if node is None:
                yield None, None
                continue
            try:
                data = loader.construct_document(node)
            except yaml.YAMLError:
                raise
            except Exception as exc:  # PyYAML's own constructors: ValueError, AttributeError..
                raise SafeYAMLError(f"cannot build a value: {exc}", node.start_mark) from None
            yield data, node
    finally:
        loader.dispose()


def load_single(text: str | bytes, limits: Limits = DEFAULT_LIMITS) -> tuple[Any, yaml.Node | None]:
    """The one document of ``text`` (``(None, None)`` when empty); more than one is an error."""
    docs = iter_documents(text, limits)
    try:
        first = next(docs, (None, None))
        second = next(docs, None)
    finally:
        docs.close()
    if second is not None:
        node = second[1]
        raise SafeYAMLError(
            "expected one YAML document, found more (a second '---')",
            node.start_mark if node is not None else None,
        )
    return first
