"""What every Kubernetes object record shares: label selectors and the common fields
(kind, name, namespace, labels, created, owner). See :mod:`opsmate.records.k8s_objects`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from opsmate.records.base import Record
from opsmate.records.k8s import ObjectRef
from opsmate.records.types import (
    StrList,
    StrMap,
    Text,
    Time,
    items,
    lenient,
)


class SelectorRequirement(Record):
    key: Text = None
    operator: Text = None  # In | NotIn | Exists | DoesNotExist
    values: StrList = Field(default_factory=list)


class LabelSelector(Record):
    """A metav1 LabelSelector: ``match_labels`` and ``match_expressions`` (all must hold).

    ``everything`` marks a selector given empty (``{}``: selects every object), so that it
    survives the JSON form, where empty maps are left out."""

    everything: bool | None = None
    match_labels: StrMap = Field(default_factory=dict)
    match_expressions: Annotated[list[SelectorRequirement], items(SelectorRequirement)] = Field(
        default_factory=list
    )

    def is_empty(self) -> bool:
        """An empty selector selects everything."""
        return not self.match_labels and not self.match_expressions

    def matches(self, labels: dict[str, str] | None) -> bool:
        labels = labels or {}
        if any(labels.get(k) != v for k, v in self.match_labels.items()):
            return False
        for r in self.match_expressions:
            key = r.key or ""
            present = key in labels
            op = r.operator or ""
            if op == "In" and not (present and labels[key] in r.values):
                return False
            if op == "NotIn" and present and labels[key] in r.values:
                return False
            if op == "Exists" and not present:
                return False
            if op == "DoesNotExist" and present:
                return False
            if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
                return False  # an operator we do not know selects nothing (never a guess)
        return True

    def text(self) -> str:
        """``app=web,tier in (a, b)`` (``<all>`` for the empty selector)."""
        parts = [f"{k}={v}" for k, v in sorted(self.match_labels.items())]
        for r in self.match_expressions:
            op = {"In": "in", "NotIn": "notin"}.get(r.operator or "")
            if op:
                parts.append(f"{r.key} {op} ({', '.join(r.values)})")
            elif r.operator == "Exists":
                parts.append(str(r.key))
            else:
                parts.append(f"!{r.key}")
        return ",".join(parts) or "<all>"


def _none() -> None:
    return None


OptSelector = Annotated[LabelSelector | None, lenient(_none)]
Selector = Annotated[LabelSelector, lenient(LabelSelector)]


class K8sObject(Record):
    """What every object record has."""

    kind: Text = None
    name: Text = None
    namespace: Text = None
    labels: StrMap = Field(default_factory=dict)
    created: Time = None
    owner: Text = None  # "Kind/name" of the first owner reference

    def ref(self) -> ObjectRef:
        return ObjectRef(kind=self.kind, name=self.name, namespace=self.namespace)
