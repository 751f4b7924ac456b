"""Typed records of tool results: the one shape the engine reads tool data through.

The shaping layer (:mod:`opsmate.tools.shaping`, live tools and bundle replay alike)
produces these models and puts their JSON form in the tool envelope's ``data``; the
executor validates that ``data`` once into the tool's payload
(:mod:`opsmate.records.payloads`) and the engine reads the payload's typed attributes,
never ``data`` with ``dict.get`` chains. Models ignore unknown keys and give
every field a default, so a record from an older bundle or a newer server still
parses; an item that does not parse at all is skipped and counted, never raised.
"""

from opsmate.records.base import Record, parse_list, parse_one

__all__ = ["Record", "parse_list", "parse_one"]
