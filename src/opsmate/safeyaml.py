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

Speed (a bundle of 2,000 pods is ~400,000 nodes): plain-scalar tags are resolved once
per distinct value (:class:`_ResolveCache`), and a document made only of maps, sequences
and standard scalars, with no repeated node, is checked and built in one pass
(:func:`_build_plain`), giving the objects PyYAML's ``SafeConstructor`` gives; anything
else (an alias, a merge key, a custom tag, a limit broken, a scalar that cannot be
built) goes the general way, which raises the same errors as before.
"""

from __future__ import annotations

import gc
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import yaml

_CSafeLoader: Any = getattr(yaml, "CSafeLoader", None)


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


_TAG = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ = _TAG + "str", _TAG + "map", _TAG + "seq"
_PLAIN_TAGS: dict[str, str] = {}  # plain (unquoted) scalar -> the tag it resolves to
_PLAIN_TAGS_MAX = 100_000  # entries; the cache is emptied when full
_PLAIN_TAGS_LEN = 200  # longer values are resolved without caching


class _ResolveCache:
    """``resolve`` of PyYAML's resolver, remembered per plain scalar value: a Kubernetes
    document repeats the same keys and values thousands of times, and each plain scalar
    otherwise runs the implicit resolvers' regexes (bool, null, int, float, timestamp).
    Only while no path resolver is registered (the safe loaders have none): then a
    scalar's tag depends on its value and whether it is plain alone, and a quoted one is
    always ``str``."""

    yaml_path_resolvers: dict[Any, Any]

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is not yaml.ScalarNode or self.yaml_path_resolvers:
            return super().resolve(kind, value, implicit)  # type: ignore[misc]
        if not implicit[0]:
            return _STR  # BaseResolver.DEFAULT_SCALAR_TAG
        tag = _PLAIN_TAGS.get(value)
        if tag is None:
            tag = super().resolve(kind, value, implicit)  # type: ignore[misc]
            if len(value) <= _PLAIN_TAGS_LEN:
                if len(_PLAIN_TAGS) >= _PLAIN_TAGS_MAX:
                    _PLAIN_TAGS.clear()
                _PLAIN_TAGS[value] = tag
        return tag


_CLoader: Any = (
    type("_CachedCSafeLoader", (_ResolveCache, _CSafeLoader), {})
    if _CSafeLoader is not None
    else None
)


class _DepthLimitedLoader(_ResolveCache, yaml.SafeLoader):
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


# scalar tags SafeConstructor builds from the node's value alone (str is the value itself)
_SCALAR_TAGS = frozenset(_TAG + t for t in ("null", "bool", "int", "float", "binary", "timestamp"))


_GENERAL = object()  # _build_plain gave up


class _NotPlain(Exception):
    """The document needs the general path (check_node, then PyYAML's constructor)."""


def _build_plain(root: yaml.Node, limits: Limits, loader: Any) -> Any:
    """``root`` built as ``loader.construct_document`` builds it, checked as
    :func:`check_node` checks it, in one recursive pass; :class:`_NotPlain` (or any
    exception) when the document holds anything but maps, sequences and standard
    scalars, repeats a node (an alias), or comes near a limit: the caller then takes
    the general path, which gives the same data or raises the same error."""
    constructors = type(loader).yaml_constructors
    scalar_node, mapping_node, sequence_node = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode
    max_depth = limits.max_depth
    scalars_once = not limits.aliases  # as _no_repeats: aliased scalars matter only then
    seen: set[int] = set()

    def scalar(node: Any) -> Any:
        if scalars_once:
            if id(node) in seen:
                raise _NotPlain
            seen.add(id(node))
        tag = node.tag
        if tag == _STR:
            return node.value
        if tag in _SCALAR_TAGS:
            return constructors[tag](loader, node)
        raise _NotPlain

    def build(node: Any, depth: int) -> Any:
        cls = node.__class__
        if cls is scalar_node:
            return scalar(node)
        key = id(node)
        if key in seen:
            raise _NotPlain
        seen.add(key)
        items = node.value
        if items and depth >= max_depth:
            raise _NotPlain
        if cls is mapping_node and node.tag == _MAP:
            out: dict[Any, Any] = {}
            for key_node, value_node in items:
                if key_node.__class__ is not scalar_node:
                    raise _NotPlain  # a collection as key (unhashable), or an alias
                k = scalar(key_node)
                out[k] = (
                    scalar(value_node)
                    if value_node.__class__ is scalar_node
                    else build(value_node, depth + 1)
                )
            return out
        if cls is sequence_node and node.tag == _SEQ:
            return [
                scalar(child) if child.__class__ is scalar_node else build(child, depth + 1)
                for child in items
            ]
        raise _NotPlain

    return build(root, 1)


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
            gc_was = gc.isenabled()
            gc.disable()  # a document is ~200 nodes and objects: no collection in between
            try:
                try:
                    if not loader.check_node():
                        return
                    node = loader.get_node()
                except RecursionError:
                    raise SafeYAMLError(f"nested deeper than {limits.max_depth} levels") from None
                try:
                    data = _GENERAL if node is None else _build_plain(node, limits, loader)
                except Exception:  # not plain, or unbuildable: the general path decides
                    data = _GENERAL
            finally:
                if gc_was:
                    gc.enable()
            if node is None:
                yield None, None
                continue
            if data is _GENERAL:
                check_node(node, limits)
                try:
                    data = loader.construct_document(node)
                except yaml.YAMLError:
                    raise
                except Exception as exc:  # PyYAML's own constructors: ValueError, ...
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
