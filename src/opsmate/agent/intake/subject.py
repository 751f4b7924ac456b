"""The subject of the question: the object(s) the user asked about.

"What is the issue with job nightly-export in namespace batch-7" has the subject
``Job nightly-export`` in namespace ``batch-7``. The subject anchors the
investigation: lists are narrowed to it, and a cause found on an unrelated object is
not its root cause. Names match the way Kubernetes names relate: a pod
``web-7d9f8c-x2x1`` belongs to the workload ``web`` (name prefix followed by ``-``),
and a workload named in the question matches its pods, ReplicaSets and Jobs' pods.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from opsmate.agent.observe.facts import FactKind


class Subject(BaseModel):
    """What the question is about; empty when it names nothing specific."""

    names: list[str] = Field(default_factory=list)  # object / service names, lower-case
    kind: str | None = None  # Pod | Deployment | Job | Service | StatefulSet | Ingress | ...
    kind_name: str | None = None  # the name the kind word was said with ("node <name>")
    namespace: str | None = None
    hosts: list[str] = Field(default_factory=list)  # host names (Ingress rules, dependencies)
    symptom: FactKind | None = None  # what the question reports (errors, slow, crashing ...)
    # names the question puts only as a guess ("is RabbitMQ broken again?"): read, not the
    # subject
    suspects: list[str] = Field(default_factory=list)
    # work piling up in a queue ("the queue alert fires", "jobs are not processed"): what
    # consumes it, anywhere in the namespace, is what to explain it by
    backlog: bool = False

    def empty(self) -> bool:
        return not self.names and not self.hosts

    def matches(self, name: str | None) -> bool:
        """Whether an object called ``name`` is (part of) the subject."""
        if not name:
            return False
        low = name.lower()
        for n in self.names:
            if low == n or low.startswith(n + "-") or n.startswith(low + "-"):
                return True
        return any(low == h for h in self.hosts)

    def in_namespace(self, namespace: str | None) -> bool:
        """False only when both namespaces are known and differ."""
        return not (self.namespace and namespace and namespace != self.namespace)

    def label(self) -> str:
        """``job nightly-export``, ``ledger-api``, or ``the namespace batch-7``."""
        if self.names:
            name = self.names[0]
            return f"{self.kind.lower()} {name}" if self.kind else name
        if self.hosts:
            return self.hosts[0]
        if self.namespace:
            return f"the namespace {self.namespace}"
        return "the system"


def names_mentioned(question: str, names: list[str], limit: int = 2) -> list[str]:
    """Object names the question describes in words: every part of the name (two parts at
    least) appears in it — "the nightly revenue report" names ``revenue-report-nightly``,
    "the checkout api" names ``checkout-api``. Plural and other endings are forgiven."""
    words = [w for w in re.findall(r"[a-z0-9]+", question.lower()) if len(w) >= 2]

    def said(part: str) -> bool:
        return any(w == part or (len(part) >= 4 and w.startswith(part)) for w in words)

    found: list[str] = []
    for name in sorted(set(names), key=len, reverse=True):
        parts = [p for p in name.lower().split("-") if p and not p.isdigit()]
        overlaps = any(f.startswith(name + "-") or name.startswith(f + "-") for f in found)
        if len(parts) >= 2 and all(len(p) >= 3 and said(p) for p in parts) and not overlaps:
            found.append(name)
    return found[:limit]
