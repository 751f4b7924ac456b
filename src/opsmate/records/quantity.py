"""Kubernetes resource quantities (``250m``, ``1.5``, ``512Mi``, ``2G``, ``1e3``) as numbers.

Used to compare what a pod requests with what a node offers or a quota allows. Values
are floats in the base unit (cores for CPU, bytes for memory); text that is not a
quantity parses as None, never an exception.
"""

from __future__ import annotations

import re

_SUFFIX = {
    "n": 1e-9,
    "u": 1e-6,
    "m": 1e-3,
    "": 1.0,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
    "Pi": 2.0**50,
    "Ei": 2.0**60,
}
_QUANTITY = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+))(?:[eE]([+-]?\d+))?([a-zA-Z]{0,2})\s*$")
_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def parse_quantity(text: str | int | float | None) -> float | None:
    """The value of a quantity in its base unit, or None when ``text`` is not one."""
    if text is None or isinstance(text, bool):
        return None
    if isinstance(text, int | float):
        return float(text)
    m = _QUANTITY.match(str(text))
    if not m or m.group(3) not in _SUFFIX:
        return None
    value = float(m.group(1)) * _SUFFIX[m.group(3)]
    if m.group(2):
        value *= 10.0 ** int(m.group(2))
    return value


def format_quantity(value: float, like: str | None = None) -> str:
    """``value`` written the way ``like`` (a quantity of the same resource) is written:
    binary units for memory written in ``Mi``/``Gi``, millis for fractional CPU."""
    if like and re.search(r"[KMGTPE]i\s*$", like):
        for suffix, size in _BINARY:
            if value >= size and abs(value / size - round(value / size)) < 1e-9:
                return f"{round(value / size)}{suffix}"
        return str(round(value))
    if abs(value - round(value)) < 1e-9:
        return str(round(value))
    return f"{round(value * 1000)}m"


def add_quantities(a: str | None, b: str | None) -> str:
    """``a + b`` as a quantity (an unparseable side counts as zero; both unparseable: ``b``)."""
    va, vb = parse_quantity(a), parse_quantity(b)
    if va is None and vb is None:
        return str(b or a or "")
    return format_quantity((va or 0.0) + (vb or 0.0), b or a)


def max_quantity(a: str | None, b: str | None) -> str:
    """The larger of two quantities (an unparseable one loses)."""
    va, vb = parse_quantity(a), parse_quantity(b)
    if va is None:
        return str(b or "")
    if vb is None:
        return str(a or "")
    return str(a) if va >= vb else str(b)
